"""Hedges read where they attach (W11 structure rules): a hedge the quote puts on what the text
restates ("may", "perhaps", "it is suspected that", "a few studies have suggested that", "is
proposing to") that the text drops (:func:`hedge_changes`), and what the quote only names in
quotation marks that the text asserts (:func:`scare_quote_changes`).

Part of :mod:`.scope`, where the structure layer finds it.
"""

from __future__ import annotations

from .align import Alignment
from .negation import _predicate
from .overreach import CALLED, called, called_change
from .tree import Change, Tree

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
        "imply", "opine", "hypothesize", "theorize", "predict", "project", "perceive", "rumour",
        "rumor",
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
