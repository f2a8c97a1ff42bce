"""Per-plan work that must not grow with the wiki, and must decide and render exactly as before:
the consistency check's page index finds what comparing a new claim with every claim on its page
would; a page's frontmatter, dumped key by key from a cache, is the mapping dumped at once."""

from __future__ import annotations

import random

import yaml

from affidavit.gate.admission import NEAR_DUPLICATE, NEAR_MIN_WORDS, _comparable
from affidavit.gate.duplicates import PageIndex
from affidavit.store.render import _FrontmatterDumper, _Quoted, frontmatter

WORDS = [f"w{n}" for n in range(40)]


def _text(rng: random.Random, base: list[str] | None = None) -> str:
    if base is not None and rng.random() < 0.7:  # a near copy: one word changed or dropped
        words = list(base)
        words[rng.randrange(len(words))] = rng.choice(WORDS)
        if rng.random() < 0.3:
            words.pop()
        return " ".join(words)
    return " ".join(rng.sample(WORDS, rng.randint(2, 16)))


def _matches(normal: str, mine: frozenset[str], rows: list[tuple[str, str]]) -> list[str]:
    """What a full scan of the page finds: exact copies and near copies, in page order."""
    out = []
    for claim_id, text in rows:
        their_normal, theirs = _comparable(text)
        near = (
            len(mine) >= NEAR_MIN_WORDS
            and len(theirs) >= NEAR_MIN_WORDS
            and len(mine & theirs) / len(mine | theirs) >= NEAR_DUPLICATE
        )
        if their_normal == normal or near:
            out.append(claim_id)
    return out


def test_the_page_index_finds_every_claim_a_full_scan_would_in_page_order() -> None:
    rng = random.Random(14)
    index = PageIndex(_comparable, NEAR_MIN_WORDS)
    rows: list[tuple[str, str]] = []
    for step in range(400):
        if rows and rng.random() < 0.2:  # a claim ends (superseded, retracted) or is rewritten
            victim = rng.randrange(len(rows))
            if rng.random() < 0.5:
                rows.pop(victim)
            else:
                rows[victim] = (rows[victim][0], _text(rng))
        base = rng.choice(rows)[1].split() if rows and rng.random() < 0.6 else None
        rows.append((f"c-{step}", _text(rng, base)))
        rng.shuffle(rows) if rng.random() < 0.05 else None  # the page's order may change
        index.sync(rows)
        assert set(index.items) == {claim_id for claim_id, _ in rows}
        query = _text(rng, rng.choice(rows)[1].split())
        normal, mine = _comparable(query)
        found = _matches(normal, mine, rows)
        candidates = index.candidates(normal, mine, NEAR_DUPLICATE)
        assert [c for c in candidates if c in found] == found  # every match, in page order
        order = {claim_id: n for n, (claim_id, _) in enumerate(rows)}
        assert candidates == sorted(candidates, key=order.__getitem__)


def test_a_claim_gone_from_the_page_is_no_longer_a_duplicate() -> None:
    index = PageIndex(_comparable, NEAR_MIN_WORDS)
    text = "The old stone bridge over the river was opened in 1932"
    index.sync([("c-1", text)])
    normal, mine = _comparable(text)
    assert index.candidates(normal, mine, NEAR_DUPLICATE) == ["c-1"]
    index.sync([])  # retracted
    assert index.candidates(normal, mine, NEAR_DUPLICATE) == []
    assert not index.exact and not index.postings
    index.sync([("c-1", "Something else entirely, said about another thing")])  # same id, new text
    assert index.candidates(normal, mine, NEAR_DUPLICATE) == []


def test_frontmatter_dumped_key_by_key_is_the_whole_mapping_dumped_at_once() -> None:
    rng = random.Random(5)
    alphabet = [*"ab :#-'\"\\\n\t\r\x00\x85\u2028é☃{}[],&*!|>%@`?~0123.", "yes", "null", "---"]
    for _ in range(2000):

        def value() -> str:
            return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 10)))

        fields: dict[str, object] = {
            "title": _Quoted(value()),
            "summary": _Quoted(value()),
            "category": value(),
            "slug": value(),
            "claims": rng.randint(0, 10**6),
            "created": value(),
            "updated": "2026-12-01T12:00:00Z",
            "generator": "affidavit",
        }
        whole = yaml.dump(
            fields,
            Dumper=_FrontmatterDumper,
            sort_keys=False,
            allow_unicode=True,
            width=2**31 - 1,
            default_flow_style=False,
        )
        assert frontmatter(fields) == ["---", *whole.rstrip("\n").split("\n"), "---"]
