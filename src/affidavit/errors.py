"""The one exception tree of Affidavit.

Every error a user can meet derives from :class:`AffidavitError`, and every message says what to do.

    AffidavitError
    ├── ConfigError            affidavit.toml is missing, malformed or holds a bad value
    ├── VaultError             no vault here, a vault inside a vault, a locked or damaged vault
    │   └── DatabaseUnavailable  a vault's PostgreSQL database did not answer (retry; start it)
    ├── SourceError            a source can't be read, fetched or extracted
    │   └── FetchError         a URL was refused (scheme, size, time, redirects) or failed
    ├── PlanValidationError    a plan is not a valid member of the closed schema (W1, W2)
    ├── AdmissionError         a plan failed a check at the door (W4); carries the check's name
    ├── ConflictError          a plan can't be applied now: expired, already decided, slug taken
    ├── NotFoundError          no source, plan, page or claim with that id
    ├── IntegrityError         stored bytes or the audit chain no longer match their hashes
    ├── ProviderError          a model provider is misconfigured, unreachable or replied badly
    └── CitationError          an answer cites something it was not given (W8)
"""

from __future__ import annotations


class AffidavitError(Exception):
    """Base class of every Affidavit error. ``str(err)`` is a message meant for the user."""


class ConfigError(AffidavitError):
    """The configuration file is missing, malformed or holds an invalid value."""


class VaultError(AffidavitError):
    """The vault is missing, nested in another vault, locked by another process or damaged."""


class DatabaseUnavailable(VaultError):
    """A vault's PostgreSQL database did not answer (down, restarting, unreachable): nothing was
    done; retry once it is back. The daemon reconnects by itself."""


class SourceError(AffidavitError):
    """A source could not be read, decoded or extracted."""


class FetchError(SourceError):
    """A URL was refused by policy (scheme, size, time, redirects) or the fetch failed."""


class PlanValidationError(AffidavitError):
    """A plan is not a valid member of the closed operation schema (W1) or its nonce is wrong (W2)."""

    def __init__(self, message: str, errors: list[str] | None = None) -> None:
        super().__init__(message)
        self.errors = errors or []


class AdmissionError(AffidavitError):
    """A plan failed an admission check at the door. ``check`` names the check that decided."""

    def __init__(self, check: str, message: str) -> None:
        super().__init__(message)
        self.check = check


class ConflictError(AffidavitError):
    """The action conflicts with the vault's state: expired or decided plan, slug taken, etc."""


class QuotaError(AffidavitError):
    """A caller used up a quota (e.g. an agent's MCP proposals per hour): the message names the
    limit, the setting that sets it and when the next call is allowed."""


class NotFoundError(AffidavitError):
    """No object with the given id exists."""


class IntegrityError(AffidavitError):
    """Stored bytes, rendered files or the audit chain no longer match what was recorded."""


class ProviderError(AffidavitError):
    """A model provider is misconfigured, unreachable, or returned an unusable reply."""


class CitationError(AffidavitError):
    """An answer cited a claim it was not given or cited nothing."""


__all__ = [
    "AdmissionError",
    "AffidavitError",
    "CitationError",
    "ConfigError",
    "ConflictError",
    "DatabaseUnavailable",
    "FetchError",
    "IntegrityError",
    "NotFoundError",
    "PlanValidationError",
    "ProviderError",
    "QuotaError",
    "SourceError",
    "VaultError",
]
