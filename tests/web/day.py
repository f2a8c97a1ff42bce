"""A day's inbox for the desk's browser test and its benchmark: one ledger source and 50 pending
plans through the real gate — 20 whose page title waits for a person (uncertain: the quotes don't
say "trade"), 20 supported ingest plans, 5 that extend a page one of those creates (they depend on
it), 3 lint-made link fixes and 2 agents' plans (MCP)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from affidavit import inbox
from affidavit.plan.nonce import issue_nonce
from affidavit.sources.store import SourceStore
from affidavit.vault import Vault, init_vault

WAITING, SUPPORTED, DEPENDENT, LINT, AGENT = 20, 20, 5, 3, 2
ENGINE = "model:extractive"


def sentence(i: int) -> str:
    return f"Ledger entry {i} records {100 + i} barrels of flour shipped from Harbour {i % 37}."


@dataclass
class Day:
    root: Path
    waiting: list[str] = field(default_factory=list)
    supported: list[str] = field(default_factory=list)
    dependent: list[str] = field(default_factory=list)
    lint: list[str] = field(default_factory=list)
    agent: list[str] = field(default_factory=list)

    @property
    def plans(self) -> list[str]:
        return [*self.waiting, *self.supported, *self.dependent, *self.lint, *self.agent]


def build_day(root: Path, extra_pages: int = 0) -> Day:
    """The vault at ``root`` with a day's 50 pending plans (and ``extra_pages`` applied pages)."""
    vault, _ = init_vault(root)
    day = Day(root)
    try:
        count = 200 + extra_pages
        text = "# Ledger\n\n" + "\n".join(sentence(i) for i in range(count)) + "\n"
        source = (
            SourceStore(vault)
            .add_bytes(
                text.encode(),
                origin="/day/ledger.md",
                name="ledger.md",
                media_type="text/markdown",
                trust="trusted",
            )
            .record.id
        )

        def page(slug: str, i: int, title: str = "") -> dict[str, Any]:
            return {
                "op": "create_page",
                "slug": slug,
                "title": title or f"Ledger entry {i}",
                "summary": sentence(i),
                "claims": [claim(i, source)],
            }

        applied = [page("ledger-a", 0), page("ledger-b", 1), page("ledger-c", 2)]
        applied += [page(f"old-{n}", 200 + n) for n in range(extra_pages)]
        # the extra pages link in a ring with gaps: every 10th page is an orphan
        applied += [
            {"op": "link_pages", "page": f"old-{n}", "to": f"old-{(n + 1) % extra_pages}"}
            for n in range(extra_pages)
            if (n + 1) % 10
        ]
        for start in range(0, len(applied), 20):
            plan_id = _propose(vault, applied[start : start + 20], "owner", "setup")
            inbox.approve(vault, plan_id, None, "owner")
        for n in range(WAITING):  # the title's "trade" is in no quote: it waits (W11)
            i = 10 + n
            ops = [page(f"trade-{n}", i, f"Harbour {i % 37} flour trade")]
            day.waiting.append(_propose(vault, ops, ENGINE, f"ingest:ledger.md#{n + 1}"))
        for n in range(SUPPORTED):
            ops = [page(f"entry-{n}", 40 + n)]
            day.supported.append(_propose(vault, ops, ENGINE, f"ingest:ledger.md#{30 + n}"))
        for n in range(DEPENDENT):  # part 2 of a chunk: extends the page part 1 creates
            ops = [{"op": "add_claims", "page": f"entry-{n}", "claims": [claim(70 + n, source)]}]
            day.dependent.append(_propose(vault, ops, ENGINE, f"ingest:ledger.md#{60 + n}"))
        for n, (a, b) in enumerate(
            [("ledger-a", "ledger-b"), ("ledger-b", "ledger-c"), ("ledger-c", "ledger-a")]
        ):
            ops = [{"op": "link_pages", "page": a, "to": b}]
            day.lint.append(_propose(vault, ops, "lint", "lint"))
            assert n < LINT
        for n in range(AGENT):
            ops = [page(f"agent-{n}", 80 + n)]
            day.agent.append(_propose(vault, ops, "claude via mcp", "mcp:claude"))
    finally:
        vault.close()
    assert len(set(day.plans)) == 50
    return day


def claim(i: int, source: str) -> dict[str, Any]:
    return {"text": sentence(i), "evidence": [{"source": source, "quote": sentence(i)}]}


def _propose(vault: Vault, ops: list[dict[str, Any]], author: str, origin: str) -> str:
    plan = {"nonce": issue_nonce(vault.db, vault.clock, "day"), "operations": ops}
    return inbox.propose(vault, json.dumps(plan), author, origin).plan_id


__all__ = ["Day", "build_day", "sentence"]
