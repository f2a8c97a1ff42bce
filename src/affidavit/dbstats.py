"""``affidavit doctor --stats``: where the vault's bytes are — the database by table (its indexes
counted with it), the pages it holds free, and the sources it was built from."""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass, field
from typing import Any

from .vault import Vault


@dataclass
class Stats:
    tables: dict[str, int] = field(default_factory=dict)
    """Bytes of each table with its indexes (FTS5 shadow tables under their FTS table)."""
    rows: dict[str, int] = field(default_factory=dict)
    database_bytes: int = 0
    free_bytes: int = 0
    sources_bytes: int = 0
    """The stored sources' extracted text (what the wiki quotes), as ``sources.text_chars`` says."""
    source_files_bytes: int = 0
    """Every file under sources/ (originals and extracted text)."""
    notes: list[str] = field(default_factory=list)
    """What a reader of the database outside affidavit must know (e.g. computed columns)."""

    def to_json(self) -> dict[str, Any]:
        ratio = self.database_bytes / self.sources_bytes if self.sources_bytes else None
        return {
            "database_bytes": self.database_bytes,
            "free_bytes": self.free_bytes,
            "sources_text_bytes": self.sources_bytes,
            "source_files_bytes": self.source_files_bytes,
            "database_per_source_byte": round(ratio, 2) if ratio is not None else None,
            "notes": list(self.notes),
            "tables": [
                {"table": name, "bytes": size, "rows": self.rows.get(name)}
                for name, size in sorted(self.tables.items(), key=lambda kv: (-kv[1], kv[0]))
            ],
        }


PART_OF = {"claim_rows": "claims", "claim_origins": "claims", "claim_sections": "claims"}
"""Tables counted under the view that reads them (m032: ``claims`` over its rows and the two
small tables its repeated strings are stored once in)."""


def _owner(name: str, tables: set[str], index_of: dict[str, str]) -> str:
    if name in index_of:
        name = index_of[name]
    if name in PART_OF and PART_OF[name] not in tables:
        return PART_OF[name]
    for suffix in ("_data", "_idx", "_content", "_docsize", "_config"):
        if name.endswith(suffix) and name.removesuffix(suffix) in tables:
            return name.removesuffix(suffix)
    return name


PACKED_NOTE = (
    "plans.plan_z is zlib-packed with a preset dictionary where plans.packed_with names claims "
    "(rowid ranges a-b,c): the dictionary is their texts in rowid order joined by newlines (its "
    "last 32 KiB); read it with affidavit.plan.stored.plan_text, which checks the claims are the "
    "plan's and the text hashes to the plan's id"
)
"""The note for a reader outside affidavit of a plan packed against its claims (m027)."""


CLAIMS_NOTE = (
    "claims is a view (plain SQL, no function needed) over claim_rows, whose plan id, time, "
    "support check and section are keys into claim_origins and claim_sections (each string "
    "stored once, since migration m032_claim_strings_once); its bytes here are the three tables'"
)


def vault_stats(vault: Vault) -> Stats:
    db = vault.db
    stats = Stats()
    page_size = db.execute("PRAGMA page_size").fetchone()[0]
    stats.database_bytes = db.execute("PRAGMA page_count").fetchone()[0] * page_size
    stats.free_bytes = db.execute("PRAGMA freelist_count").fetchone()[0] * page_size
    schema = db.execute("SELECT type, name, tbl_name FROM sqlite_master").fetchall()
    tables = {r[1] for r in schema if r[0] == "table"}
    index_of = {r[1]: r[2] for r in schema if r[0] == "index"}
    try:
        sizes = db.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name").fetchall()
    except sqlite3.OperationalError:  # an SQLite built without dbstat: tables by row count only
        sizes = []
    for name, size in sizes:
        owner = _owner(str(name), tables, index_of)
        stats.tables[owner] = stats.tables.get(owner, 0) + int(size)
    for name in sorted(tables | {PART_OF[t] for t in tables & PART_OF.keys()}):
        if name.startswith("sqlite_") or _owner(name, tables, index_of) != name:
            continue
        quoted = '"' + name.replace('"', '""') + '"'
        stats.rows[name] = db.execute(f"SELECT count(*) FROM {quoted}").fetchone()[0]
        stats.tables.setdefault(name, 0)
    if "claim_rows" in tables:
        stats.notes.append(CLAIMS_NOTE)
    if any(r[0] == "view" and r[1] == "evidence" for r in schema):
        from .evidence.spans import MISSING

        stats.notes.append(f"evidence is a view; its quote column is computed: {MISSING}")
    if db.execute("SELECT 1 FROM plans WHERE packed_with != '' LIMIT 1").fetchone():
        stats.notes.append(PACKED_NOTE)
    stats.sources_bytes = db.execute(
        "SELECT coalesce(sum(text_chars), 0) FROM sources WHERE status != 'retracted'"
    ).fetchone()[0]
    for folder, _dirs, files in os.walk(vault.root / "sources", followlinks=False):
        for name in files:
            try:
                stats.source_files_bytes += os.lstat(os.path.join(folder, name)).st_size
            except OSError:
                continue
    return stats


__all__ = ["Stats", "vault_stats"]
