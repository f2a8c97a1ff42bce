"""The inbox as a change list and the desk's several-plan approvals, without a browser (the
daemon's app in-process over real vaults): what each plan does, its origin, verdict and
dependencies, the filters and orders, both versions of a supersession and a retraction's blast
radius on the plan, jobs' real counts — and the refusals of forged or stale bulk approvals."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from affidavit import inbox
from affidavit.jobs.models import Job
from affidavit.lint.runner import run_lint
from affidavit.service import changes
from affidavit.service import review as service_review
from affidavit.vault import Vault, open_vault
from affidavit.web.changes import fingerprint
from affidavit.web.upkeep import job_progress
from tests.conftest import FakeClock
from tests.test_lint_findings import _disagreeing
from tests.web import BASE, desk_client, login_owner
from tests.web.day import AGENT, DEPENDENT, LINT, SUPPORTED, WAITING, Day, build_day

SAME = {"Origin": BASE}


def _csrf(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found is not None
    return found.group(1)


def _shown(html: str) -> list[str]:
    """The plan ids the inbox lists, in its order."""
    return re.findall(
        r'<li class="item change[^"]*">\s*<p class="does"><a class="open" '
        r'href="/web/[^/]+/plans/([0-9a-f]+)"',
        html,
    )


@pytest.fixture(scope="module")
def day(tmp_path_factory: pytest.TempPathFactory) -> Day:
    return build_day(tmp_path_factory.mktemp("day") / "day")


def test_each_plan_says_what_it_does_where_it_came_from_and_what_it_follows(day: Day) -> None:
    with open_vault(day.root) as vault:
        listed = {c.plan.id: c for c in changes.change_list(vault)}
        order = [c.plan.id for c in changes.change_list(vault)]
    assert len(listed) == 50
    for n, plan_id in enumerate(day.waiting):
        change = listed[plan_id]
        assert change.does == f"creates trade-{n} (+1)"
        assert change.kind == "ingest" and change.verdict == "waits"
        assert change.origin == f"ingest of ledger.md, part {n + 1}"
        assert change.sources == ["ledger.md"]
        assert [w.part for w in change.plan.waiting] == ["title"]
        assert "'trade'" in change.plan.waiting[0].why
    for n, plan_id in enumerate(day.dependent):
        change = listed[plan_id]
        creator = day.supported[n]
        assert change.does == f"adds 1 claim to entry-{n}"
        assert [(d.plan_id, d.page, d.agent) for d in change.after] == [
            (creator, f"entry-{n}", False)
        ]
        assert listed[creator].before == [plan_id]
        assert order.index(creator) < order.index(plan_id)  # part 1 before part 2
    assert {listed[p].kind for p in day.lint} == {"lint"}
    assert listed[day.lint[0]].origin == "a lint finding's fix"
    assert listed[day.lint[0]].does == "links ledger-a → ledger-b"
    assert {listed[p].kind for p in day.agent} == {"agent"}


def test_the_inbox_filters_and_orders(day: Day) -> None:
    with desk_client(day.root) as (client, desk, _):
        login_owner(client, desk)
        everything = _shown(client.get("/web/day/inbox").text)
        assert sorted(everything) == sorted(day.plans)
        for query, expected in [
            ("kind=lint", day.lint),
            ("kind=agent", day.agent),
            ("verdict=waits", day.waiting),
            ("verdict=supported", [*day.supported, *day.dependent, *day.lint, *day.agent]),
            ("author=claude+via+mcp", day.agent),
            ("source=ledger.md&kind=ingest", [*day.waiting, *day.supported, *day.dependent]),
            ("source=no-such-file.md", []),
        ]:
            shown = _shown(client.get(f"/web/day/inbox?{query}").text)
            assert sorted(shown) == sorted(expected), query
        newest = _shown(client.get("/web/day/inbox?order=newest").text)
        assert sorted(newest) == sorted(everything) and newest != everything
        for n, plan_id in enumerate(day.dependent):  # newest first, yet after what it needs
            assert newest.index(day.supported[n]) < newest.index(plan_id)
        html = client.get("/web/day/inbox?kind=agent").text
        assert "Approve what is supported" not in html  # an agent's plan is never in bulk
        assert "2 of 50 pending plan(s) shown" in html
    assert WAITING + SUPPORTED + DEPENDENT + LINT + AGENT == 50


def test_a_forged_or_stale_bulk_approval_is_refused_and_writes_nothing(day: Day) -> None:
    with desk_client(day.root) as (client, desk, _):
        login_owner(client, desk)
        html = client.get("/web/day/approve-supported?kind=lint").text
        seen = re.search(r'name="seen" value="([^"]+)"', html)
        assert seen is not None
        form = {"csrf": _csrf(html), "seen": "0" * 24, "plan": day.lint}
        stale = client.post("/web/day/approve-supported", data=form, headers=SAME)
        assert stale.status_code == 409 and "Changed since you opened it" in stale.text
        with open_vault(day.root) as vault:  # the agent's plan with its true fingerprint
            forged = fingerprint(vault, day.agent)
        form = {"csrf": _csrf(html), "seen": forged, "plan": day.agent}
        agent = client.post("/web/day/approve-supported", data=form, headers=SAME)
        assert agent.status_code == 409 and "a bulk approval never takes it" in agent.text
        assert "Changed since you opened it" not in agent.text
        no_csrf = {"seen": seen.group(1), "plan": day.lint}
        assert client.post("/web/day/approve-supported", data=no_csrf).status_code == 403
    with open_vault(day.root) as vault:
        statuses = {r.id: r.status for r in inbox.list_plans(vault, ("pending", "applied"))}
    assert all(statuses[p] == "pending" for p in day.plans)


def test_approving_together_refuses_a_stale_screen(day: Day) -> None:
    part2 = day.dependent[0]
    with desk_client(day.root) as (client, desk, _):
        login_owner(client, desk)
        html = client.get(f"/web/day/plans/{part2}").text
        assert "Goes after 1 other plan(s)" in html
        assert f"Approve {day.supported[0][:12]} and this plan together" in html
        form = {"csrf": _csrf(html), "seen": "f" * 24}
        refused = client.post(f"/web/day/plans/{part2}/approve-together", data=form, headers=SAME)
        assert refused.status_code == 409 and "Changed since you opened it" in refused.text
    with open_vault(day.root) as vault:
        assert inbox.get_plan(vault, part2).status == "pending"
        assert inbox.get_plan(vault, day.supported[0]).status == "pending"


def test_a_supersession_shows_both_versions_and_a_retraction_its_blast_radius(
    vault: Vault, clock: FakeClock
) -> None:
    old, new = _disagreeing(vault, clock)
    (stale,) = [f for f in run_lint(vault).findings if f.finding.kind == "stale"]
    plans, _ = service_review.propose_finding_fix(vault, stale.id, "owner")
    source = vault.db.execute("SELECT id FROM sources ORDER BY added_at LIMIT 1").fetchone()[0]
    done, _ = service_review.source_retraction(vault, source, "withdrawn", "owner", dry_run=False)
    assert done.proposal is not None
    retraction = done.proposal.plan_id
    texts = dict(vault.db.execute("SELECT id, text FROM claims").fetchall())
    root = vault.root
    vault.close()
    with desk_client(root) as (client, desk, _):
        login_owner(client, desk)
        inbox_html = client.get("/web/vault/inbox").text
        assert "supersedes 1 claim" in inbox_html and "a lint finding&#39;s fix" in inbox_html
        assert f"retracts source {source[:12]}" in inbox_html
        fix = client.get(f"/web/vault/plans/{plans[0]}").text
        assert "What approving takes out of the wiki" in fix
        takes = fix[fix.index("What approving takes out") :]
        assert "goes:" in takes and "becomes:" in takes
        assert texts[old].replace("'", "&#39;") in takes
        assert texts[new].replace("'", "&#39;") in takes
        retract = client.get(f"/web/vault/plans/{retraction}").text
        assert "What approving takes out of the wiki" in retract
        assert "retract 1 claim(s) whose only evidence it is" in retract


def test_a_finished_job_shows_what_it_counted_never_0_of_0() -> None:
    base = {
        "id": "j1",
        "kind": "ingest",
        "queued": True,
        "payload": {},
        "requested_by": "owner",
        "created_at": "2026-01-01T00:00:00Z",
    }
    done = Job.model_validate(
        {
            **base,
            "status": "done",
            "result": {
                "sources": [{"name": f"s{n}"} for n in range(57)],
                "totals": {"chunks": 60, "applied": 55, "pending": 5},
            },
        }
    )
    assert job_progress(done) == "57 source(s), 60 chunks, 55 applied, 5 pending"
    running = Job.model_validate({**base, "status": "running"})
    assert job_progress(running) == "started; no progress reported yet"
    reported = Job.model_validate(
        {**base, "status": "running", "progress": {"done": 3, "total": 9, "message": "x"}}
    )
    assert job_progress(reported) == "3/9 x"


def test_lint_filters_by_kind_and_audit_is_newest_first(vault: Vault, clock: FakeClock) -> None:
    _disagreeing(vault, clock)
    run_lint(vault)
    root: Path = vault.root
    vault.close()
    with desk_client(root) as (client, desk, _):
        login_owner(client, desk)
        stale = client.get("/web/vault/lint?kind=stale").text
        assert "Findings 1–1 of 1 open stale." in stale
        assert (
            client.get("/web/vault/lint?kind=stale&severity=error").text.count(
                'class="finding item"'
            )
            == 0
        )
        audit = client.get("/web/vault/audit").text
        seqs = [int(s) for s in re.findall(r"<tr><td>(\d+)</td>", audit)]
        assert seqs and seqs == sorted(seqs, reverse=True)
        older = client.get(f"/web/vault/audit?before={seqs[-1]}").text
        assert [int(s) for s in re.findall(r"<tr><td>(\d+)</td>", older)] == list(
            range(seqs[-1] - 1, 0, -1)
        )


def test_a_plan_that_no_longer_fits_is_refused_with_the_reject_the_desk_offers(
    vault: Vault, clock: FakeClock
) -> None:
    """The retraction's blast radius grew after it was proposed (W5): the approval is refused
    with the door's reason — not "changed since you opened it" — and the desk offers the reject,
    which records that reason."""
    from tests.test_lint_findings import _apply, _page

    _disagreeing(vault, clock)
    old_src = vault.db.execute("SELECT id FROM sources ORDER BY added_at LIMIT 1").fetchone()[0]
    done, _ = service_review.source_retraction(vault, old_src, "withdrawn", "owner", dry_run=False)
    assert done.proposal is not None
    plan_id = done.proposal.plan_id
    root = vault.root
    with desk_client(root) as (client, desk, _):
        login_owner(client, desk)
        html = client.get(f"/web/vault/plans/{plan_id}").text
        seen = re.search(r'name="seen" value="([^"]+)"', html)
        assert seen is not None
        text = "The Tamar Bridge opened in 1961."
        _apply(
            vault, _page("opening", "The Tamar Bridge opening", text, old_src, "It opened in 1961.")
        )
        form = {"csrf": _csrf(html), "seen": seen.group(1), "action": "all"}
        refused = client.post(f"/web/vault/plans/{plan_id}/approve", data=form, headers=SAME)
        assert refused.status_code == 409
        assert "<h1>Not approved</h1>" in refused.text
        assert "Changed since you opened it" not in refused.text
        assert "would now retract 1 claim(s) it didn&#39;t when it was proposed" in refused.text
        offer = dict(re.findall(r'name="(csrf|seen|reason)" value="([^"]*)"', refused.text))
        assert refused.text.count('id="offer-form"') == 1
        rejected = client.post(
            f"/web/vault/plans/{plan_id}/reject",
            data={k: v.replace("&#39;", "'").replace("&#34;", '"') for k, v in offer.items()},
            headers=SAME,
        )
        assert rejected.status_code == 200
    record = inbox.get_plan(vault, plan_id)
    assert record.status == "rejected"
    assert record.reason.startswith("no longer fits the wiki: plan ")
