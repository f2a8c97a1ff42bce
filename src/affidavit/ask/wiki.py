"""What the answerer (:class:`~affidavit.ask.answer.Asker`) reads and writes of a wiki, as one
contract for both backends: a SQLite vault (:class:`SqliteWiki`, here) and a vault of a
PostgreSQL database (:class:`affidavit.storage.pg_ask.PgAskWiki`). The answerer itself — the
retrieval around a question, the extractive answerer or the model, the citation and support
checks — is the same code over either.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any, Protocol

from ..clock import Clock, iso
from ..config import Config
from ..db import transaction
from ..retrieval.search import Hit, Retriever
from ..vault import Vault
from .context import SourceOrder, WikiWords, following, misspelt
from .context import mentions as fts5_mentions
from .log import AskLog, Issued, write
from .pending import PendingPlans
from .sections import TitleReads
from .speakers import TitledPages
from .texts import TextReads, flagged, source_texts


class AskWiki(WikiWords, SourceOrder, TextReads, TitleReads, TitledPages, PendingPlans, Protocol):
    """One vault as the answerer sees it."""

    @property
    def config(self) -> Config:
        """The vault's settings (``candidates``, ``context_tokens``, the model, support)."""

    @property
    def clock(self) -> Clock: ...

    @property
    def state_dir(self) -> Path | None:
        """Where the support check keeps its parses (None: nowhere)."""

    def search(self, query: str, *, k: int = 10, min_trust: str = "untrusted") -> list[Hit]:
        """The ``k`` best active claims of tier ``min_trust`` or above for ``query``."""

    def record_call(self, provider: str, prompt: int, completion: int, ms: int) -> None:
        """One call of the model for an answer (its tokens and time)."""

    def log(self, issued: Issued, row: tuple[Any, ...]) -> None:
        """The answer's nonce and its question row (``ask.log.QUESTION_SQL``'s columns)."""


class SqliteWiki:
    """:class:`AskWiki` over a SQLite vault: its retriever (tantivy or FTS5, vectors when
    indexed), FTS5 for the question's names, the sources' files, and the vault's tables."""

    def __init__(self, vault: Vault, retriever: Retriever, log: AskLog | None = None) -> None:
        self.vault = vault
        self.retriever = retriever
        self.ask_log = log

    @property
    def db(self) -> sqlite3.Connection:
        return self.vault.db

    @property
    def config(self) -> Config:
        return self.vault.config

    @property
    def clock(self) -> Clock:
        return self.vault.clock

    @property
    def state_dir(self) -> Path | None:
        return None if self.vault.read_only else self.vault.state_dir

    def search(self, query: str, *, k: int = 10, min_trust: str = "untrusted") -> list[Hit]:
        return self.retriever.search(query, k=k, min_trust=min_trust)

    def hits(self, claim_ids: list[str], min_trust: str = "untrusted") -> list[Hit]:
        return self.retriever.hits(claim_ids, min_trust)

    def titled_pages(self, terms: list[str], limit: int) -> list[tuple[str, str]]:
        marks = " OR ".join('"' + t.replace('"', "") + '"' for t in terms)
        rows = self.db.execute(
            "SELECT p.slug, p.title FROM pages_fts JOIN pages p ON p.rowid = pages_fts.rowid "
            "WHERE pages_fts MATCH ? ORDER BY bm25(pages_fts), p.slug LIMIT ?",
            (marks, int(limit)),
        ).fetchall()
        return [(str(r[0]), str(r[1])) for r in rows]

    def pending_plans(self) -> list[tuple[str, str, str]]:
        rows = self.db.execute(
            "SELECT id, origin, plan_json FROM plans WHERE status = 'pending' AND expires_at > ? "
            "AND (plan_json LIKE '%supersede_claim%' OR plan_json LIKE '%retract_claim%') "
            "ORDER BY created_at, id",
            (iso(self.vault.clock()),),
        ).fetchall()
        return [(str(r[0]), str(r[1]), str(r[2])) for r in rows]

    def page_claims(self, slug: str, limit: int) -> list[str]:
        rows = self.db.execute(
            "SELECT id FROM claims WHERE page_slug = ? AND status = 'active' "
            "ORDER BY position, id LIMIT ?",
            (slug, int(limit)),
        ).fetchall()
        return [str(r[0]) for r in rows]

    def page_sources(self, slug: str) -> int:
        row = self.db.execute(
            "SELECT count(DISTINCT e.source_key) FROM claims c JOIN evidence_rows e "
            "ON e.claim_id = c.id WHERE c.page_slug = ? AND c.status = 'active'",
            (slug,),
        ).fetchone()
        return int(row[0])

    def following(self, source_id: str, start: int, end: int, limit: int) -> list[str]:
        return following(self.vault.db, source_id, start, end, limit)

    def mentions(self, word: str) -> int:
        return fts5_mentions(self.vault.db, word)

    def misspelt(self, word: str) -> bool:
        return misspelt(self.vault.db, word)

    def claims_stored(self) -> int:
        row = self.vault.db.execute("SELECT coalesce(max(rowid), 0) FROM claims").fetchone()
        return int(row[0])

    def source_texts(self, source_ids: list[str]) -> dict[str, str]:
        return source_texts(self.vault, source_ids)

    def flagged(self, source_id: str, start: int, end: int) -> bool:
        return flagged(self.vault, source_id, start, end)

    def record_call(self, provider: str, prompt: int, completion: int, ms: int) -> None:
        with transaction(self.vault.db):
            self.vault.db.execute(
                "INSERT INTO model_calls (job_id, at, provider, model, purpose, prompt_tokens, "
                "completion_tokens, duration_ms, outcome) VALUES (NULL, ?, ?, '', 'ask', ?, ?, ?, "
                "'ok')",
                (iso(self.vault.clock()), provider, prompt, completion, ms),
            )

    def log(self, issued: Issued, row: tuple[Any, ...]) -> None:
        """In the daemon's batch (:class:`~affidavit.ask.log.AskLog`), else written now."""
        if self.ask_log is not None:
            self.ask_log.add(self.vault, issued, row)
        else:
            write(self.vault, [issued.row], [row])
