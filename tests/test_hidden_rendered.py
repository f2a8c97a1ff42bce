"""W12 by pixels (issue 23 item 4): every hidden-text technique that got through the rules is
flagged by rendering, with a visible control sentence in the same document that stays clean;
the PDF techniques by PDFium alone (the rules are left out), the HTML ones by chromium with the
rules in front; markdown's HTML a browser never shows and front matter by the rules. And the
renderer is untrusted-input territory: nothing fetched, nothing run.

The browser starts once for the whole session (one per process), so these are a few seconds.
"""

from __future__ import annotations

import json
import os
import pwd
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from affidavit.sources import visibility
from affidavit.sources.extract import Extracted, extract
from affidavit.sources.render_html import available
from tests import hidden_issue23
from tests.pdf_tricks import TRICKS, Trick, page
from tests.test_hidden_text import VISIBLE, covered, secret, untouched

AFTER = "The pier is 212 metres long."
needs_browser = pytest.mark.skipif(
    available() != "", reason="no renderer for HTML: pip install '.[render]' and chromium"
)


def _rendered_only(result: Extracted) -> Extracted:
    """The result with only the renderer's flags (those a rule raised left out)."""
    return Extracted(
        result.text, result.text_map, [f for f in result.flags if "(rendered by " in f.detail]
    )


def _html(fragment: str, hidden: str) -> bytes:
    body = fragment.replace("{s}", hidden)
    body = body.replace("{v}", VISIBLE) if "{v}" in body else f"<p>{VISIBLE}</p>{body}"
    return (
        f"<html><head><title>Port Elling</title></head><body>{body}<p>{AFTER}</p></body></html>"
    ).encode()


@needs_browser
@pytest.mark.parametrize("name", sorted(hidden_issue23.HTML))
def test_every_html_technique_of_issue_23_is_flagged(name: str) -> None:
    hidden = secret("Html")
    result = extract(_html(hidden_issue23.HTML[name], hidden), "text/html")
    assert result.text_map["visibility"]["checked"] == "rendered"
    assert hidden in result.text
    assert covered(result, hidden), [f.to_json() for f in result.flags]
    assert untouched(result, VISIBLE) and untouched(result, AFTER)
    assert untouched(result, "Port Elling\n")  # the document's own title: the window shows it


RULES_MISSED = sorted(
    name
    for name in hidden_issue23.HTML
    if name not in ("popover attribute", "<title> in body", "fixed off the right edge")
    and "text-fill-color" not in name
)


@needs_browser
def test_the_renderer_catches_what_the_rules_miss() -> None:
    """Of issue 23's HTML list, every technique the rules still miss is flagged by chromium."""
    missed_by_rules, missed = [], []
    for name in RULES_MISSED:
        hidden = secret("Html")
        data = _html(hidden_issue23.HTML[name], hidden)
        if not covered(extract(data, "text/html", render=False), hidden):
            missed_by_rules.append(name)
            if not covered(_rendered_only(extract(data, "text/html")), hidden):
                missed.append(name)
    assert len(missed_by_rules) >= 20  # the rules alone still miss most of the list
    assert missed == []


@pytest.mark.parametrize(
    "name", [*hidden_issue23.PDF, *sorted(set(TRICKS) - set(hidden_issue23.PDF))]
)
def test_every_pdf_technique_is_flagged_by_pdfium_alone(name: str) -> None:
    hidden = secret("Pdf")
    data = page(TRICKS[name](hidden), VISIBLE, AFTER)
    result = extract(data, "application/pdf")
    assert result.text_map["visibility"]["checked"] == "rendered"
    assert covered(result, hidden), [f.to_json() for f in result.flags]
    if name in hidden_issue23.PDF:  # the nine the rules missed: PDFium's flags alone cover them
        assert covered(_rendered_only(result), hidden), [f.to_json() for f in result.flags]
    assert untouched(result, VISIBLE) and untouched(result, AFTER)


def test_the_pdf_controls_alone_are_clean() -> None:
    data = page(Trick([]), VISIBLE, AFTER)
    assert extract(data, "application/pdf").flags == []


@pytest.mark.parametrize("name", sorted(hidden_issue23.MARKDOWN))
def test_markdown_html_a_browser_never_shows_is_flagged(name: str) -> None:
    hidden = secret("Mark")
    body = hidden_issue23.MARKDOWN[name].replace("{s}", hidden)
    text = f"# Port Elling\n\n{VISIBLE}\n\n{body}\n\n{AFTER}\n"
    result = extract(text.encode(), "text/markdown")
    assert covered(result, hidden), [f.to_json() for f in result.flags]
    assert untouched(result, VISIBLE) and untouched(result, AFTER)


@pytest.mark.parametrize("fence", ["---", "+++"])
def test_front_matter_is_not_visible_text(fence: str) -> None:
    hidden = secret("Front")
    close = "---" if fence == "---" else "+++"
    text = f'{fence}\ntitle: "{hidden}"\n{close}\n\n# Port Elling\n\n{VISIBLE}\n'
    result = extract(text.encode(), "text/markdown")
    assert covered(result, hidden) and untouched(result, VISIBLE)
    assert untouched(result, "Port Elling")


@pytest.mark.parametrize(
    "text",
    [
        "# Notes\n\nThe ratio a <? b holds when b > 2.\n",  # no ?>: literal text in CommonMark
        "# Notes\n\nA rule:\n\n---\n\nMore text here.\n",  # a thematic break, not front matter
        "# Notes\n\n```\n<?php echo 1; ?>\n<!DOCTYPE html>\n```\n",  # code shows as written
    ],
)
def test_markdown_that_only_looks_hidden_is_not(text: str) -> None:
    assert [f for f in extract(text.encode(), "text/markdown").flags if f.kind == "hidden"] == []


@needs_browser
def test_collapsed_details_are_seen_and_hover_text_is_not() -> None:
    """A reader opens a <details> (issue 24: collapsed syntax diagrams were quarantined); text
    shown only on hover is not on the page a reader looks at."""
    shown, hover = secret("Details"), secret("Hover")
    data = (
        "<html><head><style>.tip{visibility:hidden}.w:hover .tip{visibility:visible}</style>"
        f"</head><body><p>{VISIBLE}</p><details><summary>Grammar</summary><p>{shown}</p>"
        f'</details><div class=w>Hover me <span class="tip">{hover}</span></div></body></html>'
    ).encode()
    result = extract(data, "text/html")
    assert untouched(result, shown) and untouched(result, VISIBLE)
    assert covered(result, hover)


# --- the renderer is untrusted-input territory -------------------------------------------------


class _Recorder(BaseHTTPRequestHandler):
    seen: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.seen.append(self.path)
        body = b".x{display:none}" if self.path.endswith(".css") else b"<p>fetched</p>"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        return


@pytest.fixture
def recorder() -> Iterator[tuple[str, list[str]]]:
    _Recorder.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", _Recorder.seen
    finally:
        server.shutdown()
        server.server_close()


@needs_browser
def test_a_document_makes_chromium_fetch_nothing_and_run_nothing(
    recorder: tuple[str, list[str]],
) -> None:
    base, seen = recorder
    hidden = secret("Script")
    data = (
        f'<html><head><link rel="stylesheet" href="{base}/a.css">'
        f'<link rel="preconnect" href="{base}/"><link rel="dns-prefetch" href="{base}/">'
        f'<meta http-equiv="refresh" content="0;url={base}/moved">'
        f'<style>@import url("{base}/b.css"); @font-face{{font-family:F;src:url({base}/f.woff)}}'
        "</style></head><body>"
        f'<p>{VISIBLE}</p><img src="{base}/i.png"><iframe src="{base}/frame"></iframe>'
        f'<iframe src="file:///etc/passwd"></iframe>'
        f'<p id="h" style="display:none">{hidden}</p>'
        "<script>document.getElementById('h').style.display='block';"
        f"fetch('{base}/js')</script>"
        "</body></html>"
    ).encode()
    result = extract(data, "text/html")
    assert seen == []  # no request reached the server: not the stylesheet, image, frame...
    assert covered(result, hidden)  # the script that would have shown it did not run
    assert untouched(result, VISIBLE)  # nor did the stylesheet that would have hidden it
    assert "etc/passwd" not in result.text and "root:" not in result.text


@needs_browser
def test_a_document_too_large_to_render_is_not_taken_as_seen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from affidavit.sources import render_html

    monkeypatch.setattr(render_html, "MAX_BYTES", 100)
    result = extract(f"<p>{VISIBLE}</p><p>{AFTER}</p>".encode(), "text/html")
    assert covered(result, VISIBLE) and covered(result, AFTER)
    assert any("could not be rendered" in f.detail for f in result.flags)


def test_a_pdf_pdfium_can_not_render_is_not_taken_as_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    """A crash or a limit in the renderer's child process flags the whole text."""
    from affidavit.sources import render_pdf

    monkeypatch.setattr(render_pdf, "CPU_SECONDS_BASE", 0)
    monkeypatch.setattr(render_pdf, "CPU_SECONDS_PER_PAGE", 0)  # no CPU second at all: killed
    data = page(TRICKS["fill alpha /ca 0"]("x"), VISIBLE, AFTER)
    result = extract(data, "application/pdf")
    assert covered(result, VISIBLE) and covered(result, AFTER)
    assert any("could not be rendered" in f.detail for f in result.flags)


def test_the_answer_is_cached_by_content_and_a_tampered_cache_is_not_trusted(
    tmp_path: Path,
) -> None:
    hidden = secret("Cache")
    data = page(TRICKS["white rectangle over the text"](hidden), VISIBLE, AFTER)
    first = extract(data, "application/pdf", cache=tmp_path)
    (entry,) = tmp_path.glob("*.json")
    assert covered(first, hidden)
    again = extract(data, "application/pdf", cache=tmp_path)
    assert again.flags == first.flags
    # a cache that says nothing is hidden, but isn't well formed, is ignored
    entry.write_text(json.dumps({"flags": "none", "engine": "x"}))
    assert covered(extract(data, "application/pdf", cache=tmp_path), hidden)


def test_without_a_renderer_the_text_map_says_rules_only() -> None:
    result = extract(f"<p>{VISIBLE}</p>".encode(), "text/html", render=False)
    assert result.text_map["visibility"]["checked"] == visibility.RULES


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
def test_a_root_process_renders_as_the_vaults_owner(tmp_path: Path) -> None:
    """W10: a root daemon working for someone's vault renders with their authority, not root's:
    the renderers' child processes become the owner (here ``nobody``), and say who they were."""
    nobody = pwd.getpwnam("nobody")
    owner = (nobody.pw_uid, nobody.pw_gid)
    hidden = secret("Owner")
    pdf = page(TRICKS["white rectangle over the text"](hidden), VISIBLE, AFTER)
    result = extract(pdf, "application/pdf", owner=owner, cache=tmp_path)
    assert result.text_map["visibility"]["checked"] == "rendered"
    assert covered(result, hidden) and untouched(result, VISIBLE)
    assert list(tmp_path.iterdir()) == []  # nothing written into the owner's files as root
    if available() == "":
        from affidavit.sources.render_html import measure_as

        data = _html(hidden_issue23.HTML["oklch() white"], hidden)
        measured, engine = measure_as(data, "text/html; charset=utf-8", owner)
        assert engine.startswith("chromium") and "i" in measured.verdicts
        result = extract(data, "text/html", owner=owner)
        assert covered(result, hidden) and untouched(result, VISIBLE)
