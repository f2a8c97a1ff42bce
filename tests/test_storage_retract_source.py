"""``retract_source`` through the door on both backends (issue 26): the same gate and the same
blast radius (store/blast.py, read through SourceReads) on SQLite and on PostgreSQL. A retraction
waits for a person; approved, it takes out the claims resting on the source alone, with the
syntheses and context entries resting on them, keeps the claims with other evidence at the weakest
trust of what is left, and the source cites nothing more. Attacker plans — a source of another
vault, a source retracted twice — are refused the same way on both."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from affidavit.hashing import sha256_hex

from .test_storage_gate import (
    CLEAN,
    LONG,
    OPENED,
    PgWiki,
    SqliteWiki,
    _refused_or_raises,
    page,
    says,
)

pytestmark = pytest.mark.xdist_group("postgres")  # one cluster, on one worker

BLOG = "A blog says the bridge opened in 1932 to great fanfare."
OPENED_CLAIM = "The bridge opened in 1932."


@pytest.fixture(params=["sqlite", "postgresql"])
def make(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    made: list[Any] = []

    def build(auto_apply: str = "trusted") -> Any:
        if request.param == "sqlite":
            wiki: Any = SqliteWiki(tmp_path / f"v{len(made)}", auto_apply)
        else:
            name = f"rs_{sha256_hex(request.node.nodeid.encode())[:12]}_{len(made)}"
            wiki = PgWiki(request.getfixturevalue("pg_url"), name, auto_apply)
        made.append(wiki)
        return wiki

    yield build
    for wiki in made:
        wiki.close()


def put(wiki: Any, ops: list[dict[str, Any]]) -> str:
    """Submit, and approve as a person what the policy left pending."""
    plan = wiki.submit(ops)
    assert not plan.startswith("refused"), plan
    if wiki.status(plan) == "pending":
        wiki.approve(plan)
    return plan


def retract(source: str, reason: str = "The report was withdrawn.") -> dict[str, Any]:
    return {"op": "retract_source", "source": source, "reason": reason}


def test_a_source_retraction_takes_what_rests_on_it_alone_and_waits_for_a_person(
    make: Any,
) -> None:
    wiki = make("trusted")
    report = wiki.add(CLEAN, "trusted")
    blog = wiki.add(BLOG, "semi-trusted")
    both = says(OPENED_CLAIM, report, OPENED)
    both["evidence"].append({"source": blog, "quote": "the bridge opened in 1932"})
    put(wiki, [page("bridge", both, says(LONG, report, LONG))])
    (_, _, _), (long, _, _) = wiki.states("bridge")
    synthesis = says("The 503 metres long bridge opened in 1932.", report, OPENED)
    synthesis["evidence"].append({"source": report, "quote": LONG})
    synthesis["derived_from"] = [long]
    put(wiki, [{"op": "add_claims", "page": "bridge", "claims": [synthesis]}])
    plan = wiki.submit([retract(report)])
    assert wiki.status(plan) == "pending"  # it takes facts out: a person decides
    assert [st for _, _, st in wiki.states("bridge")] == ["active"] * 3
    wiki.approve(plan)
    assert [(t, st) for _, t, st in wiki.states("bridge")] == [
        (OPENED_CLAIM, "active"),  # kept: the blog still says it
        (LONG, "retracted"),
        ("The 503 metres long bridge opened in 1932.", "retracted"),  # rested on it
    ]
    assert wiki.claims("bridge")[0] == (OPENED_CLAIM, "semi-trusted")  # the blog's trust now
    cite = wiki.submit([page("length", says(LONG, report, LONG), title="The bridge's length")])
    if not cite.startswith("refused:"):  # PostgreSQL: refused at the door
        with pytest.raises(Exception, match="retracted"):
            wiki.approve(cite)
    else:
        assert "retracted" in cite
    assert wiki.claims("length") is None


def test_a_source_of_another_vault_is_not_this_vaults_to_retract(make: Any) -> None:
    mine, theirs = make("trusted"), make("trusted")
    source = theirs.add(CLEAN, "trusted")
    theirs.submit([page("bridge", says(OPENED_CLAIM, source, OPENED))])
    _refused_or_raises(mine, [retract(source)], "does not exist")
    _refused_or_raises(mine, [retract(source[:12])], "does not exist")
    assert [st for _, _, st in theirs.states("bridge")] == ["active"]


def test_a_source_retracted_twice_is_refused(make: Any) -> None:
    wiki = make("trusted")
    source = wiki.add(CLEAN, "trusted")
    wiki.submit([page("bridge", says(OPENED_CLAIM, source, OPENED))])
    twice = put(wiki, [retract(source), retract(source[:16], "Again, by its prefix.")])
    assert wiki.verdicts(twice) == []  # no claim is added by either operation
    assert [st for _, _, st in wiki.states("bridge")] == ["retracted"]
    _refused_or_raises(wiki, [retract(source)], "retracted already")


def test_a_context_entry_resting_on_the_source_goes_with_it(make: Any) -> None:
    wiki = make("trusted")
    source = wiki.add(CLEAN, "trusted")
    other = wiki.add(BLOG, "trusted")
    put(wiki, [page("bridge", says(OPENED_CLAIM, other, "the bridge opened in 1932")),
               {"op": "update_context", "entries": [says(LONG, source, LONG)]}])  # fmt: skip
    put(wiki, [retract(source)])
    assert [st for _, _, st in wiki.states("bridge")] == ["active"]
    assert wiki.context_texts() == []
