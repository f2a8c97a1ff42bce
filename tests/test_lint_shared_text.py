"""Shared text reported once (issue 24 item 2): a manual's boilerplate on every page is one
finding without a fix, not a duplicate finding per pair of pages (main: 13 for five pages), each
proposing to retire a true claim of its page."""

from __future__ import annotations

from pathlib import Path

from affidavit.ingest.pipeline import Ingestor
from affidavit.lint.runner import run_lint
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.vault import Vault

BOILERPLATE = "Report bugs in the widget tool to the maintainers of the project mailing list."


def test_boilerplate_on_five_pages_is_one_finding_that_retires_nothing(
    vault: Vault, tmp_path: Path
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("add", "push", "pull", "fetch", "merge"):
        (docs / f"git-{name}.md").write_text(
            f"# git-{name}(1) Manual Page\n\nThe {name} command of the widget tool grinds "
            f"exactly one brass gear per minute on the lathe.\n\n{BOILERPLATE}\n"
        )
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(docs)], "trusted")
    stating = vault.db.execute(
        "SELECT count(*) FROM claims WHERE text = ? AND status = 'active'", (BOILERPLATE,)
    ).fetchone()[0]
    assert stating >= 5
    report = run_lint(vault)
    dup = [f.finding for f in report.findings if f.finding.kind == "duplicate"]
    assert len(dup) == 1
    (shared,) = dup
    assert shared.fix is None and shared.severity == "info"
    # every page's copy is in the one finding (a topic page may hold a further copy of its own)
    assert stating - 1 <= len(shared.claims) <= stating
    assert {"git-add", "git-push", "git-pull", "git-fetch", "git-merge"} <= set(shared.pages)
    assert f"is stated by {len(shared.claims)} claims" in shared.message
    assert BOILERPLATE in shared.message


def test_two_copies_stay_a_duplicate_with_its_merge_fix(vault: Vault, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("add", "push"):
        (docs / f"git-{name}.md").write_text(
            f"# git-{name}(1) Manual Page\n\nThe {name} command of the widget tool grinds "
            f"exactly one brass gear per minute on the lathe.\n\n{BOILERPLATE}\n"
        )
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(docs)], "trusted")
    report = run_lint(vault)
    dup = [f.finding for f in report.findings if f.finding.kind == "duplicate"]
    assert dup and all(f.fix is not None and f.fix["op"] == "supersede_claim" for f in dup)
