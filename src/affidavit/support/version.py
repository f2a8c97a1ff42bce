"""Which support check judged a text: a version recorded with each claim the door writes.

The rules change (issue 22 rewrote them); a claim admitted under older rules may read
differently under the current ones. The door records, with each claim, the verdict it was
admitted with and this version; ``affidavit doctor`` and lint's ``unsupported_claim`` judge the
wiki again and report what changed since (:mod:`affidavit.support.audit`).

The version is derived, never maintained by hand: a digest of the files the deterministic layer
reads (every module and data file of this package, and the word lists and quote normalisation it
shares with the rest of the host), plus the model layer's class when one is configured. Any edit
to them gives a new version, so "admitted under an older check" is always knowable; whether the
verdict actually changed is what the re-judging says.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

from .model import EntailmentModel

_PACKAGE = Path(__file__).resolve().parent
_SHARED = (_PACKAGE.parent / "words.py", _PACKAGE.parent / "evidence" / "normalize.py")


@lru_cache(maxsize=1)
def rules_version() -> str:
    """``rules-`` and 12 hex digits of the digest of the deterministic layer's files."""
    digest = hashlib.sha256()
    files = sorted(p for p in _PACKAGE.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    for path in [*files, *_SHARED]:
        if path.is_file():
            digest.update(str(path.relative_to(_PACKAGE.parent)).encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return "rules-" + digest.hexdigest()[:12]


def check_version(model: EntailmentModel | None) -> str:
    """The version of the support check with ``model`` as its model layer (None: rules only)."""
    if model is None:
        return rules_version()
    kind = type(model)
    return f"{rules_version()}+{kind.__module__}.{kind.__qualname__}"
