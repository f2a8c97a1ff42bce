"""The vault on disk (SPEC §1): layout, ``init``, opening with recovery, and the writer lock.

<vault>/affidavit.toml   wiki/   sources/   .affidavit/ (db.sqlite, journal/, lock)
"""

from __future__ import annotations

import fcntl
import os
import pwd
import sqlite3
import stat
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import db as dbmod
from .clock import Clock, utc_now
from .config import Config, load_config, render_default_config
from .errors import AffidavitError, ConfigError, VaultError
from .privacy import make_private, share_with, shared_gid
from .store.anchor import Anchor, acting_as
from .store.gitrepo import GitRepo
from .store.paths import inside, real_dir
from .vault_root import CONFIG_NAME as CONFIG_NAME
from .vault_root import STATE_DIR as STATE_DIR
from .vault_root import find_vault_root as find_vault_root

if TYPE_CHECKING:
    import pygit2

GITIGNORE = (
    "# Affidavit: the database, journal and caches are local state, not history.\n"
    ".affidavit/\n*.affidavit-tmp\n"
)


PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600


def user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"UID {uid}"


def owner_of(root: Path) -> int:
    """A vault's owner: the UID owning its directory, as the kernel reports it."""
    return os.lstat(root).st_uid


def read_only_reason(root: Path, owner: int) -> str:
    """Why this process only reads ``root`` (empty when it runs as the vault's owner)."""
    me = os.geteuid()
    if owner == me:
        return ""
    name = user_name(owner)
    run_as = f"sudo -u {name} " if me == 0 and not name.startswith("UID ") else ""
    return (
        f"{root} belongs to {name} (UID {owner}) and this process runs as UID {me}: it only reads "
        "that vault, so nothing is written, recovered, committed or sent to a model with more "
        f"authority than its owner has. Run the command as the owner ({run_as}affidavit …), or "
        f"let the owner run `affidavit serve --vault {root}`."
    )


class ReadOnlyGit(GitRepo):
    """The git repository of a vault this process does not own: never run (a repository's
    config can name commands, e.g. ``core.fsmonitor``, that git would run as us)."""

    def __init__(self, root: Path, reason: str) -> None:
        super().__init__(root, "affidavit", "affidavit@localhost")
        self.reason = reason

    def run(self, *args: str, check: bool = True) -> str:
        raise VaultError(self.reason)

    def repository(self) -> pygit2.Repository:
        raise VaultError(self.reason)

    def clear_stale_lock(self) -> None:
        raise VaultError(self.reason)


@dataclass
class Vault:
    """An open vault. Build it with :func:`open_vault` or :func:`init_vault`; close it when done.

    ``read_only`` is empty for the vault's owner; for anyone else it says why the vault is only
    read (W10): the writer lock refuses, the database is opened read-only and git never runs.
    """

    root: Path
    config: Config
    db: sqlite3.Connection
    git: GitRepo
    clock: Clock = field(default=utc_now)
    read_only: str = ""
    anchor: Anchor | None = field(default=None, repr=False)
    """The pinned root every vault file is opened beneath (:mod:`affidavit.store.anchor`)."""
    _own_anchor: bool = field(default=False, repr=False)
    _lock_depth: int = field(default=0, repr=False)

    @property
    def wiki_dir(self) -> Path:
        return self.root / "wiki"

    @property
    def sources_dir(self) -> Path:
        return self.root / "sources"

    @property
    def state_dir(self) -> Path:
        return self.root / STATE_DIR

    @property
    def journal_dir(self) -> Path:
        return self.state_dir / "journal"

    @property
    def config_path(self) -> Path:
        return self.root / CONFIG_NAME

    @contextmanager
    def write_lock(self, timeout: float = 60.0) -> Iterator[None]:
        """Hold the vault's single-writer lock (an ``flock`` on ``.affidavit/lock``); reentrant.

        Every writer takes it, so a vault this process does not own refuses here."""
        if self.read_only:
            raise VaultError(self.read_only)
        if self._lock_depth:
            self._lock_depth += 1
            try:
                yield
            finally:
                self._lock_depth -= 1
            return
        path = inside(self.root, f"{STATE_DIR}/lock")
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        deadline = time.monotonic() + timeout
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise VaultError(
                            f"{self.root} is locked by another Affidavit process for over "
                            f"{timeout:.0f}s. Wait for it to finish, or stop it, and retry."
                        ) from None
                    time.sleep(0.05)
            self._lock_depth = 1
            yield
        finally:
            self._lock_depth = 0
            os.close(fd)

    def close(self) -> None:
        """Close the database and wait (up to 60 s) for the background search-index catch-up
        of this vault, so nothing of this process has its files open afterwards."""
        from .retrieval.tantivy_index import wait_for_refresh

        try:
            files = [r[2] for r in self.db.execute("PRAGMA database_list") if r[1] == "main"]
        except sqlite3.Error:
            files = []
        self.db.close()
        if self._own_anchor and self.anchor is not None:
            self.anchor.close()
        if files and files[0]:
            wait_for_refresh(60, Path(files[0]))

    @property
    def base(self) -> Anchor | Path:
        """What vault files are opened beneath: the pinned root (or the root's path, for a vault
        built without one)."""
        return self.anchor if self.anchor is not None else self.root

    def __enter__(self) -> Vault:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _private_entries(root: Path) -> Iterator[tuple[str, os.stat_result, int]]:
    """Every folder and file under ``.affidavit/`` (symlinks skipped, never followed), with
    its ``lstat`` and the mode it may have at most."""
    state = root / STATE_DIR
    if not real_dir(state):
        return
    for directory, _dirs, files in os.walk(state, followlinks=False):
        entries = [(directory, PRIVATE_DIR_MODE)]
        entries += [(os.path.join(directory, f), PRIVATE_FILE_MODE) for f in files]
        for path, most in entries:
            try:
                info = os.lstat(path)
            except FileNotFoundError:
                continue
            if not stat.S_ISLNK(info.st_mode):
                yield path, info, most


def secure_private_parts(root: Path) -> list[str]:
    """Make ``.affidavit/`` and everything in it its owner's alone (folders 0700, files 0600),
    whatever the umask was when they were made; returns the paths changed."""
    changed = []
    for path, info, most in _private_entries(root):
        mode = stat.S_IMODE(info.st_mode)
        if mode & 0o077:
            os.chmod(path, mode & most)
            changed.append(path)
    return changed


def private_problems(root: Path) -> list[str]:
    """Files and folders under ``.affidavit/`` that other users may read, write or enter."""
    return [
        f"{path} (mode {stat.S_IMODE(info.st_mode):04o})"
        for path, info, _ in _private_entries(root)
        if stat.S_IMODE(info.st_mode) & 0o077
    ]


def _refuse_symlinks(root: Path) -> None:
    """The vault's own files (config, state folder, database, journal, lock) are never symlinks:
    one could make us open another vault's database or write somewhere else."""
    for relpath in (CONFIG_NAME, STATE_DIR, f"{STATE_DIR}/db.sqlite", f"{STATE_DIR}/journal"):
        try:
            inside(root, relpath)
        except AffidavitError as exc:
            raise VaultError(f"{exc} The vault at {root} can't be opened until then.") from None


def _private_mkdir(path: Path) -> None:
    if not real_dir(path):
        path.mkdir(mode=PRIVATE_DIR_MODE)
    os.chmod(path, PRIVATE_DIR_MODE)


def _create_private_file(path: Path) -> None:
    """Create ``path`` 0600 (SQLite gives its -wal and -shm files the database's mode)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, PRIVATE_FILE_MODE)
    os.close(fd)


def init_vault(root: Path, clock: Clock = utc_now, *, shared_group: str = "") -> tuple[Vault, bool]:
    """Create a vault at ``root`` (idempotent). Returns the open vault and whether it was new.

    Refuses to create a vault inside another vault. A new vault is its owner's alone (its folder
    0700) or, with ``shared_group``, shared with that group (:mod:`affidavit.privacy`);
    ``.affidavit/`` and ``.git/`` are made 0700 and the database's files 0600 whatever the umask.
    """
    root = root.resolve()
    existing = find_vault_root(root)
    if existing is not None and existing != root:
        raise VaultError(
            f"{root} is inside the vault at {existing}. Vaults can't be nested: "
            f"use that vault, or choose a directory outside it."
        )
    created = existing is None
    if not created and shared_group:
        configured = load_config(root / CONFIG_NAME).get("privacy.shared_group")
        if configured != shared_group:
            raise ConfigError(
                f"{root} is already a vault; init shares only a new one. To share this one, set "
                f'privacy.shared_group = "{shared_group}" in its affidavit.toml, then run '
                f"`chgrp {shared_group} {root} {root}/wiki {root}/sources && chmod 2750 {root} "
                f"{root}/wiki {root}/sources`."
            )
    gid = shared_gid(shared_group)  # a missing group is refused before anything is made
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    if owner_of(root) != os.geteuid():
        raise VaultError(read_only_reason(root, owner_of(root)))
    _refuse_symlinks(root)
    if created:  # the owner's alone (whatever the umask made it), or shared with one group
        make_private(root)
    for sub in ("wiki", "sources"):
        (root / sub).mkdir(exist_ok=True)
    _private_mkdir(root / STATE_DIR)
    _private_mkdir(root / STATE_DIR / "journal")
    if created and gid is not None:
        share_with(root, gid)
    config_path = root / CONFIG_NAME
    if not config_path.exists():
        config_path.write_text(
            render_default_config({"privacy.shared_group": shared_group}), encoding="utf-8"
        )
    gitignore = root / ".gitignore"
    if not gitignore.exists():
        gitignore.write_text(GITIGNORE, encoding="utf-8")
    vault = open_vault(root, clock=clock)
    if created or vault.git.head() is None:
        from .store.apply import render_all_files  # the door renders the empty wiki too

        with vault.write_lock():
            render_all_files(vault)
            vault.git.commit(
                "Initialize Affidavit vault", [CONFIG_NAME, ".gitignore", "wiki", "sources"]
            )
    return vault, created


class ReadOnlyConnection(sqlite3.Connection):
    """A read-only connection whose refused writes say why, as a :class:`VaultError`."""

    reason = "this vault is open read-only."

    def _refused(self, exc: sqlite3.OperationalError) -> Exception:
        return VaultError(self.reason) if "readonly" in str(exc) else exc

    def execute(self, *args: Any) -> sqlite3.Cursor:
        try:
            return super().execute(*args)
        except sqlite3.OperationalError as exc:
            raise self._refused(exc) from None

    def executemany(self, *args: Any) -> sqlite3.Cursor:
        try:
            return super().executemany(*args)
        except sqlite3.OperationalError as exc:
            raise self._refused(exc) from None

    def executescript(self, *args: Any) -> sqlite3.Cursor:
        try:
            return super().executescript(*args)
        except sqlite3.OperationalError as exc:
            raise self._refused(exc) from None


DB_RELPATH = f"{STATE_DIR}/db.sqlite"


def _owner_gid(uid: int, fallback: int) -> int:
    try:
        return pwd.getpwuid(uid).pw_gid
    except KeyError:
        return fallback


def _reachable(path: Path) -> bool:
    """Whether this thread, with the file-system identity it has now, can reach ``path``'s
    folder (``access(2)`` asks for the real uid, not this one)."""
    try:
        os.stat(path.parent)
    except PermissionError:
        return False
    except OSError:
        return True
    return True


_NOT_WAL = (
    "{path} is not in WAL mode (its journal mode is {mode!r}), and this process does not own the "
    "vault: out of WAL mode SQLite looks for the database's journal files by name before every "
    "read, after this check, so it is refused (W10). The owner's next `affidavit` command on it "
    "(e.g. `affidavit doctor`) puts it back in WAL mode; then restart the daemon."
)


def connect_pinned(anchor: Anchor, reason: str = "") -> sqlite3.Connection:
    """A new connection to the database of the vault pinned by ``anchor`` (W10), read-only when
    ``reason`` says why. SQLite opens files by name, so the name is checked around the open: the
    root's path must still name the pinned directory and the database must be the file recorded
    when the vault was first opened (device, inode, owner); the open itself — the database, its
    -wal and -shm — runs with the owner's file-system identity when this process is root
    (:func:`~affidavit.store.anchor.acting_as`), so a race won between the checks reaches
    nothing its owner couldn't. For a vault this process does not own the database must be in WAL
    mode: then the -wal and -shm are opened here and kept for the connection's life, whereas out
    of WAL mode SQLite would look its journals up by name before every read, later, with this
    process's own rights. A swapped vault is refused with :class:`VaultError`."""
    path = anchor.path / DB_RELPATH
    anchor.check()
    anchor.database(DB_RELPATH)
    gid = _owner_gid(anchor.owner, os.fstat(anchor.fd).st_gid)
    with acting_as(anchor.owner, gid):
        try:
            db = connect_read_only(path, reason, anchor) if reason else dbmod.connect(path, anchor)
        except VaultError:
            if os.geteuid() == 0 and anchor.owner != 0 and not _reachable(path):
                raise VaultError(
                    f"{path} can't be reached by its owner, {user_name(anchor.owner)} (UID "
                    f"{anchor.owner}): a folder on its way is closed to them. A root daemon "
                    "reads a vault only with its owner's authority (W10); move the vault where "
                    "its owner can reach it, or open that folder to them (chmod o+x)."
                ) from None
            raise
        try:
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()  # its files open now
            journal = str(db.execute("PRAGMA journal_mode").fetchone()[0]).lower()
        except sqlite3.Error as exc:  # e.g. its -wal or -shm moved away meanwhile
            db.close()
            raise VaultError(
                f"{path} could not be opened as the vault's database ({exc}); refusing it."
            ) from None
        except BaseException:
            db.close()
            raise
    try:
        if journal != "wal" and anchor.owner != os.geteuid():
            raise VaultError(_NOT_WAL.format(path=path, mode=journal))
        anchor.check()
        anchor.database(DB_RELPATH)
        opened = db.execute("PRAGMA database_list").fetchone()[2]
        if opened != str(path):
            raise VaultError(f"SQLite opened {opened} for {path}; refusing it.")
    except BaseException:
        db.close()
        raise
    return db


def connect_read_only(
    path: Path, reason: str = "", base: Path | Anchor | None = None
) -> sqlite3.Connection:
    """The database of a vault this process does not own, opened read-only (``mode=ro``,
    ``query_only``); refused when SQLite resolved ``path`` to another file (a symlink swapped
    in meanwhile). Its ``evidence_span`` reads the texts of the vault at ``base`` (default: the
    folder above the database's)."""
    uri = f"file:{urllib.parse.quote(str(path))}?mode=ro"
    try:
        db = sqlite3.connect(
            uri,
            uri=True,
            timeout=30,
            isolation_level=None,
            check_same_thread=False,
            factory=ReadOnlyConnection,
        )
    except sqlite3.Error as exc:
        raise VaultError(f"can't read {path}: {exc}. Ask the vault's owner.") from None
    assert isinstance(db, ReadOnlyConnection)
    if reason:
        db.reason = reason
    from .evidence.spans import register as register_spans

    register_spans(db, path.parent.parent if base is None else base)
    db.row_factory = sqlite3.Row
    db.execute("PRAGMA query_only=ON")
    db.execute("PRAGMA foreign_keys=ON")
    db.execute("PRAGMA busy_timeout=30000")
    opened = db.execute("PRAGMA database_list").fetchone()["file"]
    try:
        moved = os.path.realpath(opened) != os.path.realpath(path) or os.path.islink(path)
    except OSError:  # a link came or went while it was resolved
        moved = True
    if moved:
        db.close()
        raise VaultError(f"{path} changed into a link while it was opened; refusing it.")
    return db


def attach(anchor: Anchor, config: Config, clock: Clock = utc_now, read_only: str = "") -> Vault:
    """A new connection to an already opened vault (the daemon's pool), beneath its pinned root
    (:func:`connect_pinned`): no migration, no recovery; read-only for a vault this process does
    not own. The vault shares ``anchor`` (its opener closes it)."""
    root = anchor.path
    db = connect_pinned(anchor, read_only)
    if read_only:
        git: GitRepo = ReadOnlyGit(root, read_only)
    else:
        git = GitRepo(root, config.git_author_name, config.git_author_email)
    return Vault(root, config, db, git, clock, read_only, anchor)


def _read_config(anchor: Anchor) -> Config:
    """The vault's affidavit.toml, read beneath the pinned root (never through a symlink)."""
    path = anchor.path / CONFIG_NAME
    try:
        fd = anchor.open(CONFIG_NAME, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        return load_config(path)  # says it is missing, and what to do
    except AffidavitError as exc:
        raise VaultError(f"{exc} The vault at {anchor.path} can't be opened until then.") from None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise VaultError(f"{path} is not a regular file.")
        config = load_config(path, handle.read())
    if config.database_url:  # never a silent fallback to the folder's own SQLite database
        from .storage.url import redact

        raise ConfigError(
            f"{path} sets [database] url ({redact(config.database_url)}): this vault's wiki is in "
            "that PostgreSQL database, which `affidavit serve` run here serves over its REST API "
            "(docs/team.md); this command works on SQLite vaults only yet. Use the daemon's API, "
            "or remove [database] url to use the folder's own database."
        )
    return config


def _open_not_owned(anchor: Anchor, clock: Clock) -> Vault:
    """Open a vault another user owns: read only, nothing created, migrated or recovered."""
    root, owner = anchor.path, anchor.owner
    reason = read_only_reason(root, owner)
    try:
        info = anchor.stat(DB_RELPATH)
    except (OSError, AffidavitError):
        raise VaultError(reason) from None
    if not stat.S_ISREG(info.st_mode):
        raise VaultError(reason)
    config = _read_config(anchor)
    vault = attach(anchor, config, clock, reason)
    try:
        done = {row[0] for row in vault.db.execute("SELECT name FROM _migrations")}
    except sqlite3.Error:
        done = set()
    if any(name not in done for name, _ in dbmod.MIGRATIONS):
        vault.close()
        raise VaultError(f"{root} needs a database upgrade that only its owner may run: {reason}")
    return vault


def open_vault(
    root: Path | None = None, clock: Clock = utc_now, *, anchor: Anchor | None = None
) -> Vault:
    """Open the vault at ``root`` (or the one enclosing the working directory), or the one
    ``anchor`` pins (the caller keeps and closes that anchor; otherwise the vault pins its root
    itself and closes it with the vault).

    Before anything else runs, an interrupted apply is recovered (rolled forward or back) and
    the private parts are made private again. A vault this process does not own is opened
    read-only instead (:func:`read_only_reason`): no recovery, migration or write runs for it.
    """
    own = anchor is None
    if anchor is None:
        found = find_vault_root(root or Path.cwd())
        if found is None:
            where = root or Path.cwd()
            raise VaultError(
                f"No Affidavit vault at {where}. Create one with `affidavit init {where}` "
                f"or pass --vault PATH."
            )
        anchor = Anchor.pin(found)
    try:
        vault = _open_pinned(anchor, clock)
    except BaseException:
        if own:
            anchor.close()
        raise
    vault._own_anchor = own
    return vault


def _open_pinned(anchor: Anchor, clock: Clock) -> Vault:
    found = anchor.path
    _refuse_symlinks(found)
    if anchor.owner != os.geteuid():
        return _open_not_owned(anchor, clock)
    config = _read_config(anchor)
    _private_mkdir(found / STATE_DIR)
    _private_mkdir(found / STATE_DIR / "journal")
    db_path = found / STATE_DIR / "db.sqlite"
    if not db_path.exists():
        _create_private_file(db_path)
    connection = connect_pinned(anchor)
    dbmod.migrate(connection)
    secure_private_parts(found)
    git = GitRepo(found, config.git_author_name, config.git_author_email)
    if not git.exists():
        git.init()
    git.secure()  # the history is its owner's alone, like .affidavit/
    vault = Vault(found, config, connection, git, clock, anchor=anchor)
    from .store.recovery import recover

    recover(vault)
    return vault
