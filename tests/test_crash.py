"""W6: kill -9 an apply at every step; after recovery the vault is wholly old or wholly new."""

from __future__ import annotations

import os
import re
import shutil
import signal
import sqlite3
import subprocess
import textwrap
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from affidavit.doctor import run_doctor
from affidavit.evidence import spans
from affidavit.inbox import propose
from affidavit.sources.store import SourceStore
from affidavit.store.apply import APPLY_STEPS
from affidavit.store.atomic import stray_temps
from affidavit.vault import init_vault, open_vault

from .conftest import SAMPLES, FakeClock, add_samples, claim, make_plan, sample_plan_text
from .forker import zygote

CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from datetime import UTC, datetime
    from pathlib import Path
    from affidavit.store.apply import Approval, apply_batch
    from affidavit.vault import open_vault

    root, plan_ids, target = sys.argv[1:4]
    kind = sys.argv[4] if len(sys.argv) > 4 else "person"
    vault = open_vault(Path(root), clock=lambda: datetime(2026, 11, 30, 10, 0, tzinfo=UTC))

    def step(name):
        if name == target:
            os.kill(os.getpid(), signal.SIGKILL)

    items = [(plan_id, None) for plan_id in plan_ids.split(",")]
    for result in apply_batch(vault, items, Approval("tester", kind), step=step):
        print(result.message)
    """
)
FIXED = FakeClock(datetime(2026, 11, 30, 10, 0, tzinfo=UTC))


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("crash") / "template"
    vault, _ = init_vault(root, clock=FakeClock())
    add_samples(vault)
    plan_id = propose(vault, sample_plan_text(vault), "tester", "sample").plan_id
    vault.close()
    return root, plan_id


# Every child is forked from a zygote that imported these once (tests/forker.py): a kill costs
# the apply, not a fresh interpreter's imports. What a child does and how it dies is unchanged.
PRELOAD = (
    "affidavit.vault",
    "affidavit.store.apply",
    "affidavit.store.recovery",
    "affidavit.gate",
    "affidavit.support.checker",
    "affidavit.sources.store",
    "affidavit.retrieval.tantivy_index",
    "affidavit.extractive.engine",
    "affidavit.ingest.pipeline",
    "affidavit.providers.from_config",
    "affidavit.support.wordnet:_lexicon",
)


def run_child(
    root: Path, plan_id: str, target: str, kind: str = "person"
) -> subprocess.CompletedProcess[str]:
    return zygote(*PRELOAD).run(CHILD, [str(root), plan_id, target, kind], timeout=600)


def state(root: Path) -> dict[str, Any]:
    """Open the vault (which recovers it) and capture database, files and git."""
    vault = open_vault(root, clock=FIXED)
    try:
        assert stray_temps(vault.wiki_dir) == []
        assert list(vault.journal_dir.iterdir()) == []
        files = {
            str(p.relative_to(root)): p.read_bytes() for p in sorted(vault.wiki_dir.rglob("*"))
        }
        report = run_doctor(vault)
        assert report.clean, report.findings
        tree = vault.git.tree_of_head()
        commits = len(vault.git.log_subjects())
        assert vault.git.is_clean(["wiki"])
    finally:
        vault.close()
    db = sqlite3.connect(root / ".affidavit" / "db.sqlite")
    try:
        rows = [
            SEARCH_TOKEN.sub(r"\1?)", line) for line in db.iterdump() if "_migrations" not in line
        ]
        token = db.execute("SELECT token FROM search_version").fetchone()[0]
    finally:
        db.close()
    return {"files": files, "db": rows, "tree": tree, "commits": commits, "token": token}


# The search version's token is drawn at random by design (m026): two runs of the same apply
# draw different ones. Compared as "moved or not" (same_token), never by value.
SEARCH_TOKEN = re.compile(r'^(INSERT INTO "search_version" VALUES\(0,)-?\d+\)')


def _rest(state: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in state.items() if k != "token"}


def which(got: dict[str, Any], before: dict[str, Any], after: dict[str, Any]) -> str | None:
    """ "before" when ``got`` is the state before the apply, its search token unmoved (a killed
    write rolls the token back with it); "after" when it is the applied state with a moved token;
    None for anything else — a mixed state."""
    if _rest(got) == _rest(before) and got["token"] == before["token"]:
        return "before"
    if _rest(got) == _rest(after) and got["token"] != before["token"]:
        return "after"
    return None


def kill_at_every_step(
    root: Path, plan_ids: str, tmp_path: Path, kind: str = "person"
) -> dict[str, Any]:
    """Kill the apply of ``plan_ids`` (approved by a ``kind``: person or policy) at each step in
    turn; returns the state after a clean run."""
    before_root = tmp_path / "before"
    shutil.copytree(root, before_root)
    before = state(before_root)
    after_root = tmp_path / "after"
    shutil.copytree(root, after_root)
    done = run_child(after_root, plan_ids, "never", kind)
    assert done.returncode == 0, done.stderr
    after = state(after_root)
    assert which(after, before, after) == "after" and after["commits"] == before["commits"] + 1
    outcomes = {}
    for step in APPLY_STEPS:
        work = tmp_path / f"kill-{step}"
        shutil.copytree(root, work)
        proc = run_child(work, plan_ids, step, kind)
        assert proc.returncode == -signal.SIGKILL, (step, proc.stderr)
        got = which(state(work), before, after)
        assert got is not None, f"mixed state after a kill at {step}"
        outcomes[step] = got
        # replaying the apply never applies twice
        replay = run_child(work, plan_ids, "never", kind)
        assert replay.returncode == 0, replay.stderr
        assert which(state(work), before, after) == "after"
    assert outcomes["db_written"] == "before" and outcomes["journal"] == "before"
    assert outcomes["db_commit"] == "after" and outcomes["git_commit"] == "after"
    assert os.path.exists(root)
    return after


def test_kill_at_every_step_leaves_old_or_new_state(
    template: tuple[Path, str], tmp_path: Path
) -> None:
    root, plan_id = template
    kill_at_every_step(root, plan_id, tmp_path)


MONROE = "The people being with us exclusively the sovereign"
MONROE_2 = "If kept in the dark, they must be incompetent to it"


def test_kill_a_batch_at_every_step_leaves_old_or_new_state(
    template: tuple[Path, str], tmp_path: Path
) -> None:
    """Three plans as one batch, given with the one that extends a page before the one that
    creates it: one commit naming all three, or none of them, whatever step is killed."""
    source, plan_id = template
    root = tmp_path / "batch-template"
    shutil.copytree(source, root)
    vault = open_vault(root, clock=FakeClock())
    try:
        monroe = vault.db.execute(
            "SELECT id FROM sources WHERE name = '1823-monroe.md'"
        ).fetchone()[0]
        creates = {
            "op": "create_page",
            "slug": "sovereign-people",
            "title": "The sovereign people",
            "summary": "The people are the sovereign.",
            "claims": [claim("The people are the sovereign.", monroe, MONROE)],
        }
        extends = {
            "op": "add_claims",
            "page": "sovereign-people",
            "claims": [claim("Kept in the dark, they are incompetent to it.", monroe, MONROE_2)],
        }
        first = propose(vault, make_plan(vault, creates), "tester", "t").plan_id
        second = propose(vault, make_plan(vault, extends), "tester", "t").plan_id
    finally:
        vault.close()
    after = kill_at_every_step(root, ",".join([second, plan_id, first]), tmp_path)
    assert "wiki/sovereign-people.md" in after["files"]
    check = open_vault(tmp_path / "after", clock=FIXED)
    try:
        body = check.git.run("log", "-1", "--format=%B")
        for plan in (first, second, plan_id):
            assert f"Affidavit-Plan: {plan}" in body
    finally:
        check.close()


# --- judged text by text (issue 22): a plan applied in part, then its remainder ----------------

LIGHTHOUSE = (
    "# Eddystone Lighthouse\n\n"
    "The present tower was designed by James Douglass. It was lit in 1882.\n"
    "The tower is 49 metres tall.\n"
    "The first lighthouse on the rocks was built by Henry Winstanley.\n\n"
    "## Myths\n\n"
    "Drinking bleach cures the flu.\n"
)


@pytest.fixture(scope="module")
def split_template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A pending plan whose policy apply writes part of it: a title resting on a waiting claim,
    an uncertain claim, one leaning on it, a heading that waits, a rejected summary."""
    root = tmp_path_factory.mktemp("crash-split") / "template"
    vault, _ = init_vault(root, clock=FakeClock())
    try:
        src = (
            SourceStore(vault)
            .add_bytes(
                LIGHTHOUSE.encode(),
                origin="/t/l.md",
                name="l.md",
                media_type="text/markdown",
                trust="trusted",
            )
            .record.id
        )
        designed = "The present tower was designed by James Douglass"
        tower = {
            "op": "create_page",
            "slug": "eddystone",
            "title": "Designed by James Douglass",
            "summary": "The tower is 94 metres tall.",
            "section": "Remedies for the tower",
            "claims": [
                claim("The tower is 49 metres tall.", src, "The tower is 49 metres tall"),
                claim(f"{designed} of Bristol.", src, designed),
                claim("It was lit in 1882.", src, "It was lit in 1882"),
                claim("Drinking bleach cures the flu.", src, "Drinking bleach cures the flu"),
            ],
        }
        plan_id = propose(vault, make_plan(vault, tower), "tester", "t").plan_id
    finally:
        vault.close()
    return root, plan_id


@pytest.mark.slow
def test_kill_a_policy_split_at_every_step(
    split_template: tuple[Path, str], tmp_path: Path
) -> None:
    root, plan_id = split_template
    after = kill_at_every_step(root, plan_id, tmp_path, "policy")
    page = after["files"]["wiki/eddystone.md"].decode()
    assert "# Eddystone Lighthouse" in page and "94 metres" not in page and "Bristol" not in page
    assert "## Myths" in page and "Remedies" not in page and "lit in 1882" not in page
    assert any("'pending'" in row and plan_id in row for row in after["db"])


@pytest.mark.slow
def test_kill_the_approval_of_a_remainder_at_every_step(
    split_template: tuple[Path, str], tmp_path: Path
) -> None:
    source, plan_id = split_template
    root = tmp_path / "split"
    shutil.copytree(source, root)
    assert run_child(root, plan_id, "never", "policy").returncode == 0
    after = kill_at_every_step(root, plan_id, tmp_path / "rest")
    page = after["files"]["wiki/eddystone.md"].decode()
    assert "# Designed by James Douglass" in page and "Bristol" in page
    assert "## Remedies for the tower" in page and "## Myths" not in page
    assert "94 metres" not in page


# --- an ingest's batches (issue 14): many chunks' plans, one unit each -----------------------

INGEST_CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from datetime import UTC, datetime
    from pathlib import Path
    from affidavit.ingest.pipeline import Ingestor
    from affidavit.providers.from_config import provider_from_config
    from affidavit.vault import open_vault

    root, docs, target = sys.argv[1:4]
    name, _, nth = target.partition(":")
    seen = {}

    def step(point):
        seen[point] = seen.get(point, 0) + 1
        if point == name and seen[point] == int(nth or 1):
            os.kill(os.getpid(), signal.SIGKILL)

    vault = open_vault(Path(root), clock=lambda: datetime(2026, 11, 30, 10, 0, tzinfo=UTC))
    provider = provider_from_config(vault.config, "extractive")
    ingest = Ingestor(vault, provider, apply_now=True, step=step, batch_plans=2,
                      batch_seconds=3600)
    print(ingest.run([docs], "trusted").totals()["chunks"])
    """
)
SPEECHES = ("1790-washington.md", "1941-roosevelt.md")


def run_ingest(root: Path, target: str) -> subprocess.CompletedProcess[str]:
    return zygote(*PRELOAD).run(
        INGEST_CHILD, [str(root), str(root.parent / "docs"), target], timeout=100
    )


def ingest_state(root: Path) -> dict[str, Any]:
    """Open (and so recover) the vault; the wiki's bytes and the knowledge in the database, minus
    what is random by design (plan ids follow from fresh nonces, job ids are random)."""
    vault = open_vault(root, clock=FIXED)
    try:
        assert stray_temps(vault.wiki_dir) == []
        assert list(vault.journal_dir.iterdir()) == []
        report = run_doctor(vault)
        assert report.clean, report.findings
        assert vault.git.is_clean(["wiki"])
        files = {p.name: p.read_bytes() for p in sorted(vault.wiki_dir.glob("*.md"))}
        trailers = vault.git.run("log", "--format=%B").count("Affidavit-Plan:")
    finally:
        vault.close()
    db = sqlite3.connect(root / ".affidavit" / "db.sqlite")
    spans.register(db, root)  # the evidence view needs its function (m021)
    try:
        tables = {
            "claims": "SELECT id, page_slug, section, position, text, status FROM claims ORDER BY id",
            "evidence": 'SELECT claim_id, idx, source_id, start, "end" FROM evidence '
            "ORDER BY claim_id, idx",
            "pages": "SELECT slug, title, summary, category FROM pages ORDER BY slug",
            "links": "SELECT src, dst FROM links ORDER BY src, dst",
            "plans": "SELECT status, count(*) FROM plans GROUP BY status ORDER BY status",
            "chunks": "SELECT source_id, start, outcome FROM ingested_chunks ORDER BY 1, 2",
        }
        rows = {name: db.execute(sql).fetchall() for name, sql in tables.items()}
        applied = db.execute("SELECT count(*) FROM audit WHERE action = 'applied'").fetchone()[0]
    finally:
        db.close()
    assert applied == trailers  # every plan the database applied is in git, and no other
    return {"files": files, "applied": applied, **rows}


@pytest.fixture(scope="module")
def ingest_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("crash-ingest")
    docs = base / "docs"
    docs.mkdir()
    for name in SPEECHES:
        shutil.copy(SAMPLES / "sotu" / name, docs / name)
    root = base / "template"
    init_vault(root, clock=FakeClock())[0].close()
    return root


def _copy(template: Path, dest: Path) -> Path:
    shutil.copytree(template.parent / "docs", dest / "docs")
    shutil.copytree(template, dest / "vault")
    return dest / "vault"


@pytest.fixture(scope="module")
def ingest_references(
    ingest_template: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, dict[str, Any]]:
    """The vault after the first batch, after the second, and after the whole ingest."""
    out = {}
    for label, target in (("first", "done:1"), ("second", "done:2"), ("all", "never")):
        root = _copy(ingest_template, tmp_path_factory.mktemp(f"ingest-{label}"))
        proc = run_ingest(root, target)
        assert proc.returncode == (0 if target == "never" else -signal.SIGKILL), proc.stderr
        out[label] = ingest_state(root)
    assert out["first"]["applied"] == 2 and out["second"]["applied"] == 4  # two plans a batch
    assert out["all"]["applied"] > 4
    return out


@pytest.mark.slow
@pytest.mark.parametrize("step", APPLY_STEPS)
def test_kill_an_ingest_batch_at_every_step(
    ingest_template: Path,
    ingest_references: dict[str, dict[str, Any]],
    tmp_path: Path,
    step: str,
) -> None:
    """Kill the ingest during its second batch (two chunks' plans, applied into one open
    transaction): after recovery the vault is exactly as the first batch left it or as the
    second did, never a part of it; the rerun then ends where an uninterrupted ingest does."""
    root = _copy(ingest_template, tmp_path)
    proc = run_ingest(root, f"{step}:2")
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    got = ingest_state(root)
    committed = step in ("db_commit", "renamed", "git_commit", "done")
    assert got == ingest_references["second" if committed else "first"], step
    again = run_ingest(root, "never")
    assert again.returncode == 0, again.stderr
    assert ingest_state(root) == ingest_references["all"]
