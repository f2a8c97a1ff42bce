"""W10: nothing read from a vault sends a write outside it, and nothing done for a vault runs with
more authority than its owner has (paths, recovery, root daemons, API keys, file modes).

Each test is what an attacker who controls a vault's files would try: a forged apply journal, a
forged page slug in the database, a symlinked folder, a vault owned by another user served by a
root daemon, a config that points a provider at a host of theirs. The root-only tests (another
UID is needed) skip when not run as root.
"""

from __future__ import annotations

import http.server
import json
import os
import shutil
import stat
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest

from affidavit import inbox
from affidavit.config import load_config
from affidavit.doctor import run_doctor
from affidavit.errors import IntegrityError, ProviderError, VaultError
from affidavit.providers import Message, ModelRequest
from affidavit.providers.from_config import provider_from_config
from affidavit.retrieval.search import Retriever
from affidavit.retrieval.tantivy_index import wait_for_refresh
from affidavit.server.check import run_check
from affidavit.server.runtime import ServeOptions
from affidavit.store.apply import render_all_files
from affidavit.store.recovery import pending_journals, recover
from affidavit.vault import Vault, init_vault, open_vault
from tests.conftest import add_samples, fresh_nonce, sample_plan_text

NOBODY = 65534
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as another user")
PLAN_ID = "ab" * 32


def applied_vault(root: Path) -> tuple[Vault, str]:
    """A vault with the sample plan applied; returns it and the applied plan's id."""
    vault, _ = init_vault(root)
    add_samples(vault)
    proposal = inbox.propose(vault, sample_plan_text(vault), "tester", "sample")
    inbox.approve(vault, proposal.plan_id, None, "tester")
    return vault, proposal.plan_id


def forge_journal(vault: Vault, plan_id: str, files: list[dict[str, str]]) -> Path:
    path = vault.journal_dir / f"{plan_id}.json"
    body = {"plan_id": plan_id, "message": "forged", "files": files}
    path.write_text(json.dumps(body), encoding="utf-8")
    return path


def outside_tree(base: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(base.rglob("*")) if p.is_file()}


# --- forged journals -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "entry",
    [
        {"path": "wiki/index.md", "temp": "../rootonly/victim.txt"},
        {"path": "../rootonly/victim.txt", "temp": "wiki/.index.md.0123456789ab.affidavit-tmp"},
        {"path": "wiki/index.md", "temp": "ABSOLUTE"},
        {"path": "ABSOLUTE", "temp": "wiki/.x.md.0123456789ab.affidavit-tmp"},
    ],
    ids=["temp-dotdot", "path-dotdot", "temp-absolute", "path-absolute"],
)
@pytest.mark.parametrize("applied", [False, True], ids=["roll-back", "roll-forward"])
def test_a_forged_journal_touches_nothing_outside_the_vault(
    tmp_path: Path, entry: dict[str, str], applied: bool
) -> None:
    victim = tmp_path / "rootonly" / "victim.txt"
    victim.parent.mkdir()
    victim.write_text("root's own file\n")
    entry = {k: str(victim) if v == "ABSOLUTE" else v for k, v in entry.items()}
    vault, plan_id = applied_vault(tmp_path / "v")
    vault.close()
    with open_vault(tmp_path / "v") as vault:
        forge_journal(vault, plan_id if applied else PLAN_ID, [entry])
    with open_vault(tmp_path / "v") as vault:  # recovery runs here
        assert victim.read_text() == "root's own file\n"
        assert pending_journals(vault), "a refused journal stays for the doctor"
        report = recover(vault)
        assert len(report) == 1 and report[0].startswith("refused journal")
        findings = [f for f in run_doctor(vault).findings if f.check == "journal"]
        assert findings and "refuses" in findings[0].message
    assert victim.read_text() == "root's own file\n"


def test_a_symlinked_wiki_folder_is_never_written_through(tmp_path: Path) -> None:
    outside = tmp_path / "rootonly"
    outside.mkdir()
    (outside / "keep.txt").write_text("untouched\n")
    vault, plan_id = applied_vault(tmp_path / "v")
    wiki = vault.wiki_dir
    vault.close()
    shutil.rmtree(wiki)
    wiki.symlink_to(outside, target_is_directory=True)
    (outside / ".index.md.0123456789ab.affidavit-tmp").write_text("root's temp-named file\n")
    before = outside_tree(outside)
    with open_vault(tmp_path / "v") as vault:
        forge_journal(
            vault,
            plan_id,
            [{"path": "wiki/index.md", "temp": "wiki/.index.md.0123456789ab.affidavit-tmp"}],
        )
    with open_vault(tmp_path / "v") as vault:  # roll forward would write wiki/index.md
        assert outside_tree(outside) == before
        assert pending_journals(vault)
        with pytest.raises(IntegrityError, match="symlink"):
            render_all_files(vault)
    assert outside_tree(outside) == before


def test_a_symlinked_page_is_replaced_not_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim.md"
    victim.write_text("root's file\n")
    vault, plan_id = applied_vault(tmp_path / "v")
    page = next(p for p in vault.wiki_dir.glob("*.md") if p.stem not in ("index", "log", "context"))
    vault.close()
    page.unlink()
    page.symlink_to(victim)
    with open_vault(tmp_path / "v") as vault:
        forge_journal(
            vault,
            plan_id,
            [
                {
                    "path": f"wiki/{page.name}",
                    "temp": f"wiki/.{page.name}.0123456789ab.affidavit-tmp",
                }
            ],
        )
    with open_vault(tmp_path / "v") as vault:  # a valid journal: rolled forward
        assert not pending_journals(vault)
        assert not page.is_symlink() and page.read_text().startswith("---")
    assert victim.read_text() == "root's file\n"


# --- forged slugs in the database ----------------------------------------------------------------


def _forge_page(vault: Vault, slug: str) -> None:
    vault.db.execute(
        "INSERT INTO pages (slug, title, summary, category, created_at, updated_at, plan_id) "
        "SELECT ?, title, summary, category, created_at, updated_at, plan_id FROM pages LIMIT 1",
        (slug,),
    )


def test_a_forged_slug_is_refused_by_render_apply_and_doctor(tmp_path: Path) -> None:
    vault, _ = applied_vault(tmp_path / "a" / "v")
    with vault:
        _forge_page(vault, "../../pwn")
        with pytest.raises(IntegrityError, match="not a valid page slug"):
            render_all_files(vault)
        with pytest.raises(IntegrityError, match="not a valid page slug"):
            run_doctor(vault)
        # a plan whose apply touches the forged page (a claim moved onto it in the database)
        claim = vault.db.execute("SELECT id FROM claims WHERE status = 'active'").fetchone()[0]
        vault.db.execute("UPDATE claims SET page_slug = '../../pwn' WHERE id = ?", (claim,))
        plan = {
            "nonce": fresh_nonce(vault),
            "operations": [{"op": "retract_claim", "claim": claim, "reason": "wrong"}],
        }
        proposal = inbox.propose(vault, plan, "tester", "test")
        with pytest.raises(IntegrityError, match="not a valid page slug"):
            inbox.approve(vault, proposal.plan_id, None, "tester")
    assert not (tmp_path / "pwn.md").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a"]


def test_a_forged_source_path_is_never_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("root's secret\n")
    vault, _ = applied_vault(tmp_path / "v")
    with vault:
        source = vault.db.execute("SELECT id FROM sources LIMIT 1").fetchone()[0]
        vault.db.execute("UPDATE sources SET text_file = '../secret.txt' WHERE id = ?", (source,))
        from affidavit.sources.store import SourceStore

        with pytest.raises(
            IntegrityError, match=r"not a (file under sources/|path inside the vault)"
        ):
            SourceStore(vault).text(source)


# --- file modes ------------------------------------------------------------------------------------


def test_private_parts_are_private_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        vault, _ = init_vault(tmp_path / "v")
        with vault, vault.write_lock():  # open: the -wal and -shm files exist
            state = tmp_path / "v" / ".affidavit"
            assert stat.S_IMODE(state.stat().st_mode) == 0o700
            assert stat.S_IMODE((state / "journal").stat().st_mode) == 0o700
            for name in ("db.sqlite", "db.sqlite-wal", "db.sqlite-shm", "lock"):
                path = state / name
                assert path.exists(), name
                assert stat.S_IMODE(path.stat().st_mode) == 0o600, name
    finally:
        os.umask(old)
    # a file made readable later is private again on the next open
    os.chmod(state / "db.sqlite", 0o644)
    os.chmod(state, 0o755)
    open_vault(tmp_path / "v").close()
    assert stat.S_IMODE((state / "db.sqlite").stat().st_mode) == 0o600
    assert stat.S_IMODE(state.stat().st_mode) == 0o700


def test_serve_check_fails_on_a_readable_database(tmp_path: Path) -> None:
    init_vault(tmp_path / "v")[0].close()
    sock = tmp_path / "run" / "affidavit.sock"
    assert run_check(ServeOptions(socket_path=sock, vaults=[tmp_path / "v"])).passed
    db = tmp_path / "v" / ".affidavit" / "db.sqlite"
    os.chmod(db, 0o644)
    report = run_check(ServeOptions(socket_path=sock, vaults=[tmp_path / "v"]))
    assert not report.passed
    text = report.render()
    assert str(db) in text and f"chmod -R go-rwx {db.parent}" in text


# --- keys: only the owner's, only to their host ----------------------------------------------------


class Recorder(http.server.BaseHTTPRequestHandler):
    seen: ClassVar[list[str | None]]

    def do_POST(self) -> None:
        type(self).seen.append(self.headers.get("Authorization"))
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.dumps(
            {
                "choices": [{"message": {"content": "ok"}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1},
                "model": "m",
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture
def recorder() -> Iterator[tuple[str, list[str | None]]]:
    seen: list[str | None] = []
    handler = type("Handler", (Recorder,), {"seen": seen})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", seen
    finally:
        server.shutdown()
        server.server_close()


def _call(config_dir: Path, body: str) -> None:
    (config_dir / "affidavit.toml").write_text(body)
    provider = provider_from_config(load_config(config_dir / "affidavit.toml"))
    try:
        provider.complete(ModelRequest(messages=(Message("user", "hi"),), max_tokens=8))
    finally:
        provider.close()


def _keys(path: Path, body: str, mode: int = 0o600) -> Path:
    path.write_text(body)
    os.chmod(path, mode)
    return path


def test_keys_go_only_to_the_host_they_are_for(
    tmp_path: Path, recorder: tuple[str, list[str | None]], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, seen = recorder
    keys = _keys(tmp_path / "keys.toml", 'openai = "sk-openai-only"\n"127.0.0.1" = "sk-local"\n')
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-openai")
    head = f'[model]\nprovider = "openai"\nname = "m"\nbase_url = "{url}"\nkeys_file = "{keys}"\n'
    _call(tmp_path, head)  # the host's own entry, never the OpenAI key
    _call(tmp_path, head + 'api_key_env = "OPENAI_API_KEY"\n')  # naming the default: still not
    assert seen == ["Bearer sk-local", "Bearer sk-local"]
    keys.write_text('openai = "sk-openai-only"\n')
    _call(tmp_path, head)
    assert seen[-1] is None
    link = tmp_path / "link.toml"
    link.symlink_to(keys)
    with pytest.raises(ProviderError, match="symlink"):
        _call(tmp_path, head.replace(str(keys), str(link)))


@ROOT_ONLY
def test_a_vault_of_another_user_never_gets_our_keys(
    tmp_path: Path, recorder: tuple[str, list[str | None]], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, seen = recorder
    ours = _keys(tmp_path / "root-keys.toml", 'openai = "sk-root"\n"127.0.0.1" = "sk-root-local"\n')
    monkeypatch.setenv("ROOT_SECRET", "sk-root-env")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-root-env-openai")
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.chown(theirs, NOBODY, NOBODY)
    head = f'[model]\nprovider = "openai"\nname = "m"\nbase_url = "{url}"\n'
    _call(theirs, head + 'api_key_env = "ROOT_SECRET"\n')
    with pytest.raises(ProviderError, match="not to the vault's owner"):
        _call(theirs, head + f'keys_file = "{ours}"\n')
    # their own keys file is used (it is theirs and private)
    own = _keys(theirs / "keys.toml", '"127.0.0.1" = "sk-nobody"\n')
    os.chown(own, NOBODY, NOBODY)
    _call(theirs, head + f'keys_file = "{own}"\n')
    assert seen == [None, "Bearer sk-nobody"]


# --- another user's vault, opened by root ----------------------------------------------------------


@ROOT_ONLY
def test_root_only_reads_another_users_vault() -> None:
    from tests.test_server_authz import private_dir

    # a folder its owner can reach: root reads another user's vault with that user's authority
    tmp_path = private_dir("afd-rootonly-")
    os.chmod(tmp_path, 0o755)
    victim = tmp_path / "rootonly" / "victim.txt"
    victim.parent.mkdir(mode=0o700)
    victim.write_text("root's own file\n")
    vault, _ = applied_vault(tmp_path / "v")
    plan = json.loads(sample_plan_text(vault))
    plan["operations"] = plan["operations"][:1]
    plan["operations"][0]["slug"] = "pending-copy"
    pending = inbox.propose(vault, plan, "tester", "test")
    assert pending.status == "pending", pending.message
    forge_journal(vault, PLAN_ID, [{"path": "wiki/index.md", "temp": "../rootonly/victim.txt"}])
    temp = vault.wiki_dir / ".index.md.0123456789ab.affidavit-tmp"
    vault.close()
    temp.write_text("an interrupted write, theirs to recover\n")
    assert wait_for_refresh(60)  # the setup's own index work, done as the setup's user
    shutil.rmtree(tmp_path / "v" / ".affidavit" / "search-v1")  # a search as root would build it
    subprocess.run(["chown", "-R", f"{NOBODY}:{NOBODY}", str(tmp_path / "v")], check=True)
    with open_vault(tmp_path / "v") as vault:
        assert vault.read_only and "sudo -u nobody" in vault.read_only
        retriever = Retriever(vault.db)  # searching their vault writes nothing of ours in it
        (claim,) = vault.db.execute("SELECT text FROM claims LIMIT 1").fetchone()
        assert retriever.search(claim, k=3)
        assert retriever.used == "fts5" and wait_for_refresh(60)
        assert temp.exists() and pending_journals(vault)  # no recovery as root
        assert victim.read_text() == "root's own file\n"
        assert vault.db.execute("SELECT count(*) FROM pages").fetchone()[0] > 0  # reads work
        with pytest.raises(VaultError, match="belongs to nobody"), vault.write_lock():
            pass
        with pytest.raises(VaultError, match="belongs to nobody"):
            vault.git.head()
        with pytest.raises(VaultError, match="belongs to nobody"):
            vault.db.execute("DELETE FROM pages")  # the database itself is read-only
        with pytest.raises(VaultError, match="belongs to nobody"):
            inbox.approve(vault, pending.plan_id, None, "root")
    # the CLI: `sudo affidavit doctor` on their vault reads, and refuses what needs git or writes
    from click.testing import CliRunner

    from affidavit.cli import main

    runner = CliRunner(env={"AFFIDAVIT_NO_DAEMON": "1"})
    doctor = runner.invoke(main, ["--vault", str(tmp_path / "v"), "doctor"])
    assert doctor.exit_code == 1 and "sudo -u nobody affidavit" in doctor.output
    listed = runner.invoke(main, ["--vault", str(tmp_path / "v"), "inbox"])
    assert listed.exit_code == 0, listed.output
    assert temp.exists() and victim.read_text() == "root's own file\n"
    for path in (tmp_path / "v").rglob("*"):
        assert path.lstat().st_uid == NOBODY, f"{path} was created as root"


@ROOT_ONLY
def test_a_root_daemon_serves_another_users_vault_read_only(
    recorder: tuple[str, list[str | None]],
) -> None:
    from tests.test_server_authz import as_user, fingerprint, private_dir, start_daemon

    url, seen = recorder
    base = private_dir("afd-authority-")
    vault, _ = applied_vault(base / "theirs")
    plan = json.loads(sample_plan_text(vault))
    vault.close()
    config = base / "theirs" / "affidavit.toml"
    root_keys = _keys(base / "root-keys.toml", '"127.0.0.1" = "sk-root-file"\n')
    config.write_text(
        f'[model]\nprovider = "openai"\nname = "m"\nbase_url = "{url}"\n'
        f'api_key_env = "ROOT_SECRET"\nkeys_file = "{root_keys}"\n'
    )
    subprocess.run(["git", "-C", str(base / "theirs"), "commit", "-qam", "model"], check=True)
    assert wait_for_refresh(60)  # the setup's own index work, done as the setup's user
    subprocess.run(["chown", "-R", f"{NOBODY}:{NOBODY}", str(base / "theirs")], check=True)
    os.environ["ROOT_SECRET"] = "sk-root-env"
    try:
        daemon = start_daemon([base / "theirs"], base)
    finally:
        del os.environ["ROOT_SECRET"]
    try:
        before = fingerprint(base / "theirs")
        plan["operations"] = plan["operations"][:1]
        plan["operations"][0]["slug"] = "another-copy"
        who, pages, nonce, proposed, asked, tokens = as_user(
            NOBODY,
            daemon.socket,
            [
                ("GET", "/v1/whoami", None),
                ("GET", "/v1/vaults/theirs/pages", None),
                ("POST", "/v1/vaults/theirs/nonces", {"hours": 1}),
                ("POST", "/v1/vaults/theirs/plans", {"plan": plan, "origin": "test"}),
                ("POST", "/v1/vaults/theirs/ask", {"question": "What are the four freedoms?"}),
                ("POST", "/v1/vaults/theirs/tokens", {"role": "read", "expires_hours": 2}),
            ],
        )
        assert json.loads(who[1])["vaults"][0]["role"] == "read"
        assert pages[0] == 200
        for refused in (nonce, proposed, tokens):
            assert refused[0] == 403, refused
            assert "read-only" in json.loads(refused[1])["error"]["message"]
        del asked  # answered or not, root's keys never left:
        assert all(header is None or "sk-root" not in header for header in seen), seen
        assert fingerprint(base / "theirs") == before
        lines = daemon.log_lines()
        assert any(line.get("event") == "read_only" for line in lines)
    finally:
        assert daemon.stop() == 0
    for path in (base / "theirs").rglob("*"):
        assert path.lstat().st_uid == NOBODY, f"{path} was created as root"
