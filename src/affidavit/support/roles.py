"""Who does what to whom, and which noun a number belongs to (W11 structure rules).

Each argument of a predicate fills a *slot*: the doer (``agent``: an active verb's subject, a
passive verb's *by* phrase), the one it is done to (``patient``: an object, a passive subject),
the name given (``oprd``: "are called *computable functions*") or the place after a preposition
(``prep:than``, ``prep:from``, ``prep:to`` …). Active and passive voice fill the same slots, so
"the Incas defeated an alliance" and "the Incas were defeated by an alliance" differ in slots, and
"an alliance defeated the Incas" does not.

- :func:`role_changes` — two of the text's words exchange their slots around the same predicate
  in the quotes ("physicians ranked above pharmacists" / the reverse; "from 3 % to 6 %" / "from
  6 % to 3 %"): a clear change; one word moved to a core slot the other word doesn't take:
  uncertain.
- :func:`attachment_changes` — a number, date, ordinal or adjective the text attaches to one word
  is attached in the quotes to another, which has a number of its own ("created in 1978" against
  "created in 1977 and renamed in 1978"); adjectives only when two of them trade places.
- :func:`filler_changes` — the text puts a word in a slot the quotes fill with another (an entity
  substituted: "the vicuña … are kept" where the quotes keep the llama), or joins words of two
  quotes in a relation neither states (a wrong merge); a pronoun, a demonstrative or an empty
  slot in the quote may be filled by the name the text resolves it to.
"""

from __future__ import annotations

from collections.abc import Iterable

from .align import Alignment, Match, content, semantic
from .antecedent import points_back, renamed
from .facts import MONTHS
from .tree import CLAUSE, Change, Tree
from .units import UNITS

__all__ = ["attachment_changes", "filler_changes", "role_changes", "slot"]

_SUBJ = ("nsubj", "csubj", "expl")
_PASSIVE_SUBJ = ("nsubjpass", "csubjpass")
CORE = frozenset(["agent", "patient", "oprd", "prep:than", "prep:from", "prep:to"])
_NAMES = {
    "agent": "as the doer",
    "patient": "as the one it is done to",
    "oprd": "as the name given",
}
PRONOUNS = frozenset(
    [
        "it", "its", "they", "them", "their", "he", "him", "his", "she", "her", "this", "that",
        "these", "those", "which", "who", "whom", "whose", "latter", "former", "such", "one",
        "itself", "themselves", "himself", "herself", "we", "us", "our", "you", "i",
    ]
)  # fmt: skip


def _slot_name(slot: str) -> str:
    return _NAMES.get(slot, f"after '{slot.partition(':')[2]}'")


def _normal(tree: Tree, child: int, predicate: int) -> str | None:
    """The slot of ``child`` (a direct dependent of ``predicate``)."""
    t = tree[child]
    if t.dep in _SUBJ:
        return "agent"
    if t.dep in _PASSIVE_SUBJ or t.dep == "dobj":
        return "patient"
    if t.dep == "agent":
        return "agent"
    if t.dep == "attr":
        return "agent" if tree[predicate].lemma == "be" else "patient"
    if t.dep == "oprd":
        return "oprd"
    if t.dep == "dative":
        return "prep:to"
    if t.dep == "prep":
        if t.lemma == "by" and tree.passive(predicate):
            return "agent"
        return f"prep:{t.lemma}"
    return None


def _frame(tree: Tree, predicate: int) -> set[int]:
    """The predicate with the words its arguments may hang from: an adjective or noun
    complement of a copula ("is *more pronounced* among women than men"), a particle."""
    out = {predicate}
    for c in tree.children[predicate]:
        if tree[c].dep in ("acomp", "prt", "advmod") or (
            tree[c].dep == "attr" and tree[predicate].lemma == "be"
        ):
            out.add(c)
    return out


def slot(tree: Tree, i: int, predicate: int) -> str | None:
    """The slot ``i`` fills around ``predicate`` (None: it is not one of its arguments, or it
    stands in a clause of its own)."""
    frame = _frame(tree, predicate)
    if i in frame:
        return None
    node = i
    while True:
        t = tree[node]
        if t.head == node:
            break
        if t.head in frame:
            return _normal(tree, node, predicate)
        if t.dep in CLAUSE or (t.dep == "conj" and tree[t.head].pos in ("VERB", "AUX")):
            break
        node = t.head
    # the noun a participle or relative clause modifies: "Spaniards led by Pizarro"
    p = tree[predicate]
    if p.dep in ("acl", "relcl") and (i == p.head or p.head in _noun_phrase(tree, i)):
        if p.dep == "acl":
            return "patient" if p.tag == "VBN" else "agent" if p.tag == "VBG" else None
        for c in tree.children[predicate]:
            if tree[c].lower in ("who", "which", "that") and tree[c].dep in _SUBJ:
                return "agent"
            if tree[c].lower in ("who", "whom", "which", "that") and (
                tree[c].dep in _PASSIVE_SUBJ or tree[c].dep == "dobj"
            ):
                return "patient"
        return None
    # a verb conjoined to another shares its subject: "X became a town and was raided"
    if p.dep == "conj" and not tree.kids(predicate, *_SUBJ, *_PASSIVE_SUBJ):
        first = p.head
        if tree[first].pos in ("VERB", "AUX") and slot(tree, i, first) in ("agent", "patient"):
            subject = any(
                tree[c].dep in (*_SUBJ, *_PASSIVE_SUBJ) and i in tree.subtree(c)
                for c in tree.children[first]
            )
            if subject:
                return "patient" if tree.passive(predicate) else "agent"
    return None


def _noun_phrase(tree: Tree, i: int) -> set[int]:
    """``i`` and the nouns it is a compound or conjunct of (its phrase's heads)."""
    out = {i}
    node = i
    while tree[node].dep in ("compound", "conj", "appos", "amod") and tree[node].head != node:
        node = tree[node].head
        out.add(node)
    return out


def _predicates(tree: Tree) -> Iterable[int]:
    for t in tree:
        if t.pos == "VERB" or (t.pos == "AUX" and t.dep not in ("aux", "auxpass")):
            yield t.i


def _same_slot(a_slot: str, b_slot: str, single: bool) -> bool:
    """The same slot; with one participant only, subject either way."""
    return a_slot == b_slot or (single and {a_slot, b_slot} == {"agent", "patient"})


def role_changes(a: Alignment, text: Tree, quotes: list[Tree]) -> list[Change]:
    """Words that trade slots around a predicate both state."""
    out: list[Change] = []
    for p in _predicates(text):
        pm = a.matches.get(p)
        if pm is None and p in a.opposites:
            q, qi = a.opposites[p]
        elif pm is not None:
            q, qi = pm.quote, pm.index
        elif text[p].lemma == "be":
            continue
        else:
            continue
        quote = quotes[q]
        if any(
            _holds(a, text, p, quotes[o.quote], o.quote, o.index)
            for o in (Match(q, qi, ""), *a.options.get(p, ()))
        ):
            continue  # one statement of the predicate keeps every argument in its slot
        moved: list[tuple[int, str, str]] = []  # (text token, its slot, the quote's slot)
        for x in text.subtree(p) if text[p].head != p else range(len(text)):
            if x == p or not content(text[x]):
                continue
            xm = a.matches.get(x)
            if xm is None or xm.quote != q:
                continue
            mine = slot(text, x, p)
            theirs = slot(quote, xm.index, qi)
            if mine is None or theirs is None or mine == theirs:
                continue
            if any(o.quote == q and slot(quote, o.index, qi) == mine for o in a.options.get(x, ())):
                continue  # another occurrence of the word fills the text's slot
            moved.append((x, mine, theirs))
        # one participant only ("nurses ranked above", "were ranked above"): subject either way
        single = not text.kids(p, "dobj", "agent") and not quote.kids(qi, "dobj", "agent")

        moved = [(x, sx, tx) for x, sx, tx in moved if not _same_slot(sx, tx, single)]
        crossed = [
            (x, y)
            for x, sx, tx in moved
            for y, sy, ty in moved
            if x < y and _same_slot(sx, ty, single) and _same_slot(sy, tx, single)
        ]
        if crossed:
            x, y = crossed[0]
            xm = a.matches[x]
            slot_x = next(t for n, _, t in moved if n == x)
            out.append(
                Change(
                    "role",
                    True,
                    (text[x].text, text[y].text),
                    f"roles reversed around '{quote[qi].text}': the quote has "
                    f"'{quote.phrase(xm.index)}' {_slot_name(slot_x)}",
                )
            )
            continue
        core = [(x, s, t) for x, s, t in moved if s in CORE and t in CORE and text[x].pos != "NUM"]
        # the doer made of what the quote has in a prepositional phrase of the same predicate
        # ("students bestow awards" for "awards are bestowed upon students")
        core += [
            (x, s, t)
            for x, s, t in moved
            if s == "agent"
            and t in ("prep:upon", "prep:on", "prep:to", "prep:for")
            and text[x].pos in ("NOUN", "PROPN")
            and text.kids(p, "dobj")
            and quote.passive(qi)
            and not quote.kids(qi, "agent")
        ]
        if core:
            x, mine, theirs = core[0]
            out.append(
                Change(
                    "role",
                    False,
                    (text[x].text,),
                    f"'{text[x].text}' stands {_slot_name(theirs)} of '{quote[qi].text}' in "
                    f"the quote, not {_slot_name(mine)}",
                )
            )
    return out


def _holds(a: Alignment, text: Tree, p: int, quote: Tree, q: int, qi: int) -> bool:
    """The quote's predicate ``qi`` (of quote ``q``) has every argument the text gives ``p`` in
    the text's slot, each restated by a word of that quote: a predicate the quote states twice
    ("the French defeated the Dutch, and the British defeated the French") is judged by the
    statement that holds the text's arguments, not by the first one the alignment chose."""
    found = 0
    for x in text.subtree(p) if text[p].head != p else range(len(text)):
        if x == p or not content(text[x]):
            continue
        mine = slot(text, x, p)
        if mine is None:
            continue
        places = [m for m in (a.matches.get(x), *a.options.get(x, ())) if m is not None]
        places = [m for m in places if m.quote == q]
        if not places:
            if x in a.matches:
                return False  # restated by another quote only: not this statement's argument
            continue
        if not any(slot(quote, m.index, qi) == mine for m in places):
            return False
        found += 1
    return found > 0


_SKIP_UP = frozenset(["ADP", "DET", "PUNCT", "CCONJ", "PART", "SYM", "NUM"])


def governor(tree: Tree, i: int) -> int | None:
    """The content word a number (or modifier) belongs to: up from ``i`` past prepositions,
    other number words and punctuation ("in 1978" → the verb; "180 Spaniards" → Spaniards)."""
    node = i
    for _ in range(6):
        head = tree[node].head
        if head == node:
            return None
        t = tree[head]
        if (
            t.pos not in _SKIP_UP
            and (content(t) or t.pos in ("AUX", "VERB"))
            and t.lower not in UNITS
            and t.lemma not in UNITS
            and t.lower not in MONTHS
        ):
            return head
        node = head
    return None


ORDINALS = frozenset(
    ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"]
)


def _in_date(tree: Tree, i: int) -> bool:
    """Token ``i`` is a day or year of a written date ("April 14, 2009", "14 April")."""
    near = [tree[i].head, *tree.children[i], i - 1, i + 1, i - 2]
    return any(0 <= n < len(tree) and tree[n].lower in MONTHS for n in near)


def _day_of(tree: Tree, i: int) -> bool:
    return _in_date(tree, i) and not (tree[i].text.isdigit() and len(tree[i].text) == 4)


def _aligned_to(a: Alignment, q: int, index: int) -> int | None:
    for n, m in a.matches.items():
        if m.quote == q and m.index == index:
            return n
    return None


def _numbers_under(tree: Tree, g: int) -> list[int]:
    return [t.i for t in tree if t.pos == "NUM" and t.i != g and governor(tree, t.i) == g]


def attachment_changes(a: Alignment, text: Tree, quotes: list[Tree]) -> list[Change]:
    """A number or ordinal attached in the quotes to another word than in the text (which has
    a number of its own there); two adjectives that trade their nouns."""
    out: list[Change] = []
    for t in text:
        xm = a.matches.get(t.i)
        g = governor(text, t.i)
        if xm is None or g is None:
            continue
        gm = a.matches.get(g)
        if gm is None:
            continue
        quote = quotes[xm.quote]
        theirs = governor(quote, xm.index)
        if theirs is None or (gm.quote == xm.quote and theirs == gm.index):
            continue
        if t.pos == "NUM":
            if not t.text[:1].isdigit() and t.lower not in ORDINALS:
                continue  # "million", "one": the number rule reads number words
            if _day_of(text, t.i) or _day_of(quote, xm.index):
                continue  # the day of a date: the date rules read dates
            if _in_date(text, t.i) and _in_date(quote, xm.index):
                continue  # a date's year in both: the date rules
            mine_there = _aligned_to(a, xm.quote, theirs)
            if mine_there is not None and t.i in text.subtree(mine_there):
                continue  # the text hangs it from that word too ("finished with a 1-1 draw")
            if quote[theirs].lemma == text[g].lemma and gm.quote == xm.quote:
                continue  # the same word, another occurrence ("State Route 167, and State Route 18")
            if _in_name(quote, xm.index) or _in_name(text, t.i):
                continue  # part of a name ("the Billboard 200", "the Patriots 7")
            there = quotes[gm.quote]
            rivals = [
                n
                for n in _numbers_under(there, gm.index)
                if there[n].text != t.text and _same_kind(there[n].text, t.text)
            ]
            if not rivals:
                continue
            mine = {text[n].text for n in _numbers_under(text, g)}
            if quote[theirs].lemma == text[g].lemma and all(there[r].text in mine for r in rivals):
                continue  # "the 1972 and 1974 Summit Series": the text gives both numbers to it
            out.append(
                Change(
                    "number",
                    True,
                    (t.text,),
                    f"'{t.text}' belongs to '{quote.phrase(theirs)}' in the quotes, not to "
                    f"'{text.phrase(g)}' (the quotes give it '{there[rivals[0]].text}')",
                )
            )
        elif t.dep == "amod" and gm.quote == xm.quote:
            # a clear change only when another adjective took its place, and it took this one's
            for y in text:
                if y.i == t.i or y.dep != "amod":
                    continue
                ym, g2 = a.matches.get(y.i), governor(text, y.i)
                if ym is None or g2 is None or ym.quote != xm.quote:
                    continue
                g2m = a.matches.get(g2)
                if (
                    g2m is not None
                    and g2m.quote == xm.quote
                    and g2 != g
                    and text[g2].lemma != text[g].lemma
                    and theirs == g2m.index
                    and governor(quote, ym.index) == gm.index
                ):
                    out.append(
                        Change(
                            "role",
                            True,
                            (t.text, y.text),
                            f"'{t.text}' describes '{quote[theirs].text}' in the quotes, "
                            f"not '{text[g].text}'",
                        )
                    )
                    break
    return out


def _in_name(tree: Tree, i: int) -> bool:
    """Number ``i`` right after a capitalised name it belongs to ("Billboard 200", "Route 18")."""
    before = i - 1
    return (
        before >= 0
        and tree[before].pos == "PROPN"
        and tree[before].text[:1].isupper()
        and (tree[i].head == before or tree[before].head == i)
    )


def a_of(a: Alignment, quote_index: int, q: int) -> int | None:
    """The text token matched to quote ``q``'s token ``quote_index``."""
    for n, m in a.matches.items():
        if m.quote == q and m.index == quote_index:
            return n
    return None


def _same_kind(x: str, y: str) -> bool:
    """Both years, or both other numbers."""
    return _year(x) == _year(y)


def _year(s: str) -> bool:
    return s.isdigit() and len(s) == 4 and 1000 <= int(s) <= 2200


def filler_changes(
    a: Alignment, text: Tree, quotes: list[Tree], context: frozenset[str]
) -> tuple[list[Change], set[int]]:
    """Slots the text fills with other words than the quotes do: a subject or object the quote
    names differently ("the vicuña … are kept" where the quote keeps "the llama and alpaca";
    "the insurance premium takes the form" where "that agreement" does) is a clear change.

    Returns the changes and the text's words that resolve a quote's pronoun, pointing phrase
    or missing subject (so may stand with a predicate of another quote)."""
    out: list[Change] = []
    bridged: set[int] = set()
    for p in _predicates(text):
        pm = a.matches.get(p)
        if pm is None:
            continue
        quote = quotes[pm.quote]
        for c in text.children[p]:
            mine = _normal(text, c, p)
            if mine is None:
                continue
            prep = mine.startswith("prep:") and mine not in CORE
            if prep:  # a prepositional phrase's object ("drains *through* the straits")
                objects = text.kids(c, "pobj")
                if not objects:
                    continue
                c = objects[0]
            elif mine not in ("agent", "patient"):
                continue
            head = _phrase_head(text, c)
            words = [n for n in text.subtree(c) if content(text[n]) and _in_np(text, n, c)]
            if not words:
                continue
            matched = [a.matches[n] for n in words if n in a.matches]
            fillers = [f for f in quote.children[pm.index] if _normal(quote, f, pm.index) == mine]
            if prep:
                fillers = [o for f in fillers for o in quote.kids(f, "pobj")]
                if not fillers:
                    continue  # the quote fills no such phrase: an added one is the coverage rule's
            if mine == "agent" and not fillers:
                fillers = _shared_subject(quote, pm.index)
            if any(m.quote == pm.quote and _in_filler(quote, m.index, fillers) for m in matched):
                continue  # the quote fills the slot with the same words
            if any(
                o.quote == pm.quote and _in_filler(quote, o.index, fillers)
                for n in words
                for o in a.options.get(n, ())
            ) or _same_head(text, head, quote, fillers):
                continue  # … which the alignment matched to the same words in another quote
            if any(o.quote in {m.quote for m in matched} for o in a.options.get(p, ())):
                continue  # the same predicate stands in the words' own quote too
            if any(m.quote == pm.quote for m in matched):
                # the words are elsewhere in the same quote: a clear change when the quote fills
                # this slot with words the text leaves out ("written by Peter Holm and reviewed
                # by Anna Berg" for "Anna Berg wrote"); a moved word is the role rules' business
                others = [
                    n
                    for f in fillers
                    for n in quote.subtree(f)
                    if _in_np(quote, n, f) and quote[n].pos == "PROPN"
                ]
                said = {t.lower for t in text}
                elsewhere = any(
                    _core_elsewhere(quote, m.index, pm.index)
                    for m in matched
                    if m.quote == pm.quote
                )
                if others and elsewhere and not any(quote[n].lower in said for n in others):
                    out.append(
                        Change(
                            "role",
                            True,
                            tuple(text[n].text for n in words if n in a.matches)[:3],
                            f"roles changed: the quote has "
                            f"'{quote.phrase(_phrase_head(quote, fillers[0]))}' "
                            f"{_slot_name(mine)} of '{quote[pm.index].text}', not "
                            f"'{text.phrase(head)}'",
                        )
                    )
                continue
            if not fillers or all(_resolves(a, text, head, quote, f, context) for f in fillers):
                bridged.update(words)  # a pronoun or a gap resolved to a name given elsewhere
                continue
            if not matched or _reported(quotes[matched[0].quote]):
                continue  # "Article 8.1 states" + what it states: the speaker for the content
            filler_words = [
                n
                for f in fillers
                for n in quote.subtree(f)
                if content(quote[n]) and _in_np(quote, n, f)
            ]
            restated = {(m.quote, m.index) for m in a.matches.values()}
            if filler_words and all((pm.quote, n) not in restated for n in filler_words):
                out.append(
                    Change(
                        "merge",
                        not prep,  # a phrase ("through the Gulf of Riga"): likely, not clear
                        tuple(text[n].text for n in words if n in a.matches)[:3],
                        f"'{quote[pm.index].text}' is said of "
                        f"'{quote.phrase(_phrase_head(quote, fillers[0]))}' in the quotes, not of "
                        f"'{text.phrase(head)}'",
                    )
                )
    return out, bridged


def _same_head(text: Tree, head: int, quote: Tree, fillers: list[int]) -> bool:
    """The quote fills the slot with a phrase of the same head word ("Occluded fronts" /
    "occluded fronts"), whichever quote the alignment matched the text's words to."""
    lemma = text[head].lemma
    return content(text[head]) and any(
        quote[_phrase_head(quote, f)].lemma == lemma for f in fillers
    )


def _resolves(
    a: Alignment, text: Tree, head: int, quote: Tree, f: int, context: frozenset[str]
) -> bool:
    """The quote's filler ``f`` may stand for the text's phrase headed at ``head``: a pronoun;
    or a pointing phrase ("that agreement", "the city") whose noun the text restates or names
    (a name, the heading's subject)."""
    qh = _phrase_head(quote, f)
    if quote[qh].lower in PRONOUNS:
        return True
    if not _deictic(quote, f):
        return False
    mine = text[head]
    if mine.pos == "PROPN" or mine.lower in context:
        return True
    if mine.pos == "VERB" and any(
        quote[c].lower in ("this", "that", "these", "those", "such") for c in quote.children[qh]
    ):
        return True  # "This method" for what the text describes: "Setting a figure within …"
    if mine.lemma == quote[qh].lemma:
        return True
    return bool(semantic(mine, quote[qh]))


def cross_quote(a: Alignment, text: Tree, quotes: list[Tree], bridged: set[int]) -> list[str]:
    """Words the text joins to a word of another quote, where neither quote states the relation
    ("proclaimed (one quote) … during the War (another)"): uncertain. Clauses joined to clauses
    (coordination, relative clauses), resolved pronouns and frames cut from the same sentence
    are not such relations, nor a word from the quote a pointing phrase points back to ("that
    instability", :mod:`.antecedent`). A word the quotes state twice ("installed" in two quotes) must have
    one occurrence that holds all the text hangs on it."""
    dependents: dict[int, list[int]] = {}
    for t in text:
        if t.i not in a.matches or t.i in bridged or not content(t):
            continue
        g = _direct_governor(text, t.i)
        if g is not None and g in a.matches:
            dependents.setdefault(g, []).append(t.i)
    out: list[str] = []
    for g, deps in dependents.items():
        occurrences = [a.matches[g], *a.options.get(g, ())]
        best: list[int] = []
        for o in occurrences:
            loose = [
                t
                for t in deps
                if not _stated_with(a, quotes, t, o, text, g)
                and not points_back(a, quotes, text, t, o)
                and not renamed(a, quotes, t, o)
            ]
            if not best or len(loose) < len(best):
                best = loose
            if not loose:
                break
        out += [f"'{text[t].text}' with '{text[g].text}'" for t in best]
    return out


def _stated_with(a: Alignment, quotes: list[Tree], t: int, o: Match, text: Tree, g: int) -> bool:
    """Text word ``t`` stands in quote ``q`` (where its governor ``g`` does), or comes from a
    quote that frames it: a reported statement, or a frame cut from the same sentence."""
    q = o.quote
    mine = [a.matches[t], *a.options.get(t, ())]
    quote = quotes[q]
    linked = {o.index, *quote.kids(o.index, "conj"), quote[o.index].head}
    others = [p for p in a.options.get(g, ()) if p.quote == q and p.index not in linked]
    if others:
        # the word stands twice in the quote ("Bonobos live south …, chimpanzees, which live
        # north"): the text's word must not belong to the other occurrence
        taken = {p.index for p in others}
        if any(
            m.quote == q
            and governor(quote, m.index) not in taken
            and quote.clause_of(m.index) not in taken
            for m in mine
        ):
            return True
    elif any(m.quote == q for m in mine):
        return True
    own = quotes[a.matches[t].quote]
    there = own[a.matches[t].index]
    if there.pos in ("ADJ", "NUM") and there.dep in ("nsubj", "nsubjpass", "dobj", "attr"):
        return True  # "The first is freedom of speech": "first" stands for a noun left out
    if _reported(own):
        return True  # "Article 8.1 states" + what it states
    token = text[t]
    prep = _frame_prep(text, t, g)
    if _fragment(own) and (
        prep or _temporal(text, t) or (token.pos == "PROPN" and token.dep == "poss")
    ):
        return True  # a frame cut from the same sentence: "On November 6, 1971" + its clause
    return token.pos == "PROPN" and bool(prep) and _points_back(quotes[q], o.index, prep)


FRAME_PREPS = frozenset(
    [
        "in", "on", "at", "during", "under", "since", "until", "before", "after", "through",
        "throughout", "for", "over", "within", "across", "amid", "among", "by", "from", "to",
        "exchange",
    ]
)  # fmt: skip
"""Prepositions that frame a statement (time, place, purpose) rather than relate two things
("of")."""
_TIME_WORDS = frozenset(
    ["year", "century", "decade", "period", "era", "time", "war", "age", "month", "week", "day"]
)


def _frame_prep(tree: Tree, i: int, g: int) -> str:
    """The framing preposition between ``i`` and its governor ``g`` ('' if none)."""
    node = tree[i].head
    while node != g and tree[node].pos in ("ADP", "DET", "NUM", "PUNCT"):
        if tree[node].pos == "ADP" and tree[node].lower in FRAME_PREPS:
            return tree[node].lower
        if tree[node].head == node:
            break
        node = tree[node].head
    return ""


def _temporal(tree: Tree, i: int) -> bool:
    t = tree[i]
    return (
        (t.pos == "NUM" and t.text.isdigit() and len(t.text) == 4)
        or t.lower in MONTHS
        or t.lemma in _TIME_WORDS
        or t.text[:4].isdigit()
    )


def _fragment(tree: Tree) -> bool:
    """A quote with no subject of its own: a phrase cut from a sentence ("On November 6,
    1971", "for specified loss or damage")."""
    return not any(t.dep in ("nsubj", "nsubjpass", "csubj", "expl") for t in tree)


def _points_back(tree: Tree, g: int, prep: str) -> bool:
    """Quote word ``g`` has a ``prep`` phrase whose noun points back ("in the new capital")."""
    for c in tree.children[g]:
        if tree[c].lower == prep:
            for o in tree.kids(c, "pobj"):
                kids = [tree[k] for k in tree.children[o]]
                if (
                    tree[o].pos != "PROPN"
                    and any(k.lower in ("the", "this", "that", "its") for k in kids)
                    and not any(k.pos == "PROPN" for k in kids)
                ):
                    return True
    return False


_CLAUSE_LINKS = frozenset(
    ["conj", "parataxis", "advcl", "ccomp", "xcomp", "relcl", "acl", "appos", "csubj"]
)


def _direct_governor(tree: Tree, i: int) -> int | None:
    """:func:`governor`, unless the way up crosses a clause or a coordination (then None)."""
    node = i
    for _ in range(6):
        t = tree[node]
        if t.head == node or t.dep in _CLAUSE_LINKS:
            return None
        head = t.head
        h = tree[head]
        if h.pos not in _SKIP_UP and (content(h) or h.pos in ("AUX", "VERB")):
            return head
        node = head
    return None


def _core_elsewhere(tree: Tree, i: int, p: int) -> bool:
    """Token ``i`` is the doer or the one done to of a predicate other than ``p`` ("reviewed
    by *Anna Berg*")."""
    return any(q != p and slot(tree, i, q) in ("agent", "patient") for q in _predicates(tree))


SPEECH = frozenset(["state", "say", "declare", "write", "note", "read", "provide", "stipulate"])


def _reported(tree: Tree) -> bool:
    """The quote ends on a verb of saying with nothing said ("Article 8.1 states"): another
    quote is what it says."""
    last = [t for t in tree if t.pos not in ("PUNCT",)]
    return bool(last) and last[-1].lemma in SPEECH and not tree.kids(last[-1].i, "ccomp", "dobj")


def _phrase_head(tree: Tree, i: int) -> int:
    """The noun heading the argument at ``i`` (the object of a preposition, for "by X")."""
    t = tree[i]
    if t.pos == "ADP":
        objs = tree.kids(i, "pobj")
        if objs:
            return objs[0]
    return i


def _in_np(tree: Tree, n: int, top: int) -> bool:
    """``n`` belongs to the noun phrase headed at ``top`` (not to a clause inside it)."""
    node = n
    while node != top:
        t = tree[node]
        if t.dep in CLAUSE or t.head == node:
            return False
        node = t.head
    return True


def _under(tree: Tree, n: int, tops: list[int]) -> bool:
    return any(n in tree.subtree(top) for top in tops)


def _in_filler(tree: Tree, n: int, fillers: list[int]) -> bool:
    """``n`` is one of the words filling the slot: in a filler's noun phrase (through a
    preposition's object), not in a clause hung on it — "written by Studs Terkel, who interviewed
    Lauren Oliver" fills the doer's slot with Studs Terkel, not with Lauren Oliver."""
    return any(_in_np(tree, n, _phrase_head(tree, f)) or n == f for f in fillers)


def _shared_subject(tree: Tree, p: int) -> list[int]:
    """The subject a conjoined verb shares with the verb it is conjoined to."""
    t = tree[p]
    if t.dep == "conj" and tree[t.head].pos in ("VERB", "AUX"):
        return tree.kids(t.head, *_SUBJ, *_PASSIVE_SUBJ)
    return []


def _deictic(tree: Tree, i: int) -> bool:
    """A phrase that points back rather than names: "this hall", "such services", or a bare
    "the city" (no other word on the noun, no name in it)."""
    head = _phrase_head(tree, i)
    if tree[head].pos == "PROPN":
        return False
    kids = tree.children[head]
    words = [tree[c].lower for c in kids]
    if any(w in ("this", "that", "these", "those", "such", "its", "their") for w in words):
        return not any(tree[c].pos == "PROPN" for c in tree.subtree(head))
    return words == ["the"]


def _in_context(text: Tree, words: list[int], context: frozenset[str]) -> bool:
    return any(text[n].lower in context for n in words)
