"""A modifier moved between two occurrences of one noun (W11): "wholesale prices held steady and
consumer prices declined" against "consumer prices held steady and wholesale prices declined".

Both sentences say "prices held" and "prices declined"; what changed is which prices. The role
rules compare a predicate's arguments by their words, so the same noun in both slots looks kept.
Here each modifier of a text noun (an adjective or a compound: *consumer*, *wholesale*, *state*)
is followed to the noun the quote hangs it on; when the text makes that noun the subject or
object of a predicate the quote states, and the quote's argument in that slot is another
occurrence of the same noun that carries another modifier and not this one, the modifier has
moved: a change of role, clear when the text gave that argument's modifier to the other
occurrence in exchange, else only likely (another predicate may say the same: "received negative
reviews from critics" for "critics gave it negative reviews"). Only common words (a name's words are the exchange rules'), and
only when the quote's argument is described otherwise: against a bare "albums" the text's "live
albums" may be the same ones. A change of voice (another slot), a quote that puts the modifier on that
argument too, and a text noun with another modifier that argument carries ("excess dietary
carbohydrate is converted" for "dietary carbohydrate …, the excess carbohydrate is converted":
the text names the quote's argument and describes it by the other occurrence) are left alone.
"""

from __future__ import annotations

from .align import Alignment
from .tree import Change, Tree

__all__ = ["borrowed_modifiers", "moved_modifiers"]

MODIFIERS = frozenset(["amod", "compound"])
SLOTS = frozenset(["nsubj", "nsubjpass", "dobj"])
COMMON = frozenset(["ADJ", "NOUN"])


def moved_modifiers(a: Alignment, text: Tree, quotes: list[Tree]) -> list[Change]:
    out: list[Change] = []
    for t in text:
        m = a.matches.get(t.i)
        noun = t.head
        if t.dep not in MODIFIERS or m is None or noun == t.i:
            continue
        if t.pos not in COMMON or text[noun].pos != "NOUN":
            continue  # names ("the Critics Choice Television Award") are the exchange rules'

        quote = quotes[m.quote]
        if quote[m.index].dep not in MODIFIERS:
            continue
        theirs = quote[m.index].head  # the noun the quote hangs the modifier on
        slot, verb = text[noun].dep, text[noun].head
        if quote[theirs].lemma != text[noun].lemma or slot not in SLOTS or verb == noun:
            continue
        vm = a.matches.get(verb)
        if vm is None or vm.quote != m.quote:
            continue
        args = quote.kids(vm.index, slot)
        args += [
            c for n in args for c in quote.kids(n, "conj")
        ]  # "seven studio and two live albums"
        if not args or theirs in args:
            continue
        described = [c for n in args for c in quote.kids(n, *MODIFIERS)]
        if not described:
            continue  # the quote's argument is bare: it may well be the text's "live albums"
        carried = {quote[c].lemma for n in args for c in quote.children[n]}
        others = {text[c].lemma for c in text.kids(noun, *MODIFIERS) if c != t.i}
        if (
            all(quote[n].lemma == text[noun].lemma for n in args)
            and not carried & {t.lemma, quote[m.index].lemma}
            and not carried & others  # "excess dietary carbohydrate": the quote's excess one
        ):
            # clear when the text moved the other occurrence's modifier too (an exchange: the
            # parser may hang it anywhere, "held steady and consumer prices");
            # alone it may be another predicate's paraphrase ("received negative reviews from
            # critics" for "critics gave it negative reviews"): uncertain
            theirs_words = {quote[c].lemma for c in described}
            exchanged = any(y.head != noun and y.lemma in theirs_words for y in text)
            out.append(
                Change(
                    "role",
                    exchanged,
                    (t.text, text[noun].text),
                    f"'{t.text} {text[noun].text}' — in the quote '{quote[vm.index].text}' is "
                    f"said of another '{quote[args[0]].text}', not of the '{t.text}' one",
                )
            )
    return out


def _modifiers(tree: Tree, i: int, into: set[int]) -> set[int]:
    """The modifiers (adjectives, compounds, and theirs) of noun ``i``."""
    for c in tree.children[i]:
        if tree[c].dep in (*MODIFIERS, "conj") and c not in into:
            into.add(c)
            _modifiers(tree, c, into)
    return into


_SAME = frozenset(["same", "stem"])
_NEAR = 3
"""Words between a quote's noun and a word still read as part of its phrase."""


def borrowed_modifiers(a: Alignment, text: Tree, quotes: list[Tree]) -> list[Change]:
    """A text noun's modifier taken from elsewhere in the quote while the quote describes that
    noun otherwise: "a radio show host" for "a television show host, … banned from radio" —
    likely (uncertain): the quote's own modifiers of the noun are restated by no text word."""
    out: list[Change] = []
    for t in text:
        m, noun = a.matches.get(t.i), t.head
        if t.dep not in MODIFIERS or t.pos not in COMMON or m is None or noun == t.i:
            continue
        nm = a.matches.get(noun)
        if nm is None or nm.quote != m.quote or text[noun].pos != "NOUN":
            continue
        if nm.how not in _SAME or m.how not in _SAME:
            continue  # the same words on both sides, or another rule's business
        quote = quotes[m.quote]
        own = _modifiers(quote, nm.index, set())
        if m.index in own or m.index == nm.index or quote[m.index].pos not in COMMON:
            continue
        restated = {x.index for x in a.matches.values() if x.quote == m.quote}
        if quote[m.index].dep in MODIFIERS or quote[m.index].dep == "conj":
            # a description of its own ("older institutions"): a restatement may move it — unless
            # the quote's noun carries a modifier of its own in that place that no text word
            # restates ("human enhancement" for "frog enhancement …, human evolution")
            rival = [
                c
                for c in quote.kids(nm.index, *MODIFIERS)
                if quote[c].pos in COMMON and c not in restated and c < nm.index
            ]
            if quote[m.index].dep == "conj" or not rival or len(text.kids(noun, *MODIFIERS)) != 1:
                continue
        if any(abs(m.index - q.i) <= _NEAR and q.lemma == quote[nm.index].lemma for q in quote):
            continue  # in a phrase of that noun, however parsed ("leeward or downwind side")
        if quote[quote[m.index].head].lemma == text[noun].lemma or any(
            quote[c].lemma == t.lemma for c in own
        ):
            continue  # another occurrence of the noun carries it, or this one does too
        described = [c for c in own if quote[c].pos in COMMON and quote[c].dep in MODIFIERS]
        if all(c in restated for c in described):
            continue  # the quote's own description of the noun is all restated
        said = " ".join(quote[c].text for c in sorted([*own, nm.index]))
        out.append(
            Change(
                "role",
                False,
                (t.text,),
                f"'{t.text} {text[noun].text}' — the quote has '{said}'; its '{t.text}' is "
                "said of something else",
            )
        )
    return out


ARGUMENTS = frozenset(["nsubj", "nsubjpass", "dobj", "pobj"])


def modifier_as_thing(a: Alignment, text: Tree, quotes: list[Tree]) -> list[Change]:
    """A bare text noun that stands as a thing of its own, an argument ("was in *a film*"),
    where the quote has the word only as a kind of another noun the text never restates ("his
    *film* career"): likely (uncertain) — a career in film is not a film. Not a predicate noun
    ("are islands" for "island groups") nor a noun the text describes as the quote does."""
    out: list[Change] = []
    for t in text:
        m = a.matches.get(t.i)
        if m is None or t.pos != "NOUN" or t.dep not in ARGUMENTS or m.how not in _SAME:
            continue
        if any(o.quote != m.quote or o.index != m.index for o in a.options.get(t.i, ())):
            continue  # the word stands elsewhere in the quotes too
        if any(text[c].dep in MODIFIERS for c in text.children[t.i]):
            continue  # described in the text too ("civil engineering"): a phrase restated
        if any(text[c].dep == "nummod" for c in text.children[t.i]):
            continue  # a measure ("over eight years" for "an eight-year study")
        quote = quotes[m.quote]
        word = quote[m.index]
        if word.dep != "compound" or quote[word.head].pos != "NOUN" or word.head == m.index:
            continue
        owner = quote[word.head]
        if any(x.quote == m.quote and x.index == word.head for x in a.matches.values()):
            continue
        if any(u.lemma == owner.lemma for u in text):
            continue
        hm = a.matches.get(t.head)
        if hm is not None and hm.quote == m.quote and hm.index == owner.head:
            continue  # in the noun's own slot: "The DVD sold" for "the DVD release sold"
        out.append(
            Change(
                "merge",
                False,
                (t.text,),
                f"'{t.text}' stands in the quote only as a kind of '{owner.text}' "
                f"('{word.text} {owner.text}')",
            )
        )
    return out
