"""Facts in a sentence: numbers, dates and names — the parts two versions of a claim disagree on.

Used to tell a *changed fact* ("396 were diagnosed in Honolulu" vs "399 were diagnosed...") from a
restatement: two claims about the same subject (most of their other words shared) whose facts
differ on both sides are a contradiction candidate; if only one side has extra facts it refines
the other. No model, no network: regular expressions and the stemmer.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from ..words import STOPWORDS, stem

_TOKEN = re.compile(r"\d[\d,.]*\d|\d|[^\W\d_][^\W_]*(?:['’-][^\W\d_]+)*")
NUMBER_WORDS = frozenset(
    [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
        "twenty",
        "thirty",
        "forty",
        "fifty",
        "sixty",
        "seventy",
        "eighty",
        "ninety",
        "hundred",
        "thousand",
        "million",
        "billion",
        "trillion",
        "first",
        "second",
        "third",
        "fourth",
        "fifth",
        "sixth",
        "seventh",
        "eighth",
        "ninth",
        "tenth",
        "dozen",
        "half",
        "twice",
        "thrice",
        "once",
    ]
)
MONTHS = frozenset(
    [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
    ]
)
NEGATIONS = frozenset(["not", "no", "never", "none", "neither", "nor", "without", "cannot"])
# Capitalised words that start sentences or are common enough not to name anything.
NOT_NAMES = STOPWORDS | frozenset(
    [
        "the",
        "a",
        "an",
        "this",
        "that",
        "these",
        "those",
        "it",
        "its",
        "he",
        "she",
        "they",
        "we",
        "you",
        "i",
        "in",
        "on",
        "at",
        "of",
        "for",
        "by",
        "with",
        "as",
        "from",
        "to",
        "and",
        "or",
        "but",
        "if",
        "when",
        "while",
        "after",
        "before",
        "during",
        "since",
        "until",
        "his",
        "her",
        "their",
        "our",
        "my",
        "your",
        "mr",
        "mrs",
        "ms",
        "dr",
        "st",
        "lrb",
        "rrb",
    ]
)


@dataclass(frozen=True)
class Sentence:
    """A claim split into its facts and its context (the stems of every other content word)."""

    facts: frozenset[str]
    context: frozenset[str]
    negated: bool


def _number(token: str) -> str:
    """Canonical form of a numeric token: ``1,234`` and ``1234`` are the same fact."""
    plain = token.replace(",", "")
    if plain.count(".") == 1:
        whole, frac = plain.split(".")
        frac = frac.rstrip("0")
        return f"{whole}.{frac}" if frac else whole
    return plain


@lru_cache(maxsize=65536)
def analyse(text: str) -> Sentence:
    """Facts (numbers, number words, months, capitalised names) and context stems of ``text``."""
    norm = unicodedata.normalize("NFKC", text)
    facts: set[str] = set()
    context: set[str] = set()
    negated = False
    tokens = _TOKEN.findall(norm)
    for position, token in enumerate(tokens):
        lower = token.casefold()
        if lower in NEGATIONS or lower.endswith("n't"):
            negated = True
            continue
        if token[0].isdigit():
            facts.add("#" + _number(token))
        elif lower in NUMBER_WORDS or lower in MONTHS:
            facts.add("#" + lower)
        elif token[0].isupper() and lower not in NOT_NAMES and (position > 0 or len(token) > 1):
            if position == 0 and lower in STOPWORDS:
                continue
            facts.add("@" + lower)
        elif len(lower) >= 3 and lower not in STOPWORDS:
            context.add(stem(lower))
    return Sentence(frozenset(facts), frozenset(context), negated)


@dataclass(frozen=True)
class Comparison:
    """How two claims relate: shared subject, and the facts only one of them states."""

    similarity: float
    """Jaccard similarity of everything but the facts (plus the facts they share)."""
    only_a: frozenset[str]
    only_b: frozenset[str]
    negation_differs: bool

    @property
    def conflicting(self) -> bool:
        """Each side states a fact the other lacks (a changed number, date or name),
        or one negates what the other asserts."""
        return bool(self.only_a and self.only_b) or self.negation_differs


def compare(a: str, b: str) -> Comparison:
    """Compare two claims' facts and context."""
    return compare_analysed(analyse(a), analyse(b))


def compare_analysed(sa: Sentence, sb: Sentence) -> Comparison:
    """:func:`compare` of the two claims :func:`analyse` read as ``sa`` and ``sb``."""
    shared_facts = sa.facts & sb.facts
    left = sa.context | shared_facts
    right = sb.context | shared_facts
    union = left | right
    similarity = len(left & right) / len(union) if union else 0.0
    return Comparison(
        similarity=similarity,
        only_a=sa.facts - sb.facts,
        only_b=sb.facts - sa.facts,
        negation_differs=sa.negated != sb.negated,
    )


def show_fact(fact: str, text: str = "") -> str:
    """A fact as ``text`` writes it (``#40000`` → ``40,000``, ``@honolulu`` → ``Honolulu``);
    without ``text``, its canonical form."""
    for token in _TOKEN.findall(unicodedata.normalize("NFKC", text)):
        lower = token.casefold()
        canonical = "#" + _number(token) if token[0].isdigit() else None
        if fact in (canonical, "#" + lower, "@" + lower):
            return str(token)
    return fact[1:]


# --- Disagreement: two claims about the same thing that differ in a fact -------------------------

_ALIGN_TOKEN = re.compile(r"\d[\d,.]*\d|\d|\w+(?:['’.-]\w+)*|[^\w\s]")
_IDENTIFIER = re.compile(r"\w[_.]\w|^_|(?<!^Mc)(?<!^Mac)(?<!^D[aeiu])(?<!^L[ae])[a-z][A-Z]|\(\)")
"""A code identifier: ``re.search``, ``VENV_DIR``, ``PurePosixPath`` (an inner capital after a
small letter; "McDonald" is one too, and a differing one still means another thing)."""
_WEAK_PUNCT = frozenset(",.;:!?\"'()[]«»“”‘’—–-…")
_ANTONYM_WORDS = [
    ("increase", "decrease"),
    ("increased", "decreased"),
    ("rise", "fall"),
    ("rose", "fell"),
    ("gain", "loss"),
    ("win", "lose"),
    ("won", "lost"),
    ("winner", "loser"),
    ("success", "failure"),
    ("successful", "unsuccessful"),
    ("succeed", "fail"),
    ("true", "false"),
    ("larger", "smaller"),
    ("largest", "smallest"),
    ("higher", "lower"),
    ("highest", "lowest"),
    ("greater", "less"),
    ("bigger", "smaller"),
    ("longer", "shorter"),
    ("older", "younger"),
    ("oldest", "youngest"),
    ("earlier", "later"),
    ("earliest", "latest"),
    ("maximum", "minimum"),
    ("major", "minor"),
    ("open", "closed"),
    ("alive", "dead"),
    ("male", "female"),
    ("positive", "negative"),
    ("north", "south"),
    ("east", "west"),
    ("northern", "southern"),
    ("eastern", "western"),
    ("enabled", "disabled"),
    ("allowed", "forbidden"),
    ("allowed", "prohibited"),
    ("accepted", "rejected"),
    ("required", "optional"),
    ("mandatory", "optional"),
    ("public", "private"),
    ("synchronous", "asynchronous"),
    ("mutable", "immutable"),
    ("legal", "illegal"),
    ("possible", "impossible"),
    ("supported", "unsupported"),
    ("safe", "unsafe"),
    ("always", "never"),
    ("before", "after"),
    ("above", "below"),
    ("inside", "outside"),
    ("rural", "urban"),
    ("ancient", "modern"),
    ("domestic", "foreign"),
]
ANTONYMS = frozenset(frozenset((stem(a), stem(b))) for a, b in _ANTONYM_WORDS)
"""Pairs of words (by stem) that say opposite things: "success" / "failure", "won" / "lost"."""
_ANTONYM_STEMS = frozenset(w for pair in ANTONYMS for w in pair)


def may_disagree(a: str, b: str) -> bool:
    """A cheap test that :func:`disagreement` can find something: a fact only one side states
    on each side, a negation on one side only, or words with an opposite on both sides."""
    sa, sb = analyse(a), analyse(b)
    if (sa.facts - sb.facts and sb.facts - sa.facts) or sa.negated != sb.negated:
        return True
    left, right = sa.context & _ANTONYM_STEMS, sb.context & _ANTONYM_STEMS
    return any(frozenset((x, y)) in ANTONYMS for x in left for y in right)


_SUBJECT_WORDS = 3
"""Shared content words that make a shared subject when no name or identifier is shared."""


@dataclass(frozen=True)
class _Tok:
    text: str
    key: str
    kind: str
    """``number``, ``date``, ``name``, ``term`` (a code identifier or symbol), ``negation``,
    ``word`` (another content word) or ``stop``."""


def _kind(token: str, position: int, tokens: list[str]) -> str:
    lower = token.casefold()
    if (lower in NEGATIONS and lower != "without") or lower.endswith("n't"):
        return "negation"
    if token[0].isdigit() or lower in NUMBER_WORDS - {"once", "second", "half"}:
        return "number"
    if lower in MONTHS and token[0].isupper():
        near = tokens[max(0, position - 1) : position + 2]
        if lower not in ("may", "march") or any(t[0].isdigit() for t in near):
            return "date"
    if not token[0].isalnum():
        return "term"
    if _IDENTIFIER.search(token):
        return "term"  # an identifier: re.search, VENV_DIR, PurePosixPath
    if token[0].isupper() and lower not in NOT_NAMES and position > 0:
        return "name"
    if len(lower) < 3 or lower in STOPWORDS:
        return "stop"
    return "word"


def _align_tokens(text: str) -> list[_Tok]:
    raw = [
        t for t in _ALIGN_TOKEN.findall(unicodedata.normalize("NFKC", text)) if t not in _WEAK_PUNCT
    ]
    out = []
    for position, token in enumerate(raw):
        kind = _kind(token, position, raw)
        lower = token.casefold()
        key = "#" + _number(token) if token[0].isdigit() else stem(lower)
        out.append(_Tok(token, key, kind))
    return out


@dataclass(frozen=True)
class Disagreement:
    """Why two claims disagree: the subject they share and the fact each states differently."""

    subject: str
    """The shared words that make them about the same thing ("Tamar Bridge … vehicles")."""
    fact: str
    """What differs: ``number``, ``date``, ``name``, ``negation`` or ``antonym``."""
    a: str
    """The differing fact as the first claim writes it ("40,000", "not", "success")."""
    b: str

    def describe(self) -> str:
        if self.fact == "negation":
            said = self.a or self.b
            return f"about {self.subject}: one says “{said}”, the other doesn't"
        return f"about {self.subject}: {self.fact} {self.a} against {self.b}"

    def to_json(self) -> dict[str, str]:
        return {"subject": self.subject, "fact": self.fact, "a": self.a, "b": self.b}


def _content(toks: list[_Tok]) -> list[_Tok]:
    return [t for t in toks if t.kind != "stop"]


def disagreement(a: str, b: str, min_shared: float = 0.5) -> Disagreement | None:
    """The fact ``a`` and ``b`` state differently about one subject, or None.

    Both texts are aligned word by word (numbers by value, words by stem). They disagree when
    every stretch that differs is a changed fact — a number, date or name replaced by another, a
    negation on one side only, a word replaced by its opposite — or an added detail, and what
    stays the same makes them about one thing: at least ``min_shared`` of their content words,
    including a shared name or identifier, or at least three shared content words.

    Two different things, not one thing said two ways: a differing identifier or symbol
    (``VENV_DIR`` / ``VENV_NAME``, ``*`` / ``+``), a reworded stretch, a changed name that opens
    the sentence ("The UTC offset …" / "The DST offset …") or that comes with another changed
    fact (44 cases in Hawaii / 21,157 in Italy). Text that is mostly code (identifiers and
    symbols) states no fact to disagree on.
    """
    from difflib import SequenceMatcher

    if not may_disagree(a, b):
        return None
    ta, tb = _align_tokens(a), _align_tokens(b)
    if _code_like(ta) or _code_like(tb):
        return None
    matcher = SequenceMatcher(None, [t.key for t in ta], [t.key for t in tb], autojunk=False)
    conflicts: list[tuple[str, str, str]] = []
    shared: list[list[_Tok]] = []
    changed = 0
    names_changed = False
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        left, right = ta[i1:i2], tb[j1:j2]
        if op == "equal":
            shared.append(left)
            continue
        cl, cr = _content(left), _content(right)
        if not cl and not cr:
            continue
        if cl and cr and any(t.kind == "term" for t in cl + cr):
            return None  # a different identifier or symbol: a different thing
        neg_l = [t for t in cl if t.kind == "negation"]
        neg_r = [t for t in cr if t.kind == "negation"]
        rest_l = [t for t in cl if t.kind != "negation"]
        rest_r = [t for t in cr if t.kind != "negation"]
        if bool(neg_l) != bool(neg_r):
            if len(rest_l) + len(rest_r) > 2:
                return None  # a negation inside a reworded stretch: not the same statement
            conflicts.append(
                ("negation", " ".join(t.text for t in neg_l), " ".join(t.text for t in neg_r))
            )
        facts_l = [t for t in rest_l if t.kind in ("number", "date", "name")]
        facts_r = [t for t in rest_r if t.kind in ("number", "date", "name")]
        words_l = [t for t in rest_l if t.kind in ("word", "term")]
        words_r = [t for t in rest_r if t.kind in ("word", "term")]
        opposite = next(
            ((x, y) for x in words_l for y in words_r if frozenset((x.key, y.key)) in ANTONYMS),
            None,
        )
        if opposite is not None:
            conflicts.append(("antonym", opposite[0].text, opposite[1].text))
            words_l = [t for t in words_l if t is not opposite[0]]
            words_r = [t for t in words_r if t is not opposite[1]]
        if facts_l and facts_r:
            kinds = {t.kind for t in facts_l} | {t.kind for t in facts_r}
            kind = "name" if kinds == {"name"} else "date" if "date" in kinds else "number"
            if "name" in kinds:
                if not any(_content(block) for block in shared):
                    return None  # the sentence opens with another name: another subject
                names_changed = True
            conflicts.append(
                (kind, " ".join(t.text for t in facts_l), " ".join(t.text for t in facts_r))
            )
        else:
            changed += len(facts_l) + len(facts_r)  # a detail one side adds
        if words_l and words_r and not _respelled(words_l, words_r):
            return None  # reworded: not shown to be one fact said two ways
        changed += len(words_l) + len(words_r)
    if not conflicts:
        return None
    if names_changed and len({c[0] for c in conflicts}) > 1:
        return None  # another name beside another changed fact: most likely another thing
    same = [t for block in shared for t in _content(block) if t.kind != "negation"]
    if not same or len(same) / (len(same) + changed) < min_shared:
        return None
    subject = _subject(shared, changed == 0)
    if subject is None:
        return None
    fact, said_a, said_b = conflicts[0]
    return Disagreement(subject, fact, said_a, said_b)


def _respelled(left: list[_Tok], right: list[_Tok]) -> bool:
    """The same words spelled another way ("licence" / "license", "Theater" / "Theatre")."""
    from difflib import SequenceMatcher

    if len(left) != len(right):
        return False
    return all(
        SequenceMatcher(None, x.key, y.key).ratio() >= 0.8 and min(len(x.key), len(y.key)) >= 5
        for x, y in zip(left, right, strict=True)
    )


CODE_SHARE = 0.25
"""Share of identifiers and symbols above which a text is code, not a statement."""


def _code_like(toks: list[_Tok]) -> bool:
    return sum(t.kind == "term" for t in toks) > CODE_SHARE * max(1, len(toks))


def _subject(shared: list[list[_Tok]], exact: bool) -> str | None:
    """The words that make two aligned claims about one thing, as the first writes them: their
    shared names and identifiers; else their shared content words (numbers and dates too) when
    there are at least three, or two when nothing but the fact differs ("505 persons have
    recovered" / "516 persons …": the same measured quantity); None otherwise."""
    names = [
        t.text
        for block in shared
        for t in block
        if t.kind == "name" or (t.kind == "term" and t.text[0].isalnum())
    ]
    if names:
        return " ".join(dict.fromkeys(names))
    words = [t.text for block in shared for t in _content(block) if t.kind != "negation"]
    if len(words) >= _SUBJECT_WORDS or (exact and len(words) >= 2):
        return " ".join(dict.fromkeys(words[:8]))
    return None
