"""wiki/log.md grows by appending (issue 25: an apply costs what its plan changed): a new process
appends a batch's entries to the log on disk when the door's record vouches for its bytes, and
renders it whole when it doesn't (a hand edit, no record) — either way the file is exactly what
the database renders."""

from __future__ import annotations

from typing import Any

from affidavit.inbox import approve, propose
from affidavit.store import door_log
from affidavit.store.render import render_index, render_log
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


def _files(vault: Vault) -> list[str]:
    out = vault.git.run("show", "--name-only", "--format=", "HEAD")
    return sorted(line for line in out.splitlines() if line)


def test_index_md_is_written_when_its_pages_change_or_it_was_edited(vault: Vault) -> None:
    """index.md lists the pages (no count of claims): an apply that only adds claims leaves it
    out of the write and the commit; a new page, or a hand edit of it, has it written again —
    and it is always what the database renders."""
    src = add_text(vault, "greek.md", TEXT)
    index = vault.wiki_dir / "index.md"
    _apply(vault, "alpha", src, QUOTES[0])
    assert "wiki/index.md" in _files(vault) and "1 pages." in index.read_text()
    add = {"op": "add_claims", "page": "alpha", "claims": [claim(f"{QUOTES[1]}.", src, QUOTES[1])]}
    proposal = propose(vault, make_plan(vault, add), "test", "test")
    assert approve(vault, proposal.plan_id, None, "person:test").applied
    assert _files(vault) == ["wiki/alpha.md", "wiki/log.md"]  # claims only: index untouched
    assert index.read_text() == render_index(vault.db)
    index.write_text(index.read_text() + "my own line\n")  # a hand edit: rewritten, as before
    add = {"op": "add_claims", "page": "alpha", "claims": [claim(f"{QUOTES[2]}.", src, QUOTES[2])]}
    proposal = propose(vault, make_plan(vault, add), "test", "test")
    assert approve(vault, proposal.plan_id, None, "person:test").applied
    assert index.read_text() == render_index(vault.db)  # HEAD's bytes again: no diff to commit
    index.unlink()  # missing: written again
    _apply(vault, "delta", src, QUOTES[3])
    assert index.read_text() == render_index(vault.db) and "2 pages." in index.read_text()
    assert not vault.git.changed(["wiki/index.md", "wiki/log.md", "wiki/alpha.md"])
