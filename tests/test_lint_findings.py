"""Model findings and the quote gate (W9), extractive contradictions, fixes, and auto-lint."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from affidavit.cli import main
from affidavit.errors import NotFoundError
from affidavit.inbox import approve, get_plan
from affidavit.lint.findings import FindingStore
from affidavit.lint.fixes import propose_fixes
from affidavit.lint.runner import INGEST_COUNTER, after_ingest, run_lint
from affidavit.providers.base import ModelRequest
from affidavit.providers.scripted import ScriptedProvider
from affidavit.store.audit import verify_chain
from affidavit.vault import Vault, open_vault

from .conftest import FakeClock, add_text, claim, make_plan

OLD = (
    "# Tamar Bridge\n\nThe Tamar Bridge carries 40,000 vehicles each day between Plymouth and "
    "Saltash. It opened in 1961.\n"
)
NEW = (
    "# Traffic report\n\nThe Tamar Bridge carries 45,000 vehicles each day between Plymouth and "
    "Saltash. Tolls are collected eastbound only.\n"
)
OLD_QUOTE = "The Tamar Bridge carries 40,000 vehicles each day between Plymouth and Saltash."
NEW_QUOTE = "The Tamar Bridge carries 45,000 vehicles each day between Plymouth and Saltash."


def _page(slug: str, title: str, text: str, source: str, quote: str) -> dict[str, Any]:
    return {
        "op": "create_page",
        "slug": slug,
        "title": title,
        "summary": text,
        "claims": [claim(text, source, quote)],
    }


def _apply(vault: Vault, *ops: dict[str, Any]) -> str:
    from affidavit.inbox import propose

    proposal = propose(vault, make_plan(vault, *ops), author="test", origin="test")
    approve(vault, proposal.plan_id, None, "tester")
    return proposal.plan_id


def _claim_of(vault: Vault, page: str) -> str:
    row = vault.db.execute(
        "SELECT id FROM claims WHERE page_slug = ? AND status = 'active'", (page,)
    ).fetchone()
    return str(row[0])


def _disagreeing(vault: Vault, clock: FakeClock, new_trust: str = "trusted") -> tuple[str, str]:
    old_src = add_text(vault, "tamar.md", OLD)
    _apply(vault, _page("tamar-bridge", "Tamar Bridge", OLD_QUOTE, old_src, OLD_QUOTE))
    clock.advance(days=30)
    # the same origin (/test/tamar.md) with other bytes: its next version, which is what makes
    # it newer (issue 24 item 3), not the thirty days
    new_src = add_text(vault, "tamar.md", NEW, trust=new_trust)
    _apply(vault, _page("traffic", "Tamar Bridge traffic", NEW_QUOTE, new_src, NEW_QUOTE))
    return _claim_of(vault, "tamar-bridge"), _claim_of(vault, "traffic")


def test_newer_source_makes_a_stale_finding_with_both_quotes(
    vault: Vault, clock: FakeClock
) -> None:
    old, new = _disagreeing(vault, clock)
    report = run_lint(vault)
    stale = [f for f in report.findings if f.finding.kind == "stale"]
    assert len(stale) == 1
    finding = stale[0].finding
    assert finding.claims == [old, new]
    assert finding.subject == old
    assert [q.claim_id for q in finding.quotes] == [old, new]
    assert all(q.verified for q in finding.quotes)
    assert [q.quote for q in finding.quotes] == [OLD_QUOTE, NEW_QUOTE]
    assert "(40,000 against 45,000" in finding.message  # older first, as the sources write it
    # why it was raised: the subject they share and the fact that differs, as data and in words
    assert finding.why == {
        "subject": "Tamar Bridge Plymouth Saltash",
        "fact": "number",
        "a": "40,000",
        "b": "45,000",
    }
    assert "a changed number about Tamar Bridge Plymouth Saltash" in finding.message
    assert "«" + OLD_QUOTE + "»" in finding.quotes[0].context
    assert finding.fix == {
        "op": "supersede_claim",
        "claim": old,
        "successor": new,
        "reason": finding.fix["reason"] if finding.fix else "",
    }
    # A second run finds the same finding, not a new one.
    again = run_lint(vault)
    assert again.new == [] and [f.id for f in again.findings] == [f.id for f in report.findings]


def test_fix_plan_supersedes_the_old_claim_in_one_approval(vault: Vault, clock: FakeClock) -> None:
    old, new = _disagreeing(vault, clock)
    report = run_lint(vault, propose=True, actor="person:tester")
    # the pages also lack a link: that fix goes in a plan of its own, never mixed with one
    # that ends a claim
    assert report.fixes is not None and len(report.fixes.plans) == 2
    plans = [get_plan(vault, p) for p in report.fixes.plans]
    assert [[op.op for op in p.plan.operations] for p in plans] == [
        ["link_pages"],
        ["supersede_claim"],
    ]
    plan = plans[1]
    assert plan.status == "pending"  # a supersession always waits for a person
    result = approve(vault, plan.id, None, "person:tester")
    assert result.applied
    row = vault.db.execute(
        "SELECT status, superseded_by FROM claims WHERE id = ?", (old,)
    ).fetchone()
    assert (row[0], row[1]) == ("superseded", new)
    page = (vault.wiki_dir / "tamar-bridge.md").read_text()
    assert new in page  # the superseded claim points at its successor
    assert verify_chain(vault.db) == []
    after = run_lint(vault)
    assert not [f for f in after.findings if f.finding.kind == "stale"]
    stored = FindingStore(vault.db).get(report.findings[0].id)
    assert stored.status == "resolved"


def test_untrusted_newcomer_raises_a_contradiction_but_cannot_supersede(
    vault: Vault, clock: FakeClock
) -> None:
    old, new = _disagreeing(vault, clock, new_trust="untrusted")
    report = run_lint(vault, propose=True)
    kinds = [f.finding.kind for f in report.findings]
    assert "stale" not in kinds
    contradiction = next(f for f in report.findings if f.finding.kind == "contradiction")
    assert contradiction.finding.claims == [old, new]
    assert contradiction.finding.fix is None
    assert "less trusted source can't supersede by itself" in contradiction.finding.fix_hint
    assert report.fixes is not None
    assert contradiction.id not in report.fixes.fixed
    for plan_id in report.fixes.plans:  # only the missing link between the pages has a fix
        assert [op.op for op in get_plan(vault, plan_id).plan.operations] == ["link_pages"]
    # Even when the user asks to keep the untrusted claim, the gate refuses it (W7).
    fixes = propose_fixes(vault, [contradiction], "person:tester", {contradiction.id: new})
    if fixes.plans:
        plan = get_plan(vault, fixes.plans[0])
        assert plan.admission.admitted_ops == []
    status = vault.db.execute("SELECT status FROM claims WHERE id = ?", (old,)).fetchone()[0]
    assert status == "active"


def _finding_reply(quotes: list[dict[str, str]], kind: str = "contradiction") -> Any:
    def reply(request: ModelRequest) -> str:
        nonce = request.messages[1].content.split("Nonce: ", 1)[1].split("\n", 1)[0]
        return json.dumps(
            {
                "nonce": nonce,
                "findings": [
                    {
                        "kind": kind,
                        "message": "The two claims give different daily traffic.",
                        "claims": sorted({q["claim"] for q in quotes}),
                        "quotes": quotes,
                    }
                ],
            }
        )

    return reply


def test_model_finding_with_an_invented_quote_is_dropped(vault: Vault, clock: FakeClock) -> None:
    old, new = _disagreeing(vault, clock)
    invented = "The Tamar Bridge carries 90,000 vehicles each day."
    provider = ScriptedProvider(
        [_finding_reply([{"claim": old, "quote": OLD_QUOTE}, {"claim": new, "quote": invented}])]
    )
    report = run_lint(vault, provider)
    assert report.model_calls == 1
    model_dropped = [d for d in report.dropped if d["message"].startswith("The two claims")]
    assert len(model_dropped) == 1
    quotes = model_dropped[0]["quotes"]
    assert [q["verified"] for q in quotes] == [True, False]
    assert quotes[1]["quote"] == invented
    assert not any(f.finding.message.startswith("The two claims") for f in report.findings)
    run = vault.db.execute("SELECT dropped, detail FROM lint_runs WHERE id = ?", (report.run,))
    dropped, detail = run.fetchone()
    assert dropped == len(report.dropped)
    assert json.loads(detail)["dropped"][0]["quotes"][1]["verified"] is False
    # The request fenced the claims in the nonce and showed the quotes.
    request = provider.requests[0]
    assert OLD_QUOTE in request.messages[1].content


def test_model_finding_with_two_verified_quotes_is_kept(vault: Vault, clock: FakeClock) -> None:
    old, new = _disagreeing(vault, clock)
    provider = ScriptedProvider(
        [_finding_reply([{"claim": old, "quote": OLD_QUOTE}, {"claim": new, "quote": NEW_QUOTE}])]
    )
    report = run_lint(vault, provider)
    kept = [f for f in report.findings if f.finding.message.startswith("The two claims")]
    assert len(kept) == 1
    assert all(q.verified for q in kept[0].finding.quotes)
    assert sorted(kept[0].finding.claims) == sorted([old, new])


def test_model_finding_needs_quotes_from_two_different_claims(
    vault: Vault, clock: FakeClock
) -> None:
    old, _ = _disagreeing(vault, clock)
    same = [{"claim": old, "quote": OLD_QUOTE}, {"claim": old, "quote": "It opened in 1961."}]
    report = run_lint(vault, ScriptedProvider([_finding_reply(same)]))
    dropped = [d for d in report.dropped if d["message"].startswith("The two claims")]
    assert len(dropped) == 1
    assert "two different claims" in dropped[0]["dropped_because"]


def test_reply_without_the_nonce_is_unusable(vault: Vault, clock: FakeClock) -> None:
    _disagreeing(vault, clock)
    report = run_lint(
        vault, ScriptedProvider(['{"nonce": "wrong-nonce-000000000", "findings": []}'])
    )
    assert report.invalid_replies and "nonce" in report.invalid_replies[0]


def test_dismissed_findings_stay_dismissed(vault: Vault, clock: FakeClock) -> None:
    _disagreeing(vault, clock)
    first = run_lint(vault)
    target = first.findings[0].id
    store = FindingStore(vault.db)
    store.decide(target, "dismissed", "person:tester", "2026-12-01T00:00:00Z", "known")
    second = run_lint(vault)
    assert target not in [f.id for f in second.findings]
    assert store.get(target).status == "dismissed"
    assert any(
        row["action"] == "finding_dismissed" for row in vault.db.execute("SELECT action FROM audit")
    )


def test_a_finding_ref_is_a_literal_prefix_not_a_like_pattern(
    vault: Vault, clock: FakeClock
) -> None:
    """LIKE's wildcards in a ref match only themselves: ``f-____`` names no finding."""
    _disagreeing(vault, clock)
    target = run_lint(vault).findings[0].id
    store = FindingStore(vault.db)
    assert store.resolve_id(target[:6]) == target
    for forged in ("f-____", "____", "%f-", "f-%", "_" * len(target)):
        with pytest.raises(NotFoundError, match="no finding"):  # not "ambiguous"
            store.resolve_id(forged)


def test_duplicates_across_pages_are_reported_with_a_merge_fix(
    vault: Vault, clock: FakeClock
) -> None:
    a = add_text(
        vault, "a.md", "# A\n\nThe library opens at nine every weekday morning in winter.\n"
    )
    clock.advance(days=1)
    b = add_text(
        vault, "b.md", "# B\n\nThe library opens at nine every weekday morning in winter!\n"
    )
    text = "The library opens at nine every weekday morning in winter."
    _apply(vault, _page("library", "Library", text, a, text.removesuffix(".")))
    _apply(
        vault,
        _page(
            "winter", "Library in winter", text, b, "opens at nine every weekday morning in winter"
        ),
    )
    report = run_lint(vault)
    dup = [f for f in report.findings if f.finding.kind == "duplicate"]
    assert len(dup) == 1
    kept, dropped = _claim_of(vault, "library"), _claim_of(vault, "winter")
    assert dup[0].finding.fix is not None
    assert dup[0].finding.fix["claim"] == dropped and dup[0].finding.fix["successor"] == kept


def test_auto_lint_counts_ingests_across_restarts(tmp_path: Path, clock: FakeClock) -> None:
    from affidavit.vault import init_vault

    vault, _ = init_vault(tmp_path / "v", clock=clock)
    config = vault.config_path.read_text().replace("every_ingests = 10", "every_ingests = 3")
    vault.config_path.write_text(config)
    vault.close()
    vault = open_vault(tmp_path / "v", clock=clock)
    assert after_ingest(vault, 2) is None
    vault.close()
    vault = open_vault(tmp_path / "v", clock=clock)  # a restart keeps the count
    count = vault.db.execute("SELECT value FROM counters WHERE name = ?", (INGEST_COUNTER,))
    assert count.fetchone()[0] == 2
    report = after_ingest(vault, 1)
    assert report is not None
    trigger = vault.db.execute("SELECT trigger FROM lint_runs WHERE id = ?", (report.run,))
    assert trigger.fetchone()[0] == "auto"
    count = vault.db.execute("SELECT value FROM counters WHERE name = ?", (INGEST_COUNTER,))
    assert count.fetchone()[0] == 0
    vault.close()


def test_cli_lint_shows_quotes_and_fixes_in_one_step(
    vault: Vault, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    old, new = _disagreeing(vault, clock)
    runner = CliRunner()
    args = ["--vault", str(vault.root)]
    result = runner.invoke(main, [*args, "lint"])
    assert result.exit_code == 0, result.output
    assert "stale" in result.output
    assert "✓ claim " + old in result.output and OLD_QUOTE in result.output
    assert NEW_QUOTE in result.output
    data = json.loads(runner.invoke(main, [*args, "lint", "--json"]).output)
    stale = next(f for f in data["findings"] if f["kind"] == "stale")
    result = runner.invoke(main, [*args, "findings", "fix", "--all", "--kind", "stale"])
    assert result.exit_code == 0, result.output
    assert "Proposed fix plan" in result.output
    # a supersession is never approved in bulk: --all refuses it, the listed id shows it first
    result = runner.invoke(main, [*args, "findings", "approve", "--all"])
    assert result.exit_code != 0 and "list those findings by id" in result.output
    row = vault.db.execute("SELECT status FROM claims WHERE id = ?", (old,))
    assert row.fetchone()[0] == "active"
    result = runner.invoke(main, [*args, "findings", "approve", stale["id"]], input="y\n")
    assert result.exit_code == 0, result.output
    assert f"supersede {old}" in result.output and f"by {new}" in result.output
    row = vault.db.execute("SELECT status, superseded_by FROM claims WHERE id = ?", (old,))
    assert tuple(row.fetchone()) == ("superseded", new)
    result = runner.invoke(main, [*args, "findings", "--status", "all", "--json"])
    listed = {f["id"]: f for f in json.loads(result.output)}
    assert listed[stale["id"]]["plan_id"]


def test_ingest_runs_lint_after_every_n_sources(tmp_path: Path, clock: FakeClock) -> None:
    from affidavit.ingest.pipeline import Ingestor
    from affidavit.providers.extractive import ExtractiveProvider
    from affidavit.vault import init_vault

    vault, _ = init_vault(tmp_path / "v", clock=clock)
    config = vault.config_path.read_text().replace("every_ingests = 10", "every_ingests = 2")
    vault.config_path.write_text(config)
    vault.close()
    vault = open_vault(tmp_path / "v", clock=clock)
    (tmp_path / "a.md").write_text(OLD)
    (tmp_path / "b.md").write_text(NEW)
    first = Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(tmp_path / "a.md")])
    assert first.lint is None
    clock.advance(days=1)
    second = Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(tmp_path / "b.md")])
    assert second.lint is not None and second.totals()["lint"]["run"] == second.lint["run"]
    runs = vault.db.execute("SELECT count(*) FROM lint_runs WHERE trigger = 'auto'").fetchone()
    assert runs[0] == 1
    vault.close()


def test_lint_runs_as_a_queued_job(vault: Vault, clock: FakeClock) -> None:
    from affidavit.jobs import JobQueue, Worker
    from affidavit.jobs.payloads import LintPayload

    _disagreeing(vault, clock)
    job = JobQueue(vault).submit(LintPayload(propose=True), requested_by="person:tester")
    done = Worker(vault.root, "test-worker").run_once()
    assert done is not None and done.id == job.id
    finished = JobQueue(vault).get(job.id)
    assert finished.status == "done", finished
    assert finished.result is not None and finished.result["counts"].get("stale") == 1
    assert finished.result["fixes"]["plans"]
    trigger = vault.db.execute("SELECT trigger FROM lint_runs ORDER BY id DESC LIMIT 1").fetchone()
    assert trigger[0] == "job"


def test_a_page_naming_another_without_linking_gets_a_missing_link(
    vault: Vault, clock: FakeClock
) -> None:
    src = add_text(
        vault,
        "plymouth.md",
        "# Plymouth\n\nPlymouth is a port city in Devon. The Tamar Bridge links Plymouth to "
        "Cornwall across the river.\n",
    )
    bridge = add_text(vault, "bridge.md", OLD)
    _apply(vault, _page("tamar-bridge", "Tamar Bridge", OLD_QUOTE, bridge, OLD_QUOTE))
    quote = "The Tamar Bridge links Plymouth to Cornwall across the river."
    _apply(vault, _page("plymouth", "Plymouth", quote, src, quote))
    report = run_lint(vault)
    missing = [f for f in report.findings if f.finding.kind == "missing_link"]
    # Each page's claim names the other (the bridge runs "between Plymouth and Saltash").
    subjects = {f.finding.subject: f for f in missing}
    assert sorted(subjects) == ["plymouth->tamar-bridge", "tamar-bridge->plymouth"]
    shown = subjects["plymouth->tamar-bridge"].finding.quotes[0]
    assert shown.verified and shown.quote == quote
    fixes = propose_fixes(vault, missing, "person:tester")
    approve(vault, fixes.plans[0], None, "person:tester")
    links = vault.db.execute("SELECT src, dst FROM links ORDER BY src").fetchall()
    assert [tuple(row) for row in links] == [
        ("plymouth", "tamar-bridge"),
        ("tamar-bridge", "plymouth"),
    ]
    again = run_lint(vault)
    assert not [f for f in again.findings if f.finding.kind == "missing_link"]


def test_ingesting_a_new_version_proposes_the_supersession_once(
    tmp_path: Path, vault: Vault, clock: FakeClock
) -> None:
    from affidavit.ingest.pipeline import Ingestor
    from affidavit.providers.extractive import ExtractiveProvider

    (tmp_path / "tamar.md").write_text(OLD)
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run(
        [str(tmp_path / "tamar.md")], "trusted"
    )
    old = vault.db.execute(
        "SELECT id FROM claims WHERE text LIKE '%40,000%' AND page_slug != ''"
    ).fetchone()[0]
    clock.advance(days=365)
    (tmp_path / "tamar.md").write_text(OLD.replace("40,000", "45,000"))  # its next version
    report = Ingestor(vault, ExtractiveProvider(), apply_now=True).run(
        [str(tmp_path / "tamar.md")], "trusted"
    )
    # a version that states no version or date of its own: its changes are the lineage's to
    # propose, in its batched plans; the supersession pass does not propose them again
    assert report.supersessions is None
    lineage = report.sources[0].lineage
    assert lineage is not None and lineage["supersede_proposals"] >= 1
    ops = [
        (plan_id, o)
        for plan_id, text in vault.db.execute(
            "SELECT id, plan_json FROM plans WHERE status = 'pending' AND origin LIKE 'lineage:%'"
        )
        for o in json.loads(text)["operations"]
        if o.get("claim") == old
    ]
    assert len(ops) == 1
    plan_id, op = ops[0]
    assert op["op"] == "supersede_claim"
    assert "40,000" in op["reason"] and "45,000" in op["reason"]  # both versions' words
    # no other proposal names the claim a second time
    named = [
        o["claim"]
        for (text,) in vault.db.execute("SELECT plan_json FROM plans WHERE status = 'pending'")
        for o in json.loads(text)["operations"]
        if "claim" in o
    ]
    assert named.count(old) == 1
    approve(vault, plan_id, None, "person:tester")
    status = vault.db.execute("SELECT status FROM claims WHERE id = ?", (old,)).fetchone()[0]
    assert status == "superseded"


def test_cli_lint_async_queues_a_job(vault: Vault, clock: FakeClock) -> None:
    from affidavit.jobs import JobQueue, Worker

    _disagreeing(vault, clock)
    runner = CliRunner()
    result = runner.invoke(main, ["--vault", str(vault.root), "lint", "--async", "--json"])
    assert result.exit_code == 0, result.output
    job_id = json.loads(result.output)["id"]
    assert Worker(vault.root, "test-worker").run_once() is not None
    finished = JobQueue(vault).get(job_id)
    assert finished.status == "done" and finished.result is not None
    assert finished.result["counts"]["stale"] == 1


def test_claims_on_pages_about_different_named_subjects_are_not_compared(
    vault: Vault, clock: FakeClock
) -> None:
    quote_h = "As of March 14 there were 44 confirmed cases in Hawaii."
    quote_i = "As of March 14 there were 21,157 confirmed cases in Italy."
    hawaii = add_text(vault, "hawaii.md", f"# Hawaii\n\n{quote_h}\n")
    clock.advance(days=1)
    italy = add_text(vault, "italy.md", f"# Italy\n\n{quote_i}\n")
    _apply(vault, _page("hawaii", "Confirmed cases in Hawaii", quote_h, hawaii, quote_h))
    _apply(vault, _page("italy", "Confirmed cases in Italy", quote_i, italy, quote_i))
    report = run_lint(vault)
    # The titles share half their words, but name different places: not the same subject.
    assert not [f for f in report.findings if f.finding.kind in ("stale", "contradiction")]
