"""The deterministic lint checks a lint job runs on a PostgreSQL vault (issue 26, jobs/pg_checks):
SQLite's own check functions over the vault's schema — a page left with no active claim is an
``empty_page`` finding, a pending plan about to lapse a ``plan_expiring`` one — recorded in the
lint run as a folder's lint records them, and resolved by the next run once the problem is gone.
Before, a lint job on PostgreSQL ran none of them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from affidavit.config import Config

from .test_pg_after_ingest import V1, Pass, sent

pytestmark = pytest.mark.xdist_group("postgres")

CHECKING = Config({"policy.auto_apply": "trusted", "lint.every_ingests": "0",
                   "ingest.propose_supersessions": False,
                   "lint.expiring_hours": "1000"})  # fmt: skip
MILL = "# The mill\n\nThe tide mill at Woodbridge was built in 1793 and ground corn until 1957.\n"


@pytest.fixture
def team(pg_url: str) -> Iterator[Pass]:
    made = Pass(pg_url, CHECKING)
    yield made
    made.close()


def checks(team: Pass) -> list[dict[str, Any]]:
    """The checks' findings but ``orphan_page`` (every page an ingest makes is one until
    linked: tests/test_pg_lint_links.py)."""
    return team.q("SELECT kind, subject, status, message FROM {s}.findings "
                  "WHERE origin = 'check' AND kind != 'orphan_page' ORDER BY kind, subject")  # fmt: skip


def lint(team: Pass) -> dict[str, Any]:
    job = team.jobs.enqueue("team", {"kind": "lint"}, "ann")
    assert team.worker().run(drain=True) == 1
    done = team.job(job)
    assert done["status"] == "done", done
    return dict(done["result"])


def test_empty_pages_and_expiring_plans_are_found_and_resolved(team: Pass) -> None:
    team.submit(sent(V1))
    assert team.worker().run(drain=True) == 1
    service = team.registry.get("team").service
    slug = min(str(r["slug"]) for r in team.q("SELECT slug FROM {s}.pages WHERE slug != ''"))
    claims = [str(r["id"]) for r in team.q(
        "SELECT id FROM {s}.claims WHERE status = 'active' AND page_slug = %s", slug)]  # fmt: skip
    retract = {"nonce": service.new_nonce(1).nonce,
               "operations": [{"op": "retract_claim", "claim": c, "reason": "wrong"}
                              for c in claims]}  # fmt: skip
    out = service.propose(retract, "ann", "cli")
    if out.status == "pending":
        service.approve(out.plan_id, None, "ann")
    mill = [{"name": "mill.md", "text": MILL, "trust": "semi-trusted"}]
    team.submit(mill, role="propose")  # an agent's job: its plan waits
    assert team.worker().run(drain=True) == 1
    (pending,) = [str(r["id"]) for r in team.q("SELECT id FROM {s}.plans WHERE status = 'pending'")]
    result = lint(team)
    assert result["checks"] == ["broken_link", "orphan_page", "empty_page", "source_tampered",
                                "evidence_unverified", "unsupported_claim", "plan_expiring"]  # fmt: skip
    found = checks(team)
    assert [(f["kind"], f["subject"], f["status"]) for f in found] == [
        ("empty_page", slug, "open"),
        ("plan_expiring", pending, "open"),
    ]
    assert found[0]["message"] == (
        f"page '{slug}' has no active claims ({len(claims)} claim(s) in its history, none active)"
    )
    assert f"pending plan {pending[:12]} by " in found[1]["message"]
    orphans = result["counts"].pop("orphan_page")  # the emptied page: linked from none
    assert orphans == 1 and result["new"] == 2 + orphans
    assert result["counts"] == {"empty_page": 1, "plan_expiring": 1}
    # the plan decided, the next lint resolves its finding; the empty page stays, not doubled
    service.reject(pending, "not now", "ann")
    again = lint(team)
    assert [(f["kind"], f["status"]) for f in checks(team)] == [
        ("empty_page", "open"),
        ("plan_expiring", "resolved"),
    ]
    assert again["new"] == 0 and again["resolved"] == 1
