"""What the answerer reads and writes of a PostgreSQL vault (:class:`PgAskWiki`, an
:class:`~affidavit.ask.wiki.AskWiki`): the same :class:`~affidavit.ask.answer.Asker` answers a
question here as over a SQLite vault — retrieval around the question, the extractive answerer
or the model, and the citation and support checks before anyone sees the answer.

- Retrieval is :class:`~affidavit.storage.pg_search.PgFullText` (``tsvector``/GIN, the fallback
  FTS5 is on SQLite; no link neighbours and no vectors on PostgreSQL yet).
- A question's names are counted in the claims' ``tsvector`` (``phraseto_tsquery``: the words
  in order, as FTS5's phrase query), and a misspelling is looked for among the indexed words
  (``ts_stat``, which reads every claim's vector: only for a name no claim holds, and kept
  until a claim is added).
- The sources' texts are the database's, each re-hashed against its row's ``text_sha256``
  before a quote is cut from it (an altered text is left out: the stored quote is shown) and
  then kept in the process by that hash, as a SQLite vault's files are
  (:mod:`affidavit.ask.texts`).
- Each answer's nonce (``nonces``, purpose ``ask``) and question row (``questions``, migration
  ``pg010_ask``) are written in one transaction, and each model call in ``model_calls``.

Every value is a bound parameter; the schema is an identifier of a checked vault name.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from psycopg import sql
from psycopg.rows import tuple_row

from ..ask.context import misspelt_among
from ..ask.log import Issued
from ..ask.texts import keep, kept
from ..clock import Clock, iso, utc_now
from ..config import Config
from ..hashing import sha256_hex
from ..retrieval.search import Hit
from .base import check_text, check_vault_name
from .pg_search import PgFullText
from .postgres import Conn, PostgresStorage

MENTIONS_COUNTED = 1000
"""Claims counted for a name at most (as on SQLite); a phrase of stopwords only — which the
English configuration leaves out of every vector — counts as this many: as common as a word
can be, so it is neither unknown nor rare."""


VOCABULARIES = 16
"""Vaults whose words (:meth:`PgAskWiki.vocabulary`) a process keeps, the most recently used."""
_VOCABULARY: OrderedDict[tuple[str, int], tuple[int, dict[str, tuple[str, ...]]]] = OrderedDict()
_VOCABULARY_LOCK = threading.Lock()


class PgAskWiki:
    """One PostgreSQL vault as the answerer sees it (thread-safe: each call takes its own
    connection from the pool)."""

    def __init__(
        self,
        storage: PostgresStorage,
        vault: str,
        config: Config | None = None,
        clock: Clock = utc_now,
    ) -> None:
        self.storage = storage
        self.schema_name = f"v_{check_vault_name(vault)}"
        self.schema = sql.Identifier(self.schema_name)
        self._config = config or Config()
        self._clock = clock
        self._search = PgFullText(storage, vault)
        self._held: Conn | None = None

    @contextmanager
    def held(self) -> Iterator[PgAskWiki]:
        """This wiki with one pooled connection for every read and write until the block ends
        (an answer's twenty-odd small queries otherwise each check a connection out of the
        pool, and the pool checks each one): for an answer that asks no model, which would
        hold the connection while it waits."""
        with self.storage.pool.connection() as conn:
            self._held = conn
            try:
                yield self
            finally:
                self._held = None

    @contextmanager
    def _conn(self) -> Iterator[Conn]:
        if self._held is not None:
            yield self._held
        else:
            with self.storage.pool.connection() as conn:
                yield conn

    @property
    def config(self) -> Config:
        return self._config

    @property
    def clock(self) -> Clock:
        return self._clock

    @property
    def state_dir(self) -> Path | None:
        return None  # no vault folder: the support check keeps its parses in memory only

    def _rows(self, query: str, params: tuple[Any, ...] | list[Any]) -> list[tuple[Any, ...]]:
        with self._conn() as conn:
            cursor = conn.cursor(row_factory=tuple_row)
            return cursor.execute(sql.SQL(query).format(s=self.schema), params).fetchall()

    # --- retrieval -------------------------------------------------------------------------

    def search(self, query: str, *, k: int = 10, min_trust: str = "untrusted") -> list[Hit]:
        return self._search.search(query, k=k, min_trust=min_trust, conn=self._held)

    def hits(self, claim_ids: list[str], min_trust: str = "untrusted") -> list[Hit]:
        return self._search.hits(claim_ids, min_trust, conn=self._held)

    def titled_pages(self, terms: list[str], limit: int) -> list[tuple[str, str]]:
        """Pages whose title holds any of ``terms`` (English stems, as the claims' search),
        best first; the caller keeps only titles the question names whole."""
        words = [t for t in (check_text("term", t) for t in terms) if t.strip()]
        if not words:
            return []
        rows = self._rows(
            "SELECT slug, title FROM {s}.pages, "
            "websearch_to_tsquery('english', %s) AS q "
            "WHERE to_tsvector('english', title) @@ q "
            "ORDER BY ts_rank(to_tsvector('english', title), q) DESC, slug COLLATE \"C\" "
            "LIMIT %s",
            (" or ".join(w.replace('"', " ").replace("-", " ") for w in words), int(limit)),
        )
        return [(str(r[0]), str(r[1])) for r in rows]

    def pending_plans(self) -> list[tuple[str, str, str]]:
        rows = self._rows(
            "SELECT id, origin, plan_json FROM {s}.plans WHERE status = 'pending' "
            "AND expires_at > %s AND (plan_json LIKE '%%supersede_claim%%' "
            "OR plan_json LIKE '%%retract_claim%%') "
            'ORDER BY created_at, id COLLATE "C"',
            (iso(self._clock()),),
        )
        return [(str(r[0]), str(r[1]), str(r[2])) for r in rows]

    def page_claims(self, slug: str, limit: int) -> list[str]:
        rows = self._rows(
            "SELECT id FROM {s}.claims WHERE page_slug = %s AND status = 'active' "
            'ORDER BY position, id COLLATE "C" LIMIT %s',
            (check_text("slug", slug), int(limit)),
        )
        return [str(r[0]) for r in rows]

    def page_sources(self, slug: str) -> int:
        rows = self._rows(
            "SELECT count(DISTINCT e.source_id) FROM {s}.claims c JOIN {s}.evidence e "
            "ON e.claim_id = c.id WHERE c.page_slug = %s AND c.status = 'active'",
            (check_text("slug", slug),),
        )
        return int(rows[0][0])

    def following(self, source_id: str, start: int, end: int, limit: int) -> list[str]:
        rows = self._rows(
            "SELECT e.claim_id FROM {s}.evidence e JOIN {s}.claims c ON c.id = e.claim_id "
            "WHERE e.source_id = %s AND e.start >= %s AND e.start <= %s AND e.idx = 0 "
            "AND c.status = 'active' AND c.page_slug != '' "
            'ORDER BY e.start, c.id COLLATE "C" LIMIT %s',
            (check_text("source", source_id), int(start), int(end), int(limit)),
        )
        return [str(r[0]) for r in rows]

    # --- the question's names --------------------------------------------------------------

    def mentions(self, word: str) -> int:
        """How many claims (any status) hold ``word`` (its words in order, English stems), at
        most :data:`MENTIONS_COUNTED`."""
        words = " ".join(word.split())
        if not words:
            return 0
        rows = self._rows(
            "SELECT numnode(q), (SELECT count(*) FROM (SELECT 1 FROM {s}.claims c "
            "WHERE c.tsv @@ q LIMIT %s) t) FROM phraseto_tsquery('english'::regconfig, %s) q",
            (MENTIONS_COUNTED, check_text("word", words)),
        )
        nodes, found = rows[0]
        return MENTIONS_COUNTED if int(nodes) == 0 else int(found)

    def misspelt(self, word: str) -> bool:
        """:func:`~affidavit.ask.context.misspelt` over the words of the claims' vectors
        (:meth:`vocabulary`)."""
        return misspelt_among(word, lambda first: self.vocabulary().get(first, ()))

    def vocabulary(self) -> dict[str, tuple[str, ...]]:
        """Every word of the claims' vectors, by first letter. ``ts_stat`` reads every claim's
        vector (55 ms at 2,800 claims: docs/benchmarks.md, pgask26), so the words are kept per
        vault until a claim is added: a claim's text never changes once written, so the
        claims' insertion sequence moving is the only way the words can change (a vault made
        again under the same name is another schema, another key)."""
        with self._conn() as conn:
            cursor = conn.cursor(row_factory=tuple_row)
            key_row = cursor.execute(
                sql.SQL(
                    "SELECT to_regnamespace(%s)::oid, CASE WHEN is_called THEN last_value "
                    "ELSE 0 END FROM {s}.claims_n_seq"
                ).format(s=self.schema),
                (self.schema_name,),
            ).fetchone()
            assert key_row is not None
            key = (conn.info.dsn, int(key_row[0]))  # the database (no password), the schema
            with _VOCABULARY_LOCK:
                known = _VOCABULARY.get(key)
                if known is not None and known[0] == int(key_row[1]):
                    _VOCABULARY.move_to_end(key)
                    return known[1]
            inner = sql.SQL("SELECT tsv FROM {s}.claims").format(s=self.schema)
            rows = cursor.execute(
                "SELECT word FROM ts_stat(%s) ORDER BY word", (inner.as_string(conn),)
            ).fetchall()
        buckets: dict[str, list[str]] = {}
        for (term,) in rows:
            buckets.setdefault(str(term)[:1], []).append(str(term))
        words = {first: tuple(terms) for first, terms in buckets.items()}
        with _VOCABULARY_LOCK:
            _VOCABULARY[key] = (int(key_row[1]), words)
            _VOCABULARY.move_to_end(key)
            while len(_VOCABULARY) > VOCABULARIES:
                _VOCABULARY.popitem(last=False)
        return words

    def claims_stored(self) -> int:
        """Claims ever stored: the claims' insertion sequence, read in constant time."""
        rows = self._rows(
            "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM {s}.claims_n_seq", ()
        )
        return int(rows[0][0])

    # --- the sources -----------------------------------------------------------------------

    def source_texts(self, source_ids: list[str]) -> dict[str, str]:
        """The texts of ``source_ids`` that hash to their rows' ``text_sha256``, by id."""
        if not source_ids:
            return {}
        ids = [check_text("source", s) for s in source_ids]
        digests = self._rows("SELECT id, text_sha256 FROM {s}.sources WHERE id = ANY(%s)", (ids,))
        out: dict[str, str] = {}
        missing: list[str] = []
        for source_id, digest in digests:
            text = kept(str(digest))
            if text is None:
                missing.append(str(source_id))
            else:
                out[str(source_id)] = text
        if missing:
            rows = self._rows(
                "SELECT id, text, text_sha256 FROM {s}.sources WHERE id = ANY(%s)", (missing,)
            )
            for source_id, text, digest in rows:
                if sha256_hex(text) == digest:  # an altered text is never quoted from
                    keep(str(digest), str(text))
                    out[str(source_id)] = str(text)
        return out

    def flagged(self, source_id: str, start: int, end: int) -> bool:
        rows = self._rows(
            'SELECT 1 FROM {s}.source_flags WHERE source_id = %s AND start < %s AND "end" > %s '
            "LIMIT 1",
            (check_text("source", source_id), int(end), int(start)),
        )
        return bool(rows)

    # --- what an answer writes -------------------------------------------------------------

    def record_call(self, provider: str, prompt: int, completion: int, ms: int) -> None:
        with self._conn() as conn:
            conn.execute(
                sql.SQL(
                    "INSERT INTO {s}.model_calls (job_id, at, provider, model, purpose, "
                    "prompt_tokens, completion_tokens, duration_ms, outcome) "
                    "VALUES (NULL, %s, %s, '', 'ask', %s, %s, %s, 'ok')"
                ).format(s=self.schema),
                (iso(self._clock()), provider, int(prompt), int(completion), int(ms)),
            )

    def log(self, issued: Issued, row: tuple[Any, ...]) -> None:
        """The answer's nonce and question rows, in one transaction."""
        with self._conn() as conn, conn.transaction():
            conn.execute(
                sql.SQL(
                    "INSERT INTO {s}.nonces (nonce, purpose, issued_at, expires_at) "
                    "VALUES (%s, %s, %s, %s)"
                ).format(s=self.schema),
                issued.row,
            )
            conn.execute(
                sql.SQL(
                    "INSERT INTO {s}.questions (at, question, min_trust, provider, retrieved, "
                    "answer, verdict, dropped, prompt_tokens, conversation) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
                ).format(s=self.schema),
                tuple(check_text("answer log", v) if isinstance(v, str) else v for v in row),
            )


def questions(conn: Conn, vault: str, limit: int = 100) -> list[dict[str, Any]]:
    """The newest answers' rows of ``vault``'s ask log, newest first."""
    schema = sql.Identifier(f"v_{check_vault_name(vault)}")
    query = sql.SQL("SELECT * FROM {s}.questions ORDER BY id DESC LIMIT %s").format(s=schema)
    return list(conn.execute(query, (int(limit),)).fetchall())
