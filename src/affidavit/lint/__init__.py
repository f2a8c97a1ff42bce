"""Lint (SPEC W9): deterministic checks and model findings that must show verified quotes."""

from .findings import (
    CHECK_KINDS,
    MODEL_KINDS,
    Finding,
    FindingQuote,
    FindingStore,
    StoredFinding,
)
from .runner import LintReport, after_ingest, run_lint

__all__ = [
    "CHECK_KINDS",
    "MODEL_KINDS",
    "Finding",
    "FindingQuote",
    "FindingStore",
    "LintReport",
    "StoredFinding",
    "after_ingest",
    "run_lint",
]
