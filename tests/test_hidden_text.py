"""Hidden and struck-through text never becomes clean evidence (W12, issue 11 item 3, issue 10).

Every technique a page can use to keep words from its reader is flagged at extraction, the
extractive engine quotes none of it, and a model that quotes it gets its plan quarantined with a
reason naming the technique; the visible text of the same documents still becomes evidence.
"""

from __future__ import annotations

import io
import json
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fpdf import FPDF
from fpdf.enums import TextMode

from affidavit.cli import main
from affidavit.extractive.engine import propose_plan
from affidavit.inbox import list_plans
from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.base import IngestTask, ModelRequest
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.providers.scripted import ScriptedProvider
from affidavit.sources.extract import Extracted, extract
from affidavit.vault import Vault

UNSEEN = ("hidden_styling", "hidden", "struck", "html_comment")
VISIBLE = "The harbour wall of Port Elling was rebuilt in 1904 after a great storm."


def secret(name: str) -> str:
    """A hidden sentence a summariser would love: names, numbers, a year; its marker is unique."""
    return f"The archive of Zorvath {name} holds 4512 charts drawn by Admiral Quell in 1887."


def covered(result: Extracted, sentence: str) -> bool:
    """Is every character of ``sentence`` (where it appears in the text) under an unseen flag?"""
    start = result.text.index(sentence)
    marks = [(f.start, f.end) for f in result.flags if f.kind in UNSEEN]
    return all(any(a <= i < b for a, b in marks) for i in range(start, start + len(sentence)))


def untouched(result: Extracted, sentence: str) -> bool:
    start = result.text.index(sentence)
    end = start + len(sentence)
    return not any(f.start < end and start < max(f.end, f.start + 1) for f in result.flags)


HTML_TECHNIQUES: dict[str, str] = {
    "class rule in <style>": "<style>.x{display:none}</style><p class=x>{s}</p>",
    "id rule, !important beats inline": (
        '<style>#k{visibility:hidden!important}</style><p id=k style="visibility:visible">{s}</p>'
    ),
    "rule after the element": "<p class=late>{s}</p><style>p.late{display:none}</style>",
    "sibling selector": "<style>h2+p{display:none}</style><h2>Notes</h2><p>{s}</p>",
    "nested CSS rule": "<style>.a{ & .b{display:none} }</style><div class=a><p class=b>{s}</p></div>",
    "rule inside @media screen": "<style>@media screen{.m{display:none}}</style><p class=m>{s}</p>",
    "css escape display:n\\one": '<p style="display:n\\one">{s}</p>',
    "escaped property name": "<style>.e{disp\\lay:none}</style><p class=e>{s}</p>",
    "color equals background": '<p style="color:#fff">{s}</p>',
    "color equals ancestor background": (
        '<div style="background-color:#123456"><p><span style="color:#123456">{s}</span></p></div>'
    ),
    "transparent colour": '<p style="color:rgba(0,0,0,0)">{s}</p>',
    "<font color> on white": '<font color="#ffffff">{s}</font>',
    "bgcolor attribute": '<table><tr><td bgcolor="black"><font color="#000">{s}</font></td></tr></table>',
    "font-size 2px": '<p style="font-size:2px">{s}</p>',
    "font-size 1pt": '<p style="font-size:1pt">{s}</p>',
    "font-size em under a tiny parent": (
        '<div style="font-size:1px"><p style="font-size:1.5em">{s}</p></div>'
    ),
    "font shorthand 0/0": '<p style="font:0/0 a">{s}</p>',
    "height 0 overflow hidden": '<div style="height:0;overflow:hidden"><p>{s}</p></div>',
    "sr-only 1px box": (
        "<style>.sr{position:absolute;width:1px;height:1px;overflow:hidden;"
        "clip:rect(0,0,0,0)}</style><span class=sr>{s}</span>"
    ),
    "clip rect": '<div style="position:absolute;clip:rect(0 0 0 0)">{s}</div>',
    "clip-path inset": '<div style="clip-path:inset(50%)">{s}</div>',
    "clip-path circle 0": '<div style="clip-path:circle(0)">{s}</div>',
    "transform scale(0)": '<div style="transform:scale(0)">{s}</div>',
    "transform scaleY(0)": '<div style="transform:rotate(3deg) scaleY(0)">{s}</div>',
    "off-screen left": '<div style="position:absolute;left:-9999px">{s}</div>',
    "off-screen translate": '<div style="transform:translateX(-200vw)">{s}</div>',
    "text-indent": '<h2 style="text-indent:-9999px">{s}</h2>',
    "opacity 0 by class": "<style>.o{opacity:0}</style><p class=o>{s}</p>",
    "opacity compounded": (
        '<div style="opacity:.3"><div style="opacity:.3"><p style="opacity:.5">{s}</p></div></div>'
    ),
    "visibility hidden": '<div style="visibility:hidden"><p>{s}</p></div>',
    "hidden attribute": "<div hidden><p>{s}</p></div>",
    "display:none inline": '<span style="display:none">{s}</span>',
    "noscript": "<noscript>{s}</noscript>",
    "closed dialog": "<dialog><p>{s}</p></dialog>",
    "svg text": '<svg width="10" height="10"><text x="0" y="5">{s}</text></svg>',
    "canvas fallback": "<canvas>{s}</canvas>",
    "del": "<p><del>{s}</del></p>",
    "s": "<p><s>{s}</s></p>",
    "strike": "<p><strike>{s}</strike></p>",
    "line-through by class": "<style>.gone{text-decoration:line-through}</style><p class=gone>{s}</p>",
    # round 6: what the last hardening round left open
    "font-size calc() to 1.5px": '<p style="font-size:calc(1px + 0.5px)">{s}</p>',
    "font-size calc() of em": '<p style="font-size:calc(0.1em + 0.2px)">{s}</p>',
    "font-size calc() nested": '<p style="font-size:calc((2px - 1px) * 2)">{s}</p>',
    "font-size min()": '<p style="font-size:min(1px, 3em)">{s}</p>',
    "font-size clamp()": '<p style="font-size:clamp(0px, 0.1vw, 2px)">{s}</p>',
    "font-size calc() by var()": (
        "<style>:root{--t:0.5px}.v{font-size:calc(var(--t) * 2)}</style><p class=v>{s}</p>"
    ),
    "mask transparent gradient": (
        '<div style="mask:linear-gradient(transparent, transparent)">{s}</div>'
    ),
    "-webkit-mask-image by class": (
        "<style>.mk{-webkit-mask-image:linear-gradient(rgba(0,0,0,0),rgba(0,0,0,0))}</style>"
        "<p class=mk>{s}</p>"
    ),
    "mask luminance black": '<div style="mask:linear-gradient(#000,#000) luminance">{s}</div>',
    "mask-size 0": '<div style="mask-image:url(m.png);mask-size:0 0">{s}</div>',
    "off-screen left -200vw": '<div style="position:absolute;left:-200vw">{s}</div>',
    "off-screen left 200vw": '<div style="position:absolute;left:200vw">{s}</div>',
    "off-screen right 200vw": '<div style="position:absolute;right:200vw">{s}</div>',
    "off-screen bottom 200vh": '<div style="position:absolute;bottom:200vh">{s}</div>',
    "fixed below the viewport": '<div style="position:fixed;top:150vh">{s}</div>',
    "off-screen left calc()": '<div style="position:absolute;left:calc(-100vw - 10px)">{s}</div>',
    "margin-left 150vw": '<p style="margin-left:150vw">{s}</p>',
    "text-indent 9999px": '<h2 style="text-indent:9999px">{s}</h2>',
    "translateX 200vw": '<div style="transform:translateX(200vw)">{s}</div>',
    "filter opacity(0)": '<p style="filter:opacity(0)">{s}</p>',
    "filter list with opacity(0%)": '<p style="filter:blur(0px) opacity(0%)">{s}</p>',
    "filter opacity by class": "<style>.f{filter:opacity(5%)}</style><p class=f>{s}</p>",
}


@pytest.mark.parametrize("name", sorted(HTML_TECHNIQUES))
def test_every_html_technique_is_flagged(name: str) -> None:
    hidden = secret("Html")
    page = f"<html><body><p>{VISIBLE}</p>" + HTML_TECHNIQUES[name].replace("{s}", hidden)
    # the fast rules alone, as a plain install without a browser has them (rendering is
    # tested in tests/test_hidden_rendered.py)
    result = extract((page + "</body></html>").encode(), "text/html", render=False)
    assert hidden in result.text  # kept, so offsets and the reviewer see what the page holds
    assert covered(result, hidden), [f.to_json() for f in result.flags]
    assert untouched(result, VISIBLE)


def test_the_flag_names_the_technique_and_the_rule() -> None:
    page = "<style>.note{display:none}</style><p>Shown.</p>\n<p class=note>Hidden words.</p>"
    (flag,) = extract(page.encode(), "text/html").flags
    assert flag.kind == "hidden_styling"
    assert flag.detail == (
        "text hidden by CSS (display:none via .note in a <style> rule) in <p> at line 2 of the HTML"
    )


ORDINARY = f"""<!doctype html><html><head><style>
body {{ color: #333; background: #fff; font-family: Georgia, serif; font-size: 12px }}
.menu {{ display: none }} .menu.open, nav:hover .menu {{ display: block }}
p.lead {{ font-size: 1.2em; color: #111111 }} .muted {{ color: #777 }}
.card {{ background-color: #222; color: #eee; height: auto; overflow: hidden }}
.hero {{ background: url(hero.jpg) #fff; color: #fff }}
.slide {{ transform: scale(1.02) translateX(10px); opacity: .9 }}
@media print {{ .screen-only {{ display: none }} }}
h1 {{ font: bold 2em/1.2 sans-serif; text-indent: 0 }}
.fancy {{ background: linear-gradient(red, blue); -webkit-background-clip: text;
          -webkit-text-fill-color: transparent }}
.big {{ font-size: calc(1em + 2px) }} .fit {{ font-size: clamp(12px, 2vw, 20px) }}
.fade {{ mask-image: linear-gradient(black 80%, transparent) }}
nav li {{ position: relative }} nav .sub {{ position: absolute; left: 100%; top: 0 }}
.soft {{ filter: opacity(.9) blur(1px) }} .shift {{ transform: translateX(20vw) }}
.wide {{ margin-left: 2vw; text-indent: 2em }}
</style></head><body>
<h1>Port Elling</h1>
<p class="lead">{VISIBLE}</p>
<div class="menu open">The ferry leaves the north quay at nine every morning.</div>
<p class="muted">Fishing boats land their catch at the north quay.</p>
<div class="card"><p>The lighthouse was painted red and white in 1921.</p></div>
<div class="hero"><p>The harbour festival is held every August.</p></div>
<div class="slide"><p>The old customs house is now a museum.</p></div>
<p class="screen-only">Visitors may climb the tower on Sundays.</p>
<p class="fancy">The bay freezes over in hard winters.</p>
<p style="display:block;font-size:12px;color:#333">The pier is 212 metres long.</p>
<ins>The new breakwater opened in 2011.</ins>
<p class="big">The tide rises four metres at the spring tides.</p>
<p class="fit">The harbour board meets on the first Monday.</p>
<div class="fade"><p>The quay was widened in 1962.</p></div>
<nav><ul><li>Harbour<ul class="sub"><li>Tide tables for the year</li></ul></li></ul></nav>
<p class="soft">The fish market opens at six.</p>
<p class="shift">The ferry to the islands runs in summer.</p>
<p class="wide">The old fort guards the harbour mouth.</p>
</body></html>"""


def test_ordinary_styled_html_has_no_flags() -> None:
    result = extract(ORDINARY.encode(), "text/html")
    assert result.flags == []


MARKDOWN_TECHNIQUES: dict[str, str] = {
    "[//]: # comment": "[//]: # ({s})",
    "[comment]: <> comment": "[comment]: <> ({s})",
    "link reference title": '[ref]: https://example.org/a "{s}"',
    "image alt text": "![{s}](tower.png)",
    "image title": '![Tower](tower.png "{s}")',
    "reference image": "![{s}][ref]\n\n[ref]: tower.png",
    "inline link title": 'Read [the notes](https://example.org "{s}") today.',
    "div hidden": "<div hidden>{s}</div>",
    "span display:none": '<span style="display:none">{s}</span>',
    "style rule in markdown": "<style>.q{display:none}</style>\n<p class=q>{s}</p>",
    "img alt in html": '<img src="t.png" alt="{s}">',
    "html comment": "<!-- {s} -->",
    "strikethrough": "The quay is ~~{s}~~ busy.",
    "single-tilde strikethrough": "The quay is ~{s}~ busy.",
    "single-tilde strikethrough, escaped tilde inside": "It was ~{s} \\~ gone~ then.",
    "del in markdown": "<del>{s}</del>",
}


@pytest.mark.parametrize("name", sorted(MARKDOWN_TECHNIQUES))
def test_every_markdown_technique_is_flagged(name: str) -> None:
    hidden = secret("Mark")
    body = MARKDOWN_TECHNIQUES[name].replace("{s}", hidden)
    text = f"# Port Elling\n\n{VISIBLE}\n\n{body}\n\nThe pier is 212 metres long.\n"
    result = extract(text.encode(), "text/markdown")
    assert result.text == text
    assert covered(result, hidden), [f.to_json() for f in result.flags]
    assert untouched(result, VISIBLE) and untouched(result, "The pier is 212 metres long.")


def test_ordinary_markdown_has_no_flags() -> None:
    text = (
        "# Port Elling\n\n"
        f"{VISIBLE} See [the history](https://example.org/history) and **the map**.\n\n"
        "- The pier is ~212 metres long, and ~5 minutes from town.\n"
        "- Charts live in ~/charts and ~/maps; the trip takes ~2 hours, ~3 in winter.\n"
        "- Write `~x~` in code, and ```~y~``` too.\n"
        "- Footnotes stay visible.[^1]\n\n"
        "[^1]: The harbour master keeps the records.\n"
    )
    assert extract(text.encode(), "text/markdown").flags == []


def _pdf(lines: list[tuple[str, str]]) -> bytes:
    """A one-page PDF: ``(how, text)`` lines drawn normally, invisibly, white, tiny or off-page."""
    pdf = FPDF()
    pdf.set_font("Helvetica", size=12)
    pdf.add_page()
    flow: dict[str, Any] = {"new_x": "LMARGIN", "new_y": "NEXT"}
    for how, text in lines:
        if how == "visible":
            pdf.multi_cell(0, 8, text, **flow)
        elif how == "render mode 3":
            with pdf.local_context(text_mode=TextMode.INVISIBLE):
                pdf.multi_cell(0, 8, text, **flow)
        elif how == "white":
            with pdf.local_context(text_color=(255, 255, 255)):
                pdf.multi_cell(0, 8, text, **flow)
        elif how == "1pt":
            with pdf.local_context(font_size_pt=1):
                pdf.multi_cell(0, 2, text, **flow)
        elif how == "left of the page":
            pdf.text(-400, 60, text)
        elif how == "below the page":
            pdf.text(20, 420, text)
        elif how == "clipped away":  # drawn where the clipping rectangle lets nothing through
            with pdf.rect_clip(x=150, y=270, w=20, h=10):
                pdf.multi_cell(0, 8, text, **flow)
        elif how == "clip of no area":
            with pdf.rect_clip(x=20, y=pdf.get_y(), w=0, h=0):
                pdf.multi_cell(0, 8, text, **flow)
        elif how == "under an image":  # an opaque picture painted over the words
            top = pdf.get_y()
            pdf.multi_cell(0, 8, text, **flow)
            pdf.image(io.BytesIO(_png_bytes()), x=5, y=top - 1, w=200, h=pdf.get_y() - top + 2)
        elif how == "an image beside":  # ordinary: a picture next to the text, not over it
            pdf.image(io.BytesIO(_png_bytes()), x=150, y=250, w=40, h=30)
            pdf.multi_cell(0, 8, text, **flow)
        elif how == "clipped inside":  # ordinary: text inside its clipping rectangle
            with pdf.rect_clip(x=5, y=pdf.get_y() - 2, w=200, h=30):
                pdf.multi_cell(0, 8, text, **flow)
    return bytes(pdf.output())


PDF_TECHNIQUES = (
    "render mode 3",
    "white",
    "1pt",
    "left of the page",
    "below the page",
    "clipped away",
    "clip of no area",
    "under an image",
)


@pytest.mark.parametrize("how", PDF_TECHNIQUES)
def test_every_pdf_technique_is_flagged(how: str) -> None:
    hidden = secret("Pdf")
    after = "The pier is 212 metres long."
    result = extract(
        _pdf([("visible", VISIBLE), (how, hidden), ("visible", after)]), "application/pdf"
    )
    assert covered(result, hidden), [f.to_json() for f in result.flags]
    assert untouched(result, VISIBLE) and untouched(result, after)
    assert any("page 1 of the PDF" in f.detail for f in result.flags)


def test_an_ordinary_pdf_has_no_flags() -> None:
    data = _pdf([("visible", VISIBLE), ("visible", "The pier is 212 metres long.")])
    assert extract(data, "application/pdf").flags == []
    data = _pdf(
        [
            ("visible", VISIBLE),
            ("an image beside", "The pier is 212 metres long."),
            ("clipped inside", "The lighthouse was painted red and white in 1921."),
        ]
    )
    assert extract(data, "application/pdf").flags == []


# --- the corpus: every technique, ingested ------------------------------------------------------

VISIBLE_SENTENCES = [
    "The harbour wall of Port Elling was rebuilt in 1904 after a great storm.",
    "Fishing boats from Port Elling land their catch at the north quay every morning.",
    "The Port Elling lighthouse was painted red and white by the harbour board in 1921.",
    "The Port Elling customs house became a maritime museum in 1987.",
]


def _corpus(folder: Path) -> dict[str, str]:
    """Write two HTML, a markdown and a PDF document mixing every technique with visible prose;
    return each hidden sentence by the technique that hides it."""
    hidden: dict[str, str] = {}

    def hide(kind: str, name: str) -> str:
        marker = "".join(c for c in f"{kind} {name}".title() if c.isalpha())[:40]
        hidden[f"{kind}: {name}"] = sentence = secret(marker)
        return sentence

    prose = "".join(f"<p>{s}</p>\n" for s in VISIBLE_SENTENCES)
    parts = [
        technique.replace("{s}", hide("html", name)) for name, technique in HTML_TECHNIQUES.items()
    ]
    half = len(parts) // 2  # two pages, so each stays one chunk (one plan per document)
    for name, some in (("port-elling.html", parts[:half]), ("port-elling-more.html", parts[half:])):
        (folder / name).write_text(
            "<html><body><h1>Port Elling harbour</h1>\n"
            + prose
            + "\n".join(some)
            + "</body></html>"
        )
    md = [
        technique.replace("{s}", hide("markdown", name))
        for name, technique in MARKDOWN_TECHNIQUES.items()
    ]
    (folder / "port-elling-notes.md").write_text(
        "# Port Elling notes\n\n" + "\n\n".join(VISIBLE_SENTENCES) + "\n\n" + "\n\n".join(md) + "\n"
    )
    lines = [("visible", s) for s in VISIBLE_SENTENCES]
    lines += [(how, hide("pdf", how)) for how in PDF_TECHNIQUES]
    (folder / "port-elling-survey.pdf").write_bytes(_pdf(lines))
    return hidden


def _everything_shown(vault: Vault) -> str:
    """Every text a reader of the wiki could meet: files, claims (context entries too), pages."""
    files = "\n".join(p.read_text() for p in sorted(vault.wiki_dir.rglob("*.md")))
    claims = "\n".join(
        row[0] for row in vault.db.execute("SELECT text FROM claims WHERE status = 'active'")
    )
    pages = "\n".join(
        f"{r[0]}\n{r[1]}" for r in vault.db.execute("SELECT title, summary FROM pages")
    )
    return "\n".join([files, claims, pages])


def _markers(hidden: dict[str, str]) -> dict[str, str]:
    return {
        name: sentence.split(" holds ")[0].removeprefix("The archive of ")
        for name, sentence in hidden.items()
    }


def test_extractive_ingest_of_the_corpus_admits_no_hidden_text(
    vault: Vault, tmp_path: Path
) -> None:
    folder = tmp_path / "corpus"
    folder.mkdir()
    hidden = _corpus(folder)
    report = Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(folder)], "trusted")
    assert not report.failed
    shown = _everything_shown(vault)
    leaked = [name for name, marker in _markers(hidden).items() if marker in shown]
    assert leaked == []
    assert "Zorvath" not in shown and "Admiral Quell" not in shown
    # the visible prose of every document became clean, applied evidence
    sources = {
        row[0]
        for row in vault.db.execute(
            "SELECT DISTINCT e.source_id FROM evidence e JOIN claims c ON c.id = e.claim_id "
            "WHERE c.status = 'active'"
        )
    }
    assert len(sources) == 4
    assert sum(sentence.rstrip(".") in shown for sentence in VISIBLE_SENTENCES) >= 2
    # nothing the engine proposed rests on a flag: it needed no person
    assert list_plans(vault) == []


def test_a_model_quoting_hidden_text_is_quarantined_with_the_technique(
    vault: Vault, tmp_path: Path
) -> None:
    folder = tmp_path / "corpus"
    folder.mkdir()
    hidden = _corpus(folder)

    def reply(request: ModelRequest) -> str:
        task = request.task
        assert task is not None
        quoted = [s for s in hidden.values() if s in task.chunk]
        visible = [s for s in VISIBLE_SENTENCES if s in task.chunk]
        claims = [
            {"text": s, "evidence": [{"source": task.source_id, "quote": s}]}
            for s in [*visible[:1], *quoted]
        ]
        slug = f"port-elling-{task.source_id[:8]}"
        plan = {
            "nonce": task.nonce,
            "operations": [
                {
                    "op": "create_page",
                    "slug": slug,
                    "title": "Admiral Quell",
                    "summary": quoted[0] if quoted else visible[0],
                    "claims": claims[:20],
                },
                *(
                    [{"op": "add_claims", "page": slug, "section": "More", "claims": claims[20:]}]
                    if claims[20:]
                    else []
                ),
                {
                    "op": "update_context",
                    "mode": "append",
                    "entries": claims[1:2],
                },
            ],
        }
        return json.dumps(plan)

    provider = ScriptedProvider(replies=[reply] * 20)
    report = Ingestor(vault, provider, apply_now=True).run([str(folder)], "trusted")
    shown = _everything_shown(vault)
    assert "Zorvath" not in shown and "Admiral Quell" not in shown
    plans = list_plans(vault)
    assert len(plans) == 4, [[(c.status, c.message) for c in s.chunks] for s in report.sources]
    verdicts: dict[str, tuple[str, str]] = {}
    admitted_visible = 0
    for plan in plans:
        for op in plan.to_json()["admission"]["ops"]:
            for claim in op.get("claims", []):
                if "Zorvath" in claim["text"]:
                    verdicts[claim["text"]] = (claim["status"], claim["reason"])
                elif claim["text"] in VISIBLE_SENTENCES:
                    assert claim["status"] == "admitted", claim
                    admitted_visible += 1
    assert admitted_visible >= 4
    # every hidden sentence was proposed, and none admitted: quarantined for a person, or
    # rejected outright (a quote inside markdown link syntax does not verify at all)
    assert set(verdicts) == set(hidden.values())
    assert {status for status, _ in verdicts.values()} <= {"quarantined", "rejected"}
    quarantined = [s for s, (status, _) in verdicts.items() if status == "quarantined"]
    assert len(quarantined) >= len(hidden) - 5
    reasons = {s: reason for s, (_, reason) in verdicts.items()}
    by_technique = {name: reasons[s] for name, s in hidden.items()}
    assert "display:none via .x in a <style> rule" in by_technique["html: class rule in <style>"]
    assert "text render mode 3" in by_technique["pdf: render mode 3"]
    assert "struck-through" in by_technique["markdown: strikethrough"]
    assert "markdown comment" in by_technique["markdown: [//]: # comment"]
    # inbox show tells the person why, naming the technique
    runner = CliRunner()
    html_plan = next(p for p in plans if "via .x in a <style>" in json.dumps(p.to_json()))
    out = runner.invoke(main, ["--vault", str(vault.root), "inbox", "show", html_plan.id])
    assert out.exit_code == 0, out.output
    assert (
        "evidence inside text hidden by CSS (display:none via .x in a <style> rule)" in out.output
    )


@pytest.mark.parametrize("flagged", [False, True])
def test_the_extractive_engine_quotes_nothing_under_a_flag(flagged: bool) -> None:
    page = (
        "<html><body><h1 class=x>Admiral Quell</h1><style>.x{display:none}</style>"
        f"<p class=x>{secret('Engine')}</p>"
        + "".join(f"<p>{s}</p>" for s in VISIBLE_SENTENCES)
        + "</body></html>"
    )
    result = extract(page.encode(), "text/html")
    spans = tuple((f.start, f.end) for f in result.flags) if flagged else ()
    task = IngestTask("n" * 16, "a" * 64, "port.html", result.text, 0, 0, 1, flagged=spans)
    plan = json.dumps(propose_plan(task))
    # without the stored flags the engine would take the hidden heading and sentence
    assert ("Zorvath" in plan or "Admiral Quell" in plan) is not flagged
    assert "Port Elling" in plan


def _png_bytes() -> bytes:
    """A tiny valid grey PNG (opaque: no alpha), written by hand."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 2, 2, 8, 0, 0, 0, 0)  # 2x2, 8-bit greyscale
    pixels = zlib.compress(b"\x00\x80\x80\x00\x80\x80")
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


def _png(path: Path) -> Path:
    path.write_bytes(_png_bytes())
    return path


def test_an_ocr_text_layer_over_a_scanned_page_is_not_hidden(tmp_path: Path) -> None:
    """ocrmypdf lays invisible text (render mode 3) over the page image that shows the words:
    that text is what the reader sees, so it stays quotable; without the image it is flagged."""
    pdf = FPDF()
    pdf.set_font("Helvetica", size=12)
    pdf.add_page()
    pdf.image(str(_png(tmp_path / "scan.png")), x=0, y=0, w=210, h=297)
    with pdf.local_context(text_mode=TextMode.INVISIBLE):
        pdf.multi_cell(0, 8, VISIBLE)
    assert extract(bytes(pdf.output()), "application/pdf").flags == []
