"""Partial approvals through the door on both backends (issue 26, W5): a person approves some
operations of a plan; those go in, the others stay pending (approvable until the plan expires) and
the plan is applied once every operation is decided. Attacker selections — an operation number the
plan doesn't have (another plan's), one already applied, an operation without the one of its plan
that creates its page — are refused the same way on both, and nothing is written."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from affidavit.errors import ConflictError
from affidavit.hashing import sha256_hex
from affidavit.inbox import approve

from .test_storage_gate import CLEAN, LONG, NOW, OPENED, PgWiki, SqliteWiki, page, says

pytestmark = pytest.mark.xdist_group("postgres")  # one cluster, on one worker

OPENED_CLAIM = "The bridge opened in 1932."


class SqlitePartial(SqliteWiki):
    def approve_ops(self, plan_id: str, ops: list[int]) -> None:
        """Approve operations ``ops`` (1-based, as ``affidavit approve --ops`` takes them)."""
        approve(self.vault, plan_id, ops, "ann")


class PgPartial(PgWiki):
    def approve_ops(self, plan_id: str, ops: list[int]) -> None:
        self.n += 1
        with self.storage.door(self.name, f"b-{self.n}") as door:
            door.apply_plan(plan_id, now=NOW, actor="ann", ops=[n - 1 for n in ops])


@pytest.fixture(params=["sqlite", "postgresql"])
def make(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    made: list[Any] = []

    def build(auto_apply: str = "never") -> Any:
        if request.param == "sqlite":
            wiki: Any = SqlitePartial(tmp_path / f"v{len(made)}", auto_apply)
        else:
            name = f"part_{sha256_hex(request.node.nodeid.encode())[:12]}_{len(made)}"
            wiki = PgPartial(request.getfixturevalue("pg_url"), name, auto_apply)
        made.append(wiki)
        return wiki

    yield build
    for wiki in made:
        wiki.close()


def three(source: str) -> list[dict[str, Any]]:
    return [
        page("bridge", says(OPENED_CLAIM, source, OPENED)),
        page("length", says(LONG, source, LONG), title="The bridge's length"),
        {"op": "link_pages", "page": "bridge", "to": "length"},
    ]


def test_some_operations_go_in_and_the_others_stay_pending(make: Any) -> None:
    wiki = make()
    source = wiki.add(CLEAN, "trusted")
    plan = wiki.submit(three(source))
    wiki.approve_ops(plan, [1])
    assert wiki.claims("bridge") == [(OPENED_CLAIM, "trusted")] and wiki.claims("length") is None
    assert wiki.status(plan) == "pending"  # ops 2 and 3 wait
    wiki.approve_ops(plan, [2, 3])
    assert wiki.claims("length") == [(LONG, "trusted")] and wiki.links("bridge") == ["length"]
    assert wiki.status(plan) == "applied"


def test_an_operation_the_plan_does_not_have_is_refused_and_nothing_written(make: Any) -> None:
    wiki = make()
    source = wiki.add(CLEAN, "trusted")
    other = wiki.submit(three(source))  # another plan with a fourth operation
    plan = wiki.submit([page("river", says(LONG, source, LONG), title="The bridge's length")])
    for ops in ([4], [2], [0], [-1], [1, 3]):
        with pytest.raises(ConflictError, match="there is no"):
            wiki.approve_ops(plan, ops)
    assert wiki.claims("river") is None and wiki.status(plan) == "pending"
    assert wiki.claims("bridge") is None and wiki.status(other) == "pending"
    wiki.approve_ops(plan, [1])
    assert wiki.claims("river") == [(LONG, "trusted")]


def test_an_operation_applied_already_is_refused(make: Any) -> None:
    wiki = make()
    source = wiki.add(CLEAN, "trusted")
    plan = wiki.submit(three(source))
    wiki.approve_ops(plan, [1])
    with pytest.raises(ConflictError, match="already"):
        wiki.approve_ops(plan, [1, 2])
    assert wiki.claims("length") is None and wiki.status(plan) == "pending"


def test_an_operation_without_the_one_creating_its_page_is_refused(make: Any) -> None:
    wiki = make()
    source = wiki.add(CLEAN, "trusted")
    plan = wiki.submit(three(source))
    with pytest.raises(ConflictError, match="approve them together"):
        wiki.approve_ops(plan, [3])  # links pages ops 1 and 2 create
    assert wiki.links("bridge") == [] and wiki.claims("bridge") is None
    wiki.approve_ops(plan, [1, 2, 3])
    assert wiki.links("bridge") == ["length"] and wiki.status(plan) == "applied"


def test_a_plans_own_page_is_free_again_to_it_once_created(make: Any) -> None:
    """The slug of a page the first approval created is no longer reserved, and another plan
    sees the page as existing: its claims may go in before the rest of the plan."""
    wiki = make()
    source = wiki.add(CLEAN, "trusted")
    plan = wiki.submit(three(source))
    wiki.approve_ops(plan, [1])
    more = wiki.submit(
        [{"op": "add_claims", "page": "bridge", "claims": [says(LONG, source, LONG)]}]
    )
    wiki.approve(more)
    assert [t for t, _ in wiki.claims("bridge")] == [OPENED_CLAIM, LONG]
    wiki.approve_ops(plan, [2, 3])
    assert wiki.status(plan) == "applied"


def test_on_postgresql_a_sealed_batch_takes_no_part_of_a_plan(pg_url: str) -> None:
    wiki = PgPartial(pg_url, "part_sealed", "never")
    try:
        source = wiki.add(CLEAN, "trusted")
        plan = wiki.submit(three(source))
        with wiki.storage.door(wiki.name, "b-sealed") as door:
            door.apply_plan(plan, now=NOW, actor="ann", ops=[0])
            door.seal()
            with pytest.raises(ConflictError, match="sealed"):
                door.apply_plan(plan, now=NOW, actor="ann", ops=[1])
        assert wiki.claims("length") is None and wiki.status(plan) == "pending"
    finally:
        wiki.close()
