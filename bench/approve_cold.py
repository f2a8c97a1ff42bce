"""CPU of approving a writer's plans in a new process (W5's re-check), for comparing code versions.

``setup DIR``: a fresh vault, the first 40 paragraphs of the public writer set as trusted
sources, each proposed as a plan as a writer sends it (title, summary and up to five faithful
claims; ``auto_apply = "never"``, so they wait). ``approve DIR``, in another process: approves
each pending plan in turn (the door re-admits it against the wiki as it is now) and prints one
JSON line: plans approved, CPU and wall seconds, and whether the support check's parser was
loaded (with kept parses, :mod:`affidavit.support.kept`, every text it re-checks was parsed by
the proposal's process). ``lint DIR``, in a third process after it: lint's
``unsupported_claim`` over the wiki the approvals wrote, the same figures. Run every step with
the same ``PYTHONPATH=<src>``; only APIs that exist on main before branch ``supcost3`` are used.

    PYTHONPATH=<src> .venv/bin/python bench/approve_cold.py setup /tmp/ac
    PYTHONPATH=<src> .venv/bin/python bench/approve_cold.py approve /tmp/ac
    PYTHONPATH=<src> .venv/bin/python bench/approve_cold.py lint /tmp/ac

The writer set carries BIG-bench's canary: never train on it.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from affidavit.inbox import approve_many, propose
from affidavit.plan.nonce import issue_nonce
from affidavit.sources.store import SourceStore
from affidavit.support import parse
from affidavit.vault import init_vault, open_vault

SHARED = Path(
    os.environ.get("AFFIDAVIT_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)
PLANS = 40


def setup(work: Path) -> dict[str, object]:
    data = SHARED / "writer" / "llm_claims_public.jsonl"
    rows = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines() if line]
    vault, _ = init_vault(work / "vault")
    store = SourceStore(vault)
    ids = []
    cpu = time.process_time()
    for i, row in enumerate(rows[:PLANS]):
        text = f"# {row['article'].replace('_', ' ')}\n\n{row['context'].strip()}\n"
        added = store.add_bytes(
            text.encode(), origin=f"/bench/w{i}.md", name=f"w{i}.md",
            media_type="text/markdown", trust="trusted",
        )  # fmt: skip
        source = added.record.id
        claims = [
            {"text": c["text"], "evidence": [{"source": source, "quote": q} for q in c["quotes"]]}
            for c in row["claims"]
            if c["faithful"]
        ][:5]
        op = {"op": "create_page", "slug": f"p-{i}", "title": row["page_title"]}
        op |= {"summary": row["page_summary"], "claims": claims}
        plan = {"nonce": issue_nonce(vault.db, vault.clock, "bench"), "operations": [op]}
        proposal = propose(vault, plan, "bench-writer", "bench")
        if proposal.status == "pending":
            ids.append(proposal.plan_id)
    (work / "ids.json").write_text(json.dumps(ids))
    vault.close()
    return {"proposed": len(ids), "propose_cpu": round(time.process_time() - cpu, 2)}


def approve(work: Path) -> dict[str, object]:
    vault = open_vault(work / "vault")
    ids = json.loads((work / "ids.json").read_text())
    started, cpu = time.perf_counter(), time.process_time()
    applied = sum(approve_many(vault, [plan_id], None, "person")[0].applied for plan_id in ids)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    vault.close()
    return {
        "approved": applied,
        "of": len(ids),
        "approve_cpu": round(cpu, 2),
        "approve_wall": round(seconds, 2),
        "parser_loaded": parse.loaded(),
    }


def lint(work: Path) -> dict[str, object]:
    from affidavit.lint.checks import run_checks

    vault = open_vault(work / "vault")
    started, cpu = time.perf_counter(), time.process_time()
    found = run_checks(vault, kinds=["unsupported_claim"])
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    active = vault.db.execute("SELECT count(*) FROM claims WHERE status = 'active'").fetchone()[0]
    vault.close()
    return {
        "claims": active,
        "findings": len(found),
        "lint_cpu": round(cpu, 2),
        "lint_wall": round(seconds, 2),
        "parser_loaded": parse.loaded(),
    }


def main() -> int:
    step, work = sys.argv[1], Path(sys.argv[2])
    steps = {"setup": setup, "approve": approve, "lint": lint}
    print(json.dumps(steps[step](work)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
