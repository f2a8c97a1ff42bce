"""Links, degrees and units: what joins two facts, how much, and in what measure (W11 rules).

- :func:`link_changes` — a causal link ("because", "led to", "so", "due to"), a temporal order
  ("before", "after", "followed by") or an exception ("unless") in the text must be one the quotes
  state between the same two facts, in the same direction: reversed is a clear change; a link the
  quotes don't state at all is one too; a link of that kind stated between other facts is
  uncertain.
- :func:`degree_changes` — a superlative the quotes don't state ("the largest deer"), a
  comparative where they compare nothing, and an antonym standing where the quote has its
  opposite ("lower" for "higher", "a larger site" for "a smaller site").
- :func:`change_comparatives` — a comparative with no "than" on a noun the quote describes by a
  change ("a *higher* risk" for "an *increased* risk", "*better* opportunities" for "*improving*
  opportunities") restates it; against a change the other way ("a *lower* risk") it is the
  opposite.
"""

from __future__ import annotations

from .align import Alignment, Match, content
from .tree import Change, Tree

__all__ = ["change_comparatives", "degree_changes", "link_changes", "links"]

CAUSAL_MARKS = frozenset(
    ["because", "since", "so", "therefore", "thus", "hence", "consequently", "accordingly"]
)
CAUSAL_PREPS = frozenset(["because", "due", "owing", "thanks"])
CAUSAL_VERBS = frozenset(["cause", "lead", "result", "prompt", "trigger", "spark"])
"""Verbs whose subject causes their object ("X led to Y", "X caused Y"; "result from" reverses):
not "make", "produce" or "bring", which mostly say something else ("produces an annual table")."""
TEMPORAL_MARKS = {
    "after": "after",
    "before": "before",
    "until": "before",
    "till": "before",
    "once": "after",
    "following": "after",
    "prior": "before",
}
TEMPORAL_ADVS = frozenset(
    [
        "later",
        "earlier",
        "then",
        "afterwards",
        "subsequently",
        "previously",
        "thereafter",
        "ago",
        "formerly",
    ]
)
CONDITION = frozenset(["unless"])


class _Link:
    """One stated link: its family and the tokens on each side (cause → effect; earlier →
    later)."""

    def __init__(self, family: str, marker: int, first: set[int], second: set[int]) -> None:
        self.family = family
        self.marker = marker
        self.first = first
        self.second = second


def _clause_tokens(tree: Tree, head: int, minus: set[int]) -> set[int]:
    return set(tree.subtree(head)) - minus


def links(tree: Tree, quote: bool = False) -> list[_Link]:
    """The causal, temporal and exception links ``tree`` states. A quote's links are read
    generously (``as``, ``since`` and ``when`` opening a clause give both a cause and an order,
    ``while`` an order only; a verb "followed" in any voice), a text's strictly (what it must find stated)."""
    out: list[_Link] = []
    for t in tree:
        lower, i = t.lower, t.i
        head = t.head
        if quote and t.dep == "mark" and lower in ("as", "since", "when", "while"):
            clause = set(tree.subtree(head))
            main = tree[head].head
            rest = (
                _clause_tokens(tree, main, clause)
                if main != head
                else set(range(len(tree))) - clause
            )
            if lower != "while":  # "while" joins in time or contrasts; it never gives a cause
                out.append(_Link("causal", i, clause, rest))
            out.append(_Link("temporal", i, clause, rest))
            continue
        if t.dep == "mark" and (
            lower in ("because", "since") or lower in TEMPORAL_MARKS or lower in CONDITION
        ):
            clause = set(tree.subtree(head))
            main = tree[head].head
            rest = (
                _clause_tokens(tree, main, clause)
                if main != head
                else set(range(len(tree))) - clause
            )
            if lower in CONDITION:
                out.append(_Link("condition", i, clause, rest))
            elif lower in ("because", "since"):
                if lower == "since" and _temporal_since(tree, head):
                    out.append(_Link("temporal", i, clause, rest))
                else:
                    out.append(_Link("causal", i, clause, rest))
            else:
                earlier, later = (
                    (clause, rest) if TEMPORAL_MARKS[lower] == "after" else (rest, clause)
                )
                out.append(_Link("temporal", i, earlier, later))
        elif t.pos == "ADP" or (lower in CAUSAL_PREPS and t.dep in ("prep", "advmod")):
            if lower in CAUSAL_PREPS or (
                lower == "of"
                and i > 0
                and (
                    tree[i - 1].lower == "because"
                    or (tree[i - 1].lower in ("result", "consequence") and i > 2)
                )
            ):
                objects = _objects(tree, i)
                if not objects:
                    continue
                reasons: set[int] = set().union(*(set(tree.subtree(o)) for o in objects))
                results = _clause_tokens(tree, tree.clause_of(head), reasons | {i})
                out.append(_Link("causal", i, reasons, results))
            elif lower in TEMPORAL_MARKS and t.dep == "prep":
                objects = _objects(tree, i)
                if not objects or all(tree[o].pos == "NUM" or _dateish(tree, o) for o in objects):
                    continue  # "before 2012", "after March 25": the number and date rules
                other: set[int] = set().union(*(set(tree.subtree(o)) for o in objects))
                main_clause = _clause_tokens(tree, tree.clause_of(head), other | {i})
                earlier, later = (
                    (other, main_clause)
                    if TEMPORAL_MARKS[lower] == "after"
                    else (main_clause, other)
                )
                out.append(_Link("temporal", i, earlier, later))
        elif (
            lower in ("therefore", "thus", "hence", "consequently", "accordingly")
            or (
                lower == "so"
                and t.dep in ("cc", "advmod", "mark", "prep")  # ", so the laws …": a prep
                and i + 1 < len(tree)
                and tree[i + 1].pos not in ("ADJ", "ADV")
            )
            or (lower in TEMPORAL_ADVS and t.dep == "advmod")
        ):
            family = "temporal" if lower in TEMPORAL_ADVS else "causal"
            if (
                family == "temporal"
                and not quote
                and lower not in ("thereafter", "afterwards", "subsequently")
            ):
                continue  # a text's "then", "later": too often no order between two facts
            clause_head = tree.clause_of(i)
            after = set(tree.subtree(clause_head))
            # "A was spoken but not written, so B": the parser hangs the clause before "so" on
            # the verb after it; that clause is the cause, not part of the effect
            for c in tree.children[clause_head]:
                if (
                    c < i
                    and tree[c].dep in ("advcl", "ccomp", "conj", "parataxis")
                    and max(tree.subtree(c)) < i
                ):
                    after -= set(tree.subtree(c))
            before = {n for n in range(len(tree)) if n < min(after | {i})}
            before |= {n for n in range(len(tree)) if n not in after and n < i}
            out.append(_Link(family, i, before or {-1}, after))
        elif (
            lower in ("result", "consequence")
            and t.dep == "pobj"
            and tree[head].lower in ("as", "in")
            and not tree.kids(i, "prep")
        ):
            # "As a result, the system was implemented": what came before caused what follows
            clause_head = tree.clause_of(i)
            after = set(tree.subtree(clause_head)) - set(tree.subtree(head))
            before = {n for n in range(len(tree)) if n not in after and n < head}
            out.append(_Link("causal", i, before or {-1}, after))
        elif t.pos == "VERB" and t.lemma in CAUSAL_VERBS:
            subj = [c for c in tree.children[i] if tree[c].dep in ("nsubj", "csubj")]
            obj = [c for c in tree.children[i] if tree[c].dep in ("dobj", "ccomp", "xcomp")]
            by = [c for c in tree.children[i] if tree[c].dep == "agent"]
            passive_subj = [c for c in tree.children[i] if tree[c].dep == "nsubjpass"]
            to = [
                o
                for c in tree.children[i]
                if tree[c].lemma in ("to", "in") and tree[c].dep in ("prep", "dative")
                for o in tree.kids(c, "pobj")
            ]
            frm = [
                o for c in tree.children[i] if tree[c].lemma == "from" for o in tree.kids(c, "pobj")
            ]
            if t.lemma == "result" and frm:
                causes, effects = frm, subj
            elif by or passive_subj:
                causes, effects = [o for b in by for o in tree.kids(b, "pobj")], passive_subj
            else:
                causes, effects = subj, obj + to
            if t.dep in ("acl", "advcl") and not causes:
                causes = [head]  # "..., causing its execution to suspend": what it hangs on
            if causes and effects:
                out.append(
                    _Link(
                        "causal",
                        i,
                        set().union(*(set(tree.subtree(c)) for c in causes)),
                        set().union(*(set(tree.subtree(e)) for e in effects)),
                    )
                )
        elif (
            t.lemma in ("follow", "precede")
            and t.pos == "VERB"
            and (quote or t.dep == "acl" or tree.passive(i))
        ):
            subj = [c for c in tree.children[i] if tree[c].dep in ("nsubj", "nsubjpass")]
            by = [
                o for c in tree.children[i] if tree[c].dep == "agent" for o in tree.kids(c, "pobj")
            ]
            obj = [c for c in tree.children[i] if tree[c].dep == "dobj"] + by
            if t.dep == "acl" and not subj:
                subj = [head]
            if not subj or not obj:
                continue
            s = set().union(*(set(tree.subtree(c)) for c in subj)) - {i}
            o = set().union(*(set(tree.subtree(c)) for c in obj))
            s -= o
            # "A followed B": A later; "A (is) followed by B": A earlier; precede the reverse
            passive = bool(by) or t.tag == "VBN"
            earlier_first = (t.lemma == "follow") == passive
            out.append(_Link("temporal", i, s if earlier_first else o, o if earlier_first else s))
    return out


def _temporal_since(tree: Tree, clause_head: int) -> bool:
    """``since`` opening a clause of time (a perfect tense in the main clause) rather than a
    reason."""
    main = tree[clause_head].head
    return any(tree[c].lemma == "have" and tree[c].dep == "aux" for c in tree.children[main])


def _objects(tree: Tree, prep: int) -> list[int]:
    objs = tree.kids(prep, "pobj", "pcomp")
    for c in list(objs):
        if tree[c].pos == "ADP":
            objs += tree.kids(c, "pobj", "pcomp")
    return objs


def _dateish(tree: Tree, i: int) -> bool:
    return (tree[i].pos == "PROPN" and any(tree[c].pos == "NUM" for c in tree.children[i])) or tree[
        i
    ].lower in ("war", "century", "decade", "year")


def _mapped(a: Alignment, tokens: set[int]) -> set[tuple[int, int]]:
    return {(m.quote, m.index) for n in tokens if (m := a.matches.get(n)) is not None}


def link_changes(a: Alignment, text: Tree, quotes: list[Tree]) -> list[Change]:
    out: list[Change] = []
    quote_links = [(q, link) for q, tree in enumerate(quotes) for link in links(tree, quote=True)]
    for q, link in quote_links:
        # a quote cut at its link ("Because of the large number of airplanes …"): the other side
        # is in the quotes around it
        if not any(content_token(quotes[q], n) for n in link.second):
            link.second |= {-2}
        if not any(content_token(quotes[q], n) for n in link.first):
            link.first |= {-1}
    for link in links(text):
        word = text[link.marker].text
        first, second = _mapped(a, link.first), _mapped(a, link.second)
        if not first and not second:
            continue
        same = [(q, ql) for q, ql in quote_links if ql.family == link.family]

        def on(q: int, side: set[int], mapped: set[tuple[int, int]]) -> bool:
            return any(mq == q and mi in side for mq, mi in mapped)

        forward = any(
            (on(q, ql.first, first) or (-1 in ql.first and _earlier(q, first)))
            and (on(q, ql.second, second) or (-2 in ql.second and _later(q, second)))
            for q, ql in same
        )
        if forward:
            continue
        backward = any(
            (on(q, ql.first, second) or (-1 in ql.first and _earlier(q, second)))
            and on(q, ql.second, first)
            for q, ql in same
        )
        what = {"causal": "cause", "temporal": "order", "condition": "condition"}[link.family]
        if backward:
            out.append(
                Change("link", True, (word,), f"'{word}' reverses the {what} the quote states")
            )
        elif not same:
            # no cause stated is clear; an order may be implied ("failed, having been ratified")
            clear = link.family != "temporal"
            out.append(
                Change("link", clear, (word,), f"'{word}' — the quotes state no such {what}")
            )
        else:
            out.append(
                Change(
                    "link",
                    False,
                    (word,),
                    f"'{word}' — the quotes state a {what}, not between these facts",
                )
            )
    # an exception the quote states ("unless …") that the text turns into something else
    for q, ql in quote_links:
        if ql.family != "condition":
            continue
        restated = {n for n, m in a.matches.items() if m.quote == q and m.index in ql.first}
        if len(restated) >= 2 and not any(
            t.lower in CONDITION or t.lower in ("except", "if") for t in text
        ):
            out.append(
                Change(
                    "link",
                    True,
                    tuple(text[n].text for n in sorted(restated)[:2]),
                    f"the quote makes it an exception ('{quotes[q][ql.marker].text}'); the text doesn't",
                )
            )
    return out


def _earlier(q: int, mapped: set[tuple[int, int]]) -> bool:
    """Some of ``mapped`` lies in the quote right before ``q`` ("Thus, …" links to what came
    just before it, not to any earlier quote)."""
    return any(mq == q - 1 for mq, _ in mapped)


def _later(q: int, mapped: set[tuple[int, int]]) -> bool:
    """Some of ``mapped`` lies in the quote right after ``q`` (a quote cut at its link)."""
    return any(mq == q + 1 for mq, _ in mapped)


def content_token(tree: Tree, n: int) -> bool:
    return 0 <= n < len(tree) and content(tree[n])


# --- degrees -------------------------------------------------------------------------------------


def _lexically_matched(a: Alignment, i: int) -> bool:
    m = a.matches.get(i)
    return m is not None and m.how in ("same", "stem", "number")


NEGATORS = frozenset(["ever", "never", "any", "no", "none", "some", "always", "all"])
"""Words whose antonyms (ever/never, any/no) are negation, read by the polarity rule."""


def degree_changes(
    a: Alignment, text: Tree, quotes: list[Tree], reported: set[int]
) -> list[Change]:
    out: list[Change] = []
    quote_words = {u.lower for tree in quotes for u in tree} | {
        u.lemma for tree in quotes for u in tree
    }
    quote_comparative = any(u.tag in ("JJR", "RBR") for tree in quotes for u in tree)
    quote_superlative = any(
        u.tag in ("JJS", "RBS") or (u.lower in ("most", "least") and u.dep == "advmod")
        for tree in quotes
        for u in tree
    )
    for t in text:
        if t.i in reported:
            continue
        said = t.lower in quote_words or t.lemma in quote_words
        ranked = t.i > 0 and (text[t.i - 1].tag == "JJ" and text[t.i - 1].lower in ORDINAL_WORDS)
        if t.tag in ("JJS", "RBS") and t.lower not in ("most", "least"):
            if said or t.i in a.opposites:
                continue
            ranked = ranked or (
                t.i > 1 and text[t.i - 1].lower == "-" and text[t.i - 2].lower in ORDINAL_WORDS
            )
            clear = not quote_superlative and not ranked
            out.append(
                Change(
                    "comparative",
                    clear,
                    (t.text,),
                    f"'{t.text}' — the quotes state no such superlative",
                )
            )
            continue
        if (
            t.lower in ("most", "least")
            and t.dep == "advmod"
            and text[t.head].pos in ("ADJ", "ADV")
        ):
            adj = text[t.head]
            if said or ranked or (t.i > 0 and text[t.i - 1].lower in ORDINAL_WORDS):
                continue
            out.append(
                Change(
                    "comparative",
                    not quote_superlative,
                    (t.text, adj.text),
                    f"'{t.text} {adj.text}' — the quotes state no such superlative",
                )
            )
            continue
        restated = (m := a.matches.get(t.i)) is not None and m.how == CHANGE
        if t.tag in ("JJR", "RBR") and not said and t.i not in a.opposites and not restated:
            after = text[t.i + 1].lower if t.i + 1 < len(text) else ""
            if after == "than" and t.i + 2 < len(text) and text[t.i + 2].pos == "NUM":
                continue  # "more than 398": the number rule reads the bound
            if t.lower in ("more", "less", "fewer") and text[t.head].pos in ("NOUN", "NUM"):
                continue
            than = any(u.lower == "than" for u in text)
            out.append(
                Change(
                    "comparative",
                    than and not quote_comparative,
                    (t.text,),
                    f"'{t.text}' — the quotes compare nothing"
                    if not quote_comparative
                    else f"'{t.text}' — the quotes don't say it",
                )
            )
    for i, (q, qi) in a.opposites.items():
        if i in reported or i in a.matches:
            continue
        quote = quotes[q]
        if text[i].lower in NEGATORS or quote[qi].lower in NEGATORS:
            continue
        near = _neighbour_agrees(a, text, quote, i, q, qi)
        out.append(
            Change(
                "opposite",
                near,
                (text[i].text,),
                f"'{text[i].text}' — the quote says '{quote[qi].text}'",
            )
        )
    return out


ORDINAL_WORDS = frozenset(
    ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"]
)


def _neighbour_agrees(a: Alignment, text: Tree, quote: Tree, i: int, q: int, qi: int) -> bool:
    mine = {text[i].head, *text.children[i]} - {i}
    theirs = {quote[qi].head, *quote.children[qi]} - {qi}
    theirs |= {quote[n].head for n in list(theirs)}
    for n in mine:
        m = a.matches.get(n)
        if m is not None and m.quote == q and m.index in theirs:
            return True
    return False


CHANGE = "change"
"""How a comparative restates a quote's word of change (:func:`change_comparatives`)."""
_UP = frozenset(
    [
        "increased", "increasing", "rising", "risen", "growing", "grown", "elevated",
        "heightened", "raised", "expanded", "enlarged", "mounting",
    ]
)  # fmt: skip
_DOWN = frozenset(
    [
        "reduced", "decreased", "decreasing", "declining", "falling", "fallen", "lowered",
        "diminished", "diminishing", "shrinking", "dwindling",
    ]
)  # fmt: skip
_BETTER = frozenset(["improved", "improving", "enhanced"])
_WORSE = frozenset(["worsened", "worsening", "deteriorating", "deteriorated"])
_DIRECTION = {
    **dict.fromkeys(["higher", "greater", "larger", "bigger", "more"], (_UP, _DOWN)),
    **dict.fromkeys(["lower", "smaller", "less", "fewer"], (_DOWN, _UP)),
    "better": (_BETTER, _WORSE),
    "worse": (_WORSE, _BETTER),
}
"""A comparative's words of change the same way, and the other way."""


def change_comparatives(a: Alignment, text: Tree, quotes: list[Tree]) -> None:
    """Align a comparative with no "than" on a noun ("a *higher* risk") to the quote's word of
    change on the noun it restates ("an *increased* risk"); record it as the opposite of one that
    changes the other way ("a *lower* risk" for "an increased risk") (in place)."""
    if any(t.lower == "than" for t in text):
        return  # "higher than …" compares with something the quote may not state
    for t in text:
        if t.tag != "JJR" or t.dep != "amod" or t.i in a.matches or t.lower not in _DIRECTION:
            continue
        noun = a.matches.get(t.head)
        if noun is None:
            continue
        same, other = _DIRECTION[t.lower]
        quote = quotes[noun.quote]
        words = [c for c in quote.children[noun.index] if quote[c].dep == "amod"]
        head = quote[noun.index].head
        if head < noun.index and all(
            quote[n].head == noun.index and quote[n].dep in ("amod", "compound")
            for n in range(head + 1, noun.index)
        ):
            words.append(head)  # "improving economic opportunities", parsed as a verb's object
        for c in words:
            if quote[c].lower in same:
                a.matches[t.i] = Match(noun.quote, c, CHANGE)
            elif quote[c].lower in other:
                a.opposites[t.i] = (noun.quote, c)
