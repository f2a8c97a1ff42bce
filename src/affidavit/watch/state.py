"""What a watch last saw of a folder, kept across restarts: per file, its size, modification
time and SHA-256 (the source id its bytes make).

One JSON file per watched folder under ``<vault>/.affidavit/watch/``, named by a hash of the
folder's path and replaced atomically (unique temp file, fsync, rename), so a kill leaves the
last complete record. On start, every file is hashed again and compared with it: what changed,
appeared or vanished while the watch was down is found whatever the files' times say.
Everything read back is untrusted input (W10): a record that is not what this module writes is
ignored, which only means the folder is looked at afresh.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from ..hashing import sha256_file
from ..store.atomic import atomic_write

FORMAT = 1


@dataclass(frozen=True)
class Seen:
    size: int
    mtime_ns: int
    sha256: str


def state_file(state_dir: Path, root: Path) -> Path:
    key = hashlib.sha256(str(root).encode("utf-8", "surrogateescape")).hexdigest()[:24]
    return state_dir / "watch" / f"{key}.json"


def fingerprint(path: Path) -> Seen | None:
    """The file's size, time and hash now (None: it is gone or unreadable)."""
    try:
        info = path.stat()
        digest = sha256_file(str(path))
    except OSError:
        return None
    return Seen(info.st_size, info.st_mtime_ns, digest)


class Manifest:
    """The files of one watched folder as the watch last saw them, by path relative to it."""

    def __init__(self, state_dir: Path, root: Path) -> None:
        self.root = root
        self.path = state_file(state_dir, root)
        self.files: dict[str, Seen] = self._load()

    def _load(self) -> dict[str, Seen]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            return {}
        if (
            not isinstance(data, dict)
            or data.get("format") != FORMAT
            or data.get("root") != str(self.root)
        ):
            return {}
        files = data.get("files")
        seen: dict[str, Seen] = {}
        for name, row in files.items() if isinstance(files, dict) else ():
            if (
                isinstance(name, str)
                and isinstance(row, list)
                and len(row) == 3
                and isinstance(row[0], int)
                and isinstance(row[1], int)
                and isinstance(row[2], str)
            ):
                seen[name] = Seen(row[0], row[1], row[2])
        return seen

    def key(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def get(self, path: Path) -> Seen | None:
        return self.files.get(self.key(path))

    def set(self, path: Path, seen: Seen) -> None:
        self.files[self.key(path)] = seen

    def drop(self, path: Path) -> dict[Path, Seen]:
        """Forget ``path`` and, if it was a folder, every file under it; returns those, as they
        were last seen."""
        key = self.key(path)
        gone = [k for k in self.files if k == key or k.startswith(key + "/")]
        return {self.root / k: self.files.pop(k) for k in sorted(gone)}

    def paths(self) -> list[Path]:
        return [self.root / k for k in sorted(self.files)]

    def save(self) -> None:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        body = {
            "format": FORMAT,
            "root": str(self.root),
            "files": {k: [s.size, s.mtime_ns, s.sha256] for k, s in sorted(self.files.items())},
        }
        atomic_write(self.path, json.dumps(body, separators=(",", ":")).encode(), 0o600)


__all__ = ["Manifest", "Seen", "fingerprint", "state_file"]
