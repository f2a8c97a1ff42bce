"""The fast paths of quote verification give exactly what the reference paths give (SPEC §3 W3).

Differential tests: the text-only quote normaliser against ``normalize(q).text``; the suffix-array
finder and the anchored word scan against a plain loop over ``str.find`` with the boundary rule as
it was written before any fast path; and the whole ``Verifier`` against a reference verifier built
from those, over true, false, word-cutting and adversarial quotes, ASCII and not.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from affidavit.evidence import Normalized, QuoteCheck, Verifier, normalize, normalize_quote, verify
from affidavit.evidence import index as suffix
from affidavit.evidence.normalize import normalize_text
from affidavit.evidence.verify import _CUT, _first_positions, _indexed_find, _not_found

needs_index = pytest.mark.skipif(not suffix.AVAILABLE, reason="pydivsufsort is not installed")


# --- the reference: the rules as written, one str.find at a time ---------------------------------


def _reference_cuts(text: str, position: int) -> bool:
    """``verify.cuts`` as it was before its fast path next to spaces (the rule, spelled out)."""
    if position <= 0 or position >= len(text):
        return False
    before, after = text[position - 1], text[position]
    if verify._word_char(before) and verify._word_char(after):
        unspaced = verify._UNSPACED.match(before) or verify._UNSPACED.match(after)
        return not (unspaced and before.isalnum() and after.isalnum())
    if after.isdigit() and before in verify._SIGNS:
        return True
    if position >= 2 and verify._joined(text, position - 1):
        return True
    return position + 1 < len(text) and verify._joined(text, position)


def _reference_find(haystack: str, needle: str) -> int:
    """The first occurrence that cuts no word; _CUT if it occurs only where it cuts; else -1."""
    position = haystack.find(needle)
    if position < 0:
        return -1
    while _reference_cuts(haystack, position) or _reference_cuts(haystack, position + len(needle)):
        position = haystack.find(needle, position + 1)
        if position < 0:
            return _CUT
    return position


def _reference_check(normalized: Normalized, source_id: str, quote: str) -> QuoteCheck:
    """What the verifier must answer, from ``normalize(text)`` and one str.find at a time."""
    text = normalized.original
    needle = normalize(quote).text.strip(" ")
    if not needle:
        reason = "quote is empty after normalisation; quote actual words from the source"
        return QuoteCheck(source_id, source_id, quote, False, None, None, reason)
    position = _reference_find(normalized.text, needle)
    if position < 0:
        reason = _not_found(normalized, source_id, needle, position == _CUT)
        return QuoteCheck(source_id, source_id, quote, False, None, None, reason)
    start, end = normalized.span(position, position + len(needle))
    return QuoteCheck(source_id, source_id, quote, True, start, end, "", text[start:end])


# --- texts and quotes ----------------------------------------------------------------------------

#: Words and separators that exercise every rule: numbers with joiners and signs, negating
#: hyphens, emphasis inside and around words, strikethrough, links, invisible and combining
#: characters, compatibility forms that must not fold, unspaced scripts, thousands separators.
_TOKENS = [
    "the", "The", "of", "war", "peace", "1500", "500", "1,500", "3.5", "-500", "+5", "±2",
    "10:30", "1990-1995", "1\u202f500", "1\u00a0500", "2*3", "23", "snake_case", "*bold*",
    "__strong__", "~~struck~~", "non-toxic", "toxic", "sugar-free", "way-everywhere", "unsafe",
    "safe", "10\u2076", "10⁶", "106", "½", "ﬁne", "fine", "ＦＵＬＬ", "cafe\u0301", "café",
    "zero\u200bwidth", "soft\u00adhyphen", "\u202ebidi", "漢字", "かな", "한국", "Ελλάδα",
    "Straße", "strasse", "'quoted'", "\u201cquoted\u201d", "it\u2019s", "it's", "[link](http://x)",
    "[[page|label]]", "[[target]]", "![alt](img.png)", "𝟙𝟚", "𝐀bold", "😀", "e\u0301te\u0301",
    "...", "—", "-", "(", ")", ",", ".", "!",
]  # fmt: skip
_SEPARATORS = [" ", " ", " ", "  ", "\n", "\n\n", "\t", ", ", ". ", "\u00a0", "\u3000", ""]


def _document(rng: random.Random, size: int) -> list[str]:
    parts: list[str] = []
    length = 0
    while length < size:
        part = rng.choice(_TOKENS) + rng.choice(_SEPARATORS)
        parts.append(part)
        length += len(part)
    return parts


def _quotes(rng: random.Random, parts: list[str], count: int) -> list[str]:
    """True quotes of whole parts, raw substrings that may cut a word, shifted and edited ones,
    fabricated ones, and ones that occur only late or very often."""
    text = "".join(parts)
    quotes: list[str] = []
    while len(quotes) < count:
        roll = rng.random()
        if roll < 0.35:  # whole parts, sometimes case-changed or re-spaced
            first = rng.randrange(len(parts) - 1)
            quote = "".join(parts[first : first + rng.randint(1, 12)])
            quote = rng.choice([quote, quote.upper(), quote.replace(" ", "\n")])
        elif roll < 0.65:  # any substring: straddles boundaries, cuts words and numbers
            start = rng.randrange(len(text) - 2)
            quote = text[start : start + rng.randint(1, 60)]
        elif roll < 0.75:  # a true passage with one token replaced: usually fabricated
            first = rng.randrange(len(parts) - 6)
            chosen = parts[first : first + 6]
            chosen[rng.randrange(6)] = rng.choice(_TOKENS) + " "
            quote = "".join(chosen)
        elif roll < 0.85:  # a single common token: many occurrences, most of them cut
            quote = rng.choice(["the", "500", "5", "a", "e", "1", "toxic", "safe", "漢", "s"])
        else:
            quote = rng.choice(_TOKENS) + rng.choice(_SEPARATORS) + rng.choice(_TOKENS)
        quotes.append(quote)
    quotes += ["never there xyzzy", "**", "", "   ", "\ud800 lone", "the the the the the"]
    return quotes


def _sid(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class _Texts:
    def __init__(self, *texts: str) -> None:
        self.texts = {_sid(text): text for text in texts}

    def resolve(self, ref: str) -> str | None:
        return ref if ref in self.texts else None

    def text(self, source_id: str) -> str:
        return self.texts[source_id]


# --- the quote normaliser ------------------------------------------------------------------------

_ALPHABET = (
    "aZ09 *_~[](|)!<>\"'-.,:/+" + "\u2018\u2019\u201c\u201d\u2010\u2011\u2013\u2212"
    "ÀéßΣςΐдЁא漢字かカ가각"
    + "\u0301\u0308\u3099\u1161\u11a8ﾞｶＡﬁ½⁶₂①㎏"
    + "\u200b\u00ad\u202e\ufeff\u2060"
    + "".join(c for c in map(chr, range(0x3001)) if c.isspace())
)


@settings(max_examples=600, deadline=None)
@given(st.text(alphabet=_ALPHABET, max_size=60))
def test_quote_normaliser_equals_the_reference(text: str) -> None:
    assert normalize_quote(text) == normalize(text).text.strip(" ")
    assert normalize_text(text) == normalize(text).text


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_quote_normaliser_equals_the_reference_on_any_text(text: str) -> None:
    assert normalize_quote(text) == normalize(text).text.strip(" ")
    assert normalize_text(text) == normalize(text).text


def test_quote_normaliser_on_every_whitespace_and_number_space() -> None:
    spaces = [c for c in map(chr, range(0x110000)) if c.isspace()]
    for space in spaces:
        for text in (f"1{space}500", f"a{space}b", f"{space}x{space}", f"1{space}{space}5"):
            assert normalize_quote(text) == normalize(text).text.strip(" "), repr(text)


def test_quote_normaliser_on_the_adversarial_tokens() -> None:
    rng = random.Random(5)
    for _ in range(1500):
        text = "".join(_document(rng, rng.randint(1, 80)))
        assert normalize_quote(text) == normalize(text).text.strip(" "), repr(text)
        assert normalize_text(text) == normalize(text).text


# --- the boundary rule's fast path ---------------------------------------------------------------


def test_cuts_equals_the_reference_at_every_position() -> None:
    rng = random.Random(11)
    for _ in range(20):
        text = normalize("".join(_document(rng, 400))).text
        for position in range(len(text) + 1):
            assert verify.cuts(text, position) == _reference_cuts(text, position), (text, position)


# --- the finders ---------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_word_scan_equals_the_reference(seed: int) -> None:
    rng = random.Random(seed)
    parts = _document(rng, 30_000)
    text = normalize("".join(parts)).text
    needles = [n for n in (normalize_quote(q) for q in _quotes(rng, parts, 500)) if n]
    assert _first_positions(text, needles) == [_reference_find(text, n) for n in needles]


@needs_index
@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_suffix_array_equals_the_reference(seed: int) -> None:
    rng = random.Random(seed)
    parts = _document(rng, 40_000)
    text = normalize("".join(parts)).text
    index = suffix.SuffixIndex(text)
    needles = [n for n in (normalize_quote(q) for q in _quotes(rng, parts, 600)) if n]
    assert [_indexed_find(index, text, n) for n in needles] == [
        _reference_find(text, n) for n in needles
    ]


@needs_index
def test_suffix_array_finds_the_first_anchored_of_many_cut_occurrences() -> None:
    # "500" occurs 3,000 times inside "1500" (cut) before its one anchored occurrence, and
    # "ab" more often than the suffix array's candidate limit.
    text = "1500 " * 3000 + "the 500 pounds " + "ab" * 2000 + " ab"
    index = suffix.SuffixIndex(text)
    for needle in ["500", "500 pounds", "ab", "1500 1500", "pounds ab", "b"]:
        assert _indexed_find(index, text, needle) == _reference_find(text, needle), needle


@needs_index
def test_suffix_array_offsets_are_characters_in_non_ascii_text() -> None:
    text = normalize("é漢😀 " * 5000 + "the needle here " + "ß" * 100).text
    index = suffix.SuffixIndex(text)
    assert _indexed_find(index, text, "the needle here") == text.index("the needle here")
    count, first = index.count("😀")
    assert index.positions(first, count)[:3] == [2, 6, 10]


# --- the verifier, end to end --------------------------------------------------------------------


@pytest.mark.parametrize("seed", [7, 8])
def test_verifier_equals_the_reference_verifier(seed: int) -> None:
    rng = random.Random(seed)
    parts = _document(rng, 50_000)
    text = "".join(parts)
    small_parts = _document(rng, 3_000)
    small = "".join(small_parts)
    texts = _Texts(text, small)
    quotes = _quotes(rng, parts, 450) + _quotes(rng, small_parts, 100)
    pairs = [(_sid(text), q) for q in quotes[:456]] + [(_sid(small), q) for q in quotes[456:]]
    normalized = {_sid(text): normalize(text), _sid(small): normalize(small)}
    expected = [_reference_check(normalized[s], s, q) for s, q in pairs]
    verifier = Verifier(texts)
    assert verifier.check_many(pairs) == expected  # 450 quotes: indexed at once, if installed
    assert verifier.check_many(pairs) == expected  # again, warm
    assert Verifier(texts).check_many(pairs[:5]) == expected[:5]  # a new verifier, shared cache
    assert [Verifier(texts).check(s, q) for s, q in pairs[:40]] == expected[:40]


# --- the keyed suffix array: one searchsorted for many needles -------------------------------

#: Texts with NULs (which the keys' padding could imitate), short needles (fit their key),
#: needles that end at the end of the text, non-ASCII and astral characters.
_KEY_TOKENS = [
    *_TOKENS,
    "\x00",
    "a\x00b",
    "ab\x00",
    "\x00\x00",
    "aaaaaaaa",
    "aaaaaaaab",
    "ÿ",
    "\x7f",
]


def _keyed_document(rng: random.Random, size: int) -> str:
    parts: list[str] = []
    length = 0
    while length < size:
        part = rng.choice(_KEY_TOKENS) + rng.choice(_SEPARATORS)
        parts.append(part)
        length += len(part)
    return "".join(parts)


def _keyed_needles(rng: random.Random, text: str, count: int) -> list[str]:
    needles: list[str] = []
    while len(needles) < count:
        start = rng.randrange(len(text))
        needle = text[start : start + rng.choice([1, 2, 3, 7, 8, 9, 15, 16, 17, 40])]
        if rng.random() < 0.1:
            needle = needle[:-1] + rng.choice("az\x00é")  # often absent
        if needle:
            needles.append(needle)
    tail = text[-rng.randint(1, 12) :]
    # A suffix shorter than its key is padded with NULs: a needle that is the end of the text and
    # a NUL or two has that suffix's key without occurring there.
    padded = [text[-1] + "\x00", text[-3:] + "\x00\x00", text[-1] + "\x00" * 8]
    return needles + padded + [tail, text[-1], text[:9], "\x00", "a\x00", "zzzzzzzzzzzzzzzz"]


@needs_index
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 6])
@pytest.mark.parametrize("mode", ["keyed", "keyed-sorted", "unkeyed"])
def test_keyed_runs_equal_the_reference(
    seed: int, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every occurrence of every needle, in order, from one searchsorted over all needles (sorted
    # first or not) or one sa_search each, against str.find; then the anchored first.
    if mode == "unkeyed":
        monkeypatch.setattr(suffix, "_KEYED_MAX_BYTES", 0)
    if mode == "keyed-sorted":
        monkeypatch.setattr(suffix, "_SORT_MIN_BYTES", 0)
    rng = random.Random(seed)
    text = _keyed_document(rng, rng.choice([30, 3_000, 20_000]))
    if seed % 2:
        text = normalize(text).text
    index = suffix.SuffixIndex(text)
    needles = _keyed_needles(rng, text, 400)
    for needle, found in zip(needles, index.occurrences(needles, 10**9), strict=True):
        expected = [m.start() for m in re.finditer(f"(?={re.escape(needle)})", text)]
        assert found == expected, needle
    for needle, found in zip(needles, index.occurrences(needles, 3), strict=True):
        expected = [m.start() for m in re.finditer(f"(?={re.escape(needle)})", text)]
        assert found == (None if len(expected) > 3 else expected), needle
    source = verify._Source(normalize(text))
    folded = source.normalized.text
    source.index = suffix.SuffixIndex(folded)
    assert source.first_positions(needles) == [_reference_find(folded, n) for n in needles]


@needs_index
@pytest.mark.parametrize("seed", [11, 12])
def test_verifier_on_keyed_sources_with_nul_and_short_quotes_equals_the_reference(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(suffix, "_SORT_MIN_BYTES", 0)  # the sorted searchsorted, on a small text
    rng = random.Random(seed)
    text = _keyed_document(rng, 40_000)
    texts = _Texts(text)
    normalized = normalize(text)
    quotes = _keyed_needles(rng, text, 350) + _quotes(rng, _document(rng, 2_000), 50)
    pairs = [(_sid(text), q) for q in quotes]
    expected = [_reference_check(normalized, _sid(text), q) for q in quotes]
    verifier = Verifier(texts)
    assert verifier.check_many(pairs) == expected  # 400 quotes: indexed at once
    assert verifier.check_many(pairs) == expected


def test_fast_records_are_the_dataclass() -> None:
    made = verify._check("s", "id", "q", True, 1, 5, "", "span")
    plain = QuoteCheck("s", "id", "q", True, 1, 5, "", "span")
    assert made == plain and hash(made) == hash(plain)
    assert dataclasses.asdict(made) == dataclasses.asdict(plain)
    assert set(vars(made)) == {f.name for f in dataclasses.fields(QuoteCheck)}
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.verified = False  # type: ignore[misc]


@settings(max_examples=600, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=60))
def test_ascii_quote_fast_path_equals_the_reference(text: str) -> None:
    assert normalize_quote(text) == normalize(text).text.strip(" ")
