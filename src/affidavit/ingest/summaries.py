"""A re-ingest's supersession brings the page summary that stated the old fact along with it.

A page's summary in other words than its claims' ("Green tea steeps for two minutes at 80
degrees Celsius.", beside the claim "Green tea is steeped at 80 degrees Celsius for two
minutes.") goes on stating the old fact once a new version's supersession is approved:
:mod:`affidavit.store.summary_follows` only carries a summary that *is* the old claim's words.
When the new version changed the claim's words in one stretch ("two" → "three"), the summary
restates that claim (of the page's claims, it shares the most word stems with it) and holds the
old stretch once, the new summary is derivable: the same words with the stretch replaced. :func:`summary_op` proposes it as an ``update_page`` in the plan of the supersession,
after it, so the gate judges it against the page's claims as the plan leaves them (the new claim
in, the old one out) and the person decides both at once. Anything else is left to lint's
``unsupported_page_words`` after the decision.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from typing import Any

from ..store.summary_follows import LONGEST, same_words
from ..vault import Vault
from ..words import stems

__all__ = ["derived", "summary_op"]

_WORD = re.compile(r"\S+")
LEANS = 0.5
"""Share of word stems (Jaccard) from which a summary restates a claim."""


def derived(summary: str, old: str, new: str) -> str | None:
    """``summary`` with the one stretch of words that changed from ``old`` to ``new`` replaced,
    when ``summary`` holds that stretch exactly once (word for word); None otherwise."""
    a, b = _WORD.findall(old), _WORD.findall(new)
    changed = [
        c for c in SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if c[0] != "equal"
    ]
    if len(changed) != 1 or changed[0][0] != "replace":
        return None
    _, i1, i2, j1, j2 = changed[0]
    was, now = " ".join(a[i1:i2]), " ".join(b[j1:j2])
    pattern = re.compile(r"(?<!\S)" + r"\s+".join(map(re.escape, a[i1:i2])) + r"(?!\S)")
    found = pattern.findall(summary)
    if len(found) != 1 or not was.strip(".,;:") or not now:
        return None
    out = pattern.sub(lambda _: now, summary)
    return out if len(out) <= LONGEST and "\n" not in out and out != summary else None


def summary_op(
    vault: Vault, page: str, claim: str, old: str, new: str, reason: str
) -> dict[str, Any] | None:
    """The ``update_page`` that gives ``page`` its summary with ``claim``'s changed words
    (``old`` → ``new``), or None (a summary that is the claim's own words follows it at the
    door; one that doesn't hold the changed words, or holds them twice, is lint's)."""
    row = vault.db.execute(
        "SELECT p.summary, c.text FROM pages p JOIN claims c ON c.id = ? WHERE p.slug = ?",
        (claim, page),
    ).fetchone()
    if row is None or same_words(str(row[0]), str(row[1])) or old.endswith("…"):
        return None
    summary = derived(str(row[0]), old, new)
    if summary is None or not _leans_on(vault, page, claim, str(row[0])):
        return None
    return {"op": "update_page", "page": page, "summary": summary, "reason": reason}


def _leans_on(vault: Vault, page: str, claim: str, summary: str) -> bool:
    """Whether ``summary`` restates ``claim`` rather than another active claim of ``page``: of
    the page's claims, ``claim`` alone shares the most word stems with it (Jaccard), at least
    :data:`LEANS`. "Station 0 recorded 100 pairs on the dunes" leans on Station 0's claim, not
    on Station 25's, whose "dunes" became "marshes"."""
    words = set(stems(summary))
    best, best_score, tied = "", -1.0, False
    for other, text in vault.db.execute(
        "SELECT id, text FROM claims WHERE page_slug = ? AND status = 'active'", (page,)
    ):
        theirs = set(stems(str(text)))
        union = words | theirs
        score = len(words & theirs) / len(union) if union else 0.0
        if score > best_score:
            best, best_score, tied = str(other), score, False
        elif score == best_score:
            tied = True
    return best == claim and not tied and best_score >= LEANS
