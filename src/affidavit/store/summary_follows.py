"""A page's summary that is a superseded claim's own words follows the claim to its successor.

The extractive engine (and many writers) summarise a page with its first claim: "Green tea should
steep for two minutes at 80 degrees Celsius." When a new version of the source supersedes that
claim with "… three minutes …", the page's claims say three minutes while its summary, in the
front matter, the page's first line and ``index.md``, still said two: the wiki stated both facts
after the person approved the change. A ``supersede_claim`` the door applies now carries such a
summary along: the page's summary becomes the successor's words, which the gate verified as the
claim's own. Only a summary that *is* the superseded claim's text (whitespace aside) moves, and
only to a successor that fits a summary (one line of at most :data:`LONGEST` characters); the
audit entry names the change (``summary_follows``), and the doctor's replay checks it against
the same rule. A summary in other words than the claim's is left as it is.
"""

from __future__ import annotations

LONGEST = 300
"""A page summary's longest text (the plan schema's ``create_page.summary``)."""


def same_words(a: str, b: str) -> bool:
    """``a`` and ``b`` are the same text, whitespace aside."""
    return " ".join(a.split()) == " ".join(b.split())


def follows(summary: str, old_text: str, new_text: str) -> bool:
    """A page summary ``summary`` moves to ``new_text`` when its claim ``old_text`` is
    superseded by it."""
    return (
        bool(new_text.strip())
        and same_words(summary, old_text)
        and not same_words(old_text, new_text)
        and len(new_text) <= LONGEST
        and "\n" not in new_text
    )
