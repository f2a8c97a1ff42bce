"""Lint that tells the truth (issue 24 item 3): "stale" and supersession need evidence that one
source replaces another — a later version of the same origin — never "ingested later"."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from affidavit.db import _origin_keys
from affidavit.ingest.pipeline import Ingestor
from affidavit.lint.runner import run_lint
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.vault import Vault, init_vault

from .conftest import FakeClock, add_text

# One release of a small tool's documentation: pages that name different tools for the same job
# and different numbers for different things (what git's pages did: "Use Diffuse" / "Use Meld").
RELEASE = {
    "mergetool-diffuse.md": (
        "# Merge tool: diffuse\n\n"
        "Use Diffuse to resolve merge conflicts (requires a graphical session).\n\n"
        "The default timeout for the merge tool is 30 seconds in this release.\n"
    ),
    "mergetool-meld.md": (
        "# Merge tool: meld\n\n"
        "Use Meld to resolve merge conflicts (requires a graphical session).\n\n"
        "The default timeout for the merge tool is 60 seconds when Meld runs remotely.\n"
    ),
    "checkout.md": (
        "# checkout\n\n"
        "Switch branches or restore working tree files with the checkout command.\n\n"
        "The checkout command accepts 12 options in this release.\n"
    ),
    "switch.md": (
        "# switch\n\n"
        "Switch branches with the switch command, which never restores files.\n\n"
        "The switch command accepts 9 options in this release.\n"
    ),
}


def _ingest_release(root: Path, names: list[str]) -> Vault:
    clock = FakeClock()
    vault, _ = init_vault(root / "vault", clock=clock)
    docs = root / "docs"
    docs.mkdir()
    for name in names:  # one file at a time, a minute apart: the order shows in every timestamp
        (docs / name).write_text(RELEASE[name])
        Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(docs / name)], "trusted")
        clock.advance(minutes=1)
    return vault


def _disagreements(vault: Vault) -> tuple[list[Any], int]:
    report = run_lint(vault)
    texts = dict(vault.db.execute("SELECT id, text FROM claims").fetchall())
    found = sorted(
        (s.finding.kind, tuple(sorted(texts[c] for c in s.finding.claims)))
        for s in report.findings
        if s.finding.kind in ("stale", "contradiction", "duplicate")
    )
    supersede = sum(
        1
        for (text,) in vault.db.execute("SELECT plan_json FROM plans WHERE status = 'pending'")
        for op in json.loads(text)["operations"]
        if op["op"] == "supersede_claim"
    )
    return found, supersede


def test_one_release_in_any_order_has_no_stale_finding_and_the_same_findings(
    tmp_path: Path,
) -> None:
    names = sorted(RELEASE)
    forward = _ingest_release(tmp_path / "forward", names)
    backward = _ingest_release(tmp_path / "backward", list(reversed(names)))
    found_f, supersede_f = _disagreements(forward)
    found_b, supersede_b = _disagreements(backward)
    assert not [f for f in found_f if f[0] == "stale"]
    assert supersede_f == 0 and supersede_b == 0
    assert found_f == found_b  # the ingest order changes nothing
    # ingesting the same release again changes nothing either
    again = Ingestor(forward, ExtractiveProvider(), apply_now=True).run(
        [str(tmp_path / "forward" / "docs")], "trusted"
    )
    assert again.totals()["sources"] == {"unchanged": len(RELEASE)}
    assert _disagreements(forward) == (found_f, 0)


def test_a_changed_fact_ingested_later_from_another_file_is_no_stale(
    vault: Vault, clock: FakeClock
) -> None:
    """The attacker's case for the old rule: a later file contradicting a trusted page could
    retire it by arriving a year later. Now it is a contradiction, for a person to settle."""
    from .test_lint_findings import NEW, NEW_QUOTE, OLD, OLD_QUOTE, _apply, _page

    old_src = add_text(vault, "tamar.md", OLD)
    _apply(vault, _page("tamar-bridge", "Tamar Bridge", OLD_QUOTE, old_src, OLD_QUOTE))
    clock.advance(days=365)
    new_src = add_text(vault, "traffic.md", NEW)  # another origin, a year later
    _apply(vault, _page("traffic", "Tamar Bridge traffic", NEW_QUOTE, new_src, NEW_QUOTE))
    report = run_lint(vault, propose=True)
    kinds = [s.finding.kind for s in report.findings]
    assert "stale" not in kinds and "contradiction" in kinds
    contradiction = next(s for s in report.findings if s.finding.kind == "contradiction")
    assert contradiction.finding.fix is None
    assert [q.quote for q in contradiction.finding.quotes] == [OLD_QUOTE, NEW_QUOTE]


def test_a_models_stale_finding_without_a_newer_version_is_dropped(
    vault: Vault, clock: FakeClock
) -> None:
    from affidavit.evidence import Verifier
    from affidavit.lint.findings import Finding
    from affidavit.lint.quotes import ProposedQuote, QuoteGate
    from affidavit.sources.store import SourceStore

    from .test_lint_findings import NEW, NEW_QUOTE, OLD, OLD_QUOTE, _apply, _claim_of, _page

    old_src = add_text(vault, "tamar.md", OLD)
    _apply(vault, _page("tamar-bridge", "Tamar Bridge", OLD_QUOTE, old_src, OLD_QUOTE))
    clock.advance(days=30)
    new_src = add_text(vault, "traffic.md", NEW)
    _apply(vault, _page("traffic", "Tamar Bridge traffic", NEW_QUOTE, new_src, NEW_QUOTE))
    old, new = _claim_of(vault, "tamar-bridge"), _claim_of(vault, "traffic")
    store = SourceStore(vault)
    gate = QuoteGate(vault.db, store, Verifier(store))
    finding = Finding(
        origin="model",
        kind="stale",
        severity="warning",
        subject=old,
        message="newer",
        claims=[old, new],
    )
    quotes = [ProposedQuote(OLD_QUOTE, claim_id=old), ProposedQuote(NEW_QUOTE, claim_id=new)]
    verdict = gate.judge(finding, quotes)
    assert not verdict.kept and "later version of the same source" in verdict.reason
    # the same two claims when the second source is the next version of the first's file
    v2 = add_text(vault, "tamar.md", NEW + "\nRevised.\n")  # other bytes than traffic.md
    _apply(vault, _page("tamar-2", "Tamar Bridge today", NEW_QUOTE, v2, NEW_QUOTE))
    newer = _claim_of(vault, "tamar-2")
    finding = finding.model_copy(update={"claims": [old, newer]})
    quotes[1] = ProposedQuote(NEW_QUOTE, claim_id=newer)
    assert gate.judge(finding, quotes).kept


def test_the_migration_orders_an_origins_earlier_rows_as_versions(vault: Vault) -> None:
    first = add_text(vault, "notes.md", "# Notes\n\nThe first draft of the notes.\n")
    second = add_text(vault, "notes.md", "# Notes\n\nThe second draft of the notes.\n")
    other = add_text(vault, "other.md", "# Other\n\nSomething else entirely.\n")
    # as a vault from before m016 has them: no keys, every row a first version
    vault.db.execute("UPDATE sources SET origin_key = '', version = 1, previous_id = NULL")
    _origin_keys(vault.db)
    rows = {
        r[0]: (r[1], r[2], r[3])
        for r in vault.db.execute("SELECT id, origin_key, version, previous_id FROM sources")
    }
    assert rows[first] == ("/test/notes.md", 1, None)
    assert rows[second] == ("/test/notes.md", 2, first)
    assert rows[other] == ("/test/other.md", 1, None)
