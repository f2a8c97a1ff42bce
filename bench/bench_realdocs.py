"""Real documentation in, a wiki worth keeping out (issue 24 items 1, 5, 6): what ingest keeps.

Two corpora nobody here wrote, ingested as a new user would (``ingest DIR --trust trusted
--yes``, the embedded extractive engine, rendering as configured):

- ``sqlite``: the 59 HTML pages of SQLite 3.40.1's manual listed in
  ``../shared/data/realdocs/sqlite3-doc.json`` (Debian ``sqlite3-doc``);
- ``git``: 57 HTML man pages and guides of git's documentation (Debian ``git-doc``), the
  commands and guides a new user reads first (:data:`GIT_PAGES`).

Measured per corpus: sources with text but no active claim (each named: a lost source), claims
and definition claims ("`--amend`: Replace..."), plans left waiting, topic pages (with the
titles a rule takes for noise: UI words, header fields, generic nouns; every title is listed
so a person can judge the rest), and the overview's lines.

    .venv/bin/python bench/bench_realdocs.py                 # both corpora, JSON on stdout
    .venv/bin/python bench/bench_realdocs.py --corpus sqlite --keep /tmp/sqlite-vault

``--keep`` keeps the vault (and reuses one already there) so the answers benchmark can ask it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from affidavit.extractive.lexicon import GENERIC_NAMES
from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.vault import Vault, init_vault, open_vault

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("AFFIDAVIT_SHARED_DATA", ROOT.parent / "shared" / "data"))
SQLITE_SET = SHARED_DATA / "realdocs" / "sqlite3-doc.json"
GIT_DOCS = Path("/usr/share/doc/git-doc")
GIT_PAGES = [
    *(
        f"git-{name}.html"
        for name in [
            "add",
            "am",
            "apply",
            "bisect",
            "blame",
            "branch",
            "checkout",
            "cherry-pick",
            "clean",
            "clone",
            "commit",
            "config",
            "describe",
            "diff",
            "difftool",
            "fetch",
            "format-patch",
            "gc",
            "grep",
            "init",
            "log",
            "merge",
            "mergetool",
            "mv",
            "notes",
            "pull",
            "push",
            "rebase",
            "reflog",
            "remote",
            "reset",
            "restore",
            "revert",
            "rm",
            "shortlog",
            "show",
            "sparse-checkout",
            "stash",
            "status",
            "submodule",
            "switch",
            "tag",
            "worktree",
        ]
    ),
    *(
        f"{name}.html"
        for name in [
            "gitattributes",
            "gitcli",
            "gitcore-tutorial",
            "giteveryday",
            "gitfaq",
            "gitglossary",
            "githooks",
            "gitignore",
            "gitrevisions",
            "gittutorial",
            "gittutorial-2",
            "gitworkflows",
            "user-manual",
        ]
    ),
]
NOISE_WORDS = frozenset(
    [
        "edit",
        "empty",
        "list",
        "delete",
        "save",
        "cancel",
        "close",
        "open",
        "new",
        "add",
        "remove",
        "search",
        "home",
        "next",
        "previous",
        "back",
        "menu",
        "help",
        "login",
        "logout",
        "submit",
        "ok",
        "yes",
        "no",
        "true",
        "false",
        "value",
        "boolean",
        "string",
        "number",
        "example",
        "examples",
        "note",
        "notes",
        "warning",
        "default",
        "option",
        "options",
        "description",
        "name",
        "synopsis",
        "see",
        "also",
        "mon",
        "tue",
        "wed",
        "thu",
        "fri",
        "sat",
        "sun",
        "jan",
        "feb",
        "mar",
        "apr",
        "may",
        "jun",
        "jul",
        "aug",
        "sep",
        "oct",
        "nov",
        "dec",
        "subject",
        "from",
        "to",
        "date",
        "reply",
        "cc",
        "bcc",
    ]
)
"""Words a topic page must not be named by alone: UI words, header fields, manual boilerplate."""


def corpus_files(name: str) -> list[Path]:
    if name == "sqlite":
        if not SQLITE_SET.is_file():
            return [SQLITE_SET]  # missing: the caller says what to install or set
        spec = json.loads(SQLITE_SET.read_text())
        root = Path(spec["doc_root"])
        return [root / f for f in spec["files"]]
    return [GIT_DOCS / f for f in GIT_PAGES]


def noise(title: str) -> bool:
    """A rule's verdict on a topic page's title: noise when every word is a UI word, a header
    field, manual boilerplate or a generic noun."""
    words = [w.strip(".,:;()").lower() for w in title.split()]
    return bool(words) and all(w in NOISE_WORDS or w in GENERIC_NAMES for w in words)


def ingest(name: str, work: Path, keep: Path | None) -> tuple[Vault, float, dict[str, Any]]:
    if keep is not None and (keep / ".affidavit").exists():
        return open_vault(keep), 0.0, {}
    folder = work / f"{name}-docs"
    folder.mkdir(parents=True)
    for path in corpus_files(name):
        shutil.copy(path, folder / path.name)
    vault, _ = init_vault(keep or work / f"{name}-vault")
    started = time.perf_counter()
    report = Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(folder)], "trusted")
    return vault, time.perf_counter() - started, report.totals()


def measure(vault: Vault) -> dict[str, Any]:
    db = vault.db
    sources = db.execute("SELECT id, origin, name FROM sources").fetchall()
    with_claims = {
        r[0]
        for r in db.execute(
            "SELECT DISTINCT e.source_id FROM evidence e JOIN claims c ON c.id = e.claim_id "
            "WHERE c.status = 'active'"
        )
    }
    lost = sorted(
        Path(r["origin"] or r["name"]).name for r in sources if r["id"] not in with_claims
    )
    claims = db.execute("SELECT text FROM claims WHERE status = 'active'").fetchall()
    pages = db.execute("SELECT slug, title, category FROM pages").fetchall()
    topics = sorted(r["title"] for r in pages if r["category"] == "topics")
    waiting = db.execute("SELECT COUNT(*) FROM plans WHERE status = 'pending'").fetchone()[0]
    context = (vault.root / "wiki" / "context.md").read_text()
    entries = [line for line in context.splitlines() if line and not line.startswith(("#", "[^"))]
    return {
        "sources": len(sources),
        "sources_without_claims": lost,
        "claims": len(claims),
        "definition_claims": sum(1 for r in claims if r["text"].startswith("`")),
        "plans_waiting": waiting,
        "topic_pages": len(topics),
        "topic_noise_by_rule": [t for t in topics if noise(t)],
        "topic_titles": topics,
        "context_lines": len(entries),
        "context": entries[:40],
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--corpus", choices=["sqlite", "git", "both"], default="both")
    parser.add_argument("--keep", type=Path, help="keep (or reuse) the vault here (one corpus)")
    args = parser.parse_args()
    names = ["sqlite", "git"] if args.corpus == "both" else [args.corpus]
    if args.keep is not None and len(names) > 1:
        parser.error("--keep takes one corpus: add --corpus sqlite or --corpus git")
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            vault, seconds, totals = ingest(name, Path(tmp), args.keep)
            try:
                result = measure(vault)
            finally:
                vault.close()
            out[name] = {"files": len(corpus_files(name)), "ingest_s": round(seconds, 1)}
            out[name].update(result)
            out[name]["ingest_totals"] = totals
    json.dump(out, sys.stdout, indent=2, ensure_ascii=False)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
