"""A chunk's plan meets a wiki that changed while the model answered it.

Two ingests at once (or an approval meanwhile) can create the page a chunk's plan creates: the
prompt showed no such page, but by the time the plan reaches the gate it exists, and the gate
refuses ``create_page`` of an existing page. The chunk's claims still belong on that page, so
such a ``create_page`` is turned into ``add_claims`` on it (same section, same claims) — the gate
then checks every claim as it would have — instead of failing the chunk or asking the model again.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from ..agents import is_agent, person_reserved
from ..errors import AdmissionError
from ..inbox import Proposal, propose
from ..vault import Vault


def _taken(db: sqlite3.Connection, agent: bool) -> set[str]:
    """Slugs of pages that exist or that pending plans create — for a person's plan, pending
    persons' plans only: an agent's pending page never takes a slug from the owner (W13)."""
    pages = {str(r[0]) for r in db.execute("SELECT slug FROM pages")}
    if not agent:
        return pages | person_reserved(db)
    return pages | {str(r[0]) for r in db.execute("SELECT slug FROM slug_reservations")}


def onto_existing(
    db: sqlite3.Connection, plan: dict[str, Any], agent: bool = False
) -> dict[str, Any]:
    """``plan`` with each ``create_page`` of a slug that is taken by now turned into
    ``add_claims`` on that page (dropped when it has no claims); ``plan`` itself when nothing
    changes, or when nothing would be left."""
    ops = plan.get("operations")
    if not isinstance(ops, list):
        return plan
    taken = _taken(db, agent)
    rewritten: list[Any] = []
    changed = False
    for op in ops:
        if not (isinstance(op, dict) and op.get("op") == "create_page" and op.get("slug") in taken):
            rewritten.append(op)
            continue
        changed = True
        if op.get("claims"):
            rewritten.append(
                {
                    "op": "add_claims",
                    "page": op["slug"],
                    "section": op.get("section", "Overview"),
                    "claims": op["claims"],
                }
            )
    if not changed or not rewritten:
        return plan
    return {**plan, "operations": rewritten}


def propose_onto_existing(
    vault: Vault, plan: dict[str, Any], author: str, origin: str, *, hold: str = ""
) -> Proposal:
    """:func:`~affidavit.inbox.propose`, with a ``create_page`` whose page appeared meanwhile
    proposed as ``add_claims`` — also when the page appears between this check and the gate."""
    agent = is_agent(author, origin)
    current = onto_existing(vault.db, plan, agent)
    try:
        return propose(vault, current, author, origin, hold=hold)
    except AdmissionError:
        again = onto_existing(vault.db, current, agent)
        if again is current:
            raise
        return propose(vault, again, author, origin, hold=hold)
