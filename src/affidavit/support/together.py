"""Slots filled together (W11 structure rule): a text's doer and the one it acts on must fill
one statement of the quotes, not two.

"Lauren Oliver wrote The Good War" against "Studs Terkel wrote The Good War, and Lauren Oliver
wrote Delirium": each of the text's arguments fills its slot of *a* "wrote" in the quote, so the
filler rule (:func:`.roles.filler_changes`), which lets a predicate that stands twice in one quote
go, finds nothing; but no one "wrote" of the quote has both. :func:`apart_changes` reports that as
a clear change when every argument fills its slot in some statement of the predicate and no
statement holds them all — the shape of two statements merged wrongly — and as roles reversed
when one statement has the two arguments in each other's slots ("The French defeated the
British" against "… and the British defeated the French in 1759"). Anything else (an argument
the quote doesn't fill anywhere, a pronoun, a word the alignment didn't restate) is left to the
other rules.
"""

from __future__ import annotations

from .align import Alignment, content
from .roles import _in_filler, _in_np, _normal, _predicates, _shared_subject
from .tree import Change, Tree

__all__ = ["apart_changes"]

_CORE = ("agent", "patient")


def _fills(quote: Tree, i: int, slot: str, places: set[int]) -> bool:
    """One of ``places`` (the quote's tokens restating an argument) fills ``slot`` of the
    predicate at ``i``."""
    fillers = [f for f in quote.children[i] if _normal(quote, f, i) == slot]
    if slot == "agent" and not fillers:
        fillers = _shared_subject(quote, i)
    return any(_in_filler(quote, n, fillers) for n in places)


def apart_changes(a: Alignment, text: Tree, quotes: list[Tree]) -> list[Change]:
    """The text's doer and patient of one predicate fill that predicate's slots only in
    different statements of the same quote."""
    out: list[Change] = []
    for p in _predicates(text):
        pm = a.matches.get(p)
        if pm is None:
            continue
        quote = quotes[pm.quote]
        statements = [pm.index] + [
            o.index for o in a.options.get(p, ()) if o.quote == pm.quote and o.index != pm.index
        ]
        if len(statements) < 2:
            continue  # one statement: the filler rule judges it
        args: dict[str, tuple[int, set[int]]] = {}
        for c in text.children[p]:
            slot = _normal(text, c, p)
            if slot not in _CORE or slot in args:
                continue
            words = [n for n in text.subtree(c) if content(text[n]) and _in_np(text, n, c)]
            places: set[int] = set()
            for n in words:
                found = [m for m in (a.matches.get(n), *a.options.get(n, ())) if m is not None]
                here = {m.index for m in found if m.quote == pm.quote}
                if not here:
                    places = set()
                    break  # a word restated elsewhere or not at all: not this rule's shape
                places |= here
            if places:
                args[slot] = (c, places)
        if len(args) < 2:
            continue
        if any(all(_fills(quote, i, s, pl) for s, (_, pl) in args.items()) for i in statements):
            continue  # one statement holds them all
        doer, done = args["agent"][0], args["patient"][0]
        swapped = next(
            (i for i in statements
             if _fills(quote, i, "agent", args["patient"][1])
             and _fills(quote, i, "patient", args["agent"][1])),
            None,
        )  # fmt: skip
        if swapped is not None:
            out.append(
                Change(
                    "role",
                    True,
                    (text[doer].text, text[p].text, text[done].text),
                    f"roles reversed: the quote has '{text.phrase(done)}' as the doer of "
                    f"'{quote[swapped].text}' and '{text.phrase(doer)}' as the one it is done to",
                )
            )
            continue
        if not all(any(_fills(quote, i, s, pl) for i in statements) for s, (_, pl) in args.items()):
            continue  # an argument the quote never puts in its slot: the filler rule's business
        out.append(
            Change(
                "merge",
                True,
                (text[doer].text, text[p].text, text[done].text),
                f"the quote never says '{text.phrase(doer)}' {text[p].text} "
                f"'{text.phrase(done)}': its '{quote[pm.index].text}' statements pair them "
                "with others",
            )
        )
    return out
