"""The CLI's review commands against a PostgreSQL vault (issue 26): ``nonce``, ``propose``,
``inbox``, ``inbox show``, ``approve`` (whole, by operation, several as one batch, ``--all``) and
``reject`` with ``--database URL --vault NAME``, through the daemon's services there (the door
under the vault's lock, W5's re-check, the audit chain), printed as on a vault folder (the same
``--json`` fields and values), the local user named as the approver. The attacker's tests: a
vault the database doesn't hold, ``--vault`` with no database, a prefix that matches two plans,
``_`` and ``%`` in an id (never a pattern), an operation already applied, the URL's password
never printed, an agent's plan never taken by ``approve --all``."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from affidavit.agents import local_actor
from affidavit.storage.postgres import PostgresStorage

from .pg_cluster import drop_vaults

pytestmark = pytest.mark.xdist_group("postgres")

SECRET = "Plans-S3cret-pw"
BRIDGE = "The bridge opened in 1932 after six years of work. The bridge is 503 metres long."
NOW = "2026-11-30T09:00:00Z"
ENV = {"AFFIDAVIT_NO_DAEMON": "1", "AFFIDAVIT_DATABASE": ""}


def run(*args: str, code: int = 0, stdin: str | None = None) -> str:
    from affidavit.cli import main

    result: Result = CliRunner().invoke(main, list(args), env=ENV, input=stdin)
    assert result.exit_code == code, (args, result.output, result.exception)
    assert SECRET not in result.output
    return result.output


def ops(source: str) -> list[dict[str, Any]]:
    """Two operations: a page on the bridge's length, and one on its opening."""

    def page(slug: str, title: str, text: str, quote: str) -> dict[str, Any]:
        claim = {"text": text, "evidence": [{"source": source, "quote": quote}]}
        return {"op": "create_page", "slug": slug, "title": title, "summary": text,
                "claims": [claim]}  # fmt: skip

    return [
        page("bridge", "The bridge", "The bridge is 503 metres long.",
             "The bridge is 503 metres long"),
        page("opening", "The bridge opened", "The bridge opened in 1932.",
             "The bridge opened in 1932"),
    ]  # fmt: skip


class Db:
    """Vault ``team`` (and ``other``) of a fresh database, and the CLI's options naming it, the
    URL with a password (the test cluster trusts its socket, so any password connects)."""

    def __init__(self, url: str, tmp: Path) -> None:
        drop_vaults(url)
        self.storage = PostgresStorage(url)
        for name in ("team", "other"):
            self.storage.create_vault(name, "nobody-here")
        self.source = self.storage.add_source(
            "team", BRIDGE.encode(), origin="/docs/bridge.md", name="bridge.md", added_at=NOW,
            trust="trusted",
        )  # fmt: skip
        assert url.startswith("postgresql://postgres@"), url
        self.url = url.replace("postgresql://postgres@", f"postgresql://postgres:{SECRET}@", 1)
        self.tmp = tmp

    def close(self) -> None:
        self.storage.close()

    def cli(self, *args: str, code: int = 0, stdin: str | None = None) -> str:
        return run(*args, "--database", self.url, "--vault", "team", code=code, stdin=stdin)

    def propose(self, operations: list[dict[str, Any]], name: str = "plan.json") -> str:
        nonce = json.loads(self.cli("nonce", "--json"))["nonce"]
        path = self.tmp / name
        path.write_text(json.dumps({"nonce": nonce, "operations": operations}))
        return str(json.loads(self.cli("propose", str(path), "--json"))["plan_id"])

    def slugs(self) -> list[str]:
        with self.storage.pool.connection() as conn:
            return [r["slug"] for r in conn.execute("SELECT slug FROM v_team.pages ORDER BY 1")]

    def audit(self) -> list[tuple[str, str | None, str]]:
        return [(e.action, e.plan_id, e.actor) for e in self.storage.audit("team")]


@pytest.fixture
def db(pg_url: str, tmp_path: Path) -> Iterator[Db]:
    made = Db(pg_url, tmp_path)
    yield made
    made.close()


def test_propose_list_show_approve_by_operation_then_whole(db: Db) -> None:
    plan_id = db.propose(ops(db.source))
    listed = db.cli("inbox")
    assert listed.splitlines()[1].startswith(f"{plan_id[:12]}  pending ")
    assert f"{local_actor()} / propose:plan.json" in listed  # a person's plan: no [agent]
    (record,) = json.loads(db.cli("inbox", "--json"))
    assert record["id"] == plan_id and record["operations"] == 2
    assert record["counts"]["admitted"] == 2 and record["proposer"] == "person"
    shown = db.cli("inbox", "show", plan_id[:6])  # a prefix of 4+ hex digits, as on SQLite
    assert f"Plan {plan_id}" in shown and "[1] create_page" in shown
    assert "quote from bridge.md" in shown and "»The bridge is 503 metres long«" in shown
    # the group's options serve its subcommand too
    again = run("inbox", "--database", db.url, "--vault", "team", "show", plan_id)
    left = re.compile(r"\(in \d+h\d+m\)")  # the time left may have ticked between the two
    assert left.sub("(in …)", again) == left.sub("(in …)", shown)

    out = db.cli("approve", plan_id[:8], "--ops", "1")
    assert out == (
        f"applied plan {plan_id[:12]}: 1 operation(s), 1 claim(s); operation(s) 2 still pending "
        f"(`affidavit approve {plan_id[:12]} --ops 2`)\n"
    )
    assert db.audit()[-1] == ("applied", plan_id, local_actor())  # the approver: the local user
    (batch,) = db.storage.batches("team")
    assert list(batch.plans) == [plan_id]
    part = json.loads(db.cli("inbox", "show", plan_id, "--json"))
    assert part["status"] == "pending" and part["applied_ops"] == [1]
    assert "applied (the rest of the plan is pending)" in db.cli("inbox", "show", plan_id)
    again = db.cli("approve", plan_id, "--ops", "1", code=1)
    assert "decided already" in again and "the ones still pending are 2" in again

    done = json.loads(db.cli("approve", plan_id, "--json"))
    assert done["applied"] and done["ops"] == [2] and len(done["claims"]) == 1
    assert db.cli("inbox") == "The inbox is empty.\n"
    assert [r["status"] for r in json.loads(db.cli("inbox", "--all", "--json"))] == ["applied"]
    assert db.slugs() == ["bridge", "opening"]
    assert len(db.storage.batches("team")) == 2
    again = db.cli("approve", plan_id)  # W5: never twice; the approver learns it went in
    assert again == f"plan {plan_id[:12]} is already applied; nothing to do\n"
    assert len(db.storage.batches("team")) == 2


def test_reject_names_the_local_user_and_releases_the_slugs(db: Db) -> None:
    plan_id = db.propose(ops(db.source)[:1])
    out = db.cli("reject", plan_id[:10], "--reason", "the length is disputed")
    assert out == f"rejected plan {plan_id[:12]}: the length is disputed\n"
    assert db.audit()[-1] == ("rejected", plan_id, local_actor())
    record = json.loads(db.cli("inbox", "show", plan_id, "--json"))
    assert record["status"] == "rejected" and record["reason"] == "the length is disputed"
    assert record["decided_by"] == local_actor()
    assert "only a pending plan" in db.cli("reject", plan_id, "--reason", "again", code=1)
    assert "is rejected" in db.cli("approve", plan_id, code=1)
    again = db.propose(ops(db.source)[:1], "again.json")  # the slug is free again
    assert json.loads(db.cli("approve", again, "--json"))["applied"]
    as_json = json.loads(
        db.cli("reject", db.propose(ops(db.source)[1:]), "--reason", "x", "--json")
    )
    assert sorted(as_json) == ["plan_id", "reason", "status"] and as_json["status"] == "rejected"


def test_several_plans_are_one_batch_after_a_preview_and_all_leaves_agents_out(db: Db) -> None:
    first, second = (db.propose([op], f"{n}.json") for n, op in enumerate(ops(db.source)))
    refused = db.cli("approve", first, second, stdin="n\n", code=1)
    assert "Apply 2 plan(s), 2 operation(s):" in refused
    assert "1. create_page: bridge (The bridge), 1 claim(s)" in refused
    assert "nothing applied" in refused and db.storage.batches("team") == []
    done = db.cli("approve", first[:8], second[:8], stdin="y\n")
    assert f"applied plan {first[:12]}: 1 operation(s), 1 claim(s)\n" in done
    assert f"applied plan {second[:12]}: 1 operation(s), 1 claim(s)\n" in done
    (batch,) = db.storage.batches("team")  # one batch, all or nothing (W6)
    assert list(batch.plans) == [first, second]

    from affidavit.config import Config
    from affidavit.service.pg_vaults import PgVault

    vault = PgVault(db.storage, "team", Config())
    agents = vault.propose(
        {"nonce": vault.new_nonce(1).nonce, "operations": [
            {"op": "link_pages", "page": "bridge", "to": "opening"}]},
        "token:abcdef123456", "api:ci",
    )  # fmt: skip
    mine = db.propose([{"op": "link_pages", "page": "opening", "to": "bridge"}], "mine.json")
    out = json.loads(db.cli("approve", "--all", "--yes", "--json"))
    assert [r["plan_id"] for r in out["results"]] == [mine]
    assert out["left_out"] == [
        {"plan_id": agents.plan_id, "author": "token:abcdef123456", "proposer": "agent"}
    ]
    (left,) = json.loads(db.cli("inbox", "--json"))
    assert left["id"] == agents.plan_id and "[agent]" in db.cli("inbox")


def test_the_json_is_a_vault_folders_for_the_same_plan(db: Db, tmp_path: Path) -> None:
    from affidavit.vault import init_vault

    from .conftest import add_text

    vault, _ = init_vault(tmp_path / "v")
    try:
        assert add_text(vault, "bridge.md", BRIDGE) == db.source  # the same bytes, one id
    finally:
        vault.close()
    folder = ("--vault", str(tmp_path / "v"))
    nonce = json.loads(run(*folder, "nonce", "--json"))["nonce"]
    (tmp_path / "plan.json").write_text(json.dumps({"nonce": nonce, "operations": ops(db.source)}))
    local = json.loads(run(*folder, "propose", str(tmp_path / "plan.json"), "--json"))
    remote = db.propose(ops(db.source))

    def same(one: dict[str, Any], two: dict[str, Any], differ: set[str]) -> None:
        assert sorted(one) == sorted(two)
        keep = set(one) - differ
        assert {k: one[k] for k in keep} == {k: two[k] for k in keep}

    moments = {"id", "plan_id", "created_at", "expires_at", "age", "expires_in", "author",
               "origin", "plan", "admission"}  # fmt: skip
    (a,) = json.loads(run(*folder, "inbox", "--json"))
    (b,) = json.loads(db.cli("inbox", "--json"))
    same(a, b, moments)
    a = json.loads(run(*folder, "inbox", "show", local["plan_id"], "--json"))
    b = json.loads(db.cli("inbox", "show", remote, "--json"))
    same(a, b, moments)
    assert a["plan"]["operations"] == b["plan"]["operations"]

    def text(out: str, plan_id: str) -> list[str]:  # the lines, the plan's id and age aside
        out = out.replace(plan_id, "ID").replace(plan_id[:12], "ID")
        return [line for line in out.splitlines() if "proposed " not in line]

    one = run(*folder, "inbox", "show", local["plan_id"])
    two = db.cli("inbox", "show", remote)
    assert text(one, local["plan_id"]) == text(two, remote)
    a = json.loads(run(*folder, "approve", local["plan_id"], "--ops", "1", "--json"))
    b = json.loads(db.cli("approve", remote, "--ops", "1", "--json"))
    same(a, b, {"plan_id", "commit", "message"})
    assert b["commit"] is None  # no git on PostgreSQL: `affidavit mirror` commits
    assert a["message"].replace(local["plan_id"][:12], "ID") == b["message"].replace(
        remote[:12], "ID"
    )


def test_refusals_are_named(db: Db, monkeypatch: pytest.MonkeyPatch) -> None:
    plan_id = db.propose(ops(db.source)[:1])
    unknown = run("inbox", "--database", db.url, "--vault", "nosuch", code=1)
    assert "no vault 'nosuch' in this database (it has: team, other)" in unknown
    no_url = run("approve", plan_id, "--vault", "team", code=2)
    assert "give --database URL too" in no_url
    assert "no vault 'Team; DROP' in this database" in run("reject", plan_id, "--reason", "x", "--database", db.url,
                                     "--vault", "Team; DROP", code=1)  # fmt: skip
    for ref in ("____", "%%%%", plan_id[:6] + "_%", "%", plan_id[:3]):  # never a LIKE pattern
        for args in (("inbox", "show", ref), ("approve", ref), ("reject", ref, "--reason", "x")):
            out = db.cli(*args, code=1)
            assert "is not a plan id (4 to 64 hex digits)" in out, (args, out)
    assert "no plan 0000" in db.cli("approve", "0000", code=1)
    # two plans sharing a prefix: the prefix is ambiguous, the full ids are not
    twin = plan_id[:8] + ("0" if plan_id[8] != "0" else "1") * 56
    with db.storage.pool.connection() as conn:
        (row,) = conn.execute("SELECT plan_json FROM v_team.plans WHERE id = %s", (plan_id,))
    db.storage.propose("team", twin, author="x", origin="cli", plan_json=row["plan_json"],
                       created_at=NOW, expires_at="2099-01-01T00:00:00Z")  # fmt: skip
    out = db.cli("approve", plan_id[:8], code=1)
    assert f"plan id {plan_id[:8]} is ambiguous; give more of it" in out
    assert "is ambiguous" in db.cli("inbox", "show", plan_id[:6], code=1)
    assert db.storage.batches("team") == [] and db.audit() == []  # nothing applied, no entry
    assert json.loads(db.cli("approve", plan_id[:9], "--json"))["applied"]
    # --ops names operations of this plan only
    other = db.propose(ops(db.source)[1:], "other.json")
    assert "has operations 1–1; there is no 2" in db.cli("approve", other, "--ops", "2", code=1)
    # the database unreachable: said, the password masked
    dead = db.url.replace("host=", "host=/nonexistent")
    out = run("inbox", "--database", dead, "--vault", "team", code=1)
    assert "can't connect to the database" in out and "postgres:***@" in out
    # $AFFIDAVIT_DATABASE names the database when --database is not given
    monkeypatch.setitem(ENV, "AFFIDAVIT_DATABASE", db.url)
    assert other[:12] in run("inbox", "--vault", "team")


def test_an_unseen_approval_leaves_the_texts_that_wait_for_a_person(db: Db) -> None:
    """``approve --all --yes`` shows nothing: as on SQLite, what waits for a person (W11) stays
    in the inbox — a plan of nothing else is left waiting, applied: false — and the plans that
    are sure go in; a person approving the waiting plan by id (after reading it) applies it."""
    uncertain = "The bridge opened in 1932 in Bristol."  # a place the quote never names
    page = {"op": "create_page", "slug": "opening", "title": "The bridge opened",
            "summary": "The bridge opened in 1932.", "claims": [
                {"text": uncertain, "evidence": [{"source": db.source,
                                                  "quote": "The bridge opened in 1932"}]}]}  # fmt: skip
    plan_id = db.propose([page])
    assert "waits: op 1 claim 1: uncertain" in db.cli("inbox")
    sure = db.propose(ops(db.source)[:1], "sure.json")
    preview = db.cli("approve", plan_id, sure, stdin="n\n", code=1)
    assert "    waits: op 1 claim 1: uncertain" in preview
    out = db.cli("approve", "--all", "--yes")
    assert f"plan {plan_id[:12]}: nothing of it goes in without a person" in out
    assert f"applied plan {sure[:12]}: 1 operation(s), 1 claim(s)" in out
    assert db.slugs() == ["bridge"] and len(db.storage.batches("team")) == 1
    assert "waits: op 1 claim 1: uncertain" in db.cli("inbox")
    done = json.loads(db.cli("approve", plan_id, "--json"))  # read, then approved by id
    assert done["applied"] and len(done["claims"]) == 1
