"""Canonical JSON and content hashes for everything addressed by content."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(value: Any) -> str:
    """Serialise ``value`` deterministically: sorted keys, no whitespace, UTF-8 kept as is."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256_hex(data: bytes | str) -> str:
    """The SHA-256 of ``data`` (strings are UTF-8 encoded) as 64 lowercase hex digits."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: str, chunk: int = 1 << 20) -> str:
    """The SHA-256 of a file's full bytes, read in chunks so big files don't fill memory."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def content_id(value: Any) -> str:
    """The SHA-256 of the canonical JSON of ``value``."""
    return sha256_hex(canonical_json(value))
