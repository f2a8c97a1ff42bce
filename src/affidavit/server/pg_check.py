"""``affidavit serve --database URL --check``: the checks of ``serve --check`` (:mod:`.check`:
the socket, the TCP address) and the database's: it answers, which migrations it still needs
(they run when the daemon starts), and each vault with its owner on this host. Reads only:
nothing is created or migrated; the URL is shown with its password masked.
"""

from __future__ import annotations

from psycopg import sql

from ..errors import AffidavitError
from ..storage.base import VAULT_NAME
from ..storage.pg_migrations import REGISTRY, VAULT
from ..storage.postgres import REGISTRY_SCHEMA
from ..storage.url import redact, scrub
from .check import CheckReport, _check_socket, _check_tcp
from .pg_registry import NO_OWNER, _uid, probe
from .runtime import ServeOptions


def run_check_database(options: ServeOptions, url: str) -> CheckReport:
    import psycopg

    report = CheckReport()
    _check_socket(report, options.socket_path, options.shared)
    _check_tcp(report, options)
    shown = redact(url)
    try:
        probe(url)
    except AffidavitError as exc:
        report.problem("database", str(exc))
        return report
    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
            report.ok("database", f"{shown} answers")
            exists = conn.execute("SELECT to_regclass('affidavit.vaults')").fetchone()
            if exists is None or exists[0] is None:
                report.problem("vaults", "none: create one with `affidavit team create`")
                return report
            done = _done(conn, REGISTRY_SCHEMA)
            todo = [name for name, _ in REGISTRY if name not in done]
            listed = conn.execute(
                sql.SQL("SELECT name, owner FROM {}.vaults ORDER BY id").format(
                    sql.Identifier(REGISTRY_SCHEMA)
                )
            ).fetchall()
            if not listed:
                report.problem("vaults", "none: create one with `affidavit team create`")
            for name, owner in listed:
                if not VAULT_NAME.fullmatch(str(name)):
                    report.problem("vault", f"{str(name)[:60]!r} is not a vault name: not served")
                    continue
                todo += [f"v_{name}.{m}" for m, _ in VAULT if m not in _done(conn, f"v_{name}")]
                uid = _uid(str(owner))
                who = f"owner {owner} (UID {uid})" if uid != NO_OWNER else (
                    f"owner {owner}, no such user here: no one on the socket owns it"
                )  # fmt: skip
                report.ok(f"vault {name}", who)
            report.ok("migrations", f"{len(todo)} to apply at start" if todo else "up to date")
    except psycopg.Error as exc:
        report.problem("database", f"{shown}: {scrub(str(exc).strip(), url)}")
    return report


def _done(conn: object, schema: str) -> set[str]:
    import psycopg

    assert isinstance(conn, psycopg.Connection)
    found = conn.execute("SELECT to_regclass(%s)", (f'"{schema}"._migrations',)).fetchone()
    if found is None or found[0] is None:
        return set()
    rows = conn.execute(
        sql.SQL("SELECT name FROM {}._migrations").format(sql.Identifier(schema))
    ).fetchall()
    return {str(r[0]) for r in rows}


__all__ = ["run_check_database"]
