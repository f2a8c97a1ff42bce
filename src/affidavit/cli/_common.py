"""Helpers shared by the CLI command modules: opening the vault, JSON output, error mapping."""

from __future__ import annotations

import json
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


def lint_progress() -> Callable[[str, int, int], None]:
    """A one-line progress display of a lint run on stderr: the stage and how far it has got
    (the caller ends the line)."""

    def show(stage: str, done: int, total: int) -> None:
        pct = f"{100 * done // total:3d}%" if total else "    "
        click.echo(f"\rLinting: {stage:<24} {pct} ({done}/{total})", err=True, nl=False)

    return show
