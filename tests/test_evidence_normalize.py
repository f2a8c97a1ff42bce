"""Normalisation for quote matching (SPEC §3 W3): what may differ, what may not, the offset map."""

from __future__ import annotations

import random
import re
import sys
import unicodedata
from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from affidavit.evidence import Normalized, normalize, normalize_quote
from affidavit.evidence.normalize import _SIMPLE, _fold, _fold_clusters
from affidavit.evidence.verify import cuts


def _check_invariants(original: str, normalized: Normalized) -> None:
    origin = normalized.origin
    assert len(origin) == len(normalized.text) + 1
    assert origin[-1] == len(original)
    assert all(origin[i] <= origin[i + 1] for i in range(len(origin) - 1))
    assert all(0 <= origin[i] < len(original) for i in range(len(normalized.text)))


# --- what normalisation forgives -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Hello WORLD", "hello world"),
        ("Straße", "strasse"),
        ("one  two\n\nthree\t four\r\nfive", "one two three four five"),
        ("non\u00a0breaking\u2003em space", "non breaking em space"),
        ("*emphasis* and __bold__ and ***both***", "emphasis and bold and both"),
        ("_snake_case_name_", "snake_case_name"),
        ("~~struck~~ text", "~~struck~~ text"),
        (
            "\u201cquoted\u201d, it\u2019s \u2018so\u2019 \u201elow\u201f",
            '"quoted", it\'s \'so\' "low"',
        ),
        ("a [link text](http://x.org/a_b) here", "a link text here"),
        ('a [link text](http://x.org "Title") here', "a link text here"),
        ("see [wiki](https://en.wikipedia.org/wiki/Foo_(bar)) now", "see wiki now"),
        ("an ![alt text](img.png) image", "an alt text image"),
        ("[[page]] and [[page|the label]]", "page and the label"),
        ("[![badge](b.svg)](https://ci)", "badge"),
        ("\ufeffbom \u200bzero width\u200b bidi\u202e. end\u00ad", "bom zero width bidi. end"),
        ("ﬁne ﬂow", "fine flow"),
        ("ＦＵＬＬ ｗｉｄｔｈ １２３", "full width 123"),
        ("caf\u00e9", "caf\u00e9"),
        ("cafe\u0301", "caf\u00e9"),
        ("\u212b", "\u00e5"),  # ANGSTROM SIGN
        ("ｶﾞ", "ガ"),  # half-width kana and voiced mark compose under NFKC
    ],
)
def test_forgiven_differences(raw: str, expected: str) -> None:
    normalized = normalize(raw)
    assert normalized.text == expected
    _check_invariants(raw, normalized)


def test_precomposed_and_decomposed_agree() -> None:
    assert normalize_quote("R\u00e9sum\u00e9 \u00c5") == normalize_quote(
        "Re\u0301sume\u0301 A\u030a"
    )


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ("1990\u20131995", "1990-1995"),
        ("pause\u2014here", "pause-here"),
        ("Hello, world.", "Hello world"),
        ("a ~ b", "a  b"),
        ("[not a link] (x)", "not a link x"),
    ],
)
def test_unforgiven_differences(left: str, right: str) -> None:
    assert normalize_quote(left) != normalize_quote(right)


def test_normalize_quote_strips_outer_space() -> None:
    assert normalize_quote("  \n *Hello*  world \u200b ") == "hello world"
    assert normalize_quote("** __ \u200b") == ""


# --- what normalisation must not do (W3: no joins, no meaning-changing folds) --------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # a removed character between two word characters would join them: it stays
        ("2*3 metres", "2*3 metres"),
        ("**1**500 pounds", "1**500 pounds"),
        ("snake_case", "snake_case"),
        ("1\u200b500 pounds", "1\u200b500 pounds"),
        (
            "zero\u200b\u200bwidth soft\u00adhyphen bi\u202edi\u202c",
            "zero\u200b\u200bwidth soft\u00adhyphen bi\u202edi",
        ),
        ("word\u2060joiner\u2066isolate\u2069", "word\u2060joiner\u2066isolate"),
        # a no-break or thin space between digits separates thousands: the number stays whole
        ("1\u00a0500 and 2\u2009000 or 3\u202f000", "1\u202f500 and 2\u202f000 or 3\u202f000"),
        ("non\u00a0breaking 1\u00a0 500", "non breaking 1 500"),
        # compatibility forms that change what a text says keep their own form
        ("10\u2076 tonnes", "10\u2076 tonnes"),
        ("H\u2082O", "h\u2082o"),
        ("\u00bd cup, 1\u00bc miles", "\u00bd cup, 1\u00bc miles"),
        ("x\u00b2 and m\u00b3", "x\u00b2 and m\u00b3"),
        ("\u2460 first \u2488 second", "\u2460 first \u2488 second"),
        ("\U0001d7cf\U0001d7ce", "\U0001d7cf\U0001d7ce"),  # mathematical bold digits
        ("E=mc\u00b2\u2122", "e=mc\u00b2\u2122"),
        # strikethrough markers stay, in any number
        ("~~not open~~ to cruise ships", "~~not open~~ to cruise ships"),
        ("a~b ~~~ c", "a~b ~~~ c"),
    ],
)
def test_no_join_and_no_meaning_changing_fold(raw: str, expected: str) -> None:
    normalized = normalize(raw)
    assert normalized.text == expected
    _check_invariants(raw, normalized)


@pytest.mark.parametrize(
    ("source", "quote"),
    [
        ("2*3 metres", "23 metres"),
        ("106 tonnes", "10\u2076 tonnes"),
        ("10\u2076 tonnes", "106 tonnes"),
        ("\u00bd cup", "1/2 cup"),
        ("\u2488 rule", "1. rule"),
        ("1\u200b500", "1500"),
        ("H\u2082O", "h2o"),
    ],
)
def test_meaning_changing_difference_is_not_forgiven(source: str, quote: str) -> None:
    assert normalize_quote(quote) not in normalize(source).text


def test_strike_boundary_is_kept_where_a_quote_would_straddle_it() -> None:
    """``~~not open to cruise ships~~``: a quote reaching into or out of the struck text can't
    match across the marker (the span inside is the sanitizer's: flagged, quarantined)."""
    source = normalize("Port rules: ~~not open to cruise ships~~ open to all ferries.")
    for quote in [
        "rules: not open to cruise ships",
        "cruise ships open to all ferries",
        "Port rules: not open to cruise ships open to all ferries.",
    ]:
        assert normalize_quote(quote) not in source.text, quote
    inside = normalize_quote("not open to cruise ships")
    position = source.text.index(inside)
    assert source.text[position - 2 : position] == "~~"
    assert source.text[position + len(inside) :].startswith("~~")
    start, end = source.span(position, position + len(inside))
    assert source.original[start - 2 : start] == "~~" and source.original[end : end + 2] == "~~"


# --- the offset map ------------------------------------------------------------------------------


def _passage(original: str, fragment: str) -> str:
    normalized = normalize(original)
    needle = normalize_quote(fragment)
    position = normalized.text.index(needle)
    start, end = normalized.span(position, position + len(needle))
    return original[start:end]


@pytest.mark.parametrize(
    ("original", "fragment", "passage"),
    [
        ("Say HELLO  there", "hello there", "HELLO  there"),
        ("a *very* good day", "very good", "very* good"),
        ("a *very* good day", "a very", "a *very"),
        ("see [the docs](http://x) now", "the docs", "[the docs](http://x)"),
        ("see [the docs](http://x) now", "the do", "[the do"),
        ("see [*the docs*](http://x) now", "see the docs", "see [*the docs*](http://x)"),
        ("an ![alt](i.png)", "alt", "![alt](i.png)"),
        ("go to [[page|the label]].", "to the label.", "to [[page|the label]]."),
        ("see [the docs](http://x) now", "docs now", "docs](http://x) now"),
        ("the ﬁnal word", "fi", "ﬁ"),
        ("the ﬁnal word", "final", "ﬁnal"),
        ("cafe\u0301 au lait", "caf\u00e9", "cafe\u0301"),
        ("x\u200b\u200b y", "x y", "x\u200b\u200b y"),
        ("end of line\n\n\nnext", "line next", "line\n\n\nnext"),
    ],
)
def test_span_maps_back_to_the_original_passage(original: str, fragment: str, passage: str) -> None:
    assert _passage(original, fragment) == passage


def test_span_of_a_whitespace_run_covers_the_run() -> None:
    normalized = normalize("a \t\n b")
    assert normalized.text == "a b"
    assert normalized.span(1, 2) == (1, 5)


def test_span_rejects_out_of_range() -> None:
    normalized = normalize("abc")
    assert normalized.span(1, 1) == (1, 1)
    assert normalized.span(3, 3) == (3, 3)
    with pytest.raises(ValueError, match="outside"):
        normalized.span(2, 4)
    with pytest.raises(ValueError, match="outside"):
        normalized.span(2, 1)


def test_empty_text() -> None:
    normalized = normalize("")
    assert normalized.text == ""
    assert list(normalized.origin) == [0]


def test_big_text_is_normalised_correctly() -> None:
    rng = random.Random(7)
    words = ["Alpha", "beta", "*gamma*", "Δέλτα", "e\u0301cole", "ﬁre", "[[x|link]]", "zw\u200bsp"]
    words += ["2*3", "x\u00b2"]
    parts: list[str] = []
    size = 0
    while size < 2_000_000:
        word = rng.choice(words)
        parts.append(word)
        parts.append(rng.choice([" ", " ", "\n", "  "]))
        size += len(word) + 2
    original = "".join(parts)
    normalized = normalize(original)
    _check_invariants(original, normalized)
    expected = {
        "Alpha": "alpha",
        "beta": "beta",
        "*gamma*": "gamma",
        "Δέλτα": "δέλτα",
        "e\u0301cole": "\u00e9cole",
        "ﬁre": "fire",
        "[[x|link]]": "link",
        "zw\u200bsp": "zw\u200bsp",
        "2*3": "2*3",
        "x\u00b2": "x\u00b2",
    }
    assert normalized.text == " ".join(expected[word] for word in parts[::2]) + " "
    # A passage deep inside maps back exactly.
    needle = normalize_quote(" ".join(parts[200_001:200_020]))
    position = normalized.text.find(needle)
    start, end = normalized.span(position, position + len(needle))
    assert normalize_quote(original[start:end]) == needle


# --- properties ----------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_origin_invariants_hold_for_any_text(text: str) -> None:
    _check_invariants(text, normalize(text))


# Tokens that never interact with their neighbours: a random join of them is a random "document",
# and any run of whole tokens is a quote that has to be found again.
_TOKENS = [
    "word",
    "Word",
    "WORD",
    "ß",
    "ﬁ",
    "Ｗ",
    "é",
    "e\u0301",
    "\u00c5",
    "A\u030a",
    "İ",
    "ǰ",
    "'",
    "\u2019",
    "-",
    "\u2013",
    ".",
    ",",
    "7",
    "漢",
    "한",
    " ",
    "  ",
    "\n",
    "\t",
    "\u00a0",
    "\u3000",
    "*",
    "_",
    "~~",
    "\u200b",
    "\u00ad",
    "\u202e",
    "\ufeff",
    "[link](http://x)",
    "[[page|label]]",
    "[[target]]",
]

_documents = st.lists(st.sampled_from(_TOKENS), min_size=1, max_size=60)


@settings(max_examples=300, deadline=None)
@given(_documents, st.data())
def test_a_substring_is_found_and_maps_back(tokens: list[str], data: st.DataObject) -> None:
    original = "".join(tokens)
    first = data.draw(st.integers(0, len(tokens) - 1))
    last = data.draw(st.integers(first + 1, len(tokens)))
    quote = "".join(tokens[first:last])
    needle = normalize_quote(quote)
    normalized = normalize(original)
    _check_invariants(original, normalized)
    if not needle:
        return
    position = normalized.text.find(needle)
    assert position >= 0
    start, end = normalized.span(position, position + len(needle))
    assert normalize_quote(original[start:end]) == needle


_plain = st.lists(st.sampled_from([t for t in _TOKENS if "[" not in t]), min_size=1, max_size=60)


@settings(max_examples=300, deadline=None)
@given(_plain, st.data())
def test_every_span_of_whole_clusters_round_trips(tokens: list[str], data: st.DataObject) -> None:
    original = "".join(tokens)
    normalized = normalize(original)
    origin = normalized.origin
    # Cluster boundaries in the normalised text: where the origin moves on.
    bounds = [i for i in range(len(normalized.text) + 1) if i == 0 or origin[i] != origin[i - 1]]
    # ... that do not cut a word (a quote that does is refused by the verifier anyway).
    bounds = [i for i in bounds if not cuts(normalized.text, i)]
    start = data.draw(st.sampled_from(bounds))
    end = data.draw(st.sampled_from([b for b in bounds if b >= start]))
    a, b = normalized.span(start, end)
    assert normalize_quote(original[a:b]) == normalized.text[start:end].strip(" ")


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=80))
def test_normalisation_output_has_no_removed_characters(text: str) -> None:
    """Emphasis markers and invisible characters are left only inside a word: where removing them
    would join what they separate."""
    out = normalize(text).text
    assert "  " not in out
    for index, char in enumerate(out):
        if char.isspace() and char != " ":  # only a thousands separator, between two digits
            assert char == "\u202f" and out[index - 1].isdigit() and out[index + 1].isdigit()
    for match in re.finditer(f"[*_{_CF}]+", out):
        start, stop = match.span()
        assert start > 0 and stop < len(out), (text, out)
        assert _wordish(out[start - 1]) and _wordish(out[stop]), (text, out)


#: Every character of category Cf, as a regex class body.
_CF = "".join(re.escape(chr(c)) for c in range(0x110000) if unicodedata.category(chr(c)) == "Cf")


def _wordish(char: str) -> bool:
    return char.isalnum() or unicodedata.category(char) in ("Mn", "Mc", "Me", "Cf") or char in "*_"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=40))
def test_no_digit_comes_from_a_compatibility_form(text: str) -> None:
    """NFKC may fold width and ligatures, never make a digit out of a superscript, fraction,
    circled number or the like: every digit of the output is a digit of the input."""
    normalized = normalize(text)
    for index, char in enumerate(normalized.text):
        if char.isdecimal():
            source = text[normalized.origin[index]]
            assert source.isdecimal() and unicodedata.digit(source) == unicodedata.digit(char), (
                text,
                normalized.text,
            )


# --- the fast path -------------------------------------------------------------------------------


def test_fast_path_characters_fold_one_to_one() -> None:
    simple = re.compile(f"[{_SIMPLE}]")
    seconds = set()  # characters that can be the second part of a canonical composition
    for code in range(sys.maxunicode + 1):
        decomposition = unicodedata.decomposition(chr(code)).split()
        if len(decomposition) == 2 and not decomposition[0].startswith("<"):
            seconds.add(chr(int(decomposition[1], 16)))
    for char in filter(simple.match, map(chr, range(0x10000))):
        folded = char.casefold()
        assert len(folded) == 1, char
        assert unicodedata.normalize("NFKC", char) == char
        assert unicodedata.normalize("NFKC", folded) == folded
        assert unicodedata.category(char) != "Cf"
        assert unicodedata.combining(char) == 0
        assert char not in seconds


_MIXED = (
    "aZ \n*_~[](|)!" + "ÀéßΣςΐдЁא漢字かカ가각" + "\u0301\u0308\u3099\u1161\u11a8ﾞｶＡﬁ\u200b\u00ad"
)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=_MIXED, max_size=40))
def test_fast_path_agrees_with_the_cluster_path(text: str) -> None:
    pieces: list[str] = []
    origin: array[int] = array("I")
    ends: dict[int, int] = {}
    _fold_clusters(text, 0, len(text), pieces, origin, ends)
    folded, fast_origin, fast_ends = _fold(text)
    assert folded == "".join(pieces)
    assert list(fast_origin[:-1]) == list(origin)
    assert fast_ends == ends
