"""Versions of a source (issue 27 item 1) and lint's truth (issue 24 item 3), measured.

1. **Re-ingest after edits.** ``--speeches`` State of the Union addresses (public domain,
   ``../shared/data/corpus/sotu.jsonl``, the most recent first) are written as markdown files into a
   folder and ingested with the extractive engine (``ingest --yes --trust trusted``). Then a share
   ``--share`` of each speech's sentences (seeded) is edited — two in three *changed* (a number
   shifted, else a content word replaced), one in three *deleted* — and the folder is ingested
   again. Scored against the known edits:

   - *carried without a person*: of the claims whose quotes the edits left intact, the share now
     citing the new version through the policy-applied ``carry_source`` plans;
   - *proposals* (the ``supersede_claim`` / ``retract_claim`` of the ``lineage:`` plans in the
     inbox, and the stale fixes the ingest's supersession pass proposed): precision (each names a claim whose quote an edit broke) and recall (each such claim
     gets one), and whether its kind fits the edit (changed → supersede, deleted → retract);
   - claims the re-ingest put in the wiki at once (every edit changes or deletes a sentence: each
     such claim states a changed fact beside the old one still waiting — 0 since carry30, whose
     claims are held for the proposals), and the change log's entries it wrote;
   - re-ingest seconds, CPU seconds (this process and, ``*_all``, its finished workers: the
     first ingest reads chunks ahead in one) and model calls next to the first ingest's, for
     each share in ``--shares``.

2. **Lint on one release.** The same speeches ingested into two vaults in opposite orders, seconds
   apart (the fake clock advances per file): ``lint`` must raise 0 stale findings, the inbox must
   hold 0 supersede proposals, and both vaults' findings must be the same.

    .venv/bin/python bench/bench_lineage.py [--speeches 40] [--share 0.10] [--shares 0.02,0.1,0.3]
                                          [--lint-speeches 40] [--realdocs] [--no-reingest]
                                          [--renames] [--json]

4. **Moved and edited while the watch was down** (``--renames``): ``--speeches`` speeches are
   stored from a folder; then half of them are moved to new names *and* edited (each share of
   ``--shares``, as in 1), the other half deleted, and as many other speeches (unrelated
   documents) added. :func:`affidavit.ingest.renames.pair_renamed` is asked to pair the vanished
   files with the appeared ones: every moved file must pair with its origin, no deleted one with
   an unrelated file (right / wrong / missed pairs, and its seconds).

3. **Lint on a real manual** (``--realdocs``): the SQLite 3.40.1 manual of
   ``../shared/data/realdocs/sqlite3-doc.json`` (install Debian's ``sqlite3-doc``), one release:
   every stale finding and every supersede or retract proposal is a false alarm.

Tuned on nothing: the pairing threshold (``affidavit.ingest.lineage.PAIRING``) was set before the
first run; the speeches are public data.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from affidavit.ingest.pipeline import Ingestor
from affidavit.ingest.renames import pair_renamed
from affidavit.lint.runner import run_lint
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.sources.sentences import number_sentences
from affidavit.sources.store import SourceStore
from affidavit.vault import Vault, init_vault

SHARED = Path(
    os.environ.get("AFFIDAVIT_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)
CORPUS = SHARED / "corpus" / "sotu.jsonl"
_NUMBER = re.compile(r"\b\d[\d,]*\b")
_WORD = re.compile(r"\b[a-z]{6,}\b")


class Clock:
    """A clock that moves one second a call: ingest order shows in every timestamp."""

    def __init__(self) -> None:
        self.now = datetime(2026, 12, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


def speeches(count: int) -> list[tuple[str, str]]:
    rows = [json.loads(line) for line in CORPUS.read_text().splitlines() if line.strip()]
    rows.sort(key=lambda r: (-int(r["year"]), r["name"]))
    out = []
    for row in rows[:count]:
        name = f"{row['year']}-{re.sub(r'[^a-z]+', '-', row['name'].lower()).strip('-')}.md"
        out.append((name, f"# {row['name']}, {row['year']}\n\n{row['text'].strip()}\n"))
    return out


def edit(text: str, share: float, rng: random.Random) -> tuple[str, list[tuple[int, int, str]]]:
    """``text`` with ``share`` of its sentences edited; the edits as (start, end, kind) in the
    original text (kind: changed | deleted)."""
    sentences = [s for s in number_sentences(text) if s.end - s.start >= 30]
    chosen = sorted(
        rng.sample(sentences, max(1, round(share * len(sentences)))), key=lambda s: s.start
    )
    out, at, edits = [], 0, []
    for s in chosen:
        words = text[s.start : s.end]
        kind = "deleted" if rng.random() < 1 / 3 else "changed"
        if kind == "changed":
            numbers = list(_NUMBER.finditer(words))
            if numbers:
                m = rng.choice(numbers)
                digits = m.group().replace(",", "")
                new = str(int(digits) + rng.randint(1, 9) * (10 ** max(0, len(digits) - 2)))
            else:
                candidates = list(_WORD.finditer(words))
                if not candidates:
                    kind = "deleted"
                else:
                    m = rng.choice(candidates)
                    new = rng.choice(["considerable", "remarkable", "uncertain", "temporary"])
            if kind == "changed":
                words = words[: m.start()] + new + words[m.end() :]
        out.append(text[at : s.start] + ("" if kind == "deleted" else words))
        at = s.end
        edits.append((s.start, s.end, kind))
    out.append(text[at:])
    return "".join(out), edits


def _workers_cpu() -> float:
    """CPU seconds of the finished worker processes (the read-ahead and lint workers)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _log_seq(vault: Vault) -> int:
    row = vault.db.execute(
        "SELECT seq FROM sqlite_sequence WHERE name = 'doctor_changes'"
    ).fetchone()
    return int(row[0]) if row else 0


def ingest(vault: Vault, folder: Path) -> tuple[float, dict[str, Any]]:
    started, cpu, workers = time.perf_counter(), time.process_time(), _workers_cpu()
    report = Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(folder)], "trusted")
    out = report.to_json()
    out["cpu_seconds"] = time.process_time() - cpu  # this process (not the read-ahead worker)
    out["cpu_seconds_all"] = out["cpu_seconds"] + _workers_cpu() - workers  # and its workers
    return time.perf_counter() - started, out


def reingest(count: int, share: float, seed: int, work: Path) -> dict[str, Any]:
    folder = work / f"docs-{share}"
    folder.mkdir()
    texts = dict(speeches(count))
    for name, text in texts.items():
        (folder / name).write_text(text)
    vault, _ = init_vault(work / f"vault-{share}", clock=Clock())
    first_seconds, first = ingest(vault, folder)
    old_ids = {row[0]: row[1] for row in vault.db.execute("SELECT origin_key, id FROM sources")}
    evidence = vault.db.execute(
        'SELECT c.id, e.source_id, e.start, e."end", e.quote FROM claims c JOIN evidence e '
        "ON e.claim_id = c.id WHERE c.status = 'active'"
    ).fetchall()
    rng = random.Random(seed)
    edits: dict[str, list[tuple[int, int, str]]] = {}
    new_texts: dict[str, str] = {}
    for name, text in texts.items():
        new_texts[name], edits[name] = edit(text, share, rng)
        (folder / name).write_text(new_texts[name])
    by_source = {old_ids[(folder / name).resolve().as_posix()]: name for name in texts}
    # what the edits did to each claim: broken (changed/deleted) or intact
    truth: dict[str, str] = {}
    for claim_id, source_id, start, end, quote in evidence:
        name = by_source.get(source_id)
        if name is None:
            continue
        hit = [k for s, e, k in edits[name] if s < end and start < e]
        flat = " ".join(quote.split())
        broken = hit and flat not in " ".join(new_texts[name].split())
        kind = (
            ("deleted" if "deleted" in hit and "changed" not in hit else "changed")
            if broken
            else "intact"
        )
        if truth.get(claim_id, "intact") == "intact":
            truth[claim_id] = kind
    claims_before = vault.db.execute("SELECT max(rowid) FROM claims").fetchone()[0]
    log_before = _log_seq(vault)
    second_seconds, second = ingest(vault, folder)
    # claims the re-ingest put in the wiki at once: every edit changes or deletes a sentence,
    # so each restates a changed fact beside the old claim still waiting (carry30: 0)
    applied_new = vault.db.execute(
        "SELECT count(*) FROM claims WHERE rowid > ? AND status = 'active'", (claims_before,)
    ).fetchone()[0]
    logged = _log_seq(vault) - log_before
    held = sum(s.get("lineage", {}).get("held", 0) for s in second["sources"])
    carried = sum(s.get("lineage", {}).get("carried", 0) for s in second["sources"])
    proposed: dict[str, str] = {}
    for (text,) in vault.db.execute(
        "SELECT plan_json FROM plans WHERE status = 'pending' "
        "AND (origin LIKE 'lineage:%' OR origin = 'lint')"  # lint: the ingest's stale fixes
    ):
        for op in json.loads(text)["operations"]:
            if op["op"] in ("supersede_claim", "retract_claim"):
                proposed[op["claim"]] = op["op"]
    now_on_new = {
        row[0]
        for row in vault.db.execute(
            "SELECT DISTINCT claim_id FROM evidence WHERE source_id NOT IN "
            f"({','.join('?' * len(old_ids))})",
            list(old_ids.values()),
        )
    }
    broken = {c for c, k in truth.items() if k != "intact"}
    intact = {c for c, k in truth.items() if k == "intact"}
    right = proposed.keys() & broken
    kind_ok = sum(1 for c in right if (proposed[c] == "retract_claim") == (truth[c] == "deleted"))
    vault.close()
    return {
        "speeches": count,
        "share_edited": share,
        "sentences_edited": sum(len(e) for e in edits.values()),
        "claims": len(truth),
        "claims_intact": len(intact),
        "claims_broken": len(broken),
        "carried": carried,
        "carried_share_of_intact": round(len(intact & now_on_new) / max(1, len(intact)), 4),
        "broken_carried": len(broken & now_on_new),
        "missed": sorted(broken - proposed.keys())[:5],
        "proposals": len(proposed),
        "precision": round(len(right) / max(1, len(proposed)), 4),
        "recall": round(len(right) / max(1, len(broken)), 4),
        "kind_fits_edit": round(kind_ok / max(1, len(right)), 4),
        "first_ingest_seconds": round(first_seconds, 2),
        "reingest_seconds": round(second_seconds, 2),
        "first_cpu_seconds": round(first["cpu_seconds"], 2),
        "reingest_cpu_seconds": round(second["cpu_seconds"], 2),
        "first_cpu_seconds_all": round(first["cpu_seconds_all"], 2),
        "reingest_cpu_seconds_all": round(second["cpu_seconds_all"], 2),
        "reingest_cpu_share": round(
            second["cpu_seconds_all"] / max(0.01, first["cpu_seconds_all"]), 3
        ),
        "new_claims_applied_at_once": applied_new,
        "held_for_proposals": held,
        "change_log_entries": logged,
        "first_model_calls": first["totals"]["model_calls"],
        "reingest_model_calls": second["totals"]["model_calls"],
    }


def renames(count: int, share: float, seed: int, work: Path) -> dict[str, Any]:
    """Section 4 of the module doc: pairing files moved and edited with the ones they were."""
    texts = speeches(count + count // 2)
    kept, unrelated = texts[:count], texts[count:]
    folder = work / f"renames-{share}"
    folder.mkdir()
    for name, text in kept:
        (folder / name).write_text(text)
    vault, _ = init_vault(work / f"vault-renames-{share}", clock=Clock())
    SourceStore(vault).add_files(sorted(folder.iterdir()), "trusted")
    rng = random.Random(seed)
    moved, deleted = kept[: count // 2], kept[count // 2 :]
    for name, text in moved:
        (folder / name).unlink()
        (folder / f"moved-{name}").write_text(edit(text, share, rng)[0])
    for name, _ in deleted:
        (folder / name).unlink()
    for name, text in unrelated:
        (folder / f"new-{name}").write_text(text)
    vanished = [folder / name for name, _ in kept]
    appeared = sorted(p for p in folder.iterdir() if p.name.startswith(("moved-", "new-")))
    started = time.perf_counter()
    pairs = pair_renamed(vault, vanished, appeared)
    seconds = time.perf_counter() - started
    vault.close()
    right = sum(1 for old, new in pairs if new.name == f"moved-{old.name}")
    return {
        "share_edited": share,
        "moved_and_edited": len(moved),
        "deleted": len(deleted),
        "unrelated_added": len(unrelated),
        "paired_right": right,
        "paired_wrong": len(pairs) - right,
        "missed": len(moved) - right,
        "seconds": round(seconds, 2),
    }


def lint_one_release(count: int, work: Path) -> dict[str, Any]:
    texts = speeches(count)
    results = []
    for order, label in ((texts, "forward"), (list(reversed(texts)), "reversed")):
        folder = work / f"release-{label}"
        folder.mkdir()
        vault, _ = init_vault(work / f"lint-{label}", clock=Clock())
        for name, text in order:  # one file at a time: each a second later than the one before
            (folder / name).write_text(text)
            Ingestor(vault, ExtractiveProvider(), apply_now=True).run(
                [str(folder / name)], "trusted"
            )
        report = run_lint(vault, trigger="manual")
        kinds: dict[str, int] = {}
        found = [stored.finding for stored in report.findings]
        for f in found:
            kinds[f.kind] = kinds.get(f.kind, 0) + 1
        supersede = 0
        for (text,) in vault.db.execute("SELECT plan_json FROM plans WHERE status = 'pending'"):
            supersede += sum(
                1 for op in json.loads(text)["operations"] if op["op"] == "supersede_claim"
            )
        claims = {
            r[0]: r[1]
            for r in vault.db.execute("SELECT id, text FROM claims WHERE status = 'active'")
        }
        results.append(
            {
                "order": label,
                "findings": kinds,
                "stale": kinds.get("stale", 0),
                "supersede_proposals": supersede,
                "fingerprints": sorted(
                    (f.kind, tuple(sorted(claims.get(c, c) for c in f.claims)))
                    for f in found
                    if f.kind in ("stale", "contradiction", "duplicate")
                ),
            }
        )
        vault.close()
    same = results[0]["fingerprints"] == results[1]["fingerprints"]
    for r in results:
        del r["fingerprints"]
    return {"speeches": count, "runs": results, "same_findings_both_orders": same}


REALDOCS = SHARED / "realdocs"


def lint_realdocs(work: Path) -> dict[str, Any]:
    """The SQLite 3.40.1 manual (one release, ``realdocs/sqlite3-doc.json``) ingested as a user
    would (``ingest DIR --trust trusted --yes``), then ``lint``: every stale finding and every
    supersede or retract proposal is a false alarm."""
    spec = json.loads((REALDOCS / "sqlite3-doc.json").read_text())
    root = Path(spec["doc_root"])
    folder = work / "sqlite-doc"
    for rel in spec["files"]:
        target = folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / rel, target)
    vault, _ = init_vault(work / "realdocs", clock=Clock())
    started = time.perf_counter()
    report = Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(folder)], "trusted")
    seconds = time.perf_counter() - started
    found = [stored.finding for stored in run_lint(vault, trigger="manual").findings]
    kinds: dict[str, int] = {}
    for f in found:
        kinds[f.kind] = kinds.get(f.kind, 0) + 1
    withdrawals: dict[str, int] = {}
    for (text,) in vault.db.execute("SELECT plan_json FROM plans WHERE status = 'pending'"):
        for op in json.loads(text)["operations"]:
            if op["op"] in ("supersede_claim", "retract_claim", "retract_source"):
                withdrawals[op["op"]] = withdrawals.get(op["op"], 0) + 1
    vault.close()
    return {
        "files": len(spec["files"]),
        "sources": report.totals()["sources"],
        "ingest_seconds": round(seconds, 1),
        "stale": kinds.get("stale", 0),
        "contradiction": kinds.get("contradiction", 0),
        "withdrawal_proposals": withdrawals,
        "findings": kinds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--speeches", type=int, default=40)
    parser.add_argument("--share", type=float, default=0.10)
    parser.add_argument("--shares", default="")
    parser.add_argument("--lint-speeches", type=int, default=40)
    parser.add_argument("--seed", type=int, default=27)
    parser.add_argument("--realdocs", action="store_true", help="also lint the SQLite manual")
    parser.add_argument("--no-reingest", action="store_true")
    parser.add_argument("--renames", action="store_true", help="also pair moved+edited files")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-lineage-"))
    try:
        shares = [float(s) for s in args.shares.split(",") if s] or [args.share]
        out: dict[str, Any] = {
            "reingest": []
            if args.no_reingest
            else [reingest(args.speeches, s, args.seed, work) for s in shares]
        }
        if args.renames:
            out["renames"] = [renames(args.speeches, s, args.seed, work) for s in shares]
        if args.lint_speeches:
            out["lint_one_release"] = lint_one_release(args.lint_speeches, work)
        if args.realdocs:
            out["lint_realdocs"] = lint_realdocs(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        json.dump(out, sys.stdout, indent=2)
        print()
        return
    for r in out["reingest"]:
        print(
            f"{r['speeches']} speeches, {r['share_edited']:.0%} of sentences edited "
            f"({r['sentences_edited']}): {r['claims']} claims, {r['claims_broken']} broken by "
            f"the edits; carried without a person {r['carried_share_of_intact']:.1%} of the "
            f"intact; proposals {r['proposals']}: precision {r['precision']:.1%}, recall "
            f"{r['recall']:.1%}, kind fits {r['kind_fits_edit']:.1%}; first ingest "
            f"{r['first_ingest_seconds']} s / {r['first_model_calls']} calls / "
            f"{r['first_cpu_seconds_all']} CPU s, re-ingest {r['reingest_seconds']} s / "
            f"{r['reingest_model_calls']} calls / {r['reingest_cpu_seconds_all']} CPU s "
            f"({r['reingest_cpu_share']:.0%} of the first)"
        )
    for r in out.get("renames", []):
        print(
            f"moved and edited ({r['share_edited']:.0%}): {r['moved_and_edited']} moved, "
            f"{r['deleted']} deleted, {r['unrelated_added']} unrelated added: paired right "
            f"{r['paired_right']}, wrong {r['paired_wrong']}, missed {r['missed']} "
            f"({r['seconds']} s)"
        )
    lint = out.get("lint_one_release")
    if lint:
        for run in lint["runs"]:
            print(
                f"lint, {lint['speeches']} speeches ingested {run['order']}: stale "
                f"{run['stale']}, supersede proposals {run['supersede_proposals']}, findings "
                f"{run['findings']}"
            )
        print(f"same findings in both orders: {lint['same_findings_both_orders']}")
    real = out.get("lint_realdocs")
    if real:
        print(
            f"lint, SQLite manual ({real['files']} files, one release): stale {real['stale']}, "
            f"withdrawal proposals {real['withdrawal_proposals'] or 0}, findings {real['findings']}"
        )


if __name__ == "__main__":
    main()
