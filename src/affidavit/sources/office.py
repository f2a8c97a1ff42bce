"""What the office and book formats share: a guarded zip, the text they build, and their map.

Word ``.docx``, OpenDocument ``.odt``, PowerPoint ``.pptx`` and ``.epub`` are zip packages of XML.
Before any library parses one, :func:`open_zip` refuses what would hurt the host:

- a zip bomb: more than :data:`MAX_ENTRIES` members or more than :data:`MAX_UNPACKED` bytes
  unpacked (the sizes the archive declares; :mod:`zipfile` never inflates a member past its
  declared size, and a member whose bytes don't match it fails its CRC check);
- XML entity declarations in any member that is XML (starts with ``<``): ``<!ENTITY`` and an
  internal ``<!DOCTYPE ... [`` subset, the doors of "billion laughs" and external entity (XXE)
  attacks. A ``<!DOCTYPE`` that only names a DTD is allowed (an EPUB's XHTML names the XHTML
  DTD, OpenOffice.org wrote ``<!DOCTYPE manifest:manifest PUBLIC ... "Manifest.dtd">``): no
  parser here loads an external DTD (lxml's default and the libraries' parsers don't, nor does
  expat under :mod:`xml.sax`), so it declares nothing. SVG images inside an office document (``word/media/image1.svg``, often
  with a DTD from the program that drew them) are not checked: no reader here parses them (the
  parts python-docx and python-pptx parse go through their parsers with entities off, and odfpy
  reads only the package's fixed ``*.xml`` parts). An EPUB's members are all checked, whatever
  their names: its package file, which ebooklib parses, may be called anything.

:class:`TextBuilder` collects a document's text unit by unit (a paragraph, a slide, a chapter),
records where each unit starts (the text map's ``units``) and flags hidden runs (W12): hidden
text is kept in the text and flagged, so the offsets of what is seen never depend on it.
The readers need the ``[formats]`` extra; :func:`require` names its install command.
"""

from __future__ import annotations

import importlib
import io
import re
import zipfile
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from ..errors import SourceError
from .css import HIDDEN
from .sanitizer import Flag
from .visibility import RULES, Sight

MAX_ENTRIES = 20_000
"""Most members a document's zip may hold."""
MAX_UNPACKED = 256 * 1024 * 1024
"""Most bytes a document's zip may unpack to, all members together."""
INSTALL = "pip install 'affidavit[formats]'"

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
ODT = "application/vnd.oasis.opendocument.text"
EPUB = "application/epub+zip"
PACKAGES = (DOCX, PPTX, ODT, EPUB)
"""The media types read from zip packages (stored as their original bytes, like PDF)."""

_ENTITY = re.compile(rb"<!ENTITY", re.I)
_SUBSET = re.compile(rb"<!DOCTYPE[^>\[]*\[", re.I)


def require(module: str, what: str) -> ModuleType:
    """Import ``module`` (a reader of ``what``), or fail with the command that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise SourceError(
            f"Reading {what} needs the formats extra, which is not installed: run "
            f"`{INSTALL}` and add the file again."
        ) from exc


def _as_text(member: bytes) -> bytes:
    """Member bytes in a form the entity check can read: UTF-32 and UTF-16 XML decoded first
    (by byte-order mark, or by where the NUL bytes around the first ``<`` fall)."""
    head = member[:4]
    if b"\x00" not in head:
        return member
    if head in (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff") or head.count(b"\x00") == 3:
        encodings: tuple[str, ...] = ("utf-32", "utf-32-le", "utf-32-be")
    else:
        encodings = ("utf-16", "utf-16-le", "utf-16-be")
    for encoding in encodings:
        try:
            decoded = member.decode(encoding)
        except UnicodeDecodeError:
            continue
        if decoded.lstrip("\ufeff \t\r\n").startswith("<"):
            return decoded.encode("utf-8")
    return member  # not XML in any encoding an XML parser detects (an image, printer settings)


def open_zip(data: bytes, what: str, *, every_member: bool = False) -> zipfile.ZipFile:
    """The zip package ``data`` (a ``what``: "Word document"...), checked before anything parses
    it: entries, unpacked size, and no entity declaration in any XML member (see the module
    docstring). ``every_member``: SVG images are checked too (an EPUB's)."""
    try:
        package = zipfile.ZipFile(io.BytesIO(data))
        members = package.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError) as exc:
        raise SourceError(
            f"The {what} is not a readable zip package ({exc}). Open it in its editor, save it "
            f"again and add the saved file."
        ) from exc
    if len(members) > MAX_ENTRIES:
        raise SourceError(
            f"Refusing the {what}: its zip holds {len(members):,} entries, more than the "
            f"{MAX_ENTRIES:,} a document needs (a zip bomb?). Save it again from its editor."
        )
    unpacked = sum(member.file_size for member in members)
    if unpacked > MAX_UNPACKED:
        raise SourceError(
            f"Refusing the {what}: it would unpack to {unpacked:,} bytes, more than "
            f"{MAX_UNPACKED:,} (a zip bomb?). Save it again without embedded media and add that."
        )
    for member in members:
        if member.is_dir():
            continue
        if not every_member and member.filename.lower().endswith((".svg", ".svgz")):
            continue  # an image no reader parses (see the module docstring)
        try:
            body = _as_text(package.read(member))
        except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError, EOFError) as exc:
            raise SourceError(
                f"The {what} is damaged: its member {member.filename!r} can't be unpacked "
                f"({exc}). Save it again from its editor and add that."
            ) from exc
        if not body.lstrip(b" \t\r\n\xef\xbb\xbf").startswith(b"<"):
            continue  # not XML (an image, a font, printer settings): no parser reads it as XML
        bad = _ENTITY.search(body) or _SUBSET.search(body)
        if bad:
            raise SourceError(
                f"Refusing the {what}: its member {member.filename!r} declares "
                f"{bad.group().decode('ascii', 'replace')!r} (XML entity declarations are how "
                f"entity-expansion and XXE attacks work; editors don't write them). Save it "
                f"again from its editor and add that."
            )
    return package


@dataclass
class TextBuilder:
    """A document's text built unit by unit, with the units' offsets and the hidden runs.

    ``start(label)`` opens a unit (a paragraph, a slide's shape, a chapter) separated from the
    previous one by a blank line; ``add(text, hidden)`` appends a run, flagged when ``hidden``
    says why a reader does not see it."""

    unit_name: str = "unit"
    parts: list[str] = field(default_factory=list)
    length: int = 0
    units: list[list[Any]] = field(default_factory=list)
    flags: list[Flag] = field(default_factory=list)
    label: str = ""
    _prefix: str = ""
    _open: bool = False
    _empty: bool = True

    def start(self, label: str, prefix: str = "") -> None:
        """Open a unit called ``label`` (shown as where a quote sits); ``prefix`` (a heading's
        ``#`` marks) is written before its first run."""
        self.close()
        self.label = label
        self._prefix = prefix
        self._open = True
        self._empty = True

    @property
    def at_start(self) -> bool:
        """True until the open unit holds text."""
        return self._empty

    def close(self) -> None:
        """End the open unit: a blank line after it, if it held text."""
        if self._open and not self._empty:
            self._write("\n")
        self._open = False

    def add(self, text: str, hidden: str | None = None) -> None:
        """Append ``text`` to the open unit; ``hidden``: why a reader does not see it."""
        if not text:
            return
        if not self._open:
            self.start(self.label or self.unit_name)
        if self._empty:
            if self.length:
                self._write("\n")
            self.units.append([self.length, self.label])
            if self._prefix:
                self._write(self._prefix)
            self._empty = False
        start = self.length
        self._write(text)
        if hidden:
            detail = f"{hidden} ({self.label})"
            last = self.flags[-1] if self.flags else None
            if last is not None and last.end == start and last.detail == detail:
                self.flags[-1] = Flag(HIDDEN, last.start, self.length, detail)
            else:
                self.flags.append(Flag(HIDDEN, start, self.length, detail))

    def append(self, chunk: str) -> None:
        """Append ``chunk`` as it is, outside any unit (a chapter read whole)."""
        self.close()
        self._write(chunk)

    def _write(self, chunk: str) -> None:
        self.parts.append(chunk)
        self.length += len(chunk)

    def text(self) -> str:
        self.close()
        return "".join(self.parts)

    def text_map(self, fmt: str, engine: str) -> dict[str, Any]:
        """The ``units`` text map: ``units`` [[offset, label], ...], and what decided visibility."""
        note = (
            f"no renderer for {engine}: the format's rules (hidden properties, colours, sizes, "
            "comments, tracked changes) decided what a reader sees"
        )
        return {
            "kind": "units",
            "format": fmt,
            "units": self.units,
            "visibility": Sight(checked=RULES, note=note).record(),
        }


def contrast(foreground: str, background: str) -> float:
    """The WCAG contrast ratio of two ``RRGGBB`` colours (1: the same, 21: black on white)."""

    def luminance(rgb: str) -> float:
        channels = []
        for i in (0, 2, 4):
            c = int(rgb[i : i + 2], 16) / 255
            channels.append(c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4)
        return 0.2126 * channels[0] + 0.7152 * channels[1] + 0.0722 * channels[2]

    lighter, darker = sorted((luminance(foreground), luminance(background)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


MIN_CONTRAST = 1.5
"""Text whose contrast with its background is below this is taken as unseen (white on white,
pale grey on white)."""
MIN_POINTS = 4.0
"""Text smaller than this many points is taken as unseen."""
_RGB = re.compile(r"^#?([0-9a-fA-F]{6})$")


def rgb(value: str | None) -> str | None:
    """``RRGGBB`` (upper case) from ``RRGGBB`` or ``#rrggbb``; None for "auto" and the like."""
    match = _RGB.match(value or "")
    return match.group(1).upper() if match else None


def faint(color: str | None, background: str | None) -> str | None:
    """Why text of ``color`` on ``background`` is unseen, or None."""
    fg, bg = rgb(color), rgb(background) or "FFFFFF"
    if fg is None:
        return None
    ratio = contrast(fg, bg)
    if ratio < MIN_CONTRAST:
        return f"text coloured #{fg} on a #{bg} background (contrast {ratio:.2f})"
    return None


__all__ = [
    "DOCX",
    "EPUB",
    "INSTALL",
    "MAX_ENTRIES",
    "MAX_UNPACKED",
    "MIN_CONTRAST",
    "MIN_POINTS",
    "ODT",
    "PACKAGES",
    "PPTX",
    "TextBuilder",
    "contrast",
    "faint",
    "open_zip",
    "require",
    "rgb",
]
