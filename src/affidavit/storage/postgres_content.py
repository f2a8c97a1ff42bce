"""The wiki's content on PostgreSQL (``pg003_content``, ``pg004_gate``, ``pg006_context``):
sources (content-addressed bytes, their text, sanitizer flags and versions), pages, claims,
evidence, links and the context's entries, written by the door inside its advisory-locked
transaction (:meth:`PostgresDoor.apply_plan`) and read back checked (:mod:`.content`).

The door writes what the gate admitted (:func:`affidavit.gate.admission.admit`, reading this
vault through :mod:`.postgres_gate`): each quote found again by the one verifier
(:mod:`affidavit.evidence`), under the lock, in the cited source's text as stored — its bytes
re-hashed against the source's id and its text against ``text_sha256`` first — and the source's
own words at the offsets found are what is written (W3), never the proposer's string; a
``retract_claim``, ``supersede_claim``, ``retract_source`` or replacing ``update_context`` ends
claims as the gate's blast radius says; a ``carry_source`` re-points evidence at a newer version
of its source, keeping each row as it was (``evidence_carried``). A person may approve some
operations of a plan (:func:`selection`): the others stay pending (docs/storage.md).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import psycopg
from psycopg import sql

from ..config import TRUST_TIERS
from ..errors import ConflictError, IntegrityError
from ..gate.texts import DEFAULT_SECTION, host_texts
from ..gate.verdicts import ADMITTED, QUARANTINED, Admission, ClaimResult, Held, OpResult
from ..hashing import sha256_hex
from ..plan.schema import (
    AddClaims,
    CarrySource,
    ClaimDraft,
    CreatePage,
    LinkPages,
    Plan,
    RetractClaim,
    RetractSource,
    SupersedeClaim,
    UpdateContext,
    parse_plan,
)
from ..sources.extract import locator
from ..sources.lineage import origin_key
from ..sources.sanitizer import Flag, scan
from ..sources.stated import stated_of
from ..store.blast import LIVE as BLAST_LIVE
from ..store.blast import BlastRadius, blast_radius, claim_radius
from ..store.parts import Parts
from ..store.summary_follows import follows
from ..store.writer import claim_id
from .base import check_text
from .content import (
    ClaimRecord,
    PageRecord,
    SourceRecord,
    claim_records,
    page_record,
    verified_bytes,
    verified_text,
)
from .postgres_gate import PgReads

Conn = psycopg.Connection[dict[str, Any]]
Audit = Callable[[str, str, str | None, str, Mapping[str, Any]], object]


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
    flags: list[Flag] | None = None,
) -> str:
    """Store ``data`` under its SHA-256 (idempotent: the same bytes are one source); returns the
    id. ``text`` is its extracted text (default: the bytes as UTF-8); ``flags`` its sanitizer
    flags (default: :func:`affidavit.sources.sanitizer.scan` of the text)."""
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
    found = [
        Flag(f.kind, f.start, f.end, f.detail) for f in (scan(text) if flags is None else flags)
    ]
    for flag in found:
        if not 0 <= flag.start <= flag.end <= len(text):
            raise ConflictError(f"flag {flag.kind} at {flag.start}-{flag.end} is outside the text.")
        check_text("flag", flag.kind + flag.detail)
    added = conn.execute(
        _q("INSERT INTO {s}.sources (id, origin, name, media_type, data, text, text_sha256, "
           "size_bytes, text_chars, trust, added_at, text_map) "
           "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO NOTHING",
           schema),
        (source_id, origin, name, media_type, data, text, sha256_hex(text), len(data), len(text),
         trust, added_at, json.dumps(text_map or {})),
    )  # fmt: skip
    if added.rowcount == 1:  # the same bytes again: their flags and version are stored already
        key = origin_key(origin)
        latest = conn.execute(
            _q("SELECT id, version FROM {s}.sources WHERE origin_key = %s AND id != %s "
               "ORDER BY version DESC LIMIT 1", schema), (key, source_id),
        ).fetchone()  # fmt: skip
        stated = stated_of(name, origin, data, text)  # the release it states (as SQLite's)
        conn.execute(
            _q("UPDATE {s}.sources SET origin_key = %s, version = %s, previous_id = %s, "
               "stated = %s, stated_key = %s, stated_rank = %s WHERE id = %s", schema),
            (key, int(latest["version"]) + 1 if latest else 1,
             latest["id"] if latest else None, stated.value if stated else "",
             stated.key if stated else "", stated.rank if stated else 0, source_id),
        )  # fmt: skip
        with conn.cursor() as cur:
            cur.executemany(
                _q('INSERT INTO {s}.source_flags (source_id, kind, start, "end", detail) '
                   "VALUES (%s, %s, %s, %s, %s)", schema),
                [(source_id, f.kind, f.start, f.end, f.detail) for f in found],
            )  # fmt: skip
    return source_id


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


WRITABLE = (
    CreatePage, AddClaims, LinkPages, RetractClaim, SupersedeClaim, UpdateContext, RetractSource,
    CarrySource,
)  # fmt: skip
"""The operations the door writes on PostgreSQL: every one of the plan schema's but
``update_page`` (its mirror does not follow a page's new words yet)."""


class ContentWriter:
    """Writes what the gate admitted of one plan (:func:`affidavit.gate.admission.admit`, run
    by :meth:`.postgres.PostgresDoor.apply_plan` just before): each passing operation's passing
    claims with their verified evidence — the source's own words at the offsets the verifier
    found (W3) — and the host's text for a title, summary or heading the gate rejected, as
    SQLite's :class:`~affidavit.store.writer.Writer` writes a person's approval; or, as it
    writes an approval that takes only what needs no person (:class:`~affidavit.store.parts.Parts`),
    each operation's sure part, the host's texts standing in for those that wait, and later
    the held part a person approves. Inside the door's transaction (the caller holds the
    vault's advisory lock and re-checked the plan)."""

    def __init__(
        self, conn: Conn, schema: str, plan_id: str, now: str, sources: Any, audit: Audit
    ) -> None:
        self.conn, self.schema, self.plan_id, self.now = conn, schema, plan_id, now
        self.sources = sources  # postgres_gate.PgSources: texts re-hashed on first read
        self.audit = audit  # the door's audit append (a retraction's own entry)
        self.claim_ids: list[str] = []
        self.superseded: list[str] = []
        self.retracted: list[str] = []
        self.context_changed = False
        self.claims_by_op: dict[int, list[str]] = {}
        self.headings: dict[int, bool] = {}  # op -> its heading went in (else the host's)
        self._locators: dict[str, Callable[[int], str]] = {}
        self._positions: dict[str, int] = {}

    def _x(self, text: str, params: tuple[Any, ...] = ()) -> psycopg.Cursor[dict[str, Any]]:
        return self.conn.execute(_q(text, self.schema), params)

    def write(
        self, plan: Plan, admission: Admission, parts: Parts | None = None
    ) -> list[dict[str, object]]:
        """``parts`` of ``plan`` (default: every admitted operation whole); returns a summary
        per operation for the audit entry."""
        parts = parts if parts is not None else Parts(tuple(admission.admitted_ops))
        chosen = set(parts.ops)
        summary: list[dict[str, object]] = []
        for result in admission.ops:
            if result.status not in (ADMITTED, QUARANTINED) or result.index not in chosen:
                continue
            op = plan.operations[result.index]
            entry: dict[str, object] = {"index": result.index, "kind": op.op}
            if isinstance(op, LinkPages):
                self._x(
                    "INSERT INTO {s}.links (src, dst, plan_id) VALUES (%s, %s, %s)",
                    (op.page, op.to, self.plan_id),
                )
                self._x("UPDATE {s}.pages SET updated_at = %s WHERE slug = %s", (self.now, op.page))
                entry["title"] = f"{op.page} → {op.to}"
            elif isinstance(op, RetractClaim):
                radius = claim_radius(PgReads(self.conn, self.schema), [op.claim])
                self._retract(result.index, op.op, op.reason, radius)
                entry["title"] = (
                    f"{op.claim}: {len(radius.retracted)} claim(s) retracted, "
                    f"{len(radius.derived)} derived"
                )
            elif isinstance(op, SupersedeClaim):
                entry.update(self._supersede(op, result, admission.support_version))
            elif isinstance(op, UpdateContext):
                held = parts.held.get(result.index, Held())
                entry["title"] = self._context(op, result, admission.support_version, held)
                if held:
                    entry["held"] = {"claims": list(held.claims), "texts": []}
            elif isinstance(op, RetractSource):
                entry["title"] = self._retract_source(result.index, op)
            elif isinstance(op, CarrySource):
                entry.update(self._carry(result.detail))
            else:
                assert isinstance(op, CreatePage | AddClaims), "refused before the gate ran"
                entry.update(self._page_op(op, result, admission.support_version, parts))
            summary.append(entry)
        return summary

    def _page_op(
        self, op: CreatePage | AddClaims, result: OpResult, check: str, parts: Parts
    ) -> dict[str, object]:
        """A page operation: whole, its sure part (``parts.held`` names what waits), or,
        completing an earlier apply (``parts.remainder``), its held part — as SQLite's
        :meth:`affidavit.store.writer.Writer._page_op` writes them."""
        held, rest = parts.held.get(result.index, Held()), parts.remainder.get(result.index)
        page = op.slug if isinstance(op, CreatePage) else op.page
        texts = {t.what: t for t in result.texts}
        own = [c for c in result.claims if not c.role and c.passes]
        drafts = list(op.claims)
        entry: dict[str, object] = {"page": page}  # the mirror follows the page's texts by it
        if rest is not None:  # completing an earlier apply: the held claims and texts only
            wrote = [w for w in rest.texts if w in texts and texts[w].passes]
            heading = "section heading" in wrote or (
                rest.heading and "section heading" not in rest.texts
            )
            self._finish(op, page, wrote, rest)
            entry["remainder"] = wrote
            if isinstance(op, CreatePage):  # what replaces the host's texts now (the mirror's)
                entry["set"] = {w: getattr(op, w) for w in ("title", "summary") if w in wrote}
            if "section heading" in wrote and rest.written:
                entry["moved"] = list(rest.written)
                entry["section"] = op.section
            passing = [(c, drafts[c.index]) for c in own]
            title = f"{page} (the rest approved: {', '.join([*wrote, f'{len(passing)} claims'])})"
        else:
            host, heading = host_texts(op.op, texts, held)
            if host:
                entry["host"] = host
            self.headings[result.index] = heading
            passing = [(c, drafts[c.index]) for c in own if c.index not in held.claims]
            if isinstance(op, CreatePage):
                title = host.get("title", op.title)
                try:
                    with self.conn.transaction():  # a savepoint: the error names the page
                        self._x(
                            "INSERT INTO {s}.pages (slug, title, summary, category, created_at, "
                            "updated_at, plan_id) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                            (page, title, host.get("summary", op.summary), op.category,
                             self.now, self.now, self.plan_id),
                        )  # fmt: skip
                except psycopg.errors.UniqueViolation:
                    raise ConflictError(
                        f"plan {self.plan_id[:12]}: page {page!r} already exists; add claims to "
                        "it with add_claims instead."
                    ) from None
            else:
                self._x("UPDATE {s}.pages SET updated_at = %s WHERE slug = %s", (self.now, page))
                title = f"{page} (+{len(passing)} claims)"
        sections: dict[str, str] = {}
        ids = []
        for claim, draft in passing:
            section = op.section if heading else claim.section or DEFAULT_SECTION[op.op]
            cid = self._claim(result.index, claim, draft, page, section, check)
            ids.append(cid)
            if section != op.section:
                sections[cid] = section
        if sections:
            entry["sections"] = sections
        if held:
            entry["held"] = {"claims": list(held.claims), "texts": list(held.texts)}
        entry.update(title=title, claims=ids)
        return entry

    def _finish(self, op: CreatePage | AddClaims, page: str, wrote: list[str], rest: Held) -> None:
        """The held texts a person approves now replace the host's: the page's title or
        summary, or the heading of the claims the operation wrote when the rest went in."""
        for what in ("title", "summary"):
            if what in wrote and isinstance(op, CreatePage):
                self._x(
                    "UPDATE {s}.pages SET " + what + " = %s WHERE slug = %s",
                    (getattr(op, what), page),
                )
        if "section heading" in wrote and rest.written:
            self._x(
                "UPDATE {s}.claims SET section = %s WHERE page_slug = %s AND id = ANY(%s)",
                (op.section, page, list(rest.written)),
            )
        self._x("UPDATE {s}.pages SET updated_at = %s WHERE slug = %s", (self.now, page))

    def _context(self, op: UpdateContext, result: OpResult, check: str, held: Held) -> str:
        """Context entries are claims of page ``''`` (section "Context"), as on SQLite; a
        ``replace`` first retracts what the gate's blast radius of the current entries says goes."""
        if "radius" in result.detail:
            radius = BlastRadius.from_json(result.detail["radius"])
            self._retract(result.index, op.op, "replaced by a new context", radius)
        drafts = list(op.entries)
        passing = [
            (c, drafts[c.index])
            for c in result.claims
            if not c.role and c.passes and c.index not in held.claims
        ]
        for claim, draft in passing:
            self._claim(result.index, claim, draft, "", "Context", check)
        self.context_changed = True
        return f"context ({op.mode}, {len(passing)} entries)"

    def _retract_source(self, index: int, op: RetractSource) -> str:
        """The source is retracted: the claims resting on it alone go (with their syntheses),
        the others keep their other evidence at the weakest trust of it, as on SQLite
        (:meth:`affidavit.store.writer.Writer._retract_source`); the radius is computed again
        here, under the lock."""
        source_id = self.sources.resolve(op.source)
        assert source_id is not None  # the gate's targets check found it
        radius = blast_radius(PgReads(self.conn, self.schema), source_id, exclude_plan=self.plan_id)
        self._x("UPDATE {s}.sources SET status = 'retracted' WHERE id = %s", (source_id,))
        for kept in radius.kept:
            self._x("UPDATE {s}.claims SET trust = %s WHERE id = %s", (kept.new_trust, kept.id))
        self._x(
            "UPDATE {s}.pages SET updated_at = %s WHERE slug = ANY(%s)", (self.now, radius.pages)
        )
        self.context_changed |= "" in radius.pages
        self._retract(index, op.op, op.reason, radius)
        return (
            f"source {radius.source_name} ({source_id[:12]}): {len(radius.retracted)} claim(s) "
            f"retracted, {len(radius.derived)} derived, {len(radius.kept)} kept with other evidence"
        )

    def _carry(self, detail: dict[str, object]) -> dict[str, object]:
        """Re-point the carried claims' evidence at the newer version, at the offsets the gate
        found there (:mod:`affidavit.gate.carry`), as SQLite's door does
        (:meth:`affidavit.store.writer.Writer._carry`); each row as it was is kept in
        ``evidence_carried``. Returns what the audit entry keeps: both versions' offsets."""
        old, new = str(detail["source"]), str(detail["to"])
        carried = detail["carried"]
        trust = detail.get("trust", {})
        assert isinstance(carried, dict) and isinstance(trust, dict)
        text = self.sources.intact_text(new)  # re-hashed in this transaction
        locate = locator(text, self.sources.get(new).text_map)
        ids = sorted(carried)
        was: dict[str, list[list[int]]] = {}
        for row in self._x(
            'SELECT claim_id, idx, start, "end" FROM {s}.evidence WHERE source_id = %s '
            'AND claim_id = ANY(%s) ORDER BY claim_id COLLATE "C", idx',
            (old, ids),
        ).fetchall():
            was.setdefault(str(row["claim_id"]), []).append(
                [int(row["idx"]), int(row["start"]), int(row["end"])]
            )
        moves = [(cid, idx, start, end) for cid, spans in carried.items()
                 for idx, start, end in spans]  # fmt: skip
        with self.conn.cursor() as cur:
            cur.executemany(
                _q('INSERT INTO {s}.evidence_carried (plan_id, claim_id, idx, source_id, quote, '
                   'start, "end", location) SELECT %s, claim_id, idx, source_id, quote, start, '
                   '"end", location FROM {s}.evidence WHERE claim_id = %s AND idx = %s '
                   "AND source_id = %s", self.schema),
                [(self.plan_id, cid, idx, old) for cid, idx, _, _ in moves],
            )  # fmt: skip
            cur.executemany(
                _q('UPDATE {s}.evidence SET source_id = %s, quote = %s, start = %s, "end" = %s, '
                   "location = %s WHERE claim_id = %s AND idx = %s AND source_id = %s",
                   self.schema),
                [(new, text[start:end], start, end, locate(start), cid, idx, old)
                 for cid, idx, start, end in moves],
            )  # fmt: skip
            cur.executemany(
                _q("UPDATE {s}.claims SET trust = %s WHERE id = %s", self.schema),
                [(t, c) for c, t in trust.items()],
            )
        self._x(
            "UPDATE {s}.pages SET updated_at = %s WHERE slug IN (SELECT page_slug FROM "
            "{s}.claims WHERE id = ANY(%s))",
            (self.now, ids),
        )
        if self._x(
            "SELECT 1 FROM {s}.claims WHERE page_slug = '' AND id = ANY(%s) LIMIT 1", (ids,)
        ).fetchone():
            self.context_changed = True
        return {
            "title": f"{len(carried)} claim(s) carried from {old[:12]} to {new[:12]}",
            "source": old,
            "to": new,
            "carried": carried,
            "was": was,
            **({"trust": trust} if trust else {}),
        }

    def _supersede(self, op: SupersedeClaim, result: OpResult, check: str) -> dict[str, object]:
        """The old claim ends; its successor is an existing claim, or the new claim ``by``,
        written at the old one's page, section and position (W7's trust rule was the gate's);
        a page summary that is the old claim's words follows it (:mod:`affidavit.store.
        summary_follows`, as SQLite's door). The audit entry's title, and what moved."""
        new = op.successor or (
            str(result.detail["successor"]) if result.detail.get("restated") else None
        )  # the gate found the new claim in the wiki already (withdrawals.restated)
        if new is None:
            assert op.by is not None  # the schema: one of the two
            old = self._x(
                "SELECT page_slug, section, position FROM {s}.claims WHERE id = %s", (op.claim,)
            ).fetchone()
            assert old is not None  # the gate's targets check found it active
            (claim,) = [c for c in result.claims if not c.role and c.passes]
            new = self._claim(result.index, claim, op.by, str(old["page_slug"]),
                              str(old["section"]), check, int(old["position"]))  # fmt: skip
        moved = self._summary_follows(op.claim, new)
        self._end(op.claim, "superseded", new)
        return {"title": f"{op.claim} → {new}", **moved}

    def _summary_follows(self, claim: str, successor: str) -> dict[str, object]:
        """The page summary that is ``claim``'s words becomes ``successor``'s (as SQLite's
        :meth:`affidavit.store.writer.Writer._summary_follows`); what changed, for the audit."""
        row = self._x(
            "SELECT c.page_slug, c.text, p.summary, s.text AS new FROM {s}.claims c "
            "JOIN {s}.pages p ON p.slug = c.page_slug JOIN {s}.claims s ON s.id = %s "
            "WHERE c.id = %s",
            (successor, claim),
        ).fetchone()
        if row is None or not follows(row["summary"], row["text"], row["new"]):
            return {}
        self._x(
            "UPDATE {s}.pages SET summary = %s, updated_at = %s WHERE slug = %s",
            (row["new"], self.now, row["page_slug"]),
        )
        moved = {"page": row["page_slug"], "summary": row["new"], "successor": successor}
        return {"summary_follows": moved}

    def _end(self, claim: str, status: str, successor: str | None = None) -> None:
        """Take one live claim out of the wiki: ``superseded`` (by ``successor``) or
        ``retracted``."""
        row = self._x(
            "UPDATE {s}.claims SET status = %s, superseded_by = coalesce(%s, superseded_by) "
            "WHERE id = %s AND status = ANY(%s) RETURNING page_slug",
            (status, successor, claim, list(BLAST_LIVE)),
        ).fetchone()
        (self.superseded if status == "superseded" else self.retracted).append(claim)
        if row is not None and row["page_slug"] == "":
            self.context_changed = True
        elif row is not None:
            self._x(
                "UPDATE {s}.pages SET updated_at = %s WHERE slug = %s",
                (self.now, row["page_slug"]),
            )

    def _retract(self, index: int, kind: str, reason: str, radius: BlastRadius) -> None:
        """Retract what ``radius`` says goes, with an audit entry giving each claim's reason
        (as SQLite's door: :meth:`affidavit.store.writer.Writer._retract`)."""
        why = {
            claim.id: f"source {radius.source[:12]} retracted: {reason}"
            if radius.source
            else reason
            for claim in radius.retracted
        }
        for claim in radius.derived:
            why[claim.id] = f"rests on retracted claim {claim.rests_on[0]}"
        for gone in why:
            self._end(gone, "retracted")
        detail = {"op": index, "kind": kind, "reason": reason, "source": radius.source or None,
                  "claims": why, "counts": radius.counts}  # fmt: skip
        self.audit(self.now, "retracted", self.plan_id, "door", detail)

    def _claim(
        self, op_index: int, result: ClaimResult, draft: ClaimDraft, page: str, section: str,
        check: str, at: int | None = None,
    ) -> str:  # fmt: skip
        cid = claim_id(page, draft)
        if self._x("SELECT 1 FROM {s}.claims WHERE id = %s", (cid,)).fetchone():
            cid = claim_id(page, draft, salt=f"{self.plan_id}/{op_index}/{result.index}")
        if page not in self._positions:
            row = self._x(
                "SELECT coalesce(max(position), -1) + 1 AS next FROM {s}.claims "
                "WHERE page_slug = %s",
                (page,),
            ).fetchone()
            self._positions[page] = int(row["next"]) if row else 0
        position = self._positions[page] if at is None else at
        self._positions[page] = max(self._positions[page], position + 1)
        self._x(
            "INSERT INTO {s}.claims (id, page_slug, section, position, text, status, trust, "
            "plan_id, created_at, derived_from, support, support_check) VALUES (%s, %s, %s, %s, "
            "%s, 'active', %s, %s, %s, %s, %s, %s)",
            (cid, page, section, position, draft.text, result.trust, self.plan_id, self.now,
             json.dumps(list(draft.derived_from)), result.support, check),
        )  # fmt: skip
        for idx, quote in enumerate(result.evidence):
            assert quote.verified and quote.source_id is not None
            assert quote.start is not None and quote.end is not None
            text = self.sources.intact_text(quote.source_id)  # re-hashed in this transaction
            locate = self._locators.get(quote.source_id)
            if locate is None:
                text_map = self.sources.get(quote.source_id).text_map
                locate = self._locators[quote.source_id] = locator(text, text_map)
            # the source's own words at the verified offsets, never the proposer's string (W3)
            self._x(
                'INSERT INTO {s}.evidence (claim_id, idx, source_id, quote, start, "end", '
                "location) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                (cid, idx, quote.source_id, text[quote.start : quote.end], quote.start,
                 quote.end, locate(quote.start)),
            )  # fmt: skip
        self.claim_ids.append(cid)
        self.claims_by_op.setdefault(op_index, []).append(cid)
        return cid


def load_plan(conn: Conn, schema: str, plan_id: str) -> Plan:
    row = conn.execute(
        _q("SELECT plan_json FROM {s}.plans WHERE id = %s", schema), (plan_id,)
    ).fetchone()
    if row is None:
        raise ConflictError(f"no plan {plan_id[:12]} in this vault; `affidavit inbox` lists them.")
    return parse_plan(str(row["plan_json"]))


def applied_ops(conn: Conn, schema: str, plan_id: str) -> tuple[list[int], list[int]]:
    """The operations of the plan earlier partial approvals applied (``plans.selected_ops``)
    and decided (applied, or refused by the gate: ``decided_ops``), read back from the
    database: untrusted, so anything malformed is refused."""
    row = conn.execute(
        _q("SELECT selected_ops, decided_ops FROM {s}.plans WHERE id = %s", schema), (plan_id,)
    ).fetchone()
    return decided_of(row or {}, plan_id)


def decided_of(row: Mapping[str, Any], plan_id: str) -> tuple[list[int], list[int]]:
    """:func:`applied_ops` of a plan row already read (its ``selected_ops``, ``decided_ops``)."""
    out = []
    for column in ("selected_ops", "decided_ops"):
        try:
            ops = json.loads(str(row.get(column) or "[]"))
            if not isinstance(ops, list) or not all(type(i) is int and i >= 0 for i in ops):
                raise ValueError(ops)
        except ValueError:
            raise IntegrityError(
                f"plan {plan_id[:12]}'s decided operations (plans.{column}) are malformed; "
                "restore the database from a backup, or reject the plan."
            ) from None
        out.append(sorted(set(ops)))
    return out[0], sorted({*out[0], *out[1]})


def held_ops(conn: Conn, schema: str, plan_id: str) -> dict[int, Held]:
    """The plan's pending remainder (``plans.held``, ``pg012_held``): the parts of its applied
    operations that wait for a person; read back untrusted (:func:`affidavit.store.batch.held_of`
    refuses anything malformed)."""
    from ..store.batch import held_of

    row = conn.execute(
        _q("SELECT held FROM {s}.plans WHERE id = %s", schema), (plan_id,)
    ).fetchone()
    return held_of(str(row["held"])) if row else {}


def selection(
    plan_id: str,
    plan: Plan,
    done: list[int],
    ops: Sequence[int] | None,
    held: Mapping[int, Held] | None = None,
    *,
    sure_only: bool = False,
) -> list[int]:
    """The operations approved now (0-based; default: every one not decided yet, and each
    whose remainder ``held`` waits for a person), checked as SQLite's inbox checks them
    (:func:`affidavit.store.batch.prepare`): each is an operation of this plan, not decided
    already, and none extends a page that an operation of the same plan left out of the
    selection creates. ``sure_only`` (the policy, an approval given unseen): a remainder is
    never this approval's."""
    held = held or {}
    count = len(plan.operations)
    open_ops = sorted(
        {*(i for i in range(count) if i not in done), *(i for i in held if i < count)}
    )
    if ops is None:
        return [i for i in open_ops if not (sure_only and i in held)]
    wrong = [i for i in ops if type(i) is not int or not 0 <= i < count]
    if wrong or not ops:
        raise ConflictError(
            f"plan {plan_id[:12]} has operations 1–{count}; "
            + (f"there is no {wrong[0] + 1 if type(wrong[0]) is int else repr(wrong[0])[:20]}."
               if wrong else "select at least one (`affidavit inbox show` lists them).")
        )  # fmt: skip
    chosen = sorted(set(ops))
    again = [i + 1 for i in chosen if i in done and i not in held]
    if again:
        raise ConflictError(
            f"operation(s) {', '.join(map(str, again))} of plan {plan_id[:12]} are decided "
            f"already (applied, or refused by the gate); the ones still pending are "
            f"{_numbers(open_ops) or 'none'}."
        )
    fresh = [i for i in open_ops if i not in done]
    creator = {op.slug: i for i in fresh if isinstance(op := plan.operations[i], CreatePage)}
    if sure_only:
        chosen = [i for i in chosen if i not in held]
    for i in chosen:
        op = plan.operations[i]
        needs = [op.page] if isinstance(op, AddClaims) else [op.page, op.to] if isinstance(
            op, LinkPages) else []  # fmt: skip
        for slug in needs:
            j = creator.get(slug)
            if j is not None and j not in chosen:
                raise ConflictError(
                    f"op {i + 1} of plan {plan_id[:12]} extends page '{slug}', which op {j + 1} "
                    f"of the same plan creates: approve them together (ops "
                    f"{_numbers(sorted({*chosen, j}))})."
                )
    return chosen


def _numbers(ops: list[int]) -> str:
    return ",".join(str(i + 1) for i in ops)


def read_page(conn: Conn, schema: str, slug: str) -> PageRecord | None:
    """The page with its claims (in order) and their evidence, each quote checked against its
    source's text (re-hashed) at its offsets."""
    page = conn.execute(_q("SELECT * FROM {s}.pages WHERE slug = %s", schema), (slug,)).fetchone()
    if page is None:
        return None
    claims = conn.execute(
        _q("SELECT * FROM {s}.claims WHERE page_slug = %s ORDER BY position, n", schema), (slug,)
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


def read_context(conn: Conn, schema: str) -> tuple[ClaimRecord, ...]:
    """The context's active entries (``wiki/context.md``'s claims), in order, with their
    evidence, each quote checked as :func:`read_page` checks a page's."""
    claims = conn.execute(
        _q("SELECT * FROM {s}.claims WHERE page_slug = '' AND status = 'active' "
           "ORDER BY position, n", schema)
    ).fetchall()  # fmt: skip
    evidence = conn.execute(
        _q('SELECT e.claim_id, e.idx, e.source_id, e.quote, e.start, e."end", e.location '
           "FROM {s}.evidence e JOIN {s}.claims c ON c.id = e.claim_id "
           "WHERE c.page_slug = '' AND c.status = 'active' ORDER BY e.claim_id, e.idx", schema)
    ).fetchall()  # fmt: skip
    texts: dict[str, str] = {}

    def text_of(source_id: str) -> str:
        if source_id not in texts:
            texts[source_id] = checked_source(source_row(conn, schema, source_id))[1]
        return texts[source_id]

    return claim_records(claims, evidence, text_of)
