"""Model-written text renders as itself (CommonMark, linkify, Obsidian) and reads back the same;
one-line fields refuse line breaks, controls and bidi overrides; frontmatter is YAML that parses
back to the values it was written from."""

from __future__ import annotations

import re
import sys
import unicodedata
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from affidavit.errors import PlanValidationError
from affidavit.handedits import parse_markdown, propose_hand_edits
from affidavit.inbox import approve, propose
from affidavit.plan.schema import parse_plan
from affidavit.store.render import escape_inline, expected_files, render_index, render_page
from affidavit.vault import Vault

from .conftest import add_text, claim, make_plan

MD = MarkdownIt("commonmark", {"linkify": True}).enable(["linkify", "table", "strikethrough"])
ATTACKS = [
    "https://evil.example/login",
    "Log in at http://evil.example/login?next=/wiki now.",
    "www.evil.com and evil.com/login and mail me@evil.com or mailto:me@evil.com",
    "//localhost/admin and ftp://files.example/x",
    "%% hidden comment %% and ==highlight== and $$x^2$$ and $y$",
    "[[secret-page]] and ![[embed.png]] and ^[inline note] and [^x] and [^x]: defined",
    "<script>alert(1)</script> <b>bold</b> &amp; &#65;",
    "*em* _em_ **strong** __strong__ `code` ``co`de`` ~~gone~~ ~x~",
    "# not a heading",
    "| a | b |",
    "- not a list",
    "1. not a list either",
    "> not a quote",
    "=== not a setext underline",
    "a \\ backslash and a trailing one \\",
    "#tag in the middle #tag2",
    "[link](https://evil.example) and <https://evil.example>",
    "text ^block-id",
]
OBSIDIAN = re.compile(
    r"%%|==|\$|\[\[|\^|#|<|\||`|\*|(?<![^\W_])_|_(?![^\W_])|~|\[|\]|[^\W\d_]:\S"
    r"|\w\.[^\W\d_](?![^\w-]|$)"
)
"""Syntax left unescaped: an "_" inside a word ("CHERRY_PICK_HEAD") opens or closes no emphasis
(CommonMark 6.2), and a dot before one letter ("e.g.") makes no domain a linkifier takes."""
ALPHABET = st.sampled_from(
    [*list("abcXYZ019 .:/@#%=$^[]()<>|*_~`!&\\-+{}\"'"), "http", "www.", "://", "é", "中"]
)


def inline_text(markdown: str) -> tuple[str, list[str]]:
    """The text markdown-it shows for one line of inline markdown, and the token types."""
    tokens = MD.parse(markdown)
    if not tokens:
        return "", []
    types = [t.type for t in tokens]
    children = [c for t in tokens if t.children for c in t.children]
    return "".join(c.content for c in children), types + [c.type for c in children]


@pytest.mark.parametrize("text", ATTACKS)
def test_escaped_text_renders_as_itself(text: str) -> None:
    escaped = escape_inline(text)
    shown, types = inline_text(escaped)
    assert shown == " ".join(text.split())
    assert types == ["paragraph_open", "inline", "paragraph_close", "text"], (escaped, types)
    assert not OBSIDIAN.search(re.sub(r"\\.", " ", escaped)), escaped


@settings(max_examples=300, deadline=None, database=None)
@given(st.lists(ALPHABET, min_size=1, max_size=40).map("".join))
def test_any_text_renders_as_itself(text: str) -> None:
    if not text.strip():
        return
    escaped = escape_inline(text)
    shown, types = inline_text(escaped)
    assert shown == " ".join(text.split()), escaped
    assert set(types) <= {"paragraph_open", "inline", "paragraph_close", "text"}, (escaped, types)
    assert not OBSIDIAN.search(re.sub(r"\\.", " ", escaped)), escaped


# --- one-line fields ----------------------------------------------------------------------------

REFUSED = sorted(
    {
        chr(c)
        for c in range(sys.maxunicode + 1)
        if unicodedata.category(chr(c)) in ("Cc", "Zl", "Zp")
    }
    | {chr(c) for c in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]}
)


def _plan(title: str = "Title", section: str = "Overview", text: str = "A claim text.") -> Any:
    page = {
        "op": "create_page",
        "slug": "page",
        "title": title,
        "summary": "A summary.",
        "section": section,
        "claims": [claim(text, "a" * 12, "a quote of the source")],
    }
    retract = {"op": "retract_claim", "claim": "c-" + "0" * 16, "reason": "because"}
    return {"nonce": "n" * 16, "summary": "ok", "operations": [page, retract]}


def test_the_reported_nel_injection_is_refused() -> None:
    with pytest.raises(PlanValidationError, match="title"):
        parse_plan(_plan(title="James Douglass\x85---\x85injected: true"))


@pytest.mark.parametrize("char", REFUSED, ids=lambda c: f"U+{ord(c):04X}")
def test_every_line_break_control_and_bidi_override_is_refused(char: str) -> None:
    for field in ("title", "section", "text"):
        with pytest.raises(PlanValidationError, match=field):
            parse_plan(_plan(**{field: f"Before{char}after"}))
    bad = _plan()
    bad["operations"][1]["reason"] = f"because{char}"
    bad["summary"] = "fine"
    with pytest.raises(PlanValidationError, match="reason"):
        parse_plan(bad)


def test_ordinary_text_stays_valid() -> None:
    parse_plan(_plan(title="Ærøskøbing — “quotes”, 中文, emoji 🎉, tab-free"))


# --- rendered pages -----------------------------------------------------------------------------


@pytest.fixture
def page(vault: Vault) -> str:
    source = add_text(vault, "dams.md", "The dam was built in 1936 by the river authority.\n")
    op = {
        "op": "create_page",
        "slug": "dams",
        "title": "Dams",
        "summary": "Dams.",
        "claims": [claim("The dam was built in 1936.", source, "The dam was built in 1936")],
    }
    plan = propose(vault, make_plan(vault, op), "t", "t")
    approve(vault, plan.plan_id, None, "t")
    return "dams"


def frontmatter_of(markdown: str) -> dict[str, Any]:
    assert markdown.startswith("---\n")
    data = yaml.safe_load(markdown[4 : markdown.index("\n---\n", 4)])
    assert isinstance(data, dict)
    return data


def test_frontmatter_parses_back_to_the_page(vault: Vault, page: str) -> None:
    odd = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=60)

    @settings(
        max_examples=150,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(odd, odd)
    def check(title: str, summary: str) -> None:
        vault.db.execute(
            "UPDATE pages SET title = ?, summary = ? WHERE slug = ?", (title, summary, page)
        )
        markdown = render_page(vault.db, page)
        assert markdown is not None
        meta = frontmatter_of(markdown)
        assert meta["title"] == title and meta["summary"] == summary
        assert meta["slug"] == page and meta["claims"] == 1 and meta["generator"] == "affidavit"
        row = vault.db.execute("SELECT created_at, updated_at FROM pages").fetchone()
        assert (meta["created"], meta["updated"]) == (row[0], row[1])
        assert parse_markdown(markdown).meta["title"] == title

    check()


def test_a_rendered_page_reads_back_as_the_same_claims(vault: Vault, page: str) -> None:
    """Hostile text in the database (claim, heading, title, summary) renders inert, and
    doctor's reader gets back exactly that text: a page re-saved with trailing spaces is only a
    formatting change, not new, moved or deleted claims."""
    vault.db.execute(
        "UPDATE pages SET title = ?, summary = ?", ("[[Evil]] https://evil.example", "==x== %%y%%")
    )
    vault.db.execute(
        "UPDATE claims SET text = ?, section = ?", (" ".join(ATTACKS), "# <b>Sec</b> | x")
    )
    vault.db.commit()
    for relpath, text in expected_files(vault.db).items():  # the files as the door would write them
        (vault.root / relpath).write_text(text)
    markdown = expected_files(vault.db)["wiki/dams.md"]
    body = markdown[markdown.index("\n---\n") + 5 : markdown.index("\n[^1]: ")]
    tokens = MD.parse(body)  # the title, the summary, the heading, the claim: no footnotes
    kinds = {c.type for t in tokens if t.children for c in t.children}
    assert kinds == {"text", "em_open", "em_close"}  # the summary's own emphasis, nothing else
    shown = ["".join(c.content for c in t.children or []) for t in tokens if t.type == "inline"]
    assert shown == [
        "[[Evil]] https://evil.example",
        "==x== %%y%%",
        "# <b>Sec</b> | x",
        " ".join(" ".join(ATTACKS).split()) + "[^1]",
    ]
    doc = parse_markdown(markdown)
    assert doc.title == "[[Evil]] https://evil.example"
    path = Path(vault.wiki_dir / "dams.md")
    path.write_text(markdown.replace("\n\n", "  \n\n", 3))
    results = propose_hand_edits(vault)
    assert len(results) == 1 and results[0].status == "nothing", [r.message for r in results]
    assert [u.reason for u in results[0].unconverted] == [
        "the file differs from the rendered page only in what the wiki doesn't keep (formatting, "
        "case, emphasis, block ids); restore the file with `git -C VAULT checkout -- wiki/dams.md`"
    ]


def test_titles_in_link_text_link_only_to_their_page(vault: Vault, page: str) -> None:
    vault.db.execute("UPDATE pages SET title = ?", ("https://evil.example/login [x](http://y.z)",))
    index = render_index(vault.db)
    line = next(ln for ln in index.split("\n") if "dams.md" in ln)
    tokens = [c for t in MD.parse(line) if t.children for c in t.children]
    assert [t.attrs.get("href") for t in tokens if t.type == "link_open"] == ["dams.md"]
    shown = "".join(t.content for t in tokens if t.type == "text")
    assert shown.startswith("https://evil.example/login [x](http://y.z) — ")


def test_the_extractive_engine_leaves_out_sentences_a_line_field_refuses(
    vault: Vault, tmp_path: Path
) -> None:
    from click.testing import CliRunner

    from affidavit.cli import main

    doc = tmp_path / "harbour.md"
    doc.write_text(
        "# Harbour\n\nThe harbour was dredged in 1921 by the port authority of the town.\n"
        "The pier was extended in 1930 \u202eby the council\u202c to reach deeper water.\n"
        "The lighthouse on the pier was first lit in 1932 and still works today.\n"
    )
    result = CliRunner().invoke(main, ["--vault", str(vault.root), "ingest", str(doc), "--yes"])
    assert result.exit_code == 0, result.output
    texts = [r[0] for r in vault.db.execute("SELECT text FROM claims WHERE status = 'active'")]
    assert any("1921" in t for t in texts)
    assert not any("\u202e" in t for t in texts)
