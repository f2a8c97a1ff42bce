"""MCP's ``add_source`` on a vault of a PostgreSQL database (issue 26), as on a vault folder: a
file under ``mcp.source_dirs`` (or a public URL) is read as ``affidavit team add`` reads it —
HTML, Word, OpenDocument, EPUB… with what a reader does not see flagged (W12) — stored in the
database with the same text, flags and reply a SQLite vault gives, and an agent's plan citing it
waits for a person. Before, the tool refused on PostgreSQL. The attacker's calls — a file outside
the allowed folders, a hidden one, a symlink out, a private address, binary bytes named as
markdown, a server that is not the vault's owner, past the hourly quota — store nothing."""

from __future__ import annotations

import hashlib
import json
import os
import pwd
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

pytestmark = pytest.mark.xdist_group("postgres")
pytest.importorskip("psycopg")
pytest.importorskip("mcp")

from mcp import ClientSession  # noqa: E402
from mcp.server.fastmcp.exceptions import ToolError  # noqa: E402

from affidavit.config import Config, load_config  # noqa: E402
from affidavit.errors import AffidavitError  # noqa: E402
from affidavit.mcp.pg import PgWiki  # noqa: E402
from affidavit.mcp.wiki import SqliteWiki  # noqa: E402
from affidavit.service.pg_vaults import PgVault  # noqa: E402
from affidavit.storage.postgres import PostgresStorage  # noqa: E402
from affidavit.vault import Vault  # noqa: E402

from .office_docs import HIDDEN, VISIBLE, hidden_docx, hidden_epub, hidden_odt  # noqa: E402
from .pg_cluster import drop_vaults  # noqa: E402
from .test_mcp import set_config  # noqa: E402
from .test_mcp_pg_stdio import ROOT, _text  # noqa: E402
from .test_pg_team_add import PAGE  # noqa: E402

ME = pwd.getpwuid(os.geteuid()).pw_name
NOTES = "The lock gates at Teddington were rebuilt in 1950 after a flood.\n"


class Drop:
    """A database with vaults ``team`` (owned by the user running the tests) and ``theirs``
    (owned by no user here), and a folder of documents an agent may add."""

    def __init__(self, url: str, tmp: Path) -> None:
        drop_vaults(url)
        self.url = url
        self.storage = PostgresStorage(url)
        self.storage.create_vault("team", ME)
        self.storage.create_vault("theirs", "nobody-here")
        self.dir = tmp / "drop"
        self.dir.mkdir()
        files = {
            "bridge.html": PAGE.encode(),
            "report.docx": hidden_docx(),
            "report.odt": hidden_odt(),
            "book.epub": hidden_epub(),
            "notes.md": NOTES.encode(),
            "fake.md": bytes(range(256)) * 8,
        }
        for name, data in files.items():
            (self.dir / name).write_bytes(data)
        (self.dir / ".private").mkdir()
        (self.dir / ".private" / "keys.md").write_text("secret: sk-the-agent-wants-it\n")
        outside = tmp / "outside.md"
        outside.write_text("Outside the allowed folder.\n")
        (self.dir / "link.md").symlink_to(outside)
        self.outside = outside
        self.toml = tmp / "affidavit.toml"
        self.toml.write_text(f"[mcp]\nsource_dirs = [{json.dumps(str(self.dir))}]\n")

    def vault(self, name: str = "team", config: Config | None = None) -> PgVault:
        return PgVault(self.storage, name, config or load_config(self.toml))

    def ids(self, vault: str = "team") -> set[str]:
        with self.storage.pool.connection() as conn:
            found = conn.execute(f"SELECT id FROM v_{vault}.sources").fetchall()
        return {str(r["id"]) for r in found}


@pytest.fixture
def drop(pg_url: str, tmp_path: Path) -> Iterator[Drop]:
    made = Drop(pg_url, tmp_path)
    yield made
    made.storage.close()


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def over_stdio(drop: Drop, *calls: tuple[str, dict[str, Any]]) -> list[tuple[bool, str]]:
    from mcp.client.stdio import StdioServerParameters, stdio_client

    argv = ["-c", "from affidavit.cli import main; main()", "mcp", "--database", drop.url,
            "--vault", "team", "--config", str(drop.toml)]  # fmt: skip
    params = StdioServerParameters(
        command=sys.executable,
        args=argv,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src"), "AFFIDAVIT_DATABASE": ""},
    )
    out: list[tuple[bool, str]] = []

    async def go() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            for name, args in calls:
                out.append(_text(await client.call_tool(name, args)))

    anyio.run(go)
    return out


def test_add_source_over_stdio_stores_what_a_reader_sees_and_the_plan_waits(drop: Drop) -> None:
    bridge = drop.dir / "bridge.html"
    visible = "The bridge over the river Tamar opened in 1932 after four years of work."
    hidden = "The bridge was quietly sold to Mallory Holdings in 2020 for one pound."
    plan = [{"op": "create_page", "slug": "bridge", "title": "Bridge", "summary": "The bridge",
             "claims": [{"text": visible, "evidence": [{"source": sha(bridge),
                                                        "quote": visible.rstrip(".")}]}]}]  # fmt: skip
    sold = [{"op": "create_page", "slug": "sale", "title": "Sale", "summary": "The sale",
             "claims": [{"text": hidden, "evidence": [{"source": sha(bridge),
                                                       "quote": hidden.rstrip(".")}]}]}]  # fmt: skip
    added, again, docx, read, proposed, hid = over_stdio(
        drop,
        ("add_source", {"location": str(bridge)}),
        ("add_source", {"location": str(bridge)}),
        ("add_source", {"location": str(drop.dir / "report.docx")}),
        ("read_source", {"source": sha(bridge)[:12]}),
        ("propose_plan", {"operations": plan}),
        ("propose_plan", {"operations": sold}),
    )
    assert added == (False, f"source {sha(bridge)[:16]} (bridge.html, semi-trusted): added. "
                            "Next: read_source.")  # fmt: skip
    assert again == (False, f"source {sha(bridge)[:16]} (bridge.html, semi-trusted): already "
                            "stored. Next: read_source.")  # fmt: skip
    assert not docx[0] and "(report.docx, semi-trusted): added" in docx[1]
    assert not read[0] and "opened in 1932" in read[1] and "<p" not in read[1]
    assert not proposed[0] and "status pending" in proposed[1], proposed
    plan_id = proposed[1].split()[1]
    record = drop.storage.plan("team", plan_id)
    assert record is not None and record.status == "pending"  # an agent's plan waits (W13)
    # the hidden sentence is quarantined: evidence a reader doesn't see (W12)
    assert "quarantined (sanitizer" in hid[1] and "0 claim(s) admitted" in hid[1]
    assert drop.ids() == {sha(bridge), sha(drop.dir / "report.docx")}


@pytest.mark.parametrize("name", ["bridge.html", "report.docx", "report.odt", "book.epub",
                                  "notes.md"])  # fmt: skip
def test_the_same_text_flags_and_reply_as_on_a_vault_folder(
    drop: Drop, vault: Vault, name: str
) -> None:
    path = drop.dir / name
    folder = set_config(vault, drop.toml.read_text())
    try:
        on_sqlite = SqliteWiki(folder, lambda v: None)
        on_pg = PgWiki(drop.vault())
        assert on_pg.add_source(str(path), "agent") == on_sqlite.add_source(str(path), "agent")
        (want, want_text), (got, got_text) = (
            on_sqlite.source_text(sha(path)),
            on_pg.source_text(sha(path)),
        )
    finally:
        folder.close()
    assert got_text == want_text
    assert [(f.kind, f.start, f.end) for f in got.flags] == [
        (f.kind, f.start, f.end) for f in want.flags
    ]
    assert (got.media_type, got.trust, got.name, got.origin) == (
        want.media_type, want.trust, want.name, want.origin,
    )  # fmt: skip
    if name in ("report.docx", "report.odt"):  # every hidden sentence kept under a flag (W12)
        assert VISIBLE in got_text
        for technique, sentence in HIDDEN[name.split(".")[1]].items():
            at = got_text.find(sentence[:30])
            assert at < 0 or any(f.start <= at < f.end for f in got.flags), technique


def test_the_attackers_calls_store_nothing(drop: Drop) -> None:
    wiki = PgWiki(drop.vault())
    refused = [
        drop.outside,  # outside mcp.source_dirs
        drop.dir / "link.md",  # a symlink out of it
        drop.dir / ".private" / "keys.md",  # a hidden folder under it
        drop.dir / "notes.md" / ".." / ".private" / "keys.md",
        Path("notes.md"),  # not absolute
    ]
    for path in refused:
        with pytest.raises(ToolError):
            wiki.add_source(str(path), "agent")
    for location in ("http://127.0.0.1:1/notes.md", "http://[::1]/x", "http://10.0.0.1/x"):
        with pytest.raises(AffidavitError, match="public"):  # no SSRF into the host's network
            wiki.add_source(location, "agent")
    with pytest.raises(AffidavitError, match="refusing binary content"):
        wiki.add_source(str(drop.dir / "fake.md"), "agent")
    assert drop.ids() == set()
    # a server not running as the vault's owner never reads a file for it (W10)
    with pytest.raises(ToolError, match="not as the vault's owner nobody-here"):
        PgWiki(drop.vault("theirs")).add_source(str(drop.dir / "notes.md"), "agent")
    assert drop.ids("theirs") == set()
    # files are off until the owner lists folders
    with pytest.raises(ToolError, match="adding files is off"):
        PgWiki(drop.vault(config=Config())).add_source(str(drop.dir / "notes.md"), "agent")
    assert drop.ids() == set()


def test_the_hourly_quota_is_charged_first(drop: Drop) -> None:
    drop.toml.write_text(drop.toml.read_text() + "add_source_per_hour = 2\n")
    wiki = PgWiki(drop.vault())
    wiki.add_source(str(drop.dir / "notes.md"), "token:ab12")
    with pytest.raises(ToolError):  # refused, but the call counts (as on a folder)
        wiki.add_source(str(drop.outside), "token:ab12")
    with pytest.raises(AffidavitError, match="add_source is limited to 2 call"):
        wiki.add_source(str(drop.dir / "bridge.html"), "token:ab12")
    assert drop.ids() == {sha(drop.dir / "notes.md")}
    wiki.add_source(str(drop.dir / "bridge.html"), "token:cd34")  # another caller's own quota
    assert sha(drop.dir / "bridge.html") in drop.ids()
