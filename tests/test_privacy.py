"""W10, issue 23 item 3: private stays private.

The reproduction: sources were stored 0444 whatever the original's mode, so under the default
umask any local user read ``sources/<id>.extracted.txt`` and the git objects of a 0600 file.
Now ``init`` makes the vault its owner's alone (or shares it with one group), a stored source
keeps no more permission than its original, the history is the owner's, and doctor reports
whatever another user could still read, with the fix. Another user is a forked child that
became ``nobody``.
"""

from __future__ import annotations

import grp
import json
import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from affidavit.cli import main
from affidavit.doctor import run_doctor
from affidavit.errors import ConfigError
from affidavit.sources.store import SourceStore
from affidavit.vault import Vault, init_vault, open_vault
from tests.test_server_authz import private_dir
from tests.test_shared_daemon_pins import as_uid

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as another user")
NOBODY = 65534
SECRET = "The salary review puts the bonus pool at 4.2 million for next year.\n"


@pytest.fixture
def umask022() -> Iterator[None]:
    old = os.umask(0o022)  # the default umask of the issue
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def _everything(root: Path) -> list[Path]:
    return [root, *sorted(root.rglob("*"))]


def _readable_by(uid: int, paths: list[Path]) -> list[str]:
    """Which of ``paths`` a process of ``uid`` can open and read."""

    def attempt() -> list[str]:
        got = []
        for path in paths:
            try:
                if path.is_dir():
                    os.listdir(path)
                else:
                    path.read_bytes()
            except OSError:
                continue
            got.append(str(path))
        return got

    result: list[str] = as_uid(uid, attempt)
    return result


def _private_source(vault: Vault, base: Path, text: str = SECRET) -> tuple[str, list[Path]]:
    original = base / "salaries.md"
    original.write_text(text)
    os.chmod(original, 0o600)
    record = SourceStore(vault).add_file(original).record
    return record.id, [vault.root / record.original_file, vault.root / record.text_file]


def _objects(root: Path) -> list[Path]:
    return [p for p in (root / ".git" / "objects").rglob("*") if p.is_file()]


# --- the reproduction -------------------------------------------------------------------------------


@ROOT_ONLY
def test_a_0600_source_is_unreadable_to_others_text_and_history_too(umask022: None) -> None:
    base = private_dir("afd-privacy-")
    os.chmod(base, 0o755)
    vault, _ = init_vault(base / "v")
    try:
        assert _mode(vault.root) == 0o700
        _, stored = _private_source(vault, base)
        assert [_mode(p) for p in stored] == [0o400, 0o400]
        assert _mode(vault.root / ".git") == 0o700
        assert {_mode(p) for p in _objects(vault.root)} == {0o400}
        assert _readable_by(NOBODY, _everything(vault.root)) == []
        # the owner opens the vault's folder to everyone (to share the pages, say): the private
        # source, its text and the history still aren't theirs to read
        os.chmod(vault.root, 0o755)
        readable = _readable_by(NOBODY, [*stored, *_objects(vault.root), vault.root / ".git"])
        assert readable == []
        leaked = [
            p
            for p in _readable_by(NOBODY, _everything(vault.root))
            if Path(p).is_file() and "bonus pool" in Path(p).read_text(errors="replace")
        ]
        assert leaked == []
    finally:
        vault.close()


@ROOT_ONLY
def test_init_makes_the_vault_private_whatever_the_umask() -> None:
    base = private_dir("afd-privacy-umask-")
    old = os.umask(0)
    try:
        out = CliRunner().invoke(main, ["init", str(base / "v"), "--json"])
    finally:
        os.umask(old)
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["mode"] == "0700"
    assert _readable_by(NOBODY, _everything(base / "v")) == []


@ROOT_ONLY
def test_a_shared_group_reads_pages_and_shared_sources_never_private_ones(
    umask022: None,
) -> None:
    base = private_dir("afd-privacy-group-")
    os.chmod(base, 0o755)
    group = grp.getgrgid(NOBODY).gr_name  # nogroup: nobody's own group
    out = CliRunner().invoke(main, ["init", str(base / "v"), "--shared-group", group])
    assert out.exit_code == 0, out.output
    assert f"Shared with group {group}" in out.output
    root = base / "v"
    assert _mode(root) == 0o2750 and os.stat(root).st_gid == NOBODY
    with open_vault(root) as vault:
        assert vault.config.get("privacy.shared_group") == group
        _, private = _private_source(vault, base)
        public = base / "public.md"
        public.write_text("The canteen opens at eight in the morning on weekdays.\n")
        os.chmod(public, 0o644)
        shared = SourceStore(vault).add_file(public).record
        shared_files = [root / shared.original_file, root / shared.text_file]
        assert [_mode(p) for p in shared_files] == [0o440, 0o440]
        assert [_mode(p) for p in private] == [0o400, 0o400]

    tried = [*shared_files, *private, root / "wiki" / "index.md", *_objects(root)]

    def as_member() -> list[str]:  # nobody, in the vault's group
        got = []
        for path in tried:
            try:
                path.read_bytes()
                got.append(str(path))
            except OSError:
                pass
        db = root / ".affidavit" / "db.sqlite"
        try:
            db.read_bytes()
            got.append(str(db))
        except OSError:
            pass
        return got

    read = as_uid(NOBODY, as_member, groups=(NOBODY,))
    assert sorted(read) == sorted(str(p) for p in [*shared_files, root / "wiki" / "index.md"])
    with open_vault(root) as vault:
        assert run_doctor(vault).clean


def test_a_group_that_does_not_exist_is_refused_before_anything_is_made(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no group 'no-such-group-here'"):
        init_vault(tmp_path / "v", shared_group="no-such-group-here")
    assert not (tmp_path / "v").exists()


# --- what an attacker (or an accident) tries next ---------------------------------------------------


def test_the_same_bytes_from_a_more_private_file_make_the_stored_copy_private(
    tmp_path: Path,
) -> None:
    group = grp.getgrgid(os.getgid()).gr_name
    vault, _ = init_vault(tmp_path / "v", shared_group=group)
    try:
        open_copy = tmp_path / "open.md"
        open_copy.write_text(SECRET)
        os.chmod(open_copy, 0o644)
        record = SourceStore(vault).add_file(open_copy).record
        stored = [vault.root / record.original_file, vault.root / record.text_file]
        assert [_mode(p) for p in stored] == [0o440, 0o440]
        closed = tmp_path / "closed.md"
        closed.write_text(SECRET)
        os.chmod(closed, 0o600)
        again = SourceStore(vault).add_file(closed)
        assert not again.added
        assert [_mode(p) for p in stored] == [0o400, 0o400]
        # and a third, open copy never loosens them again
        SourceStore(vault).add_file(open_copy)
        assert [_mode(p) for p in stored] == [0o400, 0o400]
    finally:
        vault.close()


def test_git_gc_keeps_the_history_private(tmp_path: Path, umask022: None) -> None:
    """The git command the owner may run packs the objects: core.sharedRepository keeps them so."""
    vault, _ = init_vault(tmp_path / "v")
    try:
        _private_source(vault, tmp_path)
        subprocess.run(["git", "-C", str(vault.root), "gc", "-q"], check=True)
        objects = [p for p in (vault.root / ".git" / "objects").rglob("*") if p.is_file()]
        assert any(p.suffix == ".pack" for p in objects)
        assert [str(p) for p in objects if _mode(p) & 0o077] == []
        assert _mode(vault.root / ".git") == 0o700
    finally:
        vault.close()


def test_a_vault_made_before_is_made_private_on_open_and_doctor_names_the_rest(
    tmp_path: Path, umask022: None
) -> None:
    """A vault of the old kind: its folder 0755, sources 0444, .git 0755 with 0444 objects."""
    vault, _ = init_vault(tmp_path / "v")
    _, stored = _private_source(vault, tmp_path)
    root = vault.root
    vault.close()
    os.chmod(root, 0o755)
    for path in stored:
        os.chmod(path, 0o444)
    os.chmod(root / ".git", 0o755)
    with open_vault(root) as vault:
        assert _mode(root / ".git") == 0o700  # the history is a private part, like .affidavit
        report = run_doctor(vault)
        privacy = [f for f in report.findings if f.check == "privacy"]
        assert len(privacy) == 1, privacy
        (finding,) = privacy
        assert "readable by a group and other users" in finding.message
        assert "0755" in finding.message
        assert finding.fix == f"`chmod 700 {root}`"
        assert "sources/" in finding.message
    os.chmod(root, 0o700)
    with open_vault(root) as vault:
        assert [f for f in run_doctor(vault).findings if f.check == "privacy"] == []


def test_doctor_names_a_file_readable_inside_a_shared_vaults_private_parts(
    tmp_path: Path,
) -> None:
    group = grp.getgrgid(os.getgid()).gr_name
    vault, _ = init_vault(tmp_path / "v", shared_group=group)
    try:
        assert run_doctor(vault).clean
        os.chmod(vault.root / ".git", 0o750)  # the group may now enter the history
        os.chmod(vault.state_dir, 0o700)
        findings = [f for f in run_doctor(vault).findings if f.check == "privacy"]
        assert [f.subject for f in findings] == [".git"]
        assert findings[0].fix == f"`chmod g-rwx {vault.root / '.git'}`"
    finally:
        vault.close()
