"""What an ingest did: per chunk, per source, and in total (``ingest --json``)."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["ChunkOutcome", "IngestReport", "SourceOutcome"]


@dataclass
class ChunkOutcome:
    index: int
    start: int
    end: int
    status: str  # pending | applied | partial (some texts wait) | rejected | empty | failed
    plan_id: str | None = None
    message: str = ""
    claims: dict[str, int] = field(default_factory=dict)
    reasons: dict[str, int] = field(default_factory=dict)
    operations: int = 0


@dataclass
class SourceOutcome:
    target: str
    status: str  # ingested | unchanged | failed
    source_id: str | None = None
    name: str = ""
    trust: str = ""
    message: str = ""
    chunks: list[ChunkOutcome] = field(default_factory=list)
    lineage: dict[str, Any] | None = None
    """A new version of a known origin: what was carried and proposed (:mod:`.lineage`)."""


@dataclass
class IngestReport:
    job_id: str
    sources: list[SourceOutcome] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    supersessions: dict[str, Any] | None = None
    """Findings the new claims raised against older ones, and the supersede plans proposed."""
    lint: dict[str, Any] | None = None
    """The automatic lint run this ingest triggered (``lint.every_ingests``), if any."""
    deleted: list[str] = field(default_factory=list)
    """Retraction plans proposed for known files gone from an ingested folder (:mod:`.lineage`)."""
    read_ahead: dict[str, Any] | None = None
    """Chunks the worker read ahead (:mod:`.ahead`) and, if it stopped helping, why (the rest
    was read in this process: the same result, slower)."""
    stopped: dict[str, Any] | None = None
    """Why the run stopped before the end (``--budget``: :class:`.cost.BudgetSpent`'s detail)."""

    @property
    def failed(self) -> list[SourceOutcome]:
        return [s for s in self.sources if s.status == "failed"]

    def totals(self) -> dict[str, Any]:
        plans: Counter[str] = Counter()
        claims: Counter[str] = Counter()
        reasons: Counter[str] = Counter()
        operations = 0
        for source in self.sources:
            for chunk in source.chunks:
                plans[chunk.status] += 1
                claims.update(chunk.claims)
                reasons.update(chunk.reasons)
                operations += chunk.operations
        return {
            "sources": dict(Counter(s.status for s in self.sources)),
            "chunks": dict(plans),
            "operations": operations,
            "claims": {k: claims.get(k, 0) for k in ("admitted", "quarantined", "rejected")},
            "rejected_because": dict(reasons.most_common()),
            "tokens": {"prompt": self.prompt_tokens, "completion": self.completion_tokens},
            "model_calls": self.calls,
            **({"supersessions": self.supersessions} if self.supersessions else {}),
            **({"lint": self.lint} if self.lint else {}),
            **({"deleted": self.deleted} if self.deleted else {}),
            **({"read_ahead": self.read_ahead} if self.read_ahead else {}),
            **({"stopped": self.stopped} if self.stopped else {}),
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "job_id": self.job_id,
            "totals": self.totals(),
            "sources": [asdict(s) for s in self.sources],
        }
