"""Negation read where it attaches (W11 structure rules), and what a contrast word sets apart.

- :func:`polarity` — whether a predicate is negated: by ``not``/``n't``/``never``, by ``no`` or
  ``neither … nor`` on its subject or object, by a verb of refusal over it ("refused to host"), or
  by a word it stands under — ``without``, ``unlike``, ``instead of``, ``rather than``, ``except``.
  :func:`negation_changes` compares the polarity of each predicate the text restates with the
  quote's (a word with a negating prefix that WordNet lists as the antonym — "undefined" for
  "defined" — counts as a negation), and :func:`negations_agree` tells the bag-of-words negation
  rule when the parse shows the two agree after all ("neither FAS 113 nor SAP 62 defines" /
  "both leave … undefined").
- :func:`contrast_changes` — a word the quote sets apart ("*Unlike* confirmation") that the text
  makes its statement's subject, object or predicate (:func:`set_apart`).

Part of :mod:`.scope`, where the structure layer finds it.
"""

from __future__ import annotations

from .align import Alignment
from .tree import CLAUSE, Change, Tree

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
        if t.dep in ("xcomp", "ccomp", "dobj", "acl") and (
            h.lemma in NEGATING_VERBS or h.lower in _UNABLE
        ):  # "acl": "morality forbids damaging" read as a noun "forbids" with a clause
            found.add(head)
        if t.dep == "xcomp" or (t.dep == "ccomp" and _infinitive(tree, node)):
            # an infinitive stands in its governor's scope: "is not to be damaged", "never
            # allowed to touch"; a finite clause does not ("had no style; … were trends")
            found |= set(_negated_by_children(tree, head))
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


def _infinitive(tree: Tree, i: int) -> bool:
    """``i`` heads an infinitive ("to touch"): a "to" marks it and it has no finite verb."""
    return tree[i].tag == "VB" and any(
        tree[c].lower == "to" and tree[c].dep == "aux" for c in tree.children[i]
    )


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
    subject, object or predicate: the negation is lost, a clear change. Made the object of a
    preposition ("written *in* Armenian" against "in Greek rather than Armenian") it is
    uncertain: the text may state the contrast in other words ("differs *from* confirmation")."""
    out: list[Change] = []
    for t in text:
        m = a.matches.get(t.i)
        if m is None or t.dep not in ("nsubj", "nsubjpass", "dobj", "attr", "ROOT", "conj", "pobj"):
            continue
        quote = quotes[m.quote]
        site = set_apart(quote, m.index)
        if site is None or set_apart(text, t.i) is not None or polarity(text, t.i)[0]:
            continue
        if t.dep == "pobj" and polarity(text, text.clause_of(t.i))[0]:
            continue  # "was not written in Armenian": the text keeps the negation
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
                t.dep != "pobj",
                (t.text,),
                f"'{quote[m.index].text}' stands after '{quote[site].text}' in the quote: it is "
                "what the quote sets apart",
            )
        )
    return out
