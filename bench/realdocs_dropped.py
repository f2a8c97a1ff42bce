"""Issue 24 (branch ``drop24``): every visible prose sentence of a vault's sources that is no
claim, grouped by why.

A sentence is each one the extractive engine's segmenter finds in a chunk (fences, code and
headings are not sentences); it is a claim when evidence in the vault quotes half of it or more.
Any other is traced through :func:`affidavit.extractive.units.build_units`'s steps (a sanitizer or
stored flag, its length, :func:`~affidavit.extractive.units.rejection`'s reason, its words) and,
when the engine proposed it, whether the same claim is in the wiki (the gate refused a duplicate
from this source) or it went into a longer claim. The gate's own verdicts are in the plans
(``bench/realdocs_dropped.py --gate VAULT``).

    PYTHONPATH=src .venv/bin/python bench/realdocs_dropped.py VAULT [--examples 3] [--json OUT]
    PYTHONPATH=src .venv/bin/python bench/realdocs_dropped.py --gate VAULT
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
from collections import Counter, defaultdict
from pathlib import Path

from affidavit.extractive import units as U
from affidavit.extractive.analysis import _own_names, analyse
from affidavit.extractive.markdown import code_spans
from affidavit.extractive.segment import MAX_CLAIM, MIN_QUOTE, segment
from affidavit.ingest.chunking import chunk_text
from affidavit.plan.stored import admission_text
from affidavit.providers.base import IngestTask
from affidavit.sources.sanitizer import scan


def _markup(text: str) -> str:
    found = U._MARKUP.search(text)
    mark = found.group(0) if found else ""
    if mark in "<>" and re.search(r"<[\w.-]+>", text):
        return "markup: <placeholder>"
    if mark in "<>":
        return "markup: < or > (a prompt, a comparison)"
    return {"`": "markup: backtick", "{": "markup: braces", "}": "markup: braces"}.get(
        mark, "markup: " + ("|" if mark == "|" else "~" if mark == "~" else "link or URL")
    )


def dropped(vault: Path, chunk_chars: int = 6000) -> tuple[int, dict[str, list[str]]]:
    db = sqlite3.connect(vault / ".affidavit/db.sqlite")
    groups: dict[str, list[str]] = defaultdict(list)
    total = 0
    rows = db.execute(
        "SELECT id, name, text_file FROM sources WHERE status = 'active' ORDER BY name"
    ).fetchall()
    for sid, name, text_file in rows:
        text = (vault / text_file).read_text()
        evidence = db.execute(
            'SELECT r.start, r."end" FROM evidence_rows r JOIN source_keys k '
            "ON k.key = r.source_key WHERE k.source_id = ?",
            (sid,),
        ).fetchall()
        flags = db.execute(
            'SELECT start, "end", kind FROM source_flags WHERE source_id = ?', (sid,)
        ).fetchall()
        chunks = chunk_text(text, chunk_chars)
        seen: set[tuple[int, int]] = set()
        for ch in chunks:
            c = text[ch.start : ch.end]
            flagged = tuple(
                (max(a, ch.start) - ch.start, min(b, ch.end) - ch.start)
                for a, b, _ in flags
                if a < ch.end and ch.start < max(b, a + 1)
            )
            task = IngestTask(
                "", sid, name, c, ch.start, ch.index, len(chunks), (), (), flagged,
                ch.fence, ch.section,
            )  # fmt: skip
            texts = analyse(task).texts()
            seg = segment(
                c, hidden=flagged, fence=ch.fence, code=code_spans(c, ch.fence), section=ch.section
            )
            names = _own_names(task, seg)
            literal = U.shows_placeholders(name) if hasattr(U, "shows_placeholders") else False
            regions = U.excluded_regions(c, flagged)
            for s in seg.sentences:
                g0, g1 = ch.start + s.start, ch.start + s.end
                raw = c[s.start : s.end]
                if (g0, g1) in seen or not raw.strip():
                    continue
                seen.add((g0, g1))
                total += 1
                covered = sum(max(0, min(b, g1) - max(a, g0)) for a, b in evidence)
                shown = " ".join(raw.split())
                if covered >= 0.5 * (g1 - g0):
                    groups["claim"].append(shown)
                    continue
                start, end = U._strip_salutation(c, s.start, s.end), s.end
                trailing = U._TRAILING_REFERENCE.search(c, start, end)
                end = trailing.start() if trailing else end
                body = U.claim_text(c[start:end])
                if end - start < MIN_QUOTE:
                    why = "shorter than a quote (a term line: -n)"
                elif U._overlaps(regions, start, end):
                    kinds = [k for a, b, k in flags if a < ch.start + end and ch.start + start < b]
                    kinds += [f.kind for f in scan(c) if f.start < end and start < f.end]
                    why = "flagged: " + (kinds[0] if kinds else "chat-role line or block")
                elif len(body) < U.MIN_CHARS:
                    why = "under 24 characters"
                elif len(body) > MAX_CLAIM:
                    why = "over 600 characters"
                elif reason := (
                    U.rejection(body, names, literal) if literal else U.rejection(body, names)
                ):
                    why = _markup(body) if reason == "markup" else "rejected: " + reason
                elif len(U.WORD.findall(body)) < U.MIN_WORDS:
                    why = "under 5 words"
                elif not any(body in t for t in texts):
                    why = "usable, no claim (cut at the chunk's end)"
                elif db.execute("SELECT 1 FROM claims WHERE text = ?", (body,)).fetchone():
                    why = "proposed; the same claim is in the wiki from another source"
                elif any(body in t and t != body for t in texts):
                    why = "proposed inside a longer claim, which is not in the wiki"
                else:
                    why = "proposed alone, not in the wiki (the gate)"
                groups[why].append(shown)
    return total, groups


def gate(vault: Path) -> Counter[str]:
    """Claims the gate refused (every plan) or holds for a person (pending plans), by reason."""
    db = sqlite3.connect(vault / ".affidavit/db.sqlite")
    db.row_factory = sqlite3.Row
    out: Counter[str] = Counter()
    for row in db.execute("SELECT * FROM plans"):
        admission = json.loads(admission_text(row, db))
        for op in admission["ops"]:
            for claim in op.get("claims", []):
                if claim.get("status") != "admitted":
                    reason = claim.get("reason") or claim.get("support_reason") or ""
                    out["refused: " + re.sub(r"c-[0-9a-f]+.*", "…", reason)[:60]] += 1
        if row["status"] == "pending":
            for op_index, info in json.loads(row["held"] or "{}").items():
                for i in info.get("claims", []):
                    claim = admission["ops"][int(op_index)]["claims"][i]
                    out["held: " + (claim.get("support_reason") or "")[:40]] += 1
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("vault", type=Path)
    parser.add_argument("--examples", type=int, default=3)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--gate", action="store_true")
    args = parser.parse_args()
    if args.gate:
        for reason, n in gate(args.vault).most_common():
            print(f"{n:6d} {reason}")
        return
    total, groups = dropped(args.vault)
    print("sentences", total)
    for why, found in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        print(f"{len(found):6d} {100 * len(found) / total:5.1f}% {why}")
        if why != "claim":
            for example in found[: args.examples]:
                print("         ", example[:160])
    if args.json:
        args.json.write_text(json.dumps(groups))


if __name__ == "__main__":
    main()
