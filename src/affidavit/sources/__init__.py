"""Sources: immutable original bytes, their extracted text, and the sanitizer flags on that text.

extract     media type detection, text extraction with a map back to the original
sanitizer   flags for invisible, bidi, control characters, hidden text, base64, homoglyphs,
            instruction-like text
fetch       URL fetching within size, time and redirect limits (http and https only)
trust       trust tiers from the config's rules, by origin
sentences   host numbering of a source's sentences, and resolving citations by number
store       the content-addressed store under ``sources/`` and its database rows
"""

from __future__ import annotations

from .extract import (
    EXTENSIONS,
    MEDIA_EXTENSIONS,
    SUPPORTED_HELP,
    Extracted,
    detect_media_type,
    extract,
    line_number,
    location,
    locator,
)
from .fetch import Fetched, fetch_url
from .sanitizer import FLAG_KINDS, INSTRUCTION_PATTERNS, Flag, scan
from .store import AddResult, SourceRecord, SourceStore
from .trust import TrustDecision, trust_for

__all__ = [
    "EXTENSIONS",
    "FLAG_KINDS",
    "INSTRUCTION_PATTERNS",
    "MEDIA_EXTENSIONS",
    "SUPPORTED_HELP",
    "AddResult",
    "Extracted",
    "Fetched",
    "Flag",
    "SourceRecord",
    "SourceStore",
    "TrustDecision",
    "detect_media_type",
    "extract",
    "fetch_url",
    "line_number",
    "location",
    "locator",
    "scan",
    "trust_for",
]
