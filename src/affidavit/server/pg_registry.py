"""The vaults of one PostgreSQL database, as a daemon serves them (``serve --database URL`` or
``[database] url``): every vault the database lists (``affidavit.vaults``), each with its owner
and tokens, over one connection pool. The owner is the local user named in the database; on the
Unix socket that user has every role on the vault, as the owner of a SQLite vault's folder does.
Its lookups (a vault made since, a presented token) wait on the network, so the guard asks them in
a worker thread (:attr:`PgRegistry.blocking`), and a database that doesn't answer within
:data:`LOOKUP_SECONDS` is :class:`~affidavit.errors.DatabaseUnavailable` (503, Retry-After).
Needs the ``[postgres]`` extra; only the PostgreSQL composition root imports this module.
"""

from __future__ import annotations

import pwd
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql
from psycopg_pool import PoolTimeout

from ..config import Config
from ..errors import ConfigError, DatabaseUnavailable, NotFoundError
from ..service.pg_vaults import PgVault
from ..service.tokens import TokenGrant
from ..storage.base import VAULT_NAME
from ..storage.postgres import REGISTRY_SCHEMA, PostgresStorage
from ..storage.url import redact, scrub
from .logs import event

NO_OWNER = -1
"""The owner UID of a vault whose owner is no user of this host: no caller on the socket owns it."""
UNKNOWN_FOR = 5.0
"""Seconds a name the database lists no vault for stays known as absent: a request for it again
within that time is answered 404 without asking the database."""
LOOKUP_SECONDS = 5.0
"""How long a lookup waits for a connection of the pool (the database down: until it answers
again) before the request is answered 503 instead."""
REQUEST_SECONDS = 3.0
"""How long a request's wait for a connection of the pool lasts before the daemon asks whether
the database answers at all: if not, the request is answered 503 then (not after the pool's
minute); if it does, the pool is only busy and the request waits on (``FailFastPool``)."""
UNKNOWN_NAMES = 1024
"""At most this many absent names are remembered (the oldest forgotten first): bounded memory
whoever sends names."""


@dataclass
class PgServedVault:
    """One served vault of the database: its name (as in the database and in URLs), its owner
    (a user name; ``owner_uid`` on this host) and its services."""

    name: str
    owner: str
    owner_uid: int
    service: PgVault
    read_only: str = ""

    @property
    def root(self) -> str:
        return f"postgresql vault {self.name}"

    @property
    def config(self) -> Config:
        return self.service.config

    @property
    def root_can_read(self) -> bool:
        return bool(self.config.get("server.root_can_read"))

    @property
    def max_body_bytes(self) -> int:
        return int(self.config.get("server.max_body_bytes"))


def probe(url: str, timeout: int = 10) -> None:
    """Connect once, now: a URL that can't reach its database fails at once with the driver's
    reason (its password masked) and the fix, not after the pool's minute of retries
    (:func:`affidavit.storage.pg_connect.probe`)."""
    from ..storage.pg_connect import probe as connect_once

    connect_once(url, timeout)


def _uid(user: str) -> int:
    try:
        return pwd.getpwnam(user).pw_uid
    except (KeyError, ValueError):
        return NO_OWNER


def _vault_sql(where: str = "") -> sql.Composed:
    return sql.SQL("SELECT name, owner FROM {}.vaults " + where + " ORDER BY id").format(
        sql.Identifier(REGISTRY_SCHEMA)
    )


def _served(
    storage: PostgresStorage, row: Mapping[str, object], config: Config | None
) -> PgServedVault | None:
    """The vault of one registry row, or None (said in the log) for a row whose name is no vault
    name (written by hand: never a schema name)."""
    name, owner = str(row["name"]), str(row["owner"])
    if not VAULT_NAME.fullmatch(name):
        event("vault_refused", vault=name[:80], message="not a vault name")
        return None
    return PgServedVault(name, owner, _uid(owner), PgVault(storage, name, config or Config()))


class PgRegistry:
    """The served vaults of one database by name: those it lists at :meth:`open`, and each one
    made later (``affidavit team create``) from the first request that names it (:meth:`find`)."""

    blocking = True
    """:meth:`find` and :meth:`check_token` may wait on the database: the guard calls them in a
    worker thread, never on the event loop."""

    def __init__(
        self,
        storage: PostgresStorage,
        vaults: list[PgServedVault],
        url: str,
        config: Config | None = None,
        *,
        absent_for: float = UNKNOWN_FOR,
    ) -> None:
        self.storage = storage
        self._vaults = {v.name: v for v in vaults}
        self.shown_url = redact(url)
        self._config = config or Config()
        self.absent_for = absent_for
        self._absent: OrderedDict[str, float] = OrderedDict()  # name -> when to ask again
        self._lock = threading.Lock()  # guards _vaults (replaced, never changed) and _absent
        self._asking = threading.Lock()  # one lookup at a time: a name is asked once
        self._reread_at = 0.0  # when a token no served vault knows may read the list again
        self.lookups = 0
        """How many times the database was asked for vaults not served yet (for tests)."""
        self.lookup_seconds = LOOKUP_SECONDS

    @contextmanager
    def _conn(self) -> Iterator[Any]:
        """A pooled connection for one lookup; the database not answering (down, restarting,
        unreachable, or no connection free within :attr:`lookup_seconds`) is
        :class:`DatabaseUnavailable`, its reason said without the URL's password."""
        try:
            with self.storage.pool.connection(timeout=self.lookup_seconds) as conn:
                yield conn
        except (psycopg.OperationalError, psycopg.InterfaceError, PoolTimeout) as exc:
            event("database_error", kind=type(exc).__name__)
            raise DatabaseUnavailable(
                f"the PostgreSQL database {self.shown_url} did not answer "
                f"({type(exc).__name__}); nothing was done."
            ) from None

    @property
    def vaults(self) -> Mapping[str, PgServedVault]:
        return self._vaults  # a snapshot: a vault found later replaces the dict, never grows it

    def find(self, name: str) -> PgServedVault | None:
        """The served vault ``name``. One the daemon doesn't serve yet is looked up in the
        database (only a vault name; one lookup at a time; a name found absent isn't asked again
        for ``absent_for`` seconds) and, if it is there now, served from now on, owner and all,
        as :meth:`open` would have."""
        served = self._vaults.get(name)
        if served is not None or not VAULT_NAME.fullmatch(name) or self._known_absent(name):
            return served
        with self._asking:
            served = self._vaults.get(name)
            if served is not None or self._known_absent(name):
                return served
            self.lookups += 1
            with self._conn() as conn:
                row = conn.execute(_vault_sql("WHERE name = %s"), (name,)).fetchone()
            served = None if row is None else _served(self.storage, row, self._config)
            with self._lock:
                if served is None:
                    self._absent[name] = time.monotonic() + self.absent_for
                    while len(self._absent) > UNKNOWN_NAMES:
                        self._absent.popitem(last=False)
                else:
                    self._vaults = {**self._vaults, name: served}
            if served is not None:
                event("vault_added", vault=name, owner=served.owner)
            return served

    def _reread(self) -> bool:
        """Serve every vault the database lists now that isn't served yet, unless the list was
        read less than ``absent_for`` seconds ago; whether one was added."""
        with self._asking:
            now = time.monotonic()
            if now < self._reread_at:
                return False
            self.lookups += 1
            with self._conn() as conn:
                rows = conn.execute(_vault_sql()).fetchall()
            self._reread_at = now + self.absent_for  # read: not again for a while
            new = [
                v
                for row in rows
                if str(row["name"]) not in self._vaults
                and (v := _served(self.storage, row, self._config)) is not None
            ]
            with self._lock:
                self._vaults = {**self._vaults, **{v.name: v for v in new}}
                for v in new:
                    self._absent.pop(v.name, None)
        for v in new:
            event("vault_added", vault=v.name, owner=v.owner)
        return bool(new)

    def _known_absent(self, name: str) -> bool:
        with self._lock:
            until = self._absent.get(name)
            if until is None:
                return False
            if time.monotonic() < until:
                return True
            del self._absent[name]
            return False

    @classmethod
    def open(
        cls, url: str, config: Config | None = None, *, absent_for: float = UNKNOWN_FOR
    ) -> PgRegistry:
        """Connect, apply the migrations not applied yet, and serve every vault the database
        lists. ``config`` (the affidavit.toml that named the database, or the defaults) is each
        vault's: its policy, plan expiry, body and token limits. A name found absent later is
        not asked of the database again for ``absent_for`` seconds."""
        probe(url)
        storage = PostgresStorage(url, fail_after=REQUEST_SECONDS)
        try:
            storage.migrate()
            with storage.pool.connection() as conn:
                listed = conn.execute(_vault_sql()).fetchall()
            served = [v for row in listed if (v := _served(storage, row, config)) is not None]
        except psycopg.Error as exc:  # e.g. no right to create the schemas: said, not a traceback
            storage.close()
            raise ConfigError(
                f"the database {redact(url)} refused the daemon's setup: "
                f"{scrub(str(exc).strip(), url)}. Give the URL's user the right to create "
                "schemas in it, or run `affidavit team create` once as a user who has it."
            ) from None
        except BaseException:
            storage.close()
            raise
        if not served:
            storage.close()
            raise ConfigError(
                f"the database {redact(url)} holds no vault; create one with "
                "`affidavit team create NAME --owner USER --database URL`."
            )
        return cls(storage, served, url, config, absent_for=absent_for)

    def get(self, name: str) -> PgServedVault:
        served = self.find(name)
        if served is None:
            raise NotFoundError(f"this daemon serves no vault {name!r}.")
        return served

    def check_token(self, token_id: str, secret: str) -> tuple[str, TokenGrant | str]:
        """The vault a presented token belongs to and its grant, or ``("", "unknown")``: one
        query over every served vault's tokens (the first vault whose token it is decides, as
        over SQLite vaults). A token none of them knows may be a vault's made since: the list of
        vaults is read again then, at most once every ``absent_for`` seconds, and the token
        checked again if it named a vault not served yet."""
        from ..clock import utc_now
        from ..storage.pg_served import find_token

        def lookup(names: list[str]) -> tuple[int, tuple[str, str] | str]:
            with self._conn() as conn:
                schemas = [f"v_{n}" for n in names]
                return find_token(conn, schemas, token_id, secret, utc_now())

        names = list(self._vaults)
        at, verdict = lookup(names)
        if at < 0 and self._reread():
            names = list(self._vaults)
            at, verdict = lookup(names)
        if at < 0:
            return "", "unknown"
        if isinstance(verdict, str):
            return names[at], verdict
        return names[at], TokenGrant(token_id=verdict[0], role=verdict[1])  # type: ignore[arg-type]

    def close(self) -> None:
        self.storage.close()


__all__ = ["NO_OWNER", "PgRegistry", "PgServedVault"]
