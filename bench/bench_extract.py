"""Clean text on real documentation: claims that are code, markup or fragments, file-name titles.

Ingests the 40 Python-docs documents (bench/pydocs_corpus.py: 31 RST sources, 2 HTML pages, 7 man
pages) into a fresh vault with the extractive provider, every plan applied (trusted, as
``ingest --yes``), then judges a fixed sample of active claims and every source page's title.

    .venv/bin/python bench/bench_extract.py [--sample 200] [--docs 40] [--json] [--show]

Run it once with this checkout's ``src`` on PYTHONPATH ("after") and once with a checkout of the
code before ("before": ``PYTHONPATH=/path/to/old/src ... --before``). ``--before`` renames the man
pages ``*.1`` to ``*.1.txt``, since the old code refused the ``.1`` extension.

The automatic judge (:func:`judge`), one verdict per claim text:

- **markup**: reStructuredText or roff syntax a reader of the rendered page never sees: a role
  (``:mod:`json```), backticks, ``**``, ``*word*`` emphasis markers, underline runs (``^^^^``,
  ``====``, ``----``), an explicit markup start (``.. ``), a ``|substitution|``, ``[1]_``, roff
  escapes (``\\fB``, ``\\-``), an HTML tag, a leading ``#``;
- **code**: an interpreter or shell prompt (``>>>``, ``...``, ``$ ``), a Python keyword opening a
  statement (``def``, ``import``, ``return``, ``class X(``), a bare call or signature
  (``dumps(obj, *, skipkeys=False)``), a repr (``Token(type='END'``), or more than 12 % of its
  characters being brackets, quotes, ``=`` and other symbols;
- **fragment**: under four words, no letter-initial word, a lower-case start that is not an
  identifier or option, or no closing punctuation (``.``, ``!``, ``?``, ``:``, ``)``, a quote);
- else **prose**.

``--show`` prints every sampled claim with its verdict, for checking by hand.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pydocs_corpus import build_corpus

from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.from_config import provider_from_config
from affidavit.vault import init_vault

_MARKUP = re.compile(
    r":[\w.:+-]+:`|`|\*\*|(?<![\w*])\*\w[^*]*\w\*(?![\w*])|\^{3,}|={3,}|-{4,}|~{3,}|(?:^|\s)\.\. "
    r"|\|\w[\w -]*\||\]_|\\f[BIRP(\[]|\\-|</?[a-z][a-z0-9]*[\s>/]|^#"
)
_PROMPT = re.compile(r"^(?:>>>|\.\.\.\s|\$ |% )")
_STATEMENT = re.compile(
    r"^(?:def|class|import|from \w[\w.]* import|return|raise|yield|lambda|for \w+ in|print\()\b"
)
_CALL = re.compile(r"^[\w.]+\([^)]*\)(?:\s*->\s*\S+)?$")
_REPR = re.compile(r"\b[A-Z]\w*\(\w+=['\"]")
_SYMBOLS = set("()[]{}<>=+*/\\|&^%$#@~'\"`;:")
_CLOSING = (".", "!", "?", ":", ")", '"', "'", "”", "’")


def judge(text: str) -> str:
    """``markup``, ``code``, ``fragment`` or ``prose`` (see the module docstring)."""
    text = " ".join(text.split())
    if _MARKUP.search(text):
        return "markup"
    if _PROMPT.match(text) or _STATEMENT.match(text) or _CALL.match(text) or _REPR.search(text):
        return "code"
    if sum(c in _SYMBOLS for c in text) > 0.12 * max(1, len(text)):
        return "code"
    words = text.split()
    if len(words) < 4 or not any(w[:1].isalpha() for w in words):
        return "fragment"
    first = words[0]
    if first[:1].islower() and not re.match(r"^[a-z_][\w.]*[\w)]$|^-", first):
        return "fragment"
    if not text.endswith(_CLOSING):
        return "fragment"
    return "prose"


def file_name_title(title: str, file_name: str) -> bool:
    """True when a page title is its source's file name (with or without the extension, any
    separators): "appetite.rst", "tutorial-appetite", "Tutorial Appetite"."""

    def norm(s: str) -> str:
        return " ".join(re.split(r"[\s._-]+", s.lower())).strip()

    stem = file_name
    for _ in range(2):
        stem = stem.rsplit(".", 1)[0] if "." in stem else stem
    t = norm(title)
    return t in (norm(file_name), norm(stem), norm(file_name.rsplit(".", 1)[0])) or title.endswith(
        (".rst", ".txt", ".md", ".html", ".1")
    )


def _cpu() -> float:
    """CPU seconds of this process and its finished children (git): on a shared, loaded machine
    wall time says more about the neighbours than about the code."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--sample", type=int, default=200)
    parser.add_argument("--docs", type=int, default=40, help="the first N of the 40 documents")
    parser.add_argument("--before", action="store_true", help="name man pages *.1.txt")
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--show", action="store_true", help="print every sampled claim")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-extract-"))
    try:
        corpus = build_corpus(work / "all")
        docs = work / "docs"
        docs.mkdir()
        names: dict[str, str] = {}
        for path in sorted(corpus, key=lambda p: p.name)[: args.docs]:
            name = path.name + (".txt" if args.before and path.suffix == ".1" else "")
            shutil.copy(path, docs / name)
            names[name] = path.name
        size = sum(p.stat().st_size for p in docs.iterdir())
        vault, _ = init_vault(work / "vault")
        provider = provider_from_config(vault.config, "extractive")
        started, cpu = time.perf_counter(), _cpu()
        report = Ingestor(vault, provider, apply_now=True).run([str(docs)], "trusted")
        seconds, cpu = time.perf_counter() - started, _cpu() - cpu
        rows = vault.db.execute(
            "SELECT id, text FROM claims WHERE status = 'active' AND page_slug != '' ORDER BY id"
        ).fetchall()
        sample = random.Random(args.seed).sample(rows, min(args.sample, len(rows)))
        verdicts = [(judge(text), text) for _, text in sample]
        counts = {kind: sum(v == kind for v, _ in verdicts) for kind in ("code", "markup")}
        counts["fragment"] = sum(v == "fragment" for v, _ in verdicts)
        bad = counts["code"] + counts["markup"] + counts["fragment"]
        titles = vault.db.execute(
            "SELECT DISTINCT p.title, s.name FROM pages p JOIN claims c ON c.page_slug = p.slug "
            "JOIN evidence e ON e.claim_id = c.id JOIN sources s ON s.id = e.source_id "
            "WHERE p.category = 'sources'"
        ).fetchall()
        by_name = [(t, n) for t, n in titles if file_name_title(t, n)]
        sources = vault.db.execute("SELECT count(*) FROM sources").fetchone()[0]
        result = {
            "documents": len(names),
            "sources": sources,
            "source_mb": round(size / 1e6, 3),
            "seconds": round(seconds, 1),
            "mb_per_second": round(size / 1e6 / seconds, 4),
            "cpu_seconds": round(cpu, 1),
            "mb_per_cpu_second": round(size / 1e6 / cpu, 4),
            "chunks": report.totals()["chunks"],
            "active_claims": len(rows),
            "sampled": len(sample),
            "code": counts["code"],
            "markup": counts["markup"],
            "fragment": counts["fragment"],
            "bad_share": round(bad / max(1, len(sample)), 4),
            "source_pages": len({t for t, _ in titles}),
            "file_name_titles": sorted({t for t, _ in by_name}),
        }
        vault.close()
        if args.show:
            for verdict, text in verdicts:
                print(f"{verdict:>8}  {' '.join(text.split())[:200]}")
        if args.json:
            print(json.dumps(result, indent=2))
        else:
            for key, value in result.items():
                print(f"{key:>18}: {value}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
