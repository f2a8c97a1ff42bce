"""``ingest --dry-run``: what an ingest would send the configured model, before it is sent.

For each file (a folder's files as ingest discovers them): its text is extracted as ingest
would (nothing is stored, no nonce issued, no job recorded), split into the same chunks, the
chunks an earlier run finished are left out, and each remaining chunk's first request is built
exactly as ingest builds it — the same prompt, related pages and schema — and counted
(:mod:`.cost`). Completion tokens are an estimate; prices come from ``[providers]``.

The pages the run itself will create can't be seen, but they are counted: a real ingest's
prompts list more related pages as the wiki grows, so the n-th chunk of the run is assumed to
see n more related pages than the wiki has now (each chunk before it adding one that matches),
up to ``ingest.related_pages``, each as long as the wiki's page lines are on average
(:func:`_page_line_tokens`). What it can't see at all: re-asks after an invalid reply, the
reviewer's calls (``ingest.review``), and URLs (fetched only by a real ingest).
"""

from __future__ import annotations

import secrets
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import AffidavitError
from ..hashing import sha256_hex
from ..providers.base import Provider
from ..retrieval.tokens import count_tokens
from ..sources.lineage import current_version
from ..sources.store import AddResult, SourceRecord
from ..vault import Vault
from .chunking import changed_chunks, chunk_text
from .cost import Prices, expected_completion, request_tokens
from .lineage import changed_units
from .pipeline import STARTED, Ingestor


@dataclass
class SourceEstimate:
    target: str
    status: str  # new | new version | known | failed | not estimated
    name: str = ""
    source_id: str = ""
    version: int = 0  # the version it is (or would be) of its origin; 0 when not read
    previous_id: str = ""  # the stored version it replaces (or would), "" if none
    previous_version: int = 0  # that version's number, 0 if none
    chunks: int = 0
    chunks_to_ingest: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    message: str = ""


@dataclass
class Estimate:
    provider: str
    model: str
    reads_prompt: bool
    max_output_tokens: int
    prices: Prices
    sources: list[SourceEstimate] = field(default_factory=list)

    def totals(self) -> dict[str, Any]:
        prompt = sum(s.prompt_tokens for s in self.sources)
        completion = sum(s.completion_tokens for s in self.sources)
        calls = sum(s.chunks_to_ingest for s in self.sources) if self.reads_prompt else 0
        return {
            "sources": len(self.sources),
            "chunks": sum(s.chunks for s in self.sources),
            "chunks_to_ingest": sum(s.chunks_to_ingest for s in self.sources),
            "model_calls": calls,
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "completion_tokens_at_most": calls * self.max_output_tokens,
            "cost": self.prices.cost(prompt, completion),
            "currency": self.prices.currency if self.prices.configured else None,
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "dry_run": True,
            "provider": self.provider,
            "model": self.model,
            "totals": self.totals(),
            "sources": [asdict(s) for s in self.sources],
        }


def estimate(
    vault: Vault, provider: Provider, targets: list[str], trust: str | None = None
) -> Estimate:
    """What ingesting ``targets`` with ``provider`` would send it; changes nothing."""
    ingestor = Ingestor(vault, provider, job_id="dry-run")
    result = Estimate(
        provider=provider.name,
        model=str(getattr(getattr(provider, "options", None), "model", "") or ""),
        reads_prompt=provider.reads_prompt,
        max_output_tokens=ingestor.max_tokens,
        prices=Prices.of(vault.config),
    )
    run = _Run(_page_line_tokens(vault), int(vault.config.related_pages))
    for target in targets:
        if "://" in target:
            result.sources.append(
                SourceEstimate(target, "not estimated", message="a URL is fetched only by ingest")
            )
            continue
        path = Path(target).expanduser()
        try:
            files = ingestor.store.discover(path) if path.is_dir() else [path]
        except AffidavitError as exc:
            result.sources.append(SourceEstimate(target, "failed", message=str(exc)))
            continue
        result.sources += [_estimate_file(ingestor, file, trust, run) for file in files]
    return result


@dataclass
class _Run:
    """What the estimate knows of the run so far: the chunks counted before this one."""

    page_line_tokens: int
    related_limit: int
    chunks_before: int = 0

    def pages_to_come(self, shown_now: int) -> int:
        """Tokens of the related pages this chunk's prompt will list that don't exist yet."""
        extra = max(0, min(self.related_limit - shown_now, self.chunks_before))
        return extra * self.page_line_tokens


PAGE_LINE_TOKENS = 40
"""Tokens of one related page's line in a prompt when the wiki has no pages to measure."""


def _page_line_tokens(vault: Vault, sample: int = 200) -> int:
    """The mean tokens of a page's line in the prompt ("- slug | title | summary"), over the
    most recent pages (a bounded sample), or :data:`PAGE_LINE_TOKENS` for an empty wiki."""
    rows = vault.db.execute(
        "SELECT slug, title, summary FROM pages ORDER BY rowid DESC LIMIT ?", (sample,)
    ).fetchall()
    if not rows:
        return PAGE_LINE_TOKENS
    return round(sum(count_tokens(f"- {r[0]} | {r[1]} | {r[2]}") for r in rows) / len(rows))


def _read(ingestor: Ingestor, path: Path, trust: str | None) -> tuple[SourceRecord, str, bool]:
    """The source ``path`` would be and its text; True when it is stored already."""
    store = ingestor.store
    try:
        source_id = sha256_hex(path.read_bytes())
    except OSError as exc:
        raise AffidavitError(f"{path} can't be read ({exc.strerror}). Check the path.") from None
    if store.resolve(source_id) == source_id:
        return store.get(source_id), store.text(source_id), True
    prepared = store._prepare_file(path, trust)  # extracted, nothing written
    if isinstance(prepared, AddResult):  # stored meanwhile
        return prepared.record, store.text(prepared.record.id), True
    return prepared.record, prepared.text.decode("utf-8"), False


def _estimate_file(ingestor: Ingestor, path: Path, trust: str | None, run: _Run) -> SourceEstimate:
    try:
        record, text, known = _read(ingestor, path, trust)
    except AffidavitError as exc:
        return SourceEstimate(str(path), "failed", message=str(exc))
    chunks = chunk_text(text, ingestor.chunk_chars)
    latest = (
        current_version(ingestor.vault.db, record.origin_key)
        if not known and record.origin_key
        else None
    )
    if latest is not None:  # a new version of a known origin: its changed stretches are read
        fresh = changed_units(ingestor.store.text(latest[0]), text)
        chunks = changed_chunks(text, fresh, ingestor.chunk_chars)
    done = {
        int(row[0])
        for row in ingestor.vault.db.execute(
            "SELECT start FROM ingested_chunks WHERE source_id = ? AND outcome != ?",
            (record.id, STARTED),
        )
    }
    todo = [chunk for chunk in chunks if chunk.start not in done]
    found = SourceEstimate(
        str(path),
        "known" if known else "new" if latest is None else "new version",
        name=record.name,
        source_id=record.id,
        chunks=len(chunks),
        chunks_to_ingest=len(todo),
    )
    if latest is not None:  # what ingest will store it as (sources.store: latest version + 1)
        found.version, found.previous_id, found.previous_version = latest[1] + 1, *latest
    elif known:
        found.version, found.previous_id = record.version, record.previous_id or ""
        found.previous_version = record.version - 1 if record.previous_id else 0
    else:
        found.version = 1
    nonce = secrets.token_urlsafe(18)  # the length of a real one; never issued
    for chunk in todo:
        task = ingestor._task(record, text, chunk, len(chunks), nonce=nonce)
        request, _ = ingestor.request_for(record, text, chunk, task)
        if ingestor.provider.reads_prompt:
            found.prompt_tokens += request_tokens(request, ingestor.provider)
            found.prompt_tokens += run.pages_to_come(len(task.pages))
        found.completion_tokens += expected_completion(request, ingestor.provider)
        run.chunks_before += 1
    if not todo:
        found.message = "already ingested: nothing to send"
    elif latest is not None:
        found.message = (
            f"version {latest[1] + 1} of known source {latest[0][:12]} (version {latest[1]}): "
            "only its changed text is read (its unchanged claims are carried)"
        )
    return found


__all__ = ["Estimate", "SourceEstimate", "estimate"]
