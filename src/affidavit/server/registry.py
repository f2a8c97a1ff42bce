"""The vaults one daemon serves: names, owners and a small pool of open connections each.

Each vault is opened once with :func:`~affidavit.vault.open_vault` at startup (migrations and
recovery run then); requests borrow a :class:`~affidavit.vault.Vault` of their own from the pool,
so no two threads share a SQLite connection and the vault's writer lock (an ``flock`` per open
file) still serialises writers, across threads and processes alike.

A root daemon serving a vault another user owns serves it read-only (W10, ``read_only`` says
why): it is opened without recovery or migration, its connections are read-only, no job worker
runs for it and no caller gets more than the read role on it. Writing, recovering, committing
and calling models with the owner's keys happen in the owner's own processes (their
``affidavit`` commands or their own ``affidavit serve``), never with root's authority.

Each vault's root is pinned once (:class:`~affidavit.store.anchor.Anchor`, before the daemon
forks its workers, which inherit the descriptors): every new connection is checked against it
(:func:`~affidavit.vault.connect_pinned`), and a vault whose root was swapped (renamed and
replaced by a symlink to another user's vault, say) or whose database was replaced is refused
and logged (``vault_refused``), never opened.
"""

from __future__ import annotations

import os
import queue
import re
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..config import Config
from ..errors import ConfigError, NotFoundError, VaultError
from ..retrieval.search_version import SearchVersion, Version
from ..service.tokens import TokenGrant, check_token
from ..store.anchor import Anchor
from ..vault import Vault, attach, open_vault

if TYPE_CHECKING:
    from ..ask.log import AskLog

_NAME = re.compile(r"[^a-z0-9-]+")
T = TypeVar("T")

LOOP_BUDGET_STEPS = 20_000
"""SQLite virtual-machine steps a read on the event loop may take before it is abandoned (and run
again in the thread pool): a selective search takes well under 1,000; a query matching a fifth
of a 100k-claim wiki, ~900,000."""
_STEPS_PER_CHECK = 1_000
LOOP_CACHE_KIB = 32_768
"""The page cache of a process's loop connection to a vault, at most (SQLite's default: 2 MiB)."""


def vault_name(root: Path) -> str:
    """A vault's name in URLs: its directory name, lowercased, other characters as '-'."""
    return _NAME.sub("-", root.name.lower()).strip("-") or "vault"


@dataclass
class ServedVault:
    """One served vault: its name, root, owner (the UID owning the directory) and pool."""

    name: str
    root: Path
    owner_uid: int
    config: Config
    anchor: Anchor
    read_only: str = ""
    """Empty when this daemon runs as the vault's owner; otherwise why it only reads it."""
    _idle: queue.SimpleQueue[Vault] = field(default_factory=queue.SimpleQueue, repr=False)
    _opened: int = field(default=0, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    vectors: Any = field(default=None, repr=False)
    vectors_loaded: bool = field(default=False, repr=False)
    _loop_vault: Vault | None = field(default=None, repr=False)
    _loop_thread: int | None = field(default=None, repr=False)
    _loop_checks: int = field(default=0, repr=False)
    _ask_log: AskLog | None = field(default=None, repr=False)
    _answers: SearchCache | None = field(default=None, repr=False)

    @property
    def max_body_bytes(self) -> int:
        return int(self.config.get("server.max_body_bytes"))

    @property
    def root_can_read(self) -> bool:
        return bool(self.config.get("server.root_can_read"))

    def _open(self) -> Vault:
        try:
            return attach(self.anchor, self.config, read_only=self.read_only)
        except VaultError as exc:  # a swapped root or database: refused, and the owner told
            from .logs import event

            event("vault_refused", vault=self.name, owner_uid=self.owner_uid, message=str(exc))
            raise

    @contextmanager
    def borrow(self) -> Iterator[Vault]:
        """An open vault for this thread alone, returned to the pool afterwards."""
        try:
            vault = self._idle.get_nowait()
        except queue.Empty:
            vault = self._open()
            with self._lock:
                self._opened += 1
        try:
            yield vault
        finally:
            if vault.db.in_transaction:  # never hand on a connection mid-transaction
                vault.db.execute("ROLLBACK")
            self._idle.put(vault)

    def on_loop(self, read: Callable[[Vault], T]) -> T | None:
        """Run ``read`` now, on this process's own read connection to the vault; None when it
        ran past :data:`LOOP_BUDGET_STEPS` or met a lock (the caller then runs it in the thread
        pool, and so for a call from any thread but the first caller's: the connection is never
        shared with another thread). It is ``query_only`` (a read that tries to write fails) and
        never waits for a lock.
        """
        if self._loop_vault is None:
            vault = self._open()
            vault.db.execute("PRAGMA query_only = ON")
            vault.db.execute("PRAGMA busy_timeout = 0")
            # most searches run here: a page cache of up to LOOP_CACHE_KIB (filled as pages are
            # read) rather than SQLite's 2 MiB, which a 100k-claim wiki's hits overran (reading
            # ten hits' rows was ~40 % cheaper with it)
            vault.db.execute(f"PRAGMA cache_size = -{LOOP_CACHE_KIB}")
            vault.db.set_progress_handler(self._budget, _STEPS_PER_CHECK)
            self._loop_vault, self._loop_thread = vault, threading.get_ident()
        if self._loop_thread != threading.get_ident():  # another thread: the pool serves it
            return None
        vault = self._loop_vault
        self._loop_checks = 0
        try:
            result = read(vault)
        except sqlite3.OperationalError:  # interrupted (over budget), busy or locked
            return None
        finally:
            if vault.db.in_transaction:
                vault.db.execute("ROLLBACK")
        # an interruption the read caught itself still means its answer is not to be trusted
        return None if self._over_budget() else result

    def _over_budget(self) -> bool:
        return self._loop_checks * _STEPS_PER_CHECK > LOOP_BUDGET_STEPS

    def _budget(self) -> int:
        self._loop_checks += 1
        return int(self._over_budget())

    def search_cache(self) -> SearchCache | None:
        """This process's searches of the vault by query (``server.search_cache``; None: off)."""
        if self._answers is None:
            entries = int(self.config.get("server.search_cache"))
            if entries <= 0:
                return None
            self._answers = SearchCache(entries)
        return self._answers

    def vector_search(self, vault: Vault) -> Any:
        """The dense retriever, loaded once per daemon (None without the extra or vectors)."""
        if not self.vectors_loaded:
            from ..service.vaults import vectors_for

            with self._lock:
                if not self.vectors_loaded:
                    self.vectors = vectors_for(vault)
                    self.vectors_loaded = True
        return self.vectors

    def ask_log(self) -> AskLog | None:
        """Where this daemon's answers put their log rows, written in batches
        (:mod:`affidavit.ask.log`); None (each answer writes its own) for a vault only read
        (W10) or with ``server.ask_log_batch = 1``."""
        batch = int(self.config.get("server.ask_log_batch"))
        if self.read_only or batch <= 1:
            return None
        if self._ask_log is None:
            from ..ask.log import AskLog

            with self._lock:
                if self._ask_log is None:
                    self._ask_log = AskLog(self.borrow, batch)
        return self._ask_log

    def close(self) -> None:
        if self._ask_log is not None:
            try:
                self._ask_log.close()  # the answers' rows still waiting, before the pool closes
            except (VaultError, sqlite3.Error) as exc:
                from .logs import event

                event("ask_log_lost", vault=self.name, message=str(exc))
        if self._loop_vault is not None:
            self._loop_vault.close()
            self._loop_vault = None
        while True:
            try:
                self._idle.get_nowait().close()
            except queue.Empty:
                return


SEARCH_CACHE_BYTES = 64 * 1024 * 1024
"""Bytes of search answers one process keeps per vault, at most (whatever the entries)."""


class SearchCache:
    """The bodies of one vault's recent searches, valid for one version of what they read.

    The version is :class:`~affidavit.retrieval.search_version.SearchVersion`'s, read on the
    loop connection: a token every write to claims, pages, links, evidence or sources moves, in
    the writing transaction, whoever writes (migration ``m026``'s triggers), and no other write
    (the daemon's answer log, nonces, plans); ``PRAGMA data_version`` (every commit) where those
    triggers are missing or altered. A body is kept only when the version read before the search
    is the one read after it (no such write landed meanwhile), and served only while the version
    is still that one: a new version empties the cache. So a body served from here is the
    body the search would give now, byte for byte. Bounded by entries and by
    :data:`SEARCH_CACHE_BYTES` (the least recently used go first). One thread uses it: the
    event loop's."""

    def __init__(self, entries: int, max_bytes: int = SEARCH_CACHE_BYTES) -> None:
        self.entries = entries
        self.max_bytes = max_bytes
        self.version: Version | None = None
        self.read_version = SearchVersion()
        self.held = 0
        self.bodies: OrderedDict[tuple[str, int, str], bytes] = OrderedDict()

    def version_of(self, db: sqlite3.Connection) -> Version:
        """The version of what a search on ``db`` reads now."""
        return self.read_version(db)

    def get(self, version: Version, key: tuple[str, int, str]) -> bytes | None:
        if version != self.version:
            self.bodies.clear()
            self.held = 0
            self.version = version
            return None
        body = self.bodies.get(key)
        if body is not None:
            self.bodies.move_to_end(key)
        return body

    def put(self, version: Version, key: tuple[str, int, str], body: bytes) -> None:
        if version != self.version or len(body) > self.max_bytes // 16:
            return
        old = self.bodies.pop(key, None)
        self.held += len(body) - (len(old) if old is not None else 0)
        self.bodies[key] = body
        while self.bodies and (len(self.bodies) > self.entries or self.held > self.max_bytes):
            _, dropped = self.bodies.popitem(last=False)
            self.held -= len(dropped)


def pin_vaults(roots: list[Path]) -> list[Anchor]:
    """Pin each vault's root (:meth:`Anchor.pin`): what a daemon does once, before it forks."""
    pins: list[Anchor] = []
    try:
        for root in roots:
            pins.append(Anchor.pin(root))
    except BaseException:
        for pin in pins:
            pin.close()
        raise
    return pins


class Registry:
    """The served vaults by name."""

    blocking = False
    """Its lookups read local SQLite files: the guard asks them on the event loop (a thread hop
    would cost more than they do)."""

    def __init__(self, vaults: list[ServedVault], pins: list[Anchor] | None = None) -> None:
        self.vaults = {v.name: v for v in vaults}
        self._own_pins = pins or []

    @classmethod
    def open(cls, roots: list[Path] | list[Anchor]) -> Registry:
        """Open each vault (migrate, recover) and name it; two vaults may not share a name.
        ``roots`` are paths (pinned here, closed with the registry) or pins the caller keeps
        (:func:`pin_vaults`: a daemon's workers open their registries on the parent's pins)."""
        own = [r for r in roots if isinstance(r, Path)]
        pins = [r if isinstance(r, Anchor) else None for r in roots]
        made = pin_vaults(own)
        made_iter = iter(made)
        anchors = [p if p is not None else next(made_iter) for p in pins]
        try:
            return cls(cls._served(anchors), made)
        except BaseException:
            for pin in made:
                pin.close()
            raise

    @staticmethod
    def _served(anchors: list[Anchor]) -> list[ServedVault]:
        served: list[ServedVault] = []
        for anchor in anchors:
            vault = open_vault(anchor=anchor)
            name = vault_name(vault.root)
            if any(s.name == name for s in served):
                vault.close()
                raise ConfigError(
                    f"two served vaults would both be called {name!r} ({vault.root}); "
                    "rename one of their directories."
                )
            owner = anchor.owner
            if owner != os.geteuid() and os.geteuid() != 0:
                vault.close()
                raise ConfigError(
                    f"{vault.root} belongs to UID {owner} but this daemon runs as UID "
                    f"{os.geteuid()}: it could not write there. Run the daemon as its owner."
                )
            item = ServedVault(name, vault.root, owner, vault.config, anchor, vault.read_only)
            item._idle.put(vault)
            served.append(item)
        return served

    def get(self, name: str) -> ServedVault:
        try:
            return self.vaults[name]
        except KeyError:
            raise NotFoundError(f"this daemon serves no vault {name!r}.") from None

    def by_root(self, root: Path) -> ServedVault | None:
        for item in self.vaults.values():
            if item.root == root.resolve():
                return item
        return None

    def find(self, name: str) -> ServedVault | None:
        """The served vault ``name``, or None: a daemon's SQLite vaults are those it opened."""
        return self.vaults.get(name)

    def check_token(self, token_id: str, secret: str) -> tuple[str, TokenGrant | str]:
        """The vault a presented token belongs to and its grant, or ``("", "unknown")``; a known
        token refused (``expired``, ``revoked``) stops the search at its vault."""
        for served in self.vaults.values():
            try:
                with served.borrow() as vault:
                    verdict = check_token(vault.db, vault.clock, token_id, secret)
            except VaultError:  # a vault refused (swapped, logged): its tokens name nothing now
                continue
            if verdict != "unknown":
                return served.name, verdict
        return "", "unknown"

    def close(self) -> None:
        for item in self.vaults.values():
            item.close()
        for pin in self._own_pins:
            pin.close()
        self._own_pins = []


__all__ = ["Registry", "SearchCache", "ServedVault", "pin_vaults", "vault_name"]
