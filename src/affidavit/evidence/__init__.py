"""Evidence verification (SPEC §3 W3): find every cited quote again in its source's stored text.

``normalize``/``normalize_quote`` define what "verbatim" means; ``Verifier`` checks cited quotes
against stored sources and records where each one was found.
"""

from affidavit.evidence.normalize import Normalized, normalize, normalize_quote
from affidavit.evidence.verify import QuoteCheck, SourceTexts, Verifier, find_first, locate

__all__ = [
    "Normalized",
    "QuoteCheck",
    "SourceTexts",
    "Verifier",
    "find_first",
    "locate",
    "normalize",
    "normalize_quote",
]
