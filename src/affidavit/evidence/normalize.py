"""Normalisation of source text and quotes, with a map back to the original offsets (SPEC §3 W3).

A quote is "found verbatim" when its normalised form is a substring of the normalised source text
that starts and ends on word boundaries (the verifier checks those, see
:mod:`affidavit.evidence.verify`). The normalisations are exactly these, and nothing more (dashes and punctuation must still match):

1. Unicode NFKC, applied per cluster (a base character with its combining marks), so precomposed
   and decomposed forms agree, except the compatibility folds that can change what a text says:
   superscripts, subscripts, fractions, circled, squared, small and vertical forms keep their
   canonical (NFC) form, and so does any other compatibility character that NFKC would turn into a
   digit (``⒈``, mathematical digits); full-width and half-width forms and ligatures fold
   (``ｆｕｌｌ`` is ``full``, ``ﬁ`` is ``fi``), since they only change how a text looks;
2. case, by ``str.casefold``;
3. quote marks: curly single quotes and apostrophes (``‘ ’ ‚ ‛``) are ``'``, curly double quotes
   (``“ ” „ ‟``) are ``"``;
4. whitespace: every run of whitespace becomes one space, except a single no-break, figure or
   thin space between two digits, a thousands separator, which becomes U+202F (``1 500`` written
   with one is a single number);
5. markdown emphasis: ``*`` and ``_`` are removed, except between two word characters
   (``2*3``, ``snake_case``), where removing them would join two words into one; ``~`` is never
   removed, so a strikethrough ``~~`` stays in the text and no quote can straddle it;
6. markdown links keep only their visible text: ``[text](url)``, ``[text](url "title")``,
   ``![alt](url)``, ``[[target]]`` and ``[[target|label]]``;
7. invisible characters (Unicode category Cf: soft hyphen, zero-width characters, bidi controls,
   BOM, ...) are removed, except between two word characters, where they stay (and count as part of
   the word): ``1\u200b500`` is neither ``1500`` nor ``1`` and ``500``.

Normalisation never joins two letters or digits across a character it removes: what it removes
sits next to a space, punctuation or the end of the text.

:func:`normalize` returns the normalised text together with ``origin``, the offset in the original
text of every normalised character, so that a match in normalised text maps back to the exact
original passage (:meth:`Normalized.span`).

Speed: ASCII runs, the bulk of most sources, are lowered with ``str.lower`` (which equals NFKC +
casefold on ASCII) and mapped with ``array.extend(range(...))``; so are runs of letters from a few
big scripts that fold one-to-one (CJK, kana, Hangul, Cyrillic, ...). Only the other characters
take the per-cluster path. Links, emphasis and whitespace are then rewritten by regex passes that
compose the offset map with array slices, so the cost per character stays in C.
"""

from __future__ import annotations

import re
import unicodedata
from array import array
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TypeAlias

__all__ = ["Normalized", "normalize", "normalize_quote", "normalize_text"]

#: Array typecode for offset maps: the smallest unsigned type that holds at least 32 bits.
_TYPECODE = "I" if array("I").itemsize >= 4 else "L"

#: Characters that fold one-to-one with ``str.casefold`` alone: NFKC leaves them (and their case
#: folds) unchanged, they are not Cf, not combining marks and never the second part of a
#: composition. ASCII, common punctuation and the letters of some big scripts; everything else
#: (e.g. ß, ligatures, full-width forms, combining marks, Cf) takes the per-cluster path.
_SIMPLE = (
    "\x00-\x7f"
    "\xc0-\xd6\xd8-\xde\xe0-\xf6\xf8-\xff"  # Latin-1 letters but ß
    "\u2013\u2014\u2018\u2019\u201c\u201d\u2022"  # dashes, curly quotes, bullet
    "\u0391-\u03a9\u03b1-\u03c9"  # Greek letters without accents
    "\u0400-\u045f"  # Cyrillic basic letters
    "\u05d0-\u05ea"  # Hebrew letters
    "\u0621-\u063a\u0641-\u064a"  # Arabic letters
    "\u0e01-\u0e30"  # Thai consonants
    "\u3001\u3002\u3041-\u3096\u30a1-\u30fa"  # CJK comma and full stop, Hiragana, Katakana
    "\u3400-\u4dbf\u4e00-\u9fff"  # CJK ideographs
    "\uac00-\ud7a3"  # Hangul syllables
)
_COMPLEX = re.compile(f"[^{_SIMPLE}]+")

# [[target]] / [[target|label]], then [text](url), [text](<url>), [text](url "title"); the "!" of
# ![alt](url) is picked up by _link_edits, so that every match starts with a literal "[" (fast).
# Every repetition is either bounded or made of disjoint alternatives, so matching stays linear.
_LINK = re.compile(
    r"\[\[(?P<target>[^\[\]|\n]{1,500}?)(?:\|(?P<label>[^\[\]\n]{0,500}?))?\]\]"
    r"|\[(?P<text>[^\[\]]{0,1000})\]"
    r"\(\s*(?:<[^<>\n]*>|(?:[^\s()]|\([^\s()]*\))*)"
    r"(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'))?\s*\)"
)
# Runs of emphasis characters (``~`` is never removed: a strikethrough boundary must stay).
_EMPHASIS = re.compile(r"[*_]+")
# Whitespace runs other than a lone " " (already normal): keeps the number of matches low.
# The explicit class of non-space whitespace (what str.isspace accepts) scans faster than [^\S ].
_WHITESPACE = re.compile(
    r"[\t-\r\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]\s*| \s+"
)

#: Characters that later passes remove or merge: emphasis markers and whitespace.
_SPACES = "".join(c for c in map(chr, range(0x3001)) if c.isspace())  # all of str.isspace()
_VANISHING = "*_" + _SPACES

#: Curly quote marks and what they fold to (one character each, so offsets stay one-to-one).
_QUOTE_MARKS = str.maketrans("\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u201f", "'" * 4 + '"' * 4)

#: No-break, figure and thin spaces: between two digits they separate thousands (``1\u202f500``)
#: and become one narrow no-break space, which keeps the number whole; elsewhere a space.
_NUMBER_SPACES = frozenset("\u00a0\u2007\u2009\u202f")

#: Compatibility tags (``unicodedata.decomposition``) whose folds change what a text says.
_MEANINGFUL_TAGS = frozenset(
    ["<super>", "<sub>", "<fraction>", "<circle>", "<square>", "<small>", "<vertical>"]
)
#: Compatibility tags whose folds only change how a text looks, digits included.
_SHAPE_TAGS = frozenset(["<wide>", "<narrow>"])

#: Link rewriting is repeated for nested syntax such as ``[![alt](img)](url)``, at most this often.
_LINK_PASSES = 3


@dataclass(frozen=True)
class Normalized:
    """Normalised text plus the map from each normalised character back to the original text.

    ``origin[i]`` is the offset in the original text of the cluster that produced ``text[i]``;
    ``len(origin) == len(text) + 1`` and the last entry is ``len(original)``. ``origin`` never
    decreases. ``cluster_ends`` maps the start of every original cluster longer than one character
    (a base with combining marks, a whitespace run) to its end; other clusters end one past start.
    ``link_opens`` maps the original offset of the first visible character of a link's text to
    where the link syntax starts, and ``link_closes`` the end of its last visible character to where
    the syntax ends, so that a span covering a link's text edge takes in its syntax.
    """

    text: str
    origin: array[int]
    cluster_ends: Mapping[int, int] = field(default_factory=dict, repr=False, compare=False)
    link_opens: Mapping[int, int] = field(default_factory=dict, repr=False, compare=False)
    link_closes: Mapping[int, int] = field(default_factory=dict, repr=False, compare=False)
    original: str = field(default="", repr=False, compare=False)
    """The text that was normalised (what offsets from :meth:`span` index into)."""

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Return the original ``[a, b)`` that produced the normalised ``text[start:end]``.

        ``a`` is where the cluster of ``text[start]`` begins; ``b`` is where the cluster of
        ``text[end - 1]`` ends, so an expanded ligature or a base with its combining marks is
        covered whole. Removed characters just outside the match (emphasis markers, invisible
        characters) are not included, except link syntax: a span that starts at the first
        character of a link's text starts at the link's ``[`` (or ``![``), and one that ends at its
        last character ends after the closing ``)`` or ``]]``. The original passage then
        normalises to the same text whenever the span does not cut a link's text.
        """
        origin = self.origin
        if not 0 <= start <= end <= len(self.text):
            raise ValueError(f"span [{start}, {end}) is outside 0..{len(self.text)}")
        a = origin[start]
        if start == end:
            return a, a
        if a in self.link_opens and (start == 0 or origin[start - 1] != a):
            a = self.link_opens[a]
        last = origin[end - 1]
        b = self.cluster_ends.get(last, last + 1)
        if b in self.link_closes and origin[end] != last:
            b = self.link_closes[b]
        return a, b


def normalize(text: str) -> Normalized:
    """Normalise ``text`` for quote matching (see the module docstring) and map it back."""
    folded, origin, ends = _fold(text)
    opens: dict[int, int] = {}
    closes: dict[int, int] = {}
    for _ in range(_LINK_PASSES):
        if "[" not in folded:
            break
        before = len(folded)
        edits = _link_edits(folded, origin, ends, opens, closes)
        folded, origin = _splice(folded, origin, edits)
        if len(folded) == before:
            break
    folded, origin = _splice(folded, origin, _emphasis_edits(folded))
    folded, origin = _splice(folded, origin, _whitespace_edits(folded, origin, ends))
    return Normalized(folded, origin, ends, opens, closes, text)


def normalize_quote(quote: str) -> str:
    """Return the normalised form of ``quote``, without leading or trailing space.

    Equal to ``normalize(quote).text.strip(" ")`` (a differential test holds it to that), but
    built without the offset map, which a quote never needs: the same passes, each rewriting only
    the text.
    """
    if quote.isascii():
        folded = quote.lower()  # NFKC + casefold on ASCII; no quote marks to fold
        if "[" not in folded and "*" not in folded and "_" not in folded:
            # No link or emphasis pass applies; ASCII has no thousands separator (see below).
            if folded.isprintable() and "  " not in folded and folded[:1] != " " != folded[-1:]:
                return folded  # its only whitespace is single spaces inside: already normal
            return " ".join(folded.split())
    folded = _unspaced(quote)
    if folded.isascii() or not any(space in folded for space in _NUMBER_SPACES):
        # No thousands separator can come out: every whitespace run is one space, and the
        # runs at the ends go (str.split's whitespace is str.isspace, that of _WHITESPACE).
        return " ".join(folded.split())
    return _WHITESPACE.sub(_whitespace_kept, folded).strip(" ")


def normalize_text(text: str) -> str:
    """``normalize(text).text``, without building the map back to the original offsets."""
    return _WHITESPACE.sub(_whitespace_kept, _unspaced(text))


def _unspaced(text: str) -> str:
    """Passes 1-3 (fold, links, emphasis) on the text alone; whitespace is left as it is."""
    folded = _fold_text(text)
    for _ in range(_LINK_PASSES):
        if "[" not in folded:
            break
        before = len(folded)
        folded = _link_text(folded)
        if len(folded) == before:
            break
    if "*" in folded or "_" in folded:
        folded = _EMPHASIS.sub(_emphasis_kept, folded)
    return folded


def _fold_text(text: str) -> str:
    """The text :func:`_fold` returns, without its offsets (they are only built for the few
    characters that take the per-cluster path)."""
    if text.isascii():
        return text.lower()
    if _COMPLEX.search(text) is None:
        return _fold_simple(text)
    return _fold(text)[0]


def _link_text(text: str) -> str:
    """One pass of :func:`_link_edits` on the text alone: each link becomes its visible text."""
    pieces: list[str] = []
    pos = 0
    for match in _LINK.finditer(text):
        if match.group("text") is not None:
            group = "text"
        else:
            label = match.group("label")
            group = "label" if label and label.strip() else "target"
        start = match.start()
        if group == "text" and start > 0 and text[start - 1] == "!":
            start -= 1
        pieces.append(text[pos:start])
        pieces.append(match.group(group))
        pos = match.end()
    if not pieces:
        return text
    pieces.append(text[pos:])
    return "".join(pieces)


def _emphasis_kept(match: re.Match[str]) -> str:
    """What :func:`_emphasis_edits` leaves of one run of ``*`` and ``_``."""
    text = match.string
    start, stop = match.span()
    if start > 0 and stop < len(text) and _inside_word(text[start - 1], text[stop]):
        return match[0]
    return ""


def _whitespace_kept(match: re.Match[str]) -> str:
    """What :func:`_whitespace_edits` puts in place of one whitespace run."""
    text = match.string
    start, stop = match.span()
    if (
        stop == start + 1
        and text[start] in _NUMBER_SPACES
        and 0 < start < len(text) - 1
        and text[start - 1].isdigit()
        and text[stop].isdigit()
    ):
        return "\u202f"
    return " "


# --- pass 1: NFKC + casefold per cluster, invisible characters dropped ---------------------------


def _fold(text: str) -> tuple[str, array[int], dict[int, int]]:
    """Apply NFKC and casefold and drop Cf characters; return text, origin and cluster ends."""
    pieces: list[str] = []
    origin: array[int] = array(_TYPECODE)
    ends: dict[int, int] = {}
    pos = 0
    for match in _COMPLEX.finditer(text):
        start, stop = match.span()
        if start > pos:
            # The character just before the run may be the base of a combining mark:
            # hand it to the slow path together with the run.
            start -= 1
            pieces.append(_fold_simple(text[pos:start]))
            origin.extend(range(pos, start))
        _fold_clusters(text, start, stop, pieces, origin, ends)
        pos = stop
    pieces.append(_fold_simple(text[pos:]))
    origin.extend(range(pos, len(text) + 1))
    return "".join(pieces), origin, ends


def _fold_simple(run: str) -> str:
    """Fold a run of _SIMPLE characters: one output character per input character."""
    return run.lower() if run.isascii() else run.casefold().translate(_QUOTE_MARKS)


def _fold_clusters(
    text: str,
    start: int,
    stop: int,
    pieces: list[str],
    origin: array[int],
    ends: dict[int, int],
) -> None:
    """Fold ``text[start:stop]`` cluster by cluster, appending to ``pieces`` and ``origin``."""
    cluster = ""
    first = last = start
    index = start
    while index < stop:
        char = text[index]
        if unicodedata.category(char) == "Cf":
            # A run of invisible characters: dropped, unless it sits inside a word, where
            # dropping it would join two words (or numbers) into one; then it stays, one
            # output character per input character.
            run_end = index + 1
            while run_end < stop and unicodedata.category(text[run_end]) == "Cf":
                run_end += 1
            inside = index > 0 and run_end < len(text)
            if inside and _wordlike(text[index - 1]) and _wordlike(text[run_end]):
                if cluster:
                    _emit(_fold_cluster(cluster), first, last, pieces, origin, ends)
                    cluster = ""
                pieces.append(text[index:run_end])
                origin.extend(range(index, run_end))
            index = run_end
            continue
        if cluster and (unicodedata.combining(char) or not _separable(cluster, char)):
            cluster += char
            last = index + 1
            index += 1
            continue
        if cluster:
            _emit(_fold_cluster(cluster), first, last, pieces, origin, ends)
        cluster, first, last = char, index, index + 1
        index += 1
    if cluster:
        _emit(_fold_cluster(cluster), first, last, pieces, origin, ends)


def _wordlike(char: str) -> bool:
    """A letter, digit or combining mark: a character that belongs to a word."""
    return char.isalnum() or unicodedata.category(char)[0] == "M"


def _emit(
    out: str,
    first: int,
    last: int,
    pieces: list[str],
    origin: array[int],
    ends: dict[int, int],
) -> None:
    pieces.append(out)
    origin.extend([first] * len(out))
    if last - first > 1:
        ends[first] = last


def _separable(cluster: str, char: str) -> bool:
    """True if the starter ``char`` begins a new cluster: NFKC does not join it to ``cluster``."""
    code = ord(char)
    if (
        code < 0x300  # Latin-1 and Latin Extended: never the second part of a composition
        or 0x2000 <= code < 0x2070  # general punctuation: quote marks, dashes, spaces
        or 0x3400 <= code < 0xA000  # CJK ideographs
        or 0xAC00 <= code < 0xD7A4  # Hangul syllables (a trailing jamo may join them, not they)
    ):
        return True
    return _nfkc(cluster + char) == _nfkc(cluster) + _nfkc(char)


@lru_cache(maxsize=1 << 16)
def _nfkc(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


@lru_cache(maxsize=1 << 16)
def _fold_cluster(cluster: str) -> str:
    """NFKC, casefold, NFKC again (casefold can leave decomposed text), minus Cf characters.

    A cluster holding a character whose compatibility fold changes meaning (:func:`_protected`)
    gets NFC instead of NFKC, so ``⁶`` stays ``⁶`` and ``½`` stays ``½``.
    """
    if any(map(_protected, cluster)):
        out = unicodedata.normalize("NFC", unicodedata.normalize("NFC", cluster).casefold())
    else:
        out = _nfkc(_nfkc(cluster).casefold())
    if out.isascii():
        return out
    return "".join(c for c in out if unicodedata.category(c) != "Cf").translate(_QUOTE_MARKS)


@lru_cache(maxsize=1 << 12)
def _protected(char: str) -> bool:
    """True if NFKC would change what ``char`` says: a superscript, subscript, fraction, circled
    or squared form and the like, or any compatibility form that folds into a digit (but full-
    and half-width forms, which only change how it looks)."""
    if char in _NUMBER_SPACES:
        return True  # the whitespace pass decides (a thousands separator or a space)
    decomposition = unicodedata.decomposition(char)
    if not decomposition.startswith("<"):
        return False  # canonical (NFC already applies it) or none
    tag = decomposition.split(" ", 1)[0]
    if tag in _SHAPE_TAGS:
        return False
    if tag in _MEANINGFUL_TAGS:
        return True
    return any(c.isnumeric() for c in _nfkc(char))


# --- passes 2-4: links, emphasis, whitespace ------------------------------------------------------

#: One rewrite: ``text[start:stop]`` becomes ``replacement`` with offsets ``replacement_origin``.
_Edit: TypeAlias = "tuple[int, int, str, array[int]]"


def _link_edits(
    text: str,
    origin: array[int],
    ends: Mapping[int, int],
    opens: dict[int, int],
    closes: dict[int, int],
) -> Iterable[_Edit]:
    """Replace each link by its visible text; record where the syntax around that text lies."""
    for match in _LINK.finditer(text):
        if match.group("text") is not None:
            group = "text"
        else:
            label = match.group("label")
            group = "label" if label and label.strip() else "target"
        start, stop = match.span()
        if group == "text" and start > 0 and text[start - 1] == "!":
            start -= 1  # image syntax; a previous match never ends with "!"
        keep_start, keep_end = match.span(group)
        # The visible edges of the link text: emphasis and whitespace there are removed later.
        kept = text[keep_start:keep_end]
        first = keep_start + len(kept) - len(kept.lstrip(_VANISHING))
        last = keep_end - (len(kept) - len(kept.rstrip(_VANISHING)))
        if first < last:
            opening = origin[first]
            opens[opening] = min(opens.get(opening, opening), origin[start])
            end_of_last = ends.get(origin[last - 1], origin[last - 1] + 1)
            end_of_syntax = ends.get(origin[stop - 1], origin[stop - 1] + 1)
            closes[end_of_last] = max(closes.get(end_of_last, end_of_last), end_of_syntax)
        yield start, stop, kept, origin[keep_start:keep_end]


def _emphasis_edits(text: str) -> Iterable[_Edit]:
    """Delete every run of ``*`` and ``_`` but those between two word characters (``2*3``)."""
    if "*" not in text and "_" not in text:
        return
    empty: array[int] = array(_TYPECODE)
    last = len(text)
    for match in _EMPHASIS.finditer(text):
        start, stop = match.span()
        if start > 0 and stop < last and _inside_word(text[start - 1], text[stop]):
            continue
        yield start, stop, "", empty


def _inside_word(before: str, after: str) -> bool:
    """True if a removed character between ``before`` and ``after`` would join two words."""
    return (before.isalnum() or unicodedata.category(before) in _JOINING) and (
        after.isalnum() or unicodedata.category(after) in _JOINING
    )


#: Categories that continue a word besides letters and digits: combining marks, and the
#: invisible characters kept inside a word.
_JOINING = frozenset(["Mn", "Mc", "Me", "Cf"])


def _whitespace_edits(text: str, origin: array[int], ends: dict[int, int]) -> Iterable[_Edit]:
    """Collapse whitespace runs to one space; record where each run ends in the original.

    A run ends where its last character's cluster ends, but never past the origin of the next
    character (that cluster may have produced more than the whitespace, e.g. " " + U+0301).
    """
    last_index = len(text) - 1
    for match in _WHITESPACE.finditer(text):
        start, stop = match.span()
        first, last = origin[start], origin[stop - 1]
        run_end = min(ends.get(last, last + 1), origin[stop])
        if run_end > ends.get(first, first + 1):
            ends[first] = run_end
        space = " "
        if (
            stop == start + 1
            and text[start] in _NUMBER_SPACES
            and 0 < start < last_index
            and text[start - 1].isdigit()
            and text[stop].isdigit()
        ):
            space = "\u202f"  # a thousands separator: 1\u202f500 is one number, not 1 and 500
        yield start, stop, space, array(_TYPECODE, (first,))


def _splice(text: str, origin: array[int], edits: Iterable[_Edit]) -> tuple[str, array[int]]:
    """Apply non-overlapping, ordered edits to ``text`` and compose the offset map accordingly."""
    pieces: list[str] = []
    out: array[int] = array(_TYPECODE)
    pos = 0
    for start, stop, replacement, replacement_origin in edits:
        pieces.append(text[pos:start])
        out.extend(origin[pos:start])
        pieces.append(replacement)
        out.extend(replacement_origin)
        pos = stop
    if pos == 0 and not pieces:
        return text, origin
    pieces.append(text[pos:])
    out.extend(origin[pos:])
    return "".join(pieces), out
