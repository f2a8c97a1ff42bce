"""Issue 27: the inbox never shows a claim in a state it is not in yet. A claim a pending
``retract_claim`` or ``supersede_claim`` would end is active until a person approves the plan;
the inbox says what the plan would do, and only says "retracted"/"superseded" once it did."""

from __future__ import annotations

from typing import Any

from click.testing import CliRunner

from affidavit.cli import main
from affidavit.inbox import approve, propose, reject
from affidavit.retract import retract_claim_op, supersede_op
from affidavit.vault import Vault
from affidavit.web.review import plan_view

from .conftest import add_text, claim, make_plan


def _create(slug: str, text: str, src: str, quote: str) -> dict[str, Any]:
    title = slug.replace("-", " ").title()
    return {
        "op": "create_page",
        "slug": slug,
        "title": title,
        "summary": title + ".",
        "claims": [claim(text, src, quote)],
    }


def _wiki(vault: Vault) -> tuple[str, str]:
    old_src = add_text(vault, "old.md", "The harbour bridge was opened to traffic in 1932.\n")
    new_src = add_text(vault, "new.md", "The harbour bridge was reopened to traffic in 1934.\n")
    ops = [
        _create("bridge", "The bridge opened in 1932.", old_src, "opened to traffic in 1932"),
        _create("repairs", "The bridge reopened in 1934.", new_src, "reopened to traffic in 1934"),
    ]
    proposal = propose(vault, make_plan(vault, *ops), "tester", "test")
    old, new = approve(vault, proposal.plan_id, None, "tester").claims
    return old, new


def _status(vault: Vault, claim_id: str) -> str:
    return str(
        vault.db.execute("SELECT status FROM claims WHERE id = ?", (claim_id,)).fetchone()[0]
    )


def _shown(vault: Vault, plan_id: str) -> str:
    result = CliRunner().invoke(main, ["--vault", str(vault.root), "inbox", "show", plan_id[:12]])
    assert result.exit_code == 0, result.output
    return result.stdout


def _web_roles(vault: Vault, plan_id: str) -> list[str]:
    view = plan_view(vault, plan_id)
    return [c["role"] for op in view["ops"] for c in op["claims"] if c.get("role")]


def test_a_pending_retraction_shows_the_claim_active(vault: Vault) -> None:
    old, _ = _wiki(vault)
    plan = make_plan(vault, retract_claim_op(old, "wrong year"))
    plan_id = propose(vault, plan, "tester", "test").plan_id
    assert _status(vault, old) == "active"
    out = _shown(vault, plan_id)
    assert "[active; would be retracted if approved, " in out, out
    assert "[retracted" not in out
    assert _web_roles(vault, plan_id) == ["active; would be retracted if approved"]
    approve(vault, plan_id, None, "tester")
    assert _status(vault, old) == "retracted"
    out = _shown(vault, plan_id)
    assert "[retracted by this plan, " in out and "would be" not in out, out
    assert _web_roles(vault, plan_id) == ["retracted by this plan"]


def test_a_pending_supersession_shows_the_old_claim_active(vault: Vault) -> None:
    old, new = _wiki(vault)
    plan = make_plan(vault, supersede_op(old, new, "newer source"))
    plan_id = propose(vault, plan, "tester", "test").plan_id
    out = _shown(vault, plan_id)
    assert "[active; would be superseded if approved, " in out, out
    assert "[superseded" not in out
    assert "[successor, " in out  # the successor's role is a fact already
    reject(vault, plan_id, "not yet", "tester")
    assert _status(vault, old) == "active"
    out = _shown(vault, plan_id)
    assert "[active; not superseded: the plan was rejected, " in out, out
    assert "[superseded" not in out
