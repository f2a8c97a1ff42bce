"""Parses kept beyond the process (W11; issue 22's cost): a vault's ``.affidavit/parses.sqlite``.

The support check parses a claim's text and its quotes (:mod:`.parse`). The gate checks a plan
when it is proposed and again when it is approved (W5), lint's ``unsupported_claim`` and
``affidavit doctor`` judge the wiki again, and a quote is a source's sentence that many claims
cite: the same texts, parsed again in every process. A :class:`ParseStore` keeps their parses in
a SQLite file of the vault's state folder, and :func:`.parse.keeping` puts it behind the
in-memory cache.

A kept parse never changes a verdict:

- a row is found by the SHA-256 of :func:`.parse.pipeline_version` and the exact text, and used
  only when the row's own text and version are those asked for (a row under another key, from
  another parser, package or code version, is not read);
- a token's text is not stored: it is the parsed text at the token's offsets, so a kept parse
  always has the words of its text; every token's offsets, heads, sentence starts and labels are
  checked, the body is JSON (never unpickled) inflated to a bounded size, and a row that fails any
  check is parsed again (and overwritten);
- the file lives in ``.affidavit/`` with the database's mode (0600): whoever can write it can
  write the database itself. A file or its journal that is a symlink is not opened.

Bounded: at most :data:`LIMIT` parses; the oldest written go first. A store that can't be opened,
read or written (read-only vault, locked, full disk) finds and keeps nothing: the check parses as
it would have.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import stat
import threading
import time
import zlib
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from .parse import Parse, ParserUnavailable, Token, _clean, keeping, parse_many, pipeline_version

__all__ = [
    "LIMIT",
    "NAME",
    "ParseStore",
    "decode",
    "encode",
    "keeping_in",
    "parse_behind",
    "store_at",
]

NAME = "parses.sqlite"
"""The store's file in the vault's state folder."""
LIMIT = 50_000
"""Parses kept (a 30-token sentence takes ~0.5 KB)."""
MAX_BODY = 1 << 20
"""A body inflates to at most this many bytes (a longer one is not a parse of ours)."""
MAX_TOKENS = 20_000
RETRY_SECONDS = 60.0
"""A store that could not be opened (locked, not a database, not a regular file) is tried again
after this long."""

UPOS = frozenset(
    ["ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM", "PART", "PRON", "PROPN",
     "PUNCT", "SCONJ", "SYM", "VERB", "X", "SPACE", ""]
)  # fmt: skip
_LABEL = frozenset("".join(chr(c) for c in range(33, 127)))


def key_of(version: str, text: str) -> bytes:
    return hashlib.sha256(version.encode() + b"\0" + text.encode("utf-8", "surrogatepass")).digest()


def encode(parsed: Parse) -> bytes:
    """A parse as compressed JSON: per token its length, lemma (None: its casefolded text),
    part of speech, tag, dependency, head, offset and sentence start."""
    rows = [
        [len(t.text), None if t.lemma == t.lower else t.lemma, t.pos, t.tag, t.dep, t.head, t.idx,
         t.sent]
        for t in parsed
    ]  # fmt: skip
    return zlib.compress(json.dumps(rows, separators=(",", ":")).encode(), 6)


def _label(value: Any, allowed: frozenset[str] | None = None) -> str:
    if not isinstance(value, str) or len(value) > 24:
        raise ValueError("a label is not a short string")
    if allowed is not None and value not in allowed:
        raise ValueError(f"no such part of speech: {value!r}")
    if any(c not in _LABEL for c in value):
        raise ValueError("a label holds a character no label has")
    return value


def _int(value: Any) -> int:
    if type(value) is not int:
        raise ValueError("not an integer")
    return value


def decode(text: str, body: bytes) -> Parse:
    """The parse ``body`` holds for ``text``; raises ValueError when it is not one."""
    inflate = zlib.decompressobj()
    raw = inflate.decompress(body, MAX_BODY)
    if inflate.unconsumed_tail or not inflate.eof:
        raise ValueError("the body is cut or too long")
    rows = json.loads(raw)
    if not isinstance(rows, list) or len(rows) > MAX_TOKENS:
        raise ValueError("not a list of tokens")
    cleaned = _clean(text)
    out: list[Token] = []
    end = 0
    for i, row in enumerate(rows):
        if not isinstance(row, list) or len(row) != 8:
            raise ValueError("a token is not 8 values")
        size, lemma, pos, tag, dep = _int(row[0]), row[1], row[2], row[3], row[4]
        head, idx, sent = _int(row[5]), _int(row[6]), _int(row[7])
        if size < 1 or idx < end or idx + size > len(cleaned):
            raise ValueError("a token's offsets are not in its text, in order")
        if not 0 <= head < len(rows) or not 0 <= sent <= i:
            raise ValueError("a head or sentence start out of range")
        if sent != i and out[sent].sent != sent:
            raise ValueError("a sentence start that starts no sentence")
        if i and sent not in (out[-1].sent, i):
            raise ValueError("a sentence start out of order")
        word = cleaned[idx : idx + size]
        if word.strip() != word and not word.isspace():
            raise ValueError("a token that begins or ends with a space")
        lower = word.casefold()
        if lemma is None:
            lemma = lower
        elif not isinstance(lemma, str) or len(lemma) > 4 * size + 16:
            raise ValueError("a lemma that is no word")
        pos, tag, dep = _label(pos, UPOS), _label(tag), _label(dep)
        out.append(Token(i, word, lower, lemma, pos, tag, dep, head, idx, sent))
        end = idx + size
    if cleaned.strip() and not out:
        raise ValueError("no tokens for a text with words")
    return tuple(out)


class ParseStore:
    """A vault's kept parses (:class:`.parse.Kept`): a SQLite file, one row per text."""

    def __init__(self, path: Path, limit: int = LIMIT) -> None:
        self.path = path
        self.limit = limit
        self.version = pipeline_version()
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._retry = 0.0  # time.monotonic() before which a failed open is not tried again

    def _open(self) -> sqlite3.Connection | None:
        if self._db is not None or time.monotonic() < self._retry:
            return self._db
        try:
            for suffix in ("", "-wal", "-shm", "-journal"):
                info = _lstat(Path(f"{self.path}{suffix}"))
                if info is not None and not stat.S_ISREG(info.st_mode):
                    raise OSError(f"{self.path}{suffix} is not a regular file")
            if _lstat(self.path) is None:
                os.close(os.open(self.path, os.O_CREAT | os.O_WRONLY | os.O_NOFOLLOW, 0o600))
            db = sqlite3.connect(self.path, timeout=2.0, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")  # a crash loses the last rows, no more
            db.execute(
                "CREATE TABLE IF NOT EXISTS parses ("
                "key BLOB PRIMARY KEY, version TEXT NOT NULL, text TEXT NOT NULL, "
                "body BLOB NOT NULL)"
            )
            db.commit()
        except (OSError, sqlite3.Error):
            self._retry = time.monotonic() + RETRY_SECONDS
            return None
        self._db = db
        return db

    def get_many(self, texts: Sequence[str]) -> dict[str, Parse]:
        keys = {key_of(self.version, t): t for t in texts}
        found: dict[str, Parse] = {}
        with self._lock:
            db = self._open()
            if db is None:
                return found
            rows: list[tuple[Any, ...]] = []
            try:
                wanted = list(keys)
                for start in range(0, len(wanted), 500):
                    part = wanted[start : start + 500]
                    rows += db.execute(
                        "SELECT key, version, text, body FROM parses WHERE key IN "
                        f"({','.join('?' * len(part))})",
                        part,
                    ).fetchall()
            except sqlite3.Error:
                return found
        for key, version, text, body in rows:
            wanted_text = keys.get(bytes(key)) if isinstance(key, bytes | memoryview) else None
            if wanted_text is None or version != self.version or text != wanted_text:
                continue  # a row under another text's or version's key: not this text's parse
            try:
                found[wanted_text] = decode(wanted_text, bytes(body))
            except (ValueError, TypeError, zlib.error, RecursionError):
                continue  # not a parse of ours: parsed again, and overwritten
        return found

    def put_many(self, parses: Mapping[str, Parse]) -> None:
        if not parses:
            return
        rows = [
            (key_of(self.version, t), self.version, t, encode(p))
            for t, p in parses.items()
            if _utf8(t)  # a lone surrogate (JSON allows one) can't be stored: parsed each time
        ]
        if not rows:
            return
        with self._lock:
            db = self._open()
            if db is None:
                return
            try:
                with db:
                    db.executemany("INSERT OR REPLACE INTO parses VALUES (?, ?, ?, ?)", rows)
                    db.execute(
                        "DELETE FROM parses WHERE rowid <= (SELECT max(rowid) FROM parses) - ?",
                        (self.limit,),
                    )
            except sqlite3.Error:
                return

    def count(self) -> int:
        """The parses kept (of every version)."""
        with self._lock:
            db = self._open()
            try:
                return int(db.execute("SELECT count(*) FROM parses").fetchone()[0]) if db else 0
            except sqlite3.Error:
                return 0

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None


OPEN = 8
"""Vaults whose stores stay open in a process (a daemon serving more closes the least used)."""
_STORES: OrderedDict[Path, ParseStore] = OrderedDict()
_STORES_LOCK = threading.Lock()


def store_at(state_dir: Path) -> ParseStore:
    """The store of the vault whose state folder is ``state_dir`` (one per process and vault;
    at most :data:`OPEN` open)."""
    path = state_dir / NAME
    with _STORES_LOCK:
        store = _STORES.get(path)
        if store is None:
            store = _STORES[path] = ParseStore(path)
            while len(_STORES) > OPEN:
                _, closed = _STORES.popitem(last=False)
                closed.close()  # opened again if still in use
        _STORES.move_to_end(path)
        return store


@contextmanager
def keeping_in(state_dir: Path | None) -> Iterator[None]:
    """The support checks within it read and keep their parses in the store of the vault whose
    state folder is ``state_dir`` (None — a read-only vault, a PostgreSQL door — keeps none)."""
    with keeping(store_at(state_dir) if state_dir is not None else None):
        yield


def parse_behind(state_dir: Path | None, texts: Sequence[str]) -> threading.Thread | None:
    """Parse ``texts`` (a chunk's numbered sentences, which a model cites whole) in a thread
    while this one waits on something else (the model's reply), kept in the vault's store and in
    memory; join it before the gate reads them. None when there is nothing to parse."""
    todo = list(dict.fromkeys(t for t in texts if t.strip()))
    if not todo:
        return None

    def run() -> None:
        with keeping_in(state_dir), suppress(ParserUnavailable):
            parse_many(todo)  # the gate raises it in its turn, as it would have

    thread = threading.Thread(target=run, name="affidavit-parse-behind", daemon=True)
    thread.start()
    return thread
