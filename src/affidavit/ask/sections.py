"""What a claim's place tells the extractive answerer about what it is about (issue 24 item 4).

A manual states a fact under a heading that names its subject and leaves the subject to it:
under "Maximum Number Of Columns", "The default setting for SQLITE_MAX_COLUMN is 2000." answers
"How many columns can a table have by default?", naming the columns only inside a macro. The
answerer reads a claim's section heading and page title at half weight
(:func:`affidavit.ask.extractive.ranked`); a claim whose own section heading holds the noun the
question asks about (:func:`key_nouns`) ranks up besides (:func:`headed_share`).

:func:`title_instructions`: a how-do-I question that names a page's whole title ("How do I switch
a database to write-ahead logging?" and the page "Write-Ahead Logging") is asked of that page:
its instructions ("To convert to WAL mode, use the following pragma: ...") join the candidates,
whatever other words they share with the question, and the answerer reads the title's words as
theirs (:func:`named_page`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Protocol

from ..retrieval.search import Hit, query_terms
from ..support.parse import Token, parse
from ..words import stem, stems
from .manuals import OPENS_INSTRUCTION, USES_COMMAND, asks_how, commands
from .roles import counted

HEADED = True
"""A claim ranks up when its own section heading holds the noun the question asks about."""

_GENERIC = frozenset(
    stem(w)
    for w in [
        "kind",
        "type",
        "sort",
        "way",
        "thing",
        "default",
        "use",
        "lot",
        "number",
        "amount",
        "part",
        "something",
        "anything",
        "one",
        "i",
    ]
)
"""Nouns that say what kind of answer is wanted, not what it is about ("What kind of
transaction ...?", "by default")."""


@lru_cache(maxsize=1024)
def key_nouns(question: str) -> frozenset[str]:
    """The stems of the noun ``question`` asks about, read from its parse (spaCy's), with the
    nouns that make it up: what "how many" counts ("column" for "How many columns can a table
    have?"), the noun "what" or "which" picks ("page", "size" for "What page size does a new
    database get?"; "transaction" for "What kind of transaction ...?"), or what a how-do-I
    question's verb acts on ("change" for "How do I throw away local changes?"); empty for any
    other question."""
    tokens = parse(question)
    counted_noun = counted(question)
    if counted_noun:
        return frozenset({counted_noun})
    head: Token | None = None
    for token in tokens:
        if token.lower in ("what", "which") and token.dep == "det" and token.head != token.i:
            head = tokens[token.head]
            if stem(head.lemma) in _GENERIC:  # "what kind of transaction": the transaction
                of = [t for t in tokens if t.head == head.i and t.lower == "of"]
                objects = [t for t in tokens if of and t.head == of[0].i and t.dep == "pobj"]
                head = objects[0] if objects else None
            break
    if head is None and asks_how(question):
        root = next((t for t in tokens if t.dep == "ROOT" and t.pos == "VERB"), None)
        head = next((t for t in tokens if root and t.head == root.i and t.dep == "dobj"), None)
    if head is None or head.pos not in ("NOUN", "PROPN"):
        return frozenset()
    parts = [head, *(t for t in tokens if t.head == head.i and t.dep == "compound")]
    return frozenset(stem(t.lower) for t in parts if t.pos in ("NOUN", "PROPN")) - _GENERIC


def headed_share(
    weights: dict[str, float],
    nouns: frozenset[str],
    hit: Hit,
    matches: Callable[[str, set[str]], bool],
) -> float:
    """The weighted share (``weights``: the question's words, rarer among the candidates weighing
    more) of the question's ``nouns`` that ``hit``'s own section heading holds: how much the
    section it stands in is about what the question asks (a page title is left out: a topic
    page's title is a noun its claims already hold). ``matches`` is the
    answerer's stem match (:func:`affidavit.ask.extractive._matches`)."""
    if not HEADED or not nouns:
        return 0.0
    keys = {s: w for s, w in weights.items() if any(matches(s, {n}) for n in nouns)}
    total = sum(keys.values())
    heading = stems(hit.section)
    if not total or not heading:
        return 0.0
    return sum(w for s, w in keys.items() if matches(s, heading)) / total


NAMED = True
"""A how-do-I question's answerer reads the title of a page it names as its claims' words."""


def named_page(question: str, title: str) -> frozenset[str]:
    """The stems of ``title`` when ``question`` holds every one of them ("Write-Ahead Logging" in
    "How do I switch a database to write-ahead logging?"): the question names the page, and
    what its claims say is about that; empty otherwise. A how-do-I question's answerer reads
    them as the claim's own words (an instruction on the page leaves its subject to the title:
    "To convert to WAL mode, use the following pragma: ...")."""
    held = _title_stems(title)
    return held if held and held <= _title_stems(question) else frozenset()


@lru_cache(maxsize=8192)
def _title_stems(text: str) -> frozenset[str]:
    return frozenset(stems(text))


TITLE_PAGES = 3
"""Pages whose title a how-do-I question holds that are asked for their instructions."""
TITLE_CLAIMS = 4
"""Instructions taken from each such page."""
AFTER = 8
"""Hits the instructions follow (the best hits keep their places and their followers)."""


class TitleReads(Protocol):
    """What :func:`title_instructions` reads of a wiki (both backends' ``AskWiki``)."""

    def titled_pages(self, terms: list[str], limit: int) -> list[tuple[str, str]]:
        """(slug, title) of the pages whose title holds any of ``terms``, best first."""

    def page_claims(self, slug: str, limit: int) -> list[str]:
        """The ids of a page's active claims in page order."""

    def hits(self, claim_ids: list[str], min_trust: str = "untrusted") -> list[Hit]: ...


def title_instructions(
    wiki: TitleReads, question: str, hits: list[Hit], min_trust: str
) -> list[Hit]:
    """``hits`` with, for a how-do-I question, the instructions of the pages whose whole title
    it holds (every content word of "Write-Ahead Logging" in "How do I switch a database to
    write-ahead logging?"): the page's claims that open "To <verb> ..." ("To convert to WAL mode,
    use the following pragma: ..."), then those that tell to use or run a command they name, at most :data:`TITLE_CLAIMS` of each of
    :data:`TITLE_PAGES` pages, after the first :data:`AFTER` hits (one already there is left
    where it is): the hits past the answer's token budget are the last."""
    if not asks_how(question):
        return hits
    terms = query_terms(question)
    if not terms:
        return hits
    rows = wiki.titled_pages(terms, 20)
    pages = [slug for slug, title in rows if named_page(question, title)]
    seen = {h.claim_id for h in hits}
    added: list[Hit] = []
    for slug in pages[:TITLE_PAGES]:
        ids = [c for c in wiki.page_claims(slug, 400) if c not in seen]
        page = wiki.hits(ids, min_trust)
        told = [h for h in page if OPENS_INSTRUCTION.match(h.text.strip())]
        told += [
            h
            for h in page
            if h not in told and USES_COMMAND.search(h.text) and commands(question, h.text)
        ]
        for hit in told[:TITLE_CLAIMS]:
            seen.add(hit.claim_id)
            added.append(hit)
    return hits[:AFTER] + added + hits[AFTER:]
