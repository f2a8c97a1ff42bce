"""A tampered source at the door, the same on both backends (issue 26): the claims citing a source
whose bytes or text no longer match their hashes are rejected (provenance) and only they — the
plan's other claims, and the batch's other plans, go in; a plan of nothing else is refused. On
PostgreSQL this once failed the whole batch with an IntegrityError."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from affidavit.errors import ConflictError
from affidavit.hashing import sha256_hex
from affidavit.sources.store import SourceStore

from .test_storage_gate import CLEAN, LONG, OPENED, PgWiki, SqliteWiki, page, says

pytestmark = pytest.mark.xdist_group("postgres")  # one cluster, on one worker

OTHER = "The river is 12 kilometres long. The river flows north."
RIVER = "The river is 12 kilometres long"


class SqliteTamper(SqliteWiki):
    def tamper(self, source: str, what: str) -> None:
        record = SourceStore(self.vault).get(source)
        path = self.vault.root / (record.text_file if what == "text" else record.original_file)
        os.chmod(path, 0o644)
        data = path.read_bytes()
        path.write_bytes(data.replace(b"north", b"south") if what == "text" else data + b" ")


class PgTamper(PgWiki):
    def tamper(self, source: str, what: str) -> None:
        import psycopg

        change = (
            "text = replace(text, 'north', 'south')"
            if what == "text"
            else "data = set_byte(data, 3, get_byte(data, 3) # 1)"
        )
        with self.storage.pool.connection() as conn:
            conn.execute(
                psycopg.sql.SQL("UPDATE {}.sources SET " + change + " WHERE id = %s").format(
                    psycopg.sql.Identifier(f"v_{self.name}")
                ),
                (source,),
            )


@pytest.fixture(params=["sqlite", "postgresql"])
def make(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    made: list[Any] = []

    def build(auto_apply: str = "never") -> Any:
        if request.param == "sqlite":
            wiki: Any = SqliteTamper(tmp_path / f"v{len(made)}", auto_apply)
        else:
            name = f"tamper_{sha256_hex(request.node.nodeid.encode())[:12]}_{len(made)}"
            wiki = PgTamper(request.getfixturevalue("pg_url"), name, auto_apply)
        made.append(wiki)
        return wiki

    yield build
    for wiki in made:
        wiki.close()


@pytest.mark.parametrize("what", ["text", "bytes"])
def test_only_the_claims_citing_a_tampered_source_are_rejected(make: Any, what: str) -> None:
    wiki = make()
    bridge = wiki.add(CLEAN, "trusted")
    river = wiki.add(OTHER, "trusted")
    wiki.tamper(river, what)  # the quote itself is still in the altered text
    plan = wiki.submit([page("bridge", says("The bridge opened in 1932.", bridge, OPENED),
                             says("The river is 12 kilometres long.", river, RIVER))])  # fmt: skip
    assert not plan.startswith("refused")
    wiki.approve(plan)
    assert wiki.claims("bridge") == [("The bridge opened in 1932.", "trusted")]
    assert wiki.verdicts(plan) == [("admitted", ""), ("rejected", "provenance")]
    only = wiki.submit([page("river", says("The river is 12 kilometres long.", river, RIVER))])
    if not only.startswith("refused:"):  # PostgreSQL with a person's approval: refused too
        with pytest.raises(ConflictError, match="no longer"):
            wiki.approve(only)
    assert wiki.claims("river") is None


def test_on_postgresql_the_batch_goes_on_past_a_plan_citing_a_tampered_source(
    pg_url: str,
) -> None:
    wiki = PgTamper(pg_url, "tamper_batch", "never")
    try:
        bridge = wiki.add(CLEAN, "trusted")
        river = wiki.add(OTHER, "trusted")
        wiki.tamper(river, "bytes")
        plans = []
        for n, ops in enumerate([
            [page("river", says("The river is 12 kilometres long.", river, RIVER))],
            [page("bridge", says(LONG, bridge, LONG))],
        ]):  # fmt: skip
            plans.append(f"t{n}")
            wiki.storage.propose(
                wiki.name, f"t{n}", author="ann", origin="cli",
                plan_json=json.dumps({"nonce": f"nonce-t{n}-0123456789abcdef", "operations": ops}),
                created_at="2026-12-06T12:00:00Z", expires_at="2026-12-13T12:00:00Z",
            )  # fmt: skip
        with wiki.storage.door(wiki.name, "b-1") as door:
            with pytest.raises(ConflictError, match="no longer hash"):
                door.apply_plan("t0", now="2026-12-06T12:00:00Z", actor="ann")
            door.apply_plan("t1", now="2026-12-06T12:00:00Z", actor="ann")
        assert [b.plans for b in wiki.storage.batches(wiki.name)] == [("t1",)]
        assert wiki.claims("bridge") == [(LONG, "trusted")] and wiki.claims("river") is None
        assert wiki.status("t0") == "pending"
    finally:
        wiki.close()
