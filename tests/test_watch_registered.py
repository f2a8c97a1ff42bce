"""The daemon's watches without a daemon: what ``watch add`` stores and refuses, and what a job
of a watch does when its watch, its folder or its payload is not what was registered (each an
attacker's move: a crafted job, a folder swapped for a link, a link saved into the folder)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from affidavit.cli import main
from affidavit.errors import NotFoundError
from affidavit.jobs import JobPayloadError, JobQueue, WatchPayload, Worker, parse_payload
from affidavit.jobs.models import Job
from affidavit.vault import Vault
from affidavit.watch.registered import (
    WatchCreate,
    add_watch,
    get_watch,
    list_watches,
    refusal,
    remove_watch,
)
from affidavit.watch.watcher import WatchError

SECRET = "The vault code of the harbour office is 4417.\n"
PLAIN = "The harbour wall was rebuilt in 1904 after a storm destroyed the old pier.\n"


def _run(vault: Vault, payload: WatchPayload) -> Job:
    job = JobQueue(vault).submit(payload, "watch:test")
    with Worker(vault.root, "w1") as worker:
        done = worker.run_once()
    assert done is not None and done.id == job.id, done
    return done


def _origins(vault: Vault) -> set[str]:
    return {str(r[0]) for r in vault.db.execute("SELECT origin FROM sources")}


def test_a_folder_is_stored_resolved_and_added_once(vault: Vault, tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    first = add_watch(vault, WatchCreate(folder=str(link), trust="trusted"), "ann")
    assert first.folder == str(real) and first.status == "watching"
    again = add_watch(vault, WatchCreate(folder=str(real)), "ann")
    assert again.id == first.id and again.trust is None
    assert [w.id for w in list_watches(vault)] == [first.id]
    assert get_watch(vault, str(link)).id == first.id  # by the folder as given, resolved
    assert remove_watch(vault, first.id).folder == str(real)
    with pytest.raises(NotFoundError, match="watch list"):
        get_watch(vault, first.id)


def test_what_add_refuses(vault: Vault, tmp_path: Path) -> None:
    for folder, why in [
        ("notes", "relative"),
        (str(tmp_path / "missing"), "not a folder"),
        (str(vault.wiki_dir), "vault's own files"),
        (str(vault.state_dir), "vault's own files"),
    ]:
        with pytest.raises(WatchError, match=why):
            add_watch(vault, WatchCreate(folder=folder), "ann")
    assert list_watches(vault) == []


def test_a_symbolic_link_anywhere_in_the_stored_path_is_refused(tmp_path: Path) -> None:
    parent, elsewhere = tmp_path / "parent", tmp_path / "elsewhere"
    (parent / "notes").mkdir(parents=True)
    (elsewhere / "notes").mkdir(parents=True)
    folder = str(parent / "notes")
    assert refusal(folder) is None
    parent.rename(tmp_path / "parent.old")  # a folder above it swapped for a link
    parent.symlink_to(elsewhere, target_is_directory=True)
    why = refusal(folder)
    assert why is not None and "symbolic link" in why and "watch add" in why
    parent.unlink()
    assert refusal(folder) is not None and "can't be read" in (refusal(folder) or "")


def test_a_job_of_a_removed_or_refused_watch_reads_nothing(vault: Vault, tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "plain.md").write_text(PLAIN)
    watch = add_watch(vault, WatchCreate(folder=str(notes)), "ann")
    payload = WatchPayload(folders=[watch.folder], watch=watch.id)
    remove_watch(vault, watch.id)
    done = _run(vault, payload)
    assert done.status == "done" and done.result is not None
    assert "was removed" in done.result["skipped"]
    assert _origins(vault) == set()

    watch = add_watch(vault, WatchCreate(folder=str(notes)), "ann")
    notes.rename(tmp_path / "notes.old")  # swapped for a link after it was added
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "secret.md").write_text(SECRET)
    notes.symlink_to(elsewhere, target_is_directory=True)
    done = _run(vault, WatchPayload(folders=[watch.folder], watch=watch.id))
    assert done.status == "failed" and "symbolic link" in (done.error or "")
    assert get_watch(vault, watch.id).status == "refused"
    assert _origins(vault) == set()
    done = _run(vault, WatchPayload(folders=[watch.folder], watch=watch.id))  # stays refused
    assert done.result is not None and "is refused" in done.result["skipped"]


def test_a_crafted_job_cant_borrow_a_watch_for_another_folder(vault: Vault, tmp_path: Path) -> None:
    notes, other = tmp_path / "notes", tmp_path / "other"
    notes.mkdir()
    other.mkdir()
    (other / "secret.md").write_text(SECRET)
    watch = add_watch(vault, WatchCreate(folder=str(notes)), "ann")
    done = _run(vault, WatchPayload(folders=[str(other)], watch=watch.id))
    assert done.status == "failed" and "not its folder" in (done.error or "")
    assert _origins(vault) == set()


def test_links_out_of_a_watched_folder_are_never_read(vault: Vault, tmp_path: Path) -> None:
    notes, outside = tmp_path / "notes", tmp_path / "outside"
    notes.mkdir()
    outside.mkdir()
    (outside / "secret.md").write_text(SECRET)
    (notes / "leak.md").symlink_to(outside / "secret.md")
    (notes / "plain.md").write_text(PLAIN)
    watch = add_watch(vault, WatchCreate(folder=str(notes)), "ann")
    done = _run(vault, WatchPayload(folders=[watch.folder], watch=watch.id))
    assert done.status == "done" and done.result is not None
    assert _origins(vault) == {str(notes / "plain.md")}
    refused = [e for e in done.result["events"] if e["event"] == "refused"]
    assert [e["path"] for e in refused] == [str(notes / "leak.md")]
    # a changed path naming the link, or a linked folder, is refused the same way
    (notes / "out").symlink_to(outside, target_is_directory=True)
    paths = [str(notes / "leak.md"), str(notes / "out"), str(notes / "out" / "secret.md")]
    done = _run(vault, WatchPayload(folders=[watch.folder], watch=watch.id, paths=paths))
    assert done.status == "done" and done.result is not None
    assert _origins(vault) == {str(notes / "plain.md")}
    assert {e["event"] for e in done.result["events"]} == {"refused"}


def test_a_job_payload_names_only_absolute_paths_and_a_watch_id() -> None:
    for bad in (
        {"kind": "watch", "folders": ["/n"], "paths": ["rel.md"]},
        {"kind": "watch", "folders": ["/n"], "paths": ["/n/\x00.md"]},
        {"kind": "watch", "folders": ["/n"], "watch": "watch-../../x"},
    ):
        with pytest.raises(JobPayloadError):
            parse_payload(bad)


def test_the_cli_adds_lists_and_removes(vault: Vault, tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    runner = CliRunner()
    base = ["--vault", str(vault.root), "watch"]
    added = runner.invoke(main, [*base, "add", str(notes), "--json"])
    assert added.exit_code == 0, added.output
    [info] = json.loads(added.output)
    listed = runner.invoke(main, [*base, "list", "--json"])
    assert [w["id"] for w in json.loads(listed.output)] == [info["id"]]
    gone = runner.invoke(main, [*base, "remove", str(notes)])
    assert gone.exit_code == 0 and info["id"] in gone.output
    assert json.loads(runner.invoke(main, [*base, "list", "--json"]).output) == []
    missing = runner.invoke(main, [*base, "remove", info["id"]])
    assert missing.exit_code != 0 and "watch list" in missing.output
