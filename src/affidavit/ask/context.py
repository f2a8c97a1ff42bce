"""What the wiki knows around a question: the claims that follow a retrieved one in its source, and
the names a question asks about that the wiki never mentions (issue 24 item 4).

A manual states a fact in the sentences under a heading or an FAQ's question: "Maximum length of a
string or BLOB" — "The maximum number of bytes ... is defined by ... SQLITE_MAX_LENGTH." — "The
default value of this macro is 1 billion". Retrieval finds the heading, which holds the question's
words, not the sentence that answers it, which holds "this macro". :func:`with_followers` adds the
claims that follow the best hits in their source, each with what precedes it as its context (the
answerer reads a claim's context as it reads its page title).

A question about a thing the wiki never names ("How do I set up a replica set in MongoDB?") has no
answer in it, whatever its other words match: :func:`unknown_names` finds such names.
"""

from __future__ import annotations

import itertools
import re
import sqlite3
import unicodedata
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Protocol

from ..retrieval.search import Hit, same_text
from ..support import wordnet
from ..support.lexicon import NUMBER_WORDS
from ..words import STOPWORDS, stem, stems
from .manuals import statement

FOLLOWERS = 2
"""Claims taken after each of the best hits, in their source's order."""
LEADERS = 8
"""How many of the best hits get their followers."""
SECTION_SHARE = 0.6
"""Share of the question's content words a hit's heading must hold for its followers to count."""
REACH = 600
"""How far (characters of the source) after a hit a follower may start."""

_TOKEN = re.compile(r"[^\W_][\w.+#-]*[^\W_]|[^\W_]", re.UNICODE)


class WikiWords(Protocol):
    """What a question's names are checked against: the wiki's full-text index (SQLite's FTS5,
    :class:`SqliteWords`; PostgreSQL's ``tsvector``, :mod:`affidavit.storage.pg_ask`)."""

    def mentions(self, word: str) -> int:
        """How many claims (any status) hold ``word``, at most 1,000 counted."""

    def misspelt(self, word: str) -> bool:
        """Some indexed word is a misspelling's distance from ``word`` (:func:`misspelt`)."""

    def claims_stored(self) -> int:
        """How many claims the wiki ever stored (read in constant time where it can be)."""


class SourceOrder(Protocol):
    """What following a claim in its source needs: the claims whose first quote starts in a
    stretch of a source, and claims as hits."""

    def following(self, source_id: str, start: int, end: int, limit: int) -> list[str]:
        """Active page claims whose first quote of ``source_id`` starts in ``[start, end]``, in
        the source's order (ties by id), at most ``limit``."""

    def hits(self, claim_ids: list[str], min_trust: str = "untrusted") -> list[Hit]: ...


class SqliteWords:
    """:class:`WikiWords` over a SQLite vault's FTS5 index."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def mentions(self, word: str) -> int:
        return mentions(self.db, word)

    def misspelt(self, word: str) -> bool:
        return misspelt(self.db, word)

    def claims_stored(self) -> int:
        return int(self.db.execute("SELECT coalesce(max(rowid), 0) FROM claims").fetchone()[0])


def words_of(db: sqlite3.Connection | WikiWords) -> WikiWords:
    """``db`` as :class:`WikiWords` (a SQLite connection is read through FTS5)."""
    return SqliteWords(db) if isinstance(db, sqlite3.Connection) else db


FOLLOWING_SQL = (
    "SELECT e.claim_id FROM evidence e JOIN claims c ON c.id = e.claim_id "
    "WHERE e.source_key = (SELECT key FROM source_keys WHERE source_id = ?) "
    "AND e.start >= ? AND e.start <= ? AND e.idx = 0 "
    "AND c.status = 'active' AND c.page_slug != '' ORDER BY e.start, c.id LIMIT ?"
)
""":meth:`SourceOrder.following` on SQLite."""


def following(
    db: sqlite3.Connection, source_id: str, start: int, end: int, limit: int
) -> list[str]:
    rows = db.execute(FOLLOWING_SQL, (source_id, start, end, limit)).fetchall()
    return [str(r[0]) for r in rows]


def _last_place(text: str | None, start: int, end: int) -> int:
    """Where the last occurrence of ``text[start:end]`` ends in ``text`` (``end`` when there is no
    later one): an FAQ's question stands first in its list of questions and last over its answer,
    and only the answer follows it there."""
    if text is None or not 0 <= start < end <= len(text):
        return end
    found = text.rfind(text[start:end], end)
    return found + (end - start) if found >= 0 else end


def with_followers(
    reads: SourceOrder,
    question: str,
    hits: list[Hit],
    min_trust: str,
    source_text: Callable[[str], str | None] | None = None,
) -> tuple[list[Hit], dict[str, str]]:
    """``hits`` with, after each of the first :data:`LEADERS` that is a heading or a question
    (:func:`~affidavit.ask.extractive.statement`) or stands under a heading that holds most of
    the question's words (:data:`SECTION_SHARE`), the next :data:`FOLLOWERS` page claims of its
    first quote's source (within :data:`REACH` characters, not already there; with
    ``source_text``, a heading's or question's last place in its source: :func:`_last_place`), and
    each claim's context: the text of the retrieved claim it follows."""
    asked = stems(question)
    seen = {same_text(h.text) for h in hits}
    out: list[Hit] = []
    context: dict[str, str] = {}
    for n, hit in enumerate(hits):
        out.append(hit)
        if n >= LEADERS or not hit.evidence:
            continue
        heading = stems(hit.section)
        if statement(hit.text) and len(asked & heading) < SECTION_SHARE * max(1, len(asked)):
            continue
        first = hit.evidence[0]
        after = first.end
        if source_text is not None and not statement(hit.text):
            # a heading or question quoted where it is first listed (a table of contents):
            # its answer follows where it stands last
            after = _last_place(source_text(first.source_id), first.start, first.end)
        ids = reads.following(first.source_id, after, after + REACH, 4 * FOLLOWERS)
        added = 0
        for follower in reads.hits(ids, min_trust):
            key = same_text(follower.text)
            if key in seen or added == FOLLOWERS:
                continue
            seen.add(key)
            out.append(follower)
            context[follower.claim_id] = hit.text
            added += 1
    return out, context


def name_like(word: str, first: bool) -> bool:
    """A word that names a thing rather than saying something: capitalised inside the sentence
    ("MongoDB", "Redis"), mixed case or digits ("PostgreSQL", "utf8"), or no English word
    ("nginx", "scikit-learn")."""
    if len(word) < 3 or word.casefold() in STOPWORDS or word.casefold() in _FUNCTION:
        return False
    if any(c.isdigit() for c in word) or sum(c.isalpha() for c in word) < 3:
        return False  # "8mm", "D.C": a quantity or initials, spelled many ways
    if any(c.isupper() for c in word[1:]):
        return True
    if word[0].isupper() and not first:
        return True
    return len(word) >= 4 and not _english(word.casefold())


_FUNCTION = frozenset(
    [
        "else",
        "onto",
        "thru",
        "upon",
        "unto",
        "versus",
        "whilst",
        "amongst",
        "aren",
        "isn",
        "wasn",
        "weren",
        "didn",
        "doesn",
        "don",
        "couldn",
        "wouldn",
        "shouldn",
        "hasn",
        "haven",
        "hadn",
        "won",
        "mustn",
        "needn",
    ]
)
"""Words WordNet leaves out that are no names (and contractions' halves: "didn't")."""


@lru_cache(maxsize=8192)
def _english(word: str) -> bool:
    parts = [p for p in re.split(r"[-.+#]", word) if p]
    return bool(parts) and all(_english_word(p) for p in parts)


def _english_word(word: str) -> bool:
    forms = {word}
    for suffix, back in (
        ("ies", "y"),
        ("es", ""),
        ("s", ""),
        ("ed", ""),
        ("ed", "e"),
        ("ing", ""),
        ("ing", "e"),
        ("iest", "y"),
        ("ier", "y"),
        ("est", ""),
        ("er", ""),
        ("en", ""),
        ("en", "e"),
        ("ly", ""),
    ):
        if word.endswith(suffix) and len(word) > len(suffix) + 2:
            forms.add(word[: -len(suffix)] + back)
            forms.add(word[: -len(suffix)])
    forms |= {f[:-1] for f in forms if len(f) > 3 and f[-1] == f[-2]}  # "bigg(est)" → "big"
    if any(wordnet.known(f, pos) for f in forms for pos in wordnet.POS):
        return True
    return any(  # a compound of two words: "lifeform", "gravesite"
        _english_word(word[:n]) and _english_word(word[n:])
        for n in range(3, len(word) - 2)
        if len(word) >= 7
    )


def question_names(question: str) -> list[str]:
    """The name-like words of ``question`` (:func:`name_like`), in order, "I" left out."""
    text = unicodedata.normalize("NFKC", question)
    tokens = _TOKEN.findall(text)
    out: list[str] = []
    for n, token in enumerate(tokens):
        if token not in out and name_like(token, first=n == 0):
            out.append(token)
    return out


def mentions(db: sqlite3.Connection, word: str) -> int:
    """How many claims (any status) hold ``word`` (FTS5, Porter stems), at most 1,000 counted."""
    plain = "".join(
        c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c)
    )  # "İzmit": FTS5 folds diacritics too
    parts = [p for p in re.findall(r"[^\W_]+", plain.casefold()) if p]
    if not parts:
        return 0
    phrase = '"' + " ".join(parts) + '"'
    row = db.execute(
        "SELECT count(*) FROM (SELECT 1 FROM claims_fts WHERE claims_fts MATCH ? LIMIT 1000)",
        (phrase,),
    ).fetchone()
    return int(row[0])


def unknown_names(db: sqlite3.Connection | WikiWords, question: str) -> list[str]:
    """The names ``question`` asks about that no claim of the wiki holds, nor a word one or two
    letters away from it (a misspelling: "Instanbul", "Parliment" ask about what the wiki
    spells right). Left out: a word inside a longer name whose other words the wiki holds ("Frank
    Loyd Wright"), and abbreviations ("USA", "Feb.")."""
    words = words_of(db)
    text = unicodedata.normalize("NFKC", question)
    tokens = [(m.group(), m.end()) for m in _TOKEN.finditer(text)]
    out: list[str] = []
    for name in question_names(question):
        at = next(n for n, (t, _) in enumerate(tokens) if t == name)
        end = tokens[at][1]
        if (name.isupper() and len(name) <= 4) or text[end : end + 1] == ".":
            continue
        beside = [tokens[i][0] for i in (at - 1, at + 1) if 0 <= i < len(tokens)]
        if any(
            w[:1].isupper() and w.casefold() not in STOPWORDS and words.mentions(w) for w in beside
        ):
            continue
        if words.mentions(name) == 0 and not words.misspelt(name):
            out.append(name)
    return out


def misspelt(db: sqlite3.Connection, word: str) -> bool:
    """Some indexed word (FTS5's Porter stems) is within one edit of ``word``'s stem (two for
    words of seven letters or more), with the same first letter; a word of four or five letters
    is compared as it is, must keep its last letter too, and only a letter left out or added
    counts ("Wrld" for "world", "Loyd" for "Lloyd"; not "Redis" for "revis", a stem of
    "revise"). A word the dictionary (WordNet) knows is spelled right, whatever the wiki's words
    near it: "Perforce" is no misspelling of "perform" (their stems are one letter apart)."""

    def terms(first: str) -> list[str] | None:
        try:
            db.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.claims_vocab "
                "USING fts5vocab(main, claims_fts, row)"
            )
        except sqlite3.OperationalError:  # a query_only connection: can't tell
            return None
        rows = db.execute(
            "SELECT term FROM temp.claims_vocab WHERE term >= ? AND term < ?",
            (first, chr(ord(first) + 1)),
        )
        return [str(r[0]) for r in rows]

    return misspelt_among(word, terms)


def misspelt_among(word: str, terms: Callable[[str], Iterable[str] | None]) -> bool:
    """:func:`misspelt` over the indexed words ``terms`` gives for a first letter (None: the
    index can't be read, so no abstention on that name: True)."""
    short = len(word) < 6
    target = word.casefold() if short else stem(word.casefold())
    if not target.isalpha() or len(word) < 4:
        return False
    found = terms(target[0])
    if found is None:
        return True
    most = 1 if len(target) < 7 else 2
    # a word spelled right ("Perforce") is no misspelling of another ("perform"), only a form
    # of one ("Alaskan" of "Alaska")
    spelled = any(wordnet.known(word.casefold(), pos) for pos in "nvar")
    return any(
        abs(len(term) - len(target)) <= most
        and (not short or (term[-1] == target[-1] and len(term) != len(target)))
        and (not spelled or term.startswith(target) or target.startswith(term))
        and _within(term, target, most)
        for term in found
    )


def _within(a: str, b: str, most: int) -> bool:
    """The edit distance of ``a`` and ``b`` is at most ``most`` (banded Levenshtein)."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb))
        if min(current) > most:
            return False
        previous = current
    return previous[-1] <= most


RARE = 0.01
"""A name held by fewer than this share of the claims is one an answer must hold."""


def rare_names(db: sqlite3.Connection | WikiWords, question: str) -> list[str]:
    """The names ``question`` asks about that few claims hold (:data:`RARE`): an answer that
    doesn't name them answers another question ("MySQL" when the wiki is SQLite's manual)."""
    names = question_names(question)
    if not names:
        return []
    words = words_of(db)
    limit = max(1, int(RARE * words.claims_stored()))
    return [n for n in names if _product(n) and 0 < words.mentions(n) < limit]


def _product(name: str) -> bool:
    """Spelled like a product's name, in mixed case ("MySQL", "PostgreSQL", "MongoDB"): a
    person's or a place's name ("Oglethorpe") is often left to a pronoun or the page's title by the
    sentence that answers about it; another product's is not."""
    inner = name[1:]
    return any(c.isupper() for c in inner) and any(c.islower() for c in inner)


def with_acronyms(db: sqlite3.Connection | WikiWords, question: str) -> str:
    """``question`` with the acronyms the wiki uses for its phrases after them: "switch to
    write-ahead logging" → "switch to write-ahead logging (WAL)" when claims say "WAL". An
    acronym is the initials of two to four content words, three letters or more, no English
    word, held by some claim."""
    index = words_of(db)
    words = [
        (m.start(), m.end(), m.group())
        for m in re.finditer(r"[A-Za-z]+", question)
        if m.group().casefold() not in STOPWORDS
    ]
    found: list[tuple[int, str]] = []
    for size in (4, 3, 2):
        for i in range(len(words) - size + 1):
            run = words[i : i + size]
            gaps = [question[a[1] : b[0]] for a, b in itertools.pairwise(run)]
            if any(not re.fullmatch(r"[\s-]+", g) for g in gaps):
                continue
            acronym = "".join(w[2][0] for w in run).upper()
            end = run[-1][1]
            if (
                len(acronym) >= 3
                and acronym.casefold() not in question.casefold().split()
                and not _english(acronym.casefold())
                and all(end != e for e, _ in found)
                and index.mentions(acronym) > 0
            ):
                found.append((end, acronym))
    for end, acronym in sorted(found, reverse=True):
        question = f"{question[:end]} ({acronym}){question[end:]}"
    return question


_COUNTS = {
    word: NUMBER_WORDS[word]
    for word in ["two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
}
_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth")
_ASKED_COUNT = re.compile(
    r"\b(two|three|four|five|six|seven|eight|nine|ten|[2-9])\s+((?:[a-z-]+\s+){0,2}?[a-z-]+s)\b",
    re.IGNORECASE,
)
ENUMERATION_REACH = 4000
"""How far (characters of the source) after its introduction an enumeration's items may run."""


def _count(word: str) -> int:
    return int(word) if word.isdigit() else _COUNTS[word.casefold()]


def _item(text: str, n: int) -> bool:
    """``text`` is the ``n``-th item (1-based) of an enumeration: "The first is ...", "Second,
    ...", "2. ...", "(b) ..."."""
    ordinal = _ORDINALS[n - 1] if n <= len(_ORDINALS) else ""
    head = text.strip().casefold()
    return bool(
        (ordinal and re.match(rf"^(?:the\s+)?{ordinal}\b", head))
        or re.match(rf"^\(?{n}[.)]\s", head)
        or re.match(rf"^\(?{'abcdefghi'[n - 1]}\)\s", head)
    )


def enumeration(reads: SourceOrder, question: str, hits: list[Hit], min_trust: str) -> list[Hit]:
    """The whole enumeration a question asks for ("What were the four freedoms?"): a retrieved
    claim that introduces that many of the asked things ("... four essential human freedoms."),
    then its items in its source's order ("The first is ...", ..., "The fourth is ..."), each a
    claim; ``[]`` when the wiki doesn't hold every item."""
    asked = _ASKED_COUNT.search(question)
    if asked is None:
        return []
    count = _count(asked.group(1))
    noun = stem(asked.group(2).split()[-1].casefold())
    number = re.compile(rf"\b(?:{asked.group(1)}|{count})\b(?:\s+[\w-]+){{0,3}}", re.IGNORECASE)
    for intro in hits[:LEADERS]:
        said = [m.group(0) for m in number.finditer(intro.text)]
        if not intro.evidence or not any(
            stem(w.casefold()) == noun for phrase in said for w in phrase.split()[1:]
        ):
            continue
        first = intro.evidence[0]
        ids = reads.following(first.source_id, first.end, first.end + ENUMERATION_REACH, 6 * count)
        items: list[Hit] = []
        for hit in reads.hits(ids, min_trust):
            fresh = all(same_text(hit.text) != same_text(i.text) for i in items)
            if len(items) < count and fresh and _item(hit.text, len(items) + 1):
                items.append(hit)
        if len(items) == count:
            return [intro, *items]
    return []


def _section_key(text: str) -> str:
    return " ".join(text.split()).casefold().rstrip("?:. ")


UNDER = True
"""A heading or question retrieved best is answered by the claims under it (:func:`under_best`)."""


def under_best(
    scored: list[tuple[float, float, int, Hit]], hits: list[Hit], context: dict[str, str]
) -> list[tuple[float, float, int, Hit]]:
    """``scored`` (best first) with, when the best claim is a heading or an FAQ's question (not a
    :func:`~affidavit.ask.manuals.statement`), the statements that follow it in its source and
    stand in its section (their heading is it, or the one it stands under) in its place, in the
    source's order and at its score: "Why is STORE really slow?" is answered by what the FAQ
    says under that question, not by the question alone. Unchanged when none follows it."""
    if not UNDER or not scored or statement(scored[0][3].text):
        return scored
    best = scored[0]
    leader = best[3]
    sections = {_section_key(leader.text), _section_key(leader.section)}
    under = [
        h
        for h in hits
        if context.get(h.claim_id) == leader.text
        and statement(h.text)
        and _section_key(h.section) in sections
    ][:FOLLOWERS]
    if not under:
        return scored
    moved = {h.claim_id for h in under} | {leader.claim_id}
    rank = {h.claim_id: n for n, h in enumerate(hits)}
    first = [(best[0], best[1], rank[h.claim_id], h) for h in under]
    return first + [s for s in scored if s[3].claim_id not in moved]
