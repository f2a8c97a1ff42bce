"""W10, issue 23 item 2: a root daemon opens vault files without following links it did not vet.

The reproduction: a root `serve --shared` serves /home/a/va and /home/b/vb; user a renames her
vault and puts a symlink ``va -> /home/b/vb``. New pooled connections opened b's database through
the symlinked root and a's owner role on "va" listed b's sources. Here two ordinary users (uids
with no other rights) own the two vaults; the daemon runs as root, and a's requests come from a
forked child that became a. Then the attacks that come next: a symlink in the middle of a path, a
hard link where the database belongs, a race between the check and the open, and a swap before
the registry pins the vault.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from affidavit.errors import AffidavitError, IntegrityError, VaultError
from affidavit.server.auth import Principal
from affidavit.server.registry import Registry
from affidavit.service import tokens as token_store
from affidavit.sources.store import SourceStore
from affidavit.store.anchor import open_beneath
from affidavit.vault import attach, init_vault
from tests.conftest import add_text
from tests.test_server_authz import private_dir, start_daemon

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as other users")
ALICE, BOB = 65533, 65532
SECRET = "Bob's private ledger says the vault code is 4471"
OWN = "Alice's notes say the harbour was dredged in 1911"


@dataclass
class Homes:
    base: Path
    va: Path
    vb: Path
    bob_token: str


def _vault(root: Path, text: str, name: str) -> str:
    """A vault with one source; returns a read token of it."""
    vault, _ = init_vault(root)
    try:
        add_text(vault, name, text)
        _, token = token_store.create_token(
            vault.db, vault.clock, "read", timedelta(days=1), "t", "owner"
        )
        return token
    finally:
        vault.close()


def _homes(prefix: str) -> Homes:
    """/base/home-a/va owned by alice (her home: she may rename in it), /base/home-b/vb owned by
    bob in a home only he enters."""
    base = private_dir(prefix)
    home_a, home_b = base / "home-a", base / "home-b"
    home_a.mkdir()
    home_b.mkdir()
    _vault(home_a / "va", OWN + ".", "alice.md")
    bob_token = _vault(home_b / "vb", SECRET + ".", "ledger.md")
    subprocess.run(["chown", "-R", f"{ALICE}:{ALICE}", str(home_a)], check=True)
    subprocess.run(["chown", "-R", f"{BOB}:{BOB}", str(home_b)], check=True)
    os.chmod(home_a, 0o755)
    os.chmod(home_b, 0o700)
    return Homes(base, home_a / "va", home_b / "vb", bob_token)


def as_uid(uid: int, work: Callable[[], Any], groups: tuple[int, ...] = ()) -> Any:
    """Run ``work`` in a forked child that became ``uid`` (with ``groups`` as its supplementary
    groups, none by default); its JSON result."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        status = 0
        try:
            os.close(read_end)
            os.setgroups(list(groups))
            os.setgid(uid)
            os.setuid(uid)
            payload = json.dumps({"ok": work()}).encode()
        except BaseException as exc:
            payload = json.dumps({"error": repr(exc)}).encode()
            status = 1
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(payload)
        os._exit(status)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        data = json.loads(pipe.read())
    os.waitpid(pid, 0)
    assert "ok" in data, data
    return data["ok"]


def _swap(va: Path, vb: Path) -> Callable[[], None]:
    def swap() -> None:  # what alice does: her vault renamed, a symlink to bob's in its place
        os.rename(va, va.with_name("va.old"))
        os.symlink(vb, va)

    return swap


def _requests(sock: Path, paths: list[str], threads: int) -> list[list[Any]]:
    """``paths`` requested over the socket concurrently (so the daemon opens new connections)."""
    transport = httpx.HTTPTransport(uds=str(sock))
    with (
        httpx.Client(transport=transport, base_url="http://affidavit", timeout=600) as client,
        ThreadPoolExecutor(threads) as pool,
    ):
        answers = pool.map(lambda p: client.get(p), paths)
        return [[r.status_code, r.text] for r in answers]


# --- the reproduction, on a real root daemon ----------------------------------------------------


@ROOT_ONLY
def test_a_swapped_vault_root_never_opens_another_users_database() -> None:
    homes = _homes("afd-pins-daemon-")
    daemon = start_daemon([homes.va, homes.vb], homes.base)
    try:
        mine = as_uid(ALICE, lambda: _requests(daemon.socket, ["/v1/vaults/va/sources"], 1))
        assert mine[0][0] == 200 and "alice.md" in mine[0][1], mine
        as_uid(ALICE, _swap(homes.va, homes.vb))
        paths = [
            "/v1/vaults/va/sources",
            "/v1/vaults/va/plans?status=all",
            "/v1/vaults/va/search?q=vault+code",
            "/v1/vaults/va/pages",
        ] * 6
        answers = as_uid(ALICE, lambda: _requests(daemon.socket, paths, 24))
        assert len(answers) == 24
        for status, text in answers:
            assert "ledger" not in text and "4471" not in text, (status, text)
            assert status in (200, 503), (status, text)
            if status == 503:
                assert "is now a symlink" in text
        refused = [e for e in daemon.log_lines() if e.get("event") == "vault_refused"]
        assert all(e["vault"] == "va" for e in refused)
        assert bool(refused) == any(status == 503 for status, _ in answers)
        # bob's own vault is still his, and alice still has no role on it
        theirs = as_uid(ALICE, lambda: _requests(daemon.socket, ["/v1/vaults/vb/sources"], 1))
        assert theirs[0][0] == 403, theirs
    finally:
        assert daemon.stop() == 0


# --- in-process: each new connection is checked --------------------------------------------------


@contextlib.contextmanager
def _registry(homes: Homes) -> Iterator[Registry]:
    registry = Registry.open([homes.va, homes.vb])
    try:
        yield registry
    finally:
        registry.close()


def _sources(registry: Registry, name: str) -> list[str]:
    """The source names a brand-new connection of vault ``name`` lists."""
    served = registry.get(name)
    vault = attach(served.anchor, served.config, read_only=served.read_only)
    try:
        return [s.name for s in SourceStore(vault).list()]
    finally:
        vault.close()


@ROOT_ONLY
def test_every_new_connection_refuses_a_swapped_root() -> None:
    homes = _homes("afd-pins-root-")
    with _registry(homes) as registry:
        assert _sources(registry, "va") == ["alice.md"]
        as_uid(ALICE, _swap(homes.va, homes.vb))
        with pytest.raises(VaultError, match="is now a symlink"):
            _sources(registry, "va")
        served = registry.get("va")
        with served.borrow() as vault:  # a connection opened before the swap: still hers
            assert [s.name for s in SourceStore(vault).list()] == ["alice.md"]
        assert _sources(registry, "vb") == ["ledger.md"]


@ROOT_ONLY
def test_a_refused_vault_never_stops_the_other_vaults_tokens() -> None:
    homes = _homes("afd-pins-tokens-")
    with _registry(homes) as registry:
        as_uid(ALICE, _swap(homes.va, homes.vb))
        token_id, secret = token_store.split_token(homes.bob_token) or ("", "")
        with registry.get("va").borrow():  # her idle connection busy: the next one is new
            name, grant = registry.check_token(token_id, secret)
        assert name == "vb" and isinstance(grant, token_store.TokenGrant)


@ROOT_ONLY
def test_a_symlink_in_the_middle_of_a_path_is_refused() -> None:
    homes = _homes("afd-pins-middle-")
    with _registry(homes) as registry:

        def middle() -> None:  # her .affidavit replaced by a symlink to bob's
            state = homes.va / ".affidavit"
            os.rename(state, homes.va / ".affidavit-old")
            os.symlink(homes.vb / ".affidavit", state)

        as_uid(ALICE, middle)
        with pytest.raises(VaultError, match="can't be opened beneath the vault's root"):
            _sources(registry, "va")


@ROOT_ONLY
def test_a_source_text_is_never_read_through_a_swapped_folder() -> None:
    """Her database names bob's text file, and her sources/ becomes a symlink to his: the text is
    read beneath the pinned root, and the link leads nowhere."""
    homes = _homes("afd-pins-text-")
    bob_text = next(p.name for p in (homes.vb / "sources").glob("*.extracted.txt"))
    with _registry(homes) as registry:

        def point() -> str:
            db = sqlite3.connect(homes.va / ".affidavit" / "db.sqlite")
            (source_id,) = db.execute("SELECT id FROM sources").fetchone()
            db.execute("UPDATE sources SET text_file = ?", (f"sources/{bob_text}",))
            db.commit()
            db.close()
            os.rename(homes.va / "sources", homes.va / "sources-old")
            os.symlink(homes.vb / "sources", homes.va / "sources")
            return str(source_id)

        source_id = as_uid(ALICE, point)
        served = registry.get("va")
        with served.borrow() as vault, pytest.raises(IntegrityError, match="symlink"):
            SourceStore(vault).text(source_id)


@ROOT_ONLY
def test_a_hard_link_where_the_database_belongs_is_refused() -> None:
    """What a hard link to another user's database would look like (the kernel's
    protected_hardlinks stops her making one; root plays it here): another inode, another owner."""
    homes = _homes("afd-pins-link-")
    with _registry(homes) as registry:
        db = homes.va / ".affidavit" / "db.sqlite"
        for suffix in ("-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                db.with_name(db.name + suffix).unlink()
        db.unlink()
        os.link(homes.vb / ".affidavit" / "db.sqlite", db)
        with pytest.raises(VaultError, match="not a file of the vault's owner's own"):
            _sources(registry, "va")
        os.unlink(db)
        shutil.copy2(homes.vb / ".affidavit" / "db.sqlite", db)
        os.chown(db, ALICE, ALICE)  # a copy she owns: hers, but not the database pinned
        with pytest.raises(VaultError, match="not the database this process opened"):
            _sources(registry, "va")


@contextlib.contextmanager
def _bob_at_work(homes: Homes) -> Iterator[None]:
    """Bob's vault in use: a change of his sits in its -wal, not yet checkpointed (root plays his
    process, holding the connection open)."""
    bob = sqlite3.connect(homes.vb / ".affidavit" / "db.sqlite", isolation_level=None)
    try:
        bob.execute("PRAGMA wal_autocheckpoint=0")
        bob.execute("UPDATE sources SET name = 'ledger-today.md'")
        assert (homes.vb / ".affidavit" / "db.sqlite-wal").stat().st_size > 0
        yield
    finally:
        bob.close()


@ROOT_ONLY
def test_a_database_out_of_wal_mode_is_refused_its_journal_is_looked_up_by_name() -> None:
    """What SQLite opens besides the database: out of WAL mode, a reader looks for a -wal (and a
    hot -journal) by name before every read — as root once the open is done, through whatever her
    root's path names by then. She put her database in rollback mode before the daemon started;
    after the swap her pooled connection read bob's uncheckpointed pages from his -wal
    ('ledger-today.md'). Now such a database is refused for a vault this process does not own."""
    homes = _homes("afd-pins-journal-")

    def rollback_mode() -> str:
        db = sqlite3.connect(homes.va / ".affidavit" / "db.sqlite")
        try:
            return str(db.execute("PRAGMA journal_mode=DELETE").fetchone()[0])
        finally:
            db.close()

    assert as_uid(ALICE, rollback_mode) == "delete"
    with _bob_at_work(homes), pytest.raises(VaultError, match="not in WAL mode"):
        Registry.open([homes.va])


@ROOT_ONLY
def test_a_connection_in_wal_mode_never_opens_a_journal_again() -> None:
    """In WAL mode the -wal and -shm are opened with the connection (with her file-system
    identity) and kept: after the swap, with bob at work, her connection reads her database only;
    and while it is open she can't take her database out of WAL mode (nor by rewriting its header
    and deleting its -wal and -shm)."""
    homes = _homes("afd-pins-wal-")
    with _registry(homes) as registry, _bob_at_work(homes):
        served = registry.get("va")

        def out_of_wal() -> str:
            state = homes.va / ".affidavit"
            db = sqlite3.connect(state / "db.sqlite", timeout=0.1)
            try:
                db.execute("PRAGMA journal_mode=DELETE")
                return "switched"
            except sqlite3.OperationalError:
                pass
            finally:
                db.close()
            with open(state / "db.sqlite", "r+b") as handle:  # the header: rollback mode
                handle.seek(18)
                handle.write(b"\x01\x01")
            for suffix in ("-wal", "-shm"):
                with contextlib.suppress(FileNotFoundError):
                    (state / f"db.sqlite{suffix}").unlink()
            return "rewritten"

        assert as_uid(ALICE, out_of_wal) == "rewritten"
        as_uid(ALICE, _swap(homes.va, homes.vb))
        for _ in range(2):
            with served.borrow() as vault:
                assert [s.name for s in SourceStore(vault).list()] == ["alice.md"]


@ROOT_ONLY
def test_a_race_between_the_check_and_the_open_never_reaches_bobs_database() -> None:
    """She swaps her root back and forth as fast as she can while the daemon opens connections:
    whatever the interleaving, a connection is refused or opens her own database (the open runs
    with her file-system identity, and bob's home is closed to her)."""
    homes = _homes("afd-pins-race-")
    with _registry(homes) as registry:
        served = registry.get("va")
        stop = homes.base / "stop"

        def swapper() -> int:
            swaps = 0
            parked, link = homes.va.with_name("va.old"), homes.va.with_name("va.link")
            os.symlink(homes.vb, link)
            while not stop.exists() and swaps < 200_000:
                os.rename(homes.va, parked)
                os.rename(link, homes.va)
                os.rename(homes.va, link)
                os.rename(parked, homes.va)
                swaps += 1
            return swaps

        result: list[Any] = []
        child = threading.Thread(target=lambda: result.append(as_uid(ALICE, swapper)))
        child.start()
        seen: dict[str, int] = {}
        try:
            for _ in range(400):
                try:
                    vault = attach(served.anchor, served.config, read_only=served.read_only)
                except AffidavitError as exc:
                    seen[type(exc).__name__] = seen.get(type(exc).__name__, 0) + 1
                    continue
                try:
                    names = [s.name for s in SourceStore(vault).list()]
                finally:
                    vault.close()
                assert names == ["alice.md"], names
                seen["hers"] = seen.get("hers", 0) + 1
        finally:
            stop.touch()
            child.join()
        assert result and result[0] > 0 and sum(seen.values()) == 400, (result, seen)


@ROOT_ONLY
def test_a_root_swapped_before_the_registry_pins_it_is_the_targets_vault() -> None:
    """Swapped before the daemon starts: the path is resolved once, the vault it names is bob's,
    served under its own name with bob as its owner — alice gets no role on it."""
    homes = _homes("afd-pins-early-")
    as_uid(ALICE, _swap(homes.va, homes.vb))
    registry = Registry.open([homes.va])
    try:
        (served,) = registry.vaults.values()
        assert served.name == "vb" and served.owner_uid == BOB
        assert Principal("unix", uid=ALICE).role_on(served) is None
    finally:
        registry.close()


# --- open_beneath itself, with openat2 and with the walk ------------------------------------------


@pytest.mark.parametrize("use_openat2", [True, False], ids=["openat2", "walk"])
def test_open_beneath_follows_no_link_and_never_leaves(tmp_path: Path, use_openat2: bool) -> None:
    root = tmp_path / "root"
    (root / "a").mkdir(parents=True)
    (root / "a" / "f").write_text("inside")
    (tmp_path / "outside").write_text("outside")
    (root / "mid").symlink_to(root / "a")
    (root / "a" / "last").symlink_to(root / "a" / "f")
    (root / "esc").symlink_to(tmp_path)
    top = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fd = open_beneath(top, "a/f", os.O_RDONLY, use_openat2=use_openat2)
        assert os.read(fd, 10) == b"inside"
        os.close(fd)
        for bad in ("mid/f", "a/last", "esc/outside"):
            with pytest.raises(IntegrityError, match="symlink"):
                open_beneath(top, bad, os.O_RDONLY, use_openat2=use_openat2)
        for bad in ("../outside", "/etc/passwd", "a/../a/f", ""):
            with pytest.raises(IntegrityError, match="not a path inside"):
                open_beneath(top, bad, os.O_RDONLY, use_openat2=use_openat2)
        with pytest.raises(FileNotFoundError):
            open_beneath(top, "a/missing", os.O_RDONLY, use_openat2=use_openat2)
    finally:
        os.close(top)
