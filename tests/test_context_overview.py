"""Issue 24 item 5: context.md is an overview a newcomer reads first — what the wiki covers and
its main topics (pages whose claims cite the most sources) above the entries, each entry a
cited claim. The head is navigation written by the host from the database: counts and links."""

from __future__ import annotations

import re
from typing import Any

from affidavit.doctor import run_doctor
from affidavit.inbox import approve, propose
from affidavit.store.render import render_context
from affidavit.vault import Vault

from .conftest import add_text, claim, make_plan

ALPHA = "Tin is a chemical element. Tin is soft and silvery. Copper is a chemical element too.\n"
BETA = "Tin was mined in Cornwall for centuries. Copper was mined in Cornwall as well.\n"


def _apply(vault: Vault, *ops: dict[str, Any]) -> None:
    proposal = propose(vault, make_plan(vault, *ops), "tester", "test")
    result = approve(vault, proposal.plan_id, None, "tester")
    assert result.applied, result.message


def _page(slug: str, title: str, category: str, *claims: dict[str, Any]) -> dict[str, Any]:
    return {
        "op": "create_page",
        "slug": slug,
        "title": title,
        "summary": claims[0]["text"],
        "category": category,
        "claims": list(claims),
    }


def _head(vault: Vault) -> list[str]:
    text = (vault.wiki_dir / "context.md").read_text()
    return [line for line in text.splitlines() if line.startswith("**")]


def _link(page: str, to: str) -> dict[str, Any]:
    return {"op": "link_pages", "page": page, "to": to}


def test_main_topics_are_the_pages_the_most_sources_link_to(vault: Vault) -> None:
    a = add_text(vault, "alpha.md", ALPHA)
    b = add_text(vault, "beta.md", BETA)
    tin_a = claim("Tin is a chemical element.", a, "Tin is a chemical element")
    tin_b = claim("Tin was mined in Cornwall for centuries.", b, "Tin was mined in Cornwall")
    copper = claim("Copper is a chemical element too.", a, "Copper is a chemical element too")
    soft = claim("Tin is soft and silvery.", a, "Tin is soft and silvery")
    _apply(
        vault,
        _page("alpha", "Alpha", "sources", tin_a, soft, copper),
        _page("beta", "Beta", "sources", tin_b),
        _page("copper", "Copper", "topics", copper),
        _page("tin", "Tin", "topics", tin_a),
        {"op": "add_claims", "page": "tin", "section": "Beta", "claims": [tin_b]},
        _link("alpha", "copper"),
        _link("alpha", "tin"),
        _link("beta", "tin"),
        _link("copper", "tin"),  # a topic's link is no source's
        _link("tin", "alpha"),  # a source's own page is no topic
        {"op": "update_context", "entries": [tin_a]},
    )
    covers, topics = _head(vault)
    assert covers.startswith("**What it covers:** 4 pages — 2 in sources, 2 in topics"), covers
    assert "[Index](index.md)" in covers
    # Tin is linked from two sources' pages; Copper from one: no subject they share
    assert topics.endswith("[Tin](tin.md) (2 sources)"), topics
    # the entry is still a cited claim, below the head
    text = (vault.wiki_dir / "context.md").read_text()
    assert text.index("**Main topics**") < text.index("Tin is a chemical element.[^1]")
    assert run_doctor(vault).clean


def test_a_batch_without_a_context_entry_still_updates_the_head(vault: Vault) -> None:
    a = add_text(vault, "alpha.md", ALPHA)
    b = add_text(vault, "beta.md", BETA)
    tin_a = claim("Tin is a chemical element.", a, "Tin is a chemical element")
    _apply(
        vault,
        _page("alpha", "Alpha", "sources", tin_a),
        _page("tin", "Tin", "topics", tin_a),
        _link("alpha", "tin"),
        {"op": "update_context", "entries": [tin_a]},
    )
    assert "none yet" in _head(vault)[1]
    tin_b = claim("Tin was mined in Cornwall for centuries.", b, "Tin was mined in Cornwall")
    _apply(vault, _page("beta", "Beta", "sources", tin_b), _link("beta", "tin"))
    assert "[Tin](tin.md) (2 sources)" in _head(vault)[1]
    on_disk = (vault.wiki_dir / "context.md").read_text()
    assert on_disk == render_context(vault.db)
    assert not vault.git.changed(["wiki/context.md"])  # committed with the batch
    assert run_doctor(vault).clean


def test_a_hand_edited_context_is_never_overwritten_for_its_head(vault: Vault) -> None:
    """An attacker's (or a careless) edit of context.md is the doctor's to turn into a proposal:
    a batch that only moves the head leaves the edited file alone instead of erasing it, and
    is not blocked by it."""
    a = add_text(vault, "alpha.md", ALPHA)
    b = add_text(vault, "beta.md", BETA)
    tin_a = claim("Tin is a chemical element.", a, "Tin is a chemical element")
    _apply(
        vault,
        _page("alpha", "Alpha", "sources", tin_a),
        _page("tin", "Tin", "topics", tin_a),
        _link("alpha", "tin"),
        {"op": "update_context", "entries": [tin_a]},
    )
    path = vault.wiki_dir / "context.md"
    edited = path.read_text() + "\nTin is the best metal.\n"
    path.write_text(edited)
    tin_b = claim("Tin was mined in Cornwall for centuries.", b, "Tin was mined in Cornwall")
    _apply(vault, _page("beta", "Beta", "sources", tin_b), _link("beta", "tin"))
    assert path.read_text() == edited
    assert not run_doctor(vault).clean  # the drift is reported, not swept away


def test_page_titles_in_the_head_are_escaped_link_text(vault: Vault) -> None:
    """A title is shown as link text: markdown in it (a link of its own, an image, HTML) can't
    make the head link anywhere else."""
    a = add_text(vault, "alpha.md", "Tin [x](https://evil.example) is a chemical element.\n")
    quote = "Tin [x](https://evil.example) is a chemical element"
    tin = claim("Tin [x](https://evil.example) is a chemical element.", a, quote)
    _apply(
        vault,
        _page("alpha", "Alpha", "sources", tin),
        _page("beta", "Beta", "sources", tin),
        _page("tin", "Tin [x](https://evil.example)", "topics", tin),
        _link("alpha", "tin"),
        _link("beta", "tin"),
    )
    (_, topics) = _head(vault)
    assert "Tin \\[x\\](https://evil.example)" in topics, topics  # brackets escaped
    assert re.findall(r"(?<!\\)\]\(([^)]*)\)", topics) == ["tin.md"], topics
    assert "(tin.md) (2 sources)" in topics
