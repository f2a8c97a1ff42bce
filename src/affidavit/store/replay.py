"""Claims and evidence re-derived from the applied plans the audit chain covers (for the doctor).

The database is the system of record, but nothing in it is taken on trust: every claim and
evidence row must follow from the plans the hash-chained audit log says were applied. A plan's id
is the hash of its canonical JSON, so the stored plan text is checked against the id the chain
names; each applied operation's claim drafts give the claim ids (:func:`~affidavit.store.apply.
claim_id`), texts and pages; their quotes, looked for again in the immutable sources, give the
evidence rows (quote and offsets); the "applied" and "retracted" entries give which claims were
superseded or retracted since. :func:`claim_problems` reports every row that differs, every claim
no applied plan created and every claim an applied plan created that is gone.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from typing import Any

from ..errors import AffidavitError
from ..evidence import Verifier
from ..evidence.spans import checksum
from ..evidence.verify import SourceTexts
from ..hashing import content_id
from ..plan.schema import (
    AddClaims,
    CarrySource,
    ClaimDraft,
    CreatePage,
    Plan,
    SupersedeClaim,
    UpdateContext,
    UpdatePage,
    parse_plan,
)
from ..plan.stored import plan_text
from .render import CONTEXT_ARCHIVE
from .summary_follows import follows, same_words


@dataclass
class _Expected:
    id: str
    plan_id: str
    page: str
    text: str
    draft: ClaimDraft
    section: str = ""
    status: str = "active"
    superseded_by: str | None = None
    carried: dict[int, tuple[str, int, int]] = field(default_factory=dict)
    """Evidence (by index) a ``carry_source`` moved: the newer version and its offsets."""
    cited: dict[int, tuple[str, int, int] | None] = field(default_factory=dict)
    """Evidence (by index) whose footnote cites the place it was at before its first carry
    (``evidence_cited``, m030): that place, or None for where the plan's quote was found."""


@dataclass(frozen=True)
class ClaimProblem:
    claim_id: str
    message: str


@dataclass
class _Replay:
    claims: dict[str, _Expected] = field(default_factory=dict)
    problems: list[ClaimProblem] = field(default_factory=list)
    plans: dict[str, Plan | None] = field(default_factory=dict)
    pages: dict[str, tuple[str, str, str]] = field(default_factory=dict)  # title, summary, category


_CONTEXT_SECTIONS = ("Context", "Archived context")


def _section(op: object, state: _Replay) -> str:
    """The section an operation's new claims go in ("" when it can't be told)."""
    if isinstance(op, (CreatePage, AddClaims)):
        return op.section
    if isinstance(op, UpdateContext):
        return "Context"
    if isinstance(op, SupersedeClaim):
        old = state.claims.get(op.claim)
        return old.section if old is not None else ""
    return ""


def _drafts(op: object) -> tuple[str | None, list[ClaimDraft]]:
    """The page an operation's new claims go on (None: the superseded claim's) and the drafts."""
    if isinstance(op, CreatePage):
        return op.slug, list(op.claims)
    if isinstance(op, AddClaims):
        return op.page, list(op.claims)
    if isinstance(op, UpdateContext):
        return "", list(op.entries)
    if isinstance(op, SupersedeClaim) and op.by is not None:
        return None, [op.by]
    return "", []


def _plan(db: sqlite3.Connection, state: _Replay, plan_id: str) -> Plan | None:
    if plan_id in state.plans:
        return state.plans[plan_id]
    row = db.execute("SELECT id, plan_json, plan_z FROM plans WHERE id = ?", (plan_id,)).fetchone()
    plan: Plan | None = None
    if row is None:
        state.problems.append(
            ClaimProblem(plan_id, "the audit log names an applied plan the database lacks")
        )
    else:
        why = ""
        try:
            plan = parse_plan(plan_text(row, db))
        except AffidavitError as exc:
            plan, why = None, f" ({exc})"
        if plan is None or content_id(plan.to_json()) != plan_id:
            state.problems.append(
                ClaimProblem(
                    plan_id, f"the stored text of this applied plan no longer hashes to its id{why}"
                )
            )
            plan = None
    state.plans[plan_id] = plan
    return plan


def _page_texts(state: _Replay, op: object, entry: dict[str, Any]) -> None:
    """A page's title and summary, and its claims' heading, as the door wrote them: the plan's
    own, or the host's in their place (``host``) while they waited for a person or once they
    were rejected; a person's later approval of them (``remainder``) puts the plan's back, and
    moves the claims written under the host's heading (``moved``) under the plan's (W11). An
    ``update_page`` sets the words it names."""
    if isinstance(op, UpdatePage) and op.page in state.pages:
        was = state.pages[op.page]
        state.pages[op.page] = (op.title or was[0], op.summary or was[1], was[2])
        return
    if not isinstance(op, CreatePage | AddClaims):
        return
    found = entry.get("host")
    host: dict[str, Any] = found if isinstance(found, dict) else {}
    rest = entry.get("remainder")
    if isinstance(op, CreatePage) and rest is None:
        title, summary = host.get("title", op.title), host.get("summary", op.summary)
        state.pages[op.slug] = (str(title), str(summary), op.category)
        return
    if not isinstance(rest, list):
        return
    known = state.pages.get(op.slug) if isinstance(op, CreatePage) else None
    if isinstance(op, CreatePage) and known is not None:
        title = op.title if "title" in rest else known[0]
        summary = op.summary if "summary" in rest else known[1]
        state.pages[op.slug] = (title, summary, known[2])
    if "section heading" in rest:
        for cid in entry.get("moved", []) if isinstance(entry.get("moved"), list) else []:
            expected = state.claims.get(str(cid))
            if expected is not None:
                expected.section = op.section


def _summary_follows(state: _Replay, plan_id: str, claim: str, moved: object) -> None:
    """A supersession's page summary moved to the successor's words (:mod:`.summary_follows`):
    only a summary that was the superseded claim's words, only to the words of the successor the
    audit entry names, on the same page; any other change the audit log names is a problem."""
    if not isinstance(moved, dict):
        return
    page, summary = str(moved.get("page", "")), str(moved.get("summary", ""))
    old = state.claims.get(claim)
    new = state.claims.get(str(moved.get("successor", "")))
    known = state.pages.get(page)
    if (
        old is not None
        and new is not None
        and known is not None
        and old.page == page == new.page
        and same_words(new.text, summary)
        and follows(known[1], old.text, summary)
    ):
        state.pages[page] = (known[0], summary, known[2])
        return
    state.problems.append(
        ClaimProblem(
            plan_id,
            f"the audit log says page {page!r}'s summary followed claim {claim}'s successor, "
            "but it was not that claim's words or the new summary not its successor's",
        )
    )


def _end(state: _Replay, claim: str, status: str, successor: str | None = None) -> None:
    expected = state.claims.get(claim)
    if expected is not None and expected.status == "active":
        expected.status = status
        if successor is not None:
            expected.superseded_by = successor


def _missing_claims(
    db: sqlite3.Connection, state: _Replay, plan_id: str, detail: dict[str, Any]
) -> None:
    """An applied plan that can't be read back (a plan packed against its claims,
    :mod:`affidavit.plan.stored`, is unreadable once one of them is deleted or edited) still
    names the claims it wrote in its audit entry: those gone are reported by id."""
    for cid in detail.get("claims", []):
        if db.execute("SELECT 1 FROM claims WHERE id = ?", (str(cid),)).fetchone() is None:
            state.problems.append(
                ClaimProblem(
                    str(cid),
                    f"plan {plan_id[:12]} created this claim; it is missing from the database",
                )
            )


def _applied(db: sqlite3.Connection, state: _Replay, plan_id: str, detail: dict[str, Any]) -> None:
    from .apply import claim_id  # the door's own derivation

    plan = _plan(db, state, plan_id)
    if plan is None:
        _missing_claims(db, state, plan_id, detail)
        return
    made = list(detail.get("claims", []))
    wanted = set(made)
    produced: set[str] = set()
    for entry in detail.get("ops", []):
        index = int(entry["index"])
        if not 0 <= index < len(plan.operations):
            state.problems.append(
                ClaimProblem(
                    plan_id, f"the audit log names operation {index + 1}, which the plan lacks"
                )
            )
            continue
        op = plan.operations[index]
        _page_texts(state, op, entry)
        page, drafts = _drafts(op)
        section = _section(op, state)
        given = entry.get("sections")
        sections: dict[str, Any] = given if isinstance(given, dict) else {}
        if page is None:
            assert isinstance(op, SupersedeClaim)
            old = state.claims.get(op.claim)
            page = old.page if old is not None else ""
        for k, draft in enumerate(drafts):
            for cid in (claim_id(page, draft), claim_id(page, draft, f"{plan_id}/{index}/{k}")):
                if cid in wanted and cid not in produced:
                    where = str(sections.get(cid, section))
                    state.claims[cid] = _Expected(cid, plan_id, page, draft.text, draft, where)
                    produced.add(cid)
                    if isinstance(op, SupersedeClaim):
                        _end(state, op.claim, "superseded", cid)
                    break
        if isinstance(op, SupersedeClaim):
            _summary_follows(state, plan_id, op.claim, entry.get("summary_follows"))
        if isinstance(op, SupersedeClaim) and op.successor is not None:
            _end(state, op.claim, "superseded", op.successor)
        if isinstance(op, CarrySource):
            _carried(state, entry)
    for cid in made:
        if cid not in produced:
            state.problems.append(
                ClaimProblem(
                    cid,
                    f"the audit log says plan {plan_id[:12]} made this claim, but no "
                    "operation of the plan produces it",
                )
            )
    for cid in detail.get("superseded", []):
        _end(state, cid, "superseded")
    for cid in detail.get("retracted", []):
        _end(state, cid, "retracted")


def _carried(state: _Replay, entry: dict[str, Any]) -> None:
    """A ``carry_source``'s audit entry: which quotes moved to the newer version, where."""
    carried, to = entry.get("carried"), entry.get("to")
    if not isinstance(carried, dict) or not isinstance(to, str):
        return
    cited = entry.get("cited") is True  # the door kept the place the page cites (m030)
    for cid, spans in carried.items():
        expected = state.claims.get(str(cid))
        if expected is None or not isinstance(spans, list):
            continue
        for span in spans:
            if isinstance(span, list) and len(span) == 3 and all(type(v) is int for v in span):
                if cited and span[0] not in expected.cited:
                    expected.cited[span[0]] = expected.carried.get(span[0])
                expected.carried[span[0]] = (to, span[1], span[2])


def replay(db: sqlite3.Connection) -> _Replay:
    """What the claims should be, walking the audit log in order."""
    state = _Replay()
    for row in db.execute("SELECT action, plan_id, detail FROM audit ORDER BY seq").fetchall():
        if row[1] is None or row[0] not in ("applied", "retracted"):
            continue
        detail = json.loads(row[2])
        if row[0] == "applied":
            _applied(db, state, row[1], detail)
        else:
            for cid in detail.get("claims", {}):
                _end(state, cid, "retracted")
    return state


def _cited(
    verifier: Verifier, texts: SourceTexts, expected: _Expected
) -> dict[int, tuple[str, int, int]]:
    """Where the page's footnotes cite each carried quote of the claim (see ``_Expected.cited``),
    by evidence index: the place it was found at when written, or the offsets a carry before
    m030 had moved it to."""
    from ..sources.sentences import check_evidence

    out: dict[int, tuple[str, int, int]] = {}
    for idx, before in sorted(expected.cited.items()):
        if before is None and idx < len(expected.draft.evidence):
            check = check_evidence(verifier, texts, expected.draft.evidence[idx])
            if check.verified and check.source_id and check.start is not None:
                assert check.end is not None
                before = (check.source_id, check.start, check.end)
        if before is not None:
            out[idx] = before
    return out


def cited_problems(
    db: sqlite3.Connection, verifier: Verifier, texts: SourceTexts, state: _Replay
) -> list[ClaimProblem]:
    """Every ``evidence_cited`` row (the place a carried claim's footnote cites) that is not
    the place the audit log's carries say, or whose words there are not the source's; every
    place they say that has no row."""
    try:
        rows = db.execute(
            'SELECT t.claim_id, t.idx, k.source_id, t.start, t."end", t.crc FROM evidence_cited t '
            "LEFT JOIN source_keys k ON k.key = t.source_key ORDER BY t.claim_id, t.idx"
        ).fetchall()
    except sqlite3.OperationalError:  # before m030
        return []
    got: dict[str, dict[int, tuple[Any, ...]]] = {}
    for r in rows:
        got.setdefault(str(r[0]), {})[int(r[1])] = (r[2], r[3], r[4], r[5])
    problems = []
    for cid in sorted(set(got) | {c for c, e in state.claims.items() if e.cited}):
        expected = state.claims.get(cid)
        try:
            want = _cited(verifier, texts, expected) if expected is not None else {}
        except AffidavitError:
            continue  # a quote that no longer verifies is the evidence check's
        have = got.get(cid, {})
        for idx in sorted(set(want) | set(have)):
            w, h = want.get(idx), have.get(idx)
            if h is None:
                problems.append(ClaimProblem(cid, f"evidence {idx + 1}'s page citation is missing"))
            elif w is None or tuple(h[:3]) != w:
                problems.append(
                    ClaimProblem(
                        cid,
                        f"evidence {idx + 1}'s page cites {h[1]}-{h[2]} in "
                        f"{str(h[0])[:12]}; the audit log's carries say "
                        + (f"{w[1]}-{w[2]} in {w[0][:12]}" if w else "no carry kept a place"),
                    )
                )
            elif checksum(texts.text(w[0])[w[1] : w[2]]) != h[3]:
                problems.append(
                    ClaimProblem(cid, f"evidence {idx + 1}'s page citation has a forged checksum")
                )
    return problems


def _evidence(
    verifier: Verifier, texts: SourceTexts, expected: _Expected
) -> list[tuple[Any, ...]] | None:
    """The evidence rows the gate would write for the claim: each quote (or sentence citation)
    found again as the gate finds it. The quote recorded may be the one the plan gave (vaults
    from before the door stored spans) or the source's own span at those offsets."""
    from ..sources.sentences import check_evidence

    checks = [check_evidence(verifier, texts, e) for e in expected.draft.evidence]
    if not all(c.verified and c.source_id for c in checks):
        return None
    rows: list[tuple[Any, ...]] = []
    for idx, c in enumerate(checks):
        assert c.source_id is not None and c.start is not None and c.end is not None
        moved = expected.carried.get(idx)
        if moved is not None:  # carried to a newer version: its own words at the new offsets
            to, start, end = moved
            rows.append((to, (texts.text(to)[start:end],), start, end))
            continue
        span = texts.text(c.source_id)[c.start : c.end]
        rows.append((c.source_id, (c.quote, span), c.start, c.end))
    return rows


def _same(got: list[tuple[Any, ...]], want: list[tuple[Any, ...]]) -> bool:
    return len(got) == len(want) and all(
        (g[0], g[2], g[3]) == (w[0], w[2], w[3]) and g[1] in w[1]
        for g, w in zip(got, want, strict=True)
    )


def claim_problems(
    db: sqlite3.Connection, verifier: Verifier, texts: SourceTexts
) -> tuple[int, list[ClaimProblem]]:
    """Every claim or evidence row that differs from what the applied plans produce, every claim
    no plan created, and every claim a plan created that is missing. Returns how many claims
    were re-derived and the problems."""
    state = replay(db)
    problems = list(state.problems)
    rows = {r["id"]: r for r in db.execute("SELECT * FROM claims").fetchall()}
    evidence: dict[str, list[tuple[Any, ...]]] = {}
    for r in db.execute(
        'SELECT claim_id, source_id, quote, start, "end" FROM evidence ORDER BY claim_id, idx'
    ):
        evidence.setdefault(r[0], []).append((r[1], r[2], r[3], r[4]))
    for cid in sorted(rows):
        row = rows[cid]
        want = state.claims.get(cid)
        if want is None:
            problems.append(
                ClaimProblem(cid, "no applied plan created this claim (written into the database?)")
            )
            continue
        diffs = []
        if row["text"] != want.text:
            diffs.append(f"text is “{row['text'][:60]}”, the plan says “{want.text[:60]}”")
        pages = (want.page, CONTEXT_ARCHIVE) if want.page == "" else (want.page,)
        if row["page_slug"] not in pages:
            diffs.append(f"page is '{row['page_slug']}', the plan put it on '{want.page}'")
        sections = _CONTEXT_SECTIONS if want.page == "" else (want.section,)
        if want.section and row["section"] not in sections:
            diffs.append(f"section is '{row['section']}', the plan put it in '{want.section}'")
        if row["status"] != want.status:
            diffs.append(f"status is {row['status']}, the audit log says {want.status}")
        if want.superseded_by and row["superseded_by"] != want.superseded_by:
            diffs.append(f"superseded by {row['superseded_by']}, not {want.superseded_by}")
        try:
            expected_rows = _evidence(verifier, texts, want)
        except AffidavitError:
            expected_rows = None
        # quotes that no longer verify (a source altered or gone) are the evidence check's
        if expected_rows is not None and not _same(evidence.get(cid, []), expected_rows):
            diffs.append(_evidence_diff(evidence.get(cid, []), expected_rows))
        problems += [ClaimProblem(cid, d) for d in diffs]
    problems += _page_problems(db, state)
    problems += cited_problems(db, verifier, texts, state)
    for cid in sorted(set(state.claims) - set(rows)):
        problems.append(
            ClaimProblem(
                cid,
                f"plan {state.claims[cid].plan_id[:12]} created this claim; it is "
                "missing from the database",
            )
        )
    return len(state.claims), problems


def _page_problems(db: sqlite3.Connection, state: _Replay) -> list[ClaimProblem]:
    """Pages whose title, summary or category differ from the create_page that made them, and
    pages no applied plan created (the context archive is made by the door itself)."""
    problems = []
    for slug, title, summary, category in db.execute(
        "SELECT slug, title, summary, category FROM pages ORDER BY slug"
    ):
        want = state.pages.get(slug)
        if slug == CONTEXT_ARCHIVE:
            continue
        if want is None:
            problems.append(
                ClaimProblem(slug, "no applied plan created this page (written into the database?)")
            )
            continue
        for name, got, expected in zip(
            ("title", "summary", "category"), (title, summary, category), want, strict=True
        ):
            if got != expected:
                problems.append(
                    ClaimProblem(
                        slug, f"page {name} is “{got[:60]}”, the plan says “{expected[:60]}”"
                    )
                )
    return problems


def _evidence_diff(got: list[tuple[Any, ...]], want: list[tuple[Any, ...]]) -> str:
    if len(got) != len(want):
        return f"has {len(got)} evidence row(s), the plan gives {len(want)}"
    for idx, (g, w) in enumerate(zip(got, want, strict=True)):
        if not _same([g], [w]):
            return (
                f"evidence {idx + 1} is “{str(g[1])[:50]}” at {g[2]}-{g[3]} in {str(g[0])[:12]}; "
                f"re-derived: “{str(w[1][0])[:50]}” at {w[2]}-{w[3]} in {str(w[0])[:12]}"
            )
    return "evidence differs"
