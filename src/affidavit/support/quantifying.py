"""Quantifiers read where they attach (W11 structure rules): "all" where the quote says "a
few"; "only" where it restricts nothing; "many observers" turned into "observers"
(:func:`quantifier_changes`).

Part of :mod:`.scope`, where the structure layer finds it.
"""

from __future__ import annotations

from .align import Alignment
from .negation import _predicate
from .tree import Change, Tree

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
    said = {t.lower for t in text}
    for t in text:
        if t.pos not in ("NOUN", "PROPN"):
            continue
        m = a.matches.get(t.i)
        if m is None:
            continue
        rare = _rarely_on_phrase(quotes[m.quote], m.index)
        if rare and not said & set(RARELY):
            out.append(
                Change(
                    "quantifier", False, (t.text,), f"'{t.text}' — the quote says '{rare}' of it"
                )
            )
        mine = [(n, k) for n, k in quantifiers(text, t.i) if n not in done]
        if not mine:
            continue
        quote = quotes[m.quote]
        change = _compare(text, quote, t.i, m.index, mine, quantifiers(quote, m.index))
        if change and not (change.clear is False and _stated_elsewhere(text, quotes, mine)):
            out.append(change)
    return out


RARELY = ("rarely", "seldom", "hardly", "scarcely", "barely", "never")


def _rarely_on_phrase(quote: Tree, i: int) -> str:
    """The frequency word that restricts the preposition ``i`` stands after ("for both families
    and kids, and *rarely* for adults"): a text that drops it states the rare as the rule."""
    if quote[i].dep != "pobj":
        return ""
    prep = quote[i].head
    for c in quote.children[prep]:
        if quote[c].dep == "advmod" and quote[c].lower in RARELY:
            return quote[c].text
    return ""


def _stated_elsewhere(text: Tree, quotes: list[Tree], mine: list[tuple[int, str]]) -> bool:
    """Every quantifier of the text stands in some quote, of the same strength, on a word of
    the same lemma ("each axis" / "each axis", "most of the complexity" in a quote of its own):
    the alignment matched the predicate to another occurrence."""
    if not mine:
        return False
    for n, kind in mine:
        targets = _quantified(text, n)
        if not any(
            QUANTIFIERS.get(u.lower) == kind
            and (_quantified(quote, u.i) & targets or _just_before(quote, u.i, targets))
            for quote in quotes
            for u in quote
        ):
            return False
    return True


def _just_before(tree: Tree, n: int, lemmas: set[str]) -> bool:
    """Quantifier ``n`` stands right before a word of ``lemmas``, only modifiers between ("all
    supported input languages"), whatever the parser hung it on."""
    for k in range(n + 1, min(n + 5, len(tree))):
        if tree[k].lemma in lemmas:
            return True
        if tree[k].pos in ("PUNCT", "CCONJ", "ADP", "AUX", "DET", "PRON"):
            return False
    return False


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
    single = _single(quote, qi)
    if mine_q is not None and mine_q[1] in (MANY, MOST, ALL) and single is not None:
        word = text[mine_q[0]].text
        return Change("quantifier", True, (word,), f"'{word}' — the quote says '{single}'")
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


_ONE = frozenset(["single", "sole", "lone"])


def _single(tree: Tree, i: int) -> str | None:
    """The words that make noun ``i`` one ("only one call center", "a single road"), or None."""
    for c in tree.children[i]:
        if (tree[c].dep == "nummod" and tree[c].lower == "one") or (
            tree[c].dep == "amod" and tree[c].lower in _ONE
        ):
            before = [tree[b].text for b in tree.children[c] if tree[b].i < c]
            return " ".join([*before, tree[c].text])
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


def _quantifier_phrase(tree: Tree, i: int) -> str:
    if tree[i].lower == "few" and i > 0 and tree[i - 1].lower == "a":
        return "a few"
    if tree[i].lower in ("range", "number", "lot", "majority") and i > 0:
        return f"{tree[i - 1].text} {tree[i].text} of"
    return tree[i].text
