"""The Python-docs corpus: 40 real documents Debian ships, as a new user would point Affidavit at them.

Reads the reStructuredText sources of the Python 3.11 tutorial, library reference and FAQ
(Debian package ``python3.11-doc``, ``/usr/share/doc/python3.11/html/_sources``), two rendered
HTML pages of the same docs, and seven man pages (roff, ``/usr/share/man/man1``), and copies them
into one folder with their own file names (``.rst`` for the sources, ``.html``, and ``.1`` for the
man pages, decompressed). Runs ``scripts/setup_testdata.sh`` when the docs are missing: it
installs ``python3.11-doc``, or unpacks it into ``.cache/testdata`` when installing it would
upgrade the system's Python (see ``bench/debian_files.py``).

    .venv/bin/python bench/pydocs_corpus.py OUT_DIR     # writes the 40 files, prints their names

Other benchmarks import :func:`build_corpus`.
"""

from __future__ import annotations

import gzip
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from debian_files import debian_path

DOCS = debian_path("/usr/share/doc/python3.11/html")
SOURCES = DOCS / "_sources"
MAN = Path("/usr/share/man/man1")
PACKAGE = "python3.11-doc"

RST = [
    # the tutorial
    "tutorial/appetite",
    "tutorial/interpreter",
    "tutorial/introduction",
    "tutorial/controlflow",
    "tutorial/datastructures",
    "tutorial/modules",
    "tutorial/inputoutput",
    "tutorial/errors",
    "tutorial/classes",
    "tutorial/stdlib",
    "tutorial/stdlib2",
    "tutorial/venv",
    "tutorial/floatingpoint",
    # the library reference
    "library/json",
    "library/shutil",
    "library/random",
    "library/re",
    "library/os.path",
    "library/pathlib",
    "library/argparse",
    "library/csv",
    "library/datetime",
    "library/collections",
    "library/itertools",
    "library/functools",
    "library/subprocess",
    "library/logging",
    "library/sqlite3",
    "library/tokenize",
    # the FAQ
    "faq/general",
    "faq/design",
]
HTML = ["library/venv", "library/bisect"]
MAN_PAGES = ["ls", "grep", "cp", "tar", "find", "sed", "python3"]
"""31 RST sources + 2 HTML pages + 7 man pages = 40 documents."""


def ensure_installed() -> None:
    """Install ``python3.11-doc`` with apt-get when its sources are missing."""
    if SOURCES.is_dir():
        return
    script = Path(__file__).resolve().parents[1] / "scripts" / "setup_testdata.sh"
    subprocess.run(["bash", str(script)], check=True)
    if not SOURCES.is_dir():
        raise SystemExit(f"the Python docs are missing: run {script} (Debian package {PACKAGE})")


def build_corpus(out: Path) -> list[Path]:
    """Copy the 40 documents into ``out`` (created); returns their paths, in a fixed order."""
    ensure_installed()
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for name in RST:
        target = out / (name.replace("/", "-") + ".rst")
        shutil.copyfile(SOURCES / f"{name}.rst.txt", target)
        written.append(target)
    for name in HTML:
        target = out / (name.replace("/", "-") + ".html")
        shutil.copyfile(DOCS / f"{name}.html", target)
        written.append(target)
    for name in MAN_PAGES:
        target = out / f"{name}.1"
        target.write_bytes(gzip.decompress((MAN / f"{name}.1.gz").read_bytes()))
        written.append(target)
    assert len(written) == 40, len(written)
    return written


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit("usage: bench/pydocs_corpus.py OUT_DIR")
    for path in build_corpus(Path(sys.argv[1])):
        print(path)


if __name__ == "__main__":
    main()
