"""Agents are agents (SPEC W13): who proposed a plan, and what an agent may write.

A plan is an **agent's** when it came through an MCP door or from a caller that authenticated
with a bearer token; every other plan (the owner's CLI, the Unix socket, the web desk, the host's
own ingest, lint and doctor) is a **person's**. Both marks are set by the host, never by the
caller: an MCP door fixes the origin, the daemon names a token caller ``token:ID``, and the local
user is named from the kernel's uid (:func:`local_actor`), never from ``$USER``.

What follows from it is decided here once, at the door every proposal passes
(:func:`affidavit.inbox.propose`), whatever front door it came through:

- an agent's plan is never applied by policy (the gate's ``agent`` flag, :data:`AGENT_POLICY`);
- an agent's calls that write are charged to its caller (:func:`charge`): the token, or the
  local user on stdio, in the ``agent_calls`` table, so a quota holds across connections,
  processes, daemon restarts and doors (REST and MCP count together). The window slides: a call
  is refused while the caller made ``mcp.<tool>_per_hour`` calls in the last hour; a plan is
  also refused while the caller has ``mcp.pending_per_caller`` plans waiting. Refusals are
  :class:`~affidavit.errors.QuotaError` naming the limit, the setting and when the next call is
  allowed; a refused call is not charged;
- an agent's pending ``create_page`` reserves its slug against other agents only: a person's
  plan may create that page (:func:`agent_reservations`), and the agent's plan then fails the
  re-check at approval (W5) with the reason named.
"""

from __future__ import annotations

import os
import pwd
import sqlite3
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Literal

from .clock import iso, parse_iso
from .db import transaction
from .errors import QuotaError

if TYPE_CHECKING:
    from .vault import Vault

AGENT_ORIGINS = ("mcp",)
"""Origins the MCP doors give every plan they propose (``mcp`` on stdio, ``mcp-http``)."""
TOKEN_ACTOR = "token:"
"""How the daemon names a caller that authenticated with a bearer token (never a person's
login): the author of every plan proposed through the API with a token."""
VIA_MCP = " via mcp"
"""What an MCP door appends to its caller's name to make a plan's author."""

Proposer = Literal["person", "agent"]

AGENT_POLICY = (
    "proposed by an agent (a token or an MCP client): a person approves it in the inbox, "
    "whatever policy.auto_apply says (W13)"
)
"""Why an agent's plan waits: nothing an agent calls applies."""


PROPOSER_SAYS = "the proposer says (unchecked)"
"""How every surface introduces a plan's free text (a summary, a reason): the proposer's words,
which no check reads, never the host's."""


def quoted(text: str) -> str:
    """``text`` as the proposer's words in a line of plain text: quoted, marked."""
    return f"{PROPOSER_SAYS}: “{text}”"


def local_actor() -> str:
    """The local user as the kernel knows this process (its real uid), never from ``$USER``,
    ``$LOGNAME`` or anything else in the environment a caller sets."""
    uid = os.getuid()
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid:{uid}"


def proposer_of(author: str, origin: str) -> Proposer:
    """Who proposed a plan, as the host recorded it: ``agent`` for a plan that came through an MCP
    door (its origin, or an author an MCP door named ``… via mcp``) or from a token caller (the
    API, the web desk), ``person`` for the vault's owner (the CLI, the Unix socket, the web desk
    logged in by link) and the host's own ingest, lint and doctor.

    Bulk approval (``approve --all``) takes only a person's plans unless told otherwise: the agent
    proposes, a person approves each of its plans."""
    if origin.startswith(AGENT_ORIGINS) or author.startswith(TOKEN_ACTOR):
        return "agent"
    if author.endswith(VIA_MCP):  # an MCP door's caller, whatever origin a service gave it
        return "agent"
    return "person"


def is_agent(author: str, origin: str) -> bool:
    return proposer_of(author, origin) == "agent"


def caller_of(author: str) -> str:
    """The caller a plan's author names (``token:ab12 via mcp`` → ``token:ab12``): whose quota
    its proposal is charged to, whichever door it came through."""
    return author.removesuffix(VIA_MCP)


# --- slugs ----------------------------------------------------------------------------------------


def agent_reservations(db: sqlite3.Connection) -> dict[str, str]:
    """Slugs reserved by pending agents' plans, with the plan reserving each: a person's plan
    never waits on them (the owner's work goes first)."""
    rows = db.execute(
        "SELECT r.slug, r.plan_id, p.author, p.origin FROM slug_reservations r "
        "JOIN plans p ON p.id = r.plan_id"
    ).fetchall()
    return {str(r[0]): str(r[1]) for r in rows if is_agent(str(r[2]), str(r[3]))}


def person_reserved(db: sqlite3.Connection) -> set[str]:
    """Slugs reserved by pending persons' plans (what a person's own new plan must not take)."""
    every = {str(r[0]) for r in db.execute("SELECT slug FROM slug_reservations")}
    return every - set(agent_reservations(db))


# --- quotas ---------------------------------------------------------------------------------------

WINDOW = timedelta(hours=1)
Tool = Literal["propose_plan", "add_source"]
SETTINGS: dict[Tool, str] = {
    "propose_plan": "mcp.propose_per_hour",
    "add_source": "mcp.add_source_per_hour",
}


def _when(now: datetime, at: datetime) -> str:
    minutes = max(1, -(-int((at - now).total_seconds()) // 60))
    return f"{iso(at)} (in {minutes} min)"


def _waiting(db: sqlite3.Connection, caller: str, now: str) -> int:
    """The caller's agent plans waiting in the inbox, from every door."""
    rows = db.execute(
        "SELECT author, origin FROM plans WHERE author IN (?, ?) AND status = 'pending' "
        "AND expires_at > ?",
        (caller, caller + VIA_MCP, now),
    ).fetchall()
    return sum(1 for author, origin in rows if is_agent(str(author), str(origin)))


def _refusal(vault: Vault, caller: str, tool: Tool, now: datetime) -> str:
    """Why ``caller``'s next ``tool`` call is refused now ('' when it is allowed)."""
    setting = SETTINGS[tool]
    limit = int(vault.config.get(setting))
    since = iso(now - WINDOW)
    rows = vault.db.execute(
        "SELECT at FROM agent_calls WHERE actor = ? AND tool = ? AND at > ? ORDER BY at LIMIT ?",
        (caller, tool, since, limit),
    ).fetchall()
    if len(rows) >= limit:
        again = parse_iso(rows[0][0]) + WINDOW
        return (
            f"{tool} is limited to {limit} call(s) an hour per caller ({setting} in "
            f"affidavit.toml) and {caller} has made {len(rows)}; the next call is allowed "
            f"at {_when(now, again)}."
        )
    if tool == "propose_plan":
        cap = int(vault.config.get("mcp.pending_per_caller"))
        waiting = _waiting(vault.db, caller, iso(now))
        if waiting >= cap:
            return (
                f"{caller} has {waiting} plan(s) waiting in the inbox, the most one caller may "
                "have (mcp.pending_per_caller in affidavit.toml); the next proposal is "
                "allowed once a person approves or rejects some, or they expire "
                "(plan_status shows each one's state)."
            )
    return ""


def check(vault: Vault, caller: str, tool: Tool) -> None:
    """Refuse (:class:`QuotaError`) a call :func:`charge` would refuse, recording nothing: a door
    asks before it spends anything on the call (a nonce, a fetch)."""
    if vault.read_only:
        return
    refusal = _refusal(vault, caller, tool, vault.clock())
    if refusal:
        raise QuotaError(refusal)


def charge(vault: Vault, caller: str, tool: Tool) -> None:
    """Record one call of ``tool`` by the agent ``caller``, or refuse it with :class:`QuotaError`
    (nothing recorded)."""
    if vault.read_only:  # nothing is written through this vault: the call itself is refused
        return
    now = vault.clock()
    db = vault.db
    with vault.write_lock(), transaction(db):
        db.execute("DELETE FROM agent_calls WHERE at <= ?", (iso(now - WINDOW),))
        refusal = _refusal(vault, caller, tool, now)
        if refusal:
            raise QuotaError(refusal)
        db.execute(
            "INSERT INTO agent_calls (actor, tool, at) VALUES (?, ?, ?)", (caller, tool, iso(now))
        )


__all__ = [
    "AGENT_ORIGINS",
    "AGENT_POLICY",
    "PROPOSER_SAYS",
    "SETTINGS",
    "TOKEN_ACTOR",
    "VIA_MCP",
    "WINDOW",
    "Proposer",
    "agent_reservations",
    "caller_of",
    "charge",
    "check",
    "is_agent",
    "local_actor",
    "person_reserved",
    "proposer_of",
    "quoted",
]
