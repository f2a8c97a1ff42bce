"""Where a vault is: its marker files and the search up the folder tree, with nothing else
imported (the CLI finds a vault's daemon before, and often instead of, opening the vault)."""

from __future__ import annotations

from pathlib import Path

CONFIG_NAME = "affidavit.toml"
STATE_DIR = ".affidavit"


def find_vault_root(start: Path) -> Path | None:
    """The nearest directory at or above ``start`` that holds an ``affidavit.toml`` and state dir."""
    start = start.resolve()
    for candidate in (start, *start.parents):
        if (candidate / CONFIG_NAME).is_file() and (candidate / STATE_DIR).is_dir():
            return candidate
    return None


__all__ = ["CONFIG_NAME", "STATE_DIR", "find_vault_root"]
