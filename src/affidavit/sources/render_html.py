"""Which characters of an HTML document a reader sees, decided by a browser engine (W12).

Debian's chromium lays the document out, driven headless by Playwright (the ``[render]``
extra; ``scripts/setup_browser.sh`` installs chromium, never ``playwright install``):

* **nothing runs, nothing is fetched.** JavaScript is off; every request but the document's own
  is refused (stylesheets, fonts, frames, a ``<meta refresh>``) or, for an image, answered
  with a mid-grey pixel (its colours are unknown, as a background image's are to the rules);
  chromium resolves no host
  name and its proxy is a name that never resolves, so not even a ``<link rel=preconnect>``
  reaches the network. ``data:`` URLs fetch nothing and are left to work (a ``data:`` stylesheet
  styles the page for its reader too). A fresh profile per browser, a 1280×800 window;
* **as a reader finds it**: collapsed ``<details>`` are opened (a reader can expand them: their
  content is seen), finite CSS animations are finished (the state a reader is left with);
  anything shown only on hover, focus or a click (tooltips, popovers, closed dialogs) is not
  seen;
* **each character is measured** (its range's box), and the page is captured twice, as it is and
  with every glyph's fill made transparent (``-webkit-text-fill-color``, which changes no
  layout). Where the two captures differ the text left ink; :func:`affidavit.sources.glyphs.judge`
  decides as for a PDF page (off the page, too small, squeezed, no ink, overprinted). The page is
  the document's width in the 1280-pixel window and its whole height; text in a ``position:
  fixed`` box must be inside the window itself.

Bounds (untrusted input): documents over ``MAX_BYTES`` and heights past ``MAX_HEIGHT`` pixels
are not rendered whole (what is past the bound is not seen); a navigation is bounded by a
generous hang guard. One browser per process, started on first use, in a thread of its own (so
an event loop in the caller's thread is no obstacle), closed at exit.
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import io
import json
import os
import shutil
import struct
import tempfile
import threading
import zlib
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from queue import Queue
from typing import Any

from .align import MISSING
from .glyphs import NARROW, NO_INK, OFF, OVERLAPPED, SMALL, Ink, judge
from .html_tables import grid_lines_blank
from .sanitizer import Flag
from .visibility import HIDDEN, RENDERED, RULES, Sight, flags_for

WIDTH, HEIGHT = 1280, 800
"""The window a reader looks through."""
TILE = 4000
"""Captures are taken this many pixels tall at a time."""
MAX_HEIGHT = 200_000
"""Pixels of page height captured at most; text below is not seen."""
MAX_BYTES = 10_000_000
"""A larger document is not rendered: all of its text is flagged."""
HANG_GUARD_MS = 120_000
"""A navigation or capture that takes longer than this is a failure (a hang guard for a
document built to stall the engine, far above any real page's cost)."""
MAX_CHARS = 2_000_000
"""Characters measured at most; text past them is not seen."""
MIN_PIXELS = 7.5
"""A character box less than this many CSS pixels tall and wide is too small to read: a font
of about 6px, the smallest chromium draws when a page asks for less in some units (``0.1lh``),
which other engines draw at 1.6px. Chromium 156.0.8078.73 gave a 6px glyph a box just under 7px;
156.0.8078.129 gives it 7px exactly (and 8px to a 6.5px font), hence the half pixel."""
DOCUMENT_URL = "http://document.affidavit.invalid/"
INSTALL = (
    "HTML visibility is decided by rules only: install the renderer with "
    "`pip install 'affidavit[render]'` and Debian's chromium (`scripts/setup_browser.sh`, or "
    "`apt-get install chromium`)"
)
CHROMIUM_PATHS = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-extensions",
    "--disable-features=Translate,MediaRouter,OptimizationHints,AutofillServerCommunication",
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--proxy-server=socks5://proxy.affidavit.invalid:1",
    "--proxy-bypass-list=<-loopback>",
    "--hide-scrollbars",
    "--font-render-hinting=none",
]
NOT_DISPLAYED = "d"
REASONS = {
    NOT_DISPLAYED: "HTML text the page does not display (no box: display:none, hidden, a "
    "closed dialog or popover, a <title> in the body...)",
    OFF: "HTML text outside the page a reader scrolls (or the window, for a fixed box)",
    SMALL: "HTML text too small to read",
    NARROW: "HTML text squeezed too narrow to read",
    NO_INK: "HTML text that leaves no ink on the rendered page (transparent, the colour of "
    "what is under it, covered, clipped, masked or not displayed)",
    OVERLAPPED: "HTML text drawn over other text, so neither can be read",
    MISSING: "HTML text the rendered page does not show",
}

_PREPARE = """() => {
  for (const d of document.querySelectorAll('details')) d.open = true;
  for (const el of document.querySelectorAll('*')) {
    const clip = getComputedStyle(el).webkitBackgroundClip || getComputedStyle(el).backgroundClip;
    if (clip === 'text') el.setAttribute('data-affidavit-clip-text', '');
  }
  try {
    for (const a of document.getAnimations()) {
      try { a.finish(); } catch (e) { a.pause(); a.currentTime = 0; }
    }
  } catch (e) {}
  const root = document.documentElement;
  return [root ? Math.max(root.scrollHeight, document.body ? document.body.scrollHeight : 0) : 0,
          root ? root.scrollWidth : 0];
}"""

_MEASURE = """(limit) => {
  const chars = [], boxes = [], fixed = [];
  const skip = new Set(['SCRIPT', 'STYLE', 'TEMPLATE']);
  const title = document.querySelector('head > title');
  const isFixed = new Map();
  const fixedOf = (el) => {
    if (!el) return false;
    if (isFixed.has(el)) return isFixed.get(el);
    const style = getComputedStyle(el);
    const value = style.position === 'fixed' || fixedOf(el.parentElement);
    isFixed.set(el, value);
    return value;
  };
  const walker = document.createTreeWalker(document, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  let node;
  while ((node = walker.nextNode()) && chars.length < limit) {
    const parent = node.parentElement;
    if (parent && skip.has(parent.tagName.toUpperCase())) continue;
    const inTitle = title && title.contains(node);
    const text = node.data;
    const f = inTitle ? 2 : (fixedOf(parent) ? 1 : 0);
    for (let i = 0; i < text.length; ) {
      const code = text.codePointAt(i);
      const size = code > 0xffff ? 2 : 1;
      const ch = text.slice(i, i + size);
      if (!/\\s/.test(ch)) {
        let r = [0, 0, 0, 0];
        if (!inTitle) {
          range.setStart(node, i); range.setEnd(node, i + size);
          const b = range.getBoundingClientRect();
          r = [b.left + scrollX, b.top + scrollY, b.width, b.height];
        }
        chars.push(ch);
        boxes.push(r[0].toFixed(2), r[1].toFixed(2), r[2].toFixed(2), r[3].toFixed(2));
        fixed.push(f);
      }
      i += size;
    }
  }
  return [chars.join('\\u0000'), boxes.join(','), fixed.join('')];
}"""

_HIDE_GLYPHS = """(on) => {
  let style = document.getElementById('affidavit-no-glyphs');
  if (!on) { if (style) style.remove(); return; }
  if (!style) {
    style = document.createElement('style');
    style.id = 'affidavit-no-glyphs';
    style.textContent = `*, *::before, *::after, *::first-line, *::first-letter, *::marker,
      *::placeholder { -webkit-text-fill-color: transparent !important;
      -webkit-text-stroke-color: transparent !important; text-shadow: none !important;
      text-decoration-color: transparent !important; caret-color: transparent !important; }
      [data-affidavit-clip-text] { -webkit-background-clip: border-box !important;
      background-clip: border-box !important; }`;
    (document.head || document.documentElement).append(style);
  }
}"""

_QUIET = """() => {
  const style = document.createElement('style');
  style.textContent = `*, *::before, *::after { text-decoration-color: transparent !important;
    caret-color: transparent !important; transition: none !important; }`;
  (document.head || document.documentElement).append(style);
}"""
"""Underlines and carets are no glyphs: left out of both captures."""


def _grey_png() -> bytes:
    """A 1×1 mid-grey PNG: what an image the document would load is drawn as. Its real colours
    are unknown, and mid-grey lets both white and black text on it show (today's rules, too,
    take a background image as a background whose colour is unknown)."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        data = kind + body
        return struct.pack(">I", len(body)) + data + struct.pack(">I", zlib.crc32(data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00\x80"))
        + chunk(b"IEND", b"")
    )


_GREY_PNG = _grey_png()


class RenderFailed(Exception):
    """The browser could not render the document."""


@dataclass(frozen=True)
class Measured:
    """A document's characters in DOM order, each character's verdict code."""

    chars: str
    verdicts: str


def chromium_path() -> str | None:
    """The system chromium, if installed."""
    for path in CHROMIUM_PATHS:
        if os.access(path, os.X_OK):
            return path
    found = shutil.which("chromium")
    return found


def available() -> str:
    """Why HTML can't be rendered here ("" when it can)."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return INSTALL
    if chromium_path() is None:
        return INSTALL
    return ""


class _Browser:
    """One chromium for this process, owned by a thread of its own (Playwright's sync API
    refuses to run where an event loop runs)."""

    def __init__(self) -> None:
        self.jobs: Queue[tuple[Callable[[Any], Any], Future[Any]] | None] = Queue()
        self.pid = os.getpid()
        self.version = ""
        self.thread = threading.Thread(target=self._run, name="affidavit-chromium", daemon=True)
        self.started: Future[str] = Future()
        self.thread.start()
        self.version = self.started.result()

    def _run(self) -> None:
        from playwright.sync_api import sync_playwright

        try:
            manager = sync_playwright().start()
            browser = manager.chromium.launch(
                executable_path=chromium_path(), headless=True, args=FLAGS
            )
        except Exception as exc:
            self.started.set_exception(RenderFailed(f"chromium could not start ({exc})"))
            return
        self.started.set_result(browser.version)
        try:
            while True:
                job = self.jobs.get()
                if job is None:
                    break
                work, future = job
                try:
                    future.set_result(work(browser))
                except BaseException as exc:
                    future.set_exception(exc)
        finally:
            try:
                browser.close()
                manager.stop()
            except Exception:  # the browser died already
                pass

    def call(self, work: Callable[[Any], Any]) -> Any:
        future: Future[Any] = Future()
        self.jobs.put((work, future))
        return future.result()

    def close(self) -> None:
        self.jobs.put(None)
        self.thread.join(timeout=30)


_BROWSER: _Browser | None = None
_LOCK = threading.Lock()


def _browser() -> _Browser:
    global _BROWSER
    with _LOCK:
        if _BROWSER is None or _BROWSER.pid != os.getpid() or not _BROWSER.thread.is_alive():
            _BROWSER = _Browser()
            atexit.register(_BROWSER.close)
        return _BROWSER


def close_browser() -> None:
    """Close this process's browser (tests and long-lived processes that are done with it)."""
    global _BROWSER
    with _LOCK:
        if _BROWSER is not None and _BROWSER.pid == os.getpid():
            _BROWSER.close()
        _BROWSER = None


def engine_name() -> str:
    return f"chromium {_browser().version}"


def measure(data: bytes, content_type: str) -> Measured:
    """Lay ``data`` out in chromium and judge each of its characters."""
    return _browser().call(lambda browser: _measure(browser, data, content_type))  # type: ignore[no-any-return]


class _Tab:
    """The one tab documents are laid out in, in a context with JavaScript off and every
    request but the document's refused (reused: a new tab costs a renderer process)."""

    def __init__(self, browser: Any) -> None:
        self.context = browser.new_context(
            java_script_enabled=False,
            viewport={"width": WIDTH, "height": HEIGHT},
            device_scale_factor=1,
            service_workers="block",
            accept_downloads=False,
        )
        self.document: tuple[str, bytes, str] = ("", b"", "")
        self.count = 0
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.set_default_timeout(HANG_GUARD_MS)
        self.cdp = self.context.new_cdp_session(self.page)

    def _route(self, request_route: Any) -> None:
        url, body, content_type = self.document
        request = request_route.request
        if request.url == url and request.is_navigation_request():
            request_route.fulfill(status=200, body=body, content_type=content_type)
        elif request.resource_type == "image":  # its colours are unknown: a grey stand-in
            request_route.fulfill(status=200, body=_GREY_PNG, content_type="image/png")
        elif request.is_navigation_request():  # a <meta refresh> or a frame: cancelled,
            request_route.abort("aborted")  # the document stays as it is
        else:
            request_route.abort()

    def load(self, data: bytes, content_type: str) -> str:
        self.count += 1
        url = f"{DOCUMENT_URL}{self.count}"
        self.document = (url, data, content_type)
        self.page.goto(url, wait_until="load")
        return url


_TABS: dict[int, _Tab] = {}


def _measure(browser: Any, data: bytes, content_type: str) -> Measured:
    tab = _TABS.get(id(browser))
    if tab is None or tab.page.is_closed():
        tab = _TABS[id(browser)] = _Tab(browser)
    try:
        return _measure_in(tab, data, content_type)
    except Exception:
        _TABS.pop(id(browser), None)  # a fresh tab for the next document
        with contextlib.suppress(Exception):  # the tab may be gone already
            tab.context.close()
        raise


def _measure_in(tab: _Tab, data: bytes, content_type: str) -> Measured:
    import numpy as np

    page, cdp = tab.page, tab.cdp
    url = tab.load(data, content_type)
    if page.url != url:
        raise RenderFailed(f"the document navigated away (to {page.url[:100]})")
    page.evaluate(_QUIET)
    height, _ = page.evaluate(_PREPARE)
    height = int(min(max(height, HEIGHT), MAX_HEIGHT))
    chars_joined, numbers, kinds = page.evaluate(_MEASURE, MAX_CHARS)
    chars = chars_joined.split("\0") if chars_joined else []
    tiles = list(range(0, height, TILE))

    def capture(top: int) -> Any:
        clip = {"x": 0, "y": top, "width": WIDTH, "height": min(TILE, height - top), "scale": 1}
        shot = cdp.send(
            "Page.captureScreenshot",
            {
                "format": "png",
                "captureBeyondViewport": True,
                "clip": clip,
                "optimizeForSpeed": True,
            },
        )
        return base64.b64decode(shot["data"])

    shown = [capture(top) for top in tiles]
    page.evaluate(_HIDE_GLYPHS, True)
    bare = [capture(top) for top in tiles]

    count = len(chars)
    flat = np.array(numbers.split(",") if numbers else [], dtype=np.float64).reshape(count, 4)
    fixed = np.frombuffer(kinds.encode("ascii"), dtype=np.uint8) - ord("0")
    x, y, w, h = flat[:, 0], flat[:, 1], flat[:, 2], flat[:, 3]
    bottom = np.where(fixed == 1, HEIGHT, height)
    x0 = np.maximum(np.floor(x), 0).astype(np.int64)
    x1 = np.minimum(np.maximum(np.ceil(x + w), np.floor(x) + 1), WIDTH).astype(np.int64)
    y0 = np.maximum(np.floor(y) - 1, 0).astype(np.int64)
    y1 = np.minimum(np.maximum(np.ceil(y + h), np.floor(y) + 1) + 1, bottom).astype(np.int64)
    placed = (x1 > x0) & (y1 > y0) & (fixed != 2)
    x1 = np.where(placed, x1, x0)  # a box off the page measures nothing
    ink = Ink.empty(count)
    for top, before, after in zip(tiles, shown, bare, strict=True):
        ink.add(_change(before, after), top, x0, y0, x1, y1)
    boxes = [(float(a), float(b), float(a + c), float(b + d)) for a, b, c, d in flat.tolist()]
    verdicts = judge(chars, boxes, ink, MIN_PIXELS)
    for k in range(count):
        if fixed[k] == 2:  # the document's own <title>: the window's title bar shows it
            verdicts[k] = "v"
        elif w[k] == 0 and h[k] == 0:
            verdicts[k] = NOT_DISPLAYED  # no box at all
    return Measured("".join(chars), "".join(verdicts))


def _change(before: bytes, after: bytes) -> Any:
    """How much each pixel changed between two PNG captures: the largest change of its colour
    channels, 0-255 (Pillow's C loops: numpy's reductions over channels cost seconds a page)."""
    import numpy as np
    from PIL import Image, ImageChops

    with Image.open(io.BytesIO(before)) as a, Image.open(io.BytesIO(after)) as b:
        first, second = a.convert("RGB"), b.convert("RGB")
        if first.size != second.size:
            size = (min(first.width, second.width), min(first.height, second.height))
            first, second = first.crop((0, 0, *size)), second.crop((0, 0, *size))
        red, green, blue = ImageChops.difference(first, second).split()
        return np.asarray(ImageChops.lighter(ImageChops.lighter(red, green), blue))


def _as_owner(owner: tuple[int, int]) -> bool:
    return os.geteuid() == 0 and owner[0] != 0


def measure_as(data: bytes, content_type: str, owner: tuple[int, int]) -> tuple[Measured, str]:
    """:func:`measure` in a forked child that became ``owner`` first (a root daemon working for
    a vault: W10), with a home of its own and its own browser, closed when it is done."""
    from .render_pdf import as_owner

    home = tempfile.mkdtemp(prefix="affidavit-render-")
    try:
        os.chown(home, owner[0], owner[1])

        def work() -> bytes:
            global _BROWSER
            _BROWSER = None  # the parent's browser is not this process's
            os.environ.update(HOME=home, TMPDIR=home)
            os.chdir(home)
            try:
                measured = measure(data, content_type)
                return json.dumps(
                    {
                        "engine": engine_name(),
                        "chars": measured.chars,
                        "verdicts": measured.verdicts,
                    }
                ).encode()
            finally:
                close_browser()

        answer = json.loads(as_owner(work, owner, int(3 * HANG_GUARD_MS / 1000), memory=None))
        return Measured(str(answer["chars"]), str(answer["verdicts"])), str(answer["engine"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise RenderFailed(f"the renderer could not run as the owner ({exc})") from exc
    finally:
        shutil.rmtree(home, ignore_errors=True)


def html_sight(
    data: bytes, text: str, text_map: dict[str, Any], owner: tuple[int, int] | None = None
) -> Sight:
    """The :class:`~affidavit.sources.visibility.Sight` of an HTML document: its text flagged
    where chromium shows no readable ink (laid out as ``owner`` when this process is root)."""
    missing = available()
    if missing:
        return Sight(checked=RULES, note=missing)
    encoding = str(text_map.get("encoding") or "utf-8").split(" ")[0]
    content_type = f"text/html; charset={encoding}"
    try:
        if len(data) > MAX_BYTES:
            raise RenderFailed(f"it is larger than {MAX_BYTES:,} bytes")
        if owner is not None and _as_owner(owner):
            measured, engine = measure_as(data, content_type, owner)
        else:
            engine = engine_name()
            measured = measure(data, content_type)
    except Exception as exc:  # the browser failed on this document: nothing is taken as seen
        why = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
        return Sight(
            [Flag(HIDDEN, 0, len(text), f"HTML text that could not be rendered ({why})")],
            RENDERED,
            "chromium",
            f"the renderer failed: {why}",
        )
    where = f"(rendered by {engine})"
    return Sight(
        flags_for(
            grid_lines_blank(text), 0, measured.chars, measured.verdicts, REASONS, where, "`#|"
        ),
        RENDERED,
        engine,
    )


__all__ = ["available", "close_browser", "html_sight", "measure", "measure_as"]
