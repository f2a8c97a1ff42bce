"""A quote with a few words changed (W11 structure rule): what an edit in place changes.

A text that is its quote's own words with one or two of them replaced, dropped or added is the
commonest wrong text an attacker (or a careless writer) sends — "below the line" for "above the
line", "counties never have" for "counties almost never have", "the choice is not usually" for
"the choice is usually", "only theoretical classes" for "mainly theoretical classes", "at 2014
West Street … in 140" for "at 140 West Street … in 2014". The word rules read such a text as a
bag: every word it uses is somewhere in the quote ("below" a few words on, "fell" in the other
clause), so nothing is missing. :func:`edit_changes` lines the text's words up with the quote's
(or two quotes' in a row) and reads each place where they differ:

- a word replaced by its opposite (:data:`~affidavit.support.facts.ANTONYMS`, or the direction
  and degree words of :data:`OPPOSITES`) — clear;
- a number replaced by another number the quote gives elsewhere, the text giving the replaced one
  elsewhere (two numbers that traded slots) — clear;
- a partial quantifier replaced by a universal one ("mainly" → "only", "many" → "all") — clear;
- a negation added or dropped ("is not usually", "almost have" for "almost never have") — clear;
- a hedge dropped ("almost", "estimated", "approximately", "may be" → "is") — likely;
- a number's unit or scale replaced, the number kept ("55 km/h" for "55 mph") — clear;
- "one of the largest" made "the largest" — clear;
- a causal word joining two quotes that state no cause between them — clear.

A replaced word the text uses elsewhere too, or words the text moved rather than changed, make
the change only likely (a restatement may reorder). Texts far from every quote (a paraphrase)
are left to the other rules: the edits must leave most of the quote's words in place.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from difflib import SequenceMatcher

from ..words import stem
from .facts import ANTONYMS
from .hedging import HEDGE_ADV, HEDGE_AUX
from .lexicon import _SCALES
from .negation import NEGATORS
from .tree import Change, Tree
from .units import UNITS

__all__ = ["edit_changes"]

SAME_SHARE = 0.75
"""Share of the words (``SequenceMatcher.ratio``) text and quote must have in order for the
differences to be read as edits in place."""

_LIMIT = 160
"""Words compared at most per side (longer texts are left to the other rules)."""

OPPOSITES = frozenset(
    frozenset(p)
    for p in [
        ("more", "less"), ("more", "fewer"), ("most", "least"), ("first", "last"),
        ("greater", "lesser"), ("better", "worse"), ("best", "worst"), ("upper", "lower"),
        ("minor", "major"), ("earliest", "latest"), ("longest", "shortest"),
        ("shorter", "longer"), ("increases", "decreases"), ("increasing", "decreasing"),
        ("rising", "falling"), ("rise", "fall"), ("rises", "falls"), ("risen", "fallen"),
        ("gained", "lost"), ("win", "lose"), ("wins", "loses"), ("above", "below"),
        ("over", "under"), ("front", "back"), ("left", "right"), ("top", "bottom"),
        ("before", "after"), ("prior", "after"), ("start", "end"), ("beginning", "end"),
        ("west", "east"), ("north", "south"), ("western", "eastern"),
        ("northern", "southern"), ("northwest", "southeast"), ("northeast", "southwest"),
        ("maximum", "minimum"), ("high", "low"), ("large", "small"), ("big", "small"),
        ("old", "young"), ("early", "late"), ("strong", "weak"), ("stronger", "weaker"),
        ("strongest", "weakest"), ("hot", "cold"), ("warm", "cool"), ("warmer", "cooler"),
        ("wet", "dry"), ("wetter", "drier"), ("heavy", "light"), ("heavier", "lighter"),
        ("fast", "slow"), ("faster", "slower"), ("fastest", "slowest"), ("rich", "poor"),
        ("richer", "poorer"), ("import", "export"), ("imports", "exports"),
        ("buy", "sell"), ("bought", "sold"), ("inner", "outer"), ("internal", "external"),
        ("senior", "junior"), ("majority", "minority"), ("win", "loss"), ("victory", "defeat"),
        ("supported", "opposed"), ("support", "oppose"), ("approved", "rejected"),
        ("include", "exclude"), ("included", "excluded"), ("includes", "excludes"),
        ("add", "remove"), ("added", "removed"), ("entered", "left"), ("arrived", "departed"),
        ("same", "different"), ("similar", "different"), ("common", "rare"),
        ("commonly", "rarely"), ("frequent", "rare"), ("frequently", "rarely"),
        ("often", "rarely"), ("often", "seldom"), ("easy", "difficult"), ("easier", "harder"),
        ("easily", "hardly"), ("cheap", "expensive"), ("cheaper", "costlier"),
        ("present", "absent"), ("wide", "narrow"), ("wider", "narrower"),
        ("deep", "shallow"), ("deeper", "shallower"), ("thick", "thin"),
        ("ahead", "behind"), ("forward", "backward"), ("up", "down"), ("upward", "downward"),
        ("predecessor", "successor"), ("parent", "child"), ("husband", "wife"),
        ("father", "son"), ("mother", "daughter"), ("teacher", "student"),
        ("employer", "employee"), ("buyer", "seller"), ("lender", "borrower"),
        ("attack", "defense"), ("offensive", "defensive"), ("home", "away"),
        ("summer", "winter"), ("spring", "autumn"), ("day", "night"), ("morning", "evening"),
        ("plus", "minus"), ("profit", "loss"), ("surplus", "deficit"),
        ("asset", "liability"), ("credit", "debit"), ("inflow", "outflow"),
    ]
)  # fmt: skip
"""Pairs of words one of which, put where the quote has the other, says the opposite (direction,
degree, order, side, relation). :data:`~affidavit.support.facts.ANTONYMS` adds pairs by stem."""

UNIVERSAL = frozenset(
    ["all", "every", "each", "always", "only", "entirely", "completely", "totally", "wholly",
     "exclusively", "solely", "invariably", "universally", "none", "never", "whole", "entire"]
)  # fmt: skip
PARTIAL = frozenset(
    ["some", "many", "several", "few", "most", "mostly", "mainly", "largely", "primarily",
     "predominantly", "chiefly", "usually", "generally", "typically", "often", "sometimes",
     "frequently", "occasionally", "partly", "partially", "much", "numerous", "various",
     "certain", "majority", "commonly", "normally", "mainly", "nearly", "almost"]
)  # fmt: skip
HEDGES = (
    HEDGE_ADV
    | HEDGE_AUX
    | {
        "about",
        "around",
        "approximately",
        "roughly",
        "estimated",
        "believed",
        "thought",
        "reportedly",
        "possibly",
        "some",
        "partly",
        "partially",
        "mostly",
        "mainly",
        "largely",
        "generally",
        "usually",
        "often",
        "sometimes",
        "typically",
    }
) - {"rather", "quite", "fairly", "somewhat", "relatively"}
"""Words whose dropping turns a hedged or partial statement into a plain one ("rather large" /
"large" is left to the other rules)."""
_BEFORE_NUMBER = frozenset(["about", "around", "some"])
"""Hedges only before a number ("about 200"); elsewhere a preposition or a determiner."""
_LIGHT = frozenset(["the", "a", "an", "of", "and", "in", "to", "on", "for", "by", "with", "as"])
PLAIN = frozenset(["is", "are", "was", "were", "be", "has", "have", "had", "will", "does", "do"])
"""What a hedging modal becomes when it is dropped ("may be" → "is")."""
CAUSAL = frozenset(
    ["because", "so", "therefore", "thus", "hence", "consequently", "since", "causing",
     "caused", "led", "leading", "resulted", "resulting"]
)  # fmt: skip
"""Words that state one fact as the cause or effect of another."""

_DIGITS = re.compile(r"\d+(?:[.,]\d+)*")


def _words(tree: Tree) -> list[str]:
    return [t.lower.rstrip(".") or t.lower for t in tree if t.pos not in ("PUNCT", "SPACE", "SYM")][
        :_LIMIT
    ]


def _numbers(words: Sequence[str]) -> list[str]:
    return [n.replace(",", "") for w in words for n in _DIGITS.findall(w)]


def _opposite(a: str, b: str) -> bool:
    return frozenset((a, b)) in OPPOSITES or frozenset((stem(a), stem(b))) in ANTONYMS


def edit_changes(text: Tree, quotes: Sequence[Tree]) -> list[Change]:
    """What the text changes where it edits one quote (or two in a row) in place."""
    t = _words(text)
    if len(t) < 4:
        return []
    candidates: list[tuple[list[str], bool]] = [(_words(q), False) for q in quotes]
    if 2 <= len(quotes) <= 3:
        whole = [_words(q) for q in quotes]
        candidates += [(a + b, True) for a in whole for b in whole if a is not b]
    best: tuple[float, list[str], bool] | None = None
    for words, joined in candidates:
        if not words:
            continue
        m = SequenceMatcher(None, words, t, autojunk=False)
        if m.real_quick_ratio() < SAME_SHARE or m.quick_ratio() < SAME_SHARE:
            continue
        ratio = m.ratio()
        if ratio >= SAME_SHARE and (best is None or ratio > best[0]):
            best = (ratio, words, joined)
    if best is None:
        return []
    _, q, joined = best
    ops = [o for o in SequenceMatcher(None, q, t, autojunk=False).get_opcodes() if o[0] != "equal"]
    dropped = [w for tag, i1, i2, _, _ in ops for w in q[i1:i2]]
    added = [w for tag, _, _, j1, j2 in ops for w in t[j1:j2]]
    moved = {w for w in set(dropped) & set(added) if w not in _LIGHT and not _DIGITS.search(w)}
    # a hedge the text words otherwise ("Some functions …" for "… can sometimes be …")
    rehedged = set(HEDGES | PARTIAL) if set(added) & (HEDGES | PARTIAL) else set()
    changes: list[Change] = _reordered_numbers(q, t)
    for tag, i1, i2, j1, j2 in ops:
        gone, new = q[i1:i2], t[j1:j2]
        after = q[i2] if i2 < len(q) else ""
        if tag == "replace":
            changes += _replaced(gone, new, q, t, moved)
            number = i1 - 2 if i1 >= 2 and q[i1 - 1] == "°" else i1 - 1
            if number >= 0 and _DIGITS.fullmatch(q[number]):
                changes += _unit_replaced(gone, new)
        if tag in ("replace", "delete"):
            changes += _dropped(gone, new, t, moved | rehedged, after, tag == "delete")
        if tag == "delete" and gone[-2:] == ["one", "of"] and after == "the":
            changes.append(
                Change("comparative", True, ("the",), "'the …' — the quote says 'one of the …'")
            )
        if tag in ("replace", "insert"):
            changes += _added(gone, new, set(q), moved, joined, tag == "insert")
    return changes


def _reordered_numbers(q: list[str], t: list[str]) -> list[Change]:
    """The quote's own words with its numbers in another order ("age 50 to 45" for "age 45 to
    50", "$1.7 billion in income … $9 billion in revenue" for the reverse): clear."""
    was, now = _numbers(q), _numbers(t)
    if len(was) < 2 or was == now or sorted(was) != sorted(now):
        return []
    if [_DIGITS.sub("#", w) for w in q] != [_DIGITS.sub("#", w) for w in t]:
        return []
    moved = [n for n, m in zip(now, was, strict=True) if n != m]
    return [
        Change(
            "number",
            True,
            tuple(dict.fromkeys(moved)),
            f"{_quoted(moved)} traded places: the quote gives its numbers in the order "
            f"{_quoted(was)}",
        )
    ]


def _quoted(words: Sequence[str]) -> str:
    return ", ".join(f"'{w}'" for w in dict.fromkeys(words))


def _replaced(
    gone: list[str], new: list[str], q: list[str], t: list[str], moved: set[str]
) -> list[Change]:
    out: list[Change] = []
    if len(gone) <= 2 and len(new) <= 2:
        for a in gone:
            for b in new:
                if a != b and _opposite(a, b):
                    out.append(
                        Change("opposite", not moved, (b,), f"'{b}' — the quote says '{a}' there")
                    )
                elif a in PARTIAL and b in UNIVERSAL:
                    out.append(
                        Change("quantifier", not moved, (b,), f"'{b}' — the quote says '{a}' there")
                    )
    was, now = _numbers(gone), _numbers(new)
    if was and now and was != now:
        in_quote, in_text = _numbers(q), _numbers(t)
        if all(n in in_quote for n in now) and all(n in in_text for n in was):
            shown = " ".join(new)
            out.append(
                Change(
                    "number",
                    not moved,
                    tuple(new),
                    f"'{shown}' stands where the quote has '{' '.join(gone)}': the numbers "
                    "traded places",
                )
            )
    return out


def _unit(word: str) -> str | None:
    """The unit (or scale) a word after a number names, by its singular: "inches" → "inch"."""
    for form in (word, word.removesuffix("s"), word.removesuffix("es"), _UNIT_ALIASES.get(word)):
        if form and (form in UNITS or form in _SCALES):
            return form
    return None


_UNIT_ALIASES = {"in": "inch", "°": "°", "metres": "metre", "meters": "meter"}


def _unit_replaced(gone: list[str], new: list[str]) -> list[Change]:
    """A number's unit or scale replaced, the number kept ("55 km/h" for "55 mph", "13.2 °F"
    for "13.2 °C", "2 billion" for "2 million")."""
    if len(gone) != 1 or len(new) != 1:
        return []
    was, now = _unit(gone[0]), _unit(new[0])
    if was is None or now is None or was == now:
        return []
    return [Change("unit", True, (new[0],), f"'{new[0]}' — the quote gives '{gone[0]}'")]


def _dropped(
    gone: list[str], new: list[str], t: list[str], moved: set[str], after: str, plain: bool
) -> list[Change]:
    """The quote's negation or hedge the text leaves out (``plain``: words only deleted)."""
    out: list[Change] = []
    for k, w in enumerate(gone):
        if w in new or w in moved or w in t:
            continue
        if plain and k + 1 < len(gone):
            continue  # left out with what it bears on ("without external coercion"): omitted
        if w in NEGATORS:
            if not NEGATORS & set(new):  # "did not have one" / "had no single": reworded
                out.append(Change("negation", plain, (w,), f"the quote's '{w}' is left out"))
        elif w in HEDGE_AUX:
            if set(new) <= PLAIN:  # "may be" → "is"; "may" reworded is not dropped
                out.append(Change("hedge", False, (w,), f"the quote's hedge '{w}' is left out"))
        elif w in HEDGES and plain:
            following = gone[k + 1] if k + 1 < len(gone) else after
            if w in _BEFORE_NUMBER and not _DIGITS.match(following):
                continue  # "about" / "around" as a preposition
            out.append(Change("hedge", False, (w,), f"the quote's hedge '{w}' is left out"))
    return out


def _added(
    gone: list[str], new: list[str], said: set[str], moved: set[str], joined: bool, plain: bool
) -> list[Change]:
    """The text's negation, or causal word between two quotes, that the quote lacks."""
    out: list[Change] = []
    for w in new:
        if w in gone or w in moved or w in said:
            continue
        if w in NEGATORS:
            if not NEGATORS & set(gone):
                out.append(Change("negation", plain, (w,), f"'{w}' — the quote says it without"))
        elif joined and w in CAUSAL and not said & CAUSAL:
            out.append(
                Change("link", True, (w,), f"'{w}' — the quotes state no cause between these facts")
            )
    return out
