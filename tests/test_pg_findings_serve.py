"""Lint findings on the PostgreSQL daemon (issue 26; service/pg_findings.py): the findings a lint
job stored, listed and shown with quotes that verify against their sources; a dismissal kept in
the database (row and audit entry together) and by later lints; a fix proposed as a pending plan
in the inbox, never applied, even for a person the policy would apply at once. The attacker's
tests: a token of another vault of the same database, a read-only token deciding, a forged or
wildcard finding id, a NUL in an id or a note."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient

from affidavit.server.pg_app import create_pg_app
from affidavit.server.pg_registry import PgRegistry
from affidavit.service.pg_findings import PgFindings

from .test_pg_after_ingest import NO_PASS, V1, V2, Pass, sent, two_versions

pytestmark = pytest.mark.xdist_group("postgres")

LINKS = ("orphan_page", "missing_link")
"""Found too since PostgreSQL's lint finds them (as SQLite's): every page an ingest makes is an
orphan until linked, and the two versions' pages share a title; these tests are about the other
kinds (the link kinds: tests/test_pg_lint_links.py)."""

LINT = "/lint/findings"


class Desk(Pass):
    """Pass's vault ``team`` and a second vault ``other`` in the same database, with a token."""

    def __init__(self, url: str) -> None:
        super().__init__(url, NO_PASS)
        self.client.__exit__(None, None, None)  # reopen the daemon: it serves both vaults
        self.storage.create_vault("other", "nobody-here")
        self.registry = PgRegistry.open(url, NO_PASS)
        self.client = TestClient(create_pg_app(self.registry))
        self.client.__enter__()
        other = self.registry.get("other").service
        self.tokens["other"] = other.create_token("approve", timedelta(days=1), "x", "test")[1]

    def lint(self, propose: bool = False) -> dict[str, Any]:
        job = self.call("POST", "/jobs", "propose", json={"kind": "lint", "propose": propose})
        assert job.status_code == 202, job.text
        assert self.worker().run(drain=True) == 1
        done = self.job(job.json()["id"])
        assert done["status"] == "done", done
        return done

    def listed(self, role: str = "read", **params: Any) -> list[dict[str, Any]]:
        """The findings listed; without ``kind``, all but the link kinds (:data:`LINKS`)."""
        got = self.call("GET", LINT, role, params=params)
        assert got.status_code == 200, got.text
        listed = list(got.json())
        if "kind" in params:
            return listed
        return [f for f in listed if f["finding"]["kind"] not in LINKS]

    def decide(self, ref: str, role: str = "approve", **body: Any) -> Any:
        return self.call("POST", f"{LINT}/{ref}/decision", role, json=body)


@pytest.fixture
def desk(pg_url: str) -> Iterator[Desk]:
    made = Desk(pg_url)
    yield made
    made.close()


def contradiction(desk: Desk) -> dict[str, Any]:
    """Two sources of different origins disagree; a lint job records the contradiction."""
    desk.submit(sent(V1, "harbour.md"))
    desk.submit(sent(V2, "harbour-guide.md"))
    assert desk.worker().run(drain=True) == 2
    desk.lint()
    (found,) = desk.listed()
    return found


def test_list_and_show_the_findings_a_lint_job_stored_with_quotes_that_verify(
    desk: Desk,
) -> None:
    found = contradiction(desk)
    finding = found["finding"]  # SQLite's shape: the finding, its id and status around it
    assert finding["kind"] == "contradiction" and found["status"] == "open"
    assert finding["origin"] == "extractive" and len(finding["claims"]) == 2
    texts = {desk.storage.source_text("team", s["id"]) for s in desk.call(
        "GET", "/sources", "read").json()}  # fmt: skip
    assert len(finding["quotes"]) == 2
    for quote in finding["quotes"]:
        assert quote["verified"] and quote["reason"] == ""
        # the quote is in its source's text, at the offsets the finding names
        text = desk.storage.source_text("team", quote["source_id"])
        assert text in texts and text[quote["start"] : quote["end"]] == quote["quote"]
    shown = desk.call("GET", f"{LINT}/{found['id'][:8]}", "read")
    assert shown.status_code == 200 and shown.json() == found
    # the filters: by kind and by status
    assert desk.listed(kind="stale") == [] and desk.listed(status="dismissed") == []
    assert [f["id"] for f in desk.listed(kind="contradiction", status="open")] == [found["id"]]
    assert desk.call("GET", LINT, "read", params={"kind": "nonsense"}).status_code == 422


def test_a_dismissal_persists_with_its_audit_entry_and_later_lints_keep_it(desk: Desk) -> None:
    found = contradiction(desk)
    done = desk.decide(found["id"], status="dismissed", note="both right, different years")
    assert done.status_code == 200, done.text
    assert done.json()["status"] == "dismissed" and done.json()["decided_by"].startswith("token:")
    row = desk.q("SELECT status, note, decided_by FROM {s}.findings WHERE id = %s", found["id"])
    assert row[0]["status"] == "dismissed" and row[0]["note"] == "both right, different years"
    (entry,) = [e for e in desk.storage.audit("team") if e.action == "finding_dismissed"]
    assert found["id"] in entry.detail and desk.storage.verify_audit("team") == []
    assert desk.listed() == []
    assert [f["id"] for f in desk.listed(status="dismissed")] == [found["id"]]
    desk.lint()  # found again: it stays dismissed
    assert desk.listed() == [] and desk.listed(status="dismissed")[0]["status"] == "dismissed"
    reopened = desk.decide(found["id"][:10], status="open")
    assert reopened.status_code == 200 and [f["id"] for f in desk.listed()] == [found["id"]]


def test_proposing_a_fix_puts_a_pending_plan_in_the_inbox_never_applies_it(desk: Desk) -> None:
    two_versions(desk)
    assert desk.worker().run(drain=True) == 1
    desk.lint()  # without propose: the stale finding has no plan yet
    (stale,) = desk.listed()
    assert stale["finding"]["kind"] == "stale" and stale["plan_id"] is None
    assert desk.lint_plans() == []
    active = desk.q("SELECT count(*) AS n FROM {s}.claims WHERE status = 'active'")[0]["n"]
    # as a person the policy (auto_apply trusted) would apply a plan of at once: it waits
    report = PgFindings(desk.registry.get("team").service).propose_fixes([stale["id"]], {}, "ann")
    (plan_id,) = report.plans
    assert report.fixed == {stale["id"]: plan_id}
    (plan,) = desk.lint_plans()
    assert plan["id"] == plan_id and plan["status"] == "pending"
    assert desk.listed()[0]["plan_id"] == plan_id
    assert desk.q("SELECT count(*) AS n FROM {s}.claims WHERE status = 'active'")[0]["n"] == active
    inbox = desk.call("GET", "/plans", "read").json()
    assert [p["id"] for p in inbox] == [plan_id] and inbox[0]["status"] == "pending"
    # over the API, again: none twice for one finding (its plan is pending)
    again = desk.call("POST", "/lint/fixes", "propose", json={"findings": [stale["id"]]})
    assert again.status_code == 200, again.text
    assert again.json()["plans"] == [] and stale["id"] in again.json()["skipped"]
    assert len(desk.lint_plans()) == 1


def test_a_contradiction_fix_over_the_api_keeps_the_claim_named(desk: Desk) -> None:
    found = contradiction(desk)
    kept, dropped = found["finding"]["claims"]
    wrong = desk.call("POST", "/lint/fixes", "propose",
                      json={"findings": [found["id"]], "keep": {found["id"]: "c-" + "0" * 16}})  # fmt: skip
    assert wrong.status_code == 409 and desk.lint_plans() == [], wrong.text
    done = desk.call("POST", "/lint/fixes", "propose",
                     json={"findings": [found["id"]], "keep": {found["id"]: kept}})  # fmt: skip
    assert done.status_code == 200, done.text
    (plan_id,) = done.json()["plans"]
    (plan,) = desk.lint_plans()
    assert plan["id"] == plan_id and plan["status"] == "pending"
    assert f'"claim":"{dropped}"' in plan["plan_json"]


def test_another_vaults_token_is_refused_on_every_findings_route(desk: Desk) -> None:
    found = contradiction(desk)
    for method, path, body in [
        ("GET", LINT, None),
        ("GET", f"{LINT}/{found['id']}", None),
        ("POST", f"{LINT}/{found['id']}/decision", {"status": "dismissed"}),
        ("POST", "/lint/fixes", {"findings": [found["id"]]}),
    ]:
        got = desk.call(method, path, "other", json=body)
        assert got.status_code == 403, (path, got.text)
    assert desk.listed()[0]["status"] == "open" and desk.lint_plans() == []


def test_a_read_only_token_cannot_decide_or_propose(desk: Desk) -> None:
    found = contradiction(desk)
    assert desk.decide(found["id"], "read", status="dismissed").status_code == 403
    assert desk.decide(found["id"], "propose", status="dismissed").status_code == 403
    fixes = desk.call("POST", "/lint/fixes", "read", json={"findings": [found["id"]]})
    assert fixes.status_code == 403
    assert desk.listed()[0]["status"] == "open" and desk.lint_plans() == []
    assert not [e for e in desk.storage.audit("team") if e.action.startswith("finding_")]


def test_a_forged_finding_id_is_404_and_changes_nothing(desk: Desk) -> None:
    found = contradiction(desk)
    forged = ["f-0000000000000000", "f-' OR 1=1 --", "f-____", "____", "%%%%f-"]
    for ref in forged:
        assert desk.call("GET", f"{LINT}/{ref}", "read").status_code == 404, ref
        assert desk.decide(ref, status="dismissed").status_code == 404, ref
        fixes = desk.call("POST", "/lint/fixes", "propose", json={"findings": [ref]})
        assert fixes.status_code == 404, ref
    nul = desk.decide(found["id"], status="dismissed", note="a\x00b")
    assert nul.status_code == 409 and "NUL" in nul.json()["error"]["message"]
    assert desk.call("GET", f"{LINT}/f-%00abc", "read").status_code == 409
    assert desk.listed()[0]["status"] == "open" and desk.lint_plans() == []
    assert not [e for e in desk.storage.audit("team") if e.action.startswith("finding_")]
