"""The extractive engine (SPEC §5): the embedded, deterministic, network-free default proposer.

:func:`propose_plan` turns one :class:`~affidavit.providers.base.IngestTask` into a plan whose
every claim is a sentence of the chunk, quoted verbatim. See docs/extractive.md.
"""

from __future__ import annotations

from .engine import ENGINE, VERSION, is_empty_plan, name_title, propose_plan, slugify

__all__ = ["ENGINE", "VERSION", "is_empty_plan", "name_title", "propose_plan", "slugify"]
