"""Re-ingesting a changed document (issue 27 item 1): a new version, not a new source.

When the store keeps new bytes from an origin it already knows (:mod:`affidavit.sources.lineage`),
the ingest calls :func:`follow_version` before asking any model:

1. **carry** — every live claim resting on an older version of the origin is named in one
   ``carry_source`` plan per older version; the gate looks all their quotes up in the new version
   at once and the door re-points those found (same words, new offsets, history in the audit
   log). The policy applies it without a person (:data:`affidavit.gate.carry.CARRY_POLICY`).
2. **what changed** — the two texts are aligned unit by unit (sentences, and the lines between
   them: headings, list items, table rows) with :class:`difflib.SequenceMatcher`. A claim left
   behind quotes a unit that was replaced or deleted: paired with the most similar unit of the
   new version in the same replaced stretch (similarity >= :data:`PAIRING`) it gets a
   ``supersede_claim`` proposal by a claim quoting that new unit; otherwise a ``retract_claim``
   proposal. Each names both versions' words in its reason; the retraction's admission records
   its blast radius. They go to the inbox: withdrawals always wait for a person.
3. **only the new text is read** — chunks of the new version holding no inserted or replaced unit
   are recorded as done (``carried``); the model reads the rest, so an edit costs what it
   changed, not the whole document; a claim it writes may cite the changed text alone
   (:mod:`.citing`). The proposals of step 2 are made after that reading, so a claim the model
   wrote from the changed words is the successor. They are the one path for this version's
   changes: the ingest's supersession pass leaves its claims to them (unless the version states
   a version or date, when lint orders it against other releases too, and the claims that pass
   named are not proposed again), and the automatic lint after it leaves out the claims carried
   unchanged (:attr:`VersionFollow.settled`).

A file that is gone (:func:`propose_deleted`, or ``ingest DIR`` where a known origin under DIR
vanished) gets a ``retract_source`` proposal for its current version. Same bytes again are a
no-op (the store keeps them once). Nothing here writes the wiki: every change is a plan through
the one door (W4).
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..clock import iso
from ..errors import AffidavitError
from ..inbox import Proposal, propose
from ..plan.schema import MAX_OPERATIONS
from ..retract import LINEAGE_ORIGIN as LINEAGE
from ..retract import (
    claims_in_pending,
    retract_claim_op,
    retract_source_op,
    supersede_op,
    withdrawal_plan,
)
from ..sources.lineage import chain, follow_move, moved_here, origin_key, under_root
from ..sources.store import SourceRecord, SourceStore
from ..store.blast import LIVE
from ..vault import Vault
from .alignment import PAIRING, _align, _Alignment, _moved, _pair
from .holding import Held, successor_for
from .renames import follow_renamed
from .replans import follow_undone, replace_stale
from .summaries import summary_op

if TYPE_CHECKING:
    from ..providers.base import Provider
    from .pipeline import IngestReport

__all__ = [
    "PAIRING",
    "VersionOutcome",
    "changed_units",
    "follow_moves",
    "follow_renamed",
    "follow_version",
    "fresh_units",
    "ingest_changed",
    "origin_moved",
    "propose_changes",
    "propose_deleted",
    "vanished_under",
]

CARRY_CHUNK = 5_000
"""Claims named per ``carry_source`` operation."""
MAX_QUOTE = 300
_SPACE = re.compile(r"\s+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


@dataclass
class VersionOutcome:
    """What following one new version did."""

    source_id: str
    version: int
    replaces: list[str]
    carried: int = 0
    left: int = 0
    supersede: int = 0
    retract: int = 0
    held: int = 0
    """Claims the model wrote from replaced words, held out of its plans for these proposals."""
    plans: list[str] = field(default_factory=list)
    """Plans proposed: the carry (applied) first, then those waiting for a person."""
    replaced_plans: list[str] = field(default_factory=list)
    """Pending plans of older versions this one made wrong, rejected (:mod:`.replans`)."""
    fresh: list[tuple[int, int]] = field(default_factory=list)
    """Spans of the new text no claim or proposal covers yet (what the model still reads)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "source_id": self.source_id,
            "version": self.version,
            "replaces": self.replaces,
            "carried": self.carried,
            "left": self.left,
            "supersede_proposals": self.supersede,
            "retract_proposals": self.retract,
            "held": self.held,
            "plans": self.plans,
            "replaced_plans": self.replaced_plans,
        }


# -- following a new version ---------------------------------------------------------------


@dataclass(frozen=True)
class _Change:
    """A claim left behind by the carry, and what replaced the words it quotes."""

    claim: str
    page: str
    old_words: str
    pair: tuple[int, int] | None
    """The new version's unit restating it (offsets in the new text), or None: gone."""
    replaced: tuple[int, int] | None = None
    """The new text that replaced the words it quotes (the new units of its replaced stretch,
    offsets in the new text), or None when they were deleted: a claim the model writes from it
    is held for this change's proposal (:mod:`.holding`)."""


@dataclass
class VersionFollow:
    """A new version being followed: carried already, its proposals to make once the model has
    read the new text (:func:`propose_changes`), so a claim the model wrote from a changed unit
    is the successor instead of a second copy."""

    record: SourceRecord
    outcome: VersionOutcome
    changes: list[_Change] = field(default_factory=list)
    replaced: list[tuple[int, int]] = field(default_factory=list)
    """Spans of the new text that replaced words a claim left behind quotes."""
    held: list[Held] = field(default_factory=list)
    """Claims the model wrote from text that replaced a claim's words, held out of the chunks'
    plans for the proposal that retires that claim (:func:`.holding.hold_replacing`)."""
    settled: set[str] = field(default_factory=set)
    """Claims carried to it from a version lint reads as it reads this one (same trust, same
    stated version or date): the same words, so the same pairs — lint need not look at them
    again (:func:`affidavit.lint.since.settle`)."""


def follow_version(
    vault: Vault, store: SourceStore, record: SourceRecord, actor: str
) -> VersionFollow | None:
    """Carry what still holds from the older versions of ``record``'s origin and work out what
    changed (see the module doc); :func:`propose_changes` proposes it. None when ``record``
    replaces nothing."""
    older = chain(vault.db, record.id)
    if not older:
        return None
    outcome = VersionOutcome(record.id, record.version, older)
    follow = VersionFollow(record, outcome)
    new_text = store.text(record.id)
    by_source: dict[str, list[str]] = {}
    marks = ",".join("?" * len(older))
    live = ",".join("?" * len(LIVE))
    for claim_id, source_id in vault.db.execute(
        f"SELECT DISTINCT e.claim_id, e.source_id FROM evidence e JOIN claims c ON c.id = "
        f"e.claim_id WHERE e.source_key IN (SELECT key FROM source_keys WHERE source_id IN "
        f"({marks})) AND c.status IN ({live}) "
        "ORDER BY c.created_at, e.claim_id",
        (*older, *LIVE),
    ):
        by_source.setdefault(source_id, []).append(claim_id)
    left: dict[str, list[str]] = {}  # old source -> claims not carried
    moved: set[str] = set()
    for source_id in older:
        claims = list(dict.fromkeys(by_source.get(source_id, [])))
        if not claims:
            continue
        carried = _carry(vault, record, source_id, claims, actor, outcome)
        moved |= carried
        if _same_to_lint(store.get(source_id), record):
            follow.settled |= carried
        left[source_id] = [c for c in claims if c not in carried]
    # two edits before a decision: an older version's pending plans this one makes wrong are
    # replaced (.replans): their claims are proposed again against this version
    outcome.replaced_plans, follow.held = replace_stale(vault, store, record, older, moved, actor)
    waiting = _waiting_claims(vault)
    for source_id, claims in left.items():
        left[source_id] = [c for c in claims if c not in waiting]
        outcome.left += len(left[source_id])
    follow_changes(
        follow, older, new_text, store.text, left,
        lambda source_id, claims: evidence_rows_of(vault, source_id, claims),
    )  # fmt: skip
    return follow


def evidence_rows_of(vault: Vault, source_id: str, claims: list[str]) -> list[Any]:
    """The evidence rows ``claims`` have in ``source_id``, as :func:`changes_of` reads them."""
    return vault.db.execute(
        'SELECT c.id, c.page_slug, e.start, e."end", e.quote FROM claims c JOIN evidence e '
        "ON e.claim_id = c.id "
        "WHERE e.source_key = (SELECT key FROM source_keys WHERE source_id = ?) "
        "AND c.id IN (SELECT value FROM json_each(?)) "
        "ORDER BY c.id, e.idx",
        (source_id, json.dumps(claims)),
    ).fetchall()


def follow_changes(
    follow: VersionFollow,
    older: list[str],
    new_text: str,
    text_of: Callable[[str], str],
    left: dict[str, list[str]],
    rows_of: Callable[[str, list[str]], Sequence[Sequence[Any]]],
) -> None:
    """What changed for the claims the carry ``left`` on each older version (its text
    ``text_of``; ``rows_of`` their evidence rows there, as :func:`changes_of` reads them), into
    ``follow``: its changes, the replaced spans and the fresh units the model reads. The part
    both backends share; each carries and reads rows its own way."""
    base = _align(text_of(older[0]), new_text)  # against the version it replaces
    for source_id, claims in left.items():
        if not claims:
            continue
        old_text = text_of(source_id)
        alignment = base if source_id == older[0] else _align(old_text, new_text)
        follow.changes += changes_of(
            rows_of(source_id, claims), claims, old_text, new_text, alignment
        )
    # the model reads what was inserted or replaced: a claim it writes from a replaced unit is
    # held out of its chunk's plan (.holding) for the proposal that retires the one the old
    # words backed (propose_changes): the new fact and the old one's end are one decision
    follow.replaced = sorted({c.replaced for c in follow.changes if c.replaced})
    follow.outcome.fresh = [base.new_units[j] for j in sorted(set(base.added))]


def _same_to_lint(old: SourceRecord, new: SourceRecord) -> bool:
    """Whether lint compares claims citing ``new`` as it compared them citing ``old``: the same
    trust tier and the same stated version or date (the origin's own versions order only the
    claims left behind, which the lineage proposes)."""
    return (old.trust, old.stated_key, old.stated_rank) == (
        new.trust,
        new.stated_key,
        new.stated_rank,
    )


def fresh_units(store: SourceStore, record: SourceRecord) -> list[tuple[int, int]]:
    """The units of ``record``'s text inserted or replaced since the version it replaces (what
    the model reads of a new version); [] for a first version."""
    if not record.previous_id:
        return []
    return changed_units(store.text(record.previous_id), store.text(record.id))


def changed_units(old: str, new: str) -> list[tuple[int, int]]:
    """The units of text ``new`` inserted or replaced since text ``old`` (offsets in ``new``)."""
    base = _align(old, new)
    return [base.new_units[j] for j in sorted(set(base.added))]


def propose_changes(vault: Vault, follow: VersionFollow, actor: str) -> VersionOutcome:
    """Propose, for a person, the supersession or retraction of each claim the carry left
    behind: superseded by the active claim that quotes its restated words in the new version if
    there is one, else by the claim the model wrote from them (held out of its chunk's plan:
    :mod:`.holding`), else by a new claim quoting them; retracted when its words are gone, and
    what the model wrote from the words that replaced them added by the same plan."""
    record, outcome = follow.record, follow.outcome
    new_text = SourceStore(vault).text(record.id)
    # what an earlier proposal (this origin's, or lint's stale fix after the ingest) already names
    named = claims_in_pending(vault, LINEAGE) | claims_in_pending(vault, "lint")
    follow.changes = [c for c in follow.changes if c.claim not in named]
    quoting = _claims_quoting(vault, record.id, [c.pair for c in follow.changes if c.pair])

    def known(page: str) -> bool:
        return (
            vault.db.execute("SELECT 1 FROM pages WHERE slug = ?", (page,)).fetchone() is not None
        )

    def reword(page: str, claim: str, old: str, new: str, why: str) -> dict[str, Any] | None:
        return summary_op(vault, page, claim, old, new, why)

    groups = change_groups(follow, new_text, quoting, known, reword)
    for part in _packed(groups):
        withdrawn = sum(1 for op in part if op["op"] in ("supersede_claim", "retract_claim"))
        plan = withdrawal_plan(
            vault,
            part,
            lineage_summary(record, withdrawn),
            purpose=LINEAGE,
        )
        try:
            proposal = propose(vault, plan, actor, f"{LINEAGE}:{record.short_id}")
        except AffidavitError:
            continue
        outcome.plans.append(proposal.plan_id)
    count_changes(outcome, follow, groups)
    return outcome


def lineage_summary(record: SourceRecord, withdrawn: int) -> str:
    """A lineage plan's summary."""
    return (
        f"Version {record.version} of {record.name} ({record.short_id}) changed "
        f"{withdrawn} claim(s): review each against both versions' words"
    )


def count_changes(
    outcome: VersionOutcome, follow: VersionFollow, groups: list[list[dict[str, Any]]]
) -> None:
    """The outcome's counts of what :func:`change_groups` proposed."""
    ops = [op for group in groups for op in group]
    outcome.supersede = sum(1 for op in ops if op["op"] == "supersede_claim")
    outcome.retract = sum(1 for op in ops if op["op"] == "retract_claim")
    outcome.held = len(follow.held)


def change_groups(
    follow: VersionFollow,
    new_text: str,
    quoting: dict[tuple[int, int], list[tuple[str, str]]],
    known: Callable[[str], bool],
    reword: Callable[[str, str, str, str, str], dict[str, Any] | None] | None = None,
) -> list[list[dict[str, Any]]]:
    """The operations :func:`propose_changes` proposes for ``follow.changes`` (those no pending
    plan names), one group per change — a group is one decision, never cut across plans —
    given the active claims ``quoting`` each paired span of ``new_text`` and which pages are
    ``known``. Storage-neutral: each backend reads these and proposes the plans its own way.
    ``reword(page, claim, old words, new words, reason)``: the ``update_page`` that gives a
    page summary stating the old words the new ones (:func:`.summaries.summary_op`), added to
    the supersession's group; None (PostgreSQL: its door doesn't write ``update_page``)."""
    record = follow.record
    groups: list[list[dict[str, Any]]] = []  # a change's operations: one decision, one plan
    taken: set[tuple[str, tuple[int, int]]] = set()  # one new claim per page and unit
    worded: set[str] = set()  # pages whose summary a group already rewords (.summaries)
    for change in follow.changes:
        if change.pair is None:
            why = _line(
                f"gone from version {record.version} of {record.name} "
                f"({record.short_id}): “{change.old_words}” is no longer in it",
                300,
            )
            groups.append([retract_claim_op(change.claim, why), *_added(known, follow, change)])
            continue
        lo, hi = change.pair
        words = _line(new_text[lo:hi], 600)
        reason = _line(
            f"version {record.version} of {record.name} changed it: “{change.old_words}” → "
            f"“{_line(words, 120)}”",
            300,
        )
        successors = quoting.get(change.pair, [])
        successor = next((c for c, page in successors if page == change.page), None) or next(
            (c for c, _ in successors), None
        )
        words_op = (
            None
            if reword is None or change.page in worded
            else reword(change.page, change.claim, change.old_words, words, reason)
        )
        if successor is not None and successor != change.claim:
            groups.append([supersede_op(change.claim, successor, reason)])
        elif (change.page, change.pair) not in taken:
            taken.add((change.page, change.pair))
            model = successor_for(follow.held, change.page, change.pair)
            by = {"text": words, "evidence": [{"source": record.id, "quote": _line(words, 300)}]}
            if model is not None:  # the model's own words for it
                model.used = True
                by = model.claim
            groups.append(
                [{"op": "supersede_claim", "claim": change.claim, "by": by, "reason": reason}]
            )
        else:  # the same new words already replace another claim of this page
            groups.append([retract_claim_op(change.claim, reason)])
            words_op = None
        if words_op is not None:  # the summary that said the old words, in the same decision
            groups[-1].append(words_op)
            worded.add(change.page)
    return groups


def _added(
    known: Callable[[str], bool], follow: VersionFollow, change: _Change
) -> list[dict[str, Any]]:
    """What the model wrote from the new words that replaced a retracted claim's words (held
    out of its chunk's plan), added by the plan that retracts it: onto the page the model
    chose where it exists, else the retracted claim's page."""
    if change.replaced is None:
        return []
    out: list[dict[str, Any]] = []
    for held in follow.held:
        if held.used or not held.overlaps(change.replaced):
            continue
        held.used = True
        if held.op == "update_context":
            out.append({"op": "update_context", "mode": "append", "entries": [held.claim]})
            continue
        page = held.page
        if not page or not known(page):
            page = change.page
        if not page:
            continue
        op = {"op": "add_claims", "page": page, "claims": [held.claim]}
        if held.section:
            op["section"] = held.section
        out.append(op)
    return out


def _packed(groups: list[list[dict[str, Any]]]) -> list[list[dict[str, Any]]]:
    """The groups of operations in plans of at most :data:`MAX_OPERATIONS`, a group never cut."""
    plans: list[list[dict[str, Any]]] = []
    for group in groups:
        if not plans or len(plans[-1]) + len(group) > MAX_OPERATIONS:
            plans.append([])
        plans[-1] += group
    return plans


def _claims_quoting(
    vault: Vault, source_id: str, spans: list[tuple[int, int]]
) -> dict[tuple[int, int], list[tuple[str, str]]]:
    """Active claims whose evidence in ``source_id`` lies inside each span: (id, page)."""
    if not spans:
        return {}
    return quoting_in(
        vault.db.execute(
            'SELECT c.id, c.page_slug, e.start, e."end" FROM evidence e JOIN claims c '
            "ON c.id = e.claim_id "
            "WHERE e.source_key = (SELECT key FROM source_keys WHERE source_id = ?) "
            "AND c.status = 'active' ORDER BY c.id",
            (source_id,),
        ),
        spans,
    )


def quoting_in(
    rows: Iterable[Sequence[Any]], spans: list[tuple[int, int]]
) -> dict[tuple[int, int], list[tuple[str, str]]]:
    """:func:`_claims_quoting` of the evidence ``rows`` (claim id, page, start, end; ordered by
    claim id) of active claims in the new version."""
    out: dict[tuple[int, int], list[tuple[str, str]]] = {}
    if not spans:
        return out
    ordered = sorted(set(spans))
    starts = [s for s, _ in ordered]
    for claim_id, page, start, end in rows:
        i = bisect_right(starts, start) - 1
        if i >= 0 and ordered[i][0] <= start and end <= ordered[i][1]:
            out.setdefault(ordered[i], []).append((claim_id, page))
    return out


def _carry(
    vault: Vault,
    record: SourceRecord,
    source_id: str,
    claims: list[str],
    actor: str,
    outcome: VersionOutcome,
) -> set[str]:
    """Propose (and so, by the policy, apply) the carry of ``claims`` from ``source_id`` to
    ``record``; returns the claims carried."""
    carried: set[str] = set()
    for n in range(0, len(claims), CARRY_CHUNK):
        part = claims[n : n + CARRY_CHUNK]
        plan = withdrawal_plan(
            vault,
            [{"op": "carry_source", "source": source_id, "to": record.id, "claims": part}],
            f"Carry claims of {record.name} to version {record.version} ({record.short_id})",
            purpose=LINEAGE,
        )
        try:
            proposal = propose(vault, plan, actor, f"{LINEAGE}:carry:{record.short_id}")
        except AffidavitError:  # e.g. nothing of it passes the targets check
            continue
        outcome.plans.append(proposal.plan_id)
        if proposal.status not in ("applied", "partial"):
            continue
        for op in proposal.admission.ops:
            if op.kind == "carry_source" and op.passes:
                carried |= set(op.detail.get("carried", {}))
    outcome.carried += len(carried)
    return carried


def _waiting_claims(vault: Vault) -> set[str]:
    """Claims a pending lineage proposal already names (not proposed twice)."""
    return claims_in_pending(vault, LINEAGE)


def _line(text: str, limit: int) -> str:
    text = _CONTROL.sub(" ", _SPACE.sub(" ", text)).strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _quotable(text: str, start: int, end: int, near: str) -> tuple[int, int]:
    """A span of at most :data:`MAX_QUOTE` characters of ``text[start:end]`` on word
    boundaries, around where it differs from ``near`` (the old words) when it is longer."""
    if end - start <= MAX_QUOTE:
        return start, end
    unit = text[start:end]
    cut = next((i for i, (a, b) in enumerate(zip(unit, near, strict=False)) if a != b), 0)
    lo = max(0, min(cut - MAX_QUOTE // 3, len(unit) - MAX_QUOTE))
    hi = lo + MAX_QUOTE
    while lo > 0 and not unit[lo - 1].isspace():
        lo += 1
    while hi < len(unit) and hi > lo and not unit[hi].isspace():
        hi -= 1
    return start + lo, start + hi


def changes_of(
    rows: Sequence[Sequence[Any]],
    claims: list[str],
    old_text: str,
    new_text: str,
    alignment: _Alignment,
) -> list[_Change]:
    """What replaced the words each claim left behind quotes (see the module doc), from the
    evidence ``rows`` (claim id, page, start, end, quote; each
    claim's in evidence order) that ``claims`` have in the older text: the part either backend
    shares, the rows read by its own SQL."""
    out: list[_Change] = []
    starts = [s for s, _ in alignment.old_units]
    first: dict[str, tuple[str, int, int, str]] = {}
    inserted: dict[int, set[str]] = {}  # inserted units' stems, computed once
    flat = _SPACE.sub(" ", new_text)
    for claim_id, page, start, end, quote in rows:
        if claim_id not in first and _SPACE.sub(" ", quote).strip() not in flat:
            first[claim_id] = (page, start, end, quote)
    for claim_id in claims:
        if claim_id not in first:  # every quote is there: the carry left it for trust or flags
            continue
        page, start, end, quote = first[claim_id]
        pair, replaced = _pair(alignment, starts, start, old_text, new_text)
        if pair is None:  # deleted here: restated where text was inserted (moved and changed)?
            pair = _moved(alignment, starts, start, old_text, new_text, inserted)
            if pair is not None:
                replaced = alignment.new_units[pair]
        span = None
        if pair is not None:
            span = _quotable(new_text, *alignment.new_units[pair], near=old_text[start:end])
        out.append(_Change(claim_id, page, _line(quote, 120), span, replaced))
    return out


# -- moved and deleted files ---------------------------------------------------------------


def origin_moved(vault: Vault, old: str | Path, new: str | Path, *, actor: str) -> list[str]:
    """The file of origin ``old`` is now at ``new`` (a watch saw its bytes there): its versions
    follow it (:func:`affidavit.sources.lineage.follow_move`); the source ids moved."""
    with vault.write_lock():
        return follow_move(vault.db, old, new, iso(vault.clock()), actor)


def follow_moves(
    vault: Vault, found: Sequence[tuple[Path, SourceRecord]], actor: str
) -> dict[str, list[str]]:
    """For each ``(path, record)`` — bytes already stored, found at ``path`` — whose origin was
    another file that is gone: the file was moved, and its versions follow it
    (:func:`affidavit.sources.lineage.follow_move`), so its claims are neither proposed for
    retraction as a deletion nor left beside a new lineage when it is next edited. Returns the
    new origin key -> the source ids moved to it. Bytes of another version of ``path``'s own
    origin than the file last held are an edit undone (:func:`.replans.follow_undone`)."""
    moved: dict[str, list[str]] = {}
    undone: list[SourceRecord] = []  # another version's bytes again at their own path?
    for path, record in found:
        old = moved_here(vault.db, record.id, path)
        if old is None:
            undone += [record] if record.origin_key == origin_key(path) else []
            continue
        with vault.write_lock():
            ids = follow_move(vault.db, old, path, iso(vault.clock()), actor)
        if ids:
            moved[origin_key(path)] = ids
    follow_undone(vault, undone, actor)
    return moved


def vanished_under(vault: Vault, root: str | Path) -> list[SourceRecord]:
    """The current versions of origins inside folder ``root`` whose file no longer exists."""
    prefix = under_root(root)
    store = SourceStore(vault)
    out = []
    for source_id, key in vault.db.execute(
        "SELECT s.id, s.origin_key FROM sources s WHERE s.origin_key >= ? AND s.origin_key < ? "
        "AND s.status = 'active' AND NOT EXISTS (SELECT 1 FROM sources t "
        "WHERE t.origin_key = s.origin_key AND t.version > s.version) ORDER BY s.origin_key",
        (prefix, prefix[:-1] + "0"),  # '0' sorts right after '/'
    ):
        if not Path(key).exists():
            out.append(store.get(source_id))
    return out


def propose_deleted(
    vault: Vault,
    paths: Sequence[str | Path],
    *,
    actor: str = "watch",
    reason: str = "the file was deleted",
) -> list[Proposal]:
    """A ``retract_source`` proposal (it waits for a person, with its blast radius) for the
    current version of each known origin among ``paths`` (files that are gone); an origin whose
    current version is retracted already, or has such a proposal pending or rejected, is
    skipped."""
    store = SourceStore(vault)
    out: list[Proposal] = []
    for path in paths:
        key = origin_key(path)
        row = vault.db.execute(
            "SELECT id FROM sources WHERE origin_key = ? ORDER BY version DESC LIMIT 1", (key,)
        ).fetchone()
        if row is None:
            continue
        record = store.get(row[0])
        proposal = _propose_gone(vault, record, actor, reason)
        if proposal is not None:
            out.append(proposal)
    return out


def _propose_gone(vault: Vault, record: SourceRecord, actor: str, reason: str) -> Proposal | None:
    if record.status != "active":
        return None
    origin = f"{LINEAGE}:deleted:{record.short_id}"
    # pending, or rejected by a person who keeps its claims: not proposed again
    asked = vault.db.execute(
        "SELECT 1 FROM plans WHERE status IN ('pending', 'rejected') AND origin = ?", (origin,)
    ).fetchone()
    if asked is not None:
        return None
    plan = withdrawal_plan(
        vault,
        [retract_source_op(record.id, _line(f"{reason}: {record.origin}", 300))],
        f"Retract {record.name} ({record.short_id}): {reason}",
        purpose=LINEAGE,
    )
    return propose(vault, plan, actor, origin)


def propose_vanished(vault: Vault, root: str | Path, actor: str) -> list[Proposal]:
    """:func:`propose_deleted` for every known origin under ``root`` whose file is gone."""
    out = []
    for record in vanished_under(vault, root):
        proposal = _propose_gone(vault, record, actor, "the file is gone from its folder")
        if proposal is not None:
            out.append(proposal)
    return out


# -- for `watch` ---------------------------------------------------------------------------


def ingest_changed(
    vault: Vault,
    paths: Sequence[str | Path],
    *,
    provider: Provider | None = None,
    trust: str | None = None,
    actor: str = "watch",
    apply_now: bool = False,
) -> IngestReport:
    """Ingest these files (changed or new) as ``affidavit ingest`` does, the vault's configured
    provider by default: a known origin with other bytes becomes its next version (carried,
    proposals for what changed, only the changed chunks read); the same bytes are a no-op."""
    from ..providers.from_config import provider_from_config
    from .pipeline import Ingestor

    own = provider is None
    model = provider_from_config(vault.config) if provider is None else provider
    try:
        return Ingestor(vault, model, apply_now=apply_now, actor=actor).run(
            [str(p) for p in paths], trust
        )
    finally:
        if own:
            model.close()
