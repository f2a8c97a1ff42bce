"""API tokens (SPEC W10): bearer tokens for the daemon's TCP port, one vault and one role each.

A token reads ``afd_<id>_<secret>``: ``id`` (12 hex digits) is public and names the token in lists
and logs; ``secret`` (32 random bytes, URL-safe base64) is shown once when the token is created and
only its SHA-256 is stored. A token lives in its vault's database, so it is scoped to that vault;
it has a role (read ⊂ propose ⊂ approve) and an expiry, and can be revoked. Creating and revoking
tokens is recorded in the audit log. Only the vault's owner manages tokens (checked by callers).
"""

from __future__ import annotations

import hmac
import re
import secrets
import sqlite3
from dataclasses import dataclass
from datetime import timedelta

from ..clock import Clock, iso, parse_iso
from ..db import transaction
from ..errors import ConflictError, NotFoundError
from ..hashing import sha256_hex
from ..store import audit
from .models import TokenInfo, TokenRole

PREFIX = "afd_"
_TOKEN = re.compile(r"^afd_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$")
_DURATION = re.compile(r"^\s*(\d{1,6})\s*([smhdw])\s*$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
LONGEST = timedelta(days=3650)
DURATION_FORMS = "a whole number and a unit s, m, h, d or w: 30s, 1m, 2h, 7d, 1w"


@dataclass(frozen=True)
class TokenGrant:
    """A presented token that checked out: which token and what it may do."""

    token_id: str
    role: TokenRole


def parse_duration(text: str) -> timedelta:
    """``30s``, ``1m``, ``2h``, ``7d``, ``1w`` as a timedelta, exactly (ValueError otherwise).

    Zero, negative, fractional and unit-less values are refused with the accepted forms.
    """
    match = _DURATION.match(text)
    if not match or int(match.group(1)) == 0:
        raise ValueError(f"{text!r} is not a lifetime; give {DURATION_FORMS}.")
    lifetime = timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})
    if lifetime > LONGEST:
        raise ValueError(f"{text!r} is longer than 3650d; give a shorter lifetime.")
    return lifetime


def split_token(value: str) -> tuple[str, str] | None:
    """``(id, secret)`` of a well-formed token, else None."""
    match = _TOKEN.match(value.strip())
    return (match.group(1), match.group(2)) if match else None


def _status(row: sqlite3.Row, now: str) -> str:
    if row["revoked_at"] is not None:
        return "revoked"
    return "expired" if row["expires_at"] <= now else "active"


def _info(row: sqlite3.Row, now: str) -> TokenInfo:
    return TokenInfo(
        id=row["id"],
        role=row["role"],
        label=row["label"],
        created_at=row["created_at"],
        created_by=row["created_by"],
        expires_at=row["expires_at"],
        revoked_at=row["revoked_at"],
        status=_status(row, now),
    )


def create_token(
    db: sqlite3.Connection,
    clock: Clock,
    role: TokenRole,
    lifetime: timedelta,
    label: str,
    actor: str,
) -> tuple[TokenInfo, str]:
    """Create a token; returns its record and the secret token string (shown once)."""
    token_id = secrets.token_hex(6)
    secret = secrets.token_urlsafe(32)
    now = clock()
    with transaction(db):
        db.execute(
            "INSERT INTO api_tokens (id, secret_sha256, role, label, created_at, created_by, "
            "expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                token_id,
                sha256_hex(secret.encode()),
                role,
                label,
                iso(now),
                actor,
                iso(now + lifetime),
            ),
        )
        audit.append(
            db,
            iso(now),
            "token_created",
            None,
            actor,
            {"token": token_id, "role": role, "expires_at": iso(now + lifetime)},
        )
    row = db.execute("SELECT * FROM api_tokens WHERE id = ?", (token_id,)).fetchone()
    return _info(row, iso(now)), f"{PREFIX}{token_id}_{secret}"


def list_tokens(db: sqlite3.Connection, clock: Clock) -> list[TokenInfo]:
    now = iso(clock())
    rows = db.execute("SELECT * FROM api_tokens ORDER BY created_at, id").fetchall()
    return [_info(row, now) for row in rows]


def revoke_token(db: sqlite3.Connection, clock: Clock, token_id: str, actor: str) -> TokenInfo:
    """Revoke a token at once; revoking it again is a ConflictError."""
    now = iso(clock())
    row = db.execute("SELECT * FROM api_tokens WHERE id = ?", (token_id,)).fetchone()
    if row is None:
        raise NotFoundError(f"no token {token_id}. `affidavit tokens list` shows them.")
    if row["revoked_at"] is not None:
        raise ConflictError(f"token {token_id} was already revoked at {row['revoked_at']}.")
    with transaction(db):
        db.execute(
            "UPDATE api_tokens SET revoked_at = ?, revoked_by = ? WHERE id = ? AND revoked_at IS NULL",
            (now, actor, token_id),
        )
        audit.append(db, now, "token_revoked", None, actor, {"token": token_id})
    row = db.execute("SELECT * FROM api_tokens WHERE id = ?", (token_id,)).fetchone()
    return _info(row, now)


def check_token(
    db: sqlite3.Connection, clock: Clock, token_id: str, secret: str
) -> TokenGrant | str:
    """The grant of a presented token, or why it is refused ('unknown', 'expired', 'revoked').

    The secret is compared in constant time; expiry and revocation are only told to a caller
    who holds the right secret.
    """
    row = db.execute(
        "SELECT id, secret_sha256, role, expires_at, revoked_at FROM api_tokens WHERE id = ?",
        (token_id,),
    ).fetchone()
    presented = sha256_hex(secret.encode())
    if row is None or not hmac.compare_digest(presented, row["secret_sha256"]):
        return "unknown"
    status = _status(row, iso(clock()))
    if status != "active":
        return status
    return TokenGrant(token_id=row["id"], role=row["role"])


def expires_within(info: TokenInfo, clock: Clock) -> timedelta:
    return parse_iso(info.expires_at) - clock()


__all__ = [
    "DURATION_FORMS",
    "PREFIX",
    "TokenGrant",
    "check_token",
    "create_token",
    "list_tokens",
    "parse_duration",
    "revoke_token",
    "split_token",
]
