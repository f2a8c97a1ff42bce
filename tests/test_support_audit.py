"""The support audit (doctor's and lint's ``unsupported_claim``) gives what it gave before its
rows were worked through a source at a time: :func:`support_problems` is compared with its
former self (kept below) on a vault of claims that are supported, unsupported, uncertain,
moved, retyped, and resting on a source whose text is gone. (The headings' index is held to the
scan it replaced in tests/test_gate_indexes.py.)
"""

from __future__ import annotations

import random
import re
import sqlite3

from affidavit.errors import AffidavitError
from affidavit.evidence import normalize_quote
from affidavit.sources.store import SourceStore
from affidavit.support import UNCERTAIN, UNSUPPORTED, SupportChecker, headings_above
from affidavit.support.audit import SupportProblem, support_problems
from affidavit.vault import Vault

from .conftest import add_text


def _former_support_problems(
    db: sqlite3.Connection, store: SourceStore, checker: SupportChecker
) -> tuple[int, list[SupportProblem]]:
    """support_problems as it was: one row at a time, in claim order."""
    cursor = db.cursor()
    cursor.row_factory = None
    rows = cursor.execute(
        'SELECT c.id, c.page_slug, c.text, e.source_id, e.start, e."end", e.quote '
        "FROM claims c JOIN evidence e ON e.claim_id = c.id "
        "WHERE c.status = 'active' ORDER BY c.id, e.idx"
    ).fetchall()
    claims: dict[str, tuple[str, str, list[tuple[str, str]]]] = {}
    context: dict[str, list[str]] = {}
    unreadable: set[str] = set()
    for claim_id, page, text, source_id, start, end, quote in rows:
        entry = claims.setdefault(claim_id, (page or "", text, []))
        try:
            span = store.text(source_id)[start:end] if start is not None else quote
        except AffidavitError:
            unreadable.add(claim_id)
            continue
        if normalize_quote(span) != normalize_quote(quote):
            unreadable.add(claim_id)
            continue
        entry[2].append((source_id, span))
        if start is not None:
            context.setdefault(claim_id, []).extend(headings_above(store.text(source_id), start))
    problems: list[SupportProblem] = []
    for claim_id, (page, text, quotes) in claims.items():
        if claim_id in unreadable:
            continue
        verdict = checker.check(
            text,
            [span for _, span in quotes],
            context=list(dict.fromkeys(context.get(claim_id, []))),
        )
        if verdict.verdict in (UNCERTAIN, UNSUPPORTED):
            problems.append(
                SupportProblem(
                    claim_id,
                    page,
                    text,
                    verdict.verdict,
                    verdict.missing,
                    verdict.reason,
                    tuple(span for _, span in quotes),
                    tuple(source_id for source_id, _ in quotes),
                )
            )
    return len(claims), problems


SENTENCES = [
    "The Tamar Bridge carries 40,000 vehicles each day between Plymouth and Saltash.",
    "It opened in 1961 after three years of work.",
    "The treaty with Spain was signed by the envoy in Madrid.",
    "Our revenue from customs rose to 12 million dollars.",
    "She is best known for her work on the canal.",
    "The army was not paid for six months.",
]
NAMES = ["Denmark", "Lincoln", "Ohio", "1875", "Madrid"]


def _document(rnd: random.Random, chars: int) -> str:
    parts = ["# Annual Message\n\n" if rnd.random() < 0.7 else "#tag line\n\n"]
    size = 0
    while size < chars:
        if rnd.random() < 0.05:
            part = rnd.choice(["\n## Finance\n\n", "\n### The Army ###\n\n", "\n#nothing\n\n"])
        else:
            part = rnd.choice(SENTENCES) + (" " if rnd.random() < 0.8 else "\n\n")
        parts.append(part)
        size += len(part)
    return "".join(parts)


def test_the_audit_finds_what_it_found_one_row_at_a_time(vault: Vault) -> None:
    rnd = random.Random(7)
    texts = {
        add_text(vault, f"doc{n}.md", _document(rnd, size)): ""
        for n, size in enumerate([3_000, 150_000, 20_000, 5_000])
    }
    store = SourceStore(vault)
    for source_id in texts:
        texts[source_id] = store.text(source_id)
    db = vault.db
    spans = [
        (source_id, m.start(), m.end())
        for source_id, text in texts.items()
        for sentence in SENTENCES
        for m in _finditer(sentence, text)
    ]
    rnd.shuffle(spans)
    for n in range(600):
        claim_id = f"c-{rnd.getrandbits(64):016x}"
        cited = [rnd.choice(spans) for _ in range(rnd.choice([1, 1, 1, 2, 3]))]
        first = texts[cited[0][0]][cited[0][1] : cited[0][2]]
        text = rnd.choice(
            [first, first, first.replace("the", "the great"), first + f" in {rnd.choice(NAMES)}"]
        )
        text = text.replace("1961", rnd.choice(["1961", "1962"]))
        db.execute(
            "INSERT INTO claims (id, page_slug, section, position, text, status, trust, plan_id, "
            "created_at) VALUES (?, ?, 'Overview', ?, ?, ?, 'trusted', 'p', '2026-01-01')",
            (
                claim_id,
                rnd.choice(["", "tamar", "army"]),
                n,
                text,
                rnd.choice(["active"] * 9 + ["retracted"]),
            ),
        )
        for idx, (source_id, start, end) in enumerate(cited):
            # evidence is offsets (m021): its quote is the span the view computes; a quote
            # unlike its span can't be written, only the words recorded (their CRC) altered
            roll = rnd.random()
            if roll < 0.05:
                start, end = start + 3, end + 3  # moved
            db.execute(
                'INSERT INTO evidence (claim_id, idx, source_id, quote, start, "end", location) '
                "VALUES (?, ?, ?, NULL, ?, ?, '')",
                (claim_id, idx, source_id, start, end),
            )
            if 0.05 <= roll < 0.13:  # altered: the view shows no words
                db.execute(
                    "UPDATE evidence_rows SET crc = crc + 1 WHERE claim_id = ? AND idx = ?",
                    (claim_id, idx),
                )
    db.commit()
    checker = SupportChecker()
    before = _former_support_problems(db, SourceStore(vault), checker)
    assert before == support_problems(db, SourceStore(vault), checker)
    verdicts = {p.verdict for p in before[1]}
    assert verdicts == {UNCERTAIN, UNSUPPORTED} and before[0] > len(before[1]) > 20
    gone = list(texts)[2]  # a source whose text can't be read any more
    (
        vault.root / db.execute("SELECT text_file FROM sources WHERE id = ?", (gone,)).fetchone()[0]
    ).unlink()
    after = _former_support_problems(db, SourceStore(vault), checker)
    assert after == support_problems(db, SourceStore(vault), checker) and after != before


def _finditer(sentence: str, text: str) -> list[re.Match[str]]:
    return list(re.finditer(re.escape(sentence), text))
