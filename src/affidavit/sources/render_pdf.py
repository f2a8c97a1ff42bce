"""Which characters of a PDF a reader sees, decided by rasterising its pages with PDFium (W12).

Each page is rendered twice by PDFium (the rasteriser Chrome uses; the ``pypdfium2`` wheel):
once as it is, once with every text object switched off (``FPDFPageObj_SetIsActive``, inside
Form XObjects too). Where the two bitmaps differ, the page's text left ink. Each character of
PDFium's text page is then judged by its box (the font's ascent to descent, the glyph's advance
wide, in page space after every matrix):

    off       the box lies outside the page (its crop box) altogether;
    small     the box is less than ``MIN_POINTS`` tall (and wide): too small to read;
    narrow    the box is less than ``MIN_ASPECT`` of its height wide (``1 Tz``, a matrix that
              squashes the text): no letter shape is left to read;
    ink       the box holds (almost) no pixel the text changed: the text is transparent (``/ca 0``, a soft
              mask), has the colour of what is under it (white on white, stroke-only white, blue
              on a blue box), is covered by what is painted after it (a white rectangle, an
              image, an annotation), clipped away, or in an optional-content layer that is off;
    overlap   the box is mostly covered by another character's box that has ink (``-7 Tc``
              stacks a sentence's letters on one spot; text printed over other text): no
              letter of either can be told apart.

One exception: on a scanned page (an image covering at least half of it), text drawn invisibly
(render mode 3 or 7, as OCR tools lay it over the scan) is judged by its box alone, since the
image shows its words; that is also what the rules do (:mod:`.pdf`).

None of these needs a rule about *how* a PDF hides text: the rasteriser applies the PDF's own
graphics state, and the page shows ink or it does not. The verdicts go to
:mod:`affidavit.sources.align`, which maps PDFium's characters onto the extracted text.

PDFs are untrusted input: :func:`render_pdf` runs the rasteriser in a child process (this file
run as a script by ``python -I``: it imports nothing of Affidavit's) whose address space and CPU time are limited, with at most
``MAX_PAGES`` pages and ``MAX_PIXELS`` pixels per page rendered; a crash or a limit reached is a
:class:`RenderFailed`, never a hang or this process's memory.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import resource
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

if __package__:
    from .glyphs import NARROW, NO_INK, OFF, OVERLAPPED, SMALL, Ink, judge
else:  # run as a script by the child process: glyphs.py, beside this file, imports nothing
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from glyphs import (  # type: ignore[import-not-found,no-redef]
        NARROW,
        NO_INK,
        OFF,
        OVERLAPPED,
        SMALL,
        Ink,
        judge,
    )

SCALE = 1.5
"""Pixels per point (108 dpi): a 5pt footnote is 7 pixels tall."""
MAX_PIXELS = 6_000_000
"""Pixels per rendered page at most (a huge page is rendered at a lower scale)."""
MAX_PAGES = 3000
"""Pages rendered per document at most; a longer document is not confirmed by rendering."""
MIN_POINTS = 2.5
"""A character box less than this many points tall and wide is too small to read (about a 2pt
font, the smallest size today's rules accept)."""
MEMORY_BYTES = 2 * 1024**3
"""The renderer's address space at most."""
CPU_SECONDS_BASE = 30
CPU_SECONDS_PER_PAGE = 2
"""The renderer's CPU time at most: a base and a share per page (work, not a wall clock)."""
MAX_FORM_DEPTH = 32

REASONS = {
    OFF: "placed outside the page",
    SMALL: "too small to read",
    NARROW: "squeezed too narrow to read",
    NO_INK: "that leaves no ink on the rendered page (transparent, the colour of what is under "
    "it, covered, masked, clipped away or in a layer that is off)",
    OVERLAPPED: "drawn over other text, so neither can be read",
}
"""What each verdict code means, for a person reading a flag."""


class RenderFailed(Exception):
    """The rasteriser could not render the document (damaged, too large, a limit reached)."""


@dataclass(frozen=True)
class PageGlyphs:
    """One page's characters in PDFium's order (no whitespace) and a verdict code for each."""

    chars: str
    verdicts: str


def engine_name() -> str:
    """The rasteriser and its version, as a flag or a source record names it."""
    import pypdfium2

    return f"PDFium {pypdfium2.version.PDFIUM_INFO.version}"


def _objects(container: Any, raw: Any, form: bool, depth: int = 0) -> tuple[list[Any], list[Any]]:
    """The text objects and image objects of a page (or a form), forms' included."""
    count = (
        raw.FPDFFormObj_CountObjects(container) if form else raw.FPDFPage_CountObjects(container)
    )
    texts: list[Any] = []
    images: list[Any] = []
    for index in range(max(count, 0)):
        obj = (
            raw.FPDFFormObj_GetObject(container, index)
            if form
            else raw.FPDFPage_GetObject(container, index)
        )
        kind = raw.FPDFPageObj_GetType(obj)
        if kind == raw.FPDF_PAGEOBJ_TEXT:
            texts.append(obj)
        elif kind == raw.FPDF_PAGEOBJ_IMAGE:
            images.append(obj)
        elif kind == raw.FPDF_PAGEOBJ_FORM and depth < MAX_FORM_DEPTH:
            more_texts, more_images = _objects(obj, raw, True, depth + 1)
            texts += more_texts
            images += more_images
    return texts, images


def _scanned(images: list[Any], raw: Any, width: float, height: float) -> bool:
    """Whether an image covers at least half of the page: a scan, whose invisible text layer
    (OCR) is what the image shows."""
    import ctypes

    left, bottom, right, top = (ctypes.c_float() for _ in range(4))
    for image in images:
        if raw.FPDFPageObj_GetBounds(image, left, bottom, right, top):
            area = max(right.value - left.value, 0.0) * max(top.value - bottom.value, 0.0)
            if area >= 0.5 * width * height:
                return True
    return False


def _render(page: Any, scale: float) -> Any:
    bitmap = page.render(scale=scale, rev_byteorder=True, may_draw_forms=False)
    return bitmap.to_numpy().copy()


def page_glyphs(page: Any) -> PageGlyphs:
    """The verdict for each character of one ``pypdfium2`` page (see the module docstring)."""
    import ctypes

    import numpy as np
    import pypdfium2.raw as raw

    width, height = page.get_size()
    scale = SCALE
    if width * height * scale * scale > MAX_PIXELS:
        scale = math.sqrt(MAX_PIXELS / max(width * height, 1.0))
    shown = _render(page, scale)
    texts, images = _objects(page.raw, raw, False)
    scanned = _scanned(images, raw, width, height)
    for obj in texts:
        raw.FPDFPageObj_SetIsActive(obj, False)
    try:
        bare = _render(page, scale)
    finally:
        for obj in texts:
            raw.FPDFPageObj_SetIsActive(obj, True)
    change = np.abs(shown.astype(np.int16) - bare.astype(np.int16)).max(axis=2)
    rows, cols = change.shape

    textpage = page.get_textpage()
    tp = textpage.raw
    count = raw.FPDFText_CountChars(tp)
    chars: list[str] = []
    boxes: list[tuple[float, float, float, float]] = []  # page space: left, bottom, right, top
    pixels: list[tuple[int, int, int, int] | None] = []  # bitmap: x0, y0, x1, y1 (clipped)
    ocr: list[bool] = []  # invisible text over a scanned page: its image shows the words
    rect = raw.FS_RECTF()
    dx, dy = ctypes.c_int(), ctypes.c_int()
    pw, ph = math.ceil(width * scale), math.ceil(height * scale)
    for index in range(max(count, 0)):
        code = raw.FPDFText_GetUnicode(tp, index)
        char = chr(code) if 0 <= code < 0x110000 else "\ufffd"
        if char.isspace() or raw.FPDFText_IsGenerated(tp, index) == 1 or code == 0:
            continue
        if not raw.FPDFText_GetLooseCharBox(tp, index, rect):
            rect.left = rect.right = rect.bottom = rect.top = 0.0
        box = (rect.left, rect.bottom, rect.right, rect.top)
        corners = []
        for x, y in ((rect.left, rect.top), (rect.right, rect.bottom)):
            raw.FPDF_PageToDevice(page.raw, 0, 0, pw, ph, 0, x, y, dx, dy)
            corners.append((dx.value, dy.value))
        (ax, ay), (bx, by) = corners
        left, top = min(ax, bx), min(ay, by)  # a box thinner than a pixel still covers one
        x0, x1 = max(left, 0), min(max(ax, bx, left + 1), cols)
        # a pixel more above and below: an underscore's ink sits on the box's edge
        y0, y1 = max(top - 1, 0), min(max(ay, by, top + 1) + 1, rows)
        chars.append(char)
        boxes.append(box)
        if scanned:
            obj = raw.FPDFText_GetTextObject(tp, index)
            mode = raw.FPDFTextObj_GetTextRenderMode(obj) if obj else -1
            ocr.append(mode in (raw.FPDF_TEXTRENDERMODE_INVISIBLE, raw.FPDF_TEXTRENDERMODE_CLIP))
        else:
            ocr.append(False)
        pixels.append((x0, y0, x1, y1) if x1 > x0 and y1 > y0 else None)
    textpage.close()

    ink = Ink.empty(len(chars))
    if chars:
        regions = np.array([p if p is not None else (0, 0, 0, 0) for p in pixels], dtype=np.int64)
        ink.add(change, 0, regions[:, 0], regions[:, 1], regions[:, 2], regions[:, 3])
        layer = np.array(ocr, dtype=bool)  # the scan shows these words: judged by box alone
        ink.mass[layer] = np.inf
        ink.strong[layer] = np.inf
        ink.bands[layer] = np.inf
    verdicts = judge(chars, boxes, ink, MIN_POINTS)
    return PageGlyphs("".join(chars), "".join(verdicts))


def glyphs_in_process(data: bytes) -> list[PageGlyphs]:
    """Every page's verdicts, rendered in this process (the child process's work)."""
    import pypdfium2

    try:
        document = pypdfium2.PdfDocument(data)
    except pypdfium2.PdfiumError as exc:
        raise RenderFailed(f"PDFium could not open the PDF ({exc})") from exc
    try:
        if len(document) > MAX_PAGES:
            raise RenderFailed(f"it has {len(document)} pages (at most {MAX_PAGES} are rendered)")
        pages = []
        for index in range(len(document)):
            page = document[index]
            try:
                pages.append(page_glyphs(page))
            finally:
                page.close()
        return pages
    finally:
        document.close()


Owner = tuple[int, int]
"""A user and group id to render as (the vault's owner, when a root daemon works for it)."""


def drop_to(owner: Owner | None) -> None:  # pragma: no cover - runs in a child before exec
    """Become ``owner`` (from root): no supplementary groups, its group, its user."""
    if owner is not None and os.geteuid() == 0 and owner[0] != 0:
        os.setgroups([])
        os.setgid(owner[1])
        os.setuid(owner[0])


def _limit(pages: int, owner: Owner | None) -> None:  # pragma: no cover - runs in the child
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    cpu = CPU_SECONDS_BASE + CPU_SECONDS_PER_PAGE * max(pages, 1)
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    drop_to(owner)


def as_owner(work: Any, owner: Owner, cpu_seconds: int, memory: int | None = MEMORY_BYTES) -> bytes:
    """``work()`` (returning bytes) in a forked child that became ``owner`` first, under the
    renderer's limits; its answer, or :class:`RenderFailed`. A fork, not a new interpreter: the
    owner may not be able to run this Python (it may live in root's home), and what the work
    needs is loaded here already."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            os.close(read_end)
            if memory is not None:  # (a browser reserves far more address space than it uses)
                resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
            resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            drop_to(owner)
            if os.getuid() != owner[0]:
                raise RenderFailed("could not become the owner")
            answer = work()
            with os.fdopen(write_end, "wb") as out:
                out.write(answer)
            code = 0
        except BaseException as exc:
            with contextlib.suppress(Exception):
                os.write(write_end, b"\0" + str(exc)[:300].encode("utf-8", "replace"))
        finally:
            os._exit(code)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as answer_in:
        answer = answer_in.read()
    _, status = os.waitpid(pid, 0)
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        why = answer[1:].decode("utf-8", "replace") if answer[:1] == b"\0" else f"status {status}"
        raise RenderFailed(f"the renderer stopped: {why}")
    return answer


def render_pdf(data: bytes, pages: int, owner: Owner | None = None) -> list[PageGlyphs]:
    """Every page's verdicts, rendered by a child process under memory and CPU limits (``pages``,
    the page count pypdf read, sizes the CPU budget), as ``owner`` when this process is root (a
    daemon working for a vault: W10, never more authority than the vault's owner). Raises
    :class:`RenderFailed`."""
    if owner is not None and os.geteuid() == 0 and owner[0] != 0:
        import numpy  # noqa: F401  (loaded before the fork: the owner may not read them)
        import pypdfium2  # noqa: F401

        def work() -> bytes:
            found = glyphs_in_process(data)
            return json.dumps([[p.chars, p.verdicts] for p in found]).encode()

        cpu = CPU_SECONDS_BASE + CPU_SECONDS_PER_PAGE * max(pages, 1)
        try:
            return [
                PageGlyphs(str(p[0]), str(p[1])) for p in json.loads(as_owner(work, owner, cpu))
            ]
        except (ValueError, TypeError, IndexError) as exc:
            raise RenderFailed("the renderer's answer could not be read") from exc
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL")}
    try:
        done = subprocess.run(  # this file as a script (-I: no PYTHONPATH, no user site)
            [sys.executable, "-I", os.path.abspath(__file__)],
            input=data,
            capture_output=True,
            env=env,
            cwd="/",
            preexec_fn=lambda: _limit(pages, owner),
            check=False,
        )
    except OSError as exc:
        raise RenderFailed(f"the renderer could not start ({exc})") from exc
    if done.returncode != 0:
        why = done.stderr.decode("utf-8", "replace").strip().splitlines()
        detail = why[-1] if why else f"exit status {done.returncode}"
        raise RenderFailed(f"the renderer stopped: {detail[:300]}")
    try:
        answer = json.loads(done.stdout)
        pages_out = [PageGlyphs(str(p[0]), str(p[1])) for p in answer["pages"]]
        uid = int(answer["uid"])
    except (ValueError, TypeError, IndexError, KeyError) as exc:
        raise RenderFailed("the renderer's answer could not be read") from exc
    if owner is not None and os.geteuid() == 0 and owner[0] != 0 and uid != owner[0]:
        raise RenderFailed(f"the renderer ran as UID {uid}, not as the owner (UID {owner[0]})")
    return pages_out


def main() -> None:  # pragma: no cover - the child process (exercised through render_pdf)
    data = sys.stdin.buffer.read()
    try:
        pages = glyphs_in_process(data)
    except RenderFailed as exc:
        print(str(exc), file=sys.stderr)
        raise SystemExit(2) from None
    json.dump({"uid": os.getuid(), "pages": [[p.chars, p.verdicts] for p in pages]}, sys.stdout)


if __name__ == "__main__":  # pragma: no cover
    main()


__all__ = [
    "REASONS",
    "Owner",
    "PageGlyphs",
    "RenderFailed",
    "as_owner",
    "drop_to",
    "engine_name",
    "glyphs_in_process",
    "render_pdf",
]
