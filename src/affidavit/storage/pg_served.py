"""What the daemon reads and writes of a PostgreSQL vault besides the door (``pg007_served``):
API tokens, nonces (W2), the inbox's plan rows, a rejection, pages and claims as the API lists
them, and the audit entries these write. Each function works in the caller's transaction on one
connection; ``schema`` is a vault's (``v_<name>``, quoted by ``sql.Identifier``) and every value
is a bound parameter. Writes that the door must not race (a rejection, an audit entry) are made
by the caller under the vault's advisory lock (:meth:`PostgresStorage.door`).
"""

from __future__ import annotations

import hmac
import json
import secrets
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any, Literal, cast

import psycopg
from psycopg import sql

from ..clock import iso, parse_iso
from ..errors import ConflictError, NotFoundError, PlanValidationError, QuotaError
from ..hashing import canonical_json, sha256_hex
from ..store import audit as auditlog
from .base import check_text
from .content import EvidenceRecord, verified_quote
from .postgres_content import checked_source, source_row

Conn = psycopg.Connection[dict[str, Any]]
Row = dict[str, Any]
Tool = Literal["propose_plan", "add_source"]


def _x(conn: Conn, schema: str, text: str, params: tuple[Any, ...] = ()) -> list[Row]:
    cur = conn.execute(sql.SQL(text).format(s=sql.Identifier(schema)), params)
    return cur.fetchall() if cur.description is not None else []


def append_audit(
    conn: Conn, schema: str, at: str, action: str, plan_id: str | None, actor: str,
    detail: Mapping[str, Any],
) -> None:  # fmt: skip
    """Append to the vault's hash chain (:mod:`affidavit.store.audit`'s hashes). The caller
    holds the vault's advisory lock, so no other entry takes the same number."""
    last = _x(conn, schema, "SELECT seq, hash FROM {s}.audit ORDER BY seq DESC LIMIT 1")
    seq = int(last[0]["seq"]) + 1 if last else 1
    prev = str(last[0]["hash"]) if last else auditlog.GENESIS
    text = canonical_json(dict(detail))
    digest = auditlog.entry_hash(seq, at, action, plan_id, actor, text, prev)
    _x(
        conn, schema,
        "INSERT INTO {s}.audit (seq, at, action, plan_id, actor, detail, prev_hash, hash) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
        (seq, at, action, plan_id, check_text("actor", actor), text, prev, digest),
    )  # fmt: skip


# --- tokens ---------------------------------------------------------------------------------


def token_status(row: Row, now: str) -> str:
    """'active', 'expired' or 'revoked', as on SQLite."""
    if row["revoked_at"] is not None:
        return "revoked"
    return "expired" if str(row["expires_at"]) <= now else "active"


def create_token(
    conn: Conn, schema: str, role: str, lifetime: timedelta, label: str, actor: str, now: datetime
) -> tuple[Row, str]:
    """A new token of ``role`` (its audit entry too; the caller holds the vault's lock):
    its record and the secret token string, shown once (only its SHA-256 is stored)."""
    token_id, secret = secrets.token_hex(6), secrets.token_urlsafe(32)
    _x(
        conn, schema,
        "INSERT INTO {s}.api_tokens (id, secret_sha256, role, label, created_at, created_by, "
        "expires_at) VALUES (%s, %s, %s, %s, %s, %s, %s)",
        (token_id, sha256_hex(secret.encode()), role, check_text("label", label), iso(now),
         check_text("actor", actor), iso(now + lifetime)),
    )  # fmt: skip
    detail = {"token": token_id, "role": role, "expires_at": iso(now + lifetime)}
    append_audit(conn, schema, iso(now), "token_created", None, actor, detail)
    row = _x(conn, schema, "SELECT * FROM {s}.api_tokens WHERE id = %s", (token_id,))[0]
    return row, f"afd_{token_id}_{secret}"  # service/tokens.py's form


def list_tokens(conn: Conn, schema: str) -> list[Row]:
    return _x(conn, schema, "SELECT * FROM {s}.api_tokens ORDER BY created_at, id")


def revoke_token(conn: Conn, schema: str, token_id: str, actor: str, now: datetime) -> Row:
    """Revoke a token at once (the caller holds the vault's lock)."""
    rows = _x(conn, schema, "SELECT * FROM {s}.api_tokens WHERE id = %s", (token_id,))
    if not rows:
        raise NotFoundError(f"no token {token_id}. GET …/tokens lists them.")
    if rows[0]["revoked_at"] is not None:
        raise ConflictError(f"token {token_id} was already revoked at {rows[0]['revoked_at']}.")
    _x(
        conn, schema,
        "UPDATE {s}.api_tokens SET revoked_at = %s, revoked_by = %s WHERE id = %s",
        (iso(now), check_text("actor", actor), token_id),
    )  # fmt: skip
    append_audit(conn, schema, iso(now), "token_revoked", None, actor, {"token": token_id})
    return _x(conn, schema, "SELECT * FROM {s}.api_tokens WHERE id = %s", (token_id,))[0]


def find_token(
    conn: Conn, schemas: list[str], token_id: str, secret: str, now: datetime
) -> tuple[int, tuple[str, str] | str]:
    """As :func:`affidavit.service.tokens.check_token`, over several vaults' schemas in one query: the index of the first
    schema whose token ``token_id`` holds ``secret`` and its verdict — (id, role), or 'expired' /
    'revoked', told only to a caller holding the right secret, compared in constant time — or
    ``(-1, 'unknown')``."""
    if not schemas:
        return -1, "unknown"
    part = sql.SQL(
        "SELECT {n}::int AS at, secret_sha256, role, expires_at, revoked_at "
        "FROM {s}.api_tokens WHERE id = %s"
    )
    query = sql.SQL(" UNION ALL ").join(
        part.format(n=sql.Literal(n), s=sql.Identifier(schema)) for n, schema in enumerate(schemas)
    )
    found = conn.execute(sql.SQL("{} ORDER BY at").format(query), [token_id] * len(schemas))
    presented = sha256_hex(secret.encode())
    for row in found.fetchall():
        if hmac.compare_digest(presented, str(row["secret_sha256"])):
            status = token_status(row, iso(now))
            return int(row["at"]), (token_id, str(row["role"])) if status == "active" else status
    return -1, "unknown"


# --- nonces (W2) ----------------------------------------------------------------------------


def issue_nonce(conn: Conn, schema: str, purpose: str, now: datetime, ttl: timedelta) -> str:
    nonce = secrets.token_urlsafe(18)
    _x(
        conn, schema,
        "INSERT INTO {s}.nonces (nonce, purpose, issued_at, expires_at) VALUES (%s, %s, %s, %s)",
        (nonce, purpose, iso(now), iso(now + ttl)),
    )  # fmt: skip
    return nonce


ANSWER_NONCE = "ask"
"""The purpose of an answer's nonce (:mod:`affidavit.ask.log`): shown to the model that answers,
never to the caller, and never taken for a plan's."""


def use_nonce(conn: Conn, schema: str, nonce: str, plan_id: str, now: datetime) -> None:
    """Consume ``nonce`` for ``plan_id`` (as :mod:`affidavit.plan.nonce`: issued by this vault,
    unexpired, unused); the row is locked, so two proposals can't both use it."""
    rows = _x(
        conn, schema,
        "SELECT purpose, expires_at, used_by FROM {s}.nonces WHERE nonce = %s FOR UPDATE",
        (check_text("nonce", nonce),),
    )  # fmt: skip
    if not rows or rows[0]["purpose"] == ANSWER_NONCE:
        raise PlanValidationError(  # an answer's nonce fenced claims for a model: no plan's
            "plan rejected: its nonce was never issued by this vault. Ask for a fresh one "
            '(POST …/nonces) and put it in the plan\'s "nonce" field.'
        )
    used = rows[0]["used_by"]
    if used is not None and used != plan_id:
        raise PlanValidationError(
            "plan rejected: its nonce was already used by another plan. Each plan needs a fresh "
            "nonce (POST …/nonces)."
        )
    if used is None and parse_iso(str(rows[0]["expires_at"])) < now:
        raise PlanValidationError("plan rejected: its nonce expired. Get a fresh one.")
    _x(conn, schema, "UPDATE {s}.nonces SET used_by = %s WHERE nonce = %s", (plan_id, nonce))


# --- an agent's quotas (W13) ----------------------------------------------------------------


def charge(
    conn: Conn, schema: str, caller: str, tool: Tool, limits: tuple[int, int], now: datetime,
    *, record: bool = True,
) -> None:  # fmt: skip
    """As :func:`affidavit.agents.charge`: refuse (:class:`QuotaError`) the agent ``caller``'s
    call of ``tool`` past ``limits`` — (calls an hour, plans waiting at once: the settings
    ``mcp.propose_per_hour`` or ``mcp.add_source_per_hour``, and ``mcp.pending_per_caller``) —
    else record it (unless ``record`` is false: a door asking before it spends anything). The
    caller holds the vault's lock, so two calls can't both take the last one."""
    from ..agents import SETTINGS, VIA_MCP, WINDOW, is_agent

    per_hour, cap = limits
    _x(conn, schema, "DELETE FROM {s}.agent_calls WHERE at <= %s", (iso(now - WINDOW),))
    made = _x(
        conn, schema,
        "SELECT at FROM {s}.agent_calls WHERE actor = %s AND tool = %s AND at > %s ORDER BY at "
        "LIMIT %s", (caller, tool, iso(now - WINDOW), per_hour),
    )  # fmt: skip
    if len(made) >= per_hour:
        again = iso(parse_iso(str(made[0]["at"])) + WINDOW)
        raise QuotaError(
            f"{tool} is limited to {per_hour} call(s) an hour per caller "
            f"({SETTINGS[tool]} in affidavit.toml) and {caller} has made {len(made)}; the next "
            f"call is allowed at {again}."
        )
    if tool == "propose_plan":
        plans = _x(
            conn, schema,
            "SELECT author, origin FROM {s}.plans WHERE author = ANY(%s) AND status = 'pending' "
            "AND expires_at > %s", ([caller, caller + VIA_MCP], iso(now)),
        )  # fmt: skip
        waiting = sum(1 for r in plans if is_agent(str(r["author"]), str(r["origin"])))
        if waiting >= cap:
            raise QuotaError(
                f"{caller} has {waiting} plan(s) waiting in the inbox, the most one caller may "
                "have (mcp.pending_per_caller in affidavit.toml); the next proposal is allowed "
                "once a person approves or rejects some, or they expire."
            )
    if record:
        _x(
            conn, schema, "INSERT INTO {s}.agent_calls (actor, tool, at) VALUES (%s, %s, %s)",
            (check_text("caller", caller), tool, iso(now)),
        )  # fmt: skip


# --- plans ----------------------------------------------------------------------------------


LISTED = "`affidavit inbox --all` (GET …/plans?status=all) lists them."
"""Where a plan id that finds no plan, or more than one, points the caller (CLI or API)."""


def plan_rows(conn: Conn, schema: str, statuses: tuple[str, ...]) -> list[Row]:
    return _x(
        conn, schema,
        "SELECT id, author, origin, plan_json, status, reason, admission, created_at, "
        "expires_at, decided_at, decided_by, selected_ops, decided_ops, held FROM {s}.plans "
        "WHERE status = ANY(%s) "
        "ORDER BY created_at, made", (list(statuses),),
    )  # fmt: skip


def plan_row(conn: Conn, schema: str, plan_id: str) -> Row:
    found = _x(
        conn, schema,
        "SELECT id, author, origin, plan_json, status, reason, admission, created_at, "
        "expires_at, decided_at, decided_by, selected_ops, decided_ops, held FROM {s}.plans "
        "WHERE id = %s", (plan_id,),
    )  # fmt: skip
    if not found:
        raise NotFoundError(f"no plan {plan_id[:12]} in this vault; {LISTED}")
    return found[0]


def resolve_plan(conn: Conn, schema: str, ref: str) -> str:
    """A plan's full id from its id or a unique prefix of at least 4 hex digits (as on SQLite);
    anything else — a ``_`` or ``%`` too — is no plan id, never a pattern."""
    text = ref.strip().lower()
    if not 4 <= len(text) <= 64 or any(c not in "0123456789abcdef" for c in text):
        raise NotFoundError(f"{ref[:80]!r} is not a plan id (4 to 64 hex digits); {LISTED}")
    rows = _x(
        conn, schema,
        "SELECT id FROM {s}.plans WHERE left(id, %s) = %s ORDER BY id LIMIT 2", (len(text), text),
    )  # fmt: skip
    if not rows:
        raise NotFoundError(f"no plan {text[:12]} in this vault; {LISTED}")
    if len(rows) > 1:
        raise ConflictError(f"plan id {text} is ambiguous; give more of it: {LISTED}")
    return str(rows[0]["id"])


def set_admission(conn: Conn, schema: str, plan_id: str, admission: Mapping[str, Any]) -> None:
    _x(
        conn, schema, "UPDATE {s}.plans SET admission = %s WHERE id = %s",
        (canonical_json(dict(admission)), plan_id),
    )  # fmt: skip


def record_rejected(
    conn: Conn,
    schema: str,
    plan_id: str,
    *,
    author: str,
    origin: str,
    plan_json: str,
    admission: Mapping[str, Any],
    now: datetime,
    expires_at: str,
    ops: int,
) -> None:
    """Record a plan nothing of which passed the gate as rejected at once, with its verdicts and
    an audit entry, as SQLite's inbox does: the attempt stays on the record (W8's audit log holds
    every rejection), reserves no slug and can't be approved."""
    values = (plan_id, author, origin, plan_json)
    for field, value in zip(("plan id", "author", "origin", "plan"), values, strict=True):
        check_text(field, value)
    _x(
        conn, schema,
        "INSERT INTO {s}.plans (id, author, origin, plan_json, status, reason, admission, "
        "created_at, expires_at) VALUES (%s, %s, %s, %s, 'rejected', %s, %s, %s, %s)",
        (*values, "no operation passed the gate", canonical_json(dict(admission)), iso(now),
         expires_at),
    )  # fmt: skip
    counts = dict(admission.get("counts", {}))
    append_audit(
        conn, schema, iso(now), "rejected", plan_id, author,
        {"origin": origin, "counts": counts, "ops": ops},
    )  # fmt: skip


def reject(conn: Conn, schema: str, plan_id: str, reason: str, actor: str, now: datetime) -> None:
    """Reject a pending plan and release its slugs (the caller holds the vault's lock, so an
    approval can't apply it meanwhile)."""
    rows = _x(conn, schema, "SELECT status FROM {s}.plans WHERE id = %s", (plan_id,))
    if not rows:
        raise NotFoundError(f"no plan {plan_id[:12]} in this vault; {LISTED}")
    if rows[0]["status"] != "pending":
        raise ConflictError(
            f"plan {plan_id[:12]} is {rows[0]['status']}; only a pending plan is rejected."
        )
    _x(
        conn, schema,
        "UPDATE {s}.plans SET status = 'rejected', reason = %s, decided_at = %s, decided_by = %s "
        "WHERE id = %s",
        (check_text("reason", reason), iso(now), check_text("actor", actor), plan_id),
    )  # fmt: skip
    _x(conn, schema, "DELETE FROM {s}.slug_reservations WHERE plan_id = %s", (plan_id,))
    append_audit(conn, schema, iso(now), "rejected", plan_id, actor, {"reason": reason})


# --- pages and claims -----------------------------------------------------------------------


def page_rows(conn: Conn, schema: str) -> list[Row]:
    return _x(
        conn, schema,
        "SELECT p.slug, p.title, p.summary, p.category, p.created_at, p.updated_at, "
        "(SELECT count(*) FROM {s}.claims c WHERE c.page_slug = p.slug AND c.status = 'active') "
        "AS active_claims FROM {s}.pages p ORDER BY p.slug",
    )  # fmt: skip


def links(conn: Conn, schema: str, slug: str) -> tuple[list[str], list[str]]:
    out = _x(conn, schema, "SELECT dst FROM {s}.links WHERE src = %s ORDER BY dst", (slug,))
    into = _x(conn, schema, "SELECT src FROM {s}.links WHERE dst = %s ORDER BY src", (slug,))
    return [str(r["dst"]) for r in out], [str(r["src"]) for r in into]


def claim_extras(conn: Conn, schema: str, slug: str) -> dict[str, tuple[str | None, list[str]]]:
    """Each claim of the page: its successor (if superseded) and the claims it derives from."""
    found = _x(
        conn, schema,
        "SELECT id, superseded_by, derived_from FROM {s}.claims WHERE page_slug = %s", (slug,),
    )  # fmt: skip
    return {str(r["id"]): (r["superseded_by"], derived_from(r)) for r in found}


def claim_row(conn: Conn, schema: str, claim_id: str) -> tuple[Row, list[EvidenceRecord]] | None:
    """A claim and its evidence, each quote checked against its source's re-hashed text."""
    rows = _x(
        conn, schema, "SELECT * FROM {s}.claims WHERE id = %s", (check_text("claim id", claim_id),)
    )
    if not rows:
        return None
    evidence = []
    for e in _x(
        conn, schema,
        'SELECT idx, source_id, quote, start, "end", location FROM {s}.evidence '
        "WHERE claim_id = %s ORDER BY idx", (claim_id,),
    ):  # fmt: skip
        record = EvidenceRecord(
            int(e["idx"]), str(e["source_id"]), str(e["quote"]), int(e["start"]), int(e["end"]),
            str(e["location"]),
        )  # fmt: skip
        text = checked_source(source_row(conn, schema, record.source_id))[1]
        evidence.append(verified_quote(claim_id, record, text))
    return rows[0], evidence


SOURCE_COLUMNS = (
    "id, origin, name, media_type, text_sha256, size_bytes, text_chars, trust, status, added_at"
)


def source_rows(conn: Conn, schema: str, ref: str | None = None) -> list[Row]:
    """Every source (oldest first, then by name and id as on SQLite) without its bytes, each with its sanitizer ``flags``; or the
    one whose id is ``ref`` or starts with it (at least 4 hex digits)."""
    where, params = "", cast(tuple[Any, ...], ())
    if ref is not None:
        text = ref.strip().lower()
        if not 4 <= len(text) <= 64 or any(c not in "0123456789abcdef" for c in text):
            raise NotFoundError(f"{ref[:80]!r} is not a source id (4 to 64 hex digits).")
        where, params = "WHERE left(id, %s) = %s ", (len(text), text)
    found = _x(
        conn, schema,
        f"SELECT {SOURCE_COLUMNS} FROM {{s}}.sources {where}"
        'ORDER BY added_at, name COLLATE "C", id LIMIT %s',
        (*params, 2 if ref is not None else 1_000_000),
    )  # fmt: skip
    if ref is not None and len(found) != 1:
        what = "no source" if not found else "more than one source"
        raise NotFoundError(f"{what} {ref[:64]!r} in this vault; GET …/sources lists them.")
    flags: dict[str, list[Row]] = {str(r["id"]): [] for r in found}
    for f in _x(
        conn, schema,
        'SELECT source_id, kind, start, "end", detail FROM {s}.source_flags '
        "WHERE source_id = ANY(%s) ORDER BY source_id, start",
        (list(flags),),
    ):  # fmt: skip
        flags[str(f["source_id"])].append(f)
    return [{**r, "flags": flags[str(r["id"])]} for r in found]


def audit_rows(conn: Conn, schema: str, after: int, limit: int) -> list[Row]:
    return _x(
        conn, schema, "SELECT * FROM {s}.audit WHERE seq > %s ORDER BY seq LIMIT %s",
        (after, limit),
    )  # fmt: skip


def counts(conn: Conn, schema: str) -> dict[str, int]:
    row = _x(
        conn, schema,
        "SELECT (SELECT count(*) FROM {s}.sources) AS sources, "
        "(SELECT count(*) FROM {s}.pages) AS pages, "
        "(SELECT count(*) FROM {s}.claims WHERE status = 'active') AS claims, "
        "(SELECT count(*) FROM {s}.plans WHERE status = 'pending') AS pending_plans, "
        "(SELECT count(*) FROM {s}.audit) AS audit_entries",
    )[0]  # fmt: skip
    return {k: int(v) for k, v in row.items()}


def derived_from(row: Row) -> list[str]:
    return [str(c) for c in json.loads(str(row.get("derived_from") or "[]"))]


__all__ = [
    "SOURCE_COLUMNS",
    "append_audit",
    "audit_rows",
    "charge",
    "claim_extras",
    "claim_row",
    "counts",
    "create_token",
    "derived_from",
    "find_token",
    "issue_nonce",
    "links",
    "list_tokens",
    "page_rows",
    "plan_row",
    "plan_rows",
    "reject",
    "resolve_plan",
    "revoke_token",
    "set_admission",
    "source_rows",
    "token_status",
    "use_nonce",
]
