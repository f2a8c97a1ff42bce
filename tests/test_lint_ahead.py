"""The lint after an ingest, with its pair search in a worker process and its checks run ahead.

After a large ingest the whole wiki's candidate pairs are classified by a worker process while
this process runs the checks, before the supersession pass. Nothing may differ from running the
passes one after the other: the worker computes the same pure function (also under another hash
seed), checks run ahead are not taken once another connection committed, and the checks that read
what the supersession pass proposed (pending plans) run again after it.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from affidavit.inbox import propose
from affidavit.ingest.ahead import Ahead
from affidavit.ingest.pipeline import Ingestor
from affidavit.lint import runner
from affidavit.lint.candidates import classify_pairs, read_pair_work
from affidavit.lint.checks import run_checks
from affidavit.lint.findings import FindingStore
from affidavit.lint.runner import PROPOSAL_CHECKS, Checked, check_ahead, run_lint
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.vault import Vault, init_vault, open_vault

from .conftest import FakeClock, claim, make_plan

OLD = (
    "# Tamar Bridge\n\nThe Tamar Bridge carries 40,000 vehicles each day between Plymouth and "
    "Saltash. It opened in 1961. The bridge was built by Cleveland Bridge. The Tamar Bridge "
    "has a main span of 335 metres.\n"
)
VERSION = "\n\nVersion 2.0\n\n"


def _vault(root: Path, clock: FakeClock) -> Vault:
    """A vault that lints after every second ingest and reports every pending plan as expiring
    (so the supersession pass's proposals show in the checks' findings)."""
    vault, _ = init_vault(root, clock=clock)
    config = vault.config_path.read_text()
    config = config.replace("every_ingests = 10", "every_ingests = 2")
    config = config.replace("expiring_hours = 6", "expiring_hours = 48")
    vault.config_path.write_text(config)
    vault.close()
    return open_vault(root, clock=clock)


def _two_ingests(root: Path, docs: Path, clock: FakeClock) -> tuple[Vault, Any]:
    vault = _vault(root, clock)
    for release in ("1.0", "2.0"):
        (docs / release).mkdir(parents=True, exist_ok=True)
    (docs / "1.0" / "tamar.md").write_text(OLD.replace("\n\n", "\n\nVersion 1.0\n\n", 1))
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run(
        [str(docs / "1.0" / "tamar.md")], "trusted"
    )
    clock.advance(days=365)
    # its next release, another file: what makes the changed facts stale (issue 24 item 3);
    # both state their version, so the supersession pass orders them (a new version of the
    # same file holds its changed facts for the lineage's proposals: test_lineage_decision.py)
    (docs / "2.0" / "tamar.md").write_text(
        OLD.replace("40,000", "45,000").replace("1961", "1962").replace("\n\n", VERSION, 1)
    )
    report = Ingestor(vault, ExtractiveProvider(), apply_now=True).run(
        [str(docs / "2.0" / "tamar.md")], "trusted"
    )
    return vault, report


def _findings(vault: Vault) -> list[tuple[str, str, str, str]]:
    """The vault's findings, each pending plan's id (its nonce makes it differ between two
    vaults) written as its place in the inbox."""
    plans = [  # in the order they were proposed (their ids differ between two vaults)
        r[0]
        for r in vault.db.execute(
            "SELECT id FROM plans WHERE status = 'pending' ORDER BY origin, rowid"
        )
    ]
    out: list[tuple[str, str, str, str]] = []
    for f in FindingStore(vault.db).list():
        subject, message = f.finding.subject, f.finding.message
        for n, plan in enumerate(plans):
            subject = subject.replace(plan, f"plan{n}")
            message = message.replace(plan[:12], f"plan{n}")
        out.append((f.finding.kind, subject, message, f.status))
    return out


def test_an_ingest_lints_the_same_with_its_search_in_a_worker_and_its_checks_ahead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # one after the other: checks run ahead are never taken, the search runs in this process
    with monkeypatch.context() as m:
        m.setattr(runner, "PAIRS_AHEAD_MIN_CLAIMS", 10**9)
        m.setattr(runner, "check_ahead", lambda vault, progress=None: Checked([], None, -1))  # type: ignore[arg-type]
        alone, alone_report = _two_ingests(tmp_path / "alone", tmp_path / "docs", FakeClock())
    results: list[tuple[bool, str | None]] = []
    result = runner.PendingSearch.result

    def recorded(self: runner.PendingSearch, progress: Any = None) -> Any:
        worker = self.ahead
        found = result(self, progress)
        results.append((worker is not None and worker.computed == 1, self.stopped))
        return found

    monkeypatch.setattr(runner, "PAIRS_AHEAD_MIN_CLAIMS", 0)
    monkeypatch.setattr(runner.PendingSearch, "result", recorded)
    ahead, ahead_report = _two_ingests(tmp_path / "ahead", tmp_path / "docs", FakeClock())
    assert results == [(True, None)]  # the worker classified the pairs
    # the supersession pass proposed a plan, which the checks (run before it) report again
    assert ahead_report.supersessions and ahead_report.supersessions["plans"]
    plans = set(ahead_report.supersessions["plans"])
    expiring = {
        f.finding.subject
        for f in FindingStore(ahead.db).list()
        if f.finding.kind == "plan_expiring"
    }
    assert plans <= expiring
    assert ahead_report.lint == alone_report.lint
    assert alone_report.supersessions is not None
    assert ahead_report.supersessions["findings"] == alone_report.supersessions["findings"]
    assert len(plans) == len(alone_report.supersessions["plans"])
    assert _findings(ahead) == _findings(alone)


def test_the_worker_classifies_pairs_as_this_process_does_under_another_hash_seed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault, _ = _two_ingests(tmp_path / "v", tmp_path / "docs", FakeClock())
    work, _ = read_pair_work(vault.db, runner.thresholds(vault))
    here = classify_pairs(work)
    assert here  # the changed figures make stale pairs
    for seed in ("0", "12345"):
        monkeypatch.setenv("PYTHONHASHSEED", seed)
        with Ahead(runner.PAIRS, depth=1) as worker:
            worker.extend([("pairs", work)])
            ready, there = worker.take("pairs")
        assert ready and there == here


def test_a_worker_that_cannot_answer_leaves_the_search_to_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault, _ = _two_ingests(tmp_path / "v", tmp_path / "docs", FakeClock())
    work, version = read_pair_work(vault.db, runner.thresholds(vault))
    broken = Ahead("affidavit.lint.candidates:no_such_function", depth=1)
    pending = runner.PendingSearch(work, version, broken)
    search = pending.result()
    assert pending.stopped and "worker ended" in pending.stopped
    assert search.pairs == classify_pairs(work) and search.fresh(vault.db)
    # a worker whose call raises (here: it is sent no claims to classify) answers nothing
    raising = Ahead(runner.PAIRS, depth=1)
    pending = runner.PendingSearch(replace(work, claims=None), version, raising)  # type: ignore[arg-type]
    with pytest.raises(TypeError):  # this process then meets the same error itself
        pending.result()
    assert pending.stopped == "the worker's classification raised"


def test_checks_run_ahead_are_not_taken_once_another_connection_committed(
    tmp_path: Path,
) -> None:
    vault, _ = _two_ingests(tmp_path / "v", tmp_path / "docs", FakeClock())
    checked = check_ahead(vault)
    assert checked.current(vault) == checked.findings
    other = sqlite3.connect(vault.state_dir / "db.sqlite")
    with other:  # a page's only claims retracted behind this connection's back
        other.execute("UPDATE claims SET status = 'retracted' WHERE page_slug != ''")
    other.close()
    assert checked.current(vault) is None
    now = run_checks(vault)
    assert now != checked.findings and any(f.kind == "empty_page" for f in now)
    report = run_lint(vault, checked=checked)
    kinds = {f.finding.kind for f in report.findings}
    assert "empty_page" in kinds  # run again, not taken from before the commit


def test_a_plan_proposed_after_the_checks_ran_is_reported_by_the_recheck(
    tmp_path: Path,
) -> None:
    vault, _ = _two_ingests(tmp_path / "v", tmp_path / "docs", FakeClock())
    before = {f.subject for f in run_checks(vault) if f.kind == "plan_expiring"}
    checked = check_ahead(vault)
    source = vault.db.execute("SELECT id FROM sources ORDER BY added_at LIMIT 1").fetchone()[0]
    plan = make_plan(
        vault,
        {
            "op": "create_page",
            "slug": "saltash",
            "title": "Saltash",
            "summary": "Saltash.",
            "claims": [claim("It opened in 1961.", source, "It opened in 1961.")],
        },
    )
    proposal = propose(vault, plan, "someone", "cli")
    assert proposal.status == "pending" and proposal.plan_id not in before
    stale = checked.current(vault)
    assert stale is not None and proposal.plan_id not in {f.subject for f in stale}
    rechecked = checked.current(vault, PROPOSAL_CHECKS)
    assert rechecked is not None and proposal.plan_id in {f.subject for f in rechecked}
    assert rechecked == run_checks(vault)  # what running every check now gives, in its order
    report = run_lint(vault, checked=checked, recheck=PROPOSAL_CHECKS)
    assert proposal.plan_id in {f.finding.subject for f in report.findings}


def test_a_check_that_raises_leaves_no_worker_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workers: list[Ahead] = []
    start = runner.PendingSearch.__init__

    def started(self: runner.PendingSearch, *args: Any) -> None:
        start(self, *args)
        assert self.ahead is not None
        workers.append(self.ahead)

    def failing(vault: Vault, progress: object = None) -> Checked:
        raise OSError("a source file could not be read")

    monkeypatch.setattr(runner, "PAIRS_AHEAD_MIN_CLAIMS", 0)
    monkeypatch.setattr(runner.PendingSearch, "__init__", started)
    monkeypatch.setattr(runner, "check_ahead", failing)
    with pytest.raises(OSError, match="could not be read"):
        _two_ingests(tmp_path / "v", tmp_path / "docs", FakeClock())
    assert len(workers) == 1
    process = workers[0]._process
    assert process is not None and process.poll() is not None  # stopped and reaped


def test_the_cli_shows_the_lint_pass_after_an_ingest_and_keeps_json_clean(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from affidavit.cli import main

    monkeypatch.setattr(runner, "PAIRS_AHEAD_MIN_CLAIMS", 0)  # the worker's stage too
    vault = _vault(tmp_path / "v", FakeClock())
    vault.close()
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "tamar.md").write_text(OLD)
    (docs / "tamar-2025.md").write_text(OLD.replace("40,000", "45,000"))
    args = ["--vault", str(tmp_path / "v"), "ingest", str(docs), "--trust", "trusted", "--yes"]
    shown = CliRunner().invoke(main, args)
    assert shown.exit_code == 0, shown.output
    assert "Linting: candidate pairs" in shown.stderr
    assert "Linting: broken_link" in shown.stderr and shown.stderr.endswith("\n")
    assert "Automatic lint (lint.every_ingests) run" in shown.stdout
    (docs / "saltash.md").write_text(OLD.replace("Tamar", "Saltash"))
    (docs / "plymouth.md").write_text(OLD.replace("Tamar", "Plymouth"))
    quiet = CliRunner().invoke(main, [*args, "--json"])
    assert quiet.exit_code == 0, quiet.output
    assert "Linting" not in quiet.output
    assert json.loads(quiet.stdout)["totals"]["lint"]["run"]  # the lint ran, said in JSON alone
