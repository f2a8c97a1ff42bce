"""Quote verification (SPEC §3 W3): a quote counts only if it is in the source it cites."""

from __future__ import annotations

import hashlib
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from affidavit.evidence import (
    QuoteCheck,
    SourceTexts,
    Verifier,
    find_first,
    locate,
    normalize,
    normalize_quote,
)
from affidavit.evidence.verify import anchored_find, cuts

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
            "HIDDEN char\u00adacters: zero\u200bwidth and bi\u202edi text",
            "Hidden char\u00adacters: zero\u200bwidth and bi\u202edi\u202c text",
        ),
        ("Full-width: unesco.", "Full-width: ＵＮＥＳＣＯ."),
        ("Accents: caf\u00e9 and re\u0301sume\u0301.", "Accents: cafe\u0301 and r\u00e9sum\u00e9."),
        ("\u200bzero\u200bwidth and *bi\u202edi*", "zero\u200bwidth and bi\u202edi"),
        ("the RIVER'S name", "The river's name"),
        ("The river\u2019s NAME is Donau", "The river's name is Donau"),
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
        ("Hidden characters: zerowidth", "an invisible character inside a word is kept"),
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


@pytest.mark.parametrize("quote", ["", "   \n ", "** __", "\u200b\u200d\ufeff", "*_*_*"])
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
    assert check == QuoteCheck(_sid(OTHER), _sid(OTHER), "The Rhine", True, 0, 9, "", "The Rhine")
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
        position = anchored_find(normalized.text, needle)
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
    assert find_first(haystack, needles) == [_first_anchored(haystack, n) for n in needles]


def _first_anchored(haystack: str, needle: str) -> int:
    """The reference: the first occurrence of ``needle`` that cuts no word at either end."""
    for position in range(len(haystack) - len(needle) + 1):
        end = position + len(needle)
        if haystack.startswith(needle, position) and not (
            cuts(haystack, position) or cuts(haystack, end)
        ):
            return position
    return -1


# --- anchored quotes (W3): both ends on word boundaries of the source ------------------------


@pytest.mark.parametrize(
    ("source", "quote"),
    [
        ("The limit is 1500 pounds per vessel.", "500 pounds per vessel"),
        ("The bridge is unsafe for pedestrians.", "safe for pedestrians"),
        ("The crane lifts 106 tonnes.", "10\u2076 tonnes"),
        ("The crane lifts 10\u2076 tonnes.", "106 tonnes"),
        ("Each bay is 2*3 metres.", "23 metres"),
        ("The limit is 1,500 pounds.", "500 pounds"),
        ("The limit is 1.500 pounds.", "500 pounds"),
        ("The limit is 1\u202f500 pounds.", "500 pounds"),
        ("The limit is 1\u2019500 pounds.", "500 pounds"),
        ("The limit is 1\u00a0500 pounds.", "The limit is 1"),
        ("It was 3.5 metres.", "5 metres"),
        ("It was -40 degrees.", "40 degrees"),
        ("Ships wait 10:30 hours.", "30 hours"),
        ("A non-toxic paint.", "toxic paint"),
        ("A non-toxic paint.", "-toxic paint"),
        ("Buy sugar-free jam.", "Buy sugar"),
        ("An anti-war march.", "war march"),
        ("The limit is 1500 pounds.", "The limit is 150"),
        ("Leave the car at the station.", "he station"),
        ("Of ~~not open to cruise ships~~ note.", "Of not open"),
        ("~~not open to cruise ships~~ open to all.", "cruise ships open to all"),
        ("The **1**500 pounds limit.", "500 pounds limit"),
        ("The 1\u200b500 pounds limit.", "500 pounds limit"),
        ("The 1\u200b500 pounds limit.", "1500 pounds limit"),
    ],
)
def test_a_quote_that_cuts_a_word_or_number_is_refused(source: str, quote: str) -> None:
    texts = DictTexts(source)
    check = Verifier(texts).check(_sid(source), quote)
    assert not check.verified, check
    assert (check.start, check.end, check.span) == (None, None, "")
    assert locate(source, quote) is None


def test_a_hyphen_that_is_a_dash_is_a_word_boundary() -> None:
    source = "freedom to worship God in his own way-everywhere in the world; a well-known rule"
    verifier = Verifier(DictTexts(source))
    for quote in ["worship God in his own way", "everywhere in the world", "known rule"]:
        assert verifier.check(_sid(source), quote).verified, quote


def test_the_refusal_says_where_the_quote_cuts_a_word() -> None:
    source = "The limit is 1500 pounds per vessel."
    check = Verifier(DictTexts(source)).check(_sid(source), "500 pounds per vessel")
    assert "only where it cuts a word or number" in check.reason
    assert "1500 pounds" in check.reason and "word boundaries" in check.reason


def test_the_first_anchored_occurrence_wins() -> None:
    source = "Barges carry 1500 pounds; a skiff carries 500 pounds per vessel."
    check = Verifier(DictTexts(source)).check(_sid(source), "500 pounds")
    assert check.verified and check.start == source.index("500 pounds per")
    assert check.span == "500 pounds"


def test_strike_through_text_keeps_its_markers() -> None:
    """A quote of the struck text itself is found, at offsets inside the ``~~`` markers, so the
    sanitizer's strikethrough flag on that span quarantines it; one reaching across a marker is
    refused (test above)."""
    source = "Port rules: ~~not open to cruise ships~~ open to all ferries."
    check = Verifier(DictTexts(source)).check(_sid(source), "not open to cruise ships")
    assert check.verified and check.start is not None and check.end is not None
    assert source[check.start - 2 : check.start] == "~~" and source[check.end :].startswith("~~")


def test_scripts_without_spaces_are_cut_anywhere() -> None:
    source = "東京は日本の首都です。タイ語: กรุงเทพมหานคร"
    verifier = Verifier(DictTexts(source))
    for quote in ["日本の首都", "首都です", "กรุงเทพ"]:
        assert verifier.check(_sid(source), quote).verified, quote


def test_the_shown_span_is_the_sources_own_bytes() -> None:
    """The proposer's case, spaces and quote marks differ; the check carries the source's."""
    source = "He said \u201cThe Bridge  is CLOSED\u201d on\nMonday, 3 May."
    check = Verifier(DictTexts(source)).check(
        _sid(source), '"the bridge is closed" ON monday, 3 may.'
    )
    assert check.verified, check.reason
    assert check.span == source[check.start : check.end]
    assert check.span == "\u201cThe Bridge  is CLOSED\u201d on\nMonday, 3 May."


def test_an_admission_recorded_before_span_existed_still_loads() -> None:
    from affidavit.gate.verdicts import Admission

    old = {
        "plan_id": "p",
        "selected": [0],
        "needs_approval": True,
        "policy_reason": "",
        "ops": [
            {
                "index": 0,
                "kind": "add_claims",
                "claims": [
                    {
                        "index": 0,
                        "text": "t",
                        "evidence": [
                            {
                                "source": "s",
                                "source_id": "s",
                                "quote": "q",
                                "verified": True,
                                "start": 0,
                                "end": 1,
                                "reason": "",
                            }
                        ],
                    }
                ],
            }
        ],
    }
    admission = Admission.from_json(old)
    assert admission.ops[0].claims[0].evidence[0].span == ""


# --- the property: cut words are refused; whole words verify and show the source's bytes -----

_LETTERS = "abcdefgh\u00e9ABCDEFGH\u00c90123"
_SEPARATORS = [" ", "  ", "\n", ", ", ". ", "; ", " (", ") ", " - ", " \u201c", "\u201d "]


@st.composite
def _document(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    """Words of the same length, distinct after casefolding, and the separators between them:
    a whole word occurs only where it stands, so a quote can only be found where it was cut."""
    words = draw(
        st.lists(
            st.text(alphabet=_LETTERS, min_size=4, max_size=4),
            min_size=3,
            max_size=25,
            unique_by=str.casefold,
        )
    )
    separators = draw(
        st.lists(st.sampled_from(_SEPARATORS), min_size=len(words), max_size=len(words))
    )
    return words, separators


def _layout(words: list[str], separators: list[str]) -> tuple[str, list[tuple[int, int]]]:
    text, spans = "", []
    for word, separator in zip(words, separators, strict=True):
        spans.append((len(text), len(text) + len(word)))
        text += word + separator
    return text, spans


@settings(max_examples=200, deadline=None)
@given(_document(), st.data())
def test_a_quote_cutting_a_word_is_refused(
    doc: tuple[list[str], list[str]], data: st.DataObject
) -> None:
    words = doc[0]
    text, spans = _layout(*doc)
    k = data.draw(st.integers(0, len(words) - 2))
    cut_start = data.draw(st.booleans())
    a, b = spans[k]
    if cut_start:  # starts inside word k, runs at least through word k + 1
        start = data.draw(st.integers(a + 1, b - 1))
        end = data.draw(st.integers(spans[k + 1][1], len(text)))
    else:  # starts at word k's start or earlier boundary, ends inside word k + 1
        start = a
        c, d = spans[k + 1]
        end = data.draw(st.integers(c + 1, d - 1))
    quote = text[start:end]
    check = Verifier(DictTexts(text)).check(_sid(text), quote)
    assert not check.verified, (text, quote, check)


@settings(max_examples=200, deadline=None)
@given(_document(), st.data(), st.sampled_from(["same", "upper", "lower", "spaces", "straight"]))
def test_a_quote_on_word_boundaries_verifies_and_shows_the_source(
    doc: tuple[list[str], list[str]], data: st.DataObject, change: str
) -> None:
    text, spans = _layout(*doc)
    first = data.draw(st.integers(0, len(spans) - 1))
    last = data.draw(st.integers(first, len(spans) - 1))
    start, end = spans[first][0], spans[last][1]
    quote = text[start:end]
    quote = {
        "same": quote,
        "upper": quote.upper(),
        "lower": quote.lower(),
        "spaces": quote.replace(" ", "\n  "),
        "straight": quote.replace("\u201c", '"').replace("\u201d", '"'),
    }[change]
    check = Verifier(DictTexts(text)).check(_sid(text), quote)
    assert check.verified, (text, quote, check.reason)
    assert (check.start, check.end) == (start, end)
    assert check.span == text[start:end]
    assert normalize_quote(check.span) == normalize_quote(quote)
