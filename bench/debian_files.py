"""Where a file of a Debian documentation package is on this machine.

``scripts/setup_testdata.sh`` installs the packages tests and benchmarks read. A package whose
install would upgrade the system's own packages (``python3.11-doc`` asks for the newest
``python3.11``) is not installed: its ``.deb`` is unpacked under ``.cache/testdata/root`` in
this checkout instead, and :func:`debian_path` finds the file there.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
UNPACKED = ROOT / ".cache" / "testdata" / "root"


def debian_path(path: str) -> Path:
    """The installed ``path`` when it exists, else its copy unpacked by setup_testdata.sh
    (which may not exist either: callers check and name the setup script)."""
    system = Path(path)
    if system.exists():
        return system
    return UNPACKED / path.lstrip("/")
