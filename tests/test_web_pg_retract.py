"""Retracting a source on the web desk over a PostgreSQL vault (issue 26), as on a folder's desk:
the source's screen shows its blast radius, the form proposes one ``retract_source`` plan that
waits in the inbox, and a person's approval takes it out through the PostgreSQL door. The
attacker's requests — a reader's session, a forged or missing CSRF token, another vault's source
id, another vault's token — each refused with nothing proposed and the source still active."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from tests.conftest import claim
from tests.web import BASE, form_values

pytestmark = pytest.mark.xdist_group("postgres")

pytest.importorskip("psycopg")

from .test_web_pg import NOW, Desk, _get  # noqa: E402

LEAFLET = "The museum opens at nine on weekdays.\nEntry to the museum is free on Sundays.\n"


@pytest.fixture(scope="module")
def desk(pg_url: str) -> Iterator[Desk]:
    made = Desk(pg_url)
    with TestClient(made.app, base_url=BASE):  # the app's lifespan: the pool closes after
        yield made


def _leaflet(desk: Desk) -> str:
    """A source whose only claim is on page ``museum`` (applied): retracting it takes it out."""
    source = desk.team.storage.add_source(
        "team", LEAFLET.encode(), origin="/test/leaflet.md", name="leaflet.md",
        added_at=NOW, media_type="text/markdown", trust="trusted",
    )  # fmt: skip
    text = "The museum opens at nine on weekdays."
    page = {"op": "create_page", "slug": "museum", "title": "Museum", "summary": text,
            "claims": [claim(text, source, text.rstrip("."))]}  # fmt: skip
    desk.team.approve(desk.propose(page), None, "ann")
    return source


def _plans(desk: Desk) -> set[str]:
    with desk.team.storage.pool.connection() as conn:
        return {str(r["id"]) for r in conn.execute("SELECT id FROM v_team.plans").fetchall()}


def test_retracting_a_source_is_a_plan_a_person_approves(desk: Desk) -> None:
    source = _leaflet(desk)
    owner = desk.client()
    html = _get(owner, f"/web/team/sources/{source}")
    assert "Blast radius" in html and "retract 1 claim(s) whose only evidence it is" in html
    assert "museum" in html and f"/web/team/sources/{source}/retract" in html
    before = _plans(desk)
    csrf = re.search(r'name="csrf" value="([^"]+)"', html)
    assert csrf is not None
    proposed = owner.post(
        f"/web/team/sources/{source}/retract",
        data={"csrf": csrf[1], "reason": "the leaflet was withdrawn"},
        follow_redirects=False,
    )
    assert proposed.status_code == 303, proposed.text
    (plan_id,) = _plans(desk) - before
    assert proposed.headers["location"] == f"/web/team/plans/{plan_id}"
    assert desk.status(plan_id) == "pending"  # nothing leaves the wiki without a person
    assert desk.team.get_source(source).status == "active"
    assert "The museum opens at nine" in _get(owner, "/web/team/pages/museum")
    shown = _get(owner, f"/web/team/plans/{plan_id}")
    assert "What approving takes out of the wiki" in shown
    assert "retract 1 claim(s) whose only evidence it is" in shown
    assert "the leaflet was withdrawn" in shown
    fields = form_values(shown, "approve-form")
    done = owner.post(
        f"/web/team/plans/{plan_id}/approve",
        data={**fields, "action": "all"},
        follow_redirects=False,
    )
    assert done.status_code == 303, done.text
    assert desk.status(plan_id) == "applied"
    assert desk.team.get_source(source).status == "retracted"
    assert [a for a in desk.audit() if a[1] == plan_id].count(("applied", plan_id)) == 1
    page = desk.team.get_page("museum", with_markdown=False)
    assert all(c.status != "active" for c in page.claims)
    # a retracted source has no radius, no form, and a second retraction is refused
    again = _get(owner, f"/web/team/sources/{source}")
    assert "Blast radius" not in again and "/retract" not in again
    refused = owner.post(
        f"/web/team/sources/{source}/retract", data={"csrf": csrf[1], "reason": "again"}
    )
    assert refused.status_code == 409 and "retracted already" in refused.text
    assert _plans(desk) - before == {plan_id}


def test_the_attackers_retractions_propose_nothing(desk: Desk) -> None:
    source = desk.source  # lighthouse.md, cited by the page eddystone
    before = _plans(desk)
    url = f"/web/team/sources/{source}/retract"
    # a reader's session: no form, and a post with its own valid CSRF token is refused
    reader = desk.client(desk.tokens["read"])
    html = _get(reader, f"/web/team/sources/{source}")
    assert "Blast radius" in html and "/retract" not in html
    csrf = re.search(r'name="csrf" value="([^"]+)"', html)
    assert csrf is not None
    response = reader.post(url, data={"csrf": csrf[1], "reason": "x"})
    assert response.status_code == 403 and "needs the propose role" in response.text
    # the owner's session with a forged, a missing CSRF token, or from another origin
    owner = desk.client()
    good = form_values(_get(owner, "/web/team/search"), "ask-form")["csrf"]
    for headers, data in [
        ({}, {"csrf": "forged", "reason": "x"}),
        ({}, {"reason": "x"}),
        ({"Origin": "http://evil.example"}, {"csrf": good, "reason": "x"}),
        ({"Sec-Fetch-Site": "cross-site"}, {"csrf": good, "reason": "x"}),
    ]:
        response = owner.post(url, data=data, headers=headers)
        assert response.status_code == 403, (headers, data, response.text)
    # another vault's source through this vault: not a source of this vault
    (ferry,) = desk.other.list_sources()
    response = owner.post(
        f"/web/team/sources/{ferry.id}/retract", data={"csrf": good, "reason": "x"}
    )
    assert response.status_code == 404, response.text
    assert desk.other.get_source(ferry.id).status == "active"
    # another vault's approve token: this vault is not there for it
    stranger = desk.client(desk.other_approve)
    theirs = re.search(r'name="csrf" value="([^"]+)"', _get(stranger, "/web/other/search"))
    assert theirs is not None
    response = stranger.post(url, data={"csrf": theirs[1], "reason": "x"})
    assert response.status_code == 404 and "you have no vault" in response.text
    # no session at all
    anonymous = TestClient(desk.app, base_url=BASE)
    assert anonymous.post(url, data={"csrf": good, "reason": "x"}).status_code == 401
    assert _plans(desk) == before
    assert desk.team.get_source(source).status == "active"


def test_a_propose_token_proposes_a_retraction_that_waits(desk: Desk) -> None:
    """An agent's (a token's) retraction is proposed as on a folder's desk, and waits."""
    proposer = desk.client(desk.tokens["propose"])
    html = _get(proposer, f"/web/team/sources/{desk.source}")
    csrf = re.search(r'name="csrf" value="([^"]+)"', html)
    assert csrf is not None
    before = _plans(desk)
    response = proposer.post(
        f"/web/team/sources/{desk.source}/retract",
        data={"csrf": csrf[1], "reason": "superseded"},
        follow_redirects=False,
    )
    assert response.status_code == 303, response.text
    (plan_id,) = _plans(desk) - before
    assert desk.status(plan_id) == "pending"
    assert desk.team.get_source(desk.source).status == "active"


def test_a_retraction_whose_radius_grew_is_refused_at_approval(desk: Desk) -> None:
    """W5 as on a folder's desk: the person approves the radius the screen showed; a claim that
    came to rest on the source since would go unseen, so the door refuses and nothing goes."""
    notice = "The harbour closes at dusk.\nBoats must be moored by eight.\n"
    source = desk.team.storage.add_source(
        "team", notice.encode(), origin="/test/notice.md", name="notice.md",
        added_at=NOW, media_type="text/markdown", trust="trusted",
    )  # fmt: skip
    first, second = notice.splitlines()
    page = {"op": "create_page", "slug": "harbour", "title": "Harbour", "summary": first,
            "claims": [claim(first, source, first.rstrip("."))]}  # fmt: skip
    desk.team.approve(desk.propose(page), None, "ann")
    owner = desk.client()
    html = _get(owner, f"/web/team/sources/{source}")
    csrf = re.search(r'name="csrf" value="([^"]+)"', html)
    assert csrf is not None
    before = _plans(desk)
    owner.post(
        f"/web/team/sources/{source}/retract",
        data={"csrf": csrf[1], "reason": "out of date"},
        follow_redirects=False,
    )
    (retraction,) = _plans(desk) - before
    fields = form_values(_get(owner, f"/web/team/plans/{retraction}"), "approve-form")
    more = {"op": "add_claims", "page": "harbour",
            "claims": [claim(second, source, second.rstrip("."))]}  # fmt: skip
    desk.team.approve(desk.propose(more), None, "ann")  # a second claim rests on it now
    refused = owner.post(f"/web/team/plans/{retraction}/approve", data={**fields, "action": "all"})
    assert refused.status_code == 409, refused.text
    assert "would now retract 1 claim(s) it didn&#39;t when it was proposed" in refused.text
    assert desk.status(retraction) == "pending"
    assert desk.team.get_source(source).status == "active"
    assert all(a[1] != retraction for a in desk.audit())
