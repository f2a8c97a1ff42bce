"""``POST …/ask`` over a PostgreSQL vault: the same answerer as a SQLite vault's
(:class:`~affidavit.ask.answer.Asker` over :class:`~affidavit.storage.pg_ask.PgAskWiki`), the
same provider choice and response (:func:`~.vaults.ask_provider`, :func:`~.vaults.ask_response`),
and ``save`` proposing the answer's page through the PostgreSQL inbox and its gate
(:meth:`~.pg_vaults.PgVault.propose`) as the caller's plan.
"""

from __future__ import annotations

from contextlib import nullcontext
from datetime import timedelta

from psycopg import sql
from psycopg.rows import tuple_row

from ..ask import Asker
from ..ask.answer import Answer
from ..ask.save import answer_plan, answer_title, free_slug
from ..storage import pg_served as rows
from ..storage.pg_ask import PgAskWiki
from .models import AskRequest, AskResponse, ProposalOut
from .pg_vaults import PgVault
from .vaults import ask_provider, ask_response

SAVE_NONCE_HOURS = 1
"""A saved answer's plan is proposed at once: its nonce needs to live only that long."""


def ask(vault: PgVault, request: AskRequest, author: str) -> AskResponse:
    """Answer a question (W8) from the vault's claims; with ``save`` (the caller holds the
    propose role) an answer is proposed as ``author``'s page."""
    provider = ask_provider(vault.config, request.model)
    try:
        wiki = PgAskWiki(vault.storage, vault.name, vault.config, vault.clock)
        with wiki.held() if provider is None else nullcontext(wiki) as reads:
            answer = Asker(reads, provider).ask(request.question, min_trust=request.min_trust)
    finally:
        if provider is not None:
            provider.close()
    saved = save(vault, answer, author) if request.save and answer.verdict == "answered" else None
    return ask_response(answer, saved)


def save(vault: PgVault, answer: Answer, author: str) -> ProposalOut:
    """Propose ``answer`` (checked) as a new page, through the gate, as ``author``'s plan (a
    token's waits for a person, W13, and is charged to its quota)."""
    schema = sql.Identifier(vault.schema)
    with vault.storage.pool.connection() as conn, conn.transaction():
        taken = {
            str(r[0])
            for r in conn.cursor(row_factory=tuple_row).execute(
                sql.SQL(
                    "SELECT slug FROM {s}.pages UNION SELECT slug FROM {s}.slug_reservations"
                ).format(s=schema)
            )
        }
        nonce = rows.issue_nonce(
            conn, vault.schema, "ask-save", vault.clock(), timedelta(hours=SAVE_NONCE_HOURS)
        )
    plan = answer_plan(answer, nonce, free_slug(answer.question, taken))
    return vault.propose(plan, author, f"ask:{answer_title(answer)[:60]}")
