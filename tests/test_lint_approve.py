"""``findings approve`` never applies a withdrawal in bulk: ``--all`` takes only kinds whose fix
ends nothing, and every fix is printed before it is applied (the README's
``lint --propose && findings approve --all`` once superseded correct claims)."""

from __future__ import annotations

from click.testing import CliRunner

from affidavit.cli import main
from affidavit.inbox import list_plans
from affidavit.lint.findings import ENDS_NOTHING
from affidavit.lint.runner import run_lint
from affidavit.vault import Vault

from .conftest import FakeClock
from .test_lint_findings import _disagreeing


def status(vault: Vault, claim: str) -> str:
    return str(vault.db.execute("SELECT status FROM claims WHERE id = ?", (claim,)).fetchone()[0])


def test_findings_approve_all_never_applies_a_supersession(vault: Vault, clock: FakeClock) -> None:
    old, new = _disagreeing(vault, clock)
    report = run_lint(vault, propose=True, actor="person:tester")
    kinds = {f.finding.kind for f in report.findings if f.plan_id}
    assert "stale" in kinds
    adds = sorted(kinds & set(ENDS_NOTHING))
    assert adds, kinds  # the two pages also lack a link
    runner = CliRunner()
    args = ["--vault", str(vault.root), "findings", "approve"]
    for attempt in (["--all"], ["--all", "--kind", "stale"], ["--all", "--kind", "duplicate"]):
        refused = runner.invoke(main, [*args, *attempt, "--yes"])
        assert refused.exit_code != 0 and "list those findings by id" in refused.output
    assert status(vault, old) == "active"
    linked = runner.invoke(main, [*args, "--all", *[x for k in adds for x in ("--kind", k)]])
    assert linked.exit_code == 0, linked.output
    assert "link " in linked.output and "supersede" not in linked.output
    assert status(vault, old) == "active"
    assert vault.db.execute("SELECT count(*) FROM links").fetchone()[0] >= 1
    # the supersession is still pending, and shown (both claims) before the person agrees
    assert any(op.op == "supersede_claim" for p in list_plans(vault) for op in p.plan.operations)
    stale = next(f for f in report.findings if f.finding.kind == "stale")
    declined = runner.invoke(main, [*args, stale.id], input="n\n")
    assert declined.exit_code != 0 and f"supersede {old}" in declined.output
    assert status(vault, old) == "active"
    agreed = runner.invoke(main, [*args, stale.id], input="y\n")
    assert agreed.exit_code == 0, agreed.output
    assert status(vault, old) == "superseded"
    del new
