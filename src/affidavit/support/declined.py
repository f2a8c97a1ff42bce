"""What a quote says was turned down, taken as done (W11 structure rule).

"He is best known as a member of Aerosmith — having *turned down the invitation to join Guns N'
Roses*" does not make him a member of Guns N' Roses. The predicate rules read a verb of refusal
over a verb ("refused to host"), not over a noun and its complement ("the invitation to join"),
and a text that restates only what hangs below ("a Guns N' Roses member") keeps no predicate of
the quote to compare. So: a text word restated by a word standing under a verb of refusal —
turn down, decline, refuse, reject, fail, forgo, pass up — while the text restates neither that
verb nor what it takes directly ("the invitation": "was invited to join" is faithful) and says
no negation of its own, is uncertain: the quote says it did not happen.
"""

from __future__ import annotations

from .align import Alignment
from .negation import NEGATORS
from .tree import Change, Tree

__all__ = ["declined_changes"]

REFUSING = frozenset(["decline", "refuse", "reject", "fail", "forgo", "forego"])
_PARTICLE = {"turn": "down", "pass": "up"}
_REFUSING_ALL = REFUSING | frozenset(_PARTICLE)
_CARRIED = frozenset(["acl", "relcl", "xcomp", "ccomp", "dobj"])
_CONTENT = frozenset(["NOUN", "PROPN", "VERB", "ADJ", "NUM"])


def _refusals(quote: Tree) -> list[int]:
    out = []
    for t in quote:
        if t.lemma not in _REFUSING_ALL or (
            t.pos not in ("VERB", "AUX") and t.tag not in ("VBG", "VBN")
        ):
            continue
        if t.lemma in REFUSING or (
            t.lemma in _PARTICLE
            and any(quote[c].lower == _PARTICLE[t.lemma] for c in quote.kids(t.i, "prt"))
        ):
            out.append(t.i)
    return out


def declined_changes(a: Alignment, text: Tree, quotes: list[Tree]) -> list[Change]:
    out: list[Change] = []
    for q, quote in enumerate(quotes):
        refusals = _refusals(quote)
        if not refusals:
            continue
        if any(t.lower in NEGATORS or t.lemma in REFUSING for t in text):
            return []
        for v in refusals:
            direct = {v, *quote.kids(v, "dobj", "xcomp", "prt")}
            restated = {m.index for m in a.matches.values() if m.quote == q}
            if direct & restated:
                continue  # the text says the refusal, or what was offered ("was invited")
            below = {
                n for d in direct - {v} for c in quote.kids(d, *_CARRIED) for n in quote.subtree(c)
            }  # what was offered, not where or when ("refused to tour throughout her career")
            held = [
                t
                for t in text
                if t.pos in _CONTENT
                and (m := a.matches.get(t.i)) is not None
                and m.quote == q
                and m.index in below
            ]
            if held:
                words = tuple(t.text for t in held[:3])
                verb = " ".join(quote[n].text for n in (v, *quote.kids(v, "prt")))
                out.append(
                    Change(
                        "negation",
                        False,
                        words,
                        f"'{' '.join(words)}' — the quote has it under "
                        f"'{verb}': the quote says it did not happen",
                    )
                )
    return out
