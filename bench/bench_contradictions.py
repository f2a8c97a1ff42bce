"""Contradiction recall on real data: VitaminC revision pairs through ingest and lint.

For each VitaminC claim, the first revision's evidence is ingested as one source and a revision
with a different verdict as a later source (both trusted, extractive engine, every plan applied),
all pairs into one vault. Then ``run_lint`` runs once. Reported:

- recall: share of differing pairs where a contradiction or stale finding with two verified quotes
  pairs a claim from the older source with a claim from the newer one;
- agreeing pairs (two revisions with the same verdict, ingested the same way): share that got such
  a finding anyway — VitaminC's "agreeing" revisions still changed the text (often a number), so
  some of these are true changes of fact rather than errors; read it as an upper bound;
- cross-article findings: contradiction/stale findings between claims from two different
  Wikipedia articles (always false; two VitaminC claims about one article can rightly meet), and how many proposed findings the quote gate dropped (must be 0 for the
  extractive engine, whose quotes are verbatim by construction).

The local model (``--local-groups N``) reviews N clusters of related claims afterwards; its
findings go through the same quote gate, and the report says how many it proposed, how many the
gate dropped, and how many pairs it found.

    .venv/bin/python bench/bench_contradictions.py [--pairs 300] [--local-groups 0] [--json]
        [--keep DIR | --vault DIR]   # keep the ingested vault / lint a copy of a kept one
    .venv/bin/python bench/bench_contradictions.py --entailment --pairs 2000   # does the model help?
    .venv/bin/python bench/bench_contradictions.py --vault DIR --misses 20   # why pairs are missed

``--misses N`` sorts every differing pair lint missed into why (see :func:`why_missed`), split by
page hash into tuning and held-out pages (the split ``bench_support.py`` and the entailment
classifier's training use), and prints N missed tuning pairs with their claims.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from affidavit.ingest.pipeline import Ingestor
from affidavit.lint.findings import StoredFinding
from affidavit.lint.runner import run_lint
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.vault import Vault, init_vault, open_vault

DATA = next(
    (
        root / "shared" / "data" / "contradictions"
        for root in Path(__file__).resolve().parents
        if (root / "shared" / "data" / "contradictions").is_dir()
    ),
    Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "contradictions",
)
"""``../shared/data/contradictions`` beside the checkout (or beside a folder holding it, as for a
worktree under ``wt/``)."""


Pair = tuple[int, str, str]
ARTICLE: dict[int, str] = {}
"""VitaminC claim id → the Wikipedia article its revisions come from."""


def _title(page: str) -> str:
    return page.replace("-LRB-", "(").replace("-RRB-", ")")


def load(limit: int) -> tuple[list[Pair], list[Pair]]:
    """(id, older source, newer source) for differing and for agreeing revision pairs; each
    source is the article's title as a heading and the revision's evidence sentence."""
    differ: list[Pair] = []
    agree: list[Pair] = []
    with (DATA / "vitaminc_pairs_public.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            revs = row["revisions"]
            first = revs[0]
            other = next((r for r in revs[1:] if r["label"] != first["label"]), None)
            head = f"# {_title(row['page'])}\n\n"
            ARTICLE[row["id"]] = row["page"]
            if other is not None and len(differ) < limit:
                differ.append((row["id"], head + first["evidence"], head + other["evidence"]))
            for a, b in itertools.combinations(revs, 2):
                if a["label"] == b["label"] and a["evidence"] != b["evidence"]:
                    agree.append((row["id"], head + a["evidence"], head + b["evidence"]))
                    break
    return differ, agree


def score(
    findings: list[StoredFinding], claim_src: dict[str, set[tuple[str, int, str]]]
) -> tuple[dict[str, set[int]], int, dict[str, int]]:
    """Pairs (by set) with an old-vs-new finding of two verified quotes; cross-pair findings."""
    raised: dict[str, set[int]] = {"d": set(), "a": set()}
    cross = 0
    kinds: dict[str, int] = defaultdict(int)
    for stored in findings:
        f = stored.finding
        if f.kind not in ("contradiction", "stale"):
            continue
        kinds[f.kind] += 1
        verified = [q for q in f.quotes if q.verified and q.claim_id]
        if len({q.claim_id for q in verified}) < 2:
            continue
        tags = [claim_src[c] for c in f.claims[:2]]
        common = {(t[0], t[1]) for t in tags[0]} & {(t[0], t[1]) for t in tags[1]}
        if not common:
            articles = [{ARTICLE[t[1]] for t in tag} for tag in tags]
            if not articles[0] & articles[1]:
                cross += 1  # about two different Wikipedia articles: always wrong
            continue
        if {t[2] for t in tags[0] | tags[1]} == {"old", "new"}:
            for label, pid in common:
                raised[label].add(pid)
    return raised, cross, dict(kinds)


def held_out(page: str) -> bool:
    """The training script's split: 40 % of pages, by SHA-256 of the data set's title."""
    return hashlib.sha256(page.encode()).digest()[0] < 102


def why_missed(old: list[str], new: list[str]) -> str:
    """Why a differing pair got no finding, from the active claims of its two sources: no claim
    on one side (ingest kept neither sentence), the same claims on both (the change was lost),
    or, for the closest differing pair of claims, whether the fact finder's cheap test passes
    and how the aligned texts differ."""
    from difflib import SequenceMatcher

    from affidavit.support.facts import _align_tokens, _content, compare, may_disagree

    if not old or not new:
        return "no claim from one source (ingest kept no sentence)"
    pairs = [
        (compare(o, n).similarity, o, n) for o in set(old) - set(new) for n in set(new) - set(old)
    ]
    if not pairs:
        return "the same claims on both sides (the change was lost)"
    similarity, a, b = max(pairs)
    if may_disagree(a, b):
        if similarity < 0.25:
            return "a changed fact, but the claims share under a quarter of their words"
        return "a changed fact, judged not one subject or reworded"
    ta, tb = _align_tokens(a), _align_tokens(b)
    matcher = SequenceMatcher(None, [t.key for t in ta], [t.key for t in tb], autojunk=False)
    stretches = [
        (_content(ta[i1:i2]), _content(tb[j1:j2]))
        for op, i1, i2, j1, j2 in matcher.get_opcodes()
        if op != "equal"
    ]
    stretches = [(x, y) for x, y in stretches if x or y]
    if len(stretches) == 1 and len(stretches[0][0]) == len(stretches[0][1]) == 1:
        return "one word replaced by another (no number, date or name)"
    if all(not x or not y for x, y in stretches):
        return "words only added or removed"
    return "reworded without a changed number, date or name"


def misses(
    differ: list[Pair],
    raised: set[int],
    claim_src: dict[str, set[tuple[str, int, str]]],
    texts: dict[str, str],
    show: int,
) -> dict[str, object]:
    """Recall and the reasons for misses on tuning and held-out pages; ``show`` tuning examples."""
    by_pair: dict[int, dict[str, list[str]]] = defaultdict(lambda: {"old": [], "new": []})
    for claim_id, tags in claim_src.items():
        for label, pid, age in tags:
            if label == "d":
                by_pair[pid][age].append(texts[claim_id])
    out: dict[str, object] = {}
    for split in ("tuning", "held_out"):
        pairs = [p for p in differ if held_out(ARTICLE[p[0]]) == (split == "held_out")]
        reasons: dict[str, int] = defaultdict(int)
        for pid, _, _ in pairs:
            if pid not in raised:
                reasons[why_missed(by_pair[pid]["old"], by_pair[pid]["new"])] += 1
        found = sum(p[0] in raised for p in pairs)
        out[split] = {
            "pairs": len(pairs),
            "recall": round(found / len(pairs), 4) if pairs else 0.0,
            "missed_because": dict(sorted(reasons.items(), key=lambda kv: -kv[1])),
        }
    examples = []
    for pid, _, _ in differ:
        if len(examples) >= show:
            break
        if pid in raised or held_out(ARTICLE[pid]):
            continue
        sides = by_pair[pid]
        examples.append(
            {
                "pair": pid,
                "article": ARTICLE[pid],
                "why": why_missed(sides["old"], sides["new"]),
                "old": sorted(set(sides["old"])),
                "new": sorted(set(sides["new"])),
            }
        )
    out["tuning_examples"] = examples
    return out


def local_model(
    vault: Vault, groups: int, claim_src: dict[str, set[tuple[str, int, str]]], differ: list[Pair]
) -> dict[str, object]:
    """Lint again with SmolLM2 (llama-cpp) reviewing ``groups`` clusters of related claims."""
    from affidavit.providers import build_provider

    root = vault.root
    config = vault.config_path.read_text().replace("model_groups = 10", f"model_groups = {groups}")
    config = config.replace("max_output_tokens = 2048", "max_output_tokens = 700")
    vault.config_path.write_text(config)
    vault.close()
    vault = open_vault(root)
    provider = build_provider("local", {"model": "smollm2"})
    started = time.perf_counter()
    report = run_lint(vault, provider)
    seconds = time.perf_counter() - started
    provider.close()
    model_kept = [f for f in report.findings if f.finding.origin == "model"]
    raised, cross, _ = score(model_kept, claim_src)
    gate_dropped = [d for d in report.dropped if d.get("origin") == "model"]
    return {
        "groups": groups,
        "calls": report.model_calls,
        "invalid_replies": len(report.invalid_replies),
        "proposed": len(model_kept) + len(gate_dropped),
        "kept": len(model_kept),
        "dropped_by_quote_gate": len(gate_dropped),
        "pairs_found_by_model": len(raised["d"]),
        "cross_article_findings": cross,
        "seconds": round(seconds, 1),
        "of_pairs": len(differ),
    }


def entailment_filter(limit: int) -> dict[str, object]:
    """Would the shipped entailment classifier make the finder more precise? For the revision
    pairs :func:`affidavit.support.facts.disagreement` flags (text against text, no ingest), the share
    each filter would drop — "both directions entail" at the card's ``accept`` threshold — among
    differing pairs (true disagreements: dropping them loses recall) and agreeing pairs (the
    findings a filter should remove)."""
    from affidavit.support.entailment import WEIGHTS_PATH, VitaminCEntailment, _load_weights
    from affidavit.support.facts import disagreement

    differ, agree = load(limit)
    flagged = {
        name: [
            (old.split("\n\n", 1)[1], new.split("\n\n", 1)[1])
            for _, old, new in pairs
            if disagreement(old.split("\n\n", 1)[1], new.split("\n\n", 1)[1])
        ]
        for name, pairs in (("differing", differ), ("agreeing", agree))
    }
    model = VitaminCEntailment()
    accept = float(_load_weights(WEIGHTS_PATH)["accept"])
    out: dict[str, object] = {"model": model.name, "accept": accept}
    for name, pairs in flagged.items():
        forward = model.entailment_many(pairs)
        backward = model.entailment_many([(b, a) for a, b in pairs])
        dropped = sum(min(x, y) >= accept for x, y in zip(forward, backward, strict=True))
        out[name] = {"flagged": len(pairs), "dropped": dropped}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=300, help="differing pairs (max 2000)")
    parser.add_argument(
        "--local-groups", type=int, default=0, help="also ask SmolLM2 about N claim groups"
    )
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--entailment",
        action="store_true",
        help="only measure whether the entailment classifier would make findings more precise",
    )
    parser.add_argument(
        "--misses", type=int, default=None, help="why pairs are missed, with N tuning examples"
    )
    parser.add_argument("--keep", type=Path, default=None, help="keep the ingested vault here")
    parser.add_argument(
        "--vault",
        type=Path,
        default=None,
        help="lint a copy of a vault --keep wrote (same --pairs)",
    )
    args = parser.parse_args()
    if args.entailment:
        print(json.dumps(entailment_filter(args.pairs), indent=2))
        return 0
    differ, agree = load(args.pairs)
    work = Path(tempfile.mkdtemp(prefix="bench-vitc-"))
    try:
        if args.vault is not None:
            shutil.copytree(args.vault, work / "vault")
            vault = open_vault(work / "vault")
        else:
            vault, _ = init_vault(work / "vault")
        src = work / "src"
        src.mkdir()
        origin: dict[str, tuple[str, int, str]] = {}  # file name -> (set, pair id, old|new)
        batches: dict[str, list[str]] = {"old": [], "new": []}
        for label, pairs in (("d", differ), ("a", agree)):
            for pid, older, newer in pairs:
                for age, text in (("old", older), ("new", newer)):
                    name = f"{label}{pid}-{age}.txt"
                    (src / name).write_text(text + "\n", encoding="utf-8")
                    origin[name] = (label, pid, age)
                    batches[age].append(str(src / name))
        started = time.perf_counter()
        for age in ("old", "new") if args.vault is None else ():
            Ingestor(vault, ExtractiveProvider(), apply_now=True).run(batches[age], trust="trusted")
            time.sleep(1.1)  # the newer batch is added strictly later
        ingest_s = time.perf_counter() - started
        if args.keep is not None and args.vault is None:
            vault.close()
            shutil.rmtree(args.keep, ignore_errors=True)
            shutil.copytree(work / "vault", args.keep)
            vault = open_vault(work / "vault")
        started = time.perf_counter()
        report = run_lint(vault)
        lint_s = time.perf_counter() - started
        claim_src: dict[str, set[tuple[str, int, str]]] = defaultdict(set)
        texts: dict[str, str] = {}
        for claim_id, source_origin, text, status in vault.db.execute(
            "SELECT e.claim_id, s.origin, c.text, c.status FROM evidence e "
            "JOIN sources s ON s.id = e.source_id JOIN claims c ON c.id = e.claim_id"
        ):
            claim_src[claim_id].add(origin[Path(source_origin).name])
            if status == "active":
                texts[claim_id] = text
        raised, cross, kinds = score(report.findings, claim_src)
        claims = vault.db.execute("SELECT count(*) FROM claims WHERE status='active'").fetchone()[0]
        result = {
            "differing_pairs": len(differ),
            "agreeing_pairs": len(agree),
            "recall": round(len(raised["d"]) / len(differ), 4) if differ else 0.0,
            "agreeing_flagged": round(len(raised["a"]) / len(agree), 4) if agree else 0.0,
            "cross_article_findings": cross,
            "findings": dict(kinds),
            "dropped_by_quote_gate": len(report.dropped),
            "active_claims": claims,
            "ingest_seconds": round(ingest_s, 1),
            "lint_seconds": round(lint_s, 2),
        }
        if args.misses is not None:
            active = {c: tags for c, tags in claim_src.items() if c in texts}
            result["misses"] = misses(differ, raised["d"], active, texts, args.misses)
        if args.local_groups:
            result["local_model"] = local_model(vault, args.local_groups, claim_src, differ)
        vault.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        json.dump(result, sys.stdout, indent=2)
        print()
    else:
        for key, value in result.items():
            print(f"{key:>24}: {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
