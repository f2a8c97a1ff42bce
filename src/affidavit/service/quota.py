"""Quotas on what an agent's calls write (issue 12): an agent in a loop must not fill the inbox or
the disk.

Every ``propose_plan`` and ``add_source`` call through MCP is charged to its caller — the token
(``token:ID``) or, on stdio and the Unix socket, the local user — in the ``agent_calls`` table, so
a quota holds across connections, processes and daemon restarts (a stateless HTTP session or a
reconnect resets nothing). The window slides: a call is refused while the caller made
``mcp.<tool>_per_hour`` calls in the last hour, and allowed again an hour after the oldest of
them. ``propose_plan`` is also refused while the caller has ``mcp.pending_per_caller`` plans
waiting in the inbox. Refusals are :class:`~affidavit.errors.QuotaError` naming the limit, the
setting and when the next call is allowed; a refused call is not charged.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Literal

from ..clock import iso, parse_iso
from ..db import transaction
from ..errors import QuotaError
from ..vault import Vault

WINDOW = timedelta(hours=1)
Tool = Literal["propose_plan", "add_source"]
SETTINGS: dict[Tool, str] = {
    "propose_plan": "mcp.propose_per_hour",
    "add_source": "mcp.add_source_per_hour",
}


def _when(now: datetime, at: datetime) -> str:
    minutes = max(1, -(-int((at - now).total_seconds()) // 60))
    return f"{iso(at)} (in {minutes} min)"


def charge(vault: Vault, actor: str, tool: Tool, pending_author: str = "") -> None:
    """Record one call of ``tool`` by ``actor``, or refuse it with :class:`QuotaError`.

    ``pending_author`` (for ``propose_plan``): the author the caller's plans are recorded under;
    its pending plans count against ``mcp.pending_per_caller``."""
    if vault.read_only:  # nothing is written through this vault: the call itself is refused
        return
    setting = SETTINGS[tool]
    limit = int(vault.config.get(setting))
    now = vault.clock()
    since = iso(now - WINDOW)
    db = vault.db
    with vault.write_lock(), transaction(db):
        db.execute("DELETE FROM agent_calls WHERE at <= ?", (since,))
        rows = db.execute(
            "SELECT at FROM agent_calls WHERE actor = ? AND tool = ? AND at > ? ORDER BY at "
            "LIMIT ?",
            (actor, tool, since, limit),
        ).fetchall()
        if len(rows) >= limit:
            again = parse_iso(rows[0][0]) + WINDOW
            raise QuotaError(
                f"{tool} is limited to {limit} call(s) an hour per caller ({setting} in "
                f"affidavit.toml) and {actor} has made {len(rows)}; the next call is allowed "
                f"at {_when(now, again)}."
            )
        if pending_author:
            cap = int(vault.config.get("mcp.pending_per_caller"))
            (waiting,) = db.execute(
                "SELECT count(*) FROM plans WHERE author = ? AND status = 'pending' "
                "AND expires_at > ?",
                (pending_author, iso(now)),
            ).fetchone()
            if waiting >= cap:
                raise QuotaError(
                    f"{actor} has {waiting} plan(s) waiting in the inbox, the most one caller may "
                    "have (mcp.pending_per_caller in affidavit.toml); the next proposal is "
                    "allowed once a person approves or rejects some, or they expire "
                    "(plan_status shows each one's state)."
                )
        db.execute(
            "INSERT INTO agent_calls (actor, tool, at) VALUES (?, ?, ?)", (actor, tool, iso(now))
        )


__all__ = ["SETTINGS", "WINDOW", "charge"]
