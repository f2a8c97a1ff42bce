"""The extractive engine (SPEC §5): the embedded, deterministic, network-free default proposer.

:func:`propose_plan` turns one :class:`~affidavit.providers.base.IngestTask` into a plan whose
every claim is a sentence of the chunk, quoted verbatim. It is :func:`plan_from` of
:func:`analyse`: the first reads the chunk alone (a host may run it ahead of time, in another
process: an :class:`Analysis` pickles), the second adds what depends on the wiki's known pages.
See docs/extractive.md.
"""

from __future__ import annotations

from .analysis import Analysis, AnalysisMismatch, analyse, analysis_key
from .engine import ENGINE, VERSION, is_empty_plan, plan_from, propose_plan
from .titles import name_title, slugify

__all__ = [
    "ENGINE",
    "VERSION",
    "Analysis",
    "AnalysisMismatch",
    "analyse",
    "analysis_key",
    "is_empty_plan",
    "name_title",
    "plan_from",
    "propose_plan",
    "slugify",
]
