"""Contrastive (premise, hypothesis, label) pairs for the support cross-encoder (issue 22 item 3).

Generated from public text the support benches never measure on:

- ``../shared/data/corpus/sotu.jsonl`` — State of the Union addresses (public domain);
- the SQLite 3.40.1 manual (``/usr/share/doc/sqlite3``, Debian ``sqlite3-doc``; public domain), the
  real-docs set's pages, when installed;
- VitaminC's *training* pages (``../shared/data/contradictions/``, CC BY-SA 3.0): the pages whose
  SHA-256(title) first byte is >= 102 — the benches' held-out pages (< 102) are never used.

Every source sentence gives faithful restatements (label 1: a verbatim span, a clause dropped,
a synonym, a number in words, active to passive, two sentences merged faithfully, a hedge kept)
and wrong ones (label 0) along the support check's error kinds: a number or date changed, two
numbers swapped, a unit changed, two names swapped (roles), a name substituted, a quantifier
changed, a hedge dropped, a comparative flipped, a negation added or removed, facts of two
sentences merged wrongly, a cause added, an unrelated fact added. The writer set
(``writer/llm_claims_public.jsonl``) and SQuADShifts are never read here: they are what is measured.

Pure stdlib; deterministic for a seed.
"""

from __future__ import annotations

import hashlib
import html
import json
import random
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent.parent / "shared" / "data"
if not SHARED.exists():
    SHARED = ROOT.parent / "shared" / "data"
SOTU = SHARED / "corpus" / "sotu.jsonl"
VITAMINC = SHARED / "contradictions" / "vitaminc_pairs_public.jsonl"
SQLITE_DOCS = Path("/usr/share/doc/sqlite3")

SYNONYMS = {
    "began": "started",
    "begin": "start",
    "started": "began",
    "finished": "completed",
    "completed": "finished",
    "large": "big",
    "big": "large",
    "small": "little",
    "buy": "purchase",
    "bought": "purchased",
    "show": "demonstrate",
    "shows": "demonstrates",
    "help": "assist",
    "helped": "assisted",
    "need": "require",
    "needs": "requires",
    "requires": "needs",
    "use": "employ",
    "used": "employed",
    "uses": "employs",
    "important": "significant",
    "enough": "sufficient",
    "quickly": "rapidly",
    "rapid": "fast",
    "country": "nation",
    "nation": "country",
    "increase": "rise",
    "build": "construct",
    "built": "constructed",
    "created": "established",
    "established": "founded",
    "founded": "established",
    "named": "appointed",
    "appointed": "named",
    "chosen": "selected",
    "choose": "select",
    "ended": "concluded",
    "end": "conclusion",
    "got": "obtained",
    "obtain": "get",
    "provide": "supply",
    "provides": "supplies",
    "provided": "supplied",
    "allow": "permit",
    "allows": "permits",
    "allowed": "permitted",
    "stop": "halt",
    "stopped": "halted",
    "fix": "repair",
    "fixed": "repaired",
    "answer": "reply",
    "said": "stated",
    "says": "states",
    "told": "informed",
    "area": "region",
    "region": "area",
    "city": "town",
    "job": "work",
    "money": "funds",
    "funds": "money",
    "people": "persons",
    "child": "kid",
    "children": "kids",
    "help.": "assistance.",
    "attempt": "try",
    "tried": "attempted",
    "try": "attempt",
    "ask": "request",
    "asked": "requested",
    "large-scale": "extensive",
    "whole": "entire",
    "entire": "whole",
    "main": "principal",
    "chief": "principal",
    "principal": "main",
    "speak": "talk",
    "spoke": "talked",
    "hard": "difficult",
    "difficult": "hard",
    "returns": "gives back",
    "returned": "gave back",
    "contains": "holds",
    "contain": "hold",
    "delete": "remove",
    "deleted": "removed",
    "removes": "deletes",
    "change": "modify",
    "changes": "modifies",
    "changed": "modified",
    "modified": "changed",
    "error": "failure",
    "faster": "quicker",
    "store": "keep",
    "stored": "kept",
    "stores": "keeps",
}
NUMBER_WORDS = {
    "1": "one",
    "2": "two",
    "3": "three",
    "4": "four",
    "5": "five",
    "6": "six",
    "7": "seven",
    "8": "eight",
    "9": "nine",
    "10": "ten",
    "11": "eleven",
    "12": "twelve",
    "20": "twenty",
    "100": "a hundred",
    "1000": "a thousand",
}
WORD_NUMBERS = {v: k for k, v in NUMBER_WORDS.items() if " " not in v}
FLIPS = [
    ("more", "less"),
    ("higher", "lower"),
    ("larger", "smaller"),
    ("greater", "smaller"),
    ("increase", "decrease"),
    ("increased", "decreased"),
    ("before", "after"),
    ("above", "below"),
    ("largest", "smallest"),
    ("greatest", "least"),
    ("first", "last"),
    ("rose", "fell"),
    ("most", "least"),
    ("better", "worse"),
    ("earlier", "later"),
    ("faster", "slower"),
    ("longer", "shorter"),
    ("maximum", "minimum"),
    ("older", "younger"),
    ("best", "worst"),
]
QUANTIFIERS = [
    ("all", "some"),
    ("every", "no"),
    ("many", "few"),
    ("most", "some"),
    ("some", "all"),
    ("several", "all"),
    ("always", "sometimes"),
    ("never", "sometimes"),
    ("none", "some"),
    ("few", "many"),
    ("each", "only one"),
    ("any", "no"),
    ("often", "always"),
]
HEDGES = [
    "about ",
    "approximately ",
    "nearly ",
    "almost ",
    "perhaps ",
    "probably ",
    "possibly ",
    "roughly ",
    "some ",
    "likely ",
    "generally ",
    "usually ",
    "often ",
    "estimated ",
]
HEDGE_VERBS = [
    ("may be", "is"),
    ("might be", "is"),
    ("may have", "has"),
    ("could be", "is"),
    ("appears to be", "is"),
    ("seems to be", "is"),
    ("may", "will"),
    ("might", "will"),
]
UNITS = [
    ("miles", "kilometers"),
    ("million", "billion"),
    ("billion", "million"),
    ("percent", "points"),
    ("thousand", "million"),
    ("dollars", "pounds"),
    ("acres", "square miles"),
    ("tons", "pounds"),
    ("feet", "meters"),
    ("days", "weeks"),
    ("months", "years"),
    ("hours", "minutes"),
    ("bytes", "kilobytes"),
    ("pages", "bytes"),
    ("seconds", "milliseconds"),
    ("%", " times"),
]
AUX = re.compile(r"\b(is|are|was|were|will|can|has|have|had|should|would|must|does|did)\b (?!not)")
NEGATED = re.compile(r"\b(is|are|was|were|will|can|has|have|had|should|would|must|does|did) not ")
NAME = re.compile(r"\b(?:[A-Z][a-z]+(?: (?:of |the )?[A-Z][a-z]+)*)\b")
NUMBER = re.compile(r"(?<![\w.,])\d[\d,]*(?:\.\d+)?(?![\w])")
YEAR = re.compile(r"\b(1[6-9]\d\d|20[0-2]\d)\b")
PASSIVE_OK = re.compile(
    r"^(?P<agent>(?:The |the )?[A-Z][\w-]*(?: [A-Z][\w-]*)*) (?P<verb>[a-z]+ed) "
    r"(?P<object>(?:the|a|an|its|their|his|her) [^,;:]+?)(?P<tail>[,;.].*)?$"
)
CAUSES = ["because", "which caused", "and therefore", "as a result of which", "so that"]
EXTRAS = [
    ", the largest in the world",
    " for the first time",
    " in 1850",
    ", unanimously",
    " without any opposition",
    ", twice",
    " after a long war",
    ", the first of its kind",
]


def held_out_page(page: str) -> bool:
    """The benches' held-out VitaminC pages (bench/bench_support.py): never trained on."""
    return hashlib.sha256(page.encode()).digest()[0] < 102


def sentences(text: str) -> list[str]:
    parts = re.split(r"(?<=[.!?])\s+(?=[A-Z\"'(])", re.sub(r"\s+", " ", text))
    return [p.strip() for p in parts if 6 <= len(p.split()) <= 45 and p.strip()[-1:] in ".!?"]


def sotu_docs() -> Iterator[list[str]]:
    for line in SOTU.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        yield sentences(row["text"])


def sqlite_docs() -> Iterator[list[str]]:
    if not SQLITE_DOCS.is_dir():
        return
    for path in sorted(SQLITE_DOCS.glob("*.html")):
        raw = path.read_text(encoding="utf-8", errors="replace")
        raw = re.sub(r"(?is)<(script|style|pre|code)[^>]*>.*?</\1>", " ", raw)
        text = html.unescape(re.sub(r"<[^>]+>", " ", raw))
        found = [s for s in sentences(text) if not re.search(r"[{}=<>]|\(\)", s)]
        if found:
            yield found


def _sub_once(pattern: str, repl: str, text: str) -> str | None:
    out, n = re.subn(pattern, repl, text, count=1)
    return out if n and out != text else None


def _word_swap(
    text: str, pairs: list[tuple[str, str]], rng: random.Random, both: bool
) -> str | None:
    options = [(a, b) for a, b in pairs if re.search(rf"\b{re.escape(a)}\b", text)]
    if both:
        options += [(b, a) for a, b in pairs if re.search(rf"\b{re.escape(b)}\b", text)]
    if not options:
        return None
    a, b = rng.choice(options)
    return _sub_once(rf"\b{re.escape(a)}\b", b, text)


def _strip_end(text: str) -> str:
    return text.rstrip(" .!?;:,")


def faithful(s: str, nxt: str | None, rng: random.Random) -> list[tuple[str, str, str]]:
    """(kind, premise, hypothesis) restatements that keep every fact of ``s``."""
    out: list[tuple[str, str, str]] = []
    words = s.split()
    # a clause or a leading phrase dropped (compression)
    m = re.match(r"^([^,]{3,60}), (.{25,})$", s)
    if m and not re.search(r"\b(not|no|never|if|unless|although|but)\b", m.group(1), re.I):
        rest = m.group(2)
        out.append(("compression", s, rest[0].upper() + rest[1:]))
    m = re.match(r"^(.{25,}?)(?:, (?:and|but|which|who|while|as|so) .*|; .*)$", s)
    if m:
        out.append(("compression", s, _strip_end(m.group(1)) + "."))
    # synonyms
    swapped, n = s, 0
    for i, w in enumerate(words):
        key = w.lower()
        if key in SYNONYMS and n < 2 and rng.random() < 0.7:
            rep = SYNONYMS[key]
            rep = rep[0].upper() + rep[1:] if w[0].isupper() else rep
            words2 = swapped.split()
            if i < len(words2) and words2[i] == w:
                words2[i] = rep
                swapped, n = " ".join(words2), n + 1
    if n:
        out.append(("synonym", s, swapped))
    # numbers in words and back
    nums = [w for w in NUMBER_WORDS if re.search(rf"(?<![\d,.$]){w}(?![\d,.%])", s)]
    if nums:
        w = rng.choice(nums)
        out.append(
            ("number_words", s, re.sub(rf"(?<![\d,.$]){w}(?![\d,.%])", NUMBER_WORDS[w], s, count=1))
        )
    words_found = [w for w in WORD_NUMBERS if re.search(rf"\b{w}\b", s)]
    if words_found:
        w = rng.choice(words_found)
        out.append(("number_words", s, re.sub(rf"\b{w}\b", WORD_NUMBERS[w], s, count=1)))
    big = re.search(r"\b(\d{1,3}),000,000\b", s) or re.search(r"\b(\d{1,3}),000\b", s)
    if big:
        scale = "million" if big.group(0).count(",") == 2 else "thousand"
        out.append(("number_words", s, s.replace(big.group(0), f"{big.group(1)} {scale}", 1)))
    # active to passive
    m = PASSIVE_OK.match(_strip_end(s) + ".")
    if m and len(m.group("object").split()) <= 8:
        obj = m.group("object")
        tail = (m.group("tail") or ".").rstrip(".")
        verb = "was" if not obj.endswith("s") else "were"
        out.append(
            (
                "voice_change",
                s,
                f"{obj[0].upper()}{obj[1:]} {verb} {m.group('verb')} by {m.group('agent')}{tail}.",
            )
        )
    # a verbatim span, the hedge (if any) kept
    if len(words) > 12:
        start = rng.randrange(0, len(words) // 3)
        out.append(("span", s, " ".join(words[start : start + rng.randint(8, len(words) - start)])))
    else:
        out.append(("copy", s, s))
    # two sentences merged faithfully
    if nxt:
        a, b = _strip_end(s), _strip_end(nxt)
        out.append(("merge", f"{s} {nxt}", f"{a}; {b[0].lower()}{b[1:]}."))
    return out


def wrong(s: str, nxt: str | None, other: str, rng: random.Random) -> list[tuple[str, str, str]]:
    """(kind, premise, hypothesis) changes of one fact, role or scope of ``s``."""
    out: list[tuple[str, str, str]] = []
    nums = NUMBER.findall(s)
    if nums:
        n = rng.choice(nums)
        digits = n.replace(",", "")
        try:
            value = float(digits)
        except ValueError:
            value = 0.0
        if YEAR.fullmatch(n):
            new = str(int(n) + rng.choice([-10, -3, -1, 1, 2, 5]))
            kind = "date_changed"
        else:
            new = rng.choice(
                [
                    str(int(value * 10)),
                    str(int(value) + rng.randint(1, 9)),
                    str(max(0, int(value) - 1)),
                    str(int(value * 2)),
                ]
            )
            if "," in n and len(new) > 3:
                new = f"{int(new):,}"
            kind = "number_changed"
        if new != n:
            out.append((kind, s, re.sub(rf"(?<![\w.,]){re.escape(n)}(?!\w)", new, s, count=1)))
    if len(set(nums)) >= 2:
        a, b = rng.sample(sorted(set(nums)), 2)
        t = re.sub(
            rf"(?<![\w.,])({re.escape(a)}|{re.escape(b)})(?!\w)",
            lambda m: b if m.group(0) == a else a,
            s,
        )
        if t != s:
            out.append(("number_swap", s, t))
    unit = _word_swap(s, UNITS, rng, both=False)
    if unit and nums:
        out.append(("unit_changed", s, unit))
    names = list(
        dict.fromkeys(n for n in NAME.findall(s) if s.find(n) > 0 and n.lower() not in {"i", "the"})
    )
    if len(names) >= 2:
        a, b = rng.sample(names, 2)
        t = re.sub(
            rf"\b({re.escape(a)}|{re.escape(b)})\b", lambda m: b if m.group(0) == a else a, s
        )
        if t != s:
            out.append(("role_swap", s, t))
    others = [n for n in NAME.findall(other) if n not in s and len(n) > 3]
    if names and others:
        out.append(("entity_substitution", s, s.replace(rng.choice(names), rng.choice(others), 1)))
    q = _word_swap(s, QUANTIFIERS, rng, both=True)
    if q:
        out.append(("quantifier", s, q))
    elif re.search(r"\b(is|are|was|were)\b", s) and rng.random() < 0.3:
        t = _sub_once(r"\b(The|the) (\w+s) (are|were)\b", r"All \2 \3", s)
        if t:
            out.append(("quantifier", s, t))
    hedge = next((h for h in HEDGES if h in s), None)
    if hedge:
        out.append(("hedge_dropped", s, s.replace(hedge, "", 1)))
    for a, b in HEDGE_VERBS:
        if re.search(rf"\b{a}\b", s):
            out.append(("hedge_dropped", s, re.sub(rf"\b{a}\b", b, s, count=1)))
            break
    flip = _word_swap(s, FLIPS, rng, both=True)
    if flip:
        out.append(("comparative_flip", s, flip))
    if NEGATED.search(s):
        out.append(("negation", s, NEGATED.sub(r"\1 ", s, count=1)))
    elif re.search(r"\bnever\b", s):
        out.append(("negation", s, re.sub(r"\bnever\b", "always", s, count=1)))
    elif AUX.search(s):
        out.append(("negation", s, AUX.sub(r"\1 not ", s, count=1)))
    elif re.search(r"\b\w+ed\b", s) and rng.random() < 0.5:
        out.append(("negation", s, re.sub(r"\b(\w+ed)\b", r"did not \1", s, count=1)))
    if nxt:
        a, b = s.split(), nxt.split()
        if len(a) > 6 and len(b) > 6:
            merged = " ".join(a[: len(a) // 2] + b[len(b) // 2 :])
            out.append(("merged_wrongly", f"{s} {nxt}", merged))
        cause = rng.choice(CAUSES)
        out.append(
            (
                "causal_added",
                f"{s} {nxt}",
                f"{_strip_end(s)} {cause} {_strip_end(nxt)[0].lower()}{_strip_end(nxt)[1:]}.",
            )
        )
    out.append(("extra_fact", s, _strip_end(s) + rng.choice(EXTRAS) + "."))
    out.append(("unrelated", s, other))
    return out


def corpus_pairs(seed: int, per_doc: int) -> list[dict[str, object]]:
    """Pairs from the public corpora: up to ``per_doc`` source sentences per document."""
    rng = random.Random(seed)
    out: list[dict[str, object]] = []
    for source, docs in (("sotu", sotu_docs()), ("sqlite-doc", sqlite_docs())):
        for doc in docs:
            if len(doc) < 3:
                continue
            picks = rng.sample(range(len(doc)), min(per_doc, len(doc)))
            for i in picks:
                s = doc[i]
                nxt = doc[i + 1] if i + 1 < len(doc) and rng.random() < 0.5 else None
                other = doc[rng.randrange(len(doc))]
                if other == s:
                    continue
                pos = faithful(s, nxt, rng)
                neg = wrong(s, nxt, other, rng)
                rng.shuffle(pos)
                rng.shuffle(neg)
                for kind, p, h in pos[:3]:
                    out.append(
                        {"premise": p, "hypothesis": h, "label": 1, "kind": kind, "source": source}
                    )
                for kind, p, h in neg[:4]:
                    if h != p:
                        out.append(
                            {
                                "premise": p,
                                "hypothesis": h,
                                "label": 0,
                                "kind": kind,
                                "source": source,
                            }
                        )
    return out


def vitaminc_pairs() -> list[dict[str, object]]:
    """VitaminC's training pages (never the benches' held-out ones): True 1, False/Neither 0."""
    out: list[dict[str, object]] = []
    for line in VITAMINC.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if held_out_page(row["page"]):
            continue
        for revision in row["revisions"]:
            out.append(
                {
                    "premise": revision["evidence"],
                    "hypothesis": row["claim"],
                    "label": int(revision["label"] == "True"),
                    "kind": "vitaminc:" + revision["label"],
                    "source": "vitaminc",
                    "page": row["page"],
                }
            )
    return out
