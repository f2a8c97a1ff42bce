"""Slugs and titles from names: what both halves of the engine (analysis and plan) use."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from pathlib import PurePosixPath
from urllib.parse import unquote

from ..plan.schema import RESERVED_SLUGS
from .segment import collapse

_LATIN = str.maketrans(
    {
        "ı": "i",
        "ø": "o",
        "Ø": "O",
        "æ": "ae",
        "Æ": "AE",
        "œ": "oe",
        "ß": "ss",
        "đ": "d",
        "Đ": "D",
        "ł": "l",
        "Ł": "L",
        "þ": "th",
        "ð": "d",
    }
)
"""Letters that Unicode decomposition does not bring to ASCII, for slugs."""
_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,5}$")


def slugify(text: str) -> str:
    """A valid, unreserved slug for ``text`` (ASCII, lower case, hyphens, at most 64 chars)."""
    spaced = re.sub(r"[^\w]+|_", " ", text).translate(_LATIN)
    ascii_text = unicodedata.normalize("NFKD", spaced).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    if len(slug) > 64:
        slug = slug[:64].rsplit("-", 1)[0] or slug[:64]
    if not slug:
        slug = "page-" + hashlib.sha256(text.encode()).hexdigest()[:10]
    if slug in RESERVED_SLUGS:
        slug += "-page"
    return slug


def name_title(source_name: str) -> str:
    """A title from a source's name: the file name without its extension, "_" read as spaces."""
    base = PurePosixPath(unquote(source_name).replace("\\", "/")).name or source_name
    stem = _EXTENSION.sub("", base) or base
    if "_" in stem:
        stem = stem.replace("_", " ")
    elif " " not in stem:
        stem = stem.replace("-", " ")
    title = collapse(stem)
    return fit(title, 120) or "Untitled source"


def fit(text: str, limit: int) -> str:
    """``text`` on one line, cut at a word boundary with "…" when longer than ``limit``."""
    text = collapse(text)
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0]
    return cut + "…"


__all__ = ["fit", "name_title", "slugify"]
