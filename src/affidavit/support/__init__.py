"""The support check (SPEC §3 W11): is a text supported by the exact source words it cites?

The gate, lint, doctor and ask call it through this surface: :class:`SupportChecker` (the
deterministic rules, with the optional entailment-model layer), the verdict :class:`Support` and
its three values. The modules behind it read the text and its quotes (``reading``), compare
numbers (``numbers``), dates (``dates``), names and negation (``rules``), take the source's
headings as context (``context``) and mark what lacks support (``mark``); ``facts`` says what two
versions of a fact disagree on (lint's contradictions).
"""

from __future__ import annotations

from .checker import SupportChecker
from .context import headings_above
from .mark import mark
from .model import EntailmentModel, load_model
from .rules import CLAIM_SHARE, SUPPORTED, UNCERTAIN, UNSUPPORTED, VERDICTS, Support, check
from .version import check_version, rules_version

__all__ = [
    "CLAIM_SHARE",
    "SUPPORTED",
    "UNCERTAIN",
    "UNSUPPORTED",
    "VERDICTS",
    "EntailmentModel",
    "Support",
    "SupportChecker",
    "check",
    "check_version",
    "headings_above",
    "load_model",
    "mark",
    "rules_version",
]
