"""``affidavit mirror`` following the kinds of batch pgctx brought to the PostgreSQL door (issue
26): context entries (appended, replaced, moved to the archive page past the line cap), a source's
retraction, a carry to a newer version and a plan approved in parts, each in its own batch's
commit; and a seeded mix of every kind of batch, mirrored at random points, equal to a rebuild."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from affidavit.errors import ConflictError
from affidavit.hashing import sha256_hex

from .pg_appliers import ACTOR, EXPIRES
from .test_mirror import (
    DATA,
    Wiki,
    _at,
    _claim_ids,
    _files,
    _head,
    check,
    mirror,
    pygit2,
    vault_storage,
)

pytestmark = pytest.mark.xdist_group("postgres")  # one cluster, on one worker


@pytest.fixture
def storage(pg_url: str) -> Iterator[Any]:
    yield from vault_storage(pg_url)


@pytest.fixture
def wiki(storage: Any) -> Wiki:
    return Wiki(storage)


def test_context_entries_their_replacement_and_their_archive_are_followed(
    storage: Any, wiki: Wiki, tmp_path: Path
) -> None:
    """context.md is rendered with every batch: entries appended, replaced (a person approves)
    and moved to the archive page past the line cap (20 lines here), each in its own batch's
    commit; the mirror followed batch by batch equals a rebuild."""
    from affidavit.config import Config

    wiki.grow(2)
    folder = tmp_path / "mirror"
    mirror(storage, "main", folder)
    config = Config({"context.max_lines": 20})

    def entry(n: int) -> dict[str, Any]:
        return {"op": "update_context", "entries": [wiki._claim(100 + n)]}

    def batch(op: dict[str, Any]) -> None:
        plan_id = wiki._propose(op)
        wiki.batches += 1
        with storage.door("main", f"b-{wiki.batches}") as door:
            door.apply_plan(plan_id, now=_at(wiki.batches), actor=ACTOR, config=config)

    batch(entry(0))
    assert len(mirror(storage, "main", folder).commits) == 1
    assert wiki._claim(100)["text"] in (folder / "wiki" / "context.md").read_text()
    for n in range(1, 9):  # past 20 lines: the oldest move to the archive page
        batch(entry(n))
    gone = storage.context("main")[0].id
    batch({"op": "retract_claim", "claim": gone, "reason": "The source was misread."})
    batch({**entry(20), "mode": "replace"})
    wiki.grow(2)
    assert mirror(storage, "main", folder).hand_edits == []
    assert check(storage, "main", folder).ok, check(storage, "main", folder).problems
    rebuilt = tmp_path / "rebuilt"
    mirror(storage, "main", rebuilt)
    assert _head(rebuilt) == _head(folder) and _files(rebuilt) == _files(folder)
    archive = storage.page("main", "context-archive")
    assert archive is not None and len(archive.claims) >= 2
    text = (folder / "wiki" / "context.md").read_text()
    assert wiki._claim(120)["text"] in text and wiki._claim(108)["text"] not in text
    assert archive.claims[0].text in (folder / "wiki" / "context-archive.md").read_text()
    # history: before the spill, the oldest entry is in context.md and there is no archive page
    repo = pygit2.Repository(str(folder))
    commits = list(repo.walk(repo.head.target, pygit2.enums.SortMode.REVERSE))
    early = commits[3].tree
    assert wiki._claim(100)["text"] in early["wiki/context.md"].data.decode()
    assert "wiki/context-archive.md" not in early


def test_a_source_retraction_is_followed_batch_by_batch(
    storage: Any, wiki: Wiki, tmp_path: Path
) -> None:
    """The claims resting on the retracted source alone go; a claim keeping other evidence
    shows its footnote as "(source retracted)" from the retraction's commit on, never before."""
    wiki.grow(3)
    both = wiki._claim(200)
    both["evidence"].append(
        {"source": wiki.ids["mill"], "quote": "mill 203 was built in 1821 and burned in 1902"}
    )
    both["text"] = "The river 200 flows north past town 200, and mill 203 was built in 1821."
    wiki.batch({"op": "add_claims", "page": wiki.pages[0], "claims": [both]})
    folder = tmp_path / "mirror"
    mirror(storage, "main", folder)
    wiki.batch({"op": "retract_source", "source": wiki.ids["mill"], "reason": "Misdated."})
    wiki.grow(1)
    mirror(storage, "main", folder)
    assert check(storage, "main", folder).ok, check(storage, "main", folder).problems
    rebuilt = tmp_path / "rebuilt"
    mirror(storage, "main", rebuilt)
    assert _head(rebuilt) == _head(folder) and _files(rebuilt) == _files(folder)
    repo = pygit2.Repository(str(folder))
    commits = list(repo.walk(repo.head.target, pygit2.enums.SortMode.REVERSE))
    path = f"wiki/{wiki.pages[0]}.md"
    before, after = (commits[n].tree[path].data.decode() for n in (3, 4))
    assert "(source retracted)" not in before and "(source retracted)" in after
    assert both["text"] in after


def test_a_plan_approved_in_parts_is_mirrored_in_the_batches_that_wrote_it(
    storage: Any, wiki: Wiki, tmp_path: Path
) -> None:
    """Each part of a plan approved operation by operation is in the commit of its own batch
    (rows are tagged with the batch that wrote them, not their plan's last batch)."""
    wiki.grow(2)
    ops = [wiki.create("first"), wiki.create("second")]
    del wiki.pages[-2:]  # not grown by wiki.grow: "second" is not there before its part
    plan_id = f"{0xFFFF:064x}"
    storage.propose(
        "main", plan_id, author="ann", origin="cli", plan_json=json.dumps(
            {"nonce": "nonce-parted-0123456789abcdef", "operations": ops}),
        created_at=_at(0), expires_at=EXPIRES,
    )  # fmt: skip

    def part(ops: list[int]) -> None:
        wiki.batches += 1
        with storage.door("main", f"b-{wiki.batches}") as door:
            door.apply_plan(plan_id, now=_at(wiki.batches), actor=ACTOR, ops=ops)

    part([0])
    wiki.grow(1)
    folder = tmp_path / "mirror"
    mirror(storage, "main", folder)  # the mirror stops between the two parts
    part([1])
    wiki.grow(1)
    mirror(storage, "main", folder)
    assert check(storage, "main", folder).ok, check(storage, "main", folder).problems
    rebuilt = tmp_path / "rebuilt"
    mirror(storage, "main", rebuilt)
    assert _head(rebuilt) == _head(folder) and _files(rebuilt) == _files(folder)
    repo = pygit2.Repository(str(folder))
    commits = list(repo.walk(repo.head.target, pygit2.enums.SortMode.REVERSE))
    assert "wiki/first.md" in commits[2].tree and "wiki/second.md" not in commits[2].tree
    assert "wiki/second.md" in commits[4].tree


def test_a_carry_to_a_newer_version_is_followed_batch_by_batch(
    storage: Any, wiki: Wiki, tmp_path: Path
) -> None:
    """Footnotes cite the older version up to the carry's commit and the newer one from it on;
    the newer version's bytes come in that commit."""
    wiki.grow(3)
    folder = tmp_path / "mirror"
    mirror(storage, "main", folder)
    newer = DATA.replace(b"Sentence 1 of", b"Sentence one of") + b"A line added later.\n"
    v2 = storage.add_source(
        "main", newer, origin="/in/a.md", name="River notes, revised", added_at=_at(0),
        media_type="text/markdown", trust="trusted",
    )  # fmt: skip
    first = wiki.pages[0]
    claims = _claim_ids(storage, first)
    wiki.batch({"op": "carry_source", "source": sha256_hex(DATA), "to": v2, "claims": claims})
    wiki.grow(1)
    report = mirror(storage, "main", folder)
    assert report.hand_edits == []
    assert check(storage, "main", folder).ok, check(storage, "main", folder).problems
    rebuilt = tmp_path / "rebuilt"
    mirror(storage, "main", rebuilt)
    assert _head(rebuilt) == _head(folder) and _files(rebuilt) == _files(folder)
    carried = storage.page("main", first)
    assert any(e.source_id == v2 for c in carried.claims for e in c.evidence)
    repo = pygit2.Repository(str(folder))
    commits = list(repo.walk(repo.head.target, pygit2.enums.SortMode.REVERSE))
    before, after = (commits[n].tree[f"wiki/{first}.md"].data.decode() for n in (2, 3))
    assert v2[:12] not in before and v2[:12] in after
    assert f"sources/{v2}.md" not in commits[2].tree and f"sources/{v2}.md" in commits[3].tree


def test_every_kind_of_batch_mixed_mirrors_the_same_followed_or_rebuilt(
    storage: Any, wiki: Wiki, tmp_path: Path
) -> None:
    """A seeded mix of every kind of batch the door writes — pages, claims, links, context
    entries past the line cap and replaced, retractions, a supersession, a source carried to a
    newer version and a source retracted, a plan approved in two parts — mirrored at random
    points: the folder followed batch by batch equals one rebuilt in one go, and the database."""
    import contextlib
    import random

    from affidavit.config import Config

    rng = random.Random(26)
    config = Config({"context.max_lines": 20})
    folder = tmp_path / "mirror"
    river = sha256_hex(DATA)
    state = {"context": 0, "carried": False, "retracted": False}

    def apply(*ops: dict[str, Any], parts: list[list[int]] | None = None) -> None:
        plan_id = wiki._propose(ops[0]) if len(ops) == 1 else _propose_many(ops)
        for selection in parts or [None]:  # type: ignore[list-item]
            wiki.batches += 1
            with storage.door("main", f"b-{wiki.batches}") as door:
                door.apply_plan(plan_id, now=_at(wiki.batches), actor=ACTOR, config=config,
                                ops=selection)  # fmt: skip
            if rng.random() < 0.25:
                mirror(storage, "main", folder)

    def _propose_many(ops: tuple[dict[str, Any], ...]) -> str:
        wiki.plans += 1
        plan_id = f"{wiki.plans:064x}"
        storage.propose(
            "main", plan_id, author="ann", origin="cli", plan_json=json.dumps(
                {"nonce": f"nonce-{plan_id[-8:]}-0123456789abcdef", "operations": list(ops)}),
            created_at=_at(0), expires_at=EXPIRES,
        )  # fmt: skip
        return plan_id

    def one(n: int) -> dict[str, Any]:
        """A claim on the trusted river notes (never the mill's, semi-trusted and retracted
        at some point: a supersession needs a claim as trusted as the one it replaces)."""
        return wiki._claim(n + 1 if n % 7 == 3 else n)

    def live(slug: str) -> list[str]:
        return _claim_ids(storage, slug)

    apply(wiki.create("start", 3))
    apply({"op": "update_context", "entries": [one(380 + 2 * i) for i in range(6)]})  # past 20
    done: set[str] = set()
    for step in range(30):
        kind = rng.choice(["create", "add", "context", "context", "retract", "supersede",
                           "link", "parts", "carry", "retract_source"])  # fmt: skip
        done.add(kind)
        if kind == "create":
            apply(wiki.create(f"p-{step}", 2))
        elif kind == "add":
            apply(wiki.add(rng.choice(wiki.pages), 2))
        elif kind == "context":
            state["context"] += 1
            mode = "replace" if state["context"] == 9 else "append"
            apply({"op": "update_context", "mode": mode,
                   "entries": [one(300 + step * 2)]})  # fmt: skip
        elif kind in ("retract", "supersede") and len(live(wiki.pages[0])) > 1:
            claim = rng.choice(live(wiki.pages[0])[1:])
            if kind == "retract":
                apply({"op": "retract_claim", "claim": claim, "reason": "Misread, it seems."})
            else:
                apply({"op": "supersede_claim", "claim": claim, "by": one(350 + step),
                       "reason": "Says it better."})  # fmt: skip
        elif kind == "link" and len(wiki.pages) > 1:
            src, dst = rng.sample(wiki.pages, 2)
            with contextlib.suppress(ConflictError):  # linked already: refused, nothing written
                apply({"op": "link_pages", "page": src, "to": dst})
        elif kind == "parts":
            ops = (wiki.create(f"a-{step}", 1), wiki.create(f"b-{step}", 1))
            apply(*ops, parts=[[0], [1]])
        elif kind == "carry" and not state["carried"]:
            state["carried"] = True
            v2 = storage.add_source(
                "main", DATA + b"A line added later.\n", origin="/in/a.md", name="River v2",
                added_at=_at(0), media_type="text/markdown", trust="trusted",
            )  # fmt: skip
            citing = [
                c.id
                for slug in wiki.pages
                for c in storage.page("main", slug).claims
                if c.status == "active" and any(e.source_id == river for e in c.evidence)
            ]
            if citing:
                apply({"op": "carry_source", "source": river, "to": v2, "claims": citing})
        elif kind == "retract_source" and not state["retracted"]:
            state["retracted"] = True
            apply({"op": "retract_source", "source": wiki.ids["mill"], "reason": "Misdated."})
    mirror(storage, "main", folder)
    assert check(storage, "main", folder).ok, check(storage, "main", folder).problems
    rebuilt = tmp_path / "rebuilt"
    mirror(storage, "main", rebuilt)
    assert _head(rebuilt) == _head(folder) and _files(rebuilt) == _files(folder)
    assert storage.page("main", "context-archive") is not None  # the cap was passed
    assert {"carry", "retract_source", "parts", "supersede", "retract", "link"} <= done, done
