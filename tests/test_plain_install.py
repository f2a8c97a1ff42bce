"""A plain ``pip install`` (no extras) works end to end: no optional module is imported unless used.

The package runs in a subprocess whose ``sitecustomize`` makes every optional extra unimportable
(onnxruntime, tokenizers, fastapi, starlette, uvicorn, anthropic, llama_cpp, mcp, psycopg),
as on a machine where they were never installed: ingest of 11 sources (so the automatic lint
runs), lint, search and ask succeed; the commands that need an extra say which, in one line.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT, SAMPLES

EXTRAS = (
    # numpy is no extra's: spaCy (the support check's parser) and pydivsufsort depend on it
    "onnxruntime",
    "tokenizers",
    "fastapi",
    "starlette",
    "uvicorn",
    "anthropic",
    "llama_cpp",
    "mcp",
    "psycopg",
)

BLOCKER = f'''
import sys

BLOCKED = {set(EXTRAS)!r}


class NotInstalled:
    """A meta path finder that makes the optional extras (and their submodules) unimportable."""

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None


sys.meta_path.insert(0, NotInstalled())
'''


@pytest.fixture
def plain(tmp_path: Path) -> dict[str, str]:
    """The environment of a process in which no optional extra can be imported."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(BLOCKER)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(ROOT / "src")])
    return env


def affidavit(env: dict[str, str], *args: str, code: int = 0) -> str:
    done = subprocess.run(
        [sys.executable, "-c", "from affidavit.cli import main; main()", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=110,
    )
    output = done.stdout + done.stderr
    assert "Traceback" not in output, output
    assert done.returncode == code, output
    return output


def eleven_sources(folder: Path) -> Path:
    """Eleven small markdown sources: pairs of paragraphs of the bundled 1941 address."""
    folder.mkdir()
    text = (SAMPLES / "sotu" / "1941-roosevelt.md").read_text(encoding="utf-8")
    paragraphs = [p for p in text.split("\n\n")[1:] if p.strip()]
    for n in range(11):
        pair = "\n\n".join(paragraphs[2 * n : 2 * n + 2])
        assert pair, "the sample is long enough for eleven pieces"
        (folder / f"part-{n:02}.md").write_text(f"# The 1941 address, part {n + 1}\n\n{pair}\n")
    return folder


def test_the_blocker_blocks(plain: dict[str, str]) -> None:
    probe = (
        "import importlib\n"
        f"for m in {EXTRAS!r}:\n"
        "    try:\n"
        "        importlib.import_module(m)\n"
        "    except ModuleNotFoundError:\n"
        "        continue\n"
        "    raise SystemExit(m)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], env=plain, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_ingest_lint_and_ask_without_any_extra(plain: dict[str, str], tmp_path: Path) -> None:
    vault = str(tmp_path / "vault")
    affidavit(plain, "init", vault)
    sources = eleven_sources(tmp_path / "sources")
    out = affidavit(plain, "--vault", vault, "ingest", str(sources), "--trust", "trusted", "--yes")
    assert "Automatic lint (lint.every_ingests) run 1" in out  # 11 sources: it fired
    affidavit(plain, "--vault", vault, "lint")
    out = affidavit(plain, "--vault", vault, "search", "four freedoms")
    assert "freedom" in out.lower()
    out = affidavit(plain, "--vault", vault, "ask", "What are the four freedoms?")
    assert "freedom" in out.lower()
    affidavit(plain, "--vault", vault, "doctor")
    # what needs an extra says so in one line, with the install command
    # reindex rebuilds the search index (no extra needed) and says how to add vectors
    out = affidavit(plain, "--vault", vault, "reindex")
    assert out.startswith("search index: ") and "pip install 'affidavit[embeddings]'" in out
    out = affidavit(plain, "serve", "--vault", vault, "--check", code=1)
    assert "affidavit[server]" in out and len(out.strip().splitlines()) == 1
