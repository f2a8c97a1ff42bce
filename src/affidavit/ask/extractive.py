"""Answering without a language model: pick and order the best-supported retrieved claims, and for
short factual questions the span of the best one that answers the question's type.

A claim's support is the share of the question's content words it holds, each word weighted by
how rare it is among the retrieved claims (a word every candidate shares tells them apart less
than one only the answer holds), with inflections matched by stem and by a shared prefix
("vote" / "voting", "encoding" / "encodings"), plus the claim's retrieval rank as a tie-break
and a bonus when it holds what the question asks for (a date for "when", a number for "how
many", a person or organisation for "who", as spaCy's recogniser reads it: :mod:`.entities`).
How questions and manuals phrase definitions, instructions and commands is in :mod:`.manuals`.
The reply has the same shape as a model's and goes through the same citation and support
checks.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from functools import lru_cache
from typing import Any, NamedTuple

from ..extractive.lexicon import words
from ..retrieval.search import Hit
from ..support.facts import MONTHS
from ..words import STOPWORDS, stem
from . import sections
from .brevity import enough
from .context import under_best
from .entities import AGENTS, entities, recognise
from .manuals import (
    ACTION,
    COMPOUND,
    INSTRUMENT,
    NAME_LINE,
    NAME_LINE_PATTERN,
    OPENS_INSTRUCTION,
    OTHER_VERB,
    SHORT_OPTION,
    USES_COMMAND,
    action,
    asks_how,
    commands,
    compounds_of,
    defined_term,
    defines,
    fold,
    instructs,
    named,
    names_compound,
    statement,
)
from .measures import MEASURED, UNITS_KEPT, dated_year, dimension, measured, named_year, with_unit
from .measures import MODAL as _MODAL
from .roles import counts_other, fillers, fills, modified_noun_end, prepare, role_phrase
from .sections import headed_share, key_nouns, named_page
from .stems import Held, held_by, held_of, matches
from .stems import stems as _stems
from .stems import support as _support
from .stems import weights as _weights

_DATE = re.compile(
    r"\b(?:\d{1,2} )?(?:January|February|March|April|May|June|July|August|September|October|"
    r"November|December)(?: \d{1,2})?,? \d{4}\b|\b(?:1[0-9]{3}|20[0-9]{2})s?\b"
)
_NUMBER = re.compile(
    r"(?:[$£€]\s?)?\b\d[\d,]*(?:\.\d+)?(?:\s?(?:%|percent|per cent|million|billion|thousand|"
    r"hundred|km|kilometres|kilometers|miles|metres|meters|feet|ft|m|kg|tonnes|tons|years|"
    r"people|square \w+|(?:kilo|mega|giga|tera|peta|kibi|mebi|gibi|tebi)?bytes|[KMGTP]i?B\b))?|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"twenty|thirty|forty|fifty|hundred|thousand)(?:\s(?:hundred|thousand|million|billion))?\b"
)
_NAME = re.compile(
    r"\b(?:[A-Z][\w'’.-]*[\w]|[A-Z])(?:\s+(?:(?:of|the|de|von|van|for|la|le|du|da)\s+)?"
    r"[A-Z][\w'’.-]*[\w])*"
)
_PLACE_BEFORE = re.compile(r"\b(?:in|at|near|from|to|into|on|across|of)\s+(?:the\s+)?$")
_AGENT_BEFORE = re.compile(r"\b(?:by|to|from|with|and|,)\s+$")
_WEAK_CAPITALS = words(
    "the a an in on at it this that these those he she they we his her its their there "
    "when while after before during since although however but and or if as for by to of "
    "because though unless whereas until once"
)
"""Capitalised words that open a name's run but are no part of it ("Because British merchants
offered ...": the name is "British")."""
_OPENERS = words(
    "therefore thus hence moreover furthermore meanwhile nevertheless nonetheless indeed still yet "
    "accordingly consequently otherwise instead besides finally first second third lastly today "
    "tomorrow yesterday now then here there perhaps fortunately unfortunately unhappily happily "
    "certainly surely clearly also again already likewise similarly subsequently later earlier "
    "next once today's"
)
"""Words that open a sentence with a capital only because they open it: "Therefore, as your
President, ..." names nobody (nor does a stopword, "I", anywhere)."""
_CALENDAR = MONTHS | words(
    "monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs fri "
    "sat sun"
)
"""Capitalised words that name a time, never a person or place: "July" answers no "who"."""
MIN_SUPPORT = 0.2
"""Weighted share of the question's content words a claim must hold to answer it."""
MAX_SENTENCES = 3
"""Claims chosen (within :data:`MARGIN` of the best): a short answer may come from any of them."""
LACKING = 0.15
"""What a claim loses for a "how many" or "when" question when it holds no number or date."""
SUPPORTING = 2
"""Sentences after a short answer: the one it is taken from, and one more."""
SHOWN = 2
"""Sentences an answer shows at most (issue 24: a short answer, then at most two supporting
sentences; without one, the best two): of the chosen claims, the one a short answer comes from
first, then the best other."""
MAX_CITATIONS = 8
"""Claims one answer sentence may cite (the answer schema's limit)."""
RANK_BONUS = 0.08
"""What being retrieved first adds to a claim's score (divided by 1 + its rank): a tie-break."""
HEADING = 0.1
"""What a claim gains when its own section heading holds the noun the question asks about
(:func:`~affidavit.ask.sections.headed_share`: all of its words, weighted by rarity)."""
SURE = 0.999
"""Support at or above which the best claim holds every content word of the question: below it
the answerer is unsure, and the first retrieved claims that pass :data:`MIN_SUPPORT` fill the
answer to :data:`FILL` (the best BM25 matches are always worth showing, cited)."""
MARGIN = 0.3
"""Claims within this much support of the best join it in the answer (at most three)."""
FILL = SHOWN
"""Sentences the retrieval's best matches fill an unsure answer to."""

_WHEN = ("when", "what year", "in what year", "which year", "what date", "in which year")
_HOW_MANY = (
    "how many",
    "how much",
    "how long",
    "how far",
    "how tall",
    "how old",
    "how high",
    "how large",
    "how big",
    "what percentage",
    "what temperature",
    "how hot",
    "how cold",
    "how warm",
    "what percent",
    "what proportion",
)
_WHO = ("who", "whom", "whose", "by whom")
_WHERE = ("where", "in what country", "in which country", "in what city", "in which city")


_VALUE = re.compile(
    r"^(?:what|which)\s+(?:is|was|are)\s+the\s+(?:default\s+|maximum\s+|minimum\s+|largest\s+|"
    r"smallest\s+|highest\s+|lowest\s+)+(?:number|length|size|count|limit|value|amount)\b|"
    r"^(?:what|which)\s+(?:[a-z-]+\s+){0,2}?(?:length|size|count|limit|amount)\s+"
    r"(?:does|do|did|is|was|are|were|can|will)\b"
)
"""A question that asks for a value: "What is the maximum length of ...?", "What page size does
a new database get?"."""


_WHICH_ORG = re.compile(
    r"^(?:which|what)\s+(?:\w+\s+)?(?:company|companies|organi[sz]ations?|agency|agencies|"
    r"team|teams|university|universities|band|firm|club|institution|corporation|newspaper|"
    r"publisher|manufacturer|airline|network)\b"
)


def question_type(question: str) -> str:
    """``when``, ``number``, ``who``, ``org`` ("which company ...?"), ``where`` or ``""`` (any
    other question). "What is the maximum length of ...?" and "What page size does ... get?" ask
    for a number too (:data:`_VALUE`)."""
    q = " ".join(question.strip().lower().split())
    if _VALUE.match(q):
        return "number"
    if _WHICH_ORG.match(q):
        return "org"
    for prefix, kind in ((_WHEN, "when"), (_HOW_MANY, "number"), (_WHO, "who"), (_WHERE, "where")):
        if q.startswith(prefix):
            return kind
    for kind, phrases in (("when", _WHEN), ("number", _HOW_MANY), ("who", _WHO), ("where", _WHERE)):
        if any(f" {w} " in f" {q} " for w in phrases if " " in w):
            return kind
    return ""


_CAUSE = re.compile(
    r"\b(?:because|since|due to|owing to|so that|in order to|the reason|named after|"
    r"as a result|therefore|thus|so (?:he|she|it|they|we|that))\b",
    re.IGNORECASE,
)


def _bigrams(text: str) -> set[tuple[str, str]]:
    return set(_bigrams_of(text))


@lru_cache(maxsize=16384)
def _bigrams_of(text: str) -> frozenset[tuple[str, str]]:
    """Adjacent content-word stems of ``text``."""
    folded = unicodedata.normalize("NFKC", fold(text)).casefold()
    stems = [
        stem(w)
        for w in re.findall(r"[^\W_]+", folded)
        if (len(w) >= 3 or w.isdigit()) and w not in STOPWORDS
    ]
    return frozenset(itertools.pairwise(stems))


def _asked(question: str) -> set[str]:
    """The question's content stems, a "how large" question's adjective read as its measure."""
    asked = _stems(question)
    adjective, measure = dimension(question)
    if adjective:
        asked = (asked - {stem(adjective)}) | {stem(measure)}
    return asked


class _Candidate(NamedTuple):
    start: int
    text: str
    label: str  # the recogniser's label of a who / which-organisation answer, else ""


def _candidates(kind: str, text: str) -> list[_Candidate]:
    if kind == "when":
        return [_Candidate(m.start(), m.group(0), "") for m in _DATE.finditer(text)]
    if kind == "number":
        return [_Candidate(m.start(), m.group(0), "") for m in _NUMBER.finditer(text)]
    if kind not in ("who", "org", "where"):
        return []
    found = [
        m
        for m in _NAME.finditer(text)
        if not (m.group(0).split()[0].lower() in _WEAK_CAPITALS and " " not in m.group(0))
    ]
    if kind == "where":
        return [_Candidate(m.start(), m.group(0), "") for m in found]
    out = []
    for m in found:  # a person or an organisation (only that for "which company"), as the
        # recogniser reads the text
        agents = [
            (start, end, label)
            for start, end, label in entities(text)
            if label in (("ORG",) if kind == "org" else AGENTS)
            and start < m.end()
            and end > m.start()
        ]
        if not agents:
            continue
        # the name as the recogniser bounds it when it reaches further ("the Cleveland Bridge
        # and Engineering Company", which the capitalised run cuts at "and")
        labels = {a[2] for a in agents}
        label = next(x for x in AGENTS if x in labels)
        first = min(m.start(), *(a[0] for a in agents))
        last = max(m.end(), *(a[1] for a in agents))
        out.append(_Candidate(first, text[first:last], label))
    return out


AGENT_PREFERENCE = 0.25
"""What a name of the kind not asked for loses (in units of 40 characters of distance): a person
for "who", an organisation for "which company"."""


_NEGATED = re.compile(r"\b(?:not|no|nor)\s+(?:a\s+)?$", re.IGNORECASE)
"""Words before a number that deny it ("not one", "not a single")."""


ROLE_PHRASE = True
"""A who-question's sure best claim that names no one in the role asked about answers with the
noun phrase that fills it ("assemblies and county governments")."""
ROLE_ABSTAIN = True
"""... and when no phrase fills it either, the wiki doesn't say who."""
NOUN_PHRASE = True
"""A people named by an adjective answers "who" with the noun it qualifies ("British
merchants")."""
COUNTS_OTHER = 1.0
"""What a number that counts another noun than a how-many question's loses (in units of 40
characters of distance): "two" in "the following two lines" for "How many columns ...?"."""


@lru_cache(maxsize=4096)
def _word_stems(text: str) -> tuple[tuple[int, str], ...]:
    """Where each word of ``text`` starts, and its stem (as written: not case-folded); ~2 KB
    each, remembered for the texts of the last questions."""
    return tuple((m.start(), stem(m.group())) for m in re.finditer(r"[^\W_]+", text))


def _span(question: str, text: str) -> str | None:
    """:func:`_fitting_span`'s span, when it fits the question."""
    found = _fitting_span(question, text)
    return found[0] if found is not None and found[1] else None


def _fitting_span(question: str, text: str, roles: bool = True) -> tuple[str, bool] | None:
    """The span of ``text`` that answers a short factual ``question``: of the right type
    (a date, a number, a name), not already in the question, nearest to the question's words
    in the claim ("designed by James Douglass" for "who designed"), a place after "in", "at"
    and the like for "where", a name after "by" for "who"; and whether it fits: ``False`` for
    a number that counts another noun than the one a how-many question asks about."""
    kind = question_type(question)
    if not kind:
        return None
    asked = Held(_asked(question))
    measure = dimension(question)[1]
    spots = [start for start, word in _word_stems(text) if asked.has(word)]
    limit = measure == "maximum" or _MODAL.search(question) is not None
    best: tuple[float, int, str, bool] | None = None
    for match in _candidates(kind, text):
        if kind in ("number", "when") and UNITS_KEPT:
            stop = match.start + len(match.text)
            first, last = with_unit(text, match.start, stop, measure, limit)
            match = _Candidate(first, text[first:last], match.label)
        span = match.text.strip().rstrip(".,;:")
        stems = _stems(span)
        if not span or (stems and all(asked.has(s) for s in stems)):
            continue
        if kind == "number" and _NEGATED.search(text[max(0, match.start - 12) : match.start]):
            continue  # "not one so employed has been discovered" says none, not one
        if kind == "number" and dated_year(text, match.start, span):
            continue  # "On January 1st, 1825, ... debt" says when, not how large
        if kind == "when" and named_year(text, match.start, question):
            continue  # "the War of 1812" names a war; it doesn't date the sentence's event
        if re.search(rf"(?<!\w){re.escape(span)}(?!\w)", question, re.IGNORECASE):
            continue  # "one" in "attached to one connection" is the question's, not an answer
        if (
            roles
            and kind in ("who", "org")
            and not fills(question, text, match.start, match.start + len(match.text))
        ):
            continue  # a name beside the verb asked about, not its doer: "Government of France"
        if kind in ("who", "org", "where"):
            words = span.split()
            while words and words[0].lower() in _WEAK_CAPITALS:
                words = words[1:]
            span = " ".join(words)
            if not span or all(w.lower().strip(".") in _CALENDAR for w in words):
                continue
            lead = text[: match.start].rstrip()
            opens = not lead or lead[-1] in '.!?:;"“('
            if len(words) == 1 and (
                span.lower() in STOPWORDS or (opens and span.lower() in _OPENERS)
            ):
                continue  # "I" anywhere; "Therefore, ..." at a sentence's start
            if NOUN_PHRASE and kind == "who" and match.label == "NORP":
                end = modified_noun_end(text, match.start, match.start + len(match.text))
                if end is not None:  # "British merchants offered ...": not "British"
                    span = f"{span}{text[match.start + len(match.text) : end]}"
        distance = min((abs(match.start - p) for p in spots), default=len(text)) / 40.0
        before = text[max(0, match.start - 24) : match.start]
        if kind == "where" and _PLACE_BEFORE.search(before):
            distance -= 1.0
        if kind in ("who", "org") and _AGENT_BEFORE.search(before):
            distance -= 0.5
        if kind in ("who", "org") and match.label != ("ORG" if kind == "org" else "PERSON"):
            distance += AGENT_PREFERENCE
        if measure and measured(measure, span):
            distance -= 1.0  # "How large?": "281 terabytes" over a bare "281"
        other = kind == "number" and COUNTS_OTHER > 0 and counts_other(question, text, match.start)
        if other:
            distance += COUNTS_OTHER
        key = (distance, match.start, span, not other)
        if best is None or key[:3] < best[:3]:
            best = key
    return (best[2], best[3]) if best else None


def _said(hit: Hit, *more: str) -> Held:
    """The stems ``hit``'s own words hold (its text's and its quotes'), and ``more``'s."""
    return held_by((hit.text, *(e.quote for e in hit.evidence), *more))


def ranked(
    question: str, hits: list[Hit], context: dict[str, str] | None = None
) -> list[tuple[float, float, int, Hit]]:
    """``(score, support, retrieval rank, hit)`` of every hit that holds enough of the question
    (:data:`MIN_SUPPORT`, or defines the term asked about), best first. ``context`` maps a claim
    to the text it follows in its source (a heading, an FAQ's question): read like its page title,
    at half weight."""
    context = context or {}
    asked = _asked(question)
    kind = question_type(question)
    measure = dimension(question)[1]
    how = asks_how(question)
    compounds = compounds_of(question) if how else set()
    verb = action(question)
    said = [_said(h) for h in hits]
    if how and sections.NAMED:  # a page the question names by its title: its claims' subject
        said = [
            s | Held(named_page(question, h.page_title)) for s, h in zip(said, hits, strict=True)
        ]
    titled = [
        s | held_by((h.page_title, h.section, context.get(h.claim_id, "")))
        for s, h in zip(said, hits, strict=True)
    ]
    weights = _weights(asked, said)
    if kind in ("who", "org"):  # the recogniser reads every candidate in one batch
        recognise(h.text for h in hits)
    if kind in ("who", "org", "number"):  # the role or count checks parse them, in one batch
        prepare(question, [h.text for h in hits])
    term = defined_term(question)
    pairs = _bigrams(question)
    why = question.strip().lower().startswith("why ")
    nouns = key_nouns(question)
    scored: list[tuple[float, float, int, Hit]] = []
    for rank, hit in enumerate(hits):
        # the claim's own words count fully, its page title's at half weight
        own = _support(weights, said[rank])
        support = own + 0.5 * (_support(weights, titled[rank]) - own)
        defining = bool(term) and defines(term, hit.text, hit.page_title)
        if support < MIN_SUPPORT and not defining:
            continue
        score = support + RANK_BONUS / (1 + rank)
        # "Maximum Number Of Columns" over "The default setting for SQLITE_MAX_COLUMN is 2000."
        score += HEADING * headed_share(weights, nouns, hit, matches)
        if kind and _span(question, hit.text) is not None:
            score += 0.1  # it holds what the question asks for: a date, a number, a name
            if measure and measured(measure, hit.text):
                score += MEASURED  # "How large?": "281 terabytes", not "1000 pages ... in size"
        elif kind in ("number", "when"):
            score -= LACKING  # "How many columns?": a sentence with no number doesn't say
        if defining:
            score += 1.0  # "What is a set?": "A set is ..." answers it, whatever else it says
        if instructs(question, hit.text):
            score += 0.3  # "How do I create X?": "To create X, run ..."
        elif how and OPENS_INSTRUCTION.match(hit.text.strip()):
            score += OTHER_VERB  # "How do I turn on X?": "To enable X, run ..."
        if why and _CAUSE.search(hit.text):
            score += 0.1  # "Why ...?": a sentence that gives a cause
        if pairs:  # the question's word pairs kept together ("root logger", "base class")
            score += 0.15 * len(pairs & _bigrams(hit.text)) / len(pairs)
        if verb and held_of(hit.text).has(verb):
            score += ACTION  # "How do I rename a file?": "git-mv - Move or rename a file"
        if how and compounds and names_compound(compounds, hit.text):
            score += COMPOUND  # "one line per commit": "`--oneline`: ..."
        if how and commands(question, hit.text):
            score += 0.15  # "How do I shrink the file?": "... run the VACUUM command."
            if USES_COMMAND.search(hit.text):
                score += INSTRUMENT  # "..., using the PRAGMA foreign_keys command."
        if (how or named(term, hit.text)) and NAME_LINE_PATTERN.match(hit.text):
            score += NAME_LINE  # "git-blame - Show what revision ... last modified each line"
        if not statement(hit.text) and not NAME_LINE_PATTERN.match(hit.text):
            score -= 0.25  # a heading or a question: it leads to the answer, it isn't one
        scored.append((score, support, rank, hit))
    scored.sort(key=lambda item: (-item[0], item[2]))
    return scored


PROMOTE_SHARE = 0.35
"""Share of the best claim's support a claim that holds what a typed question asks for needs to
come first when the best one doesn't hold it."""
PROMOTE_POOL = 10
"""How many of the best-scored claims are looked at for one that does."""


def answering_first(
    question: str, scored: list[tuple[float, float, int, Hit]]
) -> list[tuple[float, float, int, Hit]]:
    """``scored`` with, for a when / how-many / who / where question whose best claim holds the
    question's words but not what it asks for (no date, number, person, place), the best of the
    next claims that does hold it first, when it holds at least :data:`PROMOTE_SHARE` of the best
    claim's support: "The new hall on Mill Street was opened in the spring" holds every word of
    "Who opened the new hall on Mill Street?" and answers it less than "Tomas Berg opened the
    hall with a speech"."""
    if not question_type(question):
        return _naming_first(question, scored) if PROMOTE_COMMAND else scored
    if _span(question, scored[0][3].text) is not None:
        return scored
    floor = PROMOTE_SHARE * scored[0][1]
    for n, item in enumerate(scored[1:PROMOTE_POOL], 1):
        if item[1] >= floor and _span(question, item[3].text) is not None:
            return [item, *scored[:n], *scored[n + 1 :]]
    return scored


PROMOTE_COMMAND = True
"""A how-do-I question's best claim that names no command or option gives way to the best of
the next ones (within :data:`MARGIN`) that names one."""


def _naming_first(
    question: str, scored: list[tuple[float, float, int, Hit]]
) -> list[tuple[float, float, int, Hit]]:
    """``scored`` with, for a how-do-I question whose best claim names no command, option or
    identifier (and is no manual page's NAME line, which names its command), the best of the
    next :data:`PROMOTE_POOL` claims within :data:`MARGIN` of it that names one first: "How do I
    delete a local branch?" is answered by "In combination with -d (or --delete), allow deleting
    the branch ...", not by "Git has a default disposition of keeping data ... local references
    to branches on remotes that have themselves deleted those branches"."""
    if not scored or not asks_how(question):
        return scored
    best = scored[0]
    text = best[3].text
    if commands(question, text) or SHORT_OPTION.search(text) or NAME_LINE_PATTERN.match(text):
        return scored  # "..., see the -C and -M options" names its options
    floor = PROMOTE_SHARE * best[1]
    for n, item in enumerate(scored[1:PROMOTE_POOL], 1):
        if item[0] < best[0] - MARGIN:
            break
        if item[1] >= floor and statement(item[3].text) and commands(question, item[3].text):
            return [item, *scored[:n], *scored[n + 1 :]]
    return scored


def _wanted(kind: str, short: dict[str, Any]) -> bool:
    """The short answer names what a who / which-organisation question asks for: a person
    (an organisation)."""
    text = str(short["text"])
    labels = {label for start, end, label in entities(text) if end - start >= len(text) // 2}
    return ("ORG" if kind == "org" else "PERSON") in labels


def title_answer(
    question: str, scored: list[tuple[float, float, int, Hit]]
) -> tuple[str, Hit] | None:
    """For a who / which-organisation question: the person (organisation) a retrieved page's
    title names, sharing no word with the question, when the title holds every other word of the
    question ("Who gave the State of the Union in 1823?" and "State of the Union, 1823: James
    Monroe"), with the page's best claim; ``None`` when no title does. A title that holds only
    some of them answers nothing: "State of the Union, 1823: James Monroe" never says who was
    president, or king of France, in 1823. Pages are tried in the order of their best claims."""
    if not scored:
        return None
    kind = question_type(question)
    wanted = "ORG" if kind == "org" else "PERSON"
    asked = _asked(question)
    asking = Held(asked)
    seen: set[str] = set()
    recognise(h.page_title for _, _, _, h in scored if h.page_title)
    for _, _, _, hit in scored:
        title = hit.page_title
        if not title or hit.page in seen:
            continue
        seen.add(hit.page)
        held = held_of(title)
        if not all(held.has(s) for s in asked):
            continue
        names = [
            title[start:end].strip()
            for start, end, label in entities(title)
            if label == wanted and title[start:end].strip()
        ]
        # a name that shares a word with the question is its subject, not its answer ("Lower
        # Manhattan" for "Which newspaper reported on Manhattan?")
        names = [n for n in names if not any(asking.has(s) for s in _stems(n))]
        if names:  # the fullest name: "Ada Whitcombe" over a lone "Guild" the recogniser
            return max(names, key=lambda n: len(n.split())), hit  # took for a person
    return None


def _holds_numbers(
    question: str, scored: list[tuple[float, float, int, Hit]], short: dict[str, Any]
) -> bool:
    """The claim the short answer comes from holds every number of the question ("1823")."""
    numbers = set(re.findall(r"\d+", question))
    cited = short["claims"][0]
    for _, _, _, hit in scored:
        if hit.claim_id == cited:
            return numbers <= set(re.findall(r"\d+", hit.text))
    return not numbers


def _holds(name: str, hit: Hit, context: dict[str, str]) -> bool:
    """``hit`` (its text, page title or context) names ``name``."""
    wanted = _stems(name) or {name.casefold()}
    have = held_of(hit.text) | held_of(hit.page_title) | held_of(hit.section)
    have |= held_of(context.get(hit.claim_id, ""))
    return all(have.has(w) for w in wanted)


def _shown(sentences: list[dict[str, Any]], hits: list[Hit]) -> list[Hit]:
    """The hits the first :data:`SHOWN` of ``sentences`` cite."""
    cited = {c for s in sentences[:SHOWN] for c in s["claims"]}
    return [h for h in hits if h.claim_id in cited]


def extractive_answer(
    question: str,
    hits: list[Hit],
    nonce: str,
    context: dict[str, str] | None = None,
    required: tuple[str, ...] = (),
) -> dict[str, Any]:
    """A reply in the answer schema built only from ``hits`` (claims retrieved for the question).

    ``context``: a claim's preceding text in its source (:func:`ranked`); ``required``: names the
    question asks about that the answer must hold ("MySQL" in "How do I create a user in MySQL?",
    when the wiki mentions MySQL only rarely): claims that don't are no answer."""
    context = context or {}
    none = {"nonce": nonce, "not_in_wiki": True, "sentences": [], "short_answer": None}
    scored = ranked(question, hits, context)
    if required:  # and more of the question than the names: "create a user" in MySQL
        named = {w for n in required for w in _stems(n)}
        rest = _stems(question) - named
        weights = _weights(rest, [held_of(s[3].text) for s in scored])
        scored = [
            s
            for s in scored
            if all(_holds(n, s[3], context) for n in required)
            and (not rest or _support(weights, held_of(s[3].text)) >= MIN_SUPPORT)
        ]
    if not scored:
        return none
    scored = under_best(answering_first(question, scored), hits, context)
    best = scored[0][0]
    chosen: list[Hit] = []
    by_text: dict[str, dict[str, Any]] = {}
    sentences: list[dict[str, Any]] = []
    for score, _, _, hit in scored:
        if score < best - MARGIN or len(sentences) == MAX_SENTENCES:
            break
        key = " ".join(hit.text.split()).casefold()
        if key in by_text:  # the same sentence on two pages: one sentence, both citations
            if len(by_text[key]["claims"]) < MAX_CITATIONS:
                by_text[key]["claims"].append(hit.claim_id)
            continue
        by_text[key] = {"text": hit.text, "claims": [hit.claim_id]}
        sentences.append(by_text[key])
        chosen.append(hit)
    if scored[0][1] < SURE:
        # unsure: the best claim lacks some of the question's words, so the retrieval's own
        # best matches (BM25 order, followers left out) that hold enough of the question fill
        # the answer to :data:`FILL`
        eligible = {hit.claim_id for _, _, _, hit in scored}
        retrieved = [h for h in hits if h.claim_id not in context]
        for hit in retrieved[:FILL]:
            key = " ".join(hit.text.split()).casefold()
            if len(sentences) >= FILL:
                break
            if hit.claim_id in eligible and key not in by_text and statement(hit.text):
                by_text[key] = {"text": hit.text, "claims": [hit.claim_id]}
                sentences.append(by_text[key])
    short: dict[str, Any] | None = None
    for hit in chosen:  # the first chosen claim that holds what the question asks for
        span = _span(question, hit.text)
        if span is None and asks_how(question):
            found = commands(question, hit.text)
            page = NAME_LINE_PATTERN.match(hit.text)
            if page is not None:  # "git-mv - Move or rename a file": the command is "git-mv"
                found = [re.split(r"[\s(,]", hit.text, maxsplit=1)[0]]
            span = found[0] if found else None
        if span is not None:
            short = {"text": span, "claims": [hit.claim_id]}
            break
    kind = question_type(question)
    if short is None and kind in ("who", "org") and scored[0][1] >= SURE:
        best_hit = scored[0][3]
        phrase = role_phrase(question, best_hit.text) if ROLE_PHRASE else None
        if phrase is not None:  # "assemblies and county governments handled ..."
            short = {"text": phrase, "claims": [best_hit.claim_id]}
        elif ROLE_ABSTAIN and fillers(question, best_hit.text) is not None:
            # "Who commanded the French squadron?": the sentence with every word of it says
            # "the commander of the French squadron" and names no one in that role
            return none
    if (
        kind in ("who", "org")
        and scored[0][1] < SURE
        and (short is None or not _wanted(kind, short))
    ):
        # "Who was president in 1823?": no sure claim names a person, but a page whose title
        # holds a word of the question ("1823") names one ("State of the Union, 1823: James
        # Monroe"): the title is the source's own words, which the support check reads with
        # the claim's quotes (``Asker`` adds them)
        titled = title_answer(question, scored)
        if titled is not None:
            name, hit = titled
            sentence = {"text": hit.page_title, "claims": [hit.claim_id]}
            short = {"text": name, "claims": [hit.claim_id]}
            return {
                "nonce": nonce,
                "not_in_wiki": False,
                "sentences": [sentence],
                "short_answer": short,
            }
        if short is not None and not _holds_numbers(question, scored, short):
            # "Congress" is no answer to "Who was president in 1823?" from a sentence that
            # doesn't say 1823 (the closest pages are still listed)
            return none
    if (
        short is None
        and kind
        and scored[0][1] < SURE
        and not (
            kind in ("who", "org")
            and any(_fitting_span(question, h.text, False) for h in _shown(sentences, hits))
        )
    ):
        # (a sentence that names someone, only not in the role asked about, is still shown
        # without a short answer: "bought plots of land from speculators" for "Who sold ...?")
        # "Who was president in 1823?": no claim near the question holds a name (a date, a
        # number, a place) and none holds all of its words: what is shown would be beside the
        # point, so the wiki doesn't say (the closest pages are listed with the answer)
        return none
    if short is not None:  # the short answer, then at most two sentences that support it
        cited = short["claims"][0]
        first = [s for s in sentences if cited in s["claims"]]
        sentences = (first + [s for s in sentences if cited not in s["claims"]])[:SUPPORTING]
    sentences = enough(sentences[:SHOWN], short, scored, context, question)
    return {"nonce": nonce, "not_in_wiki": False, "sentences": sentences, "short_answer": short}
