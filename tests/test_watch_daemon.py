"""The daemon's continuous watches (issue 27 item 2), on a real daemon: a real Unix socket, a
real loopback port, its job worker and its watch feeder in their own process.

A file saved in a watched folder reaches the inbox with no CLI call; a restart finds what
changed while the daemon was down; removing a watch stops it; a token (an agent) or another
local user can't add one; a folder swapped for a symbolic link is refused, and a link leading
out of a folder is never read. Every wait polls for the outcome with a generous bound.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from affidavit.service import tokens as token_store
from affidavit.vault import init_vault, open_vault
from tests.test_server_authz import NOBODY, Daemon, as_user, private_dir, start_daemon

pytestmark = pytest.mark.slow

BOUND = 600.0  # a hang guard, never a timing assertion: a busy machine is slow


def _until(what: str, check: Any, seconds: float = BOUND) -> Any:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


class Setup:
    def __init__(self, base: Path) -> None:
        self.base = base
        self.vault = base / "vault"
        init_vault(self.vault)
        self.daemons = 0
        self.daemon: Daemon | None = None

    def start(self) -> Daemon:
        self.daemons += 1
        self.daemon = start_daemon([self.vault], self.base, workers=True, name=f"d{self.daemons}")
        return self.daemon

    def stop(self) -> None:
        if self.daemon is not None:
            assert self.daemon.stop() == 0
            self.daemon = None

    def db(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.vault / ".affidavit" / "db.sqlite", timeout=60)
        db.row_factory = sqlite3.Row
        return db

    def rows(self, sql: str, *args: Any) -> list[sqlite3.Row]:
        db = self.db()
        try:
            return db.execute(sql, args).fetchall()
        finally:
            db.close()

    def add(self, folder: Path, **extra: Any) -> dict[str, Any]:
        assert self.daemon is not None
        with self.daemon.unix() as client:
            response = client.post(
                "/v1/vaults/vault/watches", json={"folder": str(folder), **extra}
            )
        assert response.status_code == 201, response.text
        found: dict[str, Any] = response.json()
        return found

    def in_inbox(self, path: Path) -> bool:
        """A source ingested from ``path`` with a pending plan of its chunks."""
        return bool(
            self.rows(
                "SELECT 1 FROM sources s JOIN plans p ON p.origin LIKE 'ingest:' || s.name || '#%' "
                "WHERE s.origin = ? AND p.status = 'pending'",
                str(path),
            )
        )

    def sourced(self, path: Path) -> bool:
        return bool(self.rows("SELECT 1 FROM sources WHERE origin = ?", str(path)))

    def idle(self, watch_id: str) -> bool:
        """The watch queued at least one job, and every job of it has ended."""
        jobs = self.rows("SELECT status FROM jobs WHERE requested_by = ?", f"watch:{watch_id}")
        return bool(jobs) and all(j["status"] in ("done", "failed", "cancelled") for j in jobs)

    def jobs_of(self, watch_id: str) -> list[dict[str, Any]]:
        rows = self.rows(
            "SELECT * FROM jobs WHERE requested_by = ? ORDER BY rowid", f"watch:{watch_id}"
        )
        return [dict(r) for r in rows]


@pytest.fixture
def setup() -> Iterator[Setup]:
    made = Setup(private_dir("watchd-"))
    try:
        yield made
    finally:
        if made.daemon is not None:
            made.daemon.stop()


def _note(folder: Path, name: str, sentence: str) -> Path:
    path = folder / name
    path.write_text(f"# {name}\n\n{sentence}\n", encoding="utf-8")
    return path


def test_a_saved_file_reaches_the_inbox_and_a_restart_finds_what_changed(setup: Setup) -> None:
    notes = setup.base / "notes"
    notes.mkdir()
    first = _note(notes, "first.md", "The Wabash bridge opened to traffic in 1901.")
    (notes / "drafts").mkdir()
    (notes / ".gitignore").write_text("drafts/\n")
    setup.start()
    watch = setup.add(notes, trust="semi-trusted")
    assert watch["folder"] == str(notes) and watch["status"] == "watching"
    # the first look (what was there before the watch) is a job of the watch
    _until("the folder's first look", lambda: setup.in_inbox(first))

    saved = _note(notes, "saved.md", "The harbour office opened in 1952 beside the customs house.")
    ignored = _note(notes / "drafts", "draft.md", "An ignored draft about the canal in 1930.")
    _until("the saved file in the inbox", lambda: setup.in_inbox(saved))
    _until("the watch's jobs to end", lambda: setup.idle(watch["id"]))
    jobs = setup.jobs_of(watch["id"])
    assert {j["kind"] for j in jobs} == {"watch"}
    changed = [json.loads(j["payload"]) for j in jobs]
    assert any(p.get("paths") == [str(saved)] for p in changed), changed
    assert not any(str(ignored) in (p.get("paths") or []) for p in changed)
    assert not setup.sourced(ignored)
    listed = {w["id"]: w for w in _watch_list(setup)}
    assert listed[watch["id"]]["last_job"] == jobs[-1]["id"]

    # down: an edit, a new file, a deletion; up again: all found by hashing on start
    setup.stop()
    with first.open("a", encoding="utf-8") as handle:
        handle.write("\nThe Wabash bridge was widened in 1931.\n")
    added = _note(notes, "added.md", "The Potomac ferry stopped running in 1911.")
    saved.unlink()
    before = len(setup.jobs_of(watch["id"]))
    setup.start()
    _until("the new file in the inbox after the restart", lambda: setup.in_inbox(added))
    _until(
        "the edit ingested after the restart",
        lambda: len(setup.rows("SELECT 1 FROM sources WHERE origin = ?", str(first))) == 2,
    )
    _until("the restart's look to end", lambda: setup.idle(watch["id"]))
    look = setup.jobs_of(watch["id"])[before]
    assert json.loads(look["payload"]).get("paths") is None  # the whole folder, hashed
    events = json.loads(look["result"])["events"]
    assert {e["path"] for e in events if e["event"] == "deleted"} == {str(saved)}


def _watch_list(setup: Setup) -> list[dict[str, Any]]:
    from click.testing import CliRunner

    from affidavit.cli import main

    result = CliRunner().invoke(main, ["--vault", str(setup.vault), "watch", "list", "--json"])
    assert result.exit_code == 0, result.output
    found: list[dict[str, Any]] = json.loads(result.output)
    return found


def test_removing_a_watch_stops_it(setup: Setup) -> None:
    kept, dropped = setup.base / "kept", setup.base / "dropped"
    kept.mkdir()
    dropped.mkdir()
    setup.start()
    keep = setup.add(kept)
    drop = setup.add(dropped)
    _until("both first looks", lambda: setup.idle(keep["id"]) and setup.idle(drop["id"]))
    assert setup.daemon is not None
    with setup.daemon.unix() as client:
        response = client.delete(f"/v1/vaults/vault/watches/{drop['id']}")
        assert response.status_code == 200, response.text
        assert [w["id"] for w in client.get("/v1/vaults/vault/watches").json()] == [keep["id"]]
    late = _note(dropped, "late.md", "The Hudson lock was rebuilt in 1925.")
    marker = _note(kept, "marker.md", "The Ohio levee was raised in 1937.")
    _until("the kept folder's save in the inbox", lambda: setup.in_inbox(marker))
    _until("the jobs to end", lambda: setup.idle(keep["id"]) and setup.idle(drop["id"]))
    assert not setup.sourced(late)
    # a job the removed watch queued before the feeder noticed reads nothing
    for job in setup.jobs_of(drop["id"])[1:]:
        assert "was removed" in json.loads(job["result"])["skipped"]


def test_an_agent_token_or_another_user_cant_add_a_watch(setup: Setup) -> None:
    notes = setup.base / "notes"
    notes.mkdir()
    with open_vault(setup.vault) as vault:
        tokens = {
            role: token_store.create_token(
                vault.db, vault.clock, role, timedelta(hours=1), role, "root"
            )[1]
            for role in ("read", "propose", "approve")
        }
    daemon = setup.start()
    body = {"folder": str(notes)}
    for role, token in tokens.items():
        with daemon.tcp(token) as client:
            assert client.post("/v1/vaults/vault/watches", json=body).status_code == 403, role
            listed = client.get("/v1/vaults/vault/watches").status_code
            assert listed == (200 if role == "approve" else 403), role
    [(status, text)] = as_user(NOBODY, daemon.socket, [("POST", "/v1/vaults/vault/watches", body)])
    assert status == 403, text
    assert setup.rows("SELECT * FROM watches") == []
    # the owner may, but only with an absolute path, and never the vault's own files
    with daemon.unix() as client:
        for folder in ("notes", str(setup.vault / "wiki"), str(setup.base / "missing")):
            response = client.post("/v1/vaults/vault/watches", json={"folder": folder})
            assert response.status_code == 422, (folder, response.text)
    assert setup.rows("SELECT * FROM watches") == []


def test_a_folder_swapped_for_a_symlink_is_refused_and_links_out_are_never_read(
    setup: Setup,
) -> None:
    notes, outside = setup.base / "notes", setup.base / "outside"
    notes.mkdir()
    outside.mkdir()
    secret = _note(outside, "secret.md", "The vault code of the Delaware office is 4417.")
    (notes / "leak.md").symlink_to(secret)  # a link out of the folder, there from the start
    (notes / "out").symlink_to(outside, target_is_directory=True)
    plain = _note(notes, "plain.md", "The Missouri ferry carried cattle in 1880.")
    setup.start()
    watch = setup.add(notes)
    _until("the plain file in the inbox", lambda: setup.in_inbox(plain))
    later = setup.base / "later.md"
    later.symlink_to(secret)
    os.replace(later, notes / "later.md")  # a link saved into the folder while watched
    marker = _note(notes, "marker.md", "The Susquehanna bridge was painted in 1948.")
    _until("the marker in the inbox", lambda: setup.in_inbox(marker))
    _until("the watch's jobs to end", lambda: setup.idle(watch["id"]))
    for link in ("leak.md", "later.md"):  # never read through, under any name
        assert not setup.sourced(notes / link), link
    assert not setup.sourced(secret)
    refused = [
        e["path"]
        for job in setup.jobs_of(watch["id"])
        for e in json.loads(job["result"])["events"]
        if e["event"] == "refused"
    ]
    assert str(notes / "leak.md") in refused and str(notes / "later.md") in refused

    # the folder itself swapped for a link to the outside: refused, nothing read through it
    os.rename(notes, setup.base / "notes.old")
    notes.symlink_to(outside, target_is_directory=True)
    _note(outside, "more.md", "The Delaware office moved its safe in 1960.")
    _until(
        "the watch refused",
        lambda: (
            setup.rows("SELECT status FROM watches WHERE id = ?", watch["id"])[0]["status"]
            == "refused"
        ),
    )
    error = setup.rows("SELECT error FROM watches WHERE id = ?", watch["id"])[0]["error"]
    assert "symbolic link" in error
    _until("the watch's jobs to end", lambda: setup.idle(watch["id"]))
    assert not setup.rows("SELECT 1 FROM sources WHERE origin LIKE ?", f"{outside}/%")
    assert not setup.rows("SELECT 1 FROM sources WHERE origin LIKE ?", f"{notes}/more.md")
