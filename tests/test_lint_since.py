"""Lint since its last run (:mod:`affidavit.lint.since`): on random vaults changed in random ways
after a run (new documents ingested, a page edited by hand, a page deleted, an unknown file, a
source tampered with, a claim retracted outside the door), the incremental run leaves the same
check findings open as a full run on a copy of the same state, and the same extractive findings
about the changed claims — while it re-renders, re-hashes and re-finds only what changed."""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
from pathlib import Path

import pytest

from affidavit.ingest.pipeline import Ingestor
from affidavit.lint.runner import run_lint
from affidavit.lint.since import load
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.vault import Vault, init_vault, open_vault

from .conftest import FakeClock

PLACES = ["Tamar", "Severn", "Forth", "Humber", "Clifton", "Menai", "Tyne", "Avon"]
THINGS = ["bridge", "tunnel", "ferry", "viaduct"]


def _doc(rnd: random.Random, n: int) -> str:
    """A short document about a few places: facts (numbers, years) that other documents repeat,
    change or contradict."""
    lines = [f"# Crossings report {n}", ""]
    for place in rnd.sample(PLACES, 3):
        thing = rnd.choice(THINGS)
        lines.append(
            f"The {place} {thing} carries {rnd.choice([30, 40, 45])},000 vehicles each day "
            f"between the two towns. The {place} {thing} opened in {rnd.choice([1961, 1962])}. "
            f"The {place} {thing} was {rnd.choice(['', 'not '])}built by Cleveland Bridge. "
            f"The {place} {thing} has a main span of {rnd.choice([335, 340])} metres."
        )
        lines.append("")
    return "\n".join(lines)


def _vault(tmp_path: Path, clock: FakeClock) -> Vault:
    vault, _ = init_vault(tmp_path / "v", clock=clock)
    config = vault.config_path.read_text().replace("every_ingests = 10", "every_ingests = 0")
    vault.config_path.write_text(config)
    vault.close()
    return open_vault(tmp_path / "v", clock=clock)


def _ingest(vault: Vault, tmp_path: Path, rnd: random.Random, start: int, count: int) -> None:
    paths = []
    for n in range(start, start + count):
        path = tmp_path / f"doc{n}.md"
        path.write_text(_doc(rnd, n))
        paths.append(str(path))
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run(paths, "trusted")


def _open(vault: Vault) -> dict[str, tuple[str, str, tuple[str, ...]]]:
    return {
        str(r[0]): (str(r[1]), str(r[2]), tuple(json.loads(r[3])))
        for r in vault.db.execute(
            "SELECT id, origin, message, claims FROM findings WHERE status = 'open'"
        )
    }


def _mutate(vault: Vault, rnd: random.Random) -> list[str]:
    """Changes outside the door, each taken or not at random; returns what was done."""
    done = []
    pages = sorted(p.name for p in vault.wiki_dir.glob("*.md") if "-" in p.stem)
    if pages and rnd.random() < 0.6:
        page = vault.wiki_dir / rnd.choice(pages)
        page.write_text(page.read_text() + "\nA line added by hand.\n")
        done.append("edited")
    if len(pages) > 1 and rnd.random() < 0.4:
        (vault.wiki_dir / rnd.choice(pages)).unlink()
        done.append("deleted")
    if rnd.random() < 0.4:
        (vault.wiki_dir / "notes-by-hand.md").write_text("# Notes\n\nSee [[nowhere]].\n")
        done.append("unknown")
    if rnd.random() < 0.5:
        row = vault.db.execute("SELECT text_file FROM sources ORDER BY rowid LIMIT 1").fetchone()
        path = vault.root / row[0]
        info = path.stat()
        os.chmod(path, 0o644)
        text = path.read_text().replace("carries", "carried", 1)
        path.write_text(text)
        os.chmod(path, info.st_mode)
        os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))  # the mtime put back
        done.append("tampered")
    if rnd.random() < 0.4:
        other = sqlite3.connect(vault.root / ".affidavit" / "db.sqlite")
        with other:
            other.execute(
                "UPDATE claims SET status = 'retracted' WHERE id = "
                "(SELECT id FROM claims WHERE status = 'active' AND page_slug != '' "
                "ORDER BY id LIMIT 1)"
            )
        other.close()
        done.append("retracted")
    return done


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_incremental_lint_leaves_what_a_full_run_does(
    tmp_path: Path, clock: FakeClock, seed: int
) -> None:
    rnd = random.Random(seed)
    vault = _vault(tmp_path, clock)
    _ingest(vault, tmp_path, rnd, 0, 3)
    first = run_lint(vault)
    assert not first.incremental and load(vault) is not None
    old = {str(r[0]) for r in vault.db.execute("SELECT id FROM claims")}
    clock.advance(days=30)
    _ingest(vault, tmp_path, rnd, 3, 2)
    done = _mutate(vault, rnd)
    vault.close()
    shutil.copytree(tmp_path / "v", tmp_path / "w", symlinks=True)
    vault = open_vault(tmp_path / "v", clock=clock)
    copy = open_vault(tmp_path / "w", clock=clock)

    since = run_lint(vault)
    full = run_lint(copy, full=True)
    assert since.incremental and not full.incremental

    mine, theirs = _open(vault), _open(copy)
    checks = {k: v for k, v in mine.items() if v[0] == "check"}
    assert checks == {k: v for k, v in theirs.items() if v[0] == "check"}, done
    new = {str(r[0]) for r in vault.db.execute("SELECT id FROM claims")} - old
    assert new

    def about_new(found: dict[str, tuple[str, str, tuple[str, ...]]]) -> dict[str, object]:
        return {k: v for k, v in found.items() if v[0] != "check" and set(v[2]) & new}

    a, b = about_new(mine), about_new(theirs)
    assert a == b, ([a[k] for k in a.keys() - b.keys()], [b[k] for k in b.keys() - a.keys()])
    links = {k: v for k, v in mine.items() if "doesn't link to it" in v[1]}
    assert links == {k: v for k, v in theirs.items() if "doesn't link to it" in v[1]}
    assert links  # the titles new claims name, looked for again
    if "edited" in done:
        assert any("hand edit" in v[1] for v in checks.values())
    if "tampered" in done:
        assert any("no longer matches" in v[1] for v in checks.values())


def _scope(vault: Vault) -> object:
    (detail,) = vault.db.execute("SELECT detail FROM lint_runs ORDER BY id DESC LIMIT 1").fetchone()
    return json.loads(detail)["scope"]


def test_a_run_looks_at_what_changed_only(tmp_path: Path, clock: FakeClock) -> None:
    rnd = random.Random(7)
    vault = _vault(tmp_path, clock)
    _ingest(vault, tmp_path, rnd, 0, 4)
    run_lint(vault)
    pages = vault.db.execute("SELECT count(*) FROM pages").fetchone()[0]

    nothing = run_lint(vault)  # nothing changed: the generated files, nothing else
    assert nothing.incremental
    assert _scope(vault) == {"claims": 0, "checked_claims": 0, "sources": 0, "files": 3}

    page = sorted(p for p in vault.wiki_dir.glob("*.md") if "-" in p.stem)[0]
    rendered = page.read_text()
    page.write_text(rendered + "\nBy hand.\n")
    edited = run_lint(vault)
    assert _scope(vault) == {"claims": 0, "checked_claims": 0, "sources": 0, "files": 4}
    assert any(f.finding.kind == "file_drift" for f in edited.findings)
    page.write_text(rendered)  # put back: the next ingest's plans apply by policy
    restored = run_lint(vault)
    assert not any(f.finding.kind == "file_drift" for f in restored.findings)

    before = vault.db.execute("SELECT count(*) FROM claims").fetchone()[0]
    _ingest(vault, tmp_path, rnd, 4, 1)
    run_lint(vault)
    scope = _scope(vault)
    assert isinstance(scope, dict)
    added = vault.db.execute("SELECT count(*) FROM claims").fetchone()[0] - before
    assert scope["sources"] == 1 and 0 < int(str(scope["checked_claims"])) == added
    assert int(str(scope["files"])) < pages + 3  # not every page rendered again

    full = run_lint(vault, full=True)
    assert not full.incremental and _scope(vault) == "full"
