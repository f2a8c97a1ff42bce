"""``ingest --dry-run``: the estimate against what a scripted provider is actually sent.

Takes S speeches of the public State of the Union corpus (../shared/data/corpus/sotu.jsonl,
every 20th from 1790 on), estimates their ingest (``affidavit.ingest.dry_run.estimate``), then
ingests them with ``--yes`` through a scripted provider whose plans create a page per chunk
citing its first numbered sentence (so the wiki grows during the run, as it does with a real
model, and later prompts list more related pages than the estimate saw) and counts the prompt
tokens of every first request it was sent (``ingest.cost.request_tokens``: cl100k over the
messages and the schema). Prints the estimate, what was sent and the error, per source and in
total. Completion tokens are not compared: a scripted reply is not a model's.

    .venv/bin/python bench/bench_dry_run.py [--speeches 10] [--chunk-chars 6000] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from affidavit.ingest.cost import request_tokens
from affidavit.ingest.dry_run import estimate
from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.base import ModelRequest
from affidavit.providers.scripted import ScriptedProvider
from affidavit.vault import init_vault, open_vault

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(
    os.environ.get("AFFIDAVIT_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)
CORPUS = SHARED / "corpus" / "sotu.jsonl"
_LINE = re.compile(r"^\[s(\d+)\] (.+)$", re.M)


def reply(request: ModelRequest) -> str:
    assert request.task is not None
    task = request.task
    found = _LINE.search(request.messages[1].content)
    if found is None:
        return json.dumps({"nonce": task.nonce, "operations": []})
    sentence = found.group(2).strip()
    slug = re.sub(r"[^a-z0-9]+", "-", task.source_name.lower()).strip("-")[:40]
    return json.dumps(
        {
            "nonce": task.nonce,
            "operations": [
                {
                    "op": "create_page",
                    "slug": f"{slug}-{task.chunk_index + 1}",
                    "title": f"Address part {task.chunk_index + 1}",
                    "summary": sentence[:200],
                    "claims": [
                        {
                            "text": sentence[:280],
                            "evidence": [
                                {"source": task.source_id, "sentence": int(found.group(1))}
                            ],
                        }
                    ],
                }
            ],
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--speeches", type=int, default=10)
    parser.add_argument("--chunk-chars", type=int, default=6000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-dry-run-"))
    try:
        vault, _ = init_vault(work / "vault")
        config = vault.config_path.read_text()
        vault.config_path.write_text(
            config.replace("chunk_chars = 6000", f"chunk_chars = {args.chunk_chars}")
        )
        vault.close()
        vault = open_vault(work / "vault")
        folder = work / "speeches"
        folder.mkdir()
        with CORPUS.open(encoding="utf-8") as handle:
            rows = [json.loads(line) for line in handle][::20][: args.speeches]
        paths = []
        for row in rows:
            path = folder / f"{row['year']}-{row['name'].split()[-1].lower()}.md"
            path.write_text(f"# {row['year']}: {row['name']}\n\n{row['text']}\n")
            paths.append(path)
        provider = ScriptedProvider(replies=[reply] * 10_000)
        found = estimate(vault, provider, [str(p) for p in paths], "trusted")
        Ingestor(vault, provider, apply_now=True).run([str(p) for p in paths], "trusted")
        sent: dict[str, int] = {}
        for request in provider.requests:
            if request.task is not None and len(request.messages) == 2:  # no re-asks
                name = request.task.source_name
                sent[name] = sent.get(name, 0) + request_tokens(request, provider)
        rows_out: list[dict[str, Any]] = []
        for source in found.sources:
            actual = sent.get(source.name, 0)
            rows_out.append(
                {
                    "source": source.name,
                    "chunks": source.chunks,
                    "estimated": source.prompt_tokens,
                    "sent": actual,
                    "error_pct": round(100 * (source.prompt_tokens - actual) / actual, 2)
                    if actual
                    else None,
                }
            )
        total_est = sum(r["estimated"] for r in rows_out)
        total_sent = sum(r["sent"] for r in rows_out)
        result = {
            "speeches": len(rows_out),
            "chunks": sum(r["chunks"] for r in rows_out),
            "pages_created": vault.db.execute("SELECT count(*) FROM pages").fetchone()[0],
            "estimated_prompt_tokens": total_est,
            "sent_prompt_tokens": total_sent,
            "error_pct": round(100 * (total_est - total_sent) / total_sent, 2),
            "worst_source_error_pct": max(abs(r["error_pct"] or 0) for r in rows_out),
            "sources": rows_out,
        }
        vault.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for row in result.pop("sources"):
            print(row)
        for key, value in result.items():
            print(f"{key}: {value}")


if __name__ == "__main__":
    main()
