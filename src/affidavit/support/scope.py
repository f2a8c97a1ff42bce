"""Scope words: negation, quantifiers and hedges, read where they attach (W11 structure rules).

- :func:`polarity` — whether a predicate is negated: by ``not``/``n't``/``never``, by ``no`` or
  ``neither … nor`` on its subject or object, by a verb of refusal over it ("refused to host"), or
  by a word it stands under — ``without``, ``unlike``, ``instead of``, ``rather than``, ``except``.
  :func:`negation_changes` compares the polarity of each predicate the text restates with the
  quote's (a word with a negating prefix that WordNet lists as the antonym — "undefined" for
  "defined" — counts as a negation), and :func:`negations_agree` tells the bag-of-words negation
  rule when the parse shows the two agree after all ("neither FAS 113 nor SAP 62 defines" /
  "both leave … undefined").
- :func:`quantifier_changes` — "all" where the quote says "a few"; "only" where it restricts
  nothing; "many observers" turned into "observers".
- :func:`hedge_changes` — a hedge the quote puts on what the text restates ("may", "perhaps",
  "it is suspected that", "a few studies have suggested that", "is proposing to") that the text
  drops.
"""

from __future__ import annotations

from .align import Alignment
from .overreach import CALLED, called, called_change
from .tree import CLAUSE, Change, Tree

__all__ = [
    "hedge_changes",
    "negation_changes",
    "negations_agree",
    "polarity",
    "quantifier_changes",
]

NEGATORS = frozenset(
    [
        "not",
        "n't",
        "never",
        "no",
        "neither",
        "nor",
        "none",
        "nobody",
        "nothing",
        "nowhere",
        "without",
        "cannot",
    ]
)
NEGATING_VERBS = frozenset(
    [
        "refuse", "fail", "decline", "reject", "deny", "lack", "avoid", "prevent", "cease",
        "stop", "omit", "neglect", "forbid", "prohibit", "ban", "bar", "preclude", "refrain",
        "abstain",
    ]
)  # fmt: skip
"""Verbs that negate their complement ("refused to host", "forbids damaging")."""
CONTRAST = frozenset(["unlike", "instead", "rather", "except", "excluding"])
"""Words that put what follows them outside the statement ("Unlike confirmation, baptism is")."""


_NO = frozenset(["no", "neither", "none"])
_UNABLE = frozenset(["unable", "incapable", "failing", "refusing"])
_NOBODY = frozenset(["none", "nothing", "nobody", "neither"])


def _negated_by_children(tree: Tree, i: int) -> list[int]:
    """The negations on ``i`` itself: ``not``/``never`` on it, ``no``/``neither`` on its
    subject, object or *by* phrase, a subject or object that is ``none``/``nothing``."""
    out = []
    for c in tree.children[i]:
        t = tree[c]
        itself = (
            t.dep == "neg"
            or (t.lower in ("never", "not", "n't") and t.dep == "advmod")
            or (t.dep == "preconj" and t.lower == "neither")
            or (t.dep in ("nsubj", "nsubjpass", "dobj") and t.lower in _NOBODY)
        )
        if itself:
            out.append(c)
        elif t.dep in ("nsubj", "nsubjpass", "dobj", "attr", "agent"):
            heads = tree.kids(c, "pobj") if t.dep == "agent" else [c]
            out += [
                d
                for h in heads
                for d in tree.children[h]
                if tree[d].lower in _NO
                and tree[d].dep in ("det", "preconj", "advmod")
                and not (tree[d].text == "No" and tree[h].pos == "PROPN")
            ]
    return out


def polarity(tree: Tree, i: int) -> tuple[bool, list[int]]:
    """(negated, the negating tokens) for predicate ``i``: negations on it, and on the clauses
    and contrast phrases it stands under (each counted once); a noun that is a verb's subject
    or object also takes the verb's ("None of these studies suggested any *connection*")."""
    found = set(_negated_by_children(tree, i))
    node = i
    for head in tree.ancestors(i):
        t, h = tree[node], tree[head]
        if t.dep in ("xcomp", "ccomp", "dobj") and (
            h.lemma in NEGATING_VERBS or h.lower in _UNABLE
        ):
            found.add(head)
        if (h.lower in CONTRAST and not _except_for(tree, head)) or (
            h.lower == "without" and h.pos == "ADP"
        ):
            found.add(head)
        if h.lower in ("of", "than"):
            found |= {c for c in tree.children[head] if tree[c].lower in ("instead", "rather")}
        if t.dep in CLAUSE_STOP:
            break
        node = head
    # "recycled instead of burned": spaCy hangs the contrast on the verb before it
    prev = i - 1
    while (
        prev >= 0
        and tree[prev].pos in ("ADP", "ADV", "PART", "AUX", "DET", "PUNCT")
        and i - prev <= 3
    ):
        if tree[prev].lower in ("instead", "rather"):
            found.add(prev)
            break
        if (
            tree[prev].lower in ("of", "than")
            and prev > 0
            and tree[prev - 1].lower in ("instead", "rather")
        ):
            found.add(prev - 1)
            break
        prev -= 1
    t = tree[i]
    if t.dep == "xcomp" and any(tree[c].lower == "too" for c in tree.children[t.head]):
        found.add(t.head)  # "too small to be felt": not felt
    if t.pos in ("NOUN", "PROPN") and t.dep in ("dobj", "nsubj", "nsubjpass", "attr"):
        verb = t.head
        while tree[verb].pos == "ADP" and tree[verb].head != verb:
            verb = tree[verb].head
        if verb != i and tree[verb].pos in ("VERB", "AUX"):
            found |= set(polarity(tree, verb)[1])
    ordered = sorted(found)
    return len(ordered) % 2 == 1, ordered


CLAUSE_STOP = frozenset(["relcl", "advcl", "parataxis"])


def _predicate(tree: Tree, i: int) -> bool:
    t = tree[i]
    return (
        t.pos == "VERB"
        or (t.pos == "AUX" and t.dep not in ("aux", "auxpass"))
        or (t.pos in ("ADJ", "NOUN") and t.dep in ("acomp", "attr", "ROOT"))
    )


def negation_changes(a: Alignment, text: Tree, quotes: list[Tree]) -> list[Change]:
    """Predicates the text restates with the other polarity."""
    out: list[Change] = []
    for t in text:
        if not _predicate(text, t.i):
            continue
        m = a.matches.get(t.i)
        opposite = False
        if m is None and t.i in a.opposites:
            q, qi = a.opposites[t.i]
            opposite = True
        elif m is not None:
            q, qi = m.quote, m.index
        else:
            continue
        quote = quotes[q]
        if not opposite and not _predicate(quote, qi):
            continue  # a noun the quote negates only through its verb: the bag rule reads it
        mine, my_words = polarity(text, t.i)
        theirs, their_words = polarity(quote, qi)
        if (mine != theirs) == opposite:
            continue
        if opposite:
            out.append(
                Change(
                    "opposite", True, (t.text,), f"'{t.text}' — the quote says '{quote[qi].text}'"
                )
            )
        elif mine:
            words = tuple(text[n].text for n in my_words[:2])
            out.append(
                Change(
                    "negation",
                    True,
                    (*words, t.text),
                    f"the text negates '{t.text}' ({_q(words)}) and the quote doesn't",
                )
            )
        else:
            words = tuple(quote[n].text for n in their_words[:2])
            out.append(
                Change(
                    "negation",
                    True,
                    (t.text,),
                    f"the quote negates '{quote[qi].text}' ({_q(words)}) and the text doesn't",
                )
            )
    return out


def negations_agree(a: Alignment, text: Tree, quotes: list[Tree]) -> bool:
    """Every negated predicate on either side is restated with the same polarity (a negating
    prefix or an antonym counting as a negation), and at least one is."""
    seen = False
    for t in text:
        if not _predicate(text, t.i) and t.i not in a.opposites:
            continue
        m = a.matches.get(t.i)
        if m is not None:
            q, qi, opposite = m.quote, m.index, False
        elif t.i in a.opposites:
            (q, qi), opposite = a.opposites[t.i], True
        else:
            continue
        mine = polarity(text, t.i)[0]
        theirs = polarity(quotes[q], qi)[0]
        if (mine != theirs) != opposite:
            return False
        if mine or theirs or opposite or _asserted_under_negation(quotes[q], qi):
            seen = True
    return seen


FACTIVE = frozenset(["forget", "overlook", "ignore", "regret"])
"""Verbs whose clause stays true when they are negated: "let us not forget that we have
suffered three recessions" says that we have. (Not "know": "I don't know that it works" doubts
it.)"""


def _asserted_under_negation(tree: Tree, i: int) -> bool:
    """``i`` heads the clause of a negated factive verb ("not forget that *we suffered*"): the
    negation is the verb's, and the clause is asserted."""
    t = tree[i]
    if t.dep != "ccomp" or t.head == i:
        return False
    verb = tree[t.head]
    return verb.lemma in FACTIVE and polarity(tree, t.head)[0]


def _q(words: tuple[str, ...]) -> str:
    return ", ".join(f"'{w}'" for w in words)


# --- quantifiers ---------------------------------------------------------------------------------

ALL, MOST, MANY, SOME, FEW, ONLY = "all", "most", "many", "some", "few", "only"
RANK = {ALL: 5, MOST: 4, MANY: 3, SOME: 2, FEW: 1}
QUANTIFIERS = {
    "all": ALL, "every": ALL, "each": ALL, "always": ALL, "entire": ALL, "whole": ALL,
    "everyone": ALL, "everything": ALL, "universally": ALL, "invariably": ALL,
    "most": MOST, "mostly": MOST, "largely": MOST, "mainly": MOST, "primarily": MOST,
    "predominantly": MOST, "chiefly": MOST, "majority": MOST, "usually": MOST,
    "generally": MOST, "typically": MOST, "commonly": MOST, "normally": MOST,
    "many": MANY, "often": MANY, "frequently": MANY, "numerous": MANY, "several": MANY,
    "various": MANY, "range": MANY, "number": MANY, "lot": MANY, "much": MANY,
    "some": SOME, "sometimes": SOME, "certain": SOME, "occasionally": SOME, "partly": SOME,
    "few": FEW, "seldom": FEW, "rarely": FEW, "little": FEW,
    "only": ONLY, "solely": ONLY, "exclusively": ONLY, "alone": ONLY, "sole": ONLY,
    "just": ONLY, "merely": ONLY,
}  # fmt: skip
"""Words that say how much of something a statement holds for, by strength."""


_NOUN_DEPS = frozenset(["det", "amod", "predet", "advmod", "quantmod", "npadvmod", "nummod"])


def quantifiers(tree: Tree, i: int) -> list[tuple[int, str]]:
    """The quantifiers on token ``i``: a noun's determiners and modifiers ("all species", "a
    few studies", "only at"), the word it is "of" ("many of those"); a verb's adverbs
    ("always", "sometimes")."""
    out: list[tuple[int, str]] = []
    verb = tree[i].pos in ("VERB", "AUX")
    for c in tree.children[i]:
        t = tree[c]
        kind = QUANTIFIERS.get(t.lower)
        if kind is None or (verb and t.dep != "advmod") or (not verb and t.dep not in _NOUN_DEPS):
            continue
        if t.lower == "few" and c > 0 and tree[c - 1].lower == "a":
            kind = SOME
        if t.lower in ("number", "range", "lot", "majority"):
            continue
        if t.lower == "much" and tree[i].pos != "NOUN":
            continue
        out.append((c, kind))
    t = tree[i]
    if t.dep == "pobj":
        of = t.head
        head = tree[of].head
        if tree[of].lower == "of" and (tree[head].lower in QUANTIFIERS or tree[head].tag == "CD"):
            kind = QUANTIFIERS.get(tree[head].lower, "")
            if tree[head].lower == "few" and head > 0 and tree[head - 1].lower == "a":
                kind = SOME
            if kind:
                out.append((head, kind))
    return out


def _clause_quantifiers(tree: Tree, p: int) -> list[tuple[int, str]]:
    """The quantifiers of predicate ``p``'s clause: on it and on its subject and object."""
    found = quantifiers(tree, p)
    for c in tree.children[p]:
        if tree[c].dep in ("nsubj", "nsubjpass", "dobj", "attr", "agent"):
            head = c
            if tree[c].dep == "agent":
                objs = tree.kids(c, "pobj")
                if not objs:
                    continue
                head = objs[0]
            if tree[head].lower in QUANTIFIERS and tree[head].pos in ("ADJ", "DET", "PRON", "NOUN"):
                kind = QUANTIFIERS[tree[head].lower]
                if tree[head].lower == "few" and head > 0 and tree[head - 1].lower == "a":
                    kind = SOME
                if tree[head].lower not in ("number", "range", "lot", "majority"):
                    found.append((head, kind))
            found += quantifiers(tree, head)
            for of in tree.kids(head, "prep"):
                if tree[of].lower == "of":
                    for o in tree.kids(of, "pobj"):
                        found += [(n, k) for n, k in quantifiers(tree, o) if n == head]
    return found


def _strongest(found: list[tuple[int, str]]) -> tuple[int, str] | None:
    ranked = [f for f in found if f[1] in RANK]
    return max(ranked, key=lambda f: RANK[f[1]]) if ranked else None


def _clause_only(tree: Tree, i: int) -> bool:
    """An "only"-word stands in the clause of ``i``."""
    clause = tree.clause_of(i)
    return any(
        tree[n].lower in ("only", "solely", "exclusively", "alone", "sole", "just", "merely")
        and tree.clause_of(n) == clause
        for n in tree.subtree(clause)
    )


def quantifier_changes(a: Alignment, text: Tree, quotes: list[Tree]) -> list[Change]:
    out: list[Change] = []
    done: set[int] = set()
    for t in text:
        if not _predicate(text, t.i):
            continue
        m = a.matches.get(t.i)
        if m is None:
            continue
        quote = quotes[m.quote]
        mine = _clause_quantifiers(text, t.i)
        theirs = _clause_quantifiers(quote, m.index)
        done |= {n for n, _ in mine}
        change = _compare(text, quote, t.i, m.index, mine, theirs)
        if change and not (change.clear is False and _stated_elsewhere(text, quotes, mine)):
            out.append(change)
    # nouns whose predicate the quotes don't restate
    for t in text:
        if t.pos not in ("NOUN", "PROPN"):
            continue
        m = a.matches.get(t.i)
        if m is None:
            continue
        mine = [(n, k) for n, k in quantifiers(text, t.i) if n not in done]
        if not mine:
            continue
        quote = quotes[m.quote]
        change = _compare(text, quote, t.i, m.index, mine, quantifiers(quote, m.index))
        if change and not (change.clear is False and _stated_elsewhere(text, quotes, mine)):
            out.append(change)
    return out


def _stated_elsewhere(text: Tree, quotes: list[Tree], mine: list[tuple[int, str]]) -> bool:
    """Every quantifier of the text stands in some quote, of the same strength, on a word of
    the same lemma ("each axis" / "each axis", "most of the complexity" in a quote of its own):
    the alignment matched the predicate to another occurrence."""
    if not mine:
        return False
    for n, kind in mine:
        targets = _quantified(text, n)
        if not any(
            QUANTIFIERS.get(u.lower) == kind and _quantified(quote, u.i) & targets
            for quote in quotes
            for u in quote
        ):
            return False
    return True


def _quantified(tree: Tree, n: int) -> set[str]:
    """The lemmas a quantifier word quantifies: its head, and what it is "of"."""
    out = {tree[tree[n].head].lemma}
    for of in tree.kids(n, "prep"):
        if tree[of].lower == "of":
            out |= {tree[o].lemma for o in tree.kids(of, "pobj")}
    return out - {"be", "have"}


def _compare(
    text: Tree,
    quote: Tree,
    i: int,
    qi: int,
    mine: list[tuple[int, str]],
    theirs: list[tuple[int, str]],
) -> Change | None:
    my_only = [(c, k) for c, k in mine if k == ONLY]
    if my_only and any(k == FEW for _, k in theirs):
        return None  # "only a small effect" for "little impact", "only rarely" for "rarely"
    if my_only and not any(k == ONLY for _, k in theirs) and not _clause_only(quote, qi):
        word = text[my_only[0][0]].text
        kinds = _strongest(theirs)
        others = _not_alone(quote)
        if kinds:
            said = f"the quote says '{_quantifier_phrase(quote, kinds[0])}'"
        elif others is not None:
            said = f"the quote says '{quote[others].text}'"
        else:
            return Change("quantifier", False, (word,), f"'{word}' — the quote restricts nothing")
        return Change("quantifier", True, (word,), f"'{word}' — {said}")
    mine_q, theirs_q = _strongest(mine), _strongest(theirs)
    if mine_q is not None:
        word = text[mine_q[0]].text
        if theirs_q is None:
            weaker = _weaker_anywhere(quote, mine_q[1]) if mine_q[1] == ALL else None
            if weaker is not None:
                return Change(
                    "quantifier",
                    True,
                    (word,),
                    f"'{word}' — the quote says '{_quantifier_phrase(quote, weaker)}'",
                )
            if mine_q[1] in (ALL, MOST):
                return Change(
                    "quantifier",
                    False,
                    (word,),
                    f"'{word}' — the quote says it of '{quote[qi].text}' without a quantifier",
                )
        elif (
            RANK[mine_q[1]] > RANK[theirs_q[1]] and not (mine_q[1] == MANY and theirs_q[1] == MOST)
        ) or RANK[theirs_q[1]] - RANK[mine_q[1]] >= 3:
            return Change(
                "quantifier",
                True,
                (word,),
                f"'{word}' — the quote says '{_quantifier_phrase(quote, theirs_q[0])}'",
            )
    elif theirs_q is not None and theirs_q[1] in (SOME, FEW):
        phrase = _quantifier_phrase(quote, theirs_q[0])
        return Change(
            "quantifier",
            not (theirs_q[1] == SOME and _conditional(quote, qi)),  # "if some x …": "if an x …"
            (text[i].text,),
            f"the quote says '{phrase}' ({quote[qi].text}); the text says it without '{phrase}'",
        )
    return None


def _conditional(tree: Tree, i: int) -> bool:
    """``i`` stands in a condition ("*if* some variable becomes bound"), where "some" is the
    indefinite article's "any": dropping it may keep the meaning (uncertain, not refused)."""
    for n in (i, *tree.ancestors(i)):
        if any(
            tree[c].dep == "mark" and tree[c].lower in ("if", "whenever") for c in tree.children[n]
        ):
            return True
        if tree[n].dep in ("relcl", "ROOT"):
            return False
    return False


_NOT_ALONE = frozenset(["other", "others", "also", "among", "including", "such", "too", "as well"])


def _not_alone(tree: Tree) -> int | None:
    """A word that says the quote's list is not all there is ("among others", "also",
    "including")."""
    for t in tree:
        if t.lower in _NOT_ALONE:
            return t.i
    return None


def _weaker_anywhere(tree: Tree, rank: str) -> int | None:
    """A quantifier weaker than ``rank`` anywhere in the quote ("Comb jellies have colloblasts,
    though *a few* species lack them" against "All comb jellies have colloblasts")."""
    for t in tree:
        kind = QUANTIFIERS.get(t.lower)
        if kind is None or kind not in RANK or t.lower in ("number", "range", "lot", "much"):
            continue
        if t.lower == "few" and t.i > 0 and tree[t.i - 1].lower == "a":
            kind = SOME
        if RANK[kind] < RANK[rank] and t.pos in ("DET", "ADJ", "ADV", "PRON"):
            return t.i
    return None


def _only_near(tree: Tree, i: int) -> list[int]:
    """ "only" before ``i`` or on its head ("only five medals", "was only a partial")."""
    out = [c for c in tree.children[i] if tree[c].lower in ("only", "solely", "exclusively")]
    head = tree[i].head
    out += [c for c in tree.children[head] if tree[c].lower in ("only", "solely", "exclusively")]
    return out


def _quantifier_phrase(tree: Tree, i: int) -> str:
    if tree[i].lower == "few" and i > 0 and tree[i - 1].lower == "a":
        return "a few"
    if tree[i].lower in ("range", "number", "lot", "majority") and i > 0:
        return f"{tree[i - 1].text} {tree[i].text} of"
    return tree[i].text


# --- hedges --------------------------------------------------------------------------------------

HEDGE_AUX = frozenset(["may", "might", "could"])
TEXT_HEDGE_AUX = HEDGE_AUX | {"can"}
"""A text's "can" keeps a quote's "could" or "may"; a quote's "can" (what something is able to
do) is no hedge the text must keep."""
HEDGE_ADV = frozenset(
    [
        "perhaps", "possibly", "probably", "likely", "maybe", "apparently", "reportedly",
        "allegedly", "supposedly", "seemingly", "presumably", "arguably", "potentially",
        "virtually", "practically", "modestly", "somewhat", "relatively", "nearly", "almost",
        "fairly", "comparatively", "reasonably", "moderately", "rather", "quite",
    ]
)  # fmt: skip
HEDGE_VERBS = frozenset(
    [
        "seem", "appear", "tend", "suggest", "believe", "think", "suspect", "estimate", "say",
        "report", "claim", "allege", "consider", "expect", "assume", "presume", "speculate",
        "propose", "plan", "intend", "attempt", "try", "hope", "aim", "seek", "want", "argue",
        "imply", "opine", "hypothesize", "theorize", "predict", "project",
    ]
)  # fmt: skip
HEDGE_ADJ = frozenset(
    [
        "likely",
        "possible",
        "probable",
        "unclear",
        "uncertain",
        "estimated",
        "alleged",
        "suspected",
        "supposed",
        "apparent",
        "reported",
        "unlikely",
    ]
)
ATTRIBUTION = frozenset(["according", "accord"])


def hedges(tree: Tree, i: int, modals: frozenset[str] = HEDGE_AUX) -> list[int]:
    """The hedges over predicate ``i``: its modal auxiliaries (``modals``) and hedging adverbs,
    and the hedging verbs and adjectives whose clause it stands in ("it is suspected that …
    may have")."""
    out = [
        c
        for c in tree.children[i]
        if (tree[c].dep == "aux" and tree[c].lower in modals)
        or (tree[c].dep == "advmod" and tree[c].lower in HEDGE_ADV)
        or (tree[c].dep in ("prep",) and tree[c].lower in ATTRIBUTION)
        or (tree[c].dep in ("acomp", "amod") and tree[c].lower in HEDGE_ADJ)
    ]
    node = i
    for head in tree.ancestors(i):
        t, h = tree[node], tree[head]
        if (
            t.dep in ("ccomp", "xcomp", "csubj", "csubjpass")
            and (h.lemma in HEDGE_VERBS or h.lower in HEDGE_ADJ or _studies_show(tree, head))
            and h.pos != "PROPN"
            and not (h.text[:1].isupper() and head > 0)
        ):
            out.append(head)
        if h.lemma in HEDGE_VERBS and t.dep in ("ccomp", "xcomp"):
            out += [
                c
                for c in tree.children[head]
                if tree[c].dep == "aux" and tree[c].lower in HEDGE_AUX
            ]
        if t.dep in ("relcl", "acl", "conj"):
            break
        node = head
    return out


EVIDENTIAL = frozenset(["show", "indicate", "find", "demonstrate", "reveal", "confirm"])
RESEARCH = frozenset(
    [
        "study", "research", "evidence", "survey", "poll", "analysis", "report", "data",
        "experiment", "trial", "scientist", "researcher", "expert", "critic", "observer",
    ]
)  # fmt: skip


def _studies_show(tree: Tree, i: int) -> bool:
    """ "(a range of) economic studies show that …": what research reports, not a fact the
    source states; "git cherry shows which commits …" is no such report."""
    if tree[i].lemma not in EVIDENTIAL:
        return False
    for c in tree.kids(i, "nsubj"):
        heads = [c, *(o for p in tree.kids(c, "prep") for o in tree.kids(p, "pobj"))]
        if any(tree[h].lemma in RESEARCH for h in heads):
            return True
    return False


def hedge_changes(a: Alignment, text: Tree, quotes: list[Tree]) -> list[Change]:
    """Hedges the quote puts on a predicate the text restates, that the text drops."""
    out: list[Change] = []
    any_text_hedge = any(
        t.lower in TEXT_HEDGE_AUX | HEDGE_ADV | HEDGE_ADJ
        or t.lemma in HEDGE_VERBS
        or t.lower in ATTRIBUTION
        for t in text
    )
    seen: set[tuple[int, int]] = set()
    for t in text:
        if not _predicate(text, t.i) or not _asserted(text, t.i):
            continue
        m = a.matches.get(t.i)
        if m is None or (m.quote, m.index) in seen:
            continue
        seen.add((m.quote, m.index))
        quote = quotes[m.quote]
        theirs = [h for h in hedges(quote, m.index) if not _restated(a, m.quote, h)]
        if not theirs:
            continue
        mine = hedges(text, t.i, TEXT_HEDGE_AUX)
        if mine:
            continue
        word = quote[theirs[0]].text
        out.append(
            Change(
                "hedge",
                not any_text_hedge,
                (t.text,),
                f"the quote hedges '{quote[m.index].text}' ('{word}'); the text states it as fact",
            )
        )
    if out or any_text_hedge:
        return out
    # a hedge on a word rather than a verb ("is *perhaps* the largest employer"), on a verb the
    # text does not restate ("*most likely* takes the form of ice needles" / "in the form of"),
    # a modal on a copula ("*may be* the set of pairs" / "is the set"), or a passive verb of
    # calling ("*has been called* the first truly American event" / "was the first")
    asserts = any(t.pos in ("VERB", "AUX") for t in text)  # not a bare noun phrase (a title)
    for q, quote in enumerate(quotes):
        for h in quote:
            hedge = h.lower in HEDGE_ADV and h.lower not in ("nearly", "almost", "rather", "quite")
            head = quote[h.head]
            if hedge and head.pos == "VERB" and not asserts:
                continue
            if (
                any(t.lemma == "be" for t in text)
                and h.dep == "aux"
                and h.lower in HEDGE_AUX
                and head.lemma == "be"
                and not _restated(a, q, head.i)
            ):
                hedge = True  # "may be the set": the text's "is" restates no modal
            if not hedge and asserts and h.lemma in CALLED and called(quote, h.i):
                out += called_change(a, text, quote, q, h.i)
                if out:
                    return out
                continue
            if not hedge:
                continue
            if head.pos == "VERB" and _restated(a, q, head.i):
                continue  # a restated verb's hedges: the predicate rule above
            near = {h.head, *quote.children[h.head]} - {h.i}
            mine = [i for i, m in a.matches.items() if (m.quote, m.index) in {(q, n) for n in near}]
            if mine:
                out.append(
                    Change(
                        "hedge",
                        True,
                        (text[mine[0]].text,),
                        f"the quote hedges '{quote[h.head].text}' ('{h.text}'); the text states it "
                        "as fact",
                    )
                )
                return out
    return out


def _asserted(tree: Tree, i: int) -> bool:
    """``i`` is asserted: a finite verb, or a predicate with an auxiliary or copula (not a
    gerund or participle inside a noun phrase: "an example of one name *appearing*")."""
    t = tree[i]
    if t.tag in ("VBD", "VBP", "VBZ", "MD"):
        return True
    if any(tree[c].dep in ("aux", "auxpass", "cop") for c in tree.children[i]):
        return True
    if t.dep in ("acomp", "attr") and tree[t.head].lemma == "be":
        return True
    return t.dep == "conj" and _asserted(tree, t.head)


def _restated(a: Alignment, q: int, i: int) -> bool:
    """The text restates quote ``q``'s token ``i`` (a hedging verb the text keeps)."""
    return any(m.quote == q and m.index == i for m in a.matches.values())


def _except_for(tree: Tree, i: int) -> bool:
    """ "except for": an exception to a limit ("landlocked except for its border with the
    lake"), not a negation of what follows."""
    return tree[i].lower == "except" and i + 1 < len(tree) and tree[i + 1].lower == "for"


def set_apart(tree: Tree, i: int) -> int | None:
    """The contrast word that puts token ``i`` outside its clause's statement ("*Unlike*
    confirmation", "instead *of* burned", "rather *than* Armenian"), if any: found on the way
    up from ``i`` to its clause, or right before its phrase."""
    node = i
    for head in tree.ancestors(i):
        h = tree[head]
        if h.lower in ("unlike", "except", "excluding") and not _except_for(tree, head):
            return head
        if h.lower in ("of", "than"):
            marks = [c for c in tree.children[head] if tree[c].lower in ("instead", "rather")]
            if marks:
                return marks[0]
        if tree[node].dep in CLAUSE or h.pos in ("VERB", "AUX"):
            break
        node = head
    prev = i - 1
    while prev > 0 and i - prev <= 3 and tree[prev].pos in ("DET", "ADJ", "ADP", "PART", "AUX"):
        if tree[prev].lower in ("of", "than") and tree[prev - 1].lower in ("instead", "rather"):
            return prev - 1
        prev -= 1
    return None


def contrast_changes(a: Alignment, text: Tree, quotes: list[Tree]) -> list[Change]:
    """A word the quote puts outside its statement ("*Unlike* confirmation, baptism is a
    sacrament"; "recycled *instead of* burned") that the text makes the same statement's
    subject, object or predicate: the negation is lost, a clear change."""
    out: list[Change] = []
    for t in text:
        m = a.matches.get(t.i)
        if m is None or t.dep not in ("nsubj", "nsubjpass", "dobj", "attr", "ROOT", "conj"):
            continue
        quote = quotes[m.quote]
        site = set_apart(quote, m.index)
        if site is None or set_apart(text, t.i) is not None or polarity(text, t.i)[0]:
            continue
        # the statement it is set apart from is the one the text makes of it
        clause = quote.clause_of(quote[site].head)
        statement = {n for n in quote.subtree(clause)} - set(quote.subtree(site))
        if not any(
            mm.quote == m.quote and mm.index in statement and n != t.i
            for n, mm in a.matches.items()
            if text.clause_of(n) == text.clause_of(t.i)
        ):
            continue
        out.append(
            Change(
                "negation",
                True,
                (t.text,),
                f"'{quote[m.index].text}' stands after '{quote[site].text}' in the quote: it is "
                "what the quote sets apart",
            )
        )
    return out


def _quoted_spans(tree: Tree) -> set[int]:
    """Tokens between quotation marks in ``tree``."""
    inside: set[int] = set()
    opened: int | None = None
    for t in tree:
        if t.text in ('"', "“", "”"):
            if opened is None:
                opened = t.i
            else:
                inside |= set(range(opened + 1, t.i))
                opened = None
    return inside


def scare_quote_changes(a: Alignment, text: Tree, quotes: list[Tree]) -> list[Change]:
    """What the quote only names in quotation marks ("the \\"last battle of the war\\"") that the
    text asserts as its predicate, marks gone: a hedge dropped, for a person to judge."""
    spans = [_quoted_spans(q) for q in quotes]
    if not any(spans):
        return []
    mine = _quoted_spans(text)
    for t in text:
        if t.dep != "attr" or t.i in mine or text[t.head].lemma != "be":
            continue
        held = [
            n
            for n in text.subtree(t.i)
            if n in a.matches and a.matches[n].index in spans[a.matches[n].quote]
        ]
        if len(held) >= 2:
            words = tuple(text[n].text for n in held[:3])
            return [
                Change(
                    "hedge",
                    False,
                    words,
                    f"the quote puts '{' '.join(words)}' in quotation marks; the text states it "
                    "as fact",
                )
            ]
    return []
