"""An attacker's paraphrases against the support check (W11), generated along issue 22's kinds.

Every item is a (claim, quote) pair where the quote is a real sentence and the claim changes what
meaning hangs on — numbers swapped between their slots, a number changed, two names of a relation
exchanged, a quantifier made universal, a hedge dropped, a comparative or temporal word flipped, a
negation added (plain, or after a dash) or removed, a causal link added between two facts, two
sentences' facts merged, a quantity's unit or scale changed ("55 mph" → "55 km/h"), "one of the
largest" narrowed to "the largest". None may be *supported*. Controls restate the quote
faithfully (number formatting, an unchanged sentence, two members of a plain list in another
order) and should not be *unsupported*.

The sentences are SQuADShifts paragraphs (`../shared/data/qa/squadshifts_new_wiki_v1.0.json`):
evaluation data only — nothing here is, or may be, trained on (it carries a BIG-bench canary), so
the model layer's training corpora and these attacks never share a sentence. The perturbations are
plain regular expressions, independent of the check's own reading, deterministic (``--seed``).

    .venv/bin/python bench/attacks_support.py [--sentences 3000] [--model NAME] [--json]
        [--examples N] [--seed 7]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path

from affidavit.config import Config
from affidavit.support import SupportChecker, load_model

SHARED = Path(
    os.environ.get("AFFIDAVIT_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)
SQUAD = SHARED / "qa" / "squadshifts_new_wiki_v1.0.json"

_NUMBER = re.compile(r"(?<![\w.,])\d{1,3}(?:,\d{3})+(?![\w,])|(?<![\w.,])\d+(?:\.\d+)?(?![\w.,])")
_NAME = re.compile(r"(?<=[a-z,;] )[A-Z][a-z]+(?: [A-Z][a-z]+)*")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")

QUANTIFIERS = {
    r"\bsome\b": "all",
    r"\bmany\b": "all",
    r"\bseveral\b": "all",
    r"\ba few\b": "all",
    r"\bmost\b": "all",
    r"\bfew\b": "many",
    r"\boften\b": "always",
    r"\busually\b": "always",
    r"\bsometimes\b": "always",
    r"\bmainly\b": "only",
    r"\bmostly\b": "entirely",
}
HEDGES = [
    r"\bperhaps\s+",
    r"\bprobably\s+",
    r"\bpossibly\s+",
    r"\blikely\s+",
    r"\babout\s+(?=\d)",
    r"\bapproximately\s+",
    r"\baround\s+(?=\d)",
    r"\bnearly\s+",
    r"\balmost\s+",
    r"\breportedly\s+",
    r"\bestimated\s+",
    r"\ballegedly\s+",
    r"\bapparently\s+",
    r"\bbelieved to\s+",
    r"\bthought to\s+",
]
HEDGE_VERBS = {
    r"\bmay be\b": "is",
    r"\bmight be\b": "is",
    r"\bcould be\b": "is",
    r"\bmay have\b": "has",
    r"\bmight have\b": "has",
    r"\bseems to be\b": "is",
    r"\bappears to be\b": "is",
}
FLIPS = {
    "more": "less",
    "less": "more",
    "larger": "smaller",
    "smaller": "larger",
    "higher": "lower",
    "lower": "higher",
    "greater": "lesser",
    "before": "after",
    "after": "before",
    "increased": "decreased",
    "decreased": "increased",
    "first": "last",
    "last": "first",
    "largest": "smallest",
    "smallest": "largest",
    "earlier": "later",
    "later": "earlier",
    "older": "younger",
    "younger": "older",
    "longest": "shortest",
    "highest": "lowest",
    "lowest": "highest",
    "above": "below",
    "below": "above",
    "increase": "decrease",
    "decrease": "increase",
    "most": "least",
    "least": "most",
    "north": "south",
    "south": "north",
    "east": "west",
    "west": "east",
    "won": "lost",
    "lost": "won",
    "rose": "fell",
    "fell": "rose",
    "gained": "lost",
    "major": "minor",
}
_FLIP = re.compile(r"\b(" + "|".join(FLIPS) + r")\b")
_COPULA = re.compile(r"\b(is|was|are|were|has been|have been|had been|can|will|would)\b")
_NOT = re.compile(r"\b(not|never|no longer)\s+")
_NT = re.compile(r"\b(\w+)n't\b")


def sentences(limit: int, seed: int) -> list[str]:
    data = json.loads(SQUAD.read_text(encoding="utf-8"))
    found: list[str] = []
    for article in data["data"]:
        for paragraph in article["paragraphs"]:
            for s in _SENTENCE.split(paragraph["context"].strip()):
                s = s.strip()
                if 40 <= len(s) <= 280 and "\n" not in s and not s.endswith(":"):
                    found.append(s)
    random.Random(seed).shuffle(found)
    return found[:limit]


def _swap_numbers(s: str, _: random.Random) -> str | None:
    nums = list(_NUMBER.finditer(s))
    values = [m.group() for m in nums]
    if len(nums) < 2 or values[0] == values[1]:
        return None
    a, b = nums[0], nums[1]
    return s[: a.start()] + b.group() + s[a.end() : b.start()] + a.group() + s[b.end() :]


def _change_number(s: str, rng: random.Random) -> str | None:
    nums = list(_NUMBER.finditer(s))
    if not nums:
        return None
    m = rng.choice(nums)
    raw = m.group().replace(",", "")
    try:
        value = float(raw)
    except ValueError:
        return None
    if "." in raw:
        new = f"{value * 2:.{len(raw.split('.')[1])}f}"
    elif 1000 < value < 2100 and len(raw) == 4:
        new = str(int(value) + rng.choice([-3, -1, 1, 2]))  # a year
    else:
        new = str(int(value) * 10 if value < 100 else int(value) // 10 + 1)
    return s[: m.start()] + new + s[m.end() :]


def _swap_names(s: str, _: random.Random) -> str | None:
    names = [m for m in _NAME.finditer(s) if m.group() not in {"The", "In", "A"}]
    distinct = []
    for m in names:
        if all(m.group() != d.group() for d in distinct):
            distinct.append(m)
    if len(distinct) < 2:
        return None
    a, b = distinct[0], distinct[1]
    return s[: a.start()] + b.group() + s[a.end() : b.start()] + a.group() + s[b.end() :]


_LIST_GAP = re.compile(r"(?:,|,? and|,? or) ")
_COUNTED_OFF = re.compile(r"\b(?:respectively|former|latter|(?:first|second) one)\b")


def list_order(s: str) -> bool:
    """The two names :func:`_swap_names` exchanges are two whole members of a plain list
    ("such as Oxford, Dublin and Cambridge"), whose order says nothing: a faithful restatement
    (a control), not an attack. Not when a name is cut in two ("David Osborne and …"), the list
    is inside a name ("Department of Housing and Urban Development"), spans from one end to the
    other ("between June and August"), or a later word counts its members off ("the first
    one", "respectively")."""
    names = [m for m in _NAME.finditer(s) if m.group() not in {"The", "In", "A"}]
    distinct: list[re.Match[str]] = []
    for m in names:
        if all(m.group() != d.group() for d in distinct):
            distinct.append(m)
    if len(distinct) < 2:
        return False
    a, b = distinct[0], distinct[1]
    before = s[: a.start()].split()
    after = s[b.end() :]
    return bool(
        _LIST_GAP.fullmatch(s[a.end() : b.start()])
        and not (before and before[-1][:1].isupper())
        and not (before and before[-1].lower() in ("between", "from", "of", "after", "before"))
        and not re.match(r"(?: [A-Z]| of |-)", after)
        and not _COUNTED_OFF.search(s)
    )


UNITS = {
    r"\bkm/h\b": "mph", r"\bmph\b": "km/h", r"\bkilometres\b": "miles",
    r"\bkilometers\b": "miles", r"\bkm\b": "mi", r"\bmiles\b": "kilometres",
    r"\bmetres\b": "feet", r"\bmeters\b": "feet", r"\bfeet\b": "metres", r"\bft\b": "m",
    r"\bkg\b": "lb", r"\bkilograms\b": "pounds", r"\bpounds\b": "kilograms",
    r"\btonnes\b": "tons", r"\bacres\b": "hectares", r"\bhectares\b": "acres",
    r"°C\b": "°F", r"°F\b": "°C", r"\bpercent\b": "percentage points",
    r"\bcm\b": "in", r"\bmm\b": "cm", r"\bsquare miles\b": "square kilometres",
    r"\bminutes\b": "hours", r"\bhours\b": "days", r"\bdays\b": "weeks",
    r"\bweeks\b": "months", r"\bmonths\b": "years", r"\bmillion\b": "billion",
    r"\bbillion\b": "million", r"\bthousand\b": "million",
}  # fmt: skip
_QUANTITY = r"(?<=\d )"


def _change_unit(s: str, _: random.Random) -> str | None:
    """A quantity's unit (or scale) changed, its number kept: "55 mph" → "55 km/h"."""
    for pattern, new in UNITS.items():
        found = re.search(_QUANTITY + pattern, s)
        if found:
            return s[: found.start()] + new + s[found.end() :]
    return None


_ONE_OF = re.compile(r"\bone of the ((?:\w+est|most \w+|first|largest|best|worst)\b)")


def _narrow_superlative(s: str, _: random.Random) -> str | None:
    """ "one of the largest" → "the largest": one among the first made the first."""
    return _ONE_OF.sub(r"the \1", s, count=1) if _ONE_OF.search(s) else None


def _quantifier(s: str, _: random.Random) -> str | None:
    for pattern, new in QUANTIFIERS.items():
        if re.search(pattern, s):
            return re.sub(pattern, new, s, count=1)
    return None


def _drop_hedge(s: str, _: random.Random) -> str | None:
    for pattern, new in HEDGE_VERBS.items():
        if re.search(pattern, s):
            return re.sub(pattern, new, s, count=1)
    for pattern in HEDGES:
        if re.search(pattern, s, re.I):
            out = re.sub(pattern, "", s, count=1, flags=re.I)
            return out[0].upper() + out[1:] if out else None
    return None


def _flip(s: str, rng: random.Random) -> str | None:
    hits = list(_FLIP.finditer(s))
    if not hits:
        return None
    m = rng.choice(hits)
    return s[: m.start()] + FLIPS[m.group()] + s[m.end() :]


def _negate(s: str, _: random.Random) -> str | None:
    if _NOT.search(s) or _NT.search(s):
        return None
    m = _COPULA.search(s)
    if not m:
        return None
    return s[: m.end()] + " not" + s[m.end() :]


def _negate_after_dash(s: str, _: random.Random) -> str | None:
    m = _COPULA.search(s)
    if not m or _NOT.search(s):
        return None
    head, tail = s[: m.end()], s[m.end() :].strip().rstrip(".")
    return f"{head} - not {tail}."


def _unnegate(s: str, _: random.Random) -> str | None:
    m = _NOT.search(s)
    if m:
        return s[: m.start()] + s[m.end() :]
    m = _NT.search(s)
    if m:
        return s[: m.start()] + m.group(1) + s[m.end() :]
    return None


KINDS: dict[str, Callable[[str, random.Random], str | None]] = {
    "number_swap": _swap_numbers,
    "number_changed": _change_number,
    "names_swapped": _swap_names,
    "quantifier": _quantifier,
    "hedge_dropped": _drop_hedge,
    "comparative_flip": _flip,
    "negation_added": _negate,
    "negation_after_dash": _negate_after_dash,
    "negation_removed": _unnegate,
    "unit_changed": _change_unit,
    "superlative_narrowed": _narrow_superlative,
}


def _strip(s: str) -> str:
    return s.rstrip(" .")


def pairs(found: list[str], seed: int) -> Iterator[tuple[str, str, list[str]]]:
    """(kind, claim, quotes): attacks and controls."""
    rng = random.Random(seed)
    for n, s in enumerate(found):
        for kind, make in KINDS.items():
            claim = make(s, rng)
            if claim and claim != s:
                if kind == "names_swapped" and list_order(s):
                    kind = "control/list_order"  # a plain list's order: a restatement
                yield kind, claim, [_strip(s)]
        other = found[(n + 1) % len(found)]
        # a causal link between two true facts neither quote states
        yield (
            "causal_added",
            f"{_strip(s)} because {other[0].lower()}{other[1:]}",
            [_strip(s), _strip(other)],
        )
        nums = list(_NUMBER.finditer(s))
        if nums and "," in nums[0].group():
            m = nums[0]
            yield (
                "control/number_format",
                s[: m.start()] + m.group().replace(",", "") + s[m.end() :],
                [_strip(s)],
            )
        yield "control/same", s, [_strip(s)]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--sentences", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--model", default="none")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--examples", type=int, default=0)
    args = parser.parse_args()
    if not SQUAD.exists():
        parser.error(f"{SQUAD} is missing: set AFFIDAVIT_SHARED_DATA to the shared data folder")
    checker = SupportChecker(load_model(Config({"support.model": args.model})))
    tally: dict[str, Counter[str]] = defaultdict(Counter)
    bad: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    started = time.perf_counter()
    n = 0
    for kind, claim, quotes in pairs(sentences(args.sentences, args.seed), args.seed):
        verdict = checker.check(claim, quotes)
        tally[kind][verdict.verdict] += 1
        n += 1
        failure = (
            verdict.supported
            if not kind.startswith("control")
            else (verdict.verdict == "unsupported")
        )
        if failure:
            bad[kind].append((claim, quotes[0], verdict.reason))
    seconds = time.perf_counter() - started
    attacks = Counter[str]()
    for kind, c in tally.items():
        if not kind.startswith("control"):
            attacks.update(c)
    result = {
        "items": n,
        "seconds": round(seconds, 1),
        "ms_per_item": round(1000 * seconds / max(n, 1), 2),
        "model": args.model,
        "attacks_supported": round(attacks["supported"] / max(sum(attacks.values()), 1), 4),
        "by_kind": {k: dict(v) for k, v in sorted(tally.items())},
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(
            f"{n} items in {result['seconds']} s ({result['ms_per_item']} ms each), model "
            f"{args.model}; attacks supported: {result['attacks_supported']:.2%}"
        )
        for kind, c in sorted(tally.items()):
            total = sum(c.values())
            print(
                f"  {kind:28s} n={total:5d}  supported {c['supported'] / total:6.1%}  "
                f"uncertain {c['uncertain'] / total:6.1%}  unsupported "
                f"{c['unsupported'] / total:6.1%}"
            )
    for kind, items in sorted(bad.items()):
        for claim, quote, reason in items[: args.examples]:
            print(f"\n[{kind}] claim: {claim}\n   quote: {quote}\n   {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
