"""One candidate search for both passes after an ingest (supersessions, then automatic lint).

The shared search must return what each pass's own search would on the same database, and must
not be used once another connection has changed the database.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from affidavit.ingest.pipeline import Ingestor
from affidavit.lint.candidates import Candidate, find_candidates, search_pairs
from affidavit.lint.runner import lint_due, start_ingest_search
from affidavit.lint.since import forget
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.vault import init_vault, open_vault

from .conftest import FakeClock

OLD = (
    "# Tamar Bridge\n\nThe Tamar Bridge carries 40,000 vehicles each day between Plymouth and "
    "Saltash. It opened in 1961. The bridge was built by Cleveland Bridge. The Tamar Bridge "
    "has a main span of 335 metres.\n"
)
VERSION = "\n\nVersion 2.0\n\n"


def _key(found: list[Candidate]) -> list[tuple[str, str, list[str], list[tuple[str, str | None]]]]:
    return [
        (
            c.finding.fingerprint,
            c.finding.message,
            c.finding.claims,
            [(q.quote, q.claim_id) for q in c.quotes],
        )
        for c in found
    ]


def _two_ingests(tmp_path: Path, clock: FakeClock) -> tuple[Ingestor, list[str]]:
    vault, _ = init_vault(tmp_path / "v", clock=clock)
    config = vault.config_path.read_text().replace("every_ingests = 10", "every_ingests = 3")
    vault.config_path.write_text(config)
    vault.close()
    vault = open_vault(tmp_path / "v", clock=clock)
    for release in ("1.0", "2.0"):
        (tmp_path / release).mkdir()
    (tmp_path / "1.0" / "tamar.md").write_text(OLD.replace("\n\n", "\n\nVersion 1.0\n\n", 1))
    (tmp_path / "copy.md").write_text(OLD + "\nA copy kept elsewhere.\n")  # old duplicates
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run(
        [str(tmp_path / "1.0" / "tamar.md"), str(tmp_path / "copy.md")], "trusted"
    )
    clock.advance(days=365)
    # the next release, another file: what makes its facts newer (issue 24 item 3); both
    # state their version, so the supersession pass orders them (a new version of the same
    # file holds its changed facts for the lineage's proposals: test_lineage_decision.py)
    (tmp_path / "2.0" / "tamar.md").write_text(
        OLD.replace("40,000", "45,000").replace("1961", "1962").replace("\n\n", VERSION, 1)
    )
    ingestor = Ingestor(vault, ExtractiveProvider(), apply_now=True)
    report = ingestor.run([str(tmp_path / "2.0" / "tamar.md")], "trusted")
    plans = [c.plan_id for s in report.sources for c in s.chunks if c.plan_id]
    assert report.supersessions is not None and report.supersessions["findings"]
    assert report.lint is not None and report.lint["counts"].get("stale")  # both passes ran
    return ingestor, plans


def test_the_shared_search_finds_what_each_pass_finds_alone(
    tmp_path: Path, clock: FakeClock
) -> None:
    ingestor, plans = _two_ingests(tmp_path, clock)
    db = ingestor.vault.db
    new = {
        str(r[0])
        for r in db.execute(
            f"SELECT id FROM claims WHERE plan_id IN ({','.join('?' * len(plans))})", plans
        )
    }
    search = search_pairs(db)
    alone = find_candidates(db, involving=new)
    assert alone and _key(find_candidates(db, involving=new, search=search)) == _key(alone)
    assert _key(find_candidates(db, search=search)) == _key(find_candidates(db))
    assert len(find_candidates(db)) > len(alone)  # the whole-wiki pass sees more than the new


def test_a_search_is_not_reused_after_another_connection_changed_the_claims(
    tmp_path: Path, clock: FakeClock
) -> None:
    ingestor, _ = _two_ingests(tmp_path, clock)
    db = ingestor.vault.db
    search = search_pairs(db)
    assert search.fresh(db) and search.found()
    other = sqlite3.connect(ingestor.vault.root / ".affidavit" / "db.sqlite")
    with other:
        other.execute("UPDATE claims SET status = 'retracted' WHERE text LIKE '%45,000%'")
    other.close()
    assert not search.fresh(db)
    now = find_candidates(db, search=search)
    assert _key(now) == _key(find_candidates(db))
    assert not [c for c in now if any("45,000" in q.quote for q in c.quotes)]


def test_one_search_only_when_both_passes_run(tmp_path: Path, clock: FakeClock) -> None:
    ingestor, plans = _two_ingests(tmp_path, clock)
    vault = ingestor.vault
    assert not lint_due(vault, 2)  # the lint just ran: the counter starts again at 0
    assert start_ingest_search(vault, plans, 2) is None
    # the lint that ran left a checkpoint: the next is incremental and reads the new claims'
    # pairs through the word index, so no whole-wiki search is shared
    assert lint_due(vault, 3) and start_ingest_search(vault, plans, 3) is None
    forget(vault)  # without one the automatic lint is a full run: one search for both passes
    pending = start_ingest_search(vault, plans, 3)
    assert lint_due(vault, 3) and pending is not None
    assert pending.result().fresh(vault.db)
    assert start_ingest_search(vault, [], 3) is None  # nothing applied: no supersession pass


def test_the_passes_hold_off_the_garbage_collector_and_restore_it(
    tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gc

    from affidavit.heap import THRESHOLDS
    from affidavit.lint import runner

    seen: list[tuple[int, ...]] = []
    checks = runner._checks

    def checking(*args: Any) -> Any:
        seen.append(gc.get_threshold())
        return checks(*args)

    monkeypatch.setattr(runner, "_checks", checking)
    before = gc.get_threshold()
    ingestor, _ = _two_ingests(tmp_path, clock)
    assert seen and all(t == THRESHOLDS for t in seen)
    assert gc.get_threshold() == before and gc.isenabled()
    seen.clear()
    runner.run_lint(ingestor.vault)  # on its own, outside an ingest
    assert seen == [THRESHOLDS] and gc.get_threshold() == before
