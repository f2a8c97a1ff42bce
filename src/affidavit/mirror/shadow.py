"""The wiki as it stood after a batch, in an in-memory SQLite database with the columns the
markdown renderer reads (:mod:`affidavit.store.render`, the same renderer a SQLite vault's door
uses: same rows, same bytes), grown batch by batch from :class:`.database.Rows`.

A claim's status (ended by a later batch) and place (a context entry moved to the archive page
by the line cap) are followed from the "applied" entries that change them, and so are a page's
title and summary and its claims' heading when a person approves a plan's held remainder after
the policy applied the rest (the entry names the texts set and the claims moved; until then the
page shows the host's, as the creating batch's entry recorded them). A page's
``updated_at`` changes after its row is written (the door sets it to the time of the last plan
that added claims to it); as of batch *n* it is the time of the last claim added to the page by
then, or its creation time. :meth:`Shadow.add` derives it so;
``exact=True`` takes the database's current value instead, for the one-shot rebuild the mirror
is checked against (the two agree when the derivation is right: a test holds them to it).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from ..storage.base import BatchRecord
from ..storage.postgres_context import render_db
from ..store.paths import page_relpath
from ..store.render import LOG_HEAD, log_entries, render_context, render_index, render_page
from .database import Rows, source_file

_ENDED = ("superseded", "retracted")


class Shadow:
    """The rows the renderer reads, as of the last batch added."""

    def __init__(self) -> None:
        self.db = render_db()
        self.log = LOG_HEAD
        self._log_upto = 0
        self._ended: dict[str, tuple[str, str | None]] = {}  # claim -> its status, successor now
        self._moved: dict[str, tuple[str, str, int]] = {}  # archived claim -> its place now
        self._retracted: dict[str, str] = {}  # source retracted by a batch followed -> status

    def add(
        self, rows: Rows, records: list[BatchRecord], *, exact: bool = False
    ) -> tuple[set[str], dict[str, str]]:
        """Add the rows of the batches ``records``; returns the slugs they touched and the
        sources they cite first (id -> ``sources/…`` path)."""
        db = self.db
        touched: set[str] = set()
        host, sections = ({}, {}) if exact else _as_written(records)
        db.executemany(
            "INSERT INTO pages VALUES (?, ?, ?, ?, ?, ?)",
            [
                (r[1], *_texts(r, host.get(r[1], {})), r[4], r[5], r[6] if exact else r[5])
                for r in rows.pages
            ],
        )
        touched.update(r[1] for r in rows.pages)
        claims = [
            r[1:10] if r[1] not in sections else (*r[1:3], sections[r[1]], *r[4:10])
            for r in rows.claims
        ]
        if not exact:  # as written: a claim ends (or moves) in the batch that says so (below)
            self._ended.update({r[0]: (r[5], r[7]) for r in claims if r[5] in _ENDED})
            claims = [(*r[:5], "active", r[6], None, r[8]) if r[5] in _ENDED else r for r in claims]
            archived = {r[1]: r[10] for r in rows.claims if r[10] is not None}
            self._moved.update({c: (r[1], r[2], r[3]) for r in claims if (c := r[0]) in archived})
            claims = [
                (r[0], "", "Context", archived[r[0]], *r[4:]) if r[0] in archived else r
                for r in claims
            ]
        db.executemany("INSERT INTO claims VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", claims)
        touched.update(r[1] for r in claims)
        db.executemany(
            "INSERT INTO evidence VALUES (?, ?, ?, ?, ?, ?, ?)", [r[1:] for r in rows.evidence]
        )
        db.executemany(  # as each carry left it, in order (the last: as the database holds it)
            'UPDATE evidence SET source_id = ?, quote = ?, start = ?, "end" = ?, location = ? '
            "WHERE claim_id = ? AND idx = ?",
            [(*r[4:9], r[2], r[3]) for r in rows.carries],
        )
        db.executemany("INSERT INTO links VALUES (?, ?)", [(r[2], r[3]) for r in rows.links])
        touched.update(r[2] for r in rows.links)
        touched.update(r[3] for r in rows.links)
        db.executemany(
            "INSERT INTO audit VALUES (?, ?, ?, ?, ?, ?)", [r[1:] for r in rows.retractions]
        )
        if not exact:
            touched |= self._follow(rows, records)
        else:
            for (slug,) in db.execute(
                "SELECT DISTINCT page_slug FROM claims WHERE status IN ('superseded', 'retracted')"
            ):
                touched.add(slug)
        touched.discard("")  # context.md: rendered with every batch
        new: dict[str, str] = {}
        for source_id, name, media_type, status in rows.sources:
            known = db.execute("SELECT 1 FROM sources WHERE id = ?", (source_id,)).fetchone()
            if known is None:
                path = source_file(source_id, media_type)
                as_of = status if exact else self._retracted.get(source_id, "active")
                db.execute(
                    "INSERT INTO sources VALUES (?, ?, ?, ?)", (source_id, name, path, as_of)
                )
                new[source_id] = path
        return touched, new

    def _follow(self, rows: Rows, records: list[BatchRecord]) -> set[str]:
        """The batches' ends (the claims their "applied" entries say they superseded or
        retracted) and each touched page's ``updated_at``: the time of the last plan that
        created it, added claims to it, linked from it or ended one of its claims."""
        db = self.db
        at_of = {(r.seq, e.plan_id): e.at for r in records for e in r.entries}
        events: dict[str, tuple[int, str]] = {}

        def event(slug: str, seq: int, at: str) -> None:
            if (seq, at) > events.get(slug, (0, "")):
                events[slug] = (seq, at)

        for r in rows.pages:
            event(r[1], r[0], r[5])
        for r in rows.claims:
            event("" if r[10] is not None else r[2], r[0], r[9])
        for r in rows.links:
            event(r[2], r[0], at_of.get((r[0], r[1]), ""))
        for r in rows.carries:  # the carried claim's page (its place as of now in the shadow)
            place = db.execute("SELECT page_slug FROM claims WHERE id = ?", (r[2],)).fetchone()
            if place is not None:
                event(str(place[0]), r[0], at_of.get((r[0], r[1]), ""))
        for record in records:
            for entry in record.entries:
                detail = json.loads(entry.detail)
                for status, key in (("superseded", "superseded"), ("retracted", "retracted")):
                    for claim in detail.get(key, []):
                        final = self._ended.get(claim)
                        successor = final[1] if final is not None else None
                        row = db.execute(
                            "UPDATE claims SET status = ?, superseded_by = ? WHERE id = ? "
                            "RETURNING page_slug",
                            (status, successor if status == "superseded" else None, claim),
                        ).fetchone()
                        if row is not None:
                            event(str(row[0]), record.seq, entry.at)
                for claim in detail.get("archived", []):
                    self._archive(claim, record.seq, entry.at, event)
                for op in detail.get("ops", []):
                    if "remainder" in op and isinstance(op.get("page"), str):
                        self._remainder(op, event, record.seq, entry.at)
        seqs = {record.seq for record in records}
        for r in rows.retractions:
            source = json.loads(r[6]).get("source")
            if r[0] in seqs and isinstance(source, str):
                self._retract_source(source, json.loads(r[6]).get("claims", {}), r[0], r[2], event)
        db.executemany(
            "UPDATE pages SET updated_at = ? WHERE slug = ?",
            [(at, slug) for slug, (_, at) in events.items()],
        )
        return set(events) - {""}

    def _remainder(
        self, op: dict[str, object], event: Callable[[str, int, str], None], seq: int, at: str
    ) -> None:
        """A held remainder a person approved: the texts it set replace the host's, and the
        claims written when the rest went in move under the proposed heading."""
        page = str(op["page"])
        texts = op.get("set")
        for what in ("title", "summary"):
            if isinstance(texts, dict) and isinstance(texts.get(what), str):
                self.db.execute(f"UPDATE pages SET {what} = ? WHERE slug = ?", (texts[what], page))
        moved, section = op.get("moved"), op.get("section")
        if isinstance(moved, list) and isinstance(section, str):
            self.db.executemany(
                "UPDATE claims SET section = ? WHERE page_slug = ? AND id = ?",
                [(section, page, str(c)) for c in moved],
            )
        event(page, seq, at)

    def _archive(
        self, claim: str, seq: int, at: str, event: Callable[[str, int, str], None]
    ) -> None:
        """A context entry the door moved to the archive page (the line cap), to its place now;
        the archive page and the pages whose superseded claims point at it change."""
        place = self._moved.get(claim)
        if place is None:
            return
        self.db.execute(
            "UPDATE claims SET page_slug = ?, section = ?, position = ? WHERE id = ?",
            (*place, claim),
        )
        event(place[0], seq, at)
        for (page,) in self.db.execute(
            "SELECT DISTINCT page_slug FROM claims WHERE superseded_by = ? AND page_slug != ''",
            (claim,),
        ).fetchall():
            event(str(page), seq, at)

    def _retract_source(
        self, source: str, gone: object, seq: int, at: str, event: Callable[[str, int, str], None]
    ) -> None:
        """A source the batch retracted: its footnotes say so from this batch on; the pages of
        the claims it took out and of those that keep other evidence change (the radius's)."""
        self._retracted[source] = "retracted"
        self.db.execute("UPDATE sources SET status = 'retracted' WHERE id = ?", (source,))
        ids = sorted(gone) if isinstance(gone, dict) else []
        pages = {
            str(r[0])
            for r in self.db.execute(
                "SELECT DISTINCT c.page_slug FROM claims c JOIN evidence e ON e.claim_id = c.id "
                "WHERE e.source_id = ? AND c.status = 'active'",
                (source,),
            )
        }
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            marks = ",".join("?" * len(part))
            pages |= {
                str(r[0])
                for r in self.db.execute(
                    f"SELECT DISTINCT page_slug FROM claims WHERE id IN ({marks})", part
                )
            }
        for page in pages:
            event(page, seq, at)

    def add_audit(self, entries: list[tuple[int, str, str, str | None, str, str]]) -> None:
        """The batches' "applied" audit entries (what ``wiki/log.md`` lists)."""
        self.db.executemany("INSERT INTO audit VALUES (?, ?, ?, ?, ?, ?)", entries)
        self.log += log_entries(self.db, self._log_upto)
        if entries:
            self._log_upto = max(self._log_upto, *(e[0] for e in entries))

    def files(self, slugs: set[str] | None = None) -> dict[str, bytes]:
        """The generated files and the pages ``slugs`` (default: every page), rendered."""
        if slugs is None:
            slugs = {r[0] for r in self.db.execute("SELECT slug FROM pages")}
        out = {
            "wiki/index.md": render_index(self.db).encode(),
            "wiki/log.md": self.log.encode(),
            "wiki/context.md": render_context(self.db).encode(),
        }
        for slug in sorted(slugs - {""}):  # "" is context.md's
            text = render_page(self.db, slug)
            assert text is not None, f"page {slug} was added"
            out[page_relpath(slug)] = text.encode()
        return out

    def source_paths(self) -> dict[str, str]:
        """Every cited source's id -> its ``sources/…`` path."""
        return {r[0]: r[1] for r in self.db.execute("SELECT id, original_file FROM sources")}


def _as_written(
    records: list[BatchRecord],
) -> tuple[dict[str, dict[str, str]], dict[str, str]]:
    """What the batches' "applied" entries say their pages and claims were written with: the
    host's title or summary standing in for a proposed one (by page), and each claim written
    under a heading other than its operation's (by claim id) — a held remainder approved later
    changes the rows, never these entries."""
    host: dict[str, dict[str, str]] = {}
    sections: dict[str, str] = {}
    for record in records:
        for entry in record.entries:
            for op in json.loads(entry.detail).get("ops", []):
                if not isinstance(op, dict):
                    continue
                said = op.get("host")
                if isinstance(op.get("page"), str) and isinstance(said, dict):
                    host[op["page"]] = {k: v for k, v in said.items() if isinstance(v, str)}
                moved = op.get("sections")
                if isinstance(moved, dict):
                    sections.update({k: v for k, v in moved.items() if isinstance(v, str)})
    return host, sections


def _texts(row: tuple[object, ...], host: dict[str, str]) -> tuple[object, object]:
    """A page row's title and summary as its creating batch wrote them."""
    return host.get("title", row[2]), host.get("summary", row[3])
