"""wiki/log.md grows by appending (issue 25: an apply costs what its plan changed): a new process
appends a batch's entries to the log on disk when the door's record vouches for its bytes, and
renders it whole when it doesn't (a hand edit, no record) — either way the file is exactly what
the database renders."""

from __future__ import annotations

from typing import Any

from affidavit.inbox import approve, propose
from affidavit.store import door_log
from affidavit.store.render import render_log
from affidavit.vault import Vault

from .conftest import add_text, claim, make_plan

TEXT = (
    "Alpha is the first letter of the Greek alphabet. Beta is the second letter.\n"
    "Gamma is the third letter and comes after beta.\n"
    "Delta is the fourth letter. Epsilon is the fifth letter.\n"
)
QUOTES = [
    "Alpha is the first letter of the Greek alphabet",
    "Beta is the second letter",
    "Gamma is the third letter and comes after beta",
    "Delta is the fourth letter",
    "Epsilon is the fifth letter",
]


def _page(slug: str, src: str, quote: str) -> dict[str, Any]:
    return {
        "op": "create_page",
        "slug": slug,
        "title": slug.title(),
        "summary": f"About {slug}.",
        "claims": [claim(f"{quote}.", src, quote)],
    }


def _apply(vault: Vault, slug: str, src: str, quote: str) -> None:
    proposal = propose(vault, make_plan(vault, _page(slug, src, quote)), "test", "test")
    assert approve(vault, proposal.plan_id, None, "person:test").applied


def test_a_new_process_appends_to_the_vouched_log_and_renders_a_hand_edited_one(
    vault: Vault,
) -> None:
    src = add_text(vault, "greek.md", TEXT)
    log = vault.wiki_dir / "log.md"
    _apply(vault, "alpha", src, QUOTES[0])
    assert door_log.log_on_disk(vault) == door_log.LOG_TEXT[str(vault.root)]

    door_log.LOG_TEXT.clear()  # as a new process finds it
    _apply(vault, "beta", src, QUOTES[1])
    assert log.read_text() == render_log(vault.db)
    assert door_log.log_on_disk(vault) is not None

    door_log.LOG_TEXT.clear()
    log.write_text(log.read_text().replace("Beta", "Bet a"))  # a hand edit
    assert door_log.log_on_disk(vault) is None  # not vouched for: rendered whole
    _apply(vault, "gamma", src, QUOTES[2])
    assert log.read_text() == render_log(vault.db)

    door_log.LOG_TEXT.clear()
    (vault.state_dir / door_log.LOG_RECORD).write_text('{"upto": "x", "sha256": "y"}')
    _apply(vault, "delta", src, QUOTES[3])
    assert log.read_text() == render_log(vault.db)
    assert "Delta" in log.read_text() and "Bet a" not in log.read_text()
