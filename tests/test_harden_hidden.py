"""W12, issue 11 item 3, re-attacked: hiding techniques the corpus test did not have, and text a
reader does see that must stay quotable."""

from __future__ import annotations

from pathlib import Path

import pytest
from fpdf import FPDF
from fpdf.enums import TextMode

from affidavit.sources.css import MAX_RULES
from affidavit.sources.extract import extract
from tests.test_hidden_text import VISIBLE, _png, covered, secret, untouched

HIDDEN_TOO: dict[str, str] = {
    "custom property from :root": (
        "<style>:root{--h:none}.x{display:var(--h)}</style><p class=x>{s}</p>"
    ),
    "custom property inline": '<p style="--h:none;display:var(--h)">{s}</p>',
    "custom property, inherited colour": (
        '<div style="--c:#fff"><p style="color:var(--c)">{s}</p></div>'
    ),
    "var() fallback": '<p style="visibility:var(--unset, hidden)">{s}</p>',
    "var() inside a function": (
        '<div style="--z:0"><p style="transform:scale(var(--z))">{s}</p></div>'
    ),
    "var() of a var()": (
        "<style>:root{--a:none;--b:var(--a)}.x{display:var(--b)}</style><p class=x>{s}</p>"
    ),
    "screen hides, print shows": (
        "<style>.x{display:none}@media print{.x{display:block}}</style><p class=x>{s}</p>"
    ),
    "scale(0.01)": '<p style="transform:scale(0.01)">{s}</p>',
    "scale: 1%": '<p style="scale:1%">{s}</p>',
    "zoom 0.05": '<p style="zoom:0.05">{s}</p>',
    "text-indent 100% with overflow hidden": (
        '<h2 style="text-indent:100%;white-space:nowrap;overflow:hidden">{s}</h2>'
    ),
    "text-indent 9999px with overflow hidden": (
        '<h2 style="text-indent:9999px;overflow:hidden">{s}</h2>'
    ),
    "ruby fallback parenthesis": "<ruby>Kan<rp>{s}</rp><rt>kan</rt></ruby>",
}


@pytest.mark.parametrize("name", sorted(HIDDEN_TOO))
def test_more_hiding_techniques_are_flagged(name: str) -> None:
    hidden = secret("Html")
    page = f"<html><body><p>{VISIBLE}</p>" + HIDDEN_TOO[name].replace("{s}", hidden)
    # the fast rules alone, as a plain install without a browser has them (rendering is
    # tested in tests/test_hidden_rendered.py)
    result = extract((page + "</body></html>").encode(), "text/html", render=False)
    assert hidden in result.text
    assert covered(result, hidden), [f.to_json() for f in result.flags]
    assert untouched(result, VISIBLE)


SEEN: dict[str, str] = {
    "aria-hidden": '<p aria-hidden="true">{s}</p>',
    # issue 24: a reader opens a collapsed <details> (its summary shows): its text is seen
    "closed details": "<details><summary>More</summary><p>{s}</p></details>",
    "<style media=print>": '<style media="print">.x{display:none}</style><p class=x>{s}</p>',
    "<style media=print, speech>": (
        '<style media="print, speech">.x{display:none}</style><p class=x>{s}</p>'
    ),
    "custom property that shows": (
        "<style>:root{--d:block}.x{display:var(--d)}</style><p class=x>{s}</p>"
    ),
    "undefined var() without fallback": '<p style="display:var(--nothing)">{s}</p>',
    "scale(0.9)": '<p style="transform:scale(0.9)">{s}</p>',
    "zoom 1.5": '<p style="zoom:1.5">{s}</p>',
    "text-indent 2em": '<p style="text-indent:2em;overflow:hidden">{s}</p>',
    "text-indent 9999px without overflow hidden": '<p style="text-indent:40px">{s}</p>',
}


@pytest.mark.parametrize("name", sorted(SEEN))
def test_text_a_reader_sees_stays_quotable(name: str) -> None:
    shown = secret("Shown")
    page = f"<html><body><p>{VISIBLE}</p>" + SEEN[name].replace("{s}", shown)
    result = extract((page + "</body></html>").encode(), "text/html")
    assert untouched(result, shown), [f.to_json() for f in result.flags]
    assert untouched(result, VISIBLE)


@pytest.mark.parametrize("filler", ["p{color:#333}", "*{--a:1}"])
def test_filler_rules_cannot_push_a_hiding_rule_past_the_limit(filler: str) -> None:
    hidden = secret("Html")
    css = filler * (MAX_RULES + 1) + ".x{display:none}"
    page = f"<html><body><style>{css}</style><p>{VISIBLE}</p><p class=x>{hidden}</p></body></html>"
    result = extract(page.encode(), "text/html")
    assert covered(result, hidden), [f.to_json() for f in result.flags][:3]
    assert any(str(MAX_RULES) in f.detail for f in result.flags)


def test_filler_that_matches_nothing_costs_nothing_and_hides_nothing() -> None:
    hidden = secret("Html")
    css = ".nowhere{color:red}" * (MAX_RULES + 1) + ".x{display:none}"
    page = f"<html><body><style>{css}</style><p>{VISIBLE}</p><p class=x>{hidden}</p></body></html>"
    result = extract(page.encode(), "text/html")
    assert covered(result, hidden) and untouched(result, VISIBLE)


MARKDOWN_TOO: dict[str, str] = {
    "custom property from :root in markdown": (
        "<style>:root{--h:none}.q{display:var(--h)}</style>\n<p class=q>{s}</p>"
    ),
    "custom property from html in markdown": (
        "<style>html{--o:0}.q{opacity:var(--o)}</style>\n<p class=q>{s}</p>"
    ),
    "Obsidian comment": "Shown %%{s}%% shown.",
    "Obsidian comment over lines": "%%\n{s}\n%%",
}


@pytest.mark.parametrize("name", sorted(MARKDOWN_TOO))
def test_more_markdown_techniques_are_flagged(name: str) -> None:
    hidden = secret("Mark")
    body = MARKDOWN_TOO[name].replace("{s}", hidden)
    text = f"# Port Elling\n\n{VISIBLE}\n\n{body}\n\nThe pier is 212 metres long.\n"
    result = extract(text.encode(), "text/markdown")
    assert covered(result, hidden), [f.to_json() for f in result.flags]
    assert untouched(result, VISIBLE) and untouched(result, "The pier is 212 metres long.")


def test_a_lone_percent_sign_pair_hides_nothing_else() -> None:
    text = f"# Rates\n\nThe rate rose 5% in 1990.\n\n{VISIBLE}\n\nIt fell 3% later.\n"
    assert extract(text.encode(), "text/markdown").flags == []


@pytest.mark.parametrize("size", [2.0, 60.0], ids=["a speck", "a logo"])
def test_a_small_image_does_not_make_invisible_pdf_text_an_ocr_layer(
    tmp_path: Path, size: float
) -> None:
    """The OCR exception is for text laid over the scan that shows it: an image that covers a
    corner of the page (or sits unused in its resources) shows none of the invisible words."""
    pdf = FPDF()
    pdf.set_font("Helvetica", size=12)
    pdf.add_page()
    pdf.image(str(_png(tmp_path / "speck.png")), x=0, y=0, w=size, h=size)
    pdf.multi_cell(0, 8, VISIBLE, new_x="LMARGIN", new_y="NEXT")
    hidden = secret("Pdf")
    with pdf.local_context(text_mode=TextMode.INVISIBLE):
        pdf.multi_cell(0, 8, hidden)
    result = extract(bytes(pdf.output()), "application/pdf")
    assert covered(result, hidden), [f.to_json() for f in result.flags]
    assert untouched(result, VISIBLE)


def test_an_ocr_layer_drawn_before_its_scan_is_still_not_hidden(tmp_path: Path) -> None:
    pdf = FPDF()
    pdf.set_font("Helvetica", size=12)
    pdf.add_page()
    with pdf.local_context(text_mode=TextMode.INVISIBLE):
        pdf.multi_cell(0, 8, VISIBLE)
    pdf.image(str(_png(tmp_path / "scan.png")), x=0, y=0, w=210, h=297)
    assert extract(bytes(pdf.output()), "application/pdf").flags == []


def test_deep_nesting_is_neither_slow_nor_a_way_past_the_styles() -> None:
    """20,000 nested elements took minutes (building the tree is quadratic in depth), and an
    element past a depth cap would get its parent's visibility: such a page is all marked."""
    from affidavit.sources.extract import MAX_DEPTH

    hidden = secret("Deep")
    depth = 20_000
    page = (
        f"<html><body><p>{VISIBLE}</p>"
        + "<div>" * depth
        + f'<span style="display:none">{hidden}</span>'
        + "</div>" * depth
        + "</body></html>"
    )
    result = extract(page.encode(), "text/html")
    assert covered(result, hidden)
    assert any(f"more than {MAX_DEPTH} deep" in f.detail for f in result.flags)
    shallow = "<div>" * (MAX_DEPTH - 10) + f"<p>{hidden}</p>" + "</div>" * (MAX_DEPTH - 10)
    assert untouched(extract(shallow.encode(), "text/html"), hidden)
