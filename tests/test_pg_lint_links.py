"""Lint's link findings on a PostgreSQL vault (issue 26): ``orphan_page`` (a page no other page
links to) and the extractive finder's ``missing_link`` (a claim naming another page's title,
quoted from its source, on a page that doesn't link to it) — the findings a SQLite vault's lint
gives for the same sources and plans, fingerprints and ``link_pages`` fixes included; recorded by
a lint job, their fixes proposed, and resolved by the next lint once the links are there. Before,
a PostgreSQL lint found neither. The attacker's side: a title written in tsquery's syntax is
words, never a query; a title the claim's text names but its quote doesn't is no finding."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from affidavit.clock import iso, utc_now
from affidavit.config import Config
from affidavit.jobs.pg_checks import PG_CHECKS, pg_missing_links, run_pg_checks
from affidavit.lint.candidates import missing_links
from affidavit.lint.checks import run_checks
from affidavit.lint.findings import Finding
from affidavit.service import vaults as svc
from affidavit.service.pg_vaults import PgVault
from affidavit.storage.pg_sql import PgSql
from affidavit.storage.postgres import PostgresStorage
from affidavit.storage.postgres_jobs import PostgresJobStore
from affidavit.vault import Vault, init_vault, open_vault

from .conftest import SAMPLES, add_samples, sample_plan_text
from .pg_cluster import drop_vaults
from .test_mcp_pg import SOTU

pytestmark = pytest.mark.xdist_group("postgres")

ROOSEVELT = "80fe4d9fab5f87e51dcc9db90a9e41ab"  # the samples' sources (content-addressed)
WASHINGTON = "6f5e86a84a3432c027c17c6ab8953e5f"
TRUSTING = Config({"policy.auto_apply": "trusted", "lint.every_ingests": "0"})


def more_pages(roosevelt: str, washington: str) -> list[dict[str, Any]]:
    """Pages the sample plan's pages name without linking to them: ``roosevelt`` (its title in
    four-freedoms' claims and quotes), a title in tsquery's syntax whose words four-freedoms
    quotes, and ``spoke``, whose title four-freedoms' claim text says but none of its quotes."""

    def page(slug: str, title: str, text: str, source: str, quote: str) -> dict[str, Any]:
        return {"op": "create_page", "slug": slug, "title": title, "summary": title,
                "claims": [{"text": text, "evidence": [{"source": source, "quote": quote}]}]}  # fmt: skip

    return [
        page("roosevelt", "Roosevelt", "Franklin D Roosevelt gave the 1941 State of the Union.",
             roosevelt, "State of the Union, 1941: Franklin D Roosevelt"),
        page("fear", "Freedom <-> from & !fear:* |", "The fourth freedom was freedom from fear.",
             roosevelt, "The fourth is freedom from fear"),
        page("spoke", "Roosevelt addressed", "Washington presumed the establishment of a mint.",
             washington, "The establishment of the militia, of a mint"),
    ]  # fmt: skip


def sqlite_twin(root: Path) -> Vault:
    init_vault(root)[0].close()
    (root / "affidavit.toml").write_text('[policy]\nauto_apply = "trusted"\n', "utf-8")
    vault = open_vault(root)
    add_samples(vault)
    for text in (sample_plan_text(vault), None):
        if text is None:
            nonce = json.loads(sample_plan_text(vault))["nonce"]
            text = json.dumps({"nonce": nonce, "operations": more_pages(ROOSEVELT, WASHINGTON)})
        made = svc.propose(vault, text, "me", "test")
        assert svc.approve(vault, made.plan_id, None, "me").applied
    return vault


@pytest.fixture
def twins(pg_url: str, tmp_path: Path) -> Iterator[tuple[Vault, PgVault]]:
    drop_vaults(pg_url)
    sqlite = sqlite_twin(tmp_path / "sqlite")
    plan = json.loads(sample_plan_text(sqlite))
    storage = PostgresStorage(pg_url)
    try:
        storage.create_vault("team", "ann")
        for name in SOTU:
            path = SAMPLES / "sotu" / name
            storage.add_source(
                "team", path.read_bytes(), origin=str(path), name=name, added_at=iso(utc_now()),
                media_type="text/markdown", trust="trusted",
            )  # fmt: skip
        pg = PgVault(storage, "team", TRUSTING)
        for ops in (plan["operations"], more_pages(ROOSEVELT, WASHINGTON)):
            made = pg.propose({"nonce": pg.new_nonce(1).nonce, "operations": ops}, "ann", "t")
            assert pg.approve(made.plan_id, None, "ann").applied
        yield sqlite, pg
    finally:
        storage.close()
        sqlite.close()


def pg_findings(pg: PgVault) -> tuple[list[Finding], list[Finding]]:
    with pg.storage._tx() as conn:
        db = PgSql(conn, "v_team")
        checks = [f for f in run_pg_checks(db, TRUSTING, utc_now) if f.kind == "orphan_page"]
        return checks, [c.finding for c in pg_missing_links(db)]


def test_orphans_and_missing_links_are_a_folders(twins: tuple[Vault, PgVault]) -> None:
    sqlite, pg = twins
    orphans, links = pg_findings(pg)
    assert orphans == run_checks(sqlite, kinds=["orphan_page"])
    assert links == [c.finding for c in missing_links(sqlite.db)]
    assert [f.fingerprint for f in links] == [
        f.fingerprint for f in (c.finding for c in missing_links(sqlite.db))
    ]
    assert sorted(f.subject for f in orphans) == ["fear", "four-freedoms", "roosevelt", "spoke"]
    assert [(f.subject, f.fix) for f in links] == [
        ("four-freedoms->fear", {"op": "link_pages", "page": "four-freedoms", "to": "fear"}),
        ("four-freedoms->roosevelt",
         {"op": "link_pages", "page": "four-freedoms", "to": "roosevelt"}),
    ]  # fmt: skip
    # 'spoke': four-freedoms' claim says "Roosevelt addressed", none of its quotes does
    assert "Roosevelt addressed" in " ".join(
        str(r[0]) for r in sqlite.db.execute("SELECT text FROM claims")
    )
    assert not [f for f in links if "spoke" in f.subject]


def lint_job(pg: PgVault, propose: bool) -> dict[str, Any]:
    from affidavit.jobs.pg_worker import PgWorker

    jobs = PostgresJobStore(pg.storage)
    job = jobs.enqueue("team", {"kind": "lint", "propose": propose}, "ann")
    worker = PgWorker(pg.storage, vaults=["team"], config=TRUSTING, log=lambda e: None)
    assert worker.run(drain=True) == 1
    (row,) = jobs.rows("team", job)
    assert row["status"] == "done", row
    return dict(json.loads(row["result"]) if isinstance(row["result"], str) else row["result"])


def stored(pg: PgVault) -> list[tuple[str, str, str]]:
    with pg.storage.pool.connection() as conn:
        rows = conn.execute(
            "SELECT kind, subject, status FROM v_team.findings "
            "WHERE kind IN ('orphan_page', 'missing_link') ORDER BY kind, subject"
        ).fetchall()
    return [(r["kind"], r["subject"], r["status"]) for r in rows]


def test_a_lint_job_records_them_proposes_the_links_and_resolves_them(
    twins: tuple[Vault, PgVault],
) -> None:
    _, pg = twins
    result = lint_job(pg, propose=True)
    assert result["checks"] == list(PG_CHECKS) and "orphan_page" in result["checks"]
    assert stored(pg) == [
        ("missing_link", "four-freedoms->fear", "open"),
        ("missing_link", "four-freedoms->roosevelt", "open"),
        ("orphan_page", "fear", "open"),
        ("orphan_page", "four-freedoms", "open"),
        ("orphan_page", "roosevelt", "open"),
        ("orphan_page", "spoke", "open"),
    ]
    with pg.storage.pool.connection() as conn:
        pending = conn.execute(
            "SELECT id, plan_json FROM v_team.plans WHERE status = 'pending' ORDER BY id"
        ).fetchall()
    ops = sorted(
        (op["page"], op["to"]) for p in pending for op in json.loads(p["plan_json"])["operations"]
    )
    assert ("four-freedoms", "roosevelt") in ops and ("four-freedoms", "fear") in ops
    from click.testing import CliRunner

    from affidavit.cli import main

    url = pg.storage.pool.conninfo  # a person approves the fixes that only add links
    argv = ["findings", "approve", "--all", "--kind", "orphan_page", "--kind", "missing_link",
            "--database", url, "--vault", "team"]  # fmt: skip
    done = CliRunner().invoke(main, argv, env={"AFFIDAVIT_DATABASE": ""})
    assert done.exit_code == 0, (done.output, done.exception)
    with pg.storage.pool.connection() as conn:
        statuses = conn.execute(
            "SELECT status FROM v_team.plans WHERE id = ANY(%s)", ([str(p["id"]) for p in pending],)
        ).fetchall()
    assert [r["status"] for r in statuses] == ["applied"] * len(pending)
    again = lint_job(pg, propose=False)
    assert again["resolved"] >= 4
    assert stored(pg) == [
        ("missing_link", "four-freedoms->fear", "resolved"),
        ("missing_link", "four-freedoms->roosevelt", "resolved"),
        ("orphan_page", "fear", "resolved"),
        ("orphan_page", "four-freedoms", "resolved"),  # its fix: linked from monroe-doctrine
        ("orphan_page", "roosevelt", "resolved"),
        ("orphan_page", "spoke", "open"),  # no quote names it: still alone
    ]
