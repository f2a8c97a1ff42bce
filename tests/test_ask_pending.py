"""An answer that cites a claim a pending plan would supersede or retract says so, with the
plan (ask/pending.py). Found by a walk: a protocol's "five minutes" edited to "three minutes"
and re-ingested; until a person decided the lineage's supersession, ``ask`` answered "five
minutes" with nothing to say the source had changed."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from affidavit.ask.pending import pending_changes
from affidavit.cli import main
from affidavit.vault import Vault

NOTES = """# Passaging

Cells are detached with trypsin for five minutes at 37 degrees.
Trypsin is neutralised with twice the volume of complete medium.
"""
QUESTION = "How long are cells detached with trypsin?"


def _cli(root: Path, *args: str) -> str:
    result = CliRunner().invoke(main, ["--vault", str(root), *args])
    assert result.exit_code == 0, result.output
    return result.output


def _edited(vault: Vault, tmp_path: Path) -> tuple[Path, str]:
    """The notes ingested and approved, then edited and ingested again: the lineage's plan."""
    note = tmp_path / "passaging.md"
    note.write_text(NOTES)
    root = vault.root
    _cli(root, "ingest", str(note))
    _cli(root, "approve", "--all", "--yes")
    note.write_text(NOTES.replace("five minutes", "three minutes"))
    out = _cli(root, "ingest", str(note))
    assert re.search(r"version 2: \d+ claim\(s\) carried, \d+ changed fact\(s\) proposed", out)
    assert "Review the plans" in out
    (plan,) = [
        str(r[0])
        for r in vault.db.execute("SELECT id FROM plans WHERE status = 'pending'").fetchall()
    ]
    return note, plan


def test_an_answer_citing_a_fact_under_review_names_the_plan(vault: Vault, tmp_path: Path) -> None:
    _, plan = _edited(vault, tmp_path)
    root = vault.root
    shown = _cli(root, "ask", QUESTION)
    assert "five minutes" in shown
    assert "Under review" in shown and f"plan {plan[:12]} would supersede the claim of [^" in shown
    data = json.loads(_cli(root, "ask", QUESTION, "--json"))
    (change,) = data["pending_changes"]
    assert change["plan"] == plan and change["op"] == "supersede_claim"
    assert change["origin"].startswith("lineage:")
    assert change["claim"] in {c for s in data["answer"] for c in s["claims"]}
    _cli(root, "approve", plan)
    after = json.loads(_cli(root, "ask", QUESTION, "--json"))
    assert after["pending_changes"] == []
    assert "three minutes" in " ".join(s["text"] for s in after["answer"])
    assert "Under review" not in _cli(root, "ask", QUESTION)


def test_a_rejected_or_expired_plan_is_no_change_under_review(vault: Vault, tmp_path: Path) -> None:
    _, plan = _edited(vault, tmp_path)
    root = vault.root
    with vault.db:
        vault.db.execute(
            "UPDATE plans SET expires_at = '2000-01-01T00:00:00Z' WHERE id = ?", (plan,)
        )
    assert "Under review" not in _cli(root, "ask", QUESTION)
    with vault.db:
        vault.db.execute(
            "UPDATE plans SET expires_at = '2999-01-01T00:00:00Z' WHERE id = ?", (plan,)
        )
    assert "Under review" in _cli(root, "ask", QUESTION)
    _cli(root, "reject", plan, "--reason", "the old protocol stands")
    assert "Under review" not in _cli(root, "ask", QUESTION)


class _Plans:
    def __init__(self, *plans: dict[str, object]) -> None:
        self.plans = [(f"p{n}", "agent:x", json.dumps(p)) for n, p in enumerate(plans)]

    def pending_plans(self) -> list[tuple[str, str, str]]:
        return self.plans


def test_only_an_operation_that_retires_the_claim_counts() -> None:
    """The attacker's plans: the claim's id in a summary, a reason, a new claim's text, an op
    of another kind naming it — none of them would retire it."""
    cited = "c-31b441a8bd519a80"
    noise = _Plans(
        {"summary": f"retract_claim {cited}", "operations": []},
        {"operations": [{"op": "add_claims", "page": "p", "reason": f"supersede {cited}",
                         "claims": [{"text": cited, "evidence": []}]}]},
        {"operations": [{"op": "update_context", "claim": cited}]},
        {"operations": [{"op": "retract_claim", "claim": [cited]}]},
        {"operations": "retract_claim " + cited},
    )  # fmt: skip
    assert pending_changes(noise, [cited]) == []
    real = _Plans(
        {"operations": [{"op": "retract_claim", "claim": "c-other"}]},
        {"operations": [{"op": "supersede_claim", "claim": cited, "successor": "c-2"}]},
    )
    (change,) = pending_changes(real, [cited, "c-unrelated"])
    assert (change.plan, change.op, change.claim) == ("p1", "supersede_claim", cited)
    assert pending_changes(real, []) == []


def test_the_desks_answer_links_the_plan_under_review(vault: Vault, tmp_path: Path) -> None:
    from tests.test_web_upkeep import _csrf
    from tests.web import desk_client, login_owner

    _, plan = _edited(vault, tmp_path)
    root = vault.root
    vault.close()
    with desk_client(root) as (client, desk, _):
        login_owner(client, desk)
        csrf = _csrf(client.get("/web/vault/search").text)
        answer = client.post("/web/vault/ask", data={"csrf": csrf, "question": QUESTION})
    assert answer.status_code == 200 and 'class="citations"' in answer.text
    assert "Under review" in answer.text
    assert f'href="/web/vault/plans/{plan}"' in answer.text and "would supersede" in answer.text
