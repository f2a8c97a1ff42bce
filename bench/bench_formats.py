"""Office documents and books made from real speeches: whole paragraphs, no markup, no fragments.

Six State of the Union addresses (/work/shared/data/corpus/sotu.jsonl, public domain; spread over
the corpus: indices 0, 39, 78, 117, 156, 195 of 233) are cut into paragraphs of five sentences
and written as ``.docx``, ``.odt``, ``.pptx`` (one slide per paragraph) and ``.epub`` (one chapter
per speech) by the libraries (python-docx, odfpy, python-pptx, ebooklib) and, when Debian's
LibreOffice is installed (``soffice``), by LibreOffice too (the HTML of each speech converted to
docx, odt and epub by Writer; the library's pptx re-saved through odp by Impress). For each
producer and format:

- **paragraphs whole**: paragraphs found in the extracted text contiguously (whitespace folded);
- **markup leaks**: XML/HTML tags, entities or ``w:``/``a:``-prefixed names left in the text;
- **fragment claims**: every active claim of an extractive ingest of the six files (one vault
  each, ``ingest --yes``), judged by ``bench_extract.judge`` (markup, code or fragment);
- **templates**: every ``.ott`` text template LibreOffice ships (real ODF files, some written by
  OpenOffice.org 2) read as ``.odt``: read, holding no text, or an error;
- **hidden still flagged**: tests/office_docs.py's hidden-text document of the format, re-saved
  by LibreOffice (docx -> docx and odt, odt -> odt and docx, pptx -> pptx): how many of its hidden
  sentences are still flagged and the visible one clean. A sentence LibreOffice's conversion
  itself made visible (ODF's hidden section has no Word equivalent: it comes out as a plain
  section) is "missed" here although the converted document shows it.

    PYTHONPATH=src .venv/bin/python bench/bench_formats.py [--no-libreoffice] [--json]
"""

from __future__ import annotations

import argparse
import html
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/office_docs.py

from bench_extract import judge
from tests import office_docs

from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.sources.extract import DOCX, EPUB, ODT, PPTX, extract
from affidavit.sources.sanitizer import UNSEEN_KINDS
from affidavit.vault import init_vault

CORPUS = Path("/work/shared/data/corpus/sotu.jsonl")
MEDIA = {"docx": DOCX, "odt": ODT, "pptx": PPTX, "epub": EPUB}
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'])")
_LEAK = re.compile(
    r"</?[A-Za-z][\w:-]*[\s>/]|&(?:[a-z]+|#\d+);|\b(?:w|a|p|text|style|office):[a-z]"
)


def speeches(count: int) -> list[tuple[str, list[str]]]:
    rows = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]
    step = len(rows) // count
    chosen = [rows[i * step] for i in range(count)]
    out = []
    for row in chosen:
        sentences = _SENTENCE_END.split(" ".join(row["text"].split()))
        paragraphs = [" ".join(sentences[i : i + 5]) for i in range(0, len(sentences), 5)]
        out.append((f"{row['year']} {row['name']}", paragraphs))
    return out


def _fold(text: str) -> str:
    return " ".join(text.split())


def _soffice(args: list[str], work: Path) -> None:
    profile = (work / "lo-profile").as_uri()
    subprocess.run(
        ["soffice", "--headless", f"-env:UserInstallation={profile}", *args],
        check=True,
        capture_output=True,
        timeout=600,
    )


def library_files(work: Path, docs: list[tuple[str, list[str]]]) -> dict[str, list[Path]]:
    writers: dict[str, Callable[[str, list[str]], bytes]] = {
        "docx": office_docs.docx_of,
        "odt": office_docs.odt_of,
        "pptx": office_docs.pptx_of,
        "epub": lambda title, paragraphs: office_docs.epub_of(
            title, ["<html><body>" + "".join(f"<p>{html.escape(p)}</p>" for p in paragraphs)
                    + "</body></html>"]
        ),
    }  # fmt: skip
    files: dict[str, list[Path]] = {}
    for fmt, write in writers.items():
        folder = work / "library" / fmt
        folder.mkdir(parents=True)
        files[fmt] = []
        for n, (title, paragraphs) in enumerate(docs):
            path = folder / f"speech{n}.{fmt}"
            path.write_bytes(write(title, paragraphs))
            files[fmt].append(path)
    return files


def libreoffice_files(
    work: Path, docs: list[tuple[str, list[str]]], library: dict[str, list[Path]]
) -> dict[str, list[Path]]:
    source = work / "lo-html"
    source.mkdir()
    pages = []
    for n, (title, paragraphs) in enumerate(docs):
        body = "".join(f"<p>{html.escape(p)}</p>\n" for p in paragraphs)
        page = source / f"speech{n}.html"
        page.write_text(f"<html><body><h1>{html.escape(title)}</h1>\n{body}</body></html>")
        pages.append(str(page))
    files: dict[str, list[Path]] = {}
    for fmt in ("docx", "odt", "epub"):
        out = work / "libreoffice" / fmt
        _soffice(
            ["--infilter=HTML (StarWriter)", "--convert-to", fmt, "--outdir", str(out), *pages],
            work,
        )
        files[fmt] = sorted(out.glob(f"*.{fmt}"))
    middle = work / "lo-odp"
    _soffice(["--convert-to", "odp", "--outdir", str(middle), *map(str, library["pptx"])], work)
    out = work / "libreoffice" / "pptx"
    _soffice(["--convert-to", "pptx", "--outdir", str(out), *map(str, middle.glob("*.odp"))], work)
    files["pptx"] = sorted(out.glob("*.pptx"))
    return files


def measure(
    fmt: str, paths: list[Path], docs: list[tuple[str, list[str]]], work: Path
) -> dict[str, Any]:
    whole = total = leaks = 0
    for path, (_, paragraphs) in zip(sorted(paths), docs, strict=True):
        text = _fold(extract(path.read_bytes(), MEDIA[fmt], render=False).text)
        total += len(paragraphs)
        whole += sum(_fold(p) in text for p in paragraphs)
        leaks += len(_LEAK.findall(text))
    vault, _ = init_vault(work / f"vault-{path.parent.parent.name}-{fmt}")
    try:
        Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(path.parent)], "trusted")
        rows = vault.db.execute(
            "SELECT text FROM claims WHERE status = 'active' AND page_slug != ''"
        ).fetchall()
    finally:
        vault.close()
    verdicts = [judge(str(row[0])) for row in rows]
    return {
        "paragraphs_whole": whole,
        "paragraphs": total,
        "markup_leaks": leaks,
        "claims": len(verdicts),
        "fragment_claims": sum(v in ("fragment", "markup", "code") for v in verdicts),
        "bad_examples": [
            str(r[0])[:120] for r, v in zip(rows, verdicts, strict=True) if v != "prose"
        ][:5],
    }


def hidden_after_libreoffice(work: Path) -> dict[str, Any]:
    """tests/office_docs.py's hidden-text documents re-saved by LibreOffice: still flagged?"""
    made = {"docx": office_docs.hidden_docx(), "odt": office_docs.hidden_odt(),
            "pptx": office_docs.hidden_pptx()}  # fmt: skip
    results: dict[str, Any] = {}
    for fmt, data in made.items():
        folder = work / "hidden" / fmt
        folder.mkdir(parents=True)
        original = folder / f"hidden.{fmt}"
        original.write_bytes(data)
        targets = {"docx": ["odt", "docx"], "odt": ["docx", "odt"], "pptx": ["pptx"]}[fmt]
        for target in targets:
            out = folder / f"to-{target}"
            _soffice(["--convert-to", target, "--outdir", str(out), str(original)], work)
            result = extract((out / f"hidden.{target}").read_bytes(), MEDIA[target], render=False)
            text = result.text

            def unseen(sentence: str, text: str = text, flags: Any = result.flags) -> bool:
                at = _fold(text).find(_fold(sentence))
                if at < 0:
                    return True  # not in the text at all: not quotable either
                start = text.find(sentence[:20])
                return any(f.kind in UNSEEN_KINDS and f.start <= start < f.end for f in flags)

            hidden = office_docs.HIDDEN[fmt]
            results[f"{fmt} -> {target}"] = {
                "hidden_flagged": sum(unseen(s) for s in hidden.values()),
                "hidden": len(hidden),
                "missed": [k for k, s in hidden.items() if not unseen(s)],
                "visible_clean": not unseen(office_docs.VISIBLE),
            }
    return results


TEMPLATES = Path("/usr/lib/libreoffice/share/template")


def libreoffice_templates() -> dict[str, Any]:
    """LibreOffice's own text templates (real ODF files, some from OpenOffice.org 2): how many
    read, how many hold no text, and any other error."""
    from affidavit.errors import SourceError

    read = empty = 0
    errors: list[str] = []
    files = sorted(TEMPLATES.rglob("*.ott"))
    for path in files:
        try:
            extract(path.read_bytes(), ODT, render=False)
            read += 1
        except SourceError as exc:
            if "no text" in str(exc):
                empty += 1
            else:
                errors.append(f"{path.name}: {exc}")
    return {"templates": len(files), "read": read, "no_text": empty, "errors": errors}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--speeches", type=int, default=6)
    parser.add_argument("--no-libreoffice", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    docs = speeches(args.speeches)
    work = Path(tempfile.mkdtemp(prefix="bench-formats-"))
    report: dict[str, Any] = {"speeches": [t for t, _ in docs]}
    try:
        library = library_files(work, docs)
        report["library"] = {fmt: measure(fmt, paths, docs, work) for fmt, paths in library.items()}
        if args.no_libreoffice:
            report["libreoffice"] = "not asked for"
        elif shutil.which("soffice") is None:
            report["libreoffice"] = (
                "not installed (apt-get install libreoffice-writer-nogui libreoffice-impress-nogui)"
            )
        else:
            lo = libreoffice_files(work, docs, library)
            report["libreoffice"] = {
                fmt: measure(fmt, paths, docs, work) for fmt, paths in lo.items()
            }
            report["hidden_after_libreoffice"] = hidden_after_libreoffice(work)
            report["libreoffice_templates"] = libreoffice_templates()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print("speeches:", "; ".join(report["speeches"]))
    for producer in ("library", "libreoffice"):
        rows = report[producer]
        if not isinstance(rows, dict):
            print(f"{producer}: {rows}")
            continue
        for fmt, row in rows.items():
            print(
                f"{producer:11} {fmt:5} paragraphs whole {row['paragraphs_whole']}/{row['paragraphs']}"
                f"  markup leaks {row['markup_leaks']}  claims {row['claims']}"
                f"  fragment claims {row['fragment_claims']}"
            )
            for example in row["bad_examples"]:
                print(f"      {example}")
    for name, row in report.get("hidden_after_libreoffice", {}).items():
        print(
            f"hidden after LibreOffice {name:13} {row['hidden_flagged']}/{row['hidden']} flagged"
            f"  visible clean: {row['visible_clean']}  missed: {row['missed']}"
        )
    templates = report.get("libreoffice_templates")
    if templates:
        print(
            f"LibreOffice's .ott templates: {templates['read']}/{templates['templates']} read, "
            f"{templates['no_text']} hold no text, {len(templates['errors'])} errors"
        )
        for error in templates["errors"]:
            print(f"      {error}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
