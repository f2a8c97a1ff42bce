"""Free quotes vs citations by sentence: good claims the gate loses to a careful model's slips.

A scripted "careful LLM" states true claims about State of the Union speeches, each the text of
one sentence (or two adjacent ones) of the speech, and cites it twice: once by retyping the quote
the way real models slip, once by the host's sentence number. Slips, one per claim:

    clean        copied exactly (the control)
    quote marks  straight quotes/apostrophes turned curly, or curly ones straight
    comma        one comma dropped
    ellipsis     the middle of the sentence cut out with "..." or "…"
    merged       two adjacent sentences joined into one ("A; b")
    spelling     one word respelt British <-> American (honor/honour, defense/defence, ...)

Every claim is good: its words are the source's. The gate's evidence step
(:func:`affidavit.sources.sentences.check_evidence`, what ``gate/admission.py`` runs) decides;
a claim is lost when its evidence is refused, or when the schema refuses it (a merged quote over
300 characters). Output cost: the evidence JSON each form needs, in cl100k tokens.

    .venv/bin/python bench/bench_citations.py [--speeches 40] [--per-kind 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from affidavit.evidence import Verifier
from affidavit.plan.schema import Evidence
from affidavit.retrieval.tokens import count_tokens
from affidavit.sources.sentences import check_evidence, sentences_of
from affidavit.sources.store import SourceStore
from affidavit.vault import init_vault

DATA = Path(
    os.environ.get(
        "AFFIDAVIT_SHARED_DATA", Path(__file__).resolve().parent.parent.parent / "shared" / "data"
    )
)
SAMPLES = Path(__file__).resolve().parent.parent / "src" / "affidavit" / "samples" / "sotu"

SPELLINGS = [
    ("honor", "honour"),
    ("labor", "labour"),
    ("favor", "favour"),
    ("neighbor", "neighbour"),
    ("harbor", "harbour"),
    ("endeavor", "endeavour"),
    ("behavior", "behaviour"),
    ("color", "colour"),
    ("defense", "defence"),
    ("offense", "offence"),
    ("center", "centre"),
    ("program", "programme"),
    ("organiz", "organis"),
    ("recogniz", "recognis"),
    ("realiz", "realis"),
    ("authoriz", "authoris"),
    ("civiliz", "civilis"),
    ("moderniz", "modernis"),
    ("jewelry", "jewellery"),
    ("traveled", "travelled"),
]
_CURLY = str.maketrans({"'": "’", '"': "”", "’": "'", "‘": "'", "“": '"', "”": '"'})
KINDS = ("clean", "quote marks", "comma", "ellipsis", "merged", "spelling")


def respell(text: str) -> str | None:
    for us, uk in SPELLINGS:
        for a, b in ((us, uk), (uk, us)):
            match = re.search(rf"\b{a}", text, re.I)
            if match:
                found = match.group()
                swapped = b if found.islower() else b[:1].upper() + b[1:]
                return text[: match.start()] + swapped + text[match.end() :]
    return None


def slip(kind: str, one: str, two: str, rng: random.Random) -> str | None:
    """The quote a careful model writes for ``one`` (``two``: the next sentence), or None when
    this kind of slip doesn't apply to it."""
    if kind == "clean":
        return one
    if kind == "quote marks":
        return one.translate(_CURLY) if any(c in one for c in "'\"’‘“”") else None
    if kind == "comma":
        commas = [m.start() for m in re.finditer(r", ", one)]
        if not commas:
            return None
        at = rng.choice(commas)
        return one[:at] + one[at + 1 :]
    if kind == "ellipsis":
        words = one.split()
        if len(words) < 16:
            return None
        return " ".join(words[:6]) + rng.choice([" ... ", " … "]) + " ".join(words[-6:])
    if kind == "merged":
        if not two or not one.endswith("."):
            return None
        return one[:-1] + "; " + two[:1].lower() + two[1:]
    if kind == "spelling":
        return respell(one)
    raise ValueError(kind)


def speeches(count: int) -> list[tuple[str, str]]:
    path = DATA / "corpus" / "sotu.jsonl"
    if not path.exists():
        return [(p.stem, p.read_text()) for p in sorted(SAMPLES.glob("*.md"))]
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    step = max(1, len(rows) // count)
    return [(f"{r['year']}-{r['name']}", r["text"]) for r in rows[::step][:count]]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--speeches", type=int, default=40)
    parser.add_argument("--per-kind", type=int, default=3, help="claims per slip kind per speech")
    parser.add_argument("--seed", type=int, default=10)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="bench-citations-"))
    vault, _ = init_vault(work / "vault")
    store = SourceStore(vault)
    verifier = Verifier(store)
    tried: Counter[str] = Counter()
    kept: dict[str, Counter[str]] = {"quote": Counter(), "sentence": Counter()}
    tokens: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    for name, body in speeches(args.speeches):
        sid = store.add_bytes(
            body.encode(), origin=f"/sotu/{name}", name=name, media_type="text/plain"
        ).record.id
        numbered = sentences_of(sid, store.text(sid))
        candidates = [
            s for s in numbered.sentences if 40 <= s.end - s.start <= 280 and s.n < len(numbered)
        ]
        rng.shuffle(candidates)
        for kind in KINDS:
            taken = 0
            for s in candidates:
                if taken == args.per_kind:
                    break
                one = numbered.sentence_text(s.n)
                two = numbered.sentence_text(s.n + 1)
                quote = slip(kind, one, two, rng)
                if quote is None:
                    continue
                taken += 1
                tried[kind] += 1
                cite: dict[str, Any] = (
                    {"source": sid, "sentences": [s.n, s.n + 1]}
                    if kind == "merged"
                    else {"source": sid, "sentence": s.n}
                )
                for form, raw in (("quote", {"source": sid, "quote": quote}), ("sentence", cite)):
                    tokens[form] += count_tokens(json.dumps(raw))
                    try:
                        evidence = Evidence.model_validate(raw)
                    except ValidationError:
                        reasons[f"{form}: schema"] += 1
                        continue
                    check = check_evidence(verifier, store, evidence)
                    if check.verified:
                        kept[form][kind] += 1
                    else:
                        why = re.sub(r"\b[0-9a-f]{12}\b", "ID", check.reason.split(":")[0])
                        reasons[f"{form}: {re.sub(r'[0-9]+', 'N', why)}"] += 1
    vault.close()
    shutil.rmtree(work, ignore_errors=True)
    total = sum(tried.values())
    result = {
        "speeches": args.speeches,
        "claims": total,
        "by_kind": {
            kind: {
                "claims": tried[kind],
                "lost_free_quote": tried[kind] - kept["quote"][kind],
                "lost_by_sentence": tried[kind] - kept["sentence"][kind],
            }
            for kind in KINDS
        },
        "lost_free_quote": total - sum(kept["quote"].values()),
        "lost_by_sentence": total - sum(kept["sentence"].values()),
        "evidence_tokens_per_claim": {
            form: round(tokens[form] / max(1, total), 1) for form in ("quote", "sentence")
        },
        "reasons": dict(reasons.most_common()),
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"{'slip':>12} {'claims':>7} {'lost (quote)':>13} {'lost (sentence)':>16}")
        for kind, row in result["by_kind"].items():
            print(
                f"{kind:>12} {row['claims']:>7} {row['lost_free_quote']:>13} "
                f"{row['lost_by_sentence']:>16}"
            )
        print(
            f"{'all':>12} {total:>7} {result['lost_free_quote']:>13} "
            f"{result['lost_by_sentence']:>16}"
        )
        print("evidence tokens per claim:", result["evidence_tokens_per_claim"])
        print("reasons:", result["reasons"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
