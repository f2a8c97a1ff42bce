"""The vaults of one PostgreSQL database, as a daemon serves them (``serve --database URL`` or
``[database] url``): every vault the database lists (``affidavit.vaults``), each with its owner
and tokens, over one connection pool. The owner is the local user named in the database; on the
Unix socket that user has every role on the vault, as the owner of a SQLite vault's folder does.
Needs the ``[postgres]`` extra; only the PostgreSQL composition root imports this module.
"""

from __future__ import annotations

import pwd
from collections.abc import Mapping
from dataclasses import dataclass

import psycopg
from psycopg import sql

from ..config import Config
from ..errors import ConfigError, NotFoundError
from ..service.pg_vaults import PgVault
from ..service.tokens import TokenGrant
from ..storage.base import VAULT_NAME
from ..storage.postgres import REGISTRY_SCHEMA, PostgresStorage
from ..storage.url import redact, scrub
from .logs import event

NO_OWNER = -1
"""The owner UID of a vault whose owner is no user of this host: no caller on the socket owns it."""


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
    reason (its password masked), not after the pool's minute of retries."""
    try:
        psycopg.connect(url, connect_timeout=timeout, autocommit=True).close()
    except psycopg.Error as exc:
        raise ConfigError(
            f"can't connect to the database {redact(url)}: {scrub(str(exc).strip(), url)}. "
            "Check the URL (host, port, database, user) and that the server runs; keep the "
            "password in ~/.pgpass or $PGPASSWORD."
        ) from None


def _uid(user: str) -> int:
    try:
        return pwd.getpwnam(user).pw_uid
    except (KeyError, ValueError):
        return NO_OWNER


class PgRegistry:
    """The served vaults of one database by name."""

    def __init__(self, storage: PostgresStorage, vaults: list[PgServedVault], url: str) -> None:
        self.storage = storage
        self._vaults = {v.name: v for v in vaults}
        self.shown_url = redact(url)

    @property
    def vaults(self) -> Mapping[str, PgServedVault]:
        return self._vaults

    @classmethod
    def open(cls, url: str, config: Config | None = None) -> PgRegistry:
        """Connect, apply the migrations not applied yet, and serve every vault the database
        lists. ``config`` (the affidavit.toml that named the database, or the defaults) is each
        vault's: its policy, plan expiry, body and token limits."""
        probe(url)
        storage = PostgresStorage(url)
        try:
            storage.migrate()
            with storage.pool.connection() as conn:
                listed = conn.execute(
                    sql.SQL("SELECT name, owner FROM {}.vaults ORDER BY id").format(
                        sql.Identifier(REGISTRY_SCHEMA)
                    )
                ).fetchall()
            served = []
            for row in listed:
                name, owner = str(row["name"]), str(row["owner"])
                if not VAULT_NAME.fullmatch(name):  # a row written by hand: never a schema name
                    event("vault_refused", vault=name[:80], message="not a vault name")
                    continue
                service = PgVault(storage, name, config or Config())
                served.append(PgServedVault(name, owner, _uid(owner), service))
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
        return cls(storage, served, url)

    def get(self, name: str) -> PgServedVault:
        try:
            return self._vaults[name]
        except KeyError:
            raise NotFoundError(f"this daemon serves no vault {name!r}.") from None

    def check_token(self, token_id: str, secret: str) -> tuple[str, TokenGrant | str]:
        """The vault a presented token belongs to and its grant, or ``("", "unknown")``: one
        query over every served vault's tokens (the first vault whose token it is decides, as
        over SQLite vaults)."""
        from ..clock import utc_now
        from ..storage.pg_served import find_token

        names = list(self._vaults)
        with self.storage.pool.connection() as conn:
            at, verdict = find_token(conn, [f"v_{n}" for n in names], token_id, secret, utc_now())
        if at < 0:
            return "", "unknown"
        if isinstance(verdict, str):
            return names[at], verdict
        return names[at], TokenGrant(token_id=verdict[0], role=verdict[1])  # type: ignore[arg-type]

    def close(self) -> None:
        self.storage.close()


__all__ = ["NO_OWNER", "PgRegistry", "PgServedVault"]
