"""The index of known page keys (extractive/known.py) answers exactly as the scan it replaced."""

from __future__ import annotations

import random
import threading

from affidavit.extractive.known import known_keys
from affidavit.extractive.segment import segment
from affidavit.extractive.topics import joined_name_key, known_slug, name_key, topic_candidates
from affidavit.extractive.units import build_units
from affidavit.providers.base import PageBrief

WORDS = ["new", "york", "city", "harbor", "bank", "of", "england", "a", "state", "park", "x"]


def scanned(slugs: set[str], pages: list[PageBrief]) -> dict[str, str]:
    """The dictionary the engine built for every chunk before the index (engine._context)."""
    keys: dict[str, str] = {}
    for slug in sorted(slugs | {p.slug for p in pages}):
        keys.setdefault(name_key(slug.replace("-", " ")), slug)
    for page in pages:
        keys[name_key(page.title)] = page.slug
    return keys


def random_key(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 5)))


def queries(rng: random.Random, keys: list[str]) -> list[str]:
    """Random keys, the known keys themselves, their runs and the keys one word around them."""
    out = [random_key(rng) for _ in range(40)]
    for key in keys:
        parts = key.split(" ")
        out.append(key)
        out.append(" ".join(parts[1:]))
        out.append(" ".join(parts[:-1]))
        out.append(f"{key} {rng.choice(WORDS)}")
        out.append(f"{rng.choice(WORDS)} {key}")
    out = [q for q in out if q]
    return rng.sample(out, min(len(out), 150))


def check(slugs: set[str], pages: list[PageBrief], rng: random.Random) -> int:
    keys = known_keys(slugs | {p.slug for p in pages}, pages)
    reference = scanned(slugs, pages)
    assert keys.as_dict() == reference
    asked = queries(rng, list(reference))
    for query in asked:
        assert keys.slug_for(query) == known_slug(query, reference), query
    return len(asked)


def test_the_index_answers_as_the_scan_over_random_wikis_that_grow_and_shrink() -> None:
    rng = random.Random(14)
    slugs: set[str] = set()
    asked = 0
    for step in range(200):
        if step % 40 == 39:
            slugs = set(rng.sample(sorted(slugs), len(slugs) // 2))  # pages gone: a new vault
        for _ in range(rng.randint(0, 6)):
            slug = random_key(rng).replace(" ", "-")
            slugs.add(slug + ("" if rng.random() < 0.7 else f"-{rng.randint(1, 3)}s"))
        pages = [
            PageBrief(rng.choice(sorted(slugs)) if slugs else "p", random_key(rng).title(), "")
            for _ in range(rng.randint(0, 4))
        ]
        asked += check(slugs, pages, rng)
    assert asked > 15_000


def test_the_index_answers_as_the_scan_for_the_names_of_real_text() -> None:
    text = (
        "The Bank of England raised its rate. New York City and the New York Harbor grew. "
        "The Bank of England and New York traded. Lower Manhattan and Manhattan Island and "
        "the Armenian Apostolic Church met the Armenian Church. The Panama Canal Zone and "
        "the Panama Canal opened. The public credit and the public credits of the states rose."
    )
    units = build_units(text, segment(text))
    keys = [c.key for c in topic_candidates(units, text=text)]
    keys += [name_key(w) for w in text.replace(".", "").split()]
    rng = random.Random(3)
    for _ in range(200):
        slugs = {k.replace(" ", "-") for k in rng.sample(keys, rng.randint(0, len(keys)))}
        pages = [PageBrief(f"page-{i}", rng.choice(keys).title(), "") for i in range(3)]
        index = known_keys(slugs | {p.slug for p in pages}, pages)
        reference = scanned(slugs, pages)
        for key in keys + queries(rng, list(reference)):
            assert index.slug_for(key) == known_slug(key, reference)


def test_each_thread_keeps_its_own_keys() -> None:
    seen: dict[str, str | None] = {}

    def run(name: str, slug: str) -> None:
        for _ in range(200):
            seen[name] = known_keys({slug}, ()).slug_for("new york city")

    threads = [
        threading.Thread(target=run, args=("a", "new-york")),
        threading.Thread(target=run, args=("b", "york-city")),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == {"a": "new-york", "b": "york-city"}


def test_the_joined_name_key_is_the_name_key_of_the_joined_text() -> None:
    rng = random.Random(7)
    pieces = [
        "The",
        "the",
        "a",
        "An",
        "Mr.",
        "Dr",
        "Bank’s",
        "states'",
        "classes",
        "ΣΑΣ",
        "İstanbul",
    ]
    pieces += ["of", "New", "York", "city.", "entries", "K\u212a", "", "--", "it's", "Mrs", "x1"]
    for _ in range(3000):
        parts = [
            " ".join(rng.choice(pieces) for _ in range(rng.randint(0, 6)))
            for _ in range(2 * rng.randint(1, 4))
        ]
        assert joined_name_key(parts) == name_key(" . ".join(parts)), parts
