"""The source store's integrity checks, done cheaply but exactly: a file hashed once is known by
its status (three ``stat`` calls, every folder on the way still a real one) and is opened and
hashed again whenever anything about it changed; a store kept across plans looks at a kept
text's file when the text is next used. Each answers as the plain check (open the file folder
by folder, hash it) does."""

from __future__ import annotations

import os
import random
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from affidavit.errors import AffidavitError
from affidavit.hashing import sha256_hex
from affidavit.sources import files as store_module
from affidavit.sources.files import file_sha256
from affidavit.sources.store import SourceStore
from affidavit.store.apply import gate_services
from affidavit.store.paths import read_inside
from affidavit.vault import Vault

from .conftest import add_text

SETTLE_NS = 30_000_000


def _plain(root: Path, relpath: str) -> str:
    """What the check answers without any memory: the file opened safely and hashed."""
    try:
        return sha256_hex(read_inside(root, relpath, under="sources"))
    except (OSError, AffidavitError) as exc:
        return f"{type(exc).__name__}: {exc}"


def _remembered(root: Path, relpath: str) -> str:
    try:
        return file_sha256(root, relpath)
    except (OSError, AffidavitError) as exc:
        return f"{type(exc).__name__}: {exc}"


def _change(root: Path, relpath: str, rng: random.Random, elsewhere: Path) -> None:
    """One change an owner (or an attacker with the owner's rights) may make."""
    path, sources = root / relpath, root / "sources"
    data = path.read_bytes()
    roll = rng.random()
    if roll < 0.25:  # the same size, other bytes
        os.chmod(path, 0o644)
        path.write_bytes(bytes([data[0] ^ 1]) + data[1:])
    elif roll < 0.35:
        os.chmod(path, 0o644)
        os.chmod(path, 0o444)
    elif roll < 0.45:  # another inode with the same bytes, renamed in
        fresh = path.with_name(".fresh")
        fresh.write_bytes(data)
        os.replace(fresh, path)
    elif roll < 0.55:  # a hard link elsewhere (moves the ctime, not the bytes)
        os.link(path, elsewhere.parent / f"link-{rng.getrandbits(40):x}")
    elif roll < 0.70:  # sources/ moved away and a symlink to it put in its place: the very
        sources.rename(elsewhere)  # same files, statuses untouched
        sources.symlink_to(elsewhere)
    elif roll < 0.80:  # sources/ swapped for a real copy (other inodes, same bytes)
        shutil.copytree(sources, root / "sources-copy", copy_function=shutil.copy2)
        sources.rename(root / "sources-old")
        (root / "sources-copy").rename(sources)
        shutil.rmtree(root / "sources-old")
    elif roll < 0.90:
        os.chmod(path, 0o644)
        path.unlink()
    else:
        os.chmod(path, 0o644)
        path.unlink()
        os.mkfifo(path)


def _put_back(root: Path, originals: dict[str, bytes], elsewhere: Path) -> None:
    sources = root / "sources"
    if sources.is_symlink():
        sources.unlink()
        elsewhere.rename(sources)
    for relpath, data in originals.items():
        path = root / relpath
        if not path.is_file() or path.read_bytes() != data:
            path.unlink(missing_ok=True)
            path.write_bytes(data)
            os.chmod(path, 0o444)


def test_a_remembered_digest_answers_as_hashing_the_file_again(
    vault: Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After each random change (and each putting back), the remembered check answers as the
    plain one for every file: while the files are young (hashed every time) and once they have
    settled (hashed once, then answered by status alone)."""
    monkeypatch.setattr(store_module, "_SETTLED_NS", SETTLE_NS)
    opened: list[str] = []
    real_open = store_module.open_inside

    def counting_open(root: Path, relpath: str, **kw: Any) -> Any:
        opened.append(relpath)
        return real_open(root, relpath, **kw)

    monkeypatch.setattr(store_module, "open_inside", counting_open)
    store_module._DIGESTS.clear()
    ids = [add_text(vault, f"s{n}.md", f"Source {n} says {n} things.\n") for n in range(3)]
    records = [SourceStore(vault).get(i) for i in ids]
    relpaths = [p for r in records for p in (r.original_file, r.text_file)]
    root = vault.root
    originals = {relpath: (root / relpath).read_bytes() for relpath in relpaths}
    elsewhere = tmp_path / "elsewhere"
    rng = random.Random(11)
    answered_by_status = 0
    for step in range(80):
        if step % 2:
            _change(root, rng.choice(relpaths), rng, elsewhere)
        else:
            _put_back(root, originals, elsewhere)
        for relpath in relpaths:  # young files: hashed every time
            assert _remembered(root, relpath) == _plain(root, relpath), (step, relpath)
        time.sleep(SETTLE_NS * 2 / 1e9)
        for _ in range(2):
            for relpath in relpaths:
                opened.clear()
                assert _remembered(root, relpath) == _plain(root, relpath), (step, relpath)
                answered_by_status += not opened
    assert answered_by_status > 100


def test_a_kept_store_reads_a_text_changed_on_disk_again(vault: Vault) -> None:
    """The gate's store is kept across plans; a kept text whose file changed since is read
    again at its next use after the next plan began (``forget_changed``), never served stale."""
    ids = [add_text(vault, f"k{n}.md", f"Kept text number {n}.\n") for n in range(4)]
    store, _ = gate_services(vault)
    assert [store.text(i) for i in ids] == [f"Kept text number {n}.\n" for n in range(4)]
    path = vault.root / store.get(ids[2]).text_file
    os.chmod(path, 0o644)
    path.write_text("Rewritten on disk.\n", encoding="utf-8")
    again, _ = gate_services(vault)  # the next plan
    assert again is store
    assert store.text(ids[2]) == "Rewritten on disk.\n"
    assert store.text(ids[1]) == "Kept text number 1.\n"
    path.write_text("Rewritten twice.\n", encoding="utf-8")
    gate_services(vault)
    assert store.text(ids[2]) == "Rewritten twice.\n"
    assert store._text_chars == sum(len(t) for t in store._texts.values())


def test_a_store_not_told_to_look_keeps_its_texts(vault: Vault) -> None:
    """Without ``forget_changed`` a store serves what it read, as it always did (a doctor or
    lint pass reads each text once, at its start)."""
    source = add_text(vault, "once.md", "Read once.\n")
    store = SourceStore(vault)
    assert store.text(source) == "Read once.\n"
    path = vault.root / store.get(source).text_file
    os.chmod(path, 0o644)
    path.write_text("Changed later.\n", encoding="utf-8")
    assert store.text(source) == "Read once.\n"
    store.forget_changed()
    assert store.text(source) == "Changed later.\n"
