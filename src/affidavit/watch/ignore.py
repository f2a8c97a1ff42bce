"""Which files of a watched folder are sources: ``.gitignore`` and ``.affidavitignore`` with git's
own semantics (the ``pathspec`` library's ``GitIgnoreSpec``, never hand-written matching).

Every ignore file applies to the folder it sits in and below, as in git: a path is decided by
the deepest ignore file with a pattern that matches it (its last matching pattern wins, so
``!keep.md`` re-includes), and a folder that is ignored is never entered. ``.affidavitignore``
is read after ``.gitignore`` of the same folder, so it has the last word there. Beyond the
ignore files, a watched folder yields what ``affidavit ingest DIR`` would take: supported
extensions, no hidden files or folders, never the vault's own ``sources/`` or ``wiki/``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pathspec import GitIgnoreSpec

from ..sources.extract import EXTENSIONS, is_man_page_name

IGNORE_FILES = (".gitignore", ".affidavitignore")
"""Files whose patterns say what is not a source, read in this order in each folder."""


def is_ignore_file(path: Path) -> bool:
    return path.name in IGNORE_FILES


def supported(name: str) -> bool:
    """Whether ``ingest`` reads a file of this name (its extension, or a man page's name)."""
    return not name.startswith(".") and (
        Path(name).suffix.lower() in EXTENSIONS or is_man_page_name(name)
    )


@dataclass
class IgnoreRules:
    """The ignore files under one watched ``root`` (absolute, resolved)."""

    root: Path
    skip: frozenset[Path] = frozenset()
    """Folders never entered (the vault's own ``sources/``, ``wiki/``)."""
    specs: dict[Path, GitIgnoreSpec] = field(default_factory=dict)

    @classmethod
    def load(cls, root: Path, skip: frozenset[Path] = frozenset()) -> IgnoreRules:
        rules = cls(root, skip)
        for folder, dirs, files in os.walk(root):
            here = Path(folder)
            rules._read(here, files)
            dirs[:] = [d for d in dirs if rules._enter(here / d)]
        return rules

    def _read(self, folder: Path, names: list[str]) -> None:
        lines: list[str] = []
        for name in IGNORE_FILES:
            if name in names:
                try:
                    lines += (
                        (folder / name).read_text(encoding="utf-8", errors="replace").split("\n")
                    )
                except OSError:
                    continue
        if lines:
            self.specs[folder] = GitIgnoreSpec.from_lines(lines)
        else:
            self.specs.pop(folder, None)

    def _decide(self, path: Path, is_dir: bool) -> bool | None:
        """True: ignored; False: re-included; None: no pattern matches."""
        folder = path.parent
        while True:
            spec = self.specs.get(folder)
            if spec is not None:
                relative = path.relative_to(folder).as_posix() + ("/" if is_dir else "")
                result = spec.check_file(relative)
                if result.include is not None:
                    return bool(result.include)
            if folder == self.root or folder == folder.parent:
                return None
            folder = folder.parent

    def _enter(self, folder: Path) -> bool:
        return (
            not folder.name.startswith(".")
            and folder not in self.skip
            and not self._decide(folder, True)
        )

    def ignored_folder(self, folder: Path) -> bool:
        """Whether ``folder`` (under the root) or a folder above it is not entered."""
        try:
            parts = folder.relative_to(self.root).parts
        except ValueError:
            return True
        here = self.root
        for part in parts:
            here = here / part
            if not self._enter(here):
                return True
        return False

    def ignored(self, path: Path) -> bool:
        """Whether ``path`` (a file under the root) is not a source: ignored by a pattern, under
        an ignored or hidden folder, hidden, or of a format ingest doesn't read."""
        try:
            parts = path.relative_to(self.root).parts
        except ValueError:
            return True
        if not parts or not supported(path.name):
            return True
        return self.ignored_folder(path.parent) or bool(self._decide(path, False))

    def files(self, under: Path | None = None) -> Iterator[Path]:
        """Every source file under the root (or under its folder ``under`` only), in a stable
        order, reading the ignore files on the way."""
        start = self.root if under is None else under
        if under is None:
            self.specs.clear()
        elif self.ignored_folder(under):
            return
        for folder, dirs, names in os.walk(start):
            here = Path(folder)
            self._read(here, names)
            dirs[:] = sorted(d for d in dirs if self._enter(here / d))
            for name in sorted(names):
                path = here / name
                if supported(name) and not self._decide(path, False) and path.is_file():
                    yield path


__all__ = ["IGNORE_FILES", "IgnoreRules", "is_ignore_file", "supported"]
