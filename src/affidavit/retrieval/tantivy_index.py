"""The vault's search index: tantivy (Rust, Lucene-class BM25 with top-k pruning) over active
claims and pages, in ``.affidavit/search-v1/``.

The database stays the system of record; this index is derived from it and may lag behind it,
never disagree with it unnoticed. Triggers (migration ``m008_search_changes``) log every change to
claims and pages in ``search_changes`` inside the writing transaction; the index stores, in the
same tantivy commit as the documents, the database epoch and the last logged change it reflects.
A search reads that position in its own read snapshot and uses the index only when it reflects
exactly that snapshot; otherwise it first catches up (re-reads the changed claims and pages) or,
when it can't (another process holds the index writer, a read-only vault), the caller falls back
to SQLite FTS5. A crash between the database commit and the index update therefore costs one
catch-up, never a wrong answer. ``affidavit reindex`` rebuilds it from scratch; ``doctor`` checks
that it reflects the database.

The door calls :func:`refresh_search_index` after each applied batch (the catch-up runs in the
background: a tantivy commit's fsyncs are not the apply's to wait for); the door keeps only the
log's latest :data:`LOG_KEPT` changes (:func:`trim_change_log`) and ``affidavit reindex``
prunes it up to the index's position.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache, lru_cache
from operator import itemgetter
from pathlib import Path
from typing import Any

from ..config import TRUST_TIERS
from ..db import read_snapshot

DIRNAME = "search-v1"  # a schema change gets a new folder (the old one is rebuilt from scratch)
TOKENIZER = "affidavit_en"
META_KEY = "m:state"
WRITER_HEAP = 64_000_000
BUILD_HEAP = 256_000_000
BUILD_BATCH = 50_000
REBUILD_AFTER = 20_000  # changes behind: past this, rebuilding in bulk is cheaper
SEARCH_CATCH_UP = 2_000  # changes behind: past this, a search answers from FTS5 meanwhile


@cache
def _analyzer() -> Any:
    """Words as FTS5's ``porter unicode61`` sees them: split on non-alphanumerics, lower case,
    diacritics folded, English stems."""
    import tantivy  # imported on first use: the door imports this module

    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(64))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.ascii_fold())
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


@cache
def _schema() -> Any:
    import tantivy

    builder = tantivy.SchemaBuilder()
    builder.add_text_field("key", stored=True, tokenizer_name="raw")  # c:<id> | p:<slug> | m:state
    builder.add_text_field("trust", tokenizer_name="raw")
    builder.add_text_field("page", tokenizer_name="raw")  # a claim's page slug
    for name in ("text", "title", "summary"):
        builder.add_text_field(name, tokenizer_name=TOKENIZER, index_option="freq")
    builder.add_text_field("epoch", stored=True, tokenizer_name="raw")
    builder.add_unsigned_field("seq", stored=True)
    return builder.build()


_TANTIVY: Any = None


def _tv() -> Any:
    """The tantivy module, imported on first use (every query builder asks: a function-level
    import each time was a few percent of a search)."""
    global _TANTIVY
    if _TANTIVY is None:
        import tantivy

        _TANTIVY = tantivy
    return _TANTIVY


_DIRS: OrderedDict[int, tuple[sqlite3.Connection, Path | None]] = OrderedDict()


def index_dir(db: sqlite3.Connection) -> Path | None:
    """Where the index of the database ``db`` lives (beside it), or None for an in-memory one
    or a vault another user owns (remembered for the last few connections: a search asks every time)."""
    known = _DIRS.get(id(db))
    if known is not None and known[0] is db:
        return known[1]
    found = None
    for row in db.execute("PRAGMA database_list"):
        if row[1] == "main" and row[2]:
            found = Path(row[2]).parent / DIRNAME
    if found is not None and not _ours(found.parent):
        found = None  # W10: another user's vault is only read, FTS5 answers; its index is theirs
    _DIRS[id(db)] = (db, found)
    while len(_DIRS) > 32:
        _DIRS.popitem(last=False)
    return found


def _ours(folder: Path) -> bool:
    """Whether ``folder`` (a vault's ``.affidavit``) belongs to the user this process runs as:
    only then may a search build or update the index inside it."""
    try:
        return folder.stat().st_uid == os.geteuid()
    except OSError:
        return False


@dataclass(frozen=True)
class Position:
    """Which database history (epoch) and how much of it (last change seq)."""

    epoch: str
    seq: int


def db_position(db: sqlite3.Connection) -> Position | None:
    """The database's current position, or None before migration ``m008_search_changes``."""
    try:  # one statement: every search asks
        epoch, seq = db.execute(
            "SELECT (SELECT token FROM search_epoch), "
            "(SELECT seq FROM sqlite_sequence WHERE name = 'search_changes')"
        ).fetchone()
    except sqlite3.OperationalError:
        return None
    if epoch is None:
        return None
    return Position(str(epoch), int(seq) if seq is not None else 0)


class IndexBusy(Exception):
    """The index can't be brought up to date now (writer held elsewhere, read-only files)."""


def _secure(path: Path) -> None:
    """Files 0600 and the folder 0700, like everything else under ``.affidavit/``."""
    os.chmod(path, 0o700)
    for entry in os.scandir(path):
        if entry.is_file(follow_symlinks=False) and entry.stat().st_mode & 0o077:
            os.chmod(entry.path, 0o600)


@lru_cache(maxsize=4096)
def _tokens(word: str) -> tuple[str, ...]:
    return tuple(_analyzer().analyze(word))


def _terms(words: Iterable[str]) -> list[str]:
    """The index terms of ``words`` (each analysed as the indexed text is), without repeats."""
    return list(_question_terms(tuple(words)))


@lru_cache(maxsize=1024)
def _question_terms(words: tuple[str, ...]) -> tuple[str, ...]:
    """:func:`_terms` of one question, worked out once: a search asks for them once per list and
    page (up to a dozen times), and the answer depends on the words alone."""
    return tuple(dict.fromkeys(t for word in words for t in _tokens(word)))


class SearchIndex:
    """One vault's tantivy index. Use :func:`open_index`; instances are shared per folder."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = threading.RLock()
        self.index: Any = None
        self.position: Position | None = None  # what the loaded searcher reflects

    # -- opening and state -----------------------------------------------------------------

    def _open(self) -> Any:
        if self.index is None:
            if not self.path.is_dir():
                self.path.mkdir(mode=0o700, parents=False)
            try:
                index = _tv().Index(_schema(), str(self.path), reuse=True)
            except (OSError, ValueError):
                shutil.rmtree(self.path, ignore_errors=True)  # unreadable: derived, rebuild it
                self.path.mkdir(mode=0o700)
                index = _tv().Index(_schema(), str(self.path), reuse=False)
            index.register_tokenizer(TOKENIZER, _analyzer())
            _secure(self.path)
            self.index = index
            self.position = self._stored_position()
        return self.index

    def _stored_position(self) -> Position | None:
        index = self.index
        index.reload()
        searcher = index.searcher()
        found = searcher.search(_tv().Query.term_query(_schema(), "key", META_KEY), 1).hits
        if not found:
            return None
        doc = searcher.doc(found[0][1])
        return Position(str(doc["epoch"][0]), int(doc["seq"][0]))

    def current(self, want: Position) -> bool:
        """Make the index reflect exactly ``want`` if it can without writing; True if it does."""
        with self.lock:
            self._open()
            if self.position != want:
                self.position = self._stored_position()
            return self.position == want

    # -- writing ---------------------------------------------------------------------------

    def _writer(self, heap: int, threads: int) -> Any:
        try:
            return self._open().writer(heap, threads)
        except (OSError, ValueError) as exc:
            raise IndexBusy(str(exc)) from None

    def _commit(self, writer: Any, position: Position) -> None:
        writer.delete_documents_by_term("key", META_KEY)
        writer.add_document(_tv().Document(key=META_KEY, epoch=position.epoch, seq=position.seq))
        writer.commit()
        writer.wait_merging_threads()
        _secure(self.path)
        self.index.reload()
        self.position = position

    def catch_up(self, db: sqlite3.Connection) -> Position | None:
        """Bring the index up to the database's position (incrementally when the change log
        allows, from scratch otherwise); returns the position it now reflects."""
        with self.lock:
            self._open()
            self.position = self._stored_position()
            with read_snapshot(db):
                want = db_position(db)
                if want is None or self.position == want:
                    return want
                have = self.position
                if have is None or have.epoch != want.epoch or have.seq > want.seq:
                    return self._rebuild_locked(db, want)
                low = db.execute(
                    "SELECT min(seq) FROM search_changes WHERE seq > ?", (have.seq,)
                ).fetchone()[0]
                if low is None or low != have.seq + 1:
                    return self._rebuild_locked(db, want)  # the log was pruned past us
                if want.seq - have.seq > REBUILD_AFTER:
                    return self._rebuild_locked(db, want)  # one bulk pass is cheaper
                writer = self._writer(WRITER_HEAP, 1)
                try:
                    self._replace(db, writer, have.seq, want.seq)
                    self._commit(writer, want)
                except BaseException:
                    writer.rollback()
                    raise
                return want

    def _replace(self, db: sqlite3.Connection, writer: Any, after: int, upto: int) -> None:
        """Delete the documents of the claims and pages changed in the log after ``after`` up to
        ``upto`` and add back, in the order of the log, those still to be found.

        This runs on the refresher's thread beside the ingest. A statement per run of keys
        whose ``id IN (...)`` the planner served by scanning every active claim (the status
        index), a row at a time, and a delete call per key cost 4-5 s of CPU at 61k claims;
        and each call that leaves Python gives the interpreter lock up and must win it back
        from the busy main thread. Here one statement gives all rows as one JSON text (each key
        looked up by primary key) and one term-set query deletes every key: only
        ``add_document`` is left per document."""
        changed = _changed(db, after, upto)
        terms = [prefix + key for kind, prefix in _KINDS for key in changed[kind]]
        if not terms:
            return
        writer.delete_documents_by_query(_tv().Query.term_set_query(_schema(), "key", terms))
        for kind, _ in _KINDS:
            keys = changed[kind]
            if not keys:
                continue
            found = {str(row[0]): row for row in _json_rows(db, _FETCH[kind], after, upto)}
            make = _claim_doc if kind == "claim" else _page_doc
            for key in keys:
                row = found.get(key)
                if row is not None:
                    writer.add_document(make(*row))

    def rebuild(self, db: sqlite3.Connection) -> Position | None:
        """Every document again from the database (``affidavit reindex``)."""
        with self.lock, read_snapshot(db):
            want = db_position(db)
            if want is None:
                return None
            return self._rebuild_locked(db, want)

    def _rebuild_locked(self, db: sqlite3.Connection, want: Position) -> Position:
        writer = self._writer(BUILD_HEAP, 2)
        try:
            writer.delete_all_documents()
            cursor = db.cursor()
            cursor.row_factory = None
            cursor.execute("SELECT id, text, trust, page_slug FROM claims WHERE status = 'active'")
            while rows := cursor.fetchmany(BUILD_BATCH):
                for row in rows:
                    writer.add_document(_claim_doc(*row))
            for row in db.execute("SELECT slug, title, summary FROM pages"):
                writer.add_document(_page_doc(*row))
            self._commit(writer, want)
        except BaseException:
            writer.rollback()
            raise
        return want

    def prune_log(self, db: sqlite3.Connection) -> None:
        """Drop logged changes the index already reflects (call under the vault's writer lock)."""
        if self.position is not None:
            db.execute("DELETE FROM search_changes WHERE seq <= ?", (self.position.seq,))

    # -- searching -------------------------------------------------------------------------

    def _text_query(
        self, fields: tuple[str, ...], tokens: list[str], all_terms: bool = False
    ) -> Any | None:
        """Any of ``tokens`` (index terms) in any of ``fields``; with ``all_terms`` every one
        (in a single field)."""
        if not tokens:
            return None
        return _text_query(fields, tuple(tokens), all_terms)

    def claims(
        self,
        terms: list[str],
        tiers: tuple[str, ...],
        limit: int,
        page: str | None = None,
        enough: int | None = None,
    ) -> list[tuple[str, float]]:
        """Active claims matching any of ``terms`` by BM25, best first: ``(claim id, score)``.

        Claims that have every term are looked for first: when at least ``enough`` (default
        ``limit``) do, up to ``limit`` of them are the answer (a claim with all of the question's words before any with only some, as
        Lucene's coordination factor had it) and the costlier disjunction, which on common words
        matches most of the wiki, is never run. Otherwise the disjunction ranks as plain BM25.
        """
        if limit <= 0:
            return []
        tokens = _terms(terms)
        if page is None and len(tokens) > 1:
            every = self._filtered(self._text_query(("text",), tokens, all_terms=True), tiers, page)
            found = self._search(every, limit)
            if len(found) >= (limit if enough is None else enough):
                return found
        query = self._text_query(("text",), tokens)
        if query is None:
            return []
        return self._search(self._filtered(query, tiers, page), limit)

    def opening(
        self, terms: list[str], tiers: tuple[str, ...], k: int, limit: int
    ) -> list[tuple[str, float]]:
        """The first ``limit`` claims of :meth:`claims` with ``enough=k``: those with every
        term when at least ``k`` have them, else those with any by BM25 (a pure disjunction of
        term queries, which tantivy ranks skipping blocks that can't enter the top)."""
        if k <= 0 or limit <= 0:
            return []
        tokens = _terms(terms)
        if len(tokens) > 1:
            every = self._filtered(self._text_query(("text",), tokens, all_terms=True), tiers, None)
            found = self._search(every, limit)
            if len(found) >= k:
                return found
        query = self._text_query(("text",), tokens)
        if query is None:
            return []
        return self._search(self._filtered(query, tiers, None), limit)

    def fused(
        self,
        terms: list[str],
        tiers: tuple[str, ...],
        plain: list[tuple[str, float]],
        bonuses: list[tuple[list[str], float]],
        limit: int,
    ) -> list[tuple[str, float]]:
        """The first ``limit`` claims by BM25 score plus, for each ``(pages, bonus)`` of
        ``bonuses`` whose pages hold the claim, ``bonus``; best first, ties by claim id.

        ``plain`` is the first ``limit`` claims by score alone (:meth:`opening`): a claim off
        the bonus pages that belongs in the answer is among them (every claim scoring more
        ranks above it). The claims of the bonus pages that hold any of the words come from
        one more call, their bonuses added inside it as constant-score clauses; it matches only
        those pages' claims, so scoring all of them is cheap, where a bonus clause inside the
        ranking over the whole wiki would keep tantivy from skipping blocks (block-max WAND)
        and score every claim with a common word."""
        on_pages = sorted({p for pages, bonus in bonuses if bonus > 0 for p in pages})
        if not on_pages:
            return plain[:limit]
        anyof = self._text_query(("text",), _terms(terms))
        if anyof is None:
            return plain[:limit]
        tv = _tv()
        must, should = tv.Occur.Must, tv.Occur.Should
        parts = [(must, anyof), (must, _pages_query(on_pages))]
        tiers_query = _tiers_query(tuple(tiers))
        if tiers_query is not None:
            parts.append((must, tiers_query))
        for pages, bonus in bonuses:
            if pages and bonus > 0:
                parts.append((should, tv.Query.const_score_query(_pages_query(pages), bonus)))
        scored = dict(plain)
        scored.update(self._search(tv.Query.boolean_query(parts), limit))
        ranked = sorted(scored.items(), key=itemgetter(0))
        ranked.sort(key=itemgetter(1), reverse=True)
        return ranked[:limit]

    def _filtered(self, query: Any, tiers: tuple[str, ...], page: str | None) -> Any:
        must = _tv().Occur.Must
        parts = [(must, query)]
        tiers_query = _tiers_query(tuple(tiers))
        if tiers_query is not None:
            parts.append((must, tiers_query))
        if page is not None:
            parts.append((must, _page_query(page)))
        return _tv().Query.boolean_query(parts) if len(parts) > 1 else query

    def pages(self, terms: list[str], limit: int) -> list[tuple[str, float]]:
        """Pages whose title or summary match any of ``terms``, best first: ``(slug, score)``."""
        query = self._text_query(("title", "summary"), _terms(terms))
        if query is None:
            return []
        return self._search(query, limit)

    def _search(self, query: Any, limit: int) -> list[tuple[str, float]]:
        """``(key without its "c:"/"p:" kind, score)``, best first, ties by key. A query matches
        one kind of document only (claims have ``text``, pages ``title`` and ``summary``), so the
        order is the same with or without the prefix. Two stable sorts (by key, then by score
        descending) give the order of ``key=(-score, key)`` without a Python call per hit."""
        with self.lock:
            searcher = self.index.searcher()
        doc = searcher.doc
        found = [
            (str(doc(addr)["key"][0])[2:], float(score))
            for score, addr in searcher.search(query, limit, count=False).hits
        ]
        found.sort(key=itemgetter(0))
        found.sort(key=itemgetter(1), reverse=True)
        return found


@lru_cache(maxsize=1024)
def _text_query(fields: tuple[str, ...], tokens: tuple[str, ...], all_terms: bool) -> Any:
    """The query of :meth:`SearchIndex._text_query`, built once per distinct question: a query
    is an immutable description (no index state in it), so one object serves every search and
    thread; building the term queries again was a twentieth of a search."""
    tv = _tv()
    occur = tv.Occur.Must if all_terms else tv.Occur.Should
    return tv.Query.boolean_query([(occur, _term_query(f, t)) for t in tokens for f in fields])


@lru_cache(maxsize=16384)
def _term_query(field: str, token: str) -> Any:
    """One term's query (immutable, as :func:`_text_query`'s): questions share most words, and
    a long one has thirty of them in two or three fields."""
    return _tv().Query.term_query(_schema(), field, token)


@lru_cache(maxsize=16)
def _tiers_query(tiers: tuple[str, ...]) -> Any | None:
    """The filter keeping claims of ``tiers``; None when they are every tier (nothing to keep
    out)."""
    if set(tiers) == set(TRUST_TIERS):
        return None
    return _const(_tv().Query.term_set_query(_schema(), "trust", list(tiers)))


@lru_cache(maxsize=4096)
def _page_query(page: str) -> Any:
    """The filter keeping one page's claims: a search asks for up to eight pages' claims, the
    same pages for many questions (an immutable query, as :func:`_text_query`'s)."""
    return _const(_tv().Query.term_query(_schema(), "page", page))


def _pages_query(pages: list[str]) -> Any:
    """The claims of any of ``pages`` (an unscored filter): a union of the pages' term
    queries, which tantivy intersects with the words' postings as it goes; a term-set query
    fills a bit set over the whole index first (0.4 ms for 25 pages at 61k claims, against
    0.07 ms)."""
    if len(pages) == 1:
        return _page_query(pages[0])
    should = _tv().Occur.Should
    return _const(_tv().Query.boolean_query([(should, _page_query(p)) for p in pages]))


def _const(query: Any) -> Any:
    return _tv().Query.const_score_query(query, 0.0)


def _claim_doc(cid: str, text: str, trust: str, page: str) -> Any:
    return _tv().Document(key="c:" + cid, text=text, trust=trust, page=page)


def _page_doc(slug: str, title: str, summary: str) -> Any:
    return _tv().Document(key="p:" + slug, title=title, summary=summary)


_KINDS = (("claim", "c:"), ("page", "p:"))
_FETCH = {  # the rows of the keys logged in a span of the log, looked up by primary key
    "claim": "SELECT json_group_array(json_array(c.id, c.text, c.trust, c.page_slug)) "
    "FROM (SELECT DISTINCT key FROM search_changes WHERE seq > ? AND seq <= ? "
    "AND kind = 'claim') AS s CROSS JOIN claims AS c ON c.id = s.key WHERE c.status = 'active'",
    "page": "SELECT json_group_array(json_array(p.slug, p.title, p.summary)) "
    "FROM (SELECT DISTINCT key FROM search_changes WHERE seq > ? AND seq <= ? "
    "AND kind = 'page') AS s CROSS JOIN pages AS p ON p.slug = s.key",
}


def _json_rows(db: sqlite3.Connection, sql: str, *params: Any) -> list[list[Any]]:
    """The rows of ``sql`` (one ``json_group_array``), read in one step."""
    text = db.execute(sql, params).fetchone()[0]
    return json.loads(text) if text else []


def _changed(db: sqlite3.Connection, after: int, upto: int) -> dict[str, list[str]]:
    """The claims and pages changed in the log after ``after`` up to ``upto``, each once, in
    the order of their first change (as ``SELECT DISTINCT`` over the log read them)."""
    rows = _json_rows(
        db,
        "SELECT json_group_array(json_array(kind, key, first)) FROM (SELECT kind, key, "
        "min(seq) AS first FROM search_changes WHERE seq > ? AND seq <= ? GROUP BY kind, key)",
        after,
        upto,
    )
    changed: dict[str, list[str]] = {"claim": [], "page": []}
    for kind, key, _ in sorted(rows, key=itemgetter(2)):
        if kind in changed:
            changed[kind].append(str(key))
    return changed


_OPEN: dict[Path, SearchIndex] = {}
_OPEN_LOCK = threading.Lock()


_BY_CONNECTION: OrderedDict[int, tuple[sqlite3.Connection, SearchIndex]] = OrderedDict()


def open_index(db: sqlite3.Connection) -> SearchIndex | None:
    """The shared :class:`SearchIndex` of ``db``'s vault, or None (in-memory database).
    Remembered for the last few connections, as :func:`index_dir` is: every search asks."""
    known = _BY_CONNECTION.get(id(db))
    if known is not None and known[0] is db:
        return known[1]
    path = index_dir(db)
    if path is None:
        return None
    with _OPEN_LOCK:
        index = _OPEN.get(path)
        if index is None:
            if not path.parent.is_dir():
                return None
            index = _OPEN[path] = SearchIndex(path)
        _BY_CONNECTION[id(db)] = (db, index)
        while len(_BY_CONNECTION) > 32:
            _BY_CONNECTION.popitem(last=False)
        return index


def ready_index(db: sqlite3.Connection) -> SearchIndex | None:
    """The index when it reflects exactly the snapshot ``db`` is reading (caught up first if
    needed and possible); None when it can't, and the caller must use FTS5."""
    index = open_index(db)
    want = db_position(db)
    if index is None or want is None:
        return None
    try:
        if index.current(want):
            return index
        have = index.position
        behind = want.seq - have.seq if have is not None and have.epoch == want.epoch else None
        if behind is None or not 0 < behind <= SEARCH_CATCH_UP:
            refresh_search_index(db)  # a long catch-up or a rebuild: not on this search's time
            return None
        if db.in_transaction and index.catch_up(db) == want:
            return index
    except (IndexBusy, OSError, ValueError):
        return None
    return None


class _Refresher:
    """Catches indexes up on one background thread, each on its own database connection (the
    door's connection is never shared across threads). A tantivy commit fsyncs every new file —
    200–600 ms on a loaded machine — which the apply protocol must not wait for; the index is
    derived and every search checks it, so running late is safe. At exit, pending work is given
    a few seconds to finish; a process that dies before is a crash, which the next search heals."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.pending: dict[Path, Path] = {}  # index folder -> database file
        self.busy = False
        self.current: Path | None = None  # the database being caught up now
        self.thread: threading.Thread | None = None

    def submit(self, folder: Path, database: Path) -> None:
        with self.cond:
            self.pending[folder] = database
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(
                    target=self._run, name="affidavit-search-index", daemon=True
                )
                self.thread.start()
            self.cond.notify_all()

    def _run(self) -> None:
        from ..db import connect

        while True:
            with self.cond:
                while not self.pending:
                    self.busy = False
                    self.current = None
                    self.cond.notify_all()
                    if not self.cond.wait(timeout=30):
                        self.thread = None
                        return
                _, database = self.pending.popitem()
                self.busy = True
                self.current = database
                self.cond.notify_all()
            try:
                db = connect(database)
                try:
                    index = open_index(db)
                    if index is not None:
                        index.catch_up(db)
                finally:
                    db.close()
            except (IndexBusy, OSError, ValueError, sqlite3.Error):
                pass  # left behind: the next search catches up or uses FTS5

    def wait(self, timeout: float | None = None, database: Path | None = None) -> bool:
        """Until nothing is pending (True), or ``timeout`` seconds passed (False); with
        ``database``, only until nothing is pending or running for that database file."""

        def done() -> bool:
            if database is None:
                return not self.pending and not self.busy
            return database not in self.pending.values() and self.current != database

        with self.cond:
            return self.cond.wait_for(done, timeout)


_REFRESHER = _Refresher()
atexit.register(_REFRESHER.wait, 10.0)


LOG_KEPT = REBUILD_AFTER
"""How many of the latest changes the change log keeps (:func:`trim_change_log`): an index
further behind rebuilds from scratch anyway (:meth:`SearchIndex.catch_up`)."""
TRIM_EVERY = 2_000
"""Changes past :data:`LOG_KEPT` the log holds before a trim drops them (one delete per ~2,000
changes: each deleted row moves the search version by its trigger)."""


def trim_change_log(db: sqlite3.Connection) -> int:
    """Drop the changes before the latest :data:`LOG_KEPT` (the door, inside its batch's
    transaction; returns how many). No index uses them: one that has not read them is more than
    :data:`REBUILD_AFTER` changes behind and rebuilds in bulk, and one whose log was cut past its
    position does too; a catch-up reads only the changes after its position. What is kept
    depends on the database alone — not on whether the background catch-up ran — so a batch
    leaves the same rows either way. The log's size is then bounded, not the wiki's history."""
    top = db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'search_changes'").fetchone()
    low = db.execute("SELECT min(seq) FROM search_changes").fetchone()[0]
    if top is None or low is None or int(top[0]) - int(low) + 1 <= LOG_KEPT + TRIM_EVERY:
        return 0
    return db.execute(
        "DELETE FROM search_changes WHERE seq <= ?", (int(top[0]) - LOG_KEPT,)
    ).rowcount


def refresh_search_index(db: sqlite3.Connection) -> None:
    """The door's hook, after a batch committed: have the index caught up (in the background;
    see :class:`_Refresher`). Never raises. (The change log is trimmed by the door inside its
    batch, :func:`trim_change_log`, and pruned to the index's position by ``affidavit
    reindex``; what a batch leaves in the database is the same whether or not this ran.)"""
    folder = index_dir(db)
    if folder is None or not folder.parent.is_dir():
        return
    for row in db.execute("PRAGMA database_list"):
        if row[1] == "main" and row[2]:
            _REFRESHER.submit(folder, Path(row[2]))


def wait_for_refresh(timeout: float | None = None, database: Path | None = None) -> bool:
    """Wait until the background catch-ups submitted so far (for ``database`` only, if
    given) are done: tests, benchmarks, and :meth:`Vault.close`, after which nothing of ours
    has the vault's files open (a copy or backup taken then sees a quiet vault)."""
    return _REFRESHER.wait(timeout, database)


def index_problems(db: sqlite3.Connection) -> list[str]:
    """What doctor reports: an index that reflects the database's position but doesn't hold one
    document per active claim and page, or can't be read. Being behind is normal — the next
    search catches up — and is not a finding; doctor writes nothing, the index included."""
    index = open_index(db)
    if index is None or db_position(db) is None or not index.path.is_dir():
        return []
    with read_snapshot(db):
        want = db_position(db)
        try:
            if want is None or not index.current(want):
                return []
            docs = index.index.searcher().num_docs - 1  # the state document
        except (IndexBusy, OSError, ValueError) as exc:
            return [f"the search index can't be read ({exc})"]
        claims = db.execute("SELECT count(*) FROM claims WHERE status = 'active'").fetchone()[0]
        pages = db.execute("SELECT count(*) FROM pages").fetchone()[0]
    if docs != claims + pages:
        return [
            f"the search index holds {docs} documents, the database {claims} active claims and "
            f"{pages} pages"
        ]
    return []


def rebuild_search_index(db: sqlite3.Connection) -> dict[str, int]:
    """``affidavit reindex``: rebuild the index from the database (under the writer lock) and
    prune the change log; returns what it holds."""
    index = open_index(db)
    if index is None:
        return {"documents": 0, "change": 0}
    try:
        position = index.rebuild(db)
    except IndexBusy as exc:
        raise IndexBusy(
            f"the search index is being written by another process ({exc}); "
            "wait for it to finish, then run `affidavit reindex` again"
        ) from None
    index.prune_log(db)
    docs = index.index.searcher().num_docs - 1
    return {"documents": docs, "change": position.seq if position else 0}
