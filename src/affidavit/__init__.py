"""Affidavit: an LLM-maintained wiki you can trust.

Pipeline: sources → plan (schema) → gate (admission) → store (apply, journal, render) → surfaces.
"""

__version__ = "0.1.0"

from .errors import (
    AdmissionError,
    AffidavitError,
    CitationError,
    ConfigError,
    ConflictError,
    FetchError,
    IntegrityError,
    NotFoundError,
    PlanValidationError,
    ProviderError,
    SourceError,
    VaultError,
)

__all__ = [
    "AdmissionError",
    "AffidavitError",
    "CitationError",
    "ConfigError",
    "ConflictError",
    "FetchError",
    "IntegrityError",
    "NotFoundError",
    "PlanValidationError",
    "ProviderError",
    "SourceError",
    "VaultError",
    "__version__",
]
