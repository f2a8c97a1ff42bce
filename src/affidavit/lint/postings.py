"""The claim-word index's postings, packed: for each word, the claims that have it (by rowid,
ascending) in chunks of up to :data:`CHUNK`, each a row of ``word_postings`` (migration
``m028_word_postings``) holding its first and last claim and the others as gaps, LEB128 varints.
A posting costs 1–3 bytes instead of a row of its own (~12 bytes in ``claim_words`` with its
B-tree), and the claims of a word read back in the same order, chunk by chunk, so a reader that
stops after a few (:meth:`affidavit.lint.nearby._Known.holders`) reads a chunk or two.

Claims are only ever appended (the index is brought up to date in rowid order; a rebuild clears
it first): a word's new claims fill its last chunk, then new ones. ``words.n`` (migration
``m022_word_counts``) counts each word's postings; :func:`append` keeps it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Generator, Iterable, Iterator

CHUNK = 128
"""Claims per chunk at most: appending rewrites a word's last chunk, so this bounds that cost."""


def encode(gaps: Iterable[int]) -> bytes:
    """Positive integers as LEB128 varints."""
    out = bytearray()
    for gap in gaps:
        if gap <= 0:
            raise ValueError(f"postings must ascend (a gap of {gap})")
        while gap >= 0x80:
            out.append((gap & 0x7F) | 0x80)
            gap >>= 7
        out.append(gap)
    return bytes(out)


def decode(first: int, gaps: bytes) -> list[int]:
    """The chunk's claims: ``first``, then each gap added to the claim before it."""
    claims = [first]
    current, value, shift = first, 0, 0
    for byte in gaps:
        value |= (byte & 0x7F) << shift
        if byte & 0x80:
            shift += 7
        else:
            current += value
            claims.append(current)
            value, shift = 0, 0
    if shift:
        raise ValueError("a posting chunk ends inside a varint")
    return claims


def claims_of(db: sqlite3.Connection, word: str) -> Generator[int, None, None]:
    """The claims (rowids, ascending) the index holds for ``word``."""
    cursor = db.cursor()
    cursor.row_factory = None
    try:
        rows = cursor.execute(
            "SELECT first, gaps FROM word_postings "
            "WHERE word = (SELECT id FROM words WHERE word = ?) ORDER BY first",
            (word,),
        )
        for first, gaps in rows:
            yield from decode(int(first), bytes(gaps))
    finally:
        cursor.close()


def append(db: sqlite3.Connection, postings: dict[int, list[int]]) -> None:
    """Add ``postings`` (word id -> claims, ascending, each after every claim the word has) and
    count them in ``words.n``; a claim the word already has at or past it is skipped."""
    cursor = db.cursor()
    cursor.row_factory = None
    for word, claims in postings.items():
        last_row = cursor.execute(
            "SELECT first, last, n, gaps FROM word_postings WHERE word = ? "
            "ORDER BY first DESC LIMIT 1",
            (word,),
        ).fetchone()
        if last_row is not None:
            claims = [c for c in claims if c > int(last_row[1])]
        if not claims:
            continue
        rest = claims
        if last_row is not None and int(last_row[2]) < CHUNK:
            first, last, n = int(last_row[0]), int(last_row[1]), int(last_row[2])
            take, rest = rest[: CHUNK - n], rest[CHUNK - n :]
            cursor.execute(  # (not SQL's ||, which makes text of blobs)
                "UPDATE word_postings SET gaps = ?, last = ?, n = ? WHERE word = ? AND first = ?",
                (
                    bytes(last_row[3]) + encode(_gaps(last, take)),
                    take[-1],
                    n + len(take),
                    word,
                    first,
                ),
            )
        for start in range(0, len(rest), CHUNK):
            part = rest[start : start + CHUNK]
            cursor.execute(
                "INSERT INTO word_postings (word, first, last, n, gaps) VALUES (?, ?, ?, ?, ?)",
                (word, part[0], part[-1], len(part), encode(_gaps(part[0], part[1:]))),
            )
        cursor.execute("UPDATE words SET n = n + ? WHERE id = ?", (len(claims), word))
    cursor.close()


def _gaps(before: int, claims: list[int]) -> list[int]:
    gaps = []
    for claim in claims:
        gaps.append(claim - before)
        before = claim
    return gaps


def every_posting(db: sqlite3.Connection) -> Iterator[tuple[int, int]]:
    """Every (word id, claim) the index holds, by word then claim (doctor's and the tests' view
    of what ``claim_words`` held as rows)."""
    cursor = db.cursor()
    cursor.row_factory = None
    try:
        for word, first, gaps in cursor.execute(
            "SELECT word, first, gaps FROM word_postings ORDER BY word, first"
        ):
            for claim in decode(int(first), bytes(gaps)):
                yield int(word), claim
    finally:
        cursor.close()


def pack_rows(db: sqlite3.Connection, rows: Iterable[tuple[int, int]]) -> None:
    """Write ``rows`` ((word id, claim), ordered by word then claim) as chunks, without counting
    them (the migration moves postings ``words.n`` counts already)."""
    cursor = db.cursor()
    word: int | None = None
    claims: list[int] = []

    def flush() -> None:
        for start in range(0, len(claims), CHUNK):
            part = claims[start : start + CHUNK]
            cursor.execute(
                "INSERT INTO word_postings (word, first, last, n, gaps) VALUES (?, ?, ?, ?, ?)",
                (word, part[0], part[-1], len(part), encode(_gaps(part[0], part[1:]))),
            )

    for w, claim in rows:
        if w != word:
            if claims:
                flush()
            word, claims = w, []
        if not claims or claim > claims[-1]:
            claims.append(claim)
    if claims:
        flush()
    cursor.close()
