"""Quote verification (SPEC §3 W3): a quote counts only if it is in the source it cites."""

from __future__ import annotations

import hashlib
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from affidavit.evidence import QuoteCheck, SourceTexts, Verifier, find_first, locate, normalize

ARTICLE = (
    "# Rivers of *Europe*\n\n"
    "The __Danube__ flows through ten countries,\nmore than any other river in the world.\n"
    'It rises in the [Black Forest](https://en.wikipedia.org/wiki/Black_Forest "Forest") and '
    "ends in the [[Black Sea|sea]].\n"
    "Its delta is a UNESCO World\u00a0Heritage site: a ﬁne place for ﬁsh.\n"
    "The river's name is Donau in German; the Danube\u2013Tisza canal is 1990-built.\n"
    "Hidden char\u00adacters: zero\u200bwidth and bi\u202edi\u202c text.\n"
    "Full-width: ＵＮＥＳＣＯ. Accents: cafe\u0301 and r\u00e9sum\u00e9.\n"
)
OTHER = "The Rhine flows north into the North Sea through six countries.\n"


def _sid(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


class DictTexts:
    """Sources kept in a dict, resolved as the store does: full id or unique prefix of 12+ hex."""

    def __init__(self, *texts: str) -> None:
        self.texts = {_sid(text): text for text in texts}
        self.loads = 0

    def add(self, source_id: str, text: str) -> None:
        self.texts[source_id] = text

    def resolve(self, ref: str) -> str | None:
        ref = ref.lower()
        if len(ref) < 12 or any(c not in "0123456789abcdef" for c in ref):
            return None
        matches = [source_id for source_id in self.texts if source_id.startswith(ref)]
        return matches[0] if len(matches) == 1 else None

    def text(self, source_id: str) -> str:
        self.loads += 1
        return self.texts[source_id]


@pytest.fixture
def texts() -> DictTexts:
    return DictTexts(ARTICLE, OTHER)


@pytest.fixture
def verifier(texts: DictTexts) -> Verifier:
    return Verifier(texts)


def test_dict_texts_is_a_source_texts(texts: DictTexts) -> None:
    source_texts: SourceTexts = texts
    assert source_texts.resolve(_sid(ARTICLE)[:12]) == _sid(ARTICLE)


@pytest.mark.parametrize(
    ("quote", "passage"),
    [
        ("the danube FLOWS through ten countries", "The __Danube__ flows through ten countries"),
        ("ten countries, more than any", "ten countries,\nmore than any"),
        ("Rivers of Europe", "Rivers of *Europe"),
        (
            "It rises in the Black Forest and",
            "It rises in the [Black Forest]"
            '(https://en.wikipedia.org/wiki/Black_Forest "Forest") and',
        ),
        ("ends in the sea.", "ends in the [[Black Sea|sea]]."),
        ("UNESCO World Heritage site", "UNESCO World\u00a0Heritage site"),
        ("a fine place for fish", "a ﬁne place for ﬁsh"),
        (
            "Hidden characters: zerowidth and bidi text",
            "Hidden char\u00adacters: zero\u200bwidth and bi\u202edi\u202c text",
        ),
        ("Full-width: unesco.", "Full-width: ＵＮＥＳＣＯ."),
        ("Accents: caf\u00e9 and re\u0301sume\u0301.", "Accents: cafe\u0301 and r\u00e9sum\u00e9."),
        ("zero\u200b\u200bwidth and *bidi*", "zero\u200bwidth and bi\u202edi"),
        ("the RIVER'S name", "The river's name"),
        ("the Danube\u2013Tisza canal", "the Danube\u2013Tisza canal"),
    ],
)
def test_verified_with_offsets_of_the_original_passage(
    verifier: Verifier, quote: str, passage: str
) -> None:
    check = verifier.check(_sid(ARTICLE), quote)
    assert check.verified, check.reason
    assert check.reason == ""
    assert check.source_id == _sid(ARTICLE)
    assert check.start is not None and check.end is not None
    assert ARTICLE[check.start : check.end] == passage


def test_first_occurrence_wins(verifier: Verifier) -> None:
    check = verifier.check(_sid(ARTICLE), "the danube")
    assert (check.start, check.end) == (ARTICLE.index("The __Danube__"), ARTICLE.index("__ flows"))


def test_a_unique_prefix_is_accepted_and_reported_as_cited(verifier: Verifier) -> None:
    prefix = _sid(ARTICLE)[:12]
    check = verifier.check(prefix, "ten countries")
    assert check.verified
    assert check.source == prefix
    assert check.source_id == _sid(ARTICLE)


@pytest.mark.parametrize(
    ("quote", "why"),
    [
        ("The Danube flows through eleven countries", "fabricated"),
        ("The Rhine flows north into the North Sea", "in another source"),
        ("The river\u2019s name is Donau", "curly vs straight apostrophe"),
        ("the Danube-Tisza canal", "en-dash vs hyphen"),
        ("ten countries more than any other river", "missing comma"),
        ("in German the Danube", "missing semicolon"),
        ("The Danube flows through ten countries, more than any other river in the world!", "!"),
    ],
)
def test_not_found_is_rejected(verifier: Verifier, quote: str, why: str) -> None:
    check = verifier.check(_sid(ARTICLE), quote)
    assert not check.verified, why
    assert (check.start, check.end) == (None, None)
    assert check.source_id == _sid(ARTICLE)
    assert check.reason.startswith(f"quote not found in source {_sid(ARTICLE)[:12]}")


def test_the_cited_source_and_no_other(verifier: Verifier) -> None:
    quote = "flows north into the North Sea"
    assert verifier.check(_sid(OTHER), quote).verified
    assert not verifier.check(_sid(ARTICLE), quote).verified


@pytest.mark.parametrize("quote", ["", "   \n ", "** __ ~~", "\u200b\u200d\ufeff", "*_*_*"])
def test_a_quote_empty_after_normalisation_is_rejected(verifier: Verifier, quote: str) -> None:
    check = verifier.check(_sid(ARTICLE), quote)
    assert not check.verified
    assert check.reason.startswith("quote is empty after normalisation")


def test_an_unknown_source_is_rejected(verifier: Verifier) -> None:
    check = verifier.check("1234abcd" * 8, "The Danube flows")
    assert not check.verified
    assert check.source_id is None
    assert check.reason.startswith("unknown source 1234abcd1234abcd…")


def test_an_ambiguous_prefix_is_rejected() -> None:
    texts = DictTexts()
    texts.add("abcdef012345" + "0" * 52, "The same text twice.")
    texts.add("abcdef012345" + "1" * 52, "The same text twice.")
    verifier = Verifier(texts)
    check = verifier.check("abcdef012345", "the same text")
    assert not check.verified
    assert check.source_id is None
    assert "ambiguous" in check.reason
    assert verifier.check("abcdef0123450", "the same text").verified


def test_check_many_keeps_order_and_loads_each_source_once(texts: DictTexts) -> None:
    verifier = Verifier(texts)
    items = [
        (_sid(ARTICLE), "ten countries"),
        (_sid(OTHER), "six countries"),
        ("deadbeef" * 8, "anything at all"),
        (_sid(ARTICLE), "six countries"),
        (_sid(OTHER), "**"),
    ]
    checks = verifier.check_many(items)
    assert [c.verified for c in checks] == [True, True, False, False, False]
    assert [(c.source, c.quote) for c in checks] == items
    assert texts.loads == 2
    verifier.check_many(items)
    assert texts.loads == 2  # both now cached


def test_cache_is_bounded_by_characters(texts: DictTexts) -> None:
    verifier = Verifier(texts, cache_chars=len(normalize(ARTICLE).text))
    verifier.check(_sid(ARTICLE), "ten countries")
    verifier.check(_sid(OTHER), "six countries")  # evicts ARTICLE
    verifier.check(_sid(OTHER), "six countries")
    assert texts.loads == 2
    verifier.check(_sid(ARTICLE), "ten countries")
    assert texts.loads == 3
    tiny = Verifier(texts, cache_chars=10)  # nothing fits: still correct, never cached
    assert tiny.check(_sid(OTHER), "six countries").verified
    assert tiny.check(_sid(OTHER), "six countries").verified
    assert texts.loads == 5


def test_quote_check_is_a_frozen_record(verifier: Verifier) -> None:
    check = verifier.check(_sid(OTHER), "The Rhine")
    assert check == QuoteCheck(_sid(OTHER), _sid(OTHER), "The Rhine", True, 0, 9, "")
    with pytest.raises(AttributeError):
        check.verified = False  # type: ignore[misc]


def test_locate() -> None:
    assert locate(ARTICLE, "a FINE place") == (ARTICLE.index("a ﬁne"), ARTICLE.index(" for ﬁsh"))
    assert locate(ARTICLE, "a fine place!") is None
    assert locate(ARTICLE, "**") is None


# --- many quotes against a big source (the anchored scan) ----------------------------------------


def test_many_quotes_against_a_big_source() -> None:
    rng = random.Random(3)
    parts = _big_parts(rng, 2_000_000)
    text = "".join(parts)
    source = _sid(text)
    quotes: list[str] = []
    while len(quotes) < 400:
        first = last = rng.randrange(len(parts) - 60)
        limit = rng.randint(8, 300)
        while len("".join(parts[first : last + 1])) <= limit:
            last += 1
        quote = "".join(parts[first:last])  # whole parts only: no cluster or link is cut
        if len(quote) >= 8:
            quotes.append(quote.upper() if rng.random() < 0.3 else quote)
    fabricated = [
        "government of the people shall revenue tariff peace treaty",
        "the war of the xyzzy treaty and the union",
    ] * 20
    checks = Verifier(DictTexts(text)).check_many([(source, q) for q in quotes + fabricated])

    normalized = normalize(text)
    for quote, check in zip(quotes, checks[: len(quotes)], strict=True):
        needle = normalize(quote).text.strip()
        position = normalized.text.find(needle)
        assert check.verified, quote
        assert (check.start, check.end) == normalized.span(position, position + len(needle))
    assert not any(check.verified for check in checks[len(quotes) :])


def _big_parts(rng: random.Random, size: int) -> list[str]:
    vocabulary = [
        "the", "of", "and", "government", "People", "*liberty*", "Congress", "war", "peace",
        "treaty", "ﬁnance", "café", "e\u0301te\u0301", "[[union|Union]]", "zero\u200bwidth",
        "year", "states", "shall", "commerce", "a", "to", "in", "revenue", "Naval", "tariff",
    ]  # fmt: skip
    parts: list[str] = []
    length = 0
    while length < size:
        word = rng.choice(vocabulary)
        separator = rng.choice([" ", " ", " ", ", ", ". ", "\n", "  "])
        parts.append(word + separator)
        length += len(word) + len(separator)
    return parts


_WORDS = ["abcd", "bcda", "cdab", "abab", "ab", "c", "dddd", "abcdabcd"]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from(_WORDS), min_size=50, max_size=400), st.randoms())
def test_find_first_agrees_with_str_find(words: list[str], rng: random.Random) -> None:
    haystack = " ".join(words)
    needles = ["abcd abcd abcd abcd", "cdab abab bcda", "zz abcd zz", "c eeee c"]
    while len(needles) < 400:  # enough to take the anchored scan, not one find per needle
        start = rng.randrange(len(haystack))
        needles.append(haystack[start : start + rng.randint(1, 120)].strip(" ") or "ab")
    assert find_first(haystack, needles) == [haystack.find(needle) for needle in needles]
