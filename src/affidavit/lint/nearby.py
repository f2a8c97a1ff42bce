"""The candidate pairs a few claims are part of, found through the claim-word index instead of
by reading the wiki: what :func:`affidavit.lint.candidates.search_pairs` with ``involving`` gives,
at a cost that follows the claims asked about, not the wiki's size.

The full search (:func:`~affidavit.lint.candidates.related_pairs`) reads every active claim,
counts in how many claims each word occurs (its document frequency, ``df``), puts each claim in
the buckets of its :data:`~affidavit.lint.candidates.RARE_WORDS` rarest words shared by 2 to
:data:`~affidavit.lint.candidates.MAX_BUCKET` claims, and pairs the claims of each bucket. A pair
one of the asked claims is part of shares one of that claim's rarest words, so only the buckets
of those words matter, and each holds at most ``MAX_BUCKET`` claims. The index
(``claim_words``, migration ``m017_claim_words``; words by integer since
``m021b_lean_words_and_admissions``, postings packed in ``word_postings`` since
``m028_word_postings``, :mod:`.postings`: each claim's words as
:func:`~affidavit.lint.reading.read_claim` reads them, by the claim's rowid) answers "which
claims have this word" and, counted up to ``MAX_BUCKET + 1``, the word's ``df``; the claims are
read (and their rarest words worked out) only for the words of those buckets.

The index is brought up to date when it is read (:func:`index_claims`: the claims past the
largest rowid it holds; a claim's text never changes once written). Which claims count — active,
with evidence of a known source, and not a context entry that only repeats a page claim's quote —
is decided as :func:`~affidavit.lint.candidates.load_claims` decides it, in SQL, when the index
is read. The pairs come in the order the full search gives them (the buckets in the order their
words are first used by the claims in ``(created_at, id)`` order; in each, by the claims' order),
each where it first comes; tests/test_lint_nearby.py compares both on random and real wikis.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from ..db import read_snapshot, transaction
from ..sources.lineage import version_keys
from ..store.render import CONTEXT_ARCHIVE
from ..support.facts import Sentence
from . import postings
from .candidates import (
    MAX_BUCKET,
    RARE_WORDS,
    Candidate,
    ClaimRow,
    Search,
    Subjects,
    Thresholds,
    classify,
    data_version,
    search_pairs,
)
from .reading import read_claim, sentence

INDEX_BATCH = 5000
"""Claims read and indexed per statement when the index catches up."""

_OVERVIEW_KEPT = """
    SELECT EXISTS (
        SELECT 1 FROM evidence e JOIN sources s ON s.id = e.source_id
        WHERE e.claim_id = ? AND NOT EXISTS (
            SELECT 1 FROM evidence e2 JOIN claims c2 ON c2.id = e2.claim_id
            WHERE e2.source_key = e.source_key AND e2.start = e.start AND e2."end" = e."end"
              AND c2.status = 'active' AND c2.page_slug NOT IN ('', ?)))
"""
"""Whether an active context entry (in context.md or its archive) is one
:func:`~affidavit.lint.candidates.load_claims` keeps: one of its quotes is not a page claim's."""


def index_claims(db: sqlite3.Connection) -> int:
    """Bring the claim-word index up to date with ``claims`` (every claim past the largest rowid
    indexed, and everything again if the rows it ended on are no longer the same claims);
    returns the claims indexed now."""
    row = db.execute("SELECT upto, claim FROM claim_words_state").fetchone()
    top = db.execute("SELECT coalesce(max(rowid), 0) FROM claims").fetchone()[0]
    if row is not None and row[0] == top and _same_claim(db, row[0], row[1]):
        return 0  # (the usual case after a look-up: nothing to write, no write transaction)
    done = 0
    with transaction(db):
        row = db.execute("SELECT upto, claim FROM claim_words_state").fetchone()
        upto = 0
        if row is not None and _same_claim(db, row[0], row[1]):
            upto = int(row[0])
        else:
            db.execute("DELETE FROM word_postings")
            db.execute("UPDATE words SET n = 0")  # (m022's count: postings.append counts)
        while True:
            rows = db.execute(
                "SELECT c.rowid, c.id, c.text, EXISTS (SELECT 1 FROM evidence e JOIN sources s "
                "ON s.id = e.source_id WHERE e.claim_id = c.id) FROM claims c WHERE c.rowid > ? "
                "ORDER BY c.rowid LIMIT ?",
                (upto, INDEX_BATCH),
            ).fetchall()
            if not rows:
                break
            by_word: dict[str, list[int]] = {}
            for r in rows:
                if r[3]:
                    for word in read_claim(r[2])[0]:
                        by_word.setdefault(word, []).append(int(r[0]))
            postings.append(db, _word_ids(db, by_word))
            upto, last = int(rows[-1][0]), str(rows[-1][1])
            done += len(rows)
            db.execute("DELETE FROM claim_words_state")
            db.execute("INSERT INTO claim_words_state (upto, claim) VALUES (?, ?)", (upto, last))
    return done


def _word_ids(db: sqlite3.Connection, by_word: dict[str, list[int]]) -> dict[int, list[int]]:
    """``by_word`` keyed by each word's id (new words given one, in sorted order)."""
    words = sorted(by_word)
    db.executemany("INSERT OR IGNORE INTO words (word) VALUES (?)", ((w,) for w in words))
    ids: dict[int, list[int]] = {}
    for start in range(0, len(words), 500):
        part = words[start : start + 500]
        marks = ",".join("?" * len(part))
        for word_id, word in db.execute(
            f"SELECT id, word FROM words WHERE word IN ({marks})", part
        ).fetchall():
            ids[int(word_id)] = by_word[str(word)]
    return dict(sorted(ids.items()))


def _same_claim(db: sqlite3.Connection, rowid: int, claim: str) -> bool:
    if rowid == 0:
        return True
    found = db.execute("SELECT id FROM claims WHERE rowid = ?", (rowid,)).fetchone()
    return found is not None and str(found[0]) == claim


OTHERS_READ = 5000
"""At most this many claims that may not count are read for their words (:meth:`_Known.others`);
past it, how common a word is comes from its count only when even all of them could not bring
it down to a bucket's size, else from its postings."""


class _Known:
    """What this search has read: claims by rowid, each word's eligible claims (up to
    ``MAX_BUCKET + 1`` of them) and each claim's rarest shared words. Which claims count is
    decided from the few that don't: the claims not active and the context entries, read once
    through their indexes (a claim without evidence of a known source is never indexed).

    How common a word is (:meth:`df`) comes from its count of postings (``words.n``, migration
    ``m022_word_counts``) without reading them, when none of those few claims has the word
    (then every posting is an eligible claim) or when, even if all of those that have it were
    among its postings, more than the cap would remain; otherwise from its postings, read."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.cursor = db.cursor()
        self.cursor.row_factory = None
        self.claims: dict[int, ClaimRow] = {}
        self.readings: dict[int, tuple[set[str], bool]] = {}
        self.members: dict[str, list[int]] = {}
        self.rarest: dict[int, list[str]] = {}
        self.complete: set[str] = set()
        """The words whose every eligible claim :attr:`members` holds."""
        self.inactive = {
            int(r[0])
            for r in self.cursor.execute(
                "SELECT rowid FROM claims WHERE status < 'active' OR status > 'active'"
            )
        }
        self.overview: dict[int, bool | None] = {
            int(r[0]): None
            for r in self.cursor.execute(
                "SELECT rowid FROM claims WHERE page_slug IN ('', ?)", (CONTEXT_ARCHIVE,)
            )
        }
        self.counts: dict[str, int] = {}
        """Each word's ``words.n`` (0: not in the index), read as needed (:meth:`count`)."""
        self._others: Counter[str] | None = None

    def others(self) -> Counter[str] | None:
        """For each word, how many of the claims that may not count (not active, or context
        entries) have it: an eligible claim's postings are those of the word less at most
        these. None when there are more than :data:`OTHERS_READ` of them (a wiki with a long
        history of superseded claims): reading them all would cost more than it saves."""
        if len(self.inactive) + len(self.overview) > OTHERS_READ:
            return None
        if self._others is None:
            self._others = Counter()
            wanted = sorted(self.inactive | set(self.overview))
            for start in range(0, len(wanted), 500):
                part = wanted[start : start + 500]
                marks = ",".join("?" * len(part))
                for (text,) in self.cursor.execute(
                    f"SELECT text FROM claims WHERE rowid IN ({marks})", part
                ):
                    self._others.update(read_claim(str(text))[0])
        return self._others

    def count(self, words: Iterable[str]) -> None:
        """Read the ``words.n`` of ``words`` not read yet."""
        wanted = sorted({w for w in words if w not in self.counts})
        for start in range(0, len(wanted), 500):
            part = wanted[start : start + 500]
            marks = ",".join("?" * len(part))
            for word in part:
                self.counts[word] = 0
            for word, n in self.cursor.execute(
                f"SELECT word, n FROM words WHERE word IN ({marks})", part
            ):
                self.counts[str(word)] = int(n)

    def eligible(self, rowid: int) -> bool:
        """Whether :func:`~affidavit.lint.candidates.load_claims` returns the (indexed) claim."""
        if rowid in self.inactive:
            return False
        if rowid not in self.overview:
            return True
        kept = self.overview[rowid]
        if kept is None:
            (claim,) = self.cursor.execute(
                "SELECT id FROM claims WHERE rowid = ?", (rowid,)
            ).fetchone()
            row = self.db.execute(_OVERVIEW_KEPT, (claim, CONTEXT_ARCHIVE)).fetchone()
            kept = self.overview[rowid] = bool(row[0])
        return kept

    def holders(self, word: str, cap: int = MAX_BUCKET) -> list[int]:
        """The eligible claims with ``word`` (rowids): all of them, or ``cap + 1`` when there
        are more than ``cap``."""
        found = self.members.get(word)
        if found is not None and (word in self.complete or len(found) > cap):
            return found
        found = self.members[word] = []
        rows = postings.claims_of(self.db, word)
        for rowid in rows:
            if self.eligible(rowid):
                found.append(rowid)
                if len(found) > cap:
                    break
        else:
            self.complete.add(word)
        rows.close()
        return found

    def df(self, word: str, cap: int = MAX_BUCKET) -> int:
        """The number of eligible claims with ``word``, or ``cap + 1`` when it is more."""
        n = self.counts.get(word)
        if n is None:
            self.count([word])
            n = self.counts[word]
        known = self.others()
        others = known[word] if known is not None else len(self.inactive) + len(self.overview)
        if others == 0:
            return min(n, cap + 1)
        if n - others > cap:
            return cap + 1
        return min(len(self.holders(word, cap)), cap + 1)

    def reading(self, rowid: int) -> tuple[set[str], bool]:
        """:func:`~affidavit.lint.reading.read_claim` of a claim read (:func:`_read_claims`),
        read the first time it is asked for, with the counts of its words."""
        found = self.readings.get(rowid)
        if found is None:
            found = self.readings[rowid] = read_claim(self.claims[rowid].text)
            self.count(found[0])
        return found

    def words(self, rowid: int) -> set[str]:
        return self.reading(rowid)[0]

    def read_all(self, rowids: Iterable[int]) -> None:
        """:meth:`reading` of each of ``rowids`` (claims read), their words counted at once."""
        words: set[str] = set()
        for rowid in rowids:
            if rowid not in self.readings:
                self.readings[rowid] = read_claim(self.claims[rowid].text)
                words |= self.readings[rowid][0]
        self.count(words)

    def top(self, rowid: int) -> list[str]:
        """The claim's :data:`RARE_WORDS` rarest words shared by 2 to ``MAX_BUCKET`` claims,
        rarest first (ties by the word), as :func:`~affidavit.lint.candidates.rare_buckets`
        orders them."""
        found = self.rarest.get(rowid)
        if found is None:
            shared = [w for w in self.words(rowid) if 1 < self.df(w) <= MAX_BUCKET]
            shared.sort(key=lambda w: (self.df(w), w))
            found = self.rarest[rowid] = shared[:RARE_WORDS]
        return found

    def rank(self, rowid: int, word: str) -> int:
        """How many of the claim's shared words come before ``word`` (shared by 2 to
        ``MAX_BUCKET`` claims, itself one of the claim's words) in :meth:`top`'s order: ``word``
        is among its rarest when this is under :data:`RARE_WORDS`. Only words at most as
        common as ``word`` can come before it, so each is counted up to that."""
        known = self.rarest.get(rowid)
        if known is not None:
            return known.index(word) if word in known else RARE_WORDS
        key = (self.df(word), word)
        cap = key[0]
        return sum(
            1
            for u in self.words(rowid)
            if u != word and 1 < (d := self.df(u, cap)) <= cap and (d, u) < key
        )


def _read_claims(db: sqlite3.Connection, rowids: Iterable[int], known: _Known) -> None:
    """The claims of ``rowids`` not read yet, as :func:`~affidavit.lint.candidates.load_claims`
    reads them, without their evidence (:func:`_read_evidence`) or their words (read when
    asked for: :meth:`_Known.reading`)."""
    wanted = sorted({r for r in rowids if r not in known.claims})
    for start in range(0, len(wanted), 500):
        part = wanted[start : start + 500]
        marks = ",".join("?" * len(part))
        for rowid, cid, page, text, trust, created in db.execute(
            f"SELECT rowid, id, page_slug, text, trust, created_at FROM claims "
            f"WHERE rowid IN ({marks})",
            part,
        ):
            known.claims[int(rowid)] = ClaimRow(cid, page, text, trust, created)


def _read_evidence(db: sqlite3.Connection, claims: Iterable[ClaimRow]) -> None:
    """The evidence of ``claims``, the age of each one's newest source and the (origin key,
    version) of each source it cites."""
    by_id = {c.id: c for c in claims}
    ids = sorted(by_id)
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        marks = ",".join("?" * len(part))
        for claim_id, source_id, quote, begin, end, when, key, version, skey, srank in db.execute(
            'SELECT e.claim_id, e.source_id, e.quote, e.start, e."end", s.added_at, '
            "s.origin_key, s.version, s.stated_key, s.stated_rank "
            "FROM evidence e JOIN sources s ON s.id = e.source_id "
            f"WHERE e.claim_id IN ({marks}) ORDER BY e.claim_id, e.idx",
            part,
        ):
            claim = by_id[claim_id]
            claim.evidence.append((source_id, quote, begin, end))
            claim.newest = max(claim.newest, when)
            for pair in version_keys(key, version, skey, srank):
                if pair not in claim.origins:
                    claim.origins += (pair,)


def _subjects(db: sqlite3.Connection, pages: set[str]) -> Subjects:
    """:class:`Subjects` holding what :meth:`Subjects.related` reads of ``pages``: their titles
    and the links between them."""
    from ..words import stems

    titles: dict[str, tuple[frozenset[str], str]] = {}
    links: set[tuple[str, str]] = set()
    named = sorted(p for p in pages if p)
    for start in range(0, len(named), 500):
        part = named[start : start + 500]
        marks = ",".join("?" * len(part))
        for slug, title in db.execute(
            f"SELECT slug, title FROM pages WHERE slug IN ({marks})", part
        ):
            titles[slug] = (frozenset(stems(title)), str(title))
        for src, dst in db.execute(f"SELECT src, dst FROM links WHERE src IN ({marks})", part):
            if dst in pages:
                links.add((src, dst))
    return Subjects(titles, frozenset(links))


def pairs_involving(
    db: sqlite3.Connection, involving: set[str]
) -> tuple[list[tuple[ClaimRow, ClaimRow]], dict[str, tuple[set[str], bool]]]:
    """The candidate pairs (older claim first, as the full search orders a pair) of
    :func:`~affidavit.lint.candidates.related_pairs` over ``load_claims(db)`` that one of the
    claims of ``involving`` is part of, in its order; and what
    :func:`~affidavit.lint.reading.read_claim` read of each claim in them, by id."""
    pairs, readings, _ = keyed_pairs(db, involving)
    return pairs, readings


PairKey = tuple[tuple[tuple[str, str], int], tuple[str, str], tuple[str, str]]
"""Where a pair comes in the full search's order: its first bucket's place (the first claim, by
``(created_at, id)``, that has the bucket's word among its rarest, and the word's rank there),
then its two claims' places in the bucket. The same pair has the same key in any search that
finds it, so the pairs of two searches merge into the order one search of both gives."""


def keyed_pairs(
    db: sqlite3.Connection, involving: set[str]
) -> tuple[list[tuple[ClaimRow, ClaimRow]], dict[str, tuple[set[str], bool]], list[PairKey]]:
    """:func:`pairs_involving`, and each pair's :data:`PairKey`."""
    index_claims(db)
    with read_snapshot(db):  # one state of the wiki throughout
        return _pairs_involving(db, involving)


def _pairs_involving(
    db: sqlite3.Connection, involving: set[str]
) -> tuple[list[tuple[ClaimRow, ClaimRow]], dict[str, tuple[set[str], bool]], list[PairKey]]:
    known = _Known(db)
    asked: list[int] = []
    ids = sorted(involving)
    for start in range(0, len(ids), 500):
        asked += _asked(db, ids[start : start + 500], known)
    _read_claims(db, asked, known)
    known.read_all(asked)
    buckets: dict[str, list[int]] = {}
    for word in {w for rowid in asked for w in known.top(rowid)}:
        buckets[word] = known.holders(word)
    _read_claims(db, {r for holders in buckets.values() for r in holders}, known)

    def order(rowid: int) -> tuple[str, str]:
        claim = known.claims[rowid]
        return (claim.created_at, claim.id)

    asked_set = set(asked)
    subjects = _subjects(db, {known.claims[r].page for m in buckets.values() for r in m})
    members: dict[str, list[int]] = {}
    first: dict[str, tuple[tuple[str, str], int]] = {}
    for word, holders in buckets.items():
        ranked = sorted((order(r), r) for r in holders)
        mine = [r for _, r in ranked if r in asked_set and known.rank(r, word) < RARE_WORDS]
        if not mine:
            continue  # no pair of this bucket has an asked claim in it
        # the bucket's place: its first member (the claims' order) that has the word among its
        # rarest; its other members matter only as the partner of an asked claim's related page
        kept: list[int] = []
        for _, r in ranked:
            if r in asked_set:
                if r in mine:
                    kept.append(r)
                continue
            if kept and not any(_either(subjects, known.claims[m], known.claims[r]) for m in mine):
                continue
            if known.rank(r, word) < RARE_WORDS:
                kept.append(r)
        if len(kept) >= 2:
            members[word] = kept
            head = kept[0]
            first[word] = (order(head), known.rank(head, word))
    seen: set[tuple[int, int]] = set()
    out: list[tuple[ClaimRow, ClaimRow]] = []
    keys: list[PairKey] = []
    for word in sorted(members, key=first.__getitem__):
        mine = members[word]
        for n, i in enumerate(mine):
            for j in mine[n + 1 :]:
                if (i not in asked_set and j not in asked_set) or (i, j) in seen:
                    continue
                a, b = known.claims[i], known.claims[j]
                if subjects.related(a.page, b.page):
                    seen.add((i, j))
                    out.append((a, b))
                    keys.append((first[word], order(i), order(j)))
    _read_evidence(db, {id(c): c for pair in out for c in pair}.values())
    readings = {c.id: known.reading(r) for r, c in known.claims.items() if r in known.readings}
    return out, readings, keys


def _either(subjects: Subjects, a: ClaimRow, b: ClaimRow) -> bool:
    """Whether the pages of ``a`` and ``b`` are related, taken either way round."""
    return subjects.related(a.page, b.page) or subjects.related(b.page, a.page)


def nearby_pairs(
    db: sqlite3.Connection, involving: set[str], limits: Thresholds | None = None
) -> Search:
    """What :func:`~affidavit.lint.candidates.search_pairs` ``(db, limits, involving=involving)``
    gives (the same pairs' findings in the same order), read through the claim-word index."""
    limits = limits or Thresholds()
    version = data_version(db)
    pairs, readings, keys = keyed_pairs(db, involving)
    sentences: dict[str, Sentence] = {}

    def read(claim: ClaimRow) -> Sentence:  # what analyse(claim.text) gives
        found = sentences.get(claim.id)
        if found is None:
            found = sentences[claim.id] = sentence(*readings[claim.id])
        return found

    out: list[tuple[str, str, Candidate]] = []
    kept: list[PairKey] = []
    for (a, b), key in zip(pairs, keys, strict=True):
        found = classify(a, b, limits, read)
        if found is not None:
            out.append((a.id, b.id, found))
            kept.append(key)
    return Search(pairs=out, version=version, keys=kept)


def merged(one: Search, other: Search) -> Search | None:
    """One search's pairs and another's, each once, in the order one search of both claim sets
    gives (by :data:`PairKey`); None when either has no keys (a whole-wiki search) or they read
    different states of the database."""
    if one.keys is None or other.keys is None or one.version != other.version:
        return None
    pairs: dict[tuple[str, str], tuple[Any, tuple[str, str, Candidate]]] = {}
    for search in (one, other):
        assert search.keys is not None
        for pair, key in zip(search.pairs, search.keys, strict=True):
            pairs.setdefault((pair[0], pair[1]), (key, pair))
    ordered = sorted(pairs.values(), key=lambda item: item[0])
    return Search(
        pairs=[pair for _, pair in ordered],
        version=one.version,
        keys=[key for key, _ in ordered],
    )


def _asked(db: sqlite3.Connection, ids: list[str], known: _Known) -> list[int]:
    """The indexed, eligible claims of ``ids`` (rowids)."""
    marks = ",".join("?" * len(ids))
    rows = db.execute(
        f"SELECT c.rowid FROM claims c WHERE c.id IN ({marks}) AND EXISTS "
        "(SELECT 1 FROM claim_words_state t WHERE c.rowid <= t.upto) AND EXISTS (SELECT 1 FROM "
        "evidence e JOIN sources s ON s.id = e.source_id WHERE e.claim_id = c.id)",
        ids,
    )
    return [int(r[0]) for r in rows if known.eligible(int(r[0]))]


NEARBY_SHARE = 4
""":func:`search_involving` reads the whole wiki when the claims asked about are a
``1/NEARBY_SHARE`` or more of the active claims (a first ingest): both give the same pairs."""


def search_involving(
    db: sqlite3.Connection,
    involving: set[str],
    limits: Thresholds | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Search:
    """``search_pairs(db, limits, progress, involving)``: through the claim-word index
    (:func:`nearby_pairs`) unless the claims asked about are a large share of the wiki. The
    index is brought up to date either way, so the next search costs what its claims do."""
    index_claims(db)
    active = int(db.execute("SELECT count(*) FROM claims WHERE status = 'active'").fetchone()[0])
    if len(involving) * NEARBY_SHARE >= active:
        return search_pairs(db, limits, progress, involving)
    return nearby_pairs(db, involving, limits)
