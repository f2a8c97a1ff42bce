"""W12 by pixels (issue 23 item 4): what rendering catches, what it costs.

    .venv/bin/python bench/bench_render.py [--json]

Measures, on this machine:

* **techniques admitted unflagged**: issue 23's lists (27 HTML, 9 PDF, 6 markdown, and the PDF
  tricks beyond them) and 200 random clearly-hidden CSS combinations from the property test's
  generator (tests/test_hidden_property.py), each in a document with visible controls: hidden
  sentences not wholly flagged (goal 0), and controls flagged (goal 0);
* **visible sentences flagged** on real documents (the Python docs' HTML pages the tests read,
  the two Debian PDFs): goal <= 1 %;
* **cost**: rendering per HTML document and per PDF page (p50, p95, seconds), and extraction of
  those documents with and without rendering (the ingest's slow-down is the difference: the
  rest of an ingest does not change).
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from bench.pydocs_corpus import DOCS  # noqa: E402
from tests import hidden_issue23  # noqa: E402
from tests.pdf_tricks import TRICKS, page  # noqa: E402
from tests.test_hidden_property import (  # noqa: E402
    BACKGROUNDS,
    CLIPS,
    COLOURS,
    OPACITY,
    SIZES,
    TRANSFORMS,
    Style,
)
from tests.test_hidden_text import VISIBLE, covered, secret, untouched  # noqa: E402

from affidavit.sources import render_pdf  # noqa: E402
from affidavit.sources.extract import Extracted, extract  # noqa: E402
from affidavit.sources.render_html import available, measure  # noqa: E402
from affidavit.sources.sentences import number_sentences  # noqa: E402

UNSEEN = ("hidden_styling", "hidden", "struck", "html_comment")
AFTER = "The pier is 212 metres long."
HTML_PAGES = [
    "library/functools",
    "library/sqlite3",
    "library/venv",
    "library/bisect",
    "tutorial/controlflow",
    "tutorial/datastructures",
    "faq/general",
    "faq/programming",
]
PDFS = [
    Path("/usr/share/doc/libtasn1-doc/libtasn1.pdf"),
    Path("/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf"),
]


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0


def techniques() -> dict[str, object]:
    missed: list[str] = []
    dirty: list[str] = []
    total = 0
    for name, fragment in hidden_issue23.HTML.items():
        total += 1
        hidden = secret("Html")
        body = fragment.replace("{s}", hidden)
        body = body.replace("{v}", VISIBLE) if "{v}" in body else f"<p>{VISIBLE}</p>{body}"
        result = extract(f"<html><body>{body}<p>{AFTER}</p></body></html>".encode(), "text/html")
        missed += [] if covered(result, hidden) else [f"html: {name}"]
        dirty += [] if untouched(result, VISIBLE) and untouched(result, AFTER) else [name]
    for name in TRICKS:
        total += 1
        hidden = secret("Pdf")
        result = extract(page(TRICKS[name](hidden), VISIBLE, AFTER), "application/pdf")
        missed += [] if covered(result, hidden) else [f"pdf: {name}"]
        dirty += [] if untouched(result, VISIBLE) and untouched(result, AFTER) else [name]
    for name, fragment in hidden_issue23.MARKDOWN.items():
        total += 1
        hidden = secret("Mark")
        text = f"# Port\n\n{VISIBLE}\n\n{fragment.replace('{s}', hidden)}\n\n{AFTER}\n"
        result = extract(text.encode(), "text/markdown")
        missed += [] if covered(result, hidden) else [f"markdown: {name}"]
        dirty += [] if untouched(result, VISIBLE) and untouched(result, AFTER) else [name]
    # the generator: random combinations the oracle calls clearly hidden, ten per document
    rng = random.Random(23)
    generated = 0
    generated_missed = 0
    while generated < 200:
        styles = []
        while len(styles) < 10:
            style = Style(
                rng.choice(sorted(COLOURS)),
                rng.choice(sorted(BACKGROUNDS)),
                rng.choice(OPACITY),
                rng.choice(SIZES),
                rng.choice(sorted(TRANSFORMS)),
                rng.choice(sorted(CLIPS)),
            )
            if style.clearly_hidden():
                styles.append(style)
        sentences = [secret(f"Gen{generated + i:04d}") for i in range(len(styles))]
        body = "".join(
            f'<div style="background:{s.background};padding:12px 8px">'
            f'<p style="{s.css()}">{sentence}</p></div>'
            for s, sentence in zip(styles, sentences, strict=True)
        )
        result = extract(
            f"<html><body><p>{VISIBLE}</p>{body}<p>{AFTER}</p></body></html>".encode(),
            "text/html",
        )
        generated += len(styles)
        generated_missed += sum(not covered(result, s) for s in sentences)
        if not (untouched(result, VISIBLE) and untouched(result, AFTER)):
            dirty.append("generated document")
    return {
        "listed": total,
        "listed_unflagged": missed,
        "generated": generated,
        "generated_unflagged": generated_missed,
        "controls_flagged": dirty,
    }


def _flagged_share(result: Extracted) -> tuple[int, int]:
    marks = [(f.start, f.end) for f in result.flags if f.kind in UNSEEN]
    sentences = number_sentences(result.text)
    hit = sum(any(a < s.end and s.start < max(b, a + 1) for a, b in marks) for s in sentences)
    return hit, len(sentences)


def real_documents() -> dict[str, object]:
    rows = []
    html_costs: list[float] = []
    for name in HTML_PAGES:
        data = (DOCS / f"{name}.html").read_bytes()
        started = time.perf_counter()
        plain = extract(data, "text/html", render=False)
        rules = time.perf_counter() - started
        started = time.perf_counter()
        result = extract(data, "text/html")
        both = time.perf_counter() - started
        started = time.perf_counter()
        measure(data, "text/html; charset=utf-8")
        html_costs.append(time.perf_counter() - started)
        hit, count = _flagged_share(result)
        rows.append(
            {"document": f"{name}.html", "sentences": count, "flagged": hit,
             "extract_rules_s": round(rules, 2), "extract_rendered_s": round(both, 2),
             "chars": len(plain.text)}
        )  # fmt: skip
    pdf_page_costs: list[float] = []
    for path in PDFS:
        data = path.read_bytes()
        started = time.perf_counter()
        plain = extract(data, "application/pdf", render=False)
        rules = time.perf_counter() - started
        started = time.perf_counter()
        result = extract(data, "application/pdf")
        both = time.perf_counter() - started
        pages = len(plain.text_map["pages"])
        started = time.perf_counter()
        render_pdf.render_pdf(data, pages)
        pdf_page_costs += [(time.perf_counter() - started) / pages] * pages
        import pypdfium2

        document = pypdfium2.PdfDocument(data)
        for index in range(len(document)):
            one = document[index]
            started = time.perf_counter()
            render_pdf.page_glyphs(one)
            pdf_page_costs.append(time.perf_counter() - started)
            one.close()
        document.close()
        hit, count = _flagged_share(result)
        rows.append(
            {"document": path.name, "sentences": count, "flagged": hit, "pages": pages,
             "extract_rules_s": round(rules, 2), "extract_rendered_s": round(both, 2)}
        )  # fmt: skip
    flagged = sum(int(str(r["flagged"])) for r in rows)
    sentences = sum(int(str(r["sentences"])) for r in rows)
    per_page = pdf_page_costs[len(pdf_page_costs) // 2 :]  # the in-process page timings
    return {
        "documents": rows,
        "flagged_share": round(flagged / max(sentences, 1), 4),
        "html_document_s": {
            "p50": round(statistics.median(html_costs), 2),
            "p95": round(_percentile(html_costs, 0.95), 2),
        },
        "pdf_page_s": {
            "p50": round(statistics.median(per_page), 3),
            "p95": round(_percentile(per_page, 0.95), 3),
        },
    }


def main() -> None:
    if available():
        raise SystemExit(f"no HTML renderer: {available()}")
    measure(b"<p>warm up</p>", "text/html")  # the browser starts once
    report = {"techniques": techniques(), "real": real_documents()}
    if "--json" in sys.argv:
        print(json.dumps(report, indent=2))
        return
    t = report["techniques"]
    print(f"listed techniques: {t['listed']}, unflagged: {t['listed_unflagged']}")  # type: ignore[index]
    print(f"generated: {t['generated']}, unflagged: {t['generated_unflagged']}")  # type: ignore[index]
    print(f"controls flagged: {t['controls_flagged']}")  # type: ignore[index]
    real = report["real"]
    for row in real["documents"]:  # type: ignore[index]
        print(row)
    print(f"visible sentences flagged: {real['flagged_share']:.2%}")  # type: ignore[index]
    print(f"HTML document render: {real['html_document_s']}")  # type: ignore[index]
    print(f"PDF page render: {real['pdf_page_s']}")  # type: ignore[index]


if __name__ == "__main__":
    main()
