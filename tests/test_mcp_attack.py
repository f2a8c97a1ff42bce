"""A hostile agent's add_source and oversized results: what the owner didn't allow stays out.

``mcp.source_dirs`` names where an agent may read files; inside it, hidden files (``.git``,
``.env``, a vault's ``.affidavit``) and this vault's own files are still refused, a file larger
than ``sources.max_url_bytes`` is refused before it is read, a FIFO or device never hangs or
feeds the server, and a server running as someone else (the daemon as root) reads only what the
vault's owner could read. A result never exceeds ``mcp.max_result_tokens``, its header included.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from affidavit.retrieval.tokens import count_tokens
from affidavit.service import vaults as svc
from affidavit.sources.store import SourceStore
from affidavit.vault import Vault, init_vault, open_vault

from .conftest import add_text, claim, snapshot
from .test_mcp import calls, set_config

TEXT = "The harbour of Kessel froze solid in the winter of 1709 for many weeks.\n"


def _allow(vault: Vault, *dirs: Path, extra: str = "") -> Vault:
    listed = ", ".join(json.dumps(str(d)) for d in dirs)
    return set_config(vault, f"{extra}[mcp]\nsource_dirs = [{listed}]")


def test_hidden_files_and_the_vaults_own_files_are_refused_under_an_allowed_dir(
    vault: Vault,
) -> None:
    """The owner lists the folder that holds the vault: its database, config, git and the
    dotfiles beside it are still no agent's to read."""
    home = vault.root.parent
    (home / "notes.md").write_text(TEXT)
    (home / ".env").write_text("API_KEY=sk-secret-value-the-agent-wants\n")
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_ed25519.md").write_text("-----BEGIN OPENSSH PRIVATE KEY----- secret\n")
    vault = _allow(vault, home)
    try:
        before = {s.id for s in svc.list_sources(vault)}
        refused = [
            home / ".env",
            home / ".ssh" / "id_ed25519.md",
            vault.state_dir / "db.sqlite",
            vault.root / ".git" / "HEAD",
            vault.config_path,
            vault.root / "wiki" / "index.md",
            home / "notes.md" / ".." / ".env",
        ]
        results = calls(
            vault,
            *[("add_source", {"location": str(p)}) for p in refused],
            ("add_source", {"location": str(home / "notes.md")}),
        )
        for (error, text), path in zip(results, refused, strict=False):
            assert error, (path, text)
        assert not results[-1][0] and "added" in results[-1][1], results[-1]
        names = [s.name for s in svc.list_sources(vault) if s.id not in before]
        assert names == ["notes.md"]
    finally:
        vault.close()


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(
    vault: Vault, tmp_path: Path
) -> None:
    allowed = tmp_path / "drop"
    allowed.mkdir()
    (allowed / "big.md").write_text(TEXT * 40)  # 2,880 bytes
    (allowed / "small.md").write_text(TEXT)
    vault = _allow(vault, allowed, extra="[sources]\nmax_url_bytes = 1000\n")
    try:
        big, small = calls(
            vault,
            ("add_source", {"location": str(allowed / "big.md")}),
            ("add_source", {"location": str(allowed / "small.md")}),
        )
        assert big[0] and "sources.max_url_bytes" in big[1], big
        assert not small[0], small
        assert [s.name for s in svc.list_sources(vault)] == ["small.md"]
    finally:
        vault.close()


def test_fifos_devices_proc_and_hard_links_never_feed_the_server(
    vault: Vault, tmp_path: Path
) -> None:
    allowed = tmp_path / "drop"
    allowed.mkdir()
    os.mkfifo(allowed / "pipe.md")  # opening it for reading would wait for a writer forever
    os.link(vault.config_path, allowed / "config.md")  # a second name for the vault's config
    (allowed / "zero.md").symlink_to("/dev/zero")
    (allowed / "environ.md").symlink_to("/proc/self/environ")
    vault = _allow(vault, allowed, Path("/dev"), Path("/proc/self"))
    try:
        locations = [
            allowed / "config.md",
            allowed / "pipe.md",
            allowed / "zero.md",
            allowed / "environ.md",
            Path("/dev/zero"),
            Path("/dev/null"),
            Path("/proc/self/environ"),
        ]
        results = calls(vault, *[("add_source", {"location": str(p)}) for p in locations])
        for (error, text), path in zip(results, locations, strict=True):
            assert error, (path, text)
        assert svc.list_sources(vault) == []
    finally:
        vault.close()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs a server running as someone else (root)")
def test_a_server_that_is_not_the_owner_reads_no_file_or_url_for_the_vault(
    vault: Vault, tmp_path: Path
) -> None:
    """A root server for a vault owned by uid 4242 only reads it (W10): add_source reads no
    file and fetches no URL with root's authority, and says why."""
    from tests.test_server_authz import private_dir

    (tmp_path / "root-only.md").write_text(TEXT)
    os.chmod(tmp_path / "root-only.md", 0o600)
    vault.close()
    vault, _ = init_vault(private_dir("afd-mcp-") / "v")  # a folder its owner can reach
    vault = _allow(vault, tmp_path)
    root = vault.root
    vault.close()
    subprocess.run(["chown", "-R", "4242:4242", str(root)], check=True)
    vault = open_vault(root)
    try:
        results = calls(
            vault,
            ("add_source", {"location": str(tmp_path / "root-only.md")}),
            ("add_source", {"location": "http://127.0.0.1:1/"}),
        )
        for error, text in results:
            assert error and "can't add sources here" in text and "UID 4242" in text, text
        assert svc.list_sources(vault) == []
    finally:
        vault.close()
        subprocess.run(["chown", "-R", "0:0", str(root)], check=True)


def test_a_header_longer_than_the_cap_is_cut_too(vault: Vault) -> None:
    """A source's name (from the agent's own URL or file) is in read_source's header."""
    vault = set_config(vault, "[mcp]\nmax_result_tokens = 500")
    try:
        source = SourceStore(vault).add_bytes(TEXT.encode(), "x", "n" * 4000 + ".md").record.id
        text = calls(vault, ("read_source", {"source": source}))[0][1]
        assert count_tokens(text) <= 500, count_tokens(text)
        assert "[s1] The harbour" in text
    finally:
        vault.close()


def test_a_malformed_plan_names_the_fix_not_another_tool(vault: Vault) -> None:
    source = add_text(vault, "n.md", TEXT)
    page = {"op": "create_page", "slug": "Bad Slug", "title": "T", "summary": "S"}
    page["claims"] = [claim("The harbour froze in 1709.", source, "froze solid in the winter")]
    before = snapshot(vault)
    [(error, text)] = calls(vault, ("propose_plan", {"operations": [page]}))
    assert error and "schema" in text and "propose_plan again" in text, text
    assert "plan_status" not in text
    assert snapshot(vault)["db"] == before["db"]  # not even a nonce


def test_errors_name_the_next_mcp_call_not_a_cli_command_or_route(vault: Vault) -> None:
    """An agent can call tools only: "GET …/pages" or "`affidavit sources list`" sends it
    nowhere; the message says which tool helps."""
    results = calls(
        vault,
        ("read_page", {"slug": "harbour"}),
        ("read_source", {"source": "abcd"}),
        ("read_source", {"source": "zz"}),
        ("plan_status", {"plan_id": "abcd"}),
    )
    wanted = ["list_pages", "list_sources", "list_sources", "propose_plan returned"]
    for (error, text), tool in zip(results, wanted, strict=True):
        assert error and tool in text, text
        assert "`affidavit" not in text and "GET " not in text, text
    assert "create the page in the same plan" in results[0][1]
