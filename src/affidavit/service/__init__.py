"""The service layer: one API over a vault that every front door (CLI, daemon, MCP) calls.

- :mod:`.models` — the typed request and response models (pydantic), shared by all doors;
- :mod:`.vaults` — the services over one open vault (read, search, ask, propose, decide, audit);
- :mod:`.tokens` — the daemon's bearer tokens, stored hashed in each vault's database;
- :mod:`.backend` — the CLI's choice of door: in-process, or the daemon's client.
"""

from __future__ import annotations

from .backend import Backend, Forbidden, LocalBackend, Unauthenticated, vault_owner

__all__ = ["Backend", "Forbidden", "LocalBackend", "Unauthenticated", "vault_owner"]
