"""From sentences to claim candidates ("units"): what is usable, the quotes, the claim text, a score.

A unit is one sentence of the chunk that can stand as a claim: its quotes are verbatim slices of
the chunk (one quote, or up to five clause pieces of a sentence longer than a quote may be), its
claim text is the sentence itself with whitespace collapsed and markdown emphasis dropped, so
it says nothing the quotes don't.

Sentences are left out when they are not statements a reader can use out of context: questions,
salutations and thanks, markup, links and fragments, and anything that touches a sanitizer flag
(:func:`affidavit.sources.sanitizer.scan`). An instruction flag takes its whole line with it, a
chat-role block (``<system>...</system>``) is dropped whole, and so is any line that opens like a
chat transcript ("User:", "Assistant:"): a planted instruction never becomes a claim, a title or
a summary.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from ..sources.sanitizer import role_placeholder, scan
from .lexicon import (
    ANAPHORIC_STARTS,
    BOILERPLATE,
    GENERIC_NAMES,
    SALUTATION_WORDS,
    STOPWORDS,
    words,
)
from .segment import MAX_CLAIM, MAX_QUOTE, MIN_QUOTE, Segmented, Sentence, clause_pieces, collapse

MIN_CHARS = 24
"""Shortest sentence (collapsed) the engine keeps ("-C  list entries by columns" is 27); shorter
ones only when nothing else is left."""
MIN_CHARS_FALLBACK = 20
MIN_WORDS = 5

WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’.-]*[A-Za-z0-9]|[A-Za-z0-9]")
_ROLE_BLOCK = re.compile(
    r"<\s*(system|assistant|user|developer|tool|human|instructions?)\b[^>]*>.*?(?:</\s*\1\s*>|\Z)",
    re.IGNORECASE | re.DOTALL,
)
_ROLE_LINE = re.compile(
    r"(?im)^[ \t>*#-]*(?:user|assistant|system|human|ai|bot|model|developer)\s*:.*$"
)
_MARKUP = re.compile(r"[<>{}|`~]|\]\(|\[\[|\]\]|https?://|www\.", re.IGNORECASE)
_PLACEHOLDER = re.compile(r"(?<![\w<])<([a-z][a-z0-9]*(?:[-_.][a-z0-9]+)*)>(?![\w>])")
"""A reference manual's placeholder in prose ("since <commit> are discarded", "<tree-ish>"):
one lower-case name in angle brackets, nothing glued to either side."""
_LITERAL_SOURCE = re.compile(
    r"\.(?:html?|xhtml|txt|text|rst|pdf|docx|odt|pptx|epub|[1-9][a-z]*(?:\.gz)?)$", re.IGNORECASE
)
"""Source names whose stored text shows "<name>" as a reader does: HTML (its "&lt;" decoded),
plain text, reStructuredText, man pages, PDF and office files. Not markdown, where "<name>" is a
raw HTML tag a renderer hides, nor a source whose kind its name doesn't tell."""
_NOT_PLACEHOLDER = words(
    # chat roles (the sanitizer's role tags): a planted "<system>" is never a placeholder
    "system assistant user developer tool human instruction instructions ai bot model "
    # HTML, SVG and MathML elements: markup, not a name a reader is shown
    "a abbr acronym address applet area article aside audio b base basefont bdi bdo bgsound big "
    "blink blockquote body br button canvas caption center circle cite code col colgroup data "
    "datalist dd del details dfn dialog dir div dl dt em embed fieldset figcaption figure font "
    "footer form frame frameset g h1 h2 h3 h4 h5 h6 head header hgroup hr html i iframe image img "
    "input ins isindex kbd keygen label legend li line link listing main map mark marquee math "
    "menu menuitem meta meter multicol nav nextid nobr noembed noframes noscript object ol "
    "optgroup option output p param path picture plaintext polygon portal pre progress q rb rect "
    "rp rt rtc ruby s samp script search section select slot small source spacer span strike "
    "strong style sub summary sup svg table tbody td template text textarea tfoot th thead time "
    "title tr track tt u ul use var video wbr xmp"
)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f\u2028\u2029]")
_EMPHASIS = re.compile(r"(?<![\w*])(\*{1,3})(?=[^\s*])([^*\n]*?[^\s*])\1(?![\w*])")
"""Markdown emphasis in pairs ("*very*", "**bold**"); a lone or inner "*" ("2**19937-1",
"10*1024") is the text's own and stays."""
_UNDERSCORE = re.compile(r"(?<!\w)_([^_\n]+?)_(?!\w)")
"""Markdown emphasis with underscores ("_word_"); names from code ("__init__") stay whole."""
_REFERENCE = re.compile(
    r"\[\s*(?:note\s+|n\s+)?(?:\d{1,3}|[a-z])\s*\]|\[(?:citation|clarification) needed\]",
    re.IGNORECASE,
)
_TRAILING_REFERENCE = re.compile(
    r"(?:\[\s*(?:note\s+|n\s+)?(?:\d{1,3}|[a-z])\s*\]|\[(?:citation|clarification) needed\])+$",
    re.IGNORECASE,
)
_YEAR = re.compile(r"\b(?:1[5-9]\d\d|20\d\d)\b")
_DIGIT = re.compile(r"\d")
_QUESTION = re.compile(r"""\?["'”’)\]]*$""")
_PLEASE = re.compile(r"\bplease\b", re.IGNORECASE)
_QUOTED_MARK = re.compile(r"[\"“'‘][^\w\s\"“”'‘’]{1,3}[\"”'’]")
"""A bracket or other mark named in quotes ('the closing ")"'): text, not punctuation."""
_OPTION = re.compile(r"-{1,2}[A-Za-z0-9][\w-]*[=,\[\s]")
"""A command-line option opening its description: "-a, --all  do not ignore entries..."."""
_IDENTIFIER = re.compile(r"[a-z_][\w]*(?:\.[\w]+|_[\w]*|\(\))+[\w.]*(?:\(\))?\s+[a-z]")
_NUMERAL_START = re.compile(r"[$€£]?\d[\d,]*(?:\.\d+)?%?\s+([a-z]+)\b")
"""A sentence opening with its number and a noun: "116,662 cases have been reported." (not a cut
when the word after the number is no function word: "1998 and was sold" is one)."""
_FIRST_WORD = re.compile(r"([a-z][\w.+-]*[a-z0-9+])(?=[\s,:])")
_ANAPHORA = words("it this these those they them he she such")
_SALUTATION_EXTRA = words(
    "distinguished honored honorable fellow my our dear chief justice first lady second gentleman "
    "vice house united states cabinet"
)


@dataclass(frozen=True)
class Unit:
    """One claim candidate: a sentence, its quotes (offsets into the chunk), its text, its score."""

    sentence: Sentence
    start: int
    end: int
    quotes: tuple[tuple[int, int], ...]
    text: str
    tokens: tuple[str, ...]
    score: float

    @property
    def index(self) -> int:
        return self.sentence.index


def excluded_regions(chunk: str, flagged: Sequence[tuple[int, int]] = ()) -> list[tuple[int, int]]:
    """Spans of ``chunk`` no claim may quote: sanitizer flags (its own, and ``flagged``: the
    source's stored flags, such as hidden or struck-through text, as offsets into the chunk), and
    around instructions their lines. The chunk is scanned once for both of the engine's passes
    (its units, its hidden headings)."""
    return list(_excluded(chunk, tuple((a, b) for a, b in flagged)))


@lru_cache(maxsize=8)
def _excluded(chunk: str, flagged: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
    regions: list[tuple[int, int]] = [(a, max(b, a + 1)) for a, b in flagged]
    for flag in scan(chunk):
        start, end = flag.start, max(flag.end, flag.start + 1)
        if flag.kind == "instruction":
            start = chunk.rfind("\n", 0, start) + 1
            newline = chunk.find("\n", end)
            end = len(chunk) if newline < 0 else newline
        regions.append((start, end))
    for match in _ROLE_BLOCK.finditer(chunk):
        tag = chunk.find(">", match.start()) + 1
        if not role_placeholder(chunk, match.start(), tag):  # "difftool.<tool>.cmd" is a name
            regions.append(match.span())
    for match in _ROLE_LINE.finditer(chunk):
        regions.append(match.span())
    regions.sort()
    return tuple(regions)


def _overlaps(regions: list[tuple[int, int]], start: int, end: int) -> bool:
    return any(a < end and start < b for a, b in regions)


def claim_text(raw: str) -> str:
    """The claim text of a quoted passage: whitespace collapsed, markdown emphasis and reference
    marks ("[1]", "[note 2]", "[citation needed]") removed."""
    # each pattern needs its marker: a text without it is left as it is
    text = _EMPHASIS.sub(r"\2", raw) if "*" in raw else raw
    text = _UNDERSCORE.sub(r"\1", text) if "_" in text else text
    text = _REFERENCE.sub("", text) if "[" in text else text
    return collapse(text)


def _strip_salutation(chunk: str, start: int, end: int) -> int:
    """Where the sentence starts once an opening address ("Mr. Speaker, ...:") is cut off."""
    colon = chunk.find(": ", start, min(end, start + 400))
    if colon < 0:
        return start
    words = [w.lower().strip(".,;") for w in chunk[start:colon].split()]
    if not words or len(words) > 60:
        return start
    if not any(w in SALUTATION_WORDS for w in words):
        return start
    known = sum(
        w in SALUTATION_WORDS or w in STOPWORDS or w in _SALUTATION_EXTRA or w[:1].isupper()
        for w in chunk[start:colon].replace(";", " ").split()
    )
    if known < 0.8 * len(words):
        return start
    rest = colon + 2
    while rest < end and chunk[rest].isspace():
        rest += 1
    return rest


def shows_placeholders(source_name: str) -> bool:
    """A source of this name shows "<commit>" to its reader as written (:data:`_LITERAL_SOURCE`)."""
    return _LITERAL_SOURCE.search(source_name) is not None


def _without_placeholders(text: str) -> str:
    """``text`` with each placeholder ("<commit>") a plain word, unless the sentence also holds
    a closing tag ("</commit>": an element, not a placeholder)."""
    if "</" in text:
        return text
    return _PLACEHOLDER.sub(
        lambda m: m.group(0) if m.group(1) in _NOT_PLACEHOLDER else m.group(1), text
    )


def rejection(text: str, names: frozenset[str] = frozenset(), placeholders: bool = False) -> str:
    """Why the collapsed sentence ``text`` can't be a claim, or "" if it can. ``names``: lower-case
    names the document is about (a command's, from its title: "grep", "sed"), which may start a
    sentence ("grep searches for PATTERNS in each FILE."). ``placeholders``: the source shows
    "<commit>" as written (:func:`shows_placeholders`), so a manual's placeholder in prose is a
    word, not markup ("Any changes to tracked files in the working tree since <commit> are
    discarded."); an HTML element or a chat role in brackets stays markup."""
    if placeholders and "<" in text:
        text = _without_placeholders(text)
    if _MARKUP.search(text):
        return "markup"
    if _CONTROL.search(text):
        return "control"
    if _QUESTION.search(text):
        return "question"
    if text.endswith((",", ";")) or (text.endswith(":") and len(text.split()) < 6):
        return "fragment"  # "To create one, run the venv module as a script:" is kept
    if _PLEASE.search(text):
        return "request"
    lower = text.lower()
    if any(fragment in lower for fragment in BOILERPLATE):
        return "boilerplate"
    first = next((c for c in text if c.isalpha()), "")
    named = _FIRST_WORD.match(text)
    if not first or (
        first.islower()
        and not _IDENTIFIER.match(text)
        and not _OPTION.match(text)
        and not (named and named.group(1) in names)
        and not _opens_with_number(text)
    ):
        return "fragment"  # a lower-case start, unless a name from code: "shutil.rmtree() ..."
    bare = _QUOTED_MARK.sub('""', text)  # 'after the closing ")"' names a bracket, opens none
    if bare.count("(") != bare.count(")") or bare.count("[") != bare.count("]"):
        return "fragment"
    if text.count('"') % 2:
        return "fragment"
    return ""


def _opens_with_number(text: str) -> bool:
    """``text`` opens with a number, then a content word, and has a few words more."""
    match = _NUMERAL_START.match(text)
    return match is not None and match.group(1) not in STOPWORDS and len(text.split()) >= 4


_NOT_PROPER = GENERIC_NAMES | STOPWORDS
_FIRST_PERSON = frozenset({"I", "my", "me", "My"})


def _base_score(text: str, tokens: tuple[str, ...], sentence: Sentence) -> float:
    alpha = [t for t in tokens if t[0].isalpha()]
    n = len(tokens)
    if n < 8:
        length = n / 8
    elif n <= 40:
        length = 1.0
    else:
        length = max(0.2, 1.0 - (n - 40) / 50)
    score = length
    if _DIGIT.search(text):
        score += 0.3
    if _YEAR.search(text):
        score += 0.2
    lower = list(map(str.lower, alpha))
    proper = sum(
        1
        for t, w in zip(alpha[1:], lower[1:], strict=True)
        if t[0].isupper() and w not in _NOT_PROPER
    )
    score += 0.15 * min(proper, 4)
    content = len(lower) - sum(map(STOPWORDS.__contains__, lower))
    if alpha:
        score += content / len(alpha) - 0.5
    head = lower[0] if alpha else ""
    if head in ANAPHORIC_STARTS:
        score -= 0.4
    elif any(w in _ANAPHORA for w in lower[1:5]):
        score -= 0.2
    if text.endswith("!"):
        score -= 0.5
    first_person = sum(map(_FIRST_PERSON.__contains__, alpha))
    score -= 0.1 * min(first_person, 3)
    if sentence.first_in_block:
        score += 0.1
    return score


def build_units(
    chunk: str,
    segmented: Segmented,
    minimum: int = MIN_CHARS,
    flagged: Sequence[tuple[int, int]] = (),
    names: frozenset[str] = frozenset(),
    min_words: int = MIN_WORDS,
    placeholders: bool = False,
) -> list[Unit]:
    """Every usable sentence of ``chunk`` as a scored :class:`Unit`, in document order; none
    that overlaps a sanitizer flag or a ``flagged`` span. ``names``, ``placeholders``: see
    :func:`rejection`."""
    regions = excluded_regions(chunk, flagged)
    units: list[Unit] = []
    for sentence in segmented.sentences:
        start = _strip_salutation(chunk, sentence.start, sentence.end)
        end = sentence.end
        trailing = _TRAILING_REFERENCE.search(chunk, start, end)
        if trailing:
            end = trailing.start()
        raw = chunk[start:end]
        if len(raw) < MIN_QUOTE or _overlaps(regions, start, end):
            continue
        text = claim_text(raw)
        if len(text) < minimum or len(text) > MAX_CLAIM or rejection(text, names, placeholders):
            continue
        tokens = tuple(WORD.findall(text))
        if len(tokens) < min_words:
            continue
        if len(raw) <= MAX_QUOTE:
            quotes: tuple[tuple[int, int], ...] = ((start, end),)
        else:
            pieces = clause_pieces(chunk, start, end)
            if pieces is None or len(pieces) > 5:
                pieces = comma_pieces(chunk, start, end)
            if pieces is None or len(pieces) > 5:
                continue
            quotes = tuple(pieces)
        units.append(
            Unit(sentence, start, end, quotes, text, tokens, _base_score(text, tokens, sentence))
        )
    _add_keyword_weight(units)
    return units


def comma_pieces(chunk: str, start: int, end: int) -> list[tuple[int, int]] | None:
    """Cut a sentence no clause boundary cuts short enough at commas, brackets or, last, spaces:
    the pieces are consecutive quotes of one claim (each verbatim, at most :data:`MAX_QUOTE`
    and at least :data:`MIN_QUOTE` characters), so a long sentence is quoted whole, not lost."""
    pieces: list[tuple[int, int]] = []
    at = start
    while end - at > MAX_QUOTE:
        window = chunk[at : at + MAX_QUOTE + 1]
        cut = None
        for pattern in (re.compile(r",\s+"), re.compile(r"\s+")):
            found = [m for m in pattern.finditer(window) if m.start() >= MIN_QUOTE]
            if found:
                cut = found[-1]
                break
        if cut is None:
            return None
        pieces.append((at, at + cut.start()))
        at += cut.end()
    if end - at < MIN_QUOTE:
        return None
    pieces.append((at, end))
    return pieces


def _add_keyword_weight(units: list[Unit]) -> None:
    """Raise the score of units whose content words recur in the chunk (its key terms)."""
    counts: Counter[str] = Counter()
    contents = []
    for unit in units:
        content = [w for w in map(str.lower, unit.tokens) if w not in STOPWORDS]
        contents.append(content)
        counts.update(set(content))
    if not counts:
        return
    logs = {w: math.log(count) for w, count in counts.items() if count > 1}
    for i, unit in enumerate(units):
        content = contents[i]
        if not content:
            continue
        weight = sum([logs[w] for w in content if w in logs]) / len(unit.tokens)
        units[i] = Unit(
            unit.sentence,
            unit.start,
            unit.end,
            unit.quotes,
            unit.text,
            unit.tokens,
            round(unit.score + 0.6 * weight, 6),
        )
