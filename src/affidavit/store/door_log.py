"""``wiki/log.md`` appended to, not rebuilt: what the door remembers of the text it rendered last
(per process in :data:`LOG_TEXT`, across processes in :data:`LOG_RECORD`), vouched for by the audit
chain's hash of the last applied entry and the SHA-256 of the file's bytes (:mod:`.apply` uses it)."""

from __future__ import annotations

import json
import os
import sqlite3

from ..errors import AffidavitError
from ..hashing import sha256_hex
from ..vault import Vault
from . import audit
from .atomic import temp_path
from .paths import read_inside

LOG_TEXT: dict[str, tuple[str, str]] = {}
"""Per vault: the hash of the last "applied" audit entry ``wiki/log.md`` was rendered up to, and
its text."""
LOG_RECORD = "log-rendered.json"
"""In ``.affidavit/``: what :data:`LOG_TEXT` holds for the vault, as the hash of the last applied
audit entry and the SHA-256 of the text, so a new process appends to ``wiki/log.md`` as it is on
disk when its bytes are exactly that text (else the log is rendered whole)."""


def log_on_disk(vault: Vault) -> tuple[str, str] | None:
    """``(last applied hash, text)`` of ``wiki/log.md`` on disk, when :data:`LOG_RECORD` vouches
    for its bytes; None otherwise (a hand edit, no record, a record of another text)."""
    try:
        record = json.loads((vault.state_dir / LOG_RECORD).read_bytes())
        data = read_inside(vault.base, "wiki/log.md")
    except (OSError, ValueError, AffidavitError):
        return None
    if not isinstance(record, dict) or record.get("sha256") != sha256_hex(data):
        return None
    upto = record.get("upto")
    return (upto, data.decode("utf-8")) if isinstance(upto, str) else None


def remember_log(vault: Vault, cached: tuple[str, str]) -> None:
    """Write :data:`LOG_RECORD` (not fsynced: a stale or torn record never matches the file's
    bytes, and then the log is rendered whole)."""
    path = vault.state_dir / LOG_RECORD
    temp = temp_path(path)
    try:
        data = {"upto": cached[0], "sha256": sha256_hex(cached[1].encode("utf-8"))}
        temp.write_bytes(json.dumps(data).encode())
        os.chmod(temp, 0o600)
        os.replace(temp, path)
    except OSError:
        temp.unlink(missing_ok=True)


def last_applied(db: sqlite3.Connection, up_to: int | None = None) -> str:
    """The hash of the last "applied" audit entry (up to seq ``up_to``): what ``log.md`` was
    rendered up to, named by the hash chain so no other vault or history can match it."""
    row = db.execute(
        "SELECT hash FROM audit WHERE action = 'applied' AND seq <= ? ORDER BY seq DESC LIMIT 1",
        (up_to if up_to is not None else 2**62,),
    ).fetchone()
    return str(row[0]) if row else audit.GENESIS
