"""Batches of plans before they reach the door: each plan checked on its own (status, expiry,
selection, nonce), then all of them put in dependency order (:func:`dependency_order`)."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field

from ..agents import agent_reservations, is_agent
from ..clock import parse_iso
from ..errors import ConflictError, IntegrityError, NotFoundError
from ..gate.admission import Admission, Held
from ..plan.nonce import check_nonce
from ..plan.schema import AddClaims, CreatePage, LinkPages, Plan, parse_plan
from ..vault import Vault


def load_plan(db: sqlite3.Connection, plan_id: str) -> sqlite3.Row:
    row = db.execute("SELECT * FROM plans WHERE id = ?", (plan_id,)).fetchone()
    if row is None:
        raise NotFoundError(f"no plan {plan_id}. `affidavit inbox` lists pending plans.")
    return row  # type: ignore[no-any-return]


@dataclass
class Prepared:
    """A plan checked on its own (status, expiry, selection, nonce), ready for re-admission."""

    plan_id: str
    plan: Plan
    stored: Admission
    selection: list[int]
    done: list[int]  # operations applied by earlier partial approvals
    stored_json: str = ""  # the plan's admission column: canonical JSON of ``stored``
    held: dict[int, Held] = field(default_factory=dict)
    """The plan's pending remainder before this apply: the parts of applied operations that
    wait for a person (``plans.held``)."""
    sure_only: bool = False
    """The approval takes only what needs no person (the policy, ``ingest --yes``): uncertain
    texts stay held, and the remainder is not selected."""
    agent: bool = False
    """An agent's plan (W13), from the author and origin the host recorded."""

    @property
    def remainder(self) -> dict[int, Held]:
        """The selected operations that complete an earlier apply: only their held parts."""
        return {i: h for i, h in self.held.items() if i in self.selection}


def held_of(raw: str | None) -> dict[int, Held]:
    """A plan's stored remainder (``plans.held``), read back from the vault: untrusted, so
    anything malformed is refused."""
    try:
        data = json.loads(raw or "{}")
        if not isinstance(data, dict):
            raise ValueError(data)
        return {int(k): Held.from_json(v) for k, v in data.items() if int(k) >= 0}
    except ValueError as exc:
        raise IntegrityError(
            f"a plan's stored remainder (plans.held) is malformed ({exc}); restore the database "
            "from a backup, or reject the plan."
        ) from exc


def held_json(held: dict[int, Held]) -> str:
    return json.dumps({str(i): h.to_json() for i, h in sorted(held.items()) if h})


def prepare(
    vault: Vault,
    plan_id: str,
    selected_ops: list[int] | None,
    fresh: Admission | None = None,
    *,
    sure_only: bool = False,
) -> Prepared | None:
    """``plan_id`` checked on its own. ``fresh``: the verdicts the gate just gave it inside
    the open batch, which the inbox recorded as its admission column (canonical JSON of
    exactly that object): used as the stored admission instead of parsing that JSON back.
    ``sure_only``: the approval takes only what needs no person (the remainder stays)."""
    row = load_plan(vault.db, plan_id)
    if row["status"] == "applied":
        return None
    if row["status"] != "pending":
        raise ConflictError(
            f"plan {plan_id[:12]} is {row['status']} and can't be applied. "
            "Propose it again with a fresh nonce if it is still wanted."
        )
    if parse_iso(row["expires_at"]) <= vault.clock():
        from ..inbox import expire_due

        expire_due(vault)
        raise ConflictError(
            f"plan {plan_id[:12]} expired at {row['expires_at']}; it can't be applied. "
            "Propose it again with a fresh nonce."
        )
    plan = parse_plan(row["plan_json"])
    stored = fresh if fresh is not None else Admission.from_json(json.loads(row["admission"]))
    done = [int(i) for i in json.loads(row["selected_ops"] or "[]")]
    held = held_of(row["held"])
    open_ops = [i for i in stored.admitted_ops if i not in done or i in held]
    selection = open_ops if selected_ops is None else sorted(set(selected_ops))
    if sure_only:  # what is held waits for a person: never this approval's
        selection = [i for i in selection if i not in held]
    again = [i + 1 for i in selection if i in done and i not in held]
    if again:
        raise ConflictError(
            f"operation(s) {', '.join(map(str, again))} of plan {plan_id[:12]} are applied "
            f"already; the ones still pending are {numbers(open_ops) or 'none'}."
        )
    refused = [i for i in selection if i not in stored.admitted_ops]
    if refused:
        reasons = {op.index: op.reason for op in stored.ops}
        detail = "; ".join(f"op {i + 1}: {reasons.get(i, 'no such operation')}" for i in refused)
        raise ConflictError(f"can't approve operations the gate rejected: {detail}")
    _refuse_missing_own_pages(plan_id, plan, selection, [i for i in open_ops if i not in done])
    check_nonce(vault.db, vault.clock, plan.nonce, plan_id)
    agent = is_agent(str(row["author"]), str(row["origin"]))
    return Prepared(
        plan_id, plan, stored, selection, done, str(row["admission"]), held, sure_only, agent
    )


def numbers(ops: list[int]) -> str:
    return ",".join(str(i + 1) for i in ops)


def _needs(op: object) -> list[str]:
    """The pages an operation writes into without creating them."""
    if isinstance(op, AddClaims):
        return [op.page]
    if isinstance(op, LinkPages):
        return [op.page, op.to]
    return []


def creates(plan: Plan, ops: list[int]) -> set[str]:
    return {op.slug for i in ops if isinstance(op := plan.operations[i], CreatePage)}


def creation_order(plans: list[tuple[str, Plan]]) -> list[str]:
    """The plans' ids reordered so a plan that extends a page another of them creates comes after
    it, otherwise in the order given (stable); a cycle keeps the given order for its plans (the
    door then refuses what doesn't fit, naming the plan). For a door that checks each plan
    against the wiki as the batch has made it (PostgreSQL's); SQLite's is
    :func:`dependency_order`."""
    creator: dict[str, str] = {}
    for plan_id, plan in plans:
        for slug in creates(plan, list(range(len(plan.operations)))):
            creator.setdefault(slug, plan_id)
    after = {
        plan_id: {
            creator[slug]
            for op in plan.operations
            for slug in _needs(op)
            if slug in creator and creator[slug] != plan_id
        }
        for plan_id, plan in plans
    }
    ordered: list[str] = []
    placed: set[str] = set()
    while len(ordered) < len(plans):
        ready = [i for i, _ in plans if i not in placed and after[i] <= placed]
        if not ready:  # a cycle: the rest as given
            ready = [i for i, _ in plans if i not in placed]
            ordered += ready
            break
        ordered.append(ready[0])
        placed.add(ready[0])
    return ordered


def _refuse_missing_own_pages(
    plan_id: str, plan: Plan, selection: list[int], open_ops: list[int]
) -> None:
    """A selected operation that extends a page an unselected operation of the same plan
    creates: say which operations to approve together."""
    creator = {op.slug: i for i in open_ops if isinstance(op := plan.operations[i], CreatePage)}
    for i in selection:
        for slug in _needs(plan.operations[i]):
            j = creator.get(slug)
            if j is not None and j not in selection:
                both = sorted({*selection, j})
                raise ConflictError(
                    f"op {i + 1} of plan {plan_id[:12]} extends page '{slug}', which op {j + 1} "
                    f"of the same plan creates: approve them together: "
                    f"`affidavit approve {plan_id[:12]} --ops {numbers(both)}`"
                )


def dependency_order(vault: Vault, batch: list[Prepared]) -> list[Prepared]:
    """``batch`` reordered so a plan that extends a page another plan of the batch creates comes
    after it (otherwise in the order given). A page only a pending plan outside the batch creates
    is refused with the command that works."""
    creator: dict[str, str] = {}
    for item in batch:
        for slug in creates(item.plan, item.selection):
            creator.setdefault(slug, item.plan_id)
    after: dict[str, set[str]] = {item.plan_id: set() for item in batch}
    existing: dict[str, bool] = {}  # the pages asked about (not every page of the wiki)
    for item in batch:
        own = creates(item.plan, item.selection)
        for i in item.selection:
            for slug in _needs(item.plan.operations[i]):
                if slug in own:
                    continue
                if slug not in existing:
                    existing[slug] = (
                        vault.db.execute("SELECT 1 FROM pages WHERE slug = ?", (slug,)).fetchone()
                        is not None
                    )
                if existing[slug]:
                    continue
                if slug in creator:
                    after[item.plan_id].add(creator[slug])
                    continue
                row = vault.db.execute(
                    "SELECT plan_id FROM slug_reservations WHERE slug = ?", (slug,)
                ).fetchone()
                if (
                    row is not None
                    and not item.agent
                    and row[0] in agent_reservations(vault.db).values()
                ):
                    raise ConflictError(  # W13: never a hint to approve an agent's plan for it
                        f"plan {item.plan_id[:12]} extends page '{slug}', which does not exist; "
                        "only an agent's pending plan proposes it, and a person's plan never "
                        f"depends on an agent's. Reject plan {item.plan_id[:12]} and propose it "
                        "again with its own create_page."
                    )
                if row is not None:
                    other = str(row[0])[:12]
                    mine = " ".join(p.plan_id[:12] for p in batch)
                    raise ConflictError(
                        f"plan {item.plan_id[:12]} extends page '{slug}', which pending plan "
                        f"{other} creates: approve {other} first, or approve both: "
                        f"`affidavit approve {other} {mine}`"
                    )
    ordered: list[Prepared] = []
    placed: set[str] = set()
    while len(ordered) < len(batch):
        ready = [p for p in batch if p.plan_id not in placed and after[p.plan_id] <= placed]
        if not ready:
            stuck = ", ".join(p.plan_id[:12] for p in batch if p.plan_id not in placed)
            raise ConflictError(
                f"plans {stuck} each extend a page another of them creates (a cycle); approve "
                "them one at a time with `--ops` to break it."
            )
        ordered.append(ready[0])
        placed.add(ready[0].plan_id)
    return ordered
