"""Lint that doesn't cry wolf: a disagreement needs one subject and one changed fact, from two
sources, says why it was raised, and is never settled in bulk (issue 15)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from affidavit.cli import main
from affidavit.lint.runner import run_lint
from affidavit.vault import Vault

from .conftest import FakeClock, add_text
from .test_lint_findings import NEW_QUOTE, OLD, OLD_QUOTE, _apply, _claim_of, _page

DISAGREEING = ("stale", "contradiction")


def _claims(vault: Vault, slug: str) -> list[str]:
    rows = vault.db.execute(
        "SELECT id FROM claims WHERE page_slug = ? AND status = 'active' ORDER BY position",
        (slug,),
    )
    return [str(r[0]) for r in rows]


def test_two_numbers_in_one_source_are_two_things_not_a_contradiction(
    vault: Vault, clock: FakeClock
) -> None:
    """The regex page's "zero or more" and "one or more" (the operator symbols lost in
    extraction): one document stating two numbers describes two things."""
    star = "Causes the resulting RE to match 0 or more repetitions of the preceding RE."
    plus = "Causes the resulting RE to match 1 or more repetitions of the preceding RE."
    src = add_text(vault, "re.md", f"# re\n\n{star}\n\n{plus}\n")
    page = _page("re", "re", star, src, star)
    page["claims"].append({"text": plus, "evidence": [{"source": src, "quote": plus}]})
    _apply(vault, page)
    assert len(_claims(vault, "re")) == 2
    report = run_lint(vault)
    assert not [f for f in report.findings if f.finding.kind in DISAGREEING]


def test_version_notes_about_different_parameters_are_not_stale(
    vault: Vault, clock: FakeClock
) -> None:
    old_note = "Changed in version 3.4: Added the with_pip parameter"
    new_note = "Changed in version 3.10: Added the key parameter."
    venv = add_text(vault, "venv.md", f"# venv\n\n{old_note}\n")
    _apply(vault, _page("venv", "venv", old_note, venv, old_note))
    clock.advance(days=1)
    bisect = add_text(vault, "venv-news.md", f"# venv news\n\n{new_note}\n")
    _apply(vault, _page("venv-news", "venv news", new_note, bisect, new_note))
    report = run_lint(vault)
    assert not [f for f in report.findings if f.finding.kind in DISAGREEING]


def _contradiction(vault: Vault) -> tuple[str, str]:
    """Two trusted sources, added at the same moment, giving two numbers for one thing."""
    new_text = "# Traffic report\n\n" + NEW_QUOTE + "\n"
    old_src = add_text(vault, "tamar.md", OLD)
    new_src = add_text(vault, "traffic.md", new_text)
    _apply(vault, _page("tamar-bridge", "Tamar Bridge", OLD_QUOTE, old_src, OLD_QUOTE))
    _apply(vault, _page("traffic", "Tamar Bridge traffic", NEW_QUOTE, new_src, NEW_QUOTE))
    return _claim_of(vault, "tamar-bridge"), _claim_of(vault, "traffic")


def test_a_contradiction_shows_the_subject_and_the_fact_it_was_raised_on(
    vault: Vault, clock: FakeClock
) -> None:
    a, b = _contradiction(vault)
    runner = CliRunner()
    args = ["--vault", str(vault.root)]
    shown = runner.invoke(main, [*args, "lint"])
    assert shown.exit_code == 0, shown.output
    line = next(x for x in shown.output.splitlines() if " contradiction: " in x)
    assert "disagree about Tamar Bridge" in line and "a different number" in line
    assert f"{a} says 40,000" in line and f"{b} says 45,000" in line
    data = json.loads(runner.invoke(main, [*args, "lint", "--json"]).output)
    found = next(f for f in data["findings"] if f["kind"] == "contradiction")
    assert sorted(found["claims"]) == sorted([a, b])
    assert found["why"]["fact"] == "number"
    assert "Tamar Bridge" in found["why"]["subject"]
    assert {found["why"]["a"], found["why"]["b"]} == {"40,000", "45,000"}
    listed = json.loads(runner.invoke(main, [*args, "findings", "--json"]).output)
    assert next(f for f in listed if f["id"] == found["id"])["why"] == found["why"]


def test_no_bulk_command_takes_a_side_on_a_contradiction(vault: Vault, clock: FakeClock) -> None:
    """A contradiction says two sources disagree, not which is right: nothing supersedes either
    claim until a person names the one to keep, and even then only that finding's id approves."""
    a, b = _contradiction(vault)
    runner = CliRunner()
    args = ["--vault", str(vault.root)]

    def status(claim: str) -> str:
        row = vault.db.execute("SELECT status FROM claims WHERE id = ?", (claim,)).fetchone()
        return str(row[0])

    report = run_lint(vault, propose=True)
    found = next(f for f in report.findings if f.finding.kind == "contradiction")
    assert found.finding.fix is None and found.plan_id is None
    fixed = runner.invoke(main, [*args, "findings", "fix", "--all", "--kind", "contradiction"])
    assert fixed.exit_code == 0 and "No fix plan proposed" in fixed.output
    assert "decide which is right" in fixed.output
    for attempt in (["--all", "--kind", "contradiction"], ["--all"]):
        refused = runner.invoke(main, [*args, "findings", "approve", *attempt, "--yes"])
        assert refused.exit_code != 0 and "list those findings by id" in refused.output
    kept = runner.invoke(main, [*args, "findings", "fix", found.id, "--keep", b])
    assert kept.exit_code == 0 and "Proposed fix plan" in kept.output, kept.output
    refused = runner.invoke(
        main, [*args, "findings", "approve", "--all", "--kind", "contradiction", "--yes"]
    )
    assert refused.exit_code != 0
    assert (status(a), status(b)) == ("active", "active")
    chosen = runner.invoke(main, [*args, "findings", "approve", found.id], input="y\n")
    assert chosen.exit_code == 0, chosen.output
    assert f"supersede {a}" in chosen.output
    assert (status(a), status(b)) == ("superseded", "active")
