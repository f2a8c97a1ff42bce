"""The wiki's content on PostgreSQL (``pg003_content``): sources (content-addressed bytes), pages,
claims and evidence, written by the door inside its advisory-locked transaction
(:meth:`PostgresDoor.apply_plan`) and read back checked (:mod:`.content`).

What the door applies here is a plan's ``create_page`` and ``add_claims`` operations with verbatim
quotes: each quote is looked up, under the lock, in the cited source's text as stored — its bytes
re-hashed against the source's id and its text against ``text_sha256`` first — and the source's
own words at the offsets found are what is written (W3), never the proposer's string. A plan with
any other operation, or a citation by sentence number, is refused whole before anything is
written: the gate (:mod:`affidavit.gate`) that admits those runs on SQLite only (docs/storage.md).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import psycopg
from psycopg import sql

from ..config import TRUST_TIERS
from ..errors import ConflictError
from ..gate.texts import DEFAULT_SECTION
from ..hashing import sha256_hex
from ..plan.schema import AddClaims, ClaimDraft, CreatePage, Plan, parse_plan
from ..sources.extract import locator
from ..store.writer import claim_id
from .base import check_text
from .content import (
    PageRecord,
    SourceRecord,
    page_record,
    verified_bytes,
    verified_text,
)

Conn = psycopg.Connection[dict[str, Any]]


def _q(text: str, schema: str) -> sql.Composed:
    return sql.SQL(text).format(s=sql.Identifier(schema))


def add_source(
    conn: Conn,
    schema: str,
    data: bytes,
    *,
    text: str | None,
    origin: str,
    name: str,
    media_type: str,
    trust: str,
    added_at: str,
    text_map: dict[str, Any] | None = None,
) -> str:
    """Store ``data`` under its SHA-256 (idempotent: the same bytes are one source); returns the
    id. ``text`` is its extracted text (default: the bytes as UTF-8)."""
    if not isinstance(data, bytes):
        raise TypeError(f"a source's data must be bytes, not {type(data).__name__}")
    if text is None:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise ConflictError(
                "the source is not UTF-8 text; extract its text and pass it as text=..."
            ) from None
    if trust not in TRUST_TIERS:
        raise ConflictError(f"trust {trust!r} is not one of {', '.join(TRUST_TIERS)}.")
    for field, value in (("source text", text), ("origin", origin), ("name", name),
                         ("media type", media_type), ("added_at", added_at)):  # fmt: skip
        check_text(field, value)
    source_id = sha256_hex(data)
    conn.execute(
        _q("INSERT INTO {s}.sources (id, origin, name, media_type, data, text, text_sha256, "
           "size_bytes, text_chars, trust, added_at, text_map) "
           "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO NOTHING",
           schema),
        (source_id, origin, name, media_type, data, text, sha256_hex(text), len(data), len(text),
         trust, added_at, json.dumps(text_map or {})),
    )  # fmt: skip
    return source_id


def resolve_source(conn: Conn, schema: str, ref: str) -> str:
    """The full id of the source ``ref`` names (its id or a unique prefix of >= 12 hex digits)."""
    rows = conn.execute(
        _q("SELECT id FROM {s}.sources WHERE id LIKE %s ORDER BY id LIMIT 2", schema),
        (ref.replace("\\", "").replace("%", "").replace("_", "") + "%",),
    ).fetchall()
    if len(ref) < 12 or not rows:
        raise ConflictError(
            f"no source {ref[:64]!r} in this vault; `affidavit sources` lists them."
        )
    if len(rows) > 1:
        raise ConflictError(f"source {ref!r} is ambiguous; give more of its SHA-256.")
    return str(rows[0]["id"])


def source_row(conn: Conn, schema: str, source_id: str) -> dict[str, Any]:
    row = conn.execute(
        _q("SELECT * FROM {s}.sources WHERE id = %s", schema), (source_id,)
    ).fetchone()
    if row is None:
        raise ConflictError(f"no source {source_id[:12]} in this vault; add it first.")
    return row


def source_record(row: dict[str, Any]) -> SourceRecord:
    return SourceRecord(
        str(row["id"]), str(row["origin"]), str(row["name"]), str(row["media_type"]),
        str(row["trust"]), str(row["status"]), str(row["added_at"]), int(row["size_bytes"]),
        int(row["text_chars"]),
    )  # fmt: skip


def checked_source(row: dict[str, Any]) -> tuple[bytes, str]:
    """A source row's bytes and text, each re-hashed: an altered one is an IntegrityError."""
    data = verified_bytes(str(row["id"]), bytes(row["data"]))
    return data, verified_text(str(row["id"]), str(row["text"]), str(row["text_sha256"]))


class ContentWriter:
    """Writes one plan's ``create_page`` / ``add_claims`` operations, inside the door's
    transaction (the caller holds the vault's advisory lock and has re-checked the plan)."""

    def __init__(self, conn: Conn, schema: str, plan_id: str, now: str) -> None:
        self.conn, self.schema, self.plan_id, self.now = conn, schema, plan_id, now
        self.claim_ids: list[str] = []
        self._sources: dict[str, tuple[str, str, Callable[[int], str]]] = {}
        self._positions: dict[str, int] = {}

    def _x(self, text: str, params: tuple[Any, ...] = ()) -> psycopg.Cursor[dict[str, Any]]:
        return self.conn.execute(_q(text, self.schema), params)

    def _source(self, ref: str) -> tuple[str, str, str, Callable[[int], str]]:
        """The cited source's id, trust, text (re-hashed, as stored now) and locator."""
        source_id = resolve_source(self.conn, self.schema, ref)
        found = self._sources.get(source_id)
        if found is None:
            row = source_row(self.conn, self.schema, source_id)
            if row["status"] != "active":
                raise ConflictError(f"source {source_id[:12]} is {row['status']}; cite another.")
            _, text = checked_source(row)
            found = (str(row["trust"]), text, locator(text, json.loads(row["text_map"])))
            self._sources[source_id] = found
        return (source_id, *found)

    def write(self, plan: Plan) -> list[dict[str, object]]:
        """Every operation of ``plan``; refuses the whole plan first if one can't be written
        here. Returns a summary per operation for the audit entry."""
        for index, op in enumerate(plan.operations):
            if not isinstance(op, CreatePage | AddClaims):
                raise ConflictError(
                    f"plan {self.plan_id[:12]}: operation {index + 1} ({op.op}) can't be applied "
                    "on PostgreSQL yet (only create_page and add_claims; docs/storage.md)."
                )
        summary: list[dict[str, object]] = []
        for index, op in enumerate(plan.operations):
            assert isinstance(op, CreatePage | AddClaims)
            if isinstance(op, CreatePage):
                page = op.slug
                try:
                    with self.conn.transaction():  # a savepoint: the error names the page
                        self._x(
                            "INSERT INTO {s}.pages (slug, title, summary, category, created_at, "
                            "updated_at, plan_id) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                            (page, op.title, op.summary, op.category, self.now, self.now,
                             self.plan_id),
                        )  # fmt: skip
                except psycopg.errors.UniqueViolation:
                    raise ConflictError(
                        f"plan {self.plan_id[:12]}: page {page!r} already exists; add claims to "
                        "it with add_claims instead."
                    ) from None
                title = op.title
            else:
                page = op.page
                touched = self._x(
                    "UPDATE {s}.pages SET updated_at = %s WHERE slug = %s", (self.now, page)
                )
                if touched.rowcount != 1:
                    raise ConflictError(
                        f"plan {self.plan_id[:12]}: no page {page!r} to add claims to; create it "
                        "first."
                    )
                title = f"{page} (+{len(op.claims)} claims)"
            section = op.section or DEFAULT_SECTION[op.op]
            ids = [self._claim(index, j, draft, page, section) for j, draft in enumerate(op.claims)]
            summary.append({"index": index, "kind": op.op, "title": title, "claims": ids})
        return summary

    def _claim(self, op_index: int, index: int, draft: ClaimDraft, page: str, section: str) -> str:
        spans = []
        for n, ev in enumerate(draft.evidence, 1):
            if ev.quote is None or ev.cited is not None:
                raise ConflictError(
                    f"plan {self.plan_id[:12]}: claim {index + 1} of operation {op_index + 1} "
                    f"cites by sentence number (evidence {n}); on PostgreSQL cite a verbatim "
                    "quote for now (docs/storage.md)."
                )
            source_id, trust, text, locate = self._source(ev.source)
            start = text.find(ev.quote)
            if start < 0:  # W3: the source's words, verbatim, or nothing is written
                raise ConflictError(
                    f"plan {self.plan_id[:12]}: claim {index + 1} of operation {op_index + 1}: "
                    f"quote {n} is not in source {source_id[:12]} verbatim; quote its exact words."
                )
            end = start + len(ev.quote)
            spans.append((source_id, trust, text[start:end], start, end, locate(start)))
        cid = claim_id(page, draft)
        if self._x("SELECT 1 FROM {s}.claims WHERE id = %s", (cid,)).fetchone():
            cid = claim_id(page, draft, salt=f"{self.plan_id}/{op_index}/{index}")
        if page not in self._positions:
            row = self._x(
                "SELECT coalesce(max(position), -1) + 1 AS next FROM {s}.claims "
                "WHERE page_slug = %s",
                (page,),
            ).fetchone()
            self._positions[page] = int(row["next"]) if row else 0
        position = self._positions[page]
        self._positions[page] = position + 1
        trust = min((s[1] for s in spans), key=TRUST_TIERS.index)  # the weakest source's
        self._x(
            "INSERT INTO {s}.claims (id, page_slug, section, position, text, status, trust, "
            "plan_id, created_at, derived_from) VALUES (%s, %s, %s, %s, %s, 'active', %s, %s, "
            "%s, %s)",
            (cid, page, section, position, draft.text, trust, self.plan_id, self.now,
             json.dumps(list(draft.derived_from))),
        )  # fmt: skip
        for idx, (source_id, _, quote, start, end, where) in enumerate(spans):
            self._x(
                'INSERT INTO {s}.evidence (claim_id, idx, source_id, quote, start, "end", '
                "location) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                (cid, idx, source_id, quote, start, end, where),
            )
        self.claim_ids.append(cid)
        return cid


def load_plan(conn: Conn, schema: str, plan_id: str) -> Plan:
    row = conn.execute(
        _q("SELECT plan_json FROM {s}.plans WHERE id = %s", schema), (plan_id,)
    ).fetchone()
    if row is None:
        raise ConflictError(f"no plan {plan_id[:12]} in this vault; `affidavit inbox` lists them.")
    return parse_plan(str(row["plan_json"]))


def read_page(conn: Conn, schema: str, slug: str) -> PageRecord | None:
    """The page with its claims (in order) and their evidence, each quote checked against its
    source's text (re-hashed) at its offsets."""
    page = conn.execute(_q("SELECT * FROM {s}.pages WHERE slug = %s", schema), (slug,)).fetchone()
    if page is None:
        return None
    claims = conn.execute(
        _q("SELECT * FROM {s}.claims WHERE page_slug = %s ORDER BY position", schema), (slug,)
    ).fetchall()
    evidence = conn.execute(
        _q('SELECT e.claim_id, e.idx, e.source_id, e.quote, e.start, e."end", e.location '
           "FROM {s}.evidence e JOIN {s}.claims c ON c.id = e.claim_id "
           "WHERE c.page_slug = %s ORDER BY e.claim_id, e.idx", schema), (slug,),
    ).fetchall()  # fmt: skip
    texts: dict[str, str] = {}

    def text_of(source_id: str) -> str:
        if source_id not in texts:
            texts[source_id] = checked_source(source_row(conn, schema, source_id))[1]
        return texts[source_id]

    return page_record(page, claims, evidence, text_of)
