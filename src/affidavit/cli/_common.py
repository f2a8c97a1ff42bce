"""Helpers shared by the CLI command modules: opening the vault, JSON output, error mapping."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import click

from ..errors import AffidavitError

if TYPE_CHECKING:
    from ..vault import Vault

P = ParamSpec("P")
R = TypeVar("R")

json_option = click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")


def user_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Turn :class:`AffidavitError` into a clean ``Error: ...`` message and exit status 1."""

    @wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except AffidavitError as exc:
            raise click.ClickException(str(exc)) from exc

    return wrapper


def vault_path(ctx: click.Context) -> Path | None:
    root = ctx.find_root()
    value = root.params.get("vault") if root.params else None
    return Path(value) if value else None


@contextmanager
def opened_vault(ctx: click.Context) -> Iterator[Vault]:
    """Open the vault named by ``--vault`` (or enclosing the working directory) for one command."""
    from ..vault import open_vault

    vault = open_vault(vault_path(ctx))
    try:
        yield vault
    finally:
        vault.close()


def echo_json(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True))


class LintProgress:
    """A progress display of a lint run on stderr: on a terminal one line, rewritten in place
    (``\r``); elsewhere (a log file, a pipe, a CI job) one plain line per stage as it starts and
    as it ends, so a log holds no carriage returns. :meth:`end` ends the display."""

    def __init__(self, tty: bool | None = None) -> None:
        self.tty = sys.stderr.isatty() if tty is None else tty
        self.stage = ""
        self.drawn = False

    def __call__(self, stage: str, done: int, total: int) -> None:
        pct = f"{100 * done // total:3d}%" if total else "    "
        if self.tty:
            click.echo(f"\rLinting: {stage:<24} {pct} ({done}/{total})", err=True, nl=False)
            self.drawn = True
            return
        if stage != self.stage or (total and done == total):
            click.echo(f"Linting: {stage} ({done}/{total})", err=True)
            self.stage = stage

    def end(self) -> None:
        """End the progress line (on a terminal; plain lines are ended already)."""
        if self.drawn:
            click.echo("", err=True)
            self.drawn = False


def lint_progress(tty: bool | None = None) -> LintProgress:
    """A progress display of a lint run on stderr (:class:`LintProgress`; the caller calls its
    ``end()``). ``tty``: whether stderr is a terminal (asked when None)."""
    return LintProgress(tty)
