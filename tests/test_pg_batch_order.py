"""Approving several plans as one batch on PostgreSQL puts a plan that extends a page after the
plan of the batch that creates it, as SQLite's door does (found by a user walk: `approve --all
--yes` after an ingest job refused the batch when a chunk's plan sorted before the chunk that
creates its page — plans made in the same second sort by their random ids)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from affidavit.plan.schema import parse_plan
from affidavit.store.batch import creation_order

from .conftest import claim

pytestmark = pytest.mark.xdist_group("postgres")


def _plan(*ops: dict[str, Any]) -> Any:
    import json

    return parse_plan(json.dumps({"nonce": "n" * 32, "operations": list(ops)}))


def _create(slug: str) -> dict[str, Any]:
    return {"op": "create_page", "slug": slug, "title": slug.title(), "summary": "s",
            "claims": [claim("A sentence here.", "a" * 64, "A sentence here")]}  # fmt: skip


def _extend(slug: str) -> dict[str, Any]:
    return {"op": "add_claims", "page": slug, "section": "More",
            "claims": [claim("Another sentence here.", "a" * 64, "Another sentence here")]}  # fmt: skip


def test_an_extender_goes_after_its_creator_and_the_rest_keep_their_order() -> None:
    plans = [
        ("x1", _plan(_extend("bridge"))),
        ("c1", _plan(_create("quay"))),
        ("x2", _plan(_extend("quay"), _extend("bridge"))),
        ("c2", _plan(_create("bridge"))),
        ("o1", _plan(_extend("elsewhere"))),  # a page the wiki has: no constraint
    ]
    assert creation_order(plans) == ["c1", "c2", "x1", "x2", "o1"]
    assert creation_order(plans[1:2] + plans[4:]) == ["c1", "o1"]


def test_a_plan_creating_and_extending_its_own_page_needs_nothing_else() -> None:
    plans = [("x", _plan(_extend("own"))), ("self", _plan(_create("own"), _extend("own")))]
    assert creation_order(plans) == ["self", "x"]


def test_a_cycle_keeps_the_given_order() -> None:
    a = _plan(_create("a"), _extend("b"))
    b = _plan(_create("b"), _extend("a"))
    assert creation_order([("a", a), ("b", b)]) == ["a", "b"]


psycopg = pytest.importorskip("psycopg")
from .test_pg_ask import Team  # noqa: E402


@pytest.fixture
def team(pg_url: str) -> Iterator[Team]:
    made = Team(pg_url)
    yield made
    made.close()


def test_approving_the_extender_first_applies_both_in_one_batch(team: Team) -> None:
    vault = team.team
    quote = "Its light can be seen 17 nautical miles away"
    creator = {"op": "create_page", "slug": "light", "title": "The light", "summary": quote,
               "claims": [claim(quote + ".", team.good, quote)]}  # fmt: skip
    tower = "The present tower was designed by James Douglass and lit in 1882"
    extender = {"op": "add_claims", "page": "light", "section": "Tower",
                "claims": [claim(tower + ".", team.good, tower)]}  # fmt: skip
    made = []
    for op in (creator, extender):
        out = vault.propose({"nonce": vault.new_nonce(1).nonce, "operations": [op]}, "ann", "cli")
        assert out.status == "pending", out
        made.append(out.plan_id)
    before = vault.storage.batches("team")
    done = vault.approve_many([made[1], made[0]], "person:ann")  # the extender named first
    assert [r.plan_id for r in done.results] == [made[0], made[1]]
    after = vault.storage.batches("team")
    assert len(after) == len(before) + 1 and list(after[-1].plans) == [made[0], made[1]]
    page = vault.get_page("light", with_markdown=False)
    assert len(page.claims) == 2


def test_the_inbox_lists_plans_of_one_second_in_the_order_they_were_made(
    team: Team, tmp_path: Any
) -> None:
    """An ingest job's chunks are proposed within a second: the inbox shows chunk 1, 2, 3… as
    made, on PostgreSQL (``pg013_plans_made``) and on SQLite (rowid), not by their random ids."""
    from datetime import UTC, datetime

    from affidavit.config import Config
    from affidavit.inbox import list_plans
    from affidavit.service.pg_vaults import PgVault
    from affidavit.vault import init_vault
    from tests.conftest import add_samples
    from tests.web import propose

    second = datetime(2026, 12, 7, 16, 10, 37, tzinfo=UTC)
    vault = PgVault(team.team.storage, "team", Config(), clock=lambda: second)
    made = []
    for n in range(6):
        op = {"op": "create_page", "slug": f"light-{n}", "title": f"Light {n}", "summary": "s",
              "claims": [claim("Its light can be seen 17 nautical miles away.", team.good,
                               "Its light can be seen 17 nautical miles away")]}  # fmt: skip
        out = vault.propose({"nonce": vault.new_nonce(1).nonce, "operations": [op]}, "ann", "cli")
        made.append(out.plan_id)
    assert sorted(made) != made or sorted(made, reverse=True) != made  # ids don't give the order
    listed = [p.id for p in vault.list_plans(("pending",)) if p.id in made]
    assert listed == made

    folder, _ = init_vault(tmp_path / "v", clock=lambda: second)  # the same on a vault folder
    try:
        add_samples(folder)
        mine = [propose(folder, [f"four-freedoms:freedoms-{n}"]) for n in range(6)]
        assert [r.id for r in list_plans(folder, ("pending",))] == mine
    finally:
        folder.close()
