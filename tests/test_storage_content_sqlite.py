"""The content reads of the storage contract on SQLite (issue 26, stage 2b), the same as on
PostgreSQL (tests/test_storage_content.py): a page written by today's door (store/apply.py) read
back with its claims and evidence, byte for byte; a source's bytes and text re-hashed on read; a
tampered byte or quote found."""

from __future__ import annotations

import pytest

from affidavit.errors import ConflictError, IntegrityError
from affidavit.hashing import sha256_hex
from affidavit.inbox import approve, propose
from affidavit.storage import SQLiteStorage
from affidavit.vault import Vault

from .conftest import add_text, claim, make_plan

ATTACK = "'; DROP TABLE pages; -- <b>«ü»</b> 🚀 %s {s} $$"
TEXT = (
    "The committee met on 3 March in the town hall.\n"
    f"Robert'); DROP TABLE claims;-- signed the letter {ATTACK} on 4 March.\n"
)
QUOTES = (
    "The committee met on 3 March",
    f"Robert'); DROP TABLE claims;-- signed the letter {ATTACK}",
)


@pytest.fixture
def written(vault: Vault) -> tuple[SQLiteStorage, str]:
    source = add_text(vault, "minutes.md", TEXT)
    plan = make_plan(vault, {
        "op": "create_page", "slug": "committee", "title": "The committee",
        "summary": "The committee met on 3 March.",
        "claims": [claim(f"{QUOTES[0]}.", source, QUOTES[0]),
                   claim(f"{QUOTES[1]}.", source, QUOTES[1])],
    })  # fmt: skip
    approve(vault, propose(vault, plan, "tester", "t").plan_id, None, "tester")
    return SQLiteStorage(vault), source


def test_a_page_and_its_sources_read_back_byte_for_byte(written: tuple[SQLiteStorage, str]) -> None:
    storage, source = written
    assert storage.source_bytes("default", source) == TEXT.encode() and sha256_hex(TEXT) == source
    assert storage.source_text("default", source) == TEXT
    assert storage.source("default", source).size_bytes == len(TEXT.encode())
    page = storage.page("default", "committee")
    assert page is not None and page.title == "The committee"
    assert [c.text for c in page.claims] == [f"{q}." for q in QUOTES]
    for claim_, quote in zip(page.claims, QUOTES, strict=True):
        (ev,) = claim_.evidence
        assert (ev.quote, ev.start, ev.end) == (
            quote,
            TEXT.index(quote),
            TEXT.index(quote) + len(quote),
        )
    assert page.claims[1].evidence[0].location == "line 2"
    assert storage.page("default", "nowhere") is None
    with pytest.raises(ConflictError, match="holds one vault"):
        storage.page("other", "committee")


def test_a_tampered_source_byte_or_quote_is_found(written: tuple[SQLiteStorage, str]) -> None:
    storage, source = written
    vault = storage.vault
    relpath = vault.db.execute("SELECT original_file FROM sources").fetchone()[0]
    path = vault.root / relpath
    data = path.read_bytes()
    path.chmod(0o600)
    path.write_bytes(data[:5] + bytes([data[5] ^ 1]) + data[6:])
    with pytest.raises(IntegrityError, match="bytes no longer hash"):
        storage.source_bytes("default", source)
    with pytest.raises(IntegrityError, match="bytes no longer hash"):
        storage.page("default", "committee")
    path.write_bytes(data)
    assert storage.page("default", "committee") is not None
    # offsets edited in the table (the evidence view would recompute its checksum)
    vault.db.execute('UPDATE evidence_rows SET start = start + 1, "end" = "end" + 1')
    with pytest.raises(IntegrityError, match="evidence was altered"):
        storage.page("default", "committee")
