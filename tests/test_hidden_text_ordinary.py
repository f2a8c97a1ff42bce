"""The hidden-text checks leave ordinary documents alone: real HTML pages (the Python docs Debian
ships, as `bench/pydocs_corpus.py` uses them), real PDFs, this project's own markdown docs. And
what is code in markdown is not hidden, while a backtick that only looks like code hides nothing
from the checks.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from affidavit.sources.css_calc import evaluate
from affidavit.sources.extract import Extracted, extract
from affidavit.sources.render_html import available
from affidavit.sources.sentences import number_sentences

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from debian_files import debian_path  # noqa: E402
from pydocs_corpus import DOCS, HTML  # noqa: E402

UNSEEN = ("hidden_styling", "hidden", "struck")


def rendering_html() -> bool:
    return available() == ""


PAGES = [*HTML, "library/functools", "library/sqlite3", "tutorial/controlflow", "faq/general"]
PDFS = [
    debian_path("/usr/share/doc/libtasn1-doc/libtasn1.pdf"),
    debian_path("/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf"),
]


MAX_FLAGGED = 0.01
"""Visible sentences of real documents flagged at most (issue 23): the renderer may disagree
with a reader on a glyph cut at the page's edge, never on prose."""


def _flagged_share(result: Extracted) -> tuple[float, list[str]]:
    """The share of the text's sentences that overlap an unseen-text flag, and those sentences."""
    marks = [(f.start, f.end) for f in result.flags if f.kind in UNSEEN]
    sentences = number_sentences(result.text)
    hit = [
        result.text[s.start : s.end]
        for s in sentences
        if any(a < s.end and s.start < max(b, a + 1) for a, b in marks)
    ]
    return len(hit) / max(len(sentences), 1), hit


@pytest.mark.skipif(
    not DOCS.is_dir(), reason="python3.11-doc is missing: run scripts/setup_testdata.sh"
)
@pytest.mark.parametrize("page", PAGES)
def test_python_docs_pages_have_no_hidden_text(page: str) -> None:
    result = extract((DOCS / f"{page}.html").read_bytes(), "text/html", render=False)
    assert len(result.text) > 2000
    assert [f.to_json() for f in result.flags if f.kind in UNSEEN] == []


@pytest.mark.skipif(
    not DOCS.is_dir() or not rendering_html(), reason="python3.11-doc or chromium is missing"
)
def test_python_docs_pages_rendered_keep_their_sentences() -> None:
    """Rendered by chromium, the Python docs (a few long pages) keep at most 1 % of their
    sentences flagged (today: none)."""
    for page in ["library/functools", "tutorial/controlflow", "faq/general"]:
        result = extract((DOCS / f"{page}.html").read_bytes(), "text/html")
        assert result.text_map["visibility"]["checked"] == "rendered"
        share, hit = _flagged_share(result)
        assert share <= MAX_FLAGGED, (page, hit[:5])


@pytest.mark.parametrize("path", [p for p in PDFS if p.exists()], ids=lambda p: p.name)
def test_real_pdfs_keep_their_sentences(path: Path) -> None:
    result = extract(path.read_bytes(), "application/pdf")
    assert result.text_map["visibility"]["checked"] == "rendered"
    share, hit = _flagged_share(result)
    assert share <= MAX_FLAGGED, hit[:5]
    rules = extract(path.read_bytes(), "application/pdf", render=False)
    assert [f.to_json() for f in rules.flags if f.kind in UNSEEN] == []


@pytest.mark.parametrize("doc", sorted((ROOT / "docs").glob("*.md")), ids=lambda p: p.name)
def test_this_projects_markdown_has_no_tilde_strikethrough(doc: Path) -> None:
    """docs/ is full of "~45 tokens/s", "(~0.1 s)" and `~~...~~` in code: none of it strikes."""
    result = extract(doc.read_bytes(), "text/markdown")
    struck = [f.to_json() for f in result.flags if f.detail.startswith("struck-through text (~")]
    assert struck == []


@pytest.mark.parametrize(
    ("text", "hidden"),
    [
        # a backtick inside an HTML tag opens no code span (the tag comes first)
        ('x <b title="`">![Zorvath alt](a.png) `', "Zorvath alt"),
        # nor does one that can't close in the same paragraph
        ("a `\n\n[//]: # (Zorvath comment)\n\n` b", "Zorvath comment"),
        # nor an escaped one
        ("a \\`~Zorvath struck~` b", "Zorvath struck"),
    ],
)
def test_what_only_looks_like_code_is_still_checked(text: str, hidden: str) -> None:
    result = extract(text.encode(), "text/markdown")
    start = text.index(hidden)
    assert any(f.start <= start and start + len(hidden) <= f.end for f in result.flags), [
        f.to_json() for f in result.flags
    ]


def test_code_in_markdown_hides_nothing() -> None:
    text = "Use `~x~`, `![a](b)` and `%%c%%` as written.\n\n```\n~y~ ![d](e)\n```\n"
    assert extract(text.encode(), "text/markdown").flags == []


def _px(value: str) -> float | None:
    import tinycss2

    from affidavit.sources.css_values import _length

    [token] = [t for t in tinycss2.parse_component_value_list(value) if t.type != "whitespace"]
    return evaluate(token, lambda t: _length(t, 16.0, 100.0))


@pytest.mark.parametrize(
    ("value", "px"),
    [
        ("calc(1px + 0.5px)", 1.5),
        ("calc(0.1em + 0.2px)", 1.8),
        ("calc((2px - 1px) * 2)", 2.0),
        ("calc(2 * 1px / 4)", 0.5),
        ("min(1px, 3em)", 1.0),
        ("max(1px, 0.5em)", 8.0),
        ("clamp(0px, 1vw, 2px)", 2.0),
        ("calc(50% - 10px)", 40.0),
        ("calc(-100vw - 10px)", -1290.0),
        ("calc(1px * 1px)", None),  # not a length
        ("calc(1px / 0)", None),
        ("calc(1px + 2)", None),
        ("calc(3)", None),
        ("calc(1px + foo)", None),
        ("calc(0)", 0.0),
    ],
)
def test_css_math_is_evaluated_or_unknown(value: str, px: float | None) -> None:
    got = _px(value)
    assert got == pytest.approx(px) if px is not None else got is None
