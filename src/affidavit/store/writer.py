"""The door's writer: the admitted part of a plan written into the database, inside the
caller's transaction (:mod:`affidavit.store.apply` runs it)."""

from __future__ import annotations

import json
from collections.abc import Callable

from ..evidence.spans import checksum
from ..gate.admission import ADMITTED, QUARANTINED, Admission, ClaimResult, Held, OpResult
from ..gate.texts import DEFAULT_SECTION, host_texts
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
    UpdatePage,
)
from ..sources.extract import locator
from ..sources.store import SourceStore
from ..vault import Vault
from . import audit
from .blast import LIVE, BlastRadius, blast_radius, claim_radius
from .parts import Parts
from .render import CONTEXT_ARCHIVE, context_claims, context_head, context_markdown
from .summary_follows import follows

_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
""":func:`~affidavit.hashing.canonical_json`'s encoder, made once: ``json.dumps`` with these
options builds a new encoder per call, a third of a claim id's time."""


def claim_id(page: str, draft: ClaimDraft, salt: str = "") -> str:
    """A claim's id, derived from where it lives and what it says and quotes, so the same sources
    give the same ids in any vault. ``salt`` (the plan id) separates a re-added claim from an
    identical one retracted or superseded earlier."""
    body = [page, draft.text, [e.id_parts() for e in draft.evidence], salt]
    return "c-" + sha256_hex(_CANONICAL.encode(body))[:16]


class Writer:
    """Writes the admitted part of a plan into the database, inside the caller's transaction."""

    def __init__(self, vault: Vault, store: SourceStore, plan_id: str, now: str) -> None:
        self.db = vault.db
        self.vault = vault
        self.store = store
        self.plan_id = plan_id
        self.now = now
        self.touched: set[str] = set()
        self.claim_ids: list[str] = []
        self.claims_by_op: dict[int, list[str]] = {}
        self.headings: dict[int, bool] = {}  # op -> its heading went in (else the host's)
        self.support_check = ""  # the check that admitted what this plan writes
        self.superseded: list[str] = []
        self.retracted: list[str] = []
        self.context_changed = False
        self._sources: dict[str, tuple[str, Callable[[int], str]]] = {}
        self._positions: dict[str, int] = {}
        self._origins: dict[tuple[str, str, str], int] = {}
        self._sections: dict[str, int] = {}

    def _source(self, source_id: str) -> tuple[str, Callable[[int], str]]:
        """A cited source's text and its :func:`~affidavit.sources.extract.locator`, read once
        per plan (a plan's claims mostly cite a few sources; neither changes inside the
        transaction; a quote's line is then a bisection, not a count from the text's start)."""
        found = self._sources.get(source_id)
        if found is None:
            record = self.store.get(source_id)
            text = self.store.text(source_id)
            found = self._sources[source_id] = (text, locator(text, record.text_map))
        return found

    def _origin_key(self) -> int:
        """The ``claim_origins`` key of this plan's id, time and support check (m032), made
        when new; read once per plan and check."""
        origin = (self.plan_id, self.now, self.support_check)
        key = self._origins.get(origin)
        if key is None:
            self.db.execute(
                "INSERT OR IGNORE INTO claim_origins (plan_id, created_at, support_check) "
                "VALUES (?, ?, ?)",
                origin,
            )
            key = self._origins[origin] = int(
                self.db.execute(
                    "SELECT key FROM claim_origins WHERE plan_id = ? AND created_at = ? "
                    "AND support_check = ?",
                    origin,
                ).fetchone()[0]
            )
        return key

    def _section_key(self, section: str) -> int:
        """The ``claim_sections`` key of a heading (m032), made when new."""
        key = self._sections.get(section)
        if key is None:
            self.db.execute("INSERT OR IGNORE INTO claim_sections (section) VALUES (?)", (section,))
            key = self._sections[section] = int(
                self.db.execute(
                    "SELECT key FROM claim_sections WHERE section = ?", (section,)
                ).fetchone()[0]
            )
        return key

    def _next_position(self, page: str) -> int:
        row = self.db.execute(
            "SELECT coalesce(max(position), -1) + 1 FROM claims WHERE page_slug = ?", (page,)
        ).fetchone()
        return int(row[0])

    def _position(self, page: str, position: int | None) -> int:
        """Where a new claim goes: ``position``, or after the page's last claim. The page's
        next position is read once per plan and kept (``max(position) + 1`` as each insert
        leaves it: only :meth:`insert_claim` adds claims while a plan is written)."""
        after = self._positions.get(page)
        if after is None:
            after = self._next_position(page)
        pos = after if position is None else position
        self._positions[page] = max(after, pos + 1)
        return pos

    def insert_claim(
        self,
        op_index: int,
        result: ClaimResult,
        draft: ClaimDraft,
        page: str,
        section: str,
        position: int | None = None,
    ) -> str:
        cid = claim_id(page, draft)
        if self.db.execute("SELECT 1 FROM claims WHERE id = ?", (cid,)).fetchone():
            cid = claim_id(page, draft, salt=f"{self.plan_id}/{op_index}/{result.index}")
        pos = self._position(page, position)
        self.db.execute(
            "INSERT INTO claim_rows (id, page_slug, section, position, text, status, trust, "
            "origin, derived_from, support) VALUES (?, ?, ?, ?, ?, 'active', ?, ?, ?, ?)",
            (
                cid,
                page,
                self._section_key(section),
                pos,
                draft.text,
                result.trust,
                self._origin_key(),
                json.dumps(list(draft.derived_from)) if draft.derived_from else "[]",
                result.support,
            ),
        )
        for idx, quote in enumerate(result.evidence):
            assert quote.source_id and quote.start is not None and quote.end is not None
            text, locate = self._source(quote.source_id)
            where = locate(quote.start)
            # The source's own words at the verified offsets, never the proposer's string (W3).
            span = text[quote.start : quote.end]
            self.db.execute(
                'INSERT INTO evidence (claim_id, idx, source_id, quote, start, "end", location) '
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (cid, idx, quote.source_id, span, quote.start, quote.end, where),
            )
        self.claim_ids.append(cid)
        self.claims_by_op.setdefault(op_index, []).append(cid)
        if page:
            self.touched.add(page)
        else:
            self.context_changed = True
        return cid

    def _touch_page(self, slug: str) -> None:
        self.db.execute("UPDATE pages SET updated_at = ? WHERE slug = ?", (self.now, slug))
        self.touched.add(slug)

    def write(
        self, plan: Plan, admission: Admission, parts: Parts | None = None
    ) -> list[dict[str, object]]:
        """Write ``parts`` of the plan (default: every passing operation whole); returns a
        summary per operation for log and audit. The new claims are indexed for search when
        the batch commits (:meth:`~affidavit.store.apply.Batch._index_claims`)."""
        if parts is None:
            parts = Parts(tuple(admission.admitted_ops))
        self.support_check = admission.support_version
        return self._write(plan, admission, parts)

    def _page_op(
        self, op: CreatePage | AddClaims, result: OpResult, parts: Parts
    ) -> dict[str, object]:
        """Write a page operation: whole, its sure part, or (completing an earlier apply) its
        held part; the host's texts stand in for the proposed ones that don't go in now. Returns
        what the audit entry needs to re-derive it (:mod:`affidavit.store.replay`)."""
        held, rest = parts.held.get(result.index, Held()), parts.remainder.get(result.index)
        page = op.slug if isinstance(op, CreatePage) else op.page
        texts = {t.what: t for t in result.texts}
        own = [c for c in result.claims if not c.role and c.passes]
        entry: dict[str, object] = {}
        if rest is not None:  # completing an earlier apply: the held claims and texts only
            wrote = [w for w in rest.texts if w in texts and texts[w].passes]
            heading = "section heading" in wrote or (
                rest.heading and "section heading" not in rest.texts
            )
            self._finish(op, page, wrote, rest)
            entry["remainder"] = wrote
            if "section heading" in wrote and rest.written:
                entry["moved"] = list(rest.written)
            drafts = _drafts(op)
            passing = [(c, drafts[c.index]) for c in own]
            label = f"{page} (the rest approved: {', '.join([*wrote, f'{len(passing)} claims'])})"
        else:
            host, heading = host_texts(op.op, texts, held)
            if host:
                entry["host"] = host
            self.headings[result.index] = heading
            drafts = _drafts(op)
            passing = [(c, drafts[c.index]) for c in own if c.index not in held.claims]
            if isinstance(op, CreatePage):
                label = host.get("title", op.title)
                self.db.execute(
                    "INSERT INTO pages (slug, title, summary, category, created_at, updated_at, "
                    "plan_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        op.slug,
                        label,
                        host.get("summary", op.summary),
                        op.category,
                        self.now,
                        self.now,
                        self.plan_id,
                    ),
                )
                self.touched.add(op.slug)
            else:
                label = f"{op.page} (+{len(passing)} claims)"
                self._touch_page(op.page)
        sections: dict[str, str] = {}
        for claim, draft in passing:
            section = op.section if heading else claim.section or DEFAULT_SECTION[op.op]
            cid = self.insert_claim(result.index, claim, draft, page, section)
            if section != op.section:
                sections[cid] = section
        if sections:
            entry["sections"] = sections
        if held:
            entry["held"] = {"claims": list(held.claims), "texts": list(held.texts)}
        entry["title"] = label
        return entry

    def _finish(self, op: CreatePage | AddClaims, page: str, wrote: list[str], rest: Held) -> None:
        """The held texts a person approves now replace the host's: the page's title or
        summary, or the heading of the claims the operation wrote when the rest went in."""
        for what in ("title", "summary"):
            if what in wrote and isinstance(op, CreatePage):
                self.db.execute(
                    f"UPDATE pages SET {what} = ? WHERE slug = ?", (getattr(op, what), page)
                )
        if "section heading" in wrote and rest.written:
            marks = ",".join("?" * len(rest.written))
            self.db.execute(
                f"UPDATE claim_rows SET section = ? WHERE page_slug = ? AND id IN ({marks})",
                (self._section_key(op.section), page, *rest.written),
            )
        self._touch_page(page)

    def _write(self, plan: Plan, admission: Admission, parts: Parts) -> list[dict[str, object]]:
        summary: list[dict[str, object]] = []
        chosen = set(parts.ops)
        for result in admission.ops:
            if result.status not in (ADMITTED, QUARANTINED) or result.index not in chosen:
                continue
            op = plan.operations[result.index]
            held = parts.held.get(result.index, Held())
            drafts = _drafts(op)
            passing = [  # the claims it adds (not the ones it names) that go in now
                (c, drafts[c.index])
                for c in _own(result)
                if c.passes and c.index not in held.claims
            ]
            title = ""
            extra: dict[str, object] = {}
            if isinstance(op, CreatePage | AddClaims):
                extra = self._page_op(op, result, parts)
                title = str(extra.pop("title"))
            elif isinstance(op, LinkPages):
                self.db.execute(
                    "INSERT INTO links (src, dst, plan_id) VALUES (?, ?, ?)",
                    (op.page, op.to, self.plan_id),
                )
                self._touch_page(op.page)
                self.touched.add(op.to)
                title = f"{op.page} → {op.to}"
            elif isinstance(op, UpdateContext):
                if held:
                    extra["held"] = {"claims": list(held.claims), "texts": []}
                if "radius" in result.detail:  # replace: the gate recorded what goes
                    radius = BlastRadius.from_json(result.detail["radius"])
                    self._retract(result.index, op.op, "replaced by a new context", radius)
                for claim, draft in passing:
                    self.insert_claim(result.index, claim, draft, "", "Context")
                self.context_changed = True
                title = f"context ({op.mode}, {len(passing)} entries)"
            elif isinstance(op, SupersedeClaim) and (op.successor or result.detail.get("restated")):
                successor = op.successor or str(result.detail["successor"])  # gate: restated
                extra = self._summary_follows(op.claim, successor)
                self._end(op.claim, "superseded", successor)
                title = f"{op.claim} → {successor}"
            elif isinstance(op, RetractClaim):
                radius = claim_radius(self.db, [op.claim])
                self._retract(result.index, op.op, op.reason, radius)
                title = f"{op.claim}: {_retracted(radius)}"
            elif isinstance(op, RetractSource):
                title = self._retract_source(result.index, op)
            elif isinstance(op, CarrySource):
                extra = self._carry(result.detail)
                title = str(extra.pop("title"))
            elif isinstance(op, UpdatePage):
                extra = self._page_words(op)
                title = f"{op.page}: new {' and '.join(extra['page_words']['new'])}"  # type: ignore[index]
            elif isinstance(op, SupersedeClaim):
                old = self.db.execute(
                    "SELECT page_slug, section, position FROM claims WHERE id = ?", (op.claim,)
                ).fetchone()
                claim, draft = passing[0]
                new = self.insert_claim(
                    result.index, claim, draft, old["page_slug"], old["section"], old["position"]
                )
                extra = self._summary_follows(op.claim, new)
                self._end(op.claim, "superseded", new)
                title = f"{op.claim} → {new}"
            summary.append({"index": result.index, "kind": op.op, "title": title, **extra})
        return summary

    def _touch(self, page: str) -> None:
        if page:
            self._touch_page(page)
        else:
            self.context_changed = True

    def _page_words(self, op: UpdatePage) -> dict[str, object]:
        """A page's new title and/or summary (``update_page``, judged by the gate against its
        claims); the old and new words, for the audit entry."""
        row = self.db.execute(
            "SELECT title, summary FROM pages WHERE slug = ?", (op.page,)
        ).fetchone()
        new = {k: v for k, v in (("title", op.title), ("summary", op.summary)) if v is not None}
        self.db.execute(
            "UPDATE pages SET title = coalesce(?, title), summary = coalesce(?, summary) "
            "WHERE slug = ?",
            (op.title, op.summary, op.page),
        )
        self._touch_page(op.page)
        old = {k: row[k] for k in new} if row is not None else {}
        return {"page_words": {"page": op.page, "old": old, "new": new}}

    def _summary_follows(self, claim: str, successor: str) -> dict[str, object]:
        """The page summary that is ``claim``'s words becomes ``successor``'s
        (:mod:`.summary_follows`); what changed, for the audit entry."""
        row = self.db.execute(
            "SELECT c.page_slug, c.text, p.summary, s.text AS new FROM claims c "
            "JOIN pages p ON p.slug = c.page_slug JOIN claims s ON s.id = ? WHERE c.id = ?",
            (successor, claim),
        ).fetchone()
        if row is None or not follows(row["summary"], row["text"], row["new"]):
            return {}
        self.db.execute(
            "UPDATE pages SET summary = ? WHERE slug = ?", (row["new"], row["page_slug"])
        )
        self._touch_page(row["page_slug"])
        moved = {"page": row["page_slug"], "summary": row["new"], "successor": successor}
        return {"summary_follows": moved}

    def _end(self, claim: str, status: str, successor: str | None = None) -> None:
        """Take one claim out of the wiki: ``superseded`` (by ``successor``) or ``retracted``."""
        row = self.db.execute("SELECT page_slug FROM claims WHERE id = ?", (claim,)).fetchone()
        marks = ",".join("?" * len(LIVE))
        self.db.execute(
            f"UPDATE claim_rows SET status = ?, superseded_by = coalesce(?, superseded_by) "
            f"WHERE id = ? AND status IN ({marks})",
            (status, successor, claim, *LIVE),
        )
        (self.superseded if status == "superseded" else self.retracted).append(claim)
        self._touch(row["page_slug"])

    def _retract(self, index: int, kind: str, reason: str, radius: BlastRadius) -> None:
        """Retract what ``radius`` says goes, with an audit entry giving each claim's reason
        (the rendered "Retracted" list reads it from there)."""
        why: dict[str, str] = {}
        for claim in radius.retracted:
            why[claim.id] = (
                f"source {radius.source[:12]} retracted: {reason}" if radius.source else reason
            )
        for claim in radius.derived:
            why[claim.id] = f"rests on retracted claim {claim.rests_on[0]}"
        for claim_id in why:
            self._end(claim_id, "retracted")
        detail = {
            "op": index,
            "kind": kind,
            "reason": reason,
            "source": radius.source or None,
            "claims": why,
            "counts": radius.counts,
        }
        audit.append(self.db, self.now, "retracted", self.plan_id, "door", detail)

    def _retract_source(self, index: int, op: RetractSource) -> str:
        source_id = self.store.resolve(op.source)
        assert source_id is not None  # the gate found it
        radius = blast_radius(self.db, source_id, exclude_plan=self.plan_id)
        self.db.execute("UPDATE sources SET status = 'retracted' WHERE id = ?", (source_id,))
        for kept in radius.kept:
            self.db.execute(
                "UPDATE claim_rows SET trust = ? WHERE id = ?", (kept.new_trust, kept.id)
            )
        for page in radius.pages:
            self._touch(page)
        self._retract(index, op.op, op.reason, radius)
        return (
            f"source {radius.source_name} ({source_id[:12]}): {_retracted(radius)}, "
            f"{len(radius.kept)} kept with other evidence"
        )

    def _carry(self, detail: dict[str, object]) -> dict[str, object]:
        """Re-point the carried claims' evidence at the newer version, all in a few statements
        (the gate found the offsets: ``detail``, :mod:`affidavit.gate.carry`). Returns what the
        audit entry keeps of it: both versions' offsets of every moved quote."""
        old, new = str(detail["source"]), str(detail["to"])
        carried = detail["carried"]
        trust = detail.get("trust", {})
        assert isinstance(carried, dict) and isinstance(trust, dict)
        text, locate = self._source(new)
        ids = json.dumps(sorted(carried))
        # the offsets table itself, not the evidence view: the view's trigger would compute
        # each row's old and new span again; the gate found every span in the newer text
        self.db.execute("INSERT OR IGNORE INTO source_keys (source_id) VALUES (?)", (new,))
        keys = dict(
            self.db.execute(
                "SELECT source_id, key FROM source_keys WHERE source_id IN (?, ?)", (old, new)
            ).fetchall()
        )
        old_key, new_key = keys.get(old), keys[new]
        was: dict[str, list[list[int]]] = {}
        for cid, idx, start, end in self.db.execute(
            'SELECT claim_id, idx, start, "end" FROM evidence_rows WHERE source_key = ? '
            "AND claim_id IN (SELECT value FROM json_each(?)) ORDER BY claim_id, idx",
            (old_key, ids),
        ):
            was.setdefault(cid, []).append([idx, start, end])
        # the page keeps citing the version each quote was verified in (m030_evidence_cited):
        # written by the first carry of the evidence, kept by later ones
        self.db.execute(
            'INSERT OR IGNORE INTO evidence_cited (claim_id, idx, source_key, start, "end", '
            'location, crc) SELECT claim_id, idx, source_key, start, "end", location, crc '
            "FROM evidence_rows WHERE source_key = ? "
            "AND claim_id IN (SELECT value FROM json_each(?))",
            (old_key, ids),
        )
        self.db.executemany(
            'UPDATE evidence_rows SET source_key = ?, start = ?, "end" = ?, location = ?, '
            "crc = ? WHERE claim_id = ? AND idx = ? AND source_key = ?",
            [
                (new_key, start, end, locate(start), checksum(text[start:end]), cid, idx, old_key)
                for cid, spans in carried.items()
                for idx, start, end in spans
            ],
        )
        self.db.executemany(
            "UPDATE claim_rows SET trust = ? WHERE id = ?", [(t, c) for c, t in trust.items()]
        )
        # no page is touched: a carried claim's words, trust tier shown nowhere on it, and
        # footnotes (they cite evidence_cited) are what they were, byte for byte
        return {
            "title": f"{len(carried)} claim(s) carried from {old[:12]} to {new[:12]}",
            "source": old,
            "to": new,
            "cited": True,
            "counts": {"claims": len(carried), "quotes": sum(map(len, carried.values()))},
            "carried": carried,
            "was": was,
            **({"trust": trust} if trust else {}),
        }

    def spill_context(self, cap: int) -> None:
        """Move the oldest context entries to the archive page until context.md fits its cap.

        The entries are read once: moving the oldest (the first, in context.md's order) changes
        none of the others, so context.md without it is rendered from the rest."""
        self._positions.clear()  # claims move to the archive page below
        entries = context_claims(self.db)
        head = context_head(self.db)  # always the same number of lines (store/overview.py)
        while context_markdown(entries, head).count("\n") > cap:
            if not entries:
                return
            oldest = entries.pop(0).id
            exists = self.db.execute(
                "SELECT 1 FROM pages WHERE slug = ?", (CONTEXT_ARCHIVE,)
            ).fetchone()
            if not exists:
                self.db.execute(
                    "INSERT INTO pages (slug, title, summary, category, created_at, updated_at, "
                    "plan_id) VALUES (?, 'Context archive', ?, 'meta', ?, ?, ?)",
                    (
                        CONTEXT_ARCHIVE,
                        "Overview entries moved out of context.md to keep it under its line cap.",
                        self.now,
                        self.now,
                        self.plan_id,
                    ),
                )
            self.db.execute(
                "UPDATE claim_rows SET page_slug = ?, section = ?, position = ? WHERE id = ?",
                (
                    CONTEXT_ARCHIVE,
                    self._section_key("Archived context"),
                    self._next_position(CONTEXT_ARCHIVE),
                    oldest,
                ),
            )
            self._touch_page(CONTEXT_ARCHIVE)
            # pages whose superseded claims link to it link to its new page
            for (page,) in self.db.execute(
                "SELECT DISTINCT page_slug FROM claims WHERE superseded_by = ? AND page_slug != ''",
                (oldest,),
            ).fetchall():
                self._touch_page(page)


def _retracted(radius: BlastRadius) -> str:
    return f"{len(radius.retracted)} claim(s) retracted, {len(radius.derived)} derived"


def _own(result: OpResult) -> list[ClaimResult]:
    """The claims an operation adds (not the ones it names), in order."""
    return sorted((c for c in result.claims if not c.role), key=lambda c: c.index)


def _drafts(op: object) -> list[ClaimDraft]:
    if isinstance(op, (CreatePage, AddClaims)):
        return list(op.claims)
    if isinstance(op, UpdateContext):
        return list(op.entries)
    if isinstance(op, SupersedeClaim):
        return [op.by] if op.by is not None else []
    return []
