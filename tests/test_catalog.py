"""index.md and context.md's head are rendered only when what they read changed (issue 25 item 1,
:mod:`affidavit.store.catalog`): an apply that only adds claims renders neither, any change to a
page's name, title, summary or category or to a link — through the door or by SQL — has both
rendered again, and the files are always what the database renders."""

from __future__ import annotations

from typing import Any

import pytest

from affidavit.inbox import approve, propose
from affidavit.store import catalog, render
from affidavit.store.render import render_context, render_index
from affidavit.vault import Vault

from .conftest import add_text, claim, make_plan

TEXT = (
    "Alpha is the first letter of the Greek alphabet. Beta is the second letter.\n"
    "Gamma is the third letter and comes after beta.\n"
    "Delta is the fourth letter. Epsilon is the fifth letter.\n"
    "Zeta is the sixth letter. Eta is the seventh letter.\n"
    "Theta is the eighth letter. Iota is the ninth letter.\n"
)
QUOTES = [
    "Alpha is the first letter of the Greek alphabet",
    "Beta is the second letter",
    "Gamma is the third letter and comes after beta",
    "Delta is the fourth letter",
    "Epsilon is the fifth letter",
    "Zeta is the sixth letter",
    "Eta is the seventh letter",
    "Theta is the eighth letter",
    "Iota is the ninth letter",
]


def _apply(vault: Vault, *ops: dict[str, Any]) -> None:
    proposal = propose(vault, make_plan(vault, *ops), "test", "test")
    assert approve(vault, proposal.plan_id, None, "person:test").applied


def _page(slug: str, src: str, quote: str, category: str = "general") -> dict[str, Any]:
    return {
        "op": "create_page",
        "slug": slug,
        "title": slug.title(),
        "summary": f"About {slug}.",
        "category": category,
        "claims": [claim(f"{quote}.", src, quote)],
    }


def _add(page: str, src: str, quote: str) -> dict[str, Any]:
    return {"op": "add_claims", "page": page, "claims": [claim(f"{quote}.", src, quote)]}


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    calls = {"index": 0, "head": 0}
    index, head = render.render_index, render.context_head

    def count_index(db: Any) -> str:
        calls["index"] += 1
        return index(db)

    def count_head(db: Any) -> list[str]:
        calls["head"] += 1
        return head(db)

    monkeypatch.setattr(render, "render_index", count_index)
    monkeypatch.setattr("affidavit.store.apply.context_head", count_head)
    return calls


def _same_as_database(vault: Vault) -> None:
    assert (vault.wiki_dir / "index.md").read_text() == render_index(vault.db)
    assert (vault.wiki_dir / "context.md").read_text() == render_context(vault.db)
    assert not vault.git.changed(["wiki/index.md", "wiki/context.md"])


def test_claims_only_render_neither_index_nor_head(vault: Vault, counted: dict[str, int]) -> None:
    src = add_text(vault, "greek.md", TEXT)
    _apply(vault, _page("alpha", src, QUOTES[0]))
    _apply(vault, _add("alpha", src, QUOTES[1]))  # renders both once: the version is new
    before = dict(counted)
    _apply(vault, _add("alpha", src, QUOTES[2]))
    _apply(vault, _add("alpha", src, QUOTES[3]))
    assert counted == before
    _same_as_database(vault)


def test_a_page_or_link_through_the_door_renders_both_again(
    vault: Vault, counted: dict[str, int]
) -> None:
    src = add_text(vault, "greek.md", TEXT)
    _apply(vault, _page("alpha", src, QUOTES[0], "sources"))
    _apply(vault, _page("beta", src, QUOTES[1], "sources"))
    _apply(vault, _page("gamma", src, QUOTES[2]))
    _apply(vault, _add("gamma", src, QUOTES[3]))
    assert (
        "Main topics** (the pages most sources link to): none yet"
        in (vault.wiki_dir / "context.md").read_text()
    )
    before = dict(counted)
    _apply(vault, {"op": "link_pages", "page": "alpha", "to": "gamma"})
    _apply(vault, {"op": "link_pages", "page": "beta", "to": "gamma"})
    assert counted["index"] > before["index"] and counted["head"] > before["head"]
    assert "[Gamma](gamma.md) (2 sources)" in (vault.wiki_dir / "context.md").read_text()
    _same_as_database(vault)
    _apply(vault, _page("delta", src, QUOTES[4]))  # a new page: counted in both
    assert "4 pages." in (vault.wiki_dir / "index.md").read_text()
    _same_as_database(vault)


def test_a_change_made_by_sql_is_seen(vault: Vault, counted: dict[str, int]) -> None:
    """The attacker's case (or a tool's): pages and links changed outside the door. The
    triggers count it whatever wrote it, so the next apply renders both from the database."""
    src = add_text(vault, "greek.md", TEXT)
    _apply(vault, _page("alpha", src, QUOTES[0], "sources"))
    _apply(vault, _page("beta", src, QUOTES[1], "sources"))
    _apply(vault, _page("gamma", src, QUOTES[2]))
    _apply(vault, _add("gamma", src, QUOTES[3]))
    unused = QUOTES[4:]
    for sql in (
        "UPDATE pages SET title = 'Gamma rays' WHERE slug = 'gamma'",
        "UPDATE pages SET summary = 'Changed.' WHERE slug = 'alpha'",
        "UPDATE pages SET category = 'topics' WHERE slug = 'gamma'",
        "INSERT INTO links (src, dst, plan_id) VALUES ('alpha', 'gamma', 'p'), "
        "('beta', 'gamma', 'p')",
        "DELETE FROM links WHERE src = 'beta'",
    ):
        with vault.db:
            vault.db.execute(sql)
        _apply(vault, _add("gamma", src, unused.pop()))
        _same_as_database(vault)
    index = (vault.wiki_dir / "index.md").read_text()
    assert "[Gamma rays](gamma.md)" in index and "Changed." in index and "## topics" in index


def test_a_forged_or_stale_record_never_keeps_a_wrong_index(vault: Vault) -> None:
    """A record whose hash isn't the file's (a hand edit, a forged row) or whose version isn't
    the catalog's has the index rendered and compared as before: written when it differs."""
    src = add_text(vault, "greek.md", TEXT)
    _apply(vault, _page("alpha", src, QUOTES[0]))
    _apply(vault, _add("alpha", src, QUOTES[1]))
    index = vault.wiki_dir / "index.md"
    index.write_text(index.read_text() + "my own line\n")  # a hand edit
    _apply(vault, _add("alpha", src, QUOTES[2]))
    _same_as_database(vault)
    with vault.db:
        vault.db.execute("UPDATE catalog SET index_sha256 = 'forged', head = '[\"forged\"]'")
    index.write_text("forged\n")
    _apply(vault, _add("alpha", src, QUOTES[3]))
    _same_as_database(vault)
    with vault.db:
        vault.db.execute("DELETE FROM catalog")  # no record at all: rendered every time
    index.unlink()
    _apply(vault, _add("alpha", src, QUOTES[4]))
    _same_as_database(vault)


def test_a_record_of_other_rendering_code_is_rendered_again(
    vault: Vault, counted: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An upgrade that renders index.md or the head differently: the records name the code
    that made them, so the first apply after it renders both again."""
    src = add_text(vault, "greek.md", TEXT)
    _apply(vault, _page("alpha", src, QUOTES[0]))
    _apply(vault, _add("alpha", src, QUOTES[1]))
    before = dict(counted)
    _apply(vault, _add("alpha", src, QUOTES[2]))
    assert counted == before
    monkeypatch.setattr(catalog, "renderer", lambda: "another version")
    _apply(vault, _add("alpha", src, QUOTES[3]))
    assert counted["index"] == before["index"] + 1 and counted["head"] == before["head"] + 1
    _apply(vault, _add("alpha", src, QUOTES[4]))  # recorded again: not again
    assert counted["index"] == before["index"] + 1 and counted["head"] == before["head"] + 1
    _same_as_database(vault)
