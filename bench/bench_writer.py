"""The support check (W11) as a real writer meets it: the public writer set through the real gate.

`../shared/data/writer/llm_claims_public.jsonl` holds, per SQuADShifts paragraph, 3 faithful claims
(by ``kind``) and 3 wrong ones (by ``error_type``) an LLM wiki writer wrote with their verbatim
quotes, and a faithful and a wrong page title and summary. Each paragraph is stored as a *trusted*
markdown source headed by its article's title, in a vault with ``policy.auto_apply = "trusted"``,
and every text is proposed as a plan would carry it, through ``inbox.propose`` — the gate, the
policy and the one door, exactly as a provider's, an agent's or a person's plan goes. Each text
ends in one of three columns:

- **outright**: in the wiki with no person (applied by policy);
- **person**: waiting in the inbox for a person (uncertain, or held by the policy);
- **rejected**: refused by the gate.

Modes (all by default; ``--modes`` picks some):

- ``claims``: each claim alone, ``add_claims`` to the paragraph's page (created first by the host
  with the article's title and a verbatim sentence, so only the claim is judged);
- ``writer``: sent as a writer sends them — one ``create_page`` a paragraph with the faithful title
  and summary and five claims (the three faithful ones and two of the wrong ones, rotating which
  wrong one is left out);
- ``texts``: titles and summaries — the faithful title and summary, then (on another page) the
  wrong title and summary, each on a page with the paragraph's three faithful claims; and
  ``section`` headings: the faithful title, then the wrong title, as the heading of an
  ``add_claims`` of the three faithful claims;
- ``context``: each claim as an ``update_context`` entry;
- ``answers``: each claim as an answer sentence citing a claim whose quotes are its quotes
  (``ask.answer.check_reply``: an answer keeps only supported sentences).

Splits: held-out articles are those whose SHA-256(title)'s first byte is < 102 (~40 %); tune only
on the other ("tuning") articles, report both. ``--model NAME`` adds the support check's model
layer (``support.model``).

    .venv/bin/python bench/bench_writer.py [--modes claims,writer,texts,context,answers]
        [--split all|tuning|held-out] [--model NAME] [--json] [--examples N]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from affidavit.ask.answer import AnswerReply, check_reply
from affidavit.inbox import propose
from affidavit.plan.nonce import issue_nonce
from affidavit.sources.store import SourceStore
from affidavit.support import SupportChecker, load_model
from affidavit.vault import Vault, init_vault, open_vault

SHARED = Path(
    os.environ.get("AFFIDAVIT_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)
WRITER = SHARED / "writer" / "llm_claims_public.jsonl"
MODES = ("claims", "writer", "texts", "context", "answers")
OUTCOMES = ("outright", "person", "rejected")

GOALS = {
    "wrong_outright_max": 0.02,
    "wrong_outright_per_type_max": 0.05,
    "faithful_outright_min": 0.75,
    "faithful_rejected_max": 0.02,
    "writer_faithful_outright_min": 0.70,
    "writer_wrong_outright_max": 0.02,
}


def held_out(article: str) -> bool:
    """The writer set's held-out articles (~40 %), never tuned on."""
    return hashlib.sha256(article.encode()).digest()[0] < 102


def load(split: str) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in WRITER.open(encoding="utf-8")]
    if split == "held-out":
        return [r for r in rows if held_out(r["article"])]
    if split == "tuning":
        return [r for r in rows if not held_out(r["article"])]
    return rows


@dataclass
class Tally:
    """Outcomes by label (e.g. ``faithful/paraphrase`` or ``wrong/number_swap``) and split."""

    counts: dict[tuple[str, str, str], Counter[str]] = field(
        default_factory=lambda: defaultdict(Counter)
    )
    examples: list[dict[str, Any]] = field(default_factory=list)

    def add(
        self, what: str, label: str, split: str, outcome: str, text: str, reason: str = ""
    ) -> None:
        self.counts[(what, label, split)][outcome] += 1
        self.examples.append(
            {
                "what": what,
                "label": label,
                "split": split,
                "outcome": outcome,
                "text": text,
                "reason": reason,
            }
        )

    def rows(self, what: str, split: str | None = None) -> dict[str, Counter[str]]:
        out: dict[str, Counter[str]] = defaultdict(Counter)
        for (w, label, s), counter in self.counts.items():
            if w == what and (split is None or s == split):
                out[label].update(counter)
        return out


def _slug(text: str, n: int) -> str:
    base = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40].strip("-") or "page"
    return f"{base}-{n}"


def _claim(text: str, source: str, quotes: Iterable[str]) -> dict[str, Any]:
    return {"text": text, "evidence": [{"source": source, "quote": q} for q in quotes]}


class Bench:
    def __init__(self, work: Path, model: str) -> None:
        vault, _ = init_vault(work / "vault")
        config = vault.config_path.read_text()
        config = config.replace('auto_apply = "never"', 'auto_apply = "trusted"')
        if model != "none":
            config = config.replace('model = "none"', f'model = "{model}"')
        vault.config_path.write_text(config)
        vault.close()
        self.vault: Vault = open_vault(work / "vault")
        self.store = SourceStore(self.vault)
        self.checker = SupportChecker(load_model(self.vault.config))
        self.sources: dict[int, str] = {}
        self.pages: dict[tuple[int, int], str] = {}
        self.n = 0
        self.seconds: list[float] = []

    def source(self, i: int, row: dict[str, Any]) -> str:
        if i not in self.sources:
            text = f"# {row['article'].replace('_', ' ')}\n\n{row['context'].strip()}\n"
            name = f"writer-{i:03d}.md"
            added = self.store.add_bytes(
                text.encode(),
                origin=f"/bench/{name}",
                name=name,
                media_type="text/markdown",
                trust="trusted",
            )
            self.sources[i] = added.record.id
        return self.sources[i]

    def propose(self, *ops: dict[str, Any]) -> Any:
        plan = {
            "nonce": issue_nonce(self.vault.db, self.vault.clock, "bench"),
            "operations": list(ops),
        }
        started = time.perf_counter()
        proposal = propose(self.vault, plan, "bench-writer", "bench")
        self.seconds.append(time.perf_counter() - started)
        return proposal

    def page(self, i: int, row: dict[str, Any], n: int = 0) -> str:
        """The paragraph's page, created by the host: the article's title (the source's own
        heading) and the paragraph's first sentence verbatim."""
        if (i, n) not in self.pages:
            source = self.source(i, row)
            first = re.split(r"(?<=[.!?])\s+|\n", row["context"].strip())[0].rstrip()
            first = first[:300].rsplit(" ", 1)[0] if len(first) > 300 else first
            slug = _slug(row["article"], i + 5000 * n)
            proposal = self.propose(
                {
                    "op": "create_page",
                    "slug": slug,
                    "title": row["article"].replace("_", " "),
                    "summary": first,
                    "claims": [_claim(first, source, [first.rstrip(".")])],
                }
            )
            if proposal.status != "applied":
                raise SystemExit(
                    f"the host's own page for {row['article']} was not applied: {proposal.message}"
                )
            self.pages[(i, n)] = slug
        return self.pages[(i, n)]

    # --- outcomes, read back from the wiki and the inbox ----------------------------------------

    def claim_outcome(self, text: str) -> str:
        row = self.vault.db.execute(
            "SELECT 1 FROM claims WHERE text = ? AND status = 'active'", (text,)
        ).fetchone()
        if row:
            return "outright"
        for admission in self._pending_admissions():
            for op in admission.get("ops", []):
                if op.get("status") == "rejected":
                    continue
                for claim in op.get("claims", []):
                    if claim.get("text") == text and claim.get("status") != "rejected":
                        return "person"
        return "rejected"

    def page_text_outcome(self, slug: str, column: str, text: str, what: str) -> str:
        row = self.vault.db.execute(
            f"SELECT {column} FROM pages WHERE slug = ?", (slug,)
        ).fetchone()
        if row and row[0] == text:
            return "outright"
        for admission, plan in self._pending_admissions(with_plans=True):
            for op in admission.get("ops", []):
                if op.get("status") == "rejected":
                    continue
                planned = plan["operations"][op["index"]]
                if planned.get(what if what != "section heading" else "section") != text:
                    continue
                if _text_waits(op, what):
                    return "person"
        return "rejected"

    def _pending_admissions(self, with_plans: bool = False) -> Iterable[Any]:
        for admission, plan_json in self.vault.db.execute(
            "SELECT admission, plan_json FROM plans WHERE status = 'pending'"
        ):
            parsed = json.loads(admission)
            yield (parsed, json.loads(plan_json)) if with_plans else parsed

    def reason_of(self, proposal: Any, text: str) -> str:
        for op in proposal.admission.ops:
            for claim in op.claims:
                if claim.text == text:
                    return claim.support_reason or claim.reason
            for page_text in op.texts:
                if page_text.text == text:
                    return page_text.reason
            if op.uncertain or op.reason:
                return op.reason or json.dumps(op.uncertain)
        return proposal.message


def _label(claim: dict[str, Any]) -> str:
    return f"faithful/{claim['kind']}" if claim["faithful"] else f"wrong/{claim['error_type']}"


def run(rows: list[dict[str, Any]], modes: list[str], model: str) -> tuple[Tally, list[float]]:
    """Each mode in a vault of its own (a text applied by one mode must not count for another)."""
    tally = Tally()
    seconds: list[float] = []
    for mode in modes:
        seconds += _run_mode(rows, mode, model, tally)
    return tally, seconds


def _run_mode(rows: list[dict[str, Any]], mode: str, model: str, tally: Tally) -> list[float]:
    modes = [mode]
    work = Path(tempfile.mkdtemp(prefix=f"bench-writer-{mode}-"))
    bench = Bench(work, model)
    try:
        for i, row in enumerate(rows):
            split = "held-out" if held_out(row["article"]) else "tuning"
            source = bench.source(i, row)
            faithful = [c for c in row["claims"] if c["faithful"]]
            wrong = [c for c in row["claims"] if not c["faithful"]]
            if "claims" in modes:
                page = bench.page(i, row)
                for c in row["claims"]:
                    proposal = bench.propose(
                        {
                            "op": "add_claims",
                            "page": page,
                            "section": "Claims",
                            "claims": [_claim(c["text"], source, c["quotes"])],
                        }
                    )
                    outcome = bench.claim_outcome(c["text"])
                    tally.add(
                        "claims",
                        _label(c),
                        split,
                        outcome,
                        c["text"],
                        bench.reason_of(proposal, c["text"]),
                    )
            if "writer" in modes:
                sent = faithful + [w for k, w in enumerate(wrong) if k != i % len(wrong)]
                slug = _slug(row["article"], 1000 + i)
                proposal = bench.propose(
                    {
                        "op": "create_page",
                        "slug": slug,
                        "title": row["page_title"],
                        "summary": row["page_summary"],
                        "claims": [_claim(c["text"], source, c["quotes"]) for c in sent],
                    }
                )
                for c in sent:
                    outcome = bench.claim_outcome(c["text"])
                    tally.add(
                        "writer",
                        _label(c),
                        split,
                        outcome,
                        c["text"],
                        bench.reason_of(proposal, c["text"]),
                    )
                for what, column in (("title", "title"), ("summary", "summary")):
                    outcome = bench.page_text_outcome(slug, column, row[f"page_{what}"], what)
                    tally.add(f"writer-{what}", "faithful", split, outcome, row[f"page_{what}"])
            if "texts" in modes:
                claims = [_claim(c["text"], source, c["quotes"]) for c in faithful]
                for label, title, summary, n in (
                    ("faithful", row["page_title"], row["page_summary"], 2000),
                    ("wrong", row["wrong_title"]["text"], row["wrong_summary"]["text"], 3000),
                ):
                    slug = _slug(row["article"], n + i)
                    proposal = bench.propose(
                        {
                            "op": "create_page",
                            "slug": slug,
                            "title": title,
                            "summary": summary,
                            "claims": claims,
                        }
                    )
                    for what, text in (("title", title), ("summary", summary)):
                        key = "page_" + what if label == "faithful" else "wrong_" + what
                        kind = label if label == "faithful" else f"wrong/{row[key]['error_type']}"
                        outcome = bench.page_text_outcome(slug, what, text, what)
                        tally.add(what, kind, split, outcome, text, bench.reason_of(proposal, text))
                # each heading on its own host page, with all three faithful claims
                for n, (label, heading) in enumerate(
                    (
                        ("faithful", row["page_title"]),
                        (f"wrong/{row['wrong_title']['error_type']}", row["wrong_title"]["text"]),
                    )
                ):
                    page = bench.page(i, row, n + 1)
                    heading = heading[:80]
                    proposal = bench.propose(
                        {
                            "op": "add_claims",
                            "page": page,
                            "section": heading,
                            "claims": [_claim(c["text"], source, c["quotes"]) for c in faithful],
                        }
                    )
                    outcome = _heading_outcome(bench, page, heading)
                    tally.add(
                        "heading",
                        label,
                        split,
                        outcome,
                        heading,
                        bench.reason_of(proposal, heading),
                    )
            if "context" in modes:
                for c in row["claims"]:
                    text = c["text"]
                    proposal = bench.propose(
                        {"op": "update_context", "entries": [_claim(text, source, c["quotes"])]}
                    )
                    tally.add(
                        "context",
                        _label(c),
                        split,
                        bench.claim_outcome(text),
                        text,
                        bench.reason_of(proposal, text),
                    )
            if "answers" in modes:
                for c in row["claims"]:
                    reply = AnswerReply.model_validate(
                        {"nonce": "x", "sentences": [{"text": c["text"], "claims": ["c1"]}]}
                    )
                    kept, dropped = check_reply(reply, {"c1"}, {"c1": c["quotes"]}, bench.checker)
                    tally.add(
                        "answers",
                        _label(c),
                        split,
                        "outright" if kept else "rejected",
                        c["text"],
                        dropped[0].reason if dropped else "",
                    )
    finally:
        bench.vault.close()
        shutil.rmtree(work, ignore_errors=True)
    return bench.seconds


def _heading_outcome(bench: Bench, page: str, heading: str) -> str:
    """A section heading is in the wiki when a section of that name holds the claims."""
    row = bench.vault.db.execute(
        "SELECT 1 FROM claims WHERE page_slug = ? AND section = ? AND status = 'active'",
        (page, heading),
    ).fetchone()
    if row:
        return "outright"
    for admission, plan in bench._pending_admissions(with_plans=True):
        for op in admission.get("ops", []):
            planned = plan["operations"][op["index"]]
            if planned.get("section") == heading and _text_waits(op, "section heading"):
                return "person"
    return "rejected"


def _text_waits(op: dict[str, Any], what: str) -> bool:
    """Whether a title, summary or heading of a pending plan's operation waits for a person:
    judged text by text, a rejected text doesn't (its operation may still pass, with the host's
    text on the page); admissions recorded before texts had verdicts go by the operation."""
    if op.get("status") == "rejected":
        return False
    texts = [t for t in op.get("texts", []) if t.get("what") == what]
    if texts:
        return texts[0].get("status") != "rejected"
    return True


def _rate(counter: Counter[str], outcome: str) -> float:
    total = sum(counter.values())
    return counter[outcome] / total if total else 0.0


def summary(tally: Tally) -> dict[str, Any]:
    out: dict[str, Any] = {}
    whats = sorted({w for (w, _, _) in tally.counts})
    for what in whats:
        for split in ("tuning", "held-out"):
            rows = tally.rows(what, split)
            if not rows:
                continue
            faithful: Counter[str] = Counter()
            wrong: Counter[str] = Counter()
            for label, counter in rows.items():
                (faithful if label.startswith("faithful") else wrong).update(counter)
            by_label = {
                label: {o: counter[o] for o in OUTCOMES} for label, counter in sorted(rows.items())
            }
            worst = max(
                (_rate(c, "outright") for label, c in rows.items() if label.startswith("wrong")),
                default=0.0,
            )
            out[f"{what}/{split}"] = {
                "faithful": dict(faithful),
                "wrong": dict(wrong),
                "faithful_outright": round(_rate(faithful, "outright"), 3),
                "faithful_rejected": round(_rate(faithful, "rejected"), 3),
                "wrong_outright": round(_rate(wrong, "outright"), 3),
                "wrong_outright_worst_type": round(worst, 3),
                "by_label": by_label,
            }
    return out


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--split", default="all", choices=("all", "tuning", "held-out"))
    parser.add_argument("--model", default="none")
    parser.add_argument("--limit", type=int, default=0, help="paragraphs (0: all)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--examples", type=int, default=0, help="print N failures per column")
    args = parser.parse_args()
    modes = [m for m in args.modes.split(",") if m]
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        parser.error(f"unknown mode(s) {unknown}; choose from {', '.join(MODES)}")
    if not WRITER.exists():
        parser.error(f"{WRITER} is missing: set AFFIDAVIT_SHARED_DATA to the shared data folder")
    rows = load(args.split)
    if args.limit:
        rows = rows[: args.limit]
    started = time.perf_counter()
    tally, seconds = run(rows, modes, args.model)
    result = {
        "paragraphs": len(rows),
        "model": args.model,
        "seconds": round(time.perf_counter() - started, 1),
        "propose_p50_ms": round(statistics.median(seconds) * 1000, 1) if seconds else None,
        "goals": GOALS,
        "results": summary(tally),
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        _print(result)
    if args.examples:
        _print_examples(tally, args.examples)
    return 0


def _print(result: dict[str, Any]) -> None:
    print(
        f"{result['paragraphs']} paragraphs, model {result['model']}, "
        f"{result['seconds']} s, propose p50 {result['propose_p50_ms']} ms"
    )
    for key, r in result["results"].items():
        print(
            f"\n== {key}: faithful outright {r['faithful_outright']:.1%}, rejected "
            f"{r['faithful_rejected']:.1%}; wrong outright {r['wrong_outright']:.1%} "
            f"(worst type {r['wrong_outright_worst_type']:.1%})"
        )
        for label, counts in r["by_label"].items():
            total = sum(counts.values())
            cells = "  ".join(f"{o} {counts[o]:3d}" for o in OUTCOMES)
            print(f"  {label:34s} n={total:3d}  {cells}")


def _print_examples(tally: Tally, n: int) -> None:
    bad = defaultdict(list)
    for e in tally.examples:
        failure = (e["label"].startswith("wrong") and e["outcome"] == "outright") or (
            e["label"].startswith("faithful") and e["outcome"] != "outright"
        )
        if failure:
            bad[(e["what"], e["label"], e["outcome"])].append(e)
    for (what, label, outcome), items in sorted(bad.items()):
        print(f"\n-- {what} {label} -> {outcome}")
        for e in items[:n]:
            print(f"   [{e['split']}] {e['text']}\n      {e['reason'][:200]}")


if __name__ == "__main__":
    sys.exit(main())
