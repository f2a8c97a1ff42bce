"""What the gate reads (:mod:`affidavit.gate.reads`) on a PostgreSQL vault, inside the door's
transaction: :class:`PgReads` (pages, reservations, claims, links) and :class:`PgSources` (the
sources' ids, texts, records, sanitizer flags and integrity), which is also the quote verifier's
:class:`~affidavit.evidence.SourceTexts` — one verifier (:mod:`affidavit.evidence`) and one gate
(:func:`affidavit.gate.admission.admit`) for both backends.

Every source the gate reads is re-hashed (its bytes against its id, its text against
``text_sha256``) on its first read in the transaction. As on SQLite (whose ``SourceStore`` reads
a text file as it is and re-hashes it in ``check_integrity``), the gate reads the text as stored
and a source that fails is reported by :meth:`PgSources.check_integrity`: the gate's provenance
check rejects the claims citing it, and only them, while the rest of the plan and of its batch go
in. What the door writes is read through :meth:`PgSources.intact_text`, which refuses it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import psycopg
from psycopg import sql

from ..agents import is_agent
from ..errors import AffidavitError, IntegrityError, NotFoundError
from ..gate.duplicates import LIVE, PageIndex, PageIndexes
from ..gate.reads import ClaimRow
from ..sources.sanitizer import Flag
from ..sources.store import MIN_LOOKUP_LENGTH, MIN_REF_LENGTH, SourceRecord
from .content import verified_bytes, verified_text

Conn = psycopg.Connection[dict[str, Any]]
_HEX = re.compile(r"[0-9a-f]+")


def _q(text: str, schema: str) -> sql.Composed:
    return sql.SQL(text).format(s=sql.Identifier(schema))


class PgReads:
    """:class:`~affidavit.gate.reads.WikiReads` on a PostgreSQL vault's schema."""

    backend = "postgresql"

    def __init__(self, conn: Conn, schema: str) -> None:
        self.conn, self.schema = conn, schema

    def _x(self, text: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        return self.conn.execute(_q(text, self.schema), params).fetchall()

    def existing_pages(self, slugs: Sequence[str]) -> set[str]:
        rows = self._x("SELECT slug FROM {s}.pages WHERE slug = ANY(%s)", (list(slugs),))
        return {str(r["slug"]) for r in rows}

    def page_plan(self, slug: str) -> str | None:
        rows = self._x("SELECT plan_id FROM {s}.pages WHERE slug = %s", (slug,))
        return str(rows[0]["plan_id"]) if rows else None

    def page_texts(self, slug: str) -> dict[str, str]:
        rows = self._x("SELECT title, summary FROM {s}.pages WHERE slug = %s", (slug,))
        return {"title": str(rows[0]["title"]), "summary": str(rows[0]["summary"])} if rows else {}

    def reservations(self) -> dict[str, str]:
        rows = self._x("SELECT slug, plan_id FROM {s}.slug_reservations")
        return {str(r["slug"]): str(r["plan_id"]) for r in rows}

    def agent_reservations(self) -> dict[str, str]:
        rows = self._x(
            "SELECT r.slug, r.plan_id, p.author, p.origin FROM {s}.slug_reservations r "
            "JOIN {s}.plans p ON p.id = r.plan_id"
        )
        return {
            str(r["slug"]): str(r["plan_id"])
            for r in rows
            if is_agent(str(r["author"]), str(r["origin"]))
        }

    def claim(self, claim_id: str) -> ClaimRow | None:
        rows = self._x(
            "SELECT id, page_slug, text, status, trust FROM {s}.claims WHERE id = %s", (claim_id,)
        )
        return ClaimRow(**{k: str(v) for k, v in rows[0].items()}) if rows else None

    def claim_quotes(self, claim_id: str) -> list[tuple[str, str]]:
        rows = self._x(
            "SELECT source_id, quote FROM {s}.evidence WHERE claim_id = %s ORDER BY idx",
            (claim_id,),
        )
        return [(str(r["source_id"]), str(r["quote"])) for r in rows]

    def active_claims(self, page: str) -> list[str]:
        rows = self._x(
            "SELECT id FROM {s}.claims WHERE page_slug = %s AND status = 'active' "
            "ORDER BY position, id",
            (page,),
        )
        return [str(r["id"]) for r in rows]

    def active_quotes(self, claim_ids: Sequence[str]) -> list[tuple[str, str]]:
        rows = self._x(
            "SELECT e.quote, e.source_id FROM {s}.evidence e JOIN {s}.claims c "
            "ON c.id = e.claim_id WHERE c.status = 'active' AND c.id = ANY(%s) "
            'ORDER BY c.id COLLATE "C", e.idx',
            (list(claim_ids),),
        )
        return [(str(r["quote"]), str(r["source_id"])) for r in rows]

    def claim_rows(self, ids: list[str]) -> dict[str, Mapping[str, Any]]:
        rows = self._x("SELECT * FROM {s}.claims WHERE id = ANY(%s)", (list(ids),))
        return {str(r["id"]): r for r in rows}

    def derived_rows(self, statuses: tuple[str, ...]) -> list[Mapping[str, Any]]:
        return list(
            self._x(
                "SELECT * FROM {s}.claims WHERE derived_from != '[]' AND status = ANY(%s) "
                'ORDER BY page_slug COLLATE "C", position, id COLLATE "C"',
                (list(statuses),),
            )
        )

    def source_name(self, source_id: str) -> str:
        rows = self._x("SELECT name FROM {s}.sources WHERE id = %s", (source_id,))
        return str(rows[0]["name"]) if rows else ""

    def retracted_sources(self) -> set[str]:
        return {
            str(r["id"]) for r in self._x("SELECT id FROM {s}.sources WHERE status = 'retracted'")
        }

    def citing_claims(self, source_id: str, statuses: tuple[str, ...]) -> list[Mapping[str, Any]]:
        return list(
            self._x(
                "SELECT c.* FROM {s}.claims c WHERE c.status = ANY(%s) AND EXISTS (SELECT 1 "
                "FROM {s}.evidence e WHERE e.claim_id = c.id AND e.source_id = %s) "
                'ORDER BY c.page_slug COLLATE "C", c.position, c.id COLLATE "C"',
                (list(statuses), source_id),
            )
        )

    def evidence_sources(self, claim_id: str) -> list[tuple[str, str]]:
        rows = self._x(
            'SELECT DISTINCT e.source_id COLLATE "C" AS source_id, s.trust FROM {s}.evidence e '
            "JOIN {s}.sources s ON s.id = e.source_id WHERE e.claim_id = %s ORDER BY 1",
            (claim_id,),
        )
        return [(str(r["source_id"]), str(r["trust"])) for r in rows]

    def pending_plans(self) -> list[tuple[str, str, str, str]]:
        rows = self._x(
            "SELECT id, author, origin, plan_json FROM {s}.plans WHERE status = 'pending' "
            'ORDER BY created_at COLLATE "C", id COLLATE "C"'
        )
        return [
            (str(r["id"]), str(r["author"]), str(r["origin"]), str(r["plan_json"])) for r in rows
        ]

    def link_exists(self, src: str, dst: str) -> bool:
        return bool(self._x("SELECT 1 FROM {s}.links WHERE src = %s AND dst = %s", (src, dst)))

    def page_index(self, slug: str, indexes: PageIndexes) -> PageIndex:
        """Read whole: the door's transaction is short and SQLite's change log (temp triggers)
        has no counterpart here yet."""
        rows = self._x(
            "SELECT id, text, position, n FROM {s}.claims WHERE page_slug = %s "
            "AND status = ANY(%s) ORDER BY position, n",
            (slug, list(LIVE)),
        )
        index = PageIndex(indexes.comparable, indexes.min_words)
        index.sync((r["id"], r["text"], (r["position"], r["n"])) for r in rows)
        return index

    def versions_before(self, source_id: str) -> list[str]:
        out: list[str] = []
        seen = {source_id}
        current: str | None = source_id
        while current is not None:  # a cycle, which no write makes, stops the walk
            rows = self._x("SELECT previous_id FROM {s}.sources WHERE id = %s", (current,))
            current = rows[0]["previous_id"] if rows else None
            if current is None or current in seen:
                break
            seen.add(current)
            out.append(str(current))
        return out

    def carry_rows(
        self, source_id: str
    ) -> tuple[dict[str, tuple[str, str]], list[tuple[str, int, str, str, int, int]]]:
        citing = "SELECT claim_id FROM {s}.evidence WHERE source_id = %s"
        status = {
            str(r["id"]): (str(r["status"]), str(r["trust"]))
            for r in self._x(f"SELECT id, status, trust FROM {{s}}.claims WHERE id IN ({citing})",
                             (source_id,))
        }  # fmt: skip
        rows = self._x(
            'SELECT claim_id, idx, source_id, quote, start, "end" FROM {s}.evidence '
            "WHERE claim_id IN "
            f'({citing}) ORDER BY claim_id COLLATE "C", idx',
            (source_id,),
        )
        return status, [
            (
                str(r["claim_id"]),
                int(r["idx"]),
                str(r["source_id"]),
                str(r["quote"]),
                int(r["start"]),
                int(r["end"]),
            )
            for r in rows
        ]


class PgSources:
    """The gate's and the verifier's view of a PostgreSQL vault's sources, read in the door's
    transaction; texts re-hashed on their first read and kept for the transaction."""

    def __init__(self, conn: Conn, schema: str) -> None:
        self.conn, self.schema = conn, schema
        self._rows: dict[str, dict[str, Any]] = {}
        self._texts: dict[str, str] = {}
        self._broken: dict[str, str] = {}  # source -> why its bytes or text fail their hash
        self._flags: dict[str, list[Flag]] = {}
        self._prefixes: dict[str, list[str]] = {}

    def _prefixed(self, ref: str) -> list[str]:
        """The sources (at most two) whose id starts with ``ref``, read once per reference:
        the gate, the verifier and the door each resolve every quote's source, inside the
        door's lock (where no source can be added: adding one takes that lock)."""
        found = self._prefixes.get(ref)
        if found is None:
            rows = self.conn.execute(
                _q("SELECT id FROM {s}.sources WHERE id LIKE %s ORDER BY id LIMIT 2", self.schema),
                (ref + "%",),  # ref is hex only: nothing LIKE would read as a pattern
            ).fetchall()
            found = self._prefixes[ref] = [str(r["id"]) for r in rows]
        return found

    def _row(self, source_id: str) -> dict[str, Any]:
        row = self._rows.get(source_id)
        if row is None:
            row = self.conn.execute(
                _q("SELECT * FROM {s}.sources WHERE id = %s", self.schema), (source_id,)
            ).fetchone()
            if row is None:
                raise NotFoundError(f"No source with id {source_id[:64]}. Check the id.")
            self._rows[source_id] = row
        return row

    def resolve(self, ref: str) -> str | None:
        ref = ref.strip().lower()
        if not MIN_REF_LENGTH <= len(ref) <= 64 or not _HEX.fullmatch(ref):
            return None
        found = self._prefixed(ref)
        return found[0] if len(found) == 1 else None

    def get(self, id_or_prefix: str) -> SourceRecord:
        ref = id_or_prefix.strip().lower()
        if len(ref) < MIN_LOOKUP_LENGTH or len(ref) > 64 or not _HEX.fullmatch(ref):
            raise NotFoundError(f"{id_or_prefix[:80]!r} is not a source id; give its SHA-256.")
        found = self._prefixed(ref)
        if len(found) != 1:
            raise NotFoundError(
                f"{ref} names {'no' if not found else 'more than one'} source; give its SHA-256."
            )
        row = self._row(found[0])
        return SourceRecord(
            id=str(row["id"]), origin=str(row["origin"]), name=str(row["name"]),
            media_type=str(row["media_type"]), original_file="", text_file="",
            text_sha256=str(row["text_sha256"]), size_bytes=int(row["size_bytes"]),
            text_chars=int(row["text_chars"]), trust=str(row["trust"]),
            status=str(row["status"]), added_at=str(row["added_at"]),
            text_map=json.loads(row["text_map"]), flags=self.flags(found[0]),
            origin_key=str(row.get("origin_key") or ""), version=int(row.get("version") or 1),
            previous_id=row.get("previous_id"), stated=str(row.get("stated") or ""),
            stated_key=str(row.get("stated_key") or ""),
            stated_rank=int(row.get("stated_rank") or 0),
        )  # fmt: skip

    def text(self, source_id: str) -> str:
        """The source's text as stored now (as SQLite's ``SourceStore.text``), its bytes and text
        re-hashed on the first read: an altered source is reported by :meth:`check_integrity`,
        so the gate rejects the claims citing it (provenance)."""
        text = self._texts.get(source_id)
        if text is None:
            row = self._row(source_id)
            text = str(row["text"])
            try:
                verified_bytes(source_id, bytes(row["data"]))
                verified_text(source_id, text, str(row["text_sha256"]))
            except IntegrityError as exc:
                self._broken[source_id] = str(exc)
            self._texts[source_id] = text
        return text

    def intact_text(self, source_id: str) -> str:
        """:meth:`text`, refused (:class:`~affidavit.errors.IntegrityError`) when the source's
        bytes or text were altered: what the door writes."""
        text = self.text(source_id)
        if source_id in self._broken:
            raise IntegrityError(self._broken[source_id])
        return text

    def flags(self, source_id: str) -> list[Flag]:
        known = self._flags.get(source_id)
        if known is None:
            rows = self.conn.execute(
                _q('SELECT kind, start, "end", detail FROM {s}.source_flags WHERE source_id = %s '
                   'ORDER BY start, "end", kind', self.schema),
                (source_id,),
            ).fetchall()  # fmt: skip
            known = self._flags[source_id] = [
                Flag(str(r["kind"]), int(r["start"]), int(r["end"]), str(r["detail"])) for r in rows
            ]
        return list(known)

    def check_integrity(self, source_id: str) -> list[str]:
        try:
            self.intact_text(source_id)
        except AffidavitError as exc:
            return [str(exc)]
        return []
