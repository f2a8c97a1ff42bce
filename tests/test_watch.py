"""``affidavit watch`` (issue 27 item 2): ignore files with git's rules, restarts that find what
changed meanwhile, deletions reported, the policy's path only, and a real watcher followed by
its events (never by a timing margin)."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from affidavit.cli import main
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.vault import Vault, open_vault
from affidavit.watch import IgnoreRules, Watcher
from affidavit.watch.state import state_file

from .conftest import ROOT, SAMPLES

LIGHT = "The lighthouse on the rock was built of granite in 1882. It stands forty metres tall.\n"
HARBOUR = "The harbour wall was rebuilt in 1904 after a storm destroyed the old pier.\n"
CLI = (sys.executable, "-c", "from affidavit.cli import main; main()")
EVENT_TIMEOUT = 120.0
"""Seconds to wait for an event the watcher must send: generous, it bounds a failure only."""


def _files(rules: IgnoreRules) -> list[str]:
    return [p.relative_to(rules.root).as_posix() for p in rules.files()]


def test_ignore_files_follow_gits_rules(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    for name in (
        "a.md",
        "draft.md",
        "keep/draft.md",
        "build/out.md",
        "logs/x.log",
        "sub/b.md",
        "sub/private.md",
        "sub/deep/c.md",
        ".hidden/d.md",
        ".e.md",
        "image.png",
    ):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("Text.\n")
    (root / ".gitignore").write_text("draft.md\nbuild/\n*.log\n")
    (root / "keep" / ".gitignore").write_text("!draft.md\n")  # a deeper file re-includes
    (root / "sub" / ".affidavitignore").write_text("private.md\ndeep/\n")
    rules = IgnoreRules.load(root.resolve())
    assert _files(rules) == ["a.md", "keep/draft.md", "sub/b.md"]
    assert rules.ignored(root.resolve() / "draft.md")
    assert not rules.ignored(root.resolve() / "keep" / "draft.md")
    assert rules.ignored(root.resolve() / "build" / "new.md")  # inside an ignored folder
    assert rules.ignored(root.resolve() / ".hidden" / "d.md")
    assert rules.ignored(root.resolve() / "image.png")  # not a format ingest reads


def test_an_ignored_folder_is_never_re_included_from_inside(tmp_path: Path) -> None:
    """git: a file can't be re-included when a folder above it is excluded."""
    root = tmp_path / "notes"
    (root / "build").mkdir(parents=True)
    (root / "build" / "x.md").write_text("Text.\n")
    (root / ".gitignore").write_text("build/\n!build/x.md\n")
    assert _files(IgnoreRules.load(root.resolve())) == []


def _once(vault: Vault, folder: Path, *args: str) -> list[dict[str, Any]]:
    result = CliRunner().invoke(
        main, ["--vault", str(vault.root), "watch", str(folder), "--once", "--json", *args]
    )
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.output.splitlines() if line.strip()]


def _named(events: list[dict[str, Any]], name: str) -> dict[str, dict[str, Any]]:
    return {Path(e["path"]).name: e for e in events if e["event"] == name}


def test_a_restart_finds_what_changed_while_the_watch_was_down(
    vault: Vault, tmp_path: Path
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "light.md").write_text(LIGHT)
    (folder / "harbour.md").write_text(HARBOUR)
    (folder / "speech.md").write_text((SAMPLES / "sotu" / "1790-washington.md").read_text())
    first = _once(vault, folder)
    assert set(_named(first, "ingested")) == {"light.md", "harbour.md", "speech.md"}
    # the watch is down: one file edited, one deleted, one saved again with the same bytes,
    # one added
    (folder / "light.md").write_text(LIGHT + "Its lamp was electrified in 1923.\n")
    (folder / "harbour.md").unlink()
    os.utime(folder / "speech.md", ns=(1, 1))
    (folder / "new.md").write_text("The ferry to the island runs twice a day in summer.\n")
    second = _once(vault, folder)
    assert set(_named(second, "ingested")) == {"light.md", "new.md"}
    deleted = _named(second, "deleted")
    assert set(deleted) == {"harbour.md"}
    old = vault.db.execute(
        "SELECT id FROM sources WHERE origin = ?", (str((folder / "harbour.md").resolve()),)
    ).fetchall()
    assert deleted["harbour.md"]["sources"] == [old[0][0]]
    third = _once(vault, folder)
    assert [e["event"] for e in third] == ["scan"]  # nothing changed: nothing sent anywhere


def test_a_moved_file_is_moved_and_an_ignored_one_is_not_deleted(
    vault: Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[Any] = []
    lineage = types.ModuleType("affidavit.ingest.lineage")
    lineage.propose_deleted = lambda v, paths, actor: calls.append(paths)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "affidavit.ingest.lineage", lineage)
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "light.md").write_text(LIGHT)
    (folder / "harbour.md").write_text(HARBOUR)
    _once(vault, folder)
    (folder / "light.md").rename(folder / "lighthouse.md")
    (folder / ".affidavitignore").write_text("harbour.md\n")
    events = _once(vault, folder)
    moved = _named(events, "moved")
    assert moved["lighthouse.md"]["source"] == str((folder / "light.md").resolve())
    assert _named(events, "ingested")["lighthouse.md"]["status"] == "unchanged"
    assert set(_named(events, "ignored")) == {"harbour.md"}
    assert not _named(events, "deleted") and calls == []  # nothing goes to the lineage hook


def test_the_watch_applies_nothing_the_policy_would_not(vault: Vault, tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "light.md").write_text(LIGHT)
    events = _once(vault, folder, "--trust", "trusted")
    (plan,) = _named(events, "ingested")["light.md"]["plans"]
    # policy.auto_apply is 'never': the plan waits in the inbox, the wiki has no page
    assert vault.db.execute("SELECT status FROM plans WHERE id = ?", (plan,)).fetchone()[0] == (
        "pending"
    )
    assert vault.db.execute("SELECT count(*) FROM pages").fetchone()[0] == 0
    assert not list(vault.wiki_dir.glob("*/*.md"))


def test_the_policy_applies_what_it_applies(vault: Vault, tmp_path: Path) -> None:
    text = vault.config_path.read_text().replace('auto_apply = "never"', 'auto_apply = "trusted"')
    vault.config_path.write_text(text)
    trusting = open_vault(vault.root, clock=vault.clock)
    folder = tmp_path / "notes"
    (folder / "a").mkdir(parents=True)
    (folder / "b").mkdir()
    (folder / "a" / "light.md").write_text(LIGHT)
    (folder / "b" / "harbour.md").write_text(HARBOUR)
    statuses = {}
    for sub, trust in (("a", "trusted"), ("b", "untrusted")):
        events = _once(trusting, folder / sub, "--trust", trust)
        for event in events:
            if event["event"] == "ingested":
                statuses[sub] = {
                    trusting.db.execute("SELECT status FROM plans WHERE id = ?", (p,)).fetchone()[0]
                    for p in event["plans"]
                }
    assert statuses == {"a": {"applied"}, "b": {"pending"}}
    trusting.close()


def test_a_damaged_record_means_a_fresh_look_not_a_crash(vault: Vault, tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "light.md").write_text(LIGHT)
    _once(vault, folder)
    record = state_file(vault.state_dir, folder.resolve())
    for garbage in ("{nope", json.dumps({"format": 1, "root": "/elsewhere", "files": {}}), "[]"):
        record.write_text(garbage)
        events = _once(vault, folder)
        # looked at afresh: the file is ingested again, which changes nothing (known bytes)
        assert _named(events, "ingested")["light.md"]["status"] == "unchanged"


def test_the_vaults_own_folders_cant_be_watched(vault: Vault) -> None:
    result = CliRunner().invoke(
        main, ["--vault", str(vault.root), "watch", str(vault.wiki_dir), "--once"]
    )
    assert result.exit_code == 1 and "inside the vault's own files" in result.output


def test_a_deleted_file_goes_to_lineage_when_it_is_installed(
    vault: Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The wiring to branch lineage's API (/work/wt/briefs/lineage.API.md): a stand-in module
    with its ``propose_deleted`` signature records what the watch hands it."""
    calls: list[tuple[list[Path], str]] = []
    lineage = types.ModuleType("affidavit.ingest.lineage")

    def propose_deleted(v: Vault, paths: list[Path], *, actor: str) -> list[Any]:
        calls.append((list(paths), actor))
        return [types.SimpleNamespace(plan_id="plan-x")]

    lineage.propose_deleted = propose_deleted  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "affidavit.ingest.lineage", lineage)
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "light.md").write_text(LIGHT)
    events: list[dict[str, Any]] = []
    watcher = Watcher(vault, [folder], ExtractiveProvider(), events.append, actor="ann")
    watcher.catch_up()  # no ingest_changed in the stand-in: the plain ingest ran
    (folder / "light.md").unlink()
    watcher.catch_up()
    (deleted,) = [e for e in events if e["event"] == "deleted"]
    assert deleted["lineage"] == {"plans": ["plan-x"]}
    assert calls == [([(folder / "light.md").resolve()], "ann")]


# -- a real watcher, followed by its events ------------------------------------------------
class Running:
    """``affidavit watch --json`` in its own process; its event lines read by a thread."""

    def __init__(self, vault: Vault, folder: Path, log: Path) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        self.log = log.open("w")
        self.proc = subprocess.Popen(
            [*CLI, "--vault", str(vault.root), "watch", str(folder), "--json", "--debounce", "200"],
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
            env=env,
        )
        self.events: queue.Queue[dict[str, Any]] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.events.put(json.loads(line))

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.reader.join(timeout=EVENT_TIMEOUT)
        assert self.proc.stdout is not None
        self.proc.stdout.close()
        self.log.close()

    def wait_for(self, name: str, path: Path | None = None) -> dict[str, Any]:
        while True:
            try:
                event = self.events.get(timeout=EVENT_TIMEOUT)
            except queue.Empty:
                raise AssertionError(
                    f"no {name} event; saw {self.seen}; stderr: {self.log.name}"
                ) from None
            self.seen.append(event)
            if event["event"] == name and (path is None or event.get("path") == str(path)):
                return event

    def wait_all(self, name: str, paths: set[Path]) -> None:
        """Wait until a ``name`` event came for each of ``paths``, in any order."""
        left = {str(p) for p in paths}
        while left:
            left.discard(self.wait_for(name).get("path", ""))

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=EVENT_TIMEOUT)


@pytest.fixture
def running(vault: Vault, tmp_path: Path) -> Iterator[tuple[Running, Path]]:
    folder = (tmp_path / "notes").resolve()
    folder.mkdir()
    (folder / ".gitignore").write_text("scratch/\n")
    watch = Running(vault, folder, tmp_path / "watch.log")
    try:
        yield watch, folder
    finally:
        watch.close()


def test_a_real_watcher_ingests_saves_and_reports_deletions(
    vault: Vault, running: tuple[Running, Path]
) -> None:
    watch, folder = running
    watch.wait_for("ready")
    (folder / "scratch").mkdir()
    (folder / "scratch" / "tmp.md").write_text("An ignored note about nothing in 1999.\n")
    (folder / "light.md").write_text(LIGHT)
    event = watch.wait_for("ingested", folder / "light.md")
    (plan,) = event["plans"]
    row = vault.db.execute("SELECT status FROM plans WHERE id = ?", (plan,)).fetchone()
    assert row[0] == "pending"  # in the inbox
    (folder / "light.md").write_text(LIGHT + "Its lamp was electrified in 1923.\n")
    edited = watch.wait_for("ingested", folder / "light.md")
    assert edited["source_id"] != event["source_id"]
    (folder / "light.md").unlink()
    deleted = watch.wait_for("deleted", folder / "light.md")
    assert set(deleted["sources"]) == {event["source_id"], edited["source_id"]}  # both versions
    assert watch.stop() == 0
    rest = list(watch.seen)
    while not watch.events.empty():
        rest.append(watch.events.get())
    assert rest[-1]["event"] == "stopped"
    assert not [e for e in rest if "scratch" in str(e.get("path", ""))]  # ignored folder


def test_a_new_ignore_file_is_obeyed_at_once(vault: Vault, running: tuple[Running, Path]) -> None:
    watch, folder = running
    watch.wait_for("ready")
    (folder / ".affidavitignore").write_text("drafts-*.md\n")
    watch.wait_for("scan")  # the rules changed: the folder is looked at again
    (folder / "drafts-1.md").write_text("A draft about the harbour wall from 1904.\n")
    (folder / "light.md").write_text(LIGHT)
    watch.wait_for("ingested", folder / "light.md")
    assert watch.stop() == 0
    assert not [e for e in watch.seen if "drafts-1" in str(e.get("path", ""))]


def test_a_folder_moved_in_is_ingested_whole(
    vault: Vault, running: tuple[Running, Path], tmp_path: Path
) -> None:
    watch, folder = running
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "light.md").write_text(LIGHT)
    (outside / "deep" / "harbour.md").write_text(HARBOUR)
    watch.wait_for("ready")
    outside.rename(folder / "moved")
    watch.wait_all("ingested", {folder / "moved" / "light.md", folder / "moved/deep/harbour.md"})
    assert watch.stop() == 0


def test_the_watch_job_is_one_look(vault: Vault, tmp_path: Path) -> None:
    from affidavit.jobs import JobQueue, WatchPayload, Worker

    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "light.md").write_text(LIGHT)
    job = JobQueue(vault).submit(WatchPayload(folders=[str(folder.resolve())]), "ann")
    with Worker(vault.root, "w1") as worker:
        done = worker.run_once()
    assert done is not None and done.id == job.id and done.status == "done", done
    assert done.result is not None and done.result["counts"]["ingested"] == 1
    again = _once(vault, folder)  # the job's look is the command's record too
    assert [e["event"] for e in again] == ["scan"]


def test_a_relative_folder_is_refused_for_a_job() -> None:
    from affidavit.jobs import JobPayloadError, parse_payload

    with pytest.raises(JobPayloadError, match="absolute"):
        parse_payload({"kind": "watch", "folders": ["notes"]})


def test_once_exits_1_when_a_file_could_not_be_ingested(vault: Vault, tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "light.md").write_text(LIGHT)
    (folder / "binary.md").write_bytes(b"\x00\x01\x02" * 400)
    result = CliRunner().invoke(
        main, ["--vault", str(vault.root), "watch", str(folder), "--once", "--json"]
    )
    assert result.exit_code == 1
    events = [json.loads(line) for line in result.output.splitlines() if line.startswith("{")]
    assert _named(events, "failed")["binary.md"]["status"] == "failed"
    assert _named(events, "ingested")["light.md"]["status"] == "ingested"
    # the refused file is remembered: not retried until it changes
    again = _once(vault, folder)
    assert [e["event"] for e in again] == ["scan"]


def test_a_vault_inside_the_watched_folder_is_never_its_own_source(
    tmp_path: Path, clock: Any
) -> None:
    from affidavit.vault import init_vault

    folder = tmp_path / "notes"
    folder.mkdir()
    inner, _ = init_vault(folder / "vault", clock=clock)
    (folder / "light.md").write_text(LIGHT)
    first = _once(inner, folder)
    assert set(_named(first, "ingested")) == {"light.md"}
    assert list(inner.wiki_dir.rglob("*.md")) or list(inner.sources_dir.iterdir())
    # the vault's own writes (sources/, wiki/, .affidavit/, .git/) are no change to follow
    assert [e["event"] for e in _once(inner, folder)] == ["scan"]
    inner.close()


def test_the_automatic_lint_waits_until_the_changes_are_handled(
    vault: Vault, tmp_path: Path
) -> None:
    """``lint.every_ingests`` is kept, but a watch runs the lint after its pass, never inside
    it: a save is not kept waiting behind a whole-wiki lint."""
    text = vault.config_path.read_text().replace("every_ingests = 10", "every_ingests = 2")
    vault.config_path.write_text(text)
    linting = open_vault(vault.root, clock=vault.clock)
    folder = tmp_path / "notes"
    folder.mkdir()
    for name, body in (("light.md", LIGHT), ("harbour.md", HARBOUR)):
        (folder / name).write_text(body)
    (folder / "speech.md").write_text((SAMPLES / "sotu" / "1790-washington.md").read_text())
    events = _once(linting, folder)
    names = [e["event"] for e in events]
    assert names == ["scan", "ingested", "ingested", "ingested", "lint"]
    assert linting.config.get("lint.every_ingests") == 2  # the vault's settings untouched
    counter = linting.db.execute(
        "SELECT value FROM counters WHERE name = 'ingests_since_lint'"
    ).fetchone()
    assert counter is None or counter[0] == 0  # the lint ran and reset the count
    assert [e["event"] for e in _once(linting, folder)] == ["scan"]  # not due again
    linting.close()
