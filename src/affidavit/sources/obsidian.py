"""Notes of an Obsidian vault as sources: the text Obsidian shows, not the syntax it hides.

A markdown file inside a folder that holds ``.obsidian/`` (an Obsidian vault; found by
:func:`obsidian_vault`) is stored as ``text/x-obsidian-markdown`` and its text is the note as a
reader of it sees it:

- front matter (YAML between ``---`` lines at the top) is metadata, not text: it is left out of
  the text and kept in the text map's ``metadata`` (``title``, ``tags``, ``aliases``...);
- wikilinks read as the words Obsidian shows: ``[[target|alias]]`` as ``alias``,
  ``[[target]]`` as ``target``, ``[[target#Heading]]`` as ``target > Heading``;
- embeds (``![[other note]]``, ``![[image.png]]``) stay in the text, flagged hidden: what Obsidian
  shows there is another file's text, which is that file's source, not this one's;
- ``%%comments%%``, images, link titles and everything else markdown hides are flagged as for any
  markdown source (:mod:`.hidden_markdown`).

Code spans and fenced code are shown as written: nothing in them is rewritten. The text map is
``{"kind": "lines", "format": "obsidian", ...}``: each line of the text maps to its line in the
note.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from pathlib import Path
from typing import Any

import yaml

from .css import HIDDEN
from .hidden_markdown import markdown_flags, without_code
from .sanitizer import Flag

OBSIDIAN = "text/x-obsidian-markdown"
_FRONT = re.compile(r"\A\ufeff?---[ \t]*\r?\n(.*?)^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S | re.M)
_LINK = re.compile(r"(!?)\[\[([^\[\]\n]{1,500}?)\]\]")
_MAX_LEVELS = 32


def obsidian_vault(path: Path) -> Path | None:
    """The Obsidian vault (a folder holding ``.obsidian/``) that ``path`` is inside, if any."""
    for folder in list(path.parents)[:_MAX_LEVELS]:
        try:
            if (folder / ".obsidian").is_dir():
                return folder
        except OSError:
            return None
    return None


def _plain(value: Any, depth: int = 0) -> Any:
    """``value`` as JSON can hold it (YAML dates become ISO strings)."""
    if depth > 8:
        return str(value)
    if isinstance(value, dict):
        return {str(k): _plain(v, depth + 1) for k, v in list(value.items())[:200]}
    if isinstance(value, list | tuple):
        return [_plain(v, depth + 1) for v in list(value)[:200]]
    if isinstance(value, datetime | date):
        return value.isoformat()
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def _metadata(front: str) -> dict[str, Any]:
    try:
        loaded = yaml.safe_load(front)
    except yaml.YAMLError:
        return {}
    return _plain(loaded) if isinstance(loaded, dict) else {}


def shown(inner: str) -> str:
    """What Obsidian shows for a wikilink ``[[inner]]``."""
    target, bar, alias = inner.replace("\\|", "|").partition("|")
    if bar and alias.strip():
        return alias.strip()
    target = target.strip()
    page, hash_, section = target.partition("#")
    section = section.lstrip("^")
    if not hash_:
        return page
    return f"{page} > {section}" if page else section


def extract_obsidian(source: str) -> tuple[str, dict[str, Any], list[Flag]]:
    """The text a reader of the Obsidian note ``source`` sees, its line map (with the front
    matter as ``metadata``) and its flags."""
    metadata: dict[str, Any] = {}
    first_line = 1
    body = source
    front = _FRONT.match(source)
    if front:
        metadata = _metadata(front.group(1))
        first_line += source.count("\n", 0, front.end())
        body = source[front.end() :]
    prose = without_code(body)
    parts: list[str] = []
    embeds: list[tuple[int, int, str]] = []
    at = 0
    length = 0
    for match in _LINK.finditer(prose):
        parts.append(body[at : match.start()])
        length += match.start() - at
        inner = body[match.start(2) : match.end(2)]
        if match.group(1):  # an embed: kept as written, flagged
            written = body[match.start() : match.end()]
            embeds.append((length, length + len(written), inner.split("|", 1)[0].strip()))
        else:
            written = shown(inner)
        parts.append(written)
        length += len(written)
        at = match.end()
    parts.append(body[at:])
    text = "".join(parts)
    segments = [[0, first_line]]
    segments += [[m.end(), first_line + n] for n, m in enumerate(re.finditer("\n", text), 1)]
    if segments[-1][0] >= len(text):
        segments.pop()
    flags = markdown_flags(text)
    for start, end, target in embeds:
        flags.append(
            Flag(
                HIDDEN,
                start,
                end,
                f"an Obsidian embed of {target!r}: what it shows is that file's text, not this "
                f"note's (add that note as a source to cite it)",
            )
        )
    text_map: dict[str, Any] = {"kind": "lines", "format": "obsidian", "segments": segments}
    if metadata:
        text_map["metadata"] = metadata
    return text, text_map, flags


__all__ = ["OBSIDIAN", "extract_obsidian", "obsidian_vault", "shown"]
