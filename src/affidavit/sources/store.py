"""The source store: immutable, content-addressed originals plus their extracted text (SPEC §1, §2).

    sources/<sha256>.<ext>              the original bytes, read-only, named by their SHA-256
    sources/<sha256>.extracted.txt      the extracted text (UTF-8), read-only

Files are written atomically before the database row (and its flags) is inserted in one transaction,
then committed to git. Adding the same bytes again changes nothing. Nothing is ever truncated.
"""

from __future__ import annotations

import builtins
import json
import os
import re
import sqlite3
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import httpx

from .. import db as dbmod
from ..clock import iso
from ..config import TRUST_TIERS
from ..errors import AffidavitError, IntegrityError, NotFoundError, SourceError
from ..evidence.verify import cached_text
from ..hashing import sha256_file, sha256_hex
from ..privacy import source_mode, tighten
from ..store.paths import inside, read_inside
from ..vault import Vault
from .binary import MAX_CONTROL_RATIO as MAX_CONTROL_RATIO
from .binary import binary_reason
from .extract import (
    BINARY,
    EXTENSIONS,
    MAN,
    MEDIA_EXTENSIONS,
    SUPPORTED_HELP,
    charset_of,
    detect_media_type,
    extract,
    file_media_type,
    is_man_page_name,
)
from .fetch import fetch_url
from .files import (
    Stamp,
    file_sha256,
    file_stamp,
    keep_readonly,
    write_readonly,
    write_readonly_all,
)
from .lineage import current_version, origin_key
from .roff import gunzip
from .sanitizer import Flag
from .stated import stated_of
from .trust import trust_for
from .visibility import SIGHT_CACHE, owner_of

MIN_REF_LENGTH = 12
"""Shortest id prefix :meth:`SourceStore.resolve` accepts (plans cite sources by >= 12 hex)."""
MIN_LOOKUP_LENGTH = 4
"""Shortest id prefix a person may type to :meth:`SourceStore.get`."""
_HEX = re.compile(r"^[0-9a-f]+$")
_TEXT_CACHE_CHARS = 64_000_000
"""Stored texts a store keeps in memory, in characters (least recently used dropped first): the
gate and lint read quotes of many sources per plan, and a text re-found by its hash costs a path
check and a stat every time."""


@dataclass(frozen=True)
class SourceRecord:
    """One stored source: its database row and its sanitizer flags."""

    id: str
    origin: str
    name: str
    media_type: str
    original_file: str
    text_file: str
    text_sha256: str
    size_bytes: int
    text_chars: int
    trust: str
    status: str
    added_at: str
    text_map: dict[str, Any] = field(default_factory=dict)
    flags: list[Flag] = field(default_factory=list)
    trust_chosen: str = ""  # the tier given with --trust when it was added; "" if none
    origin_key: str = ""  # the normalised origin its versions share (.lineage.origin_key)
    version: int = 1  # 1 for the first bytes stored from its origin, then 2, 3…
    previous_id: str | None = None  # the version it replaces
    stated: str = ""  # the version or date it states about itself (.stated), "" if none
    stated_key: str = ""  # the document it states that of (.stated.Stated.key)
    stated_rank: int = 0  # that statement's order among the document's releases

    @property
    def replaces(self) -> str | None:
        """The id of the version of the same origin this one replaces, if any."""
        return self.previous_id

    @property
    def short_id(self) -> str:
        return self.id[:12]

    def to_json(self) -> dict[str, Any]:
        """The record as JSON-ready data (the text map is left out: it can be large)."""
        return {
            "id": self.id,
            "origin": self.origin,
            "name": self.name,
            "media_type": self.media_type,
            "original_file": self.original_file,
            "text_file": self.text_file,
            "text_sha256": self.text_sha256,
            "size_bytes": self.size_bytes,
            "text_chars": self.text_chars,
            "trust": self.trust,
            "status": self.status,
            "added_at": self.added_at,
            "origin_key": self.origin_key,
            "version": self.version,
            "previous_id": self.previous_id,
            **({"stated": self.stated} if self.stated else {}),
            "flags": [flag.to_json() for flag in self.flags],
        }


@dataclass(frozen=True)
class AddResult:
    """The outcome of adding one source: the record, whether it is new, and a line for the user."""

    record: SourceRecord
    added: bool
    message: str


ErrorHandler = Callable[[Path, AffidavitError], None]


GROUP_BYTES = 64_000_000
"""Bytes of new sources (originals and texts) :meth:`SourceStore.add_files` stores together."""


@dataclass(frozen=True)
class _Prepared:
    """A new source ready to store: its record, original bytes and extracted text."""

    record: SourceRecord
    data: bytes
    text: bytes
    mode: int
    """The mode its stored files get (:func:`affidavit.privacy.source_mode`)."""


def _add_message(records: builtins.list[SourceRecord]) -> str:
    if len(records) == 1:
        return f"Add source {records[0].name} ({records[0].short_id})"
    return f"Add {len(records)} sources\n\n" + "\n".join(
        f"- {r.name} ({r.short_id})" for r in records
    )


def _added(record: SourceRecord) -> AddResult:
    flags = len(record.flags)
    version = (
        f"version {record.version} of its origin, replacing {record.previous_id[:12]}; "
        if record.previous_id
        else ""
    )
    return AddResult(
        record,
        True,
        f"added {record.short_id} {record.name} ({version}{record.media_type}, "
        f"{record.text_chars:,} chars, trust {record.trust}, {flags} flag{'s' if flags != 1 else ''})",
    )


def url_name(url: str) -> str:
    """A short display name for a URL: its last path segment, else its host."""
    parsed = httpx.URL(url)
    segments = [s for s in parsed.path.split("/") if s]
    return unquote(segments[-1]) if segments else (parsed.host or url)


class SourceStore:
    """Adds, finds and reads sources of one vault. Satisfies the evidence verifier's protocol
    (``resolve(ref) -> str | None`` and ``text(source_id) -> str``)."""

    def __init__(self, vault: Vault, client: httpx.Client | None = None) -> None:
        self.vault = vault
        self.client = client
        self._texts: OrderedDict[str, str] = OrderedDict()
        self._text_chars = 0
        self._stamps: dict[str, Stamp] = {}
        self._round = 0  # forget_changed's count: a kept text's file is checked once per round
        self._checked: dict[str, int] = {}  # source id -> the round its file was last checked
        self._flags: dict[str, builtins.list[Flag]] = {}  # a source's flags never change
        self._known: set[str] = set()  # full ids resolved: a source row is never deleted

    # --- adding -------------------------------------------------------------------------------

    def add_file(self, path: str | Path, trust: str | None = None) -> AddResult:
        """Add one file. A directory, a missing file or an unsupported format is a SourceError.
        Its stored copies are no more readable than the file (:mod:`affidavit.privacy`)."""
        data, resolved, name, mode = self._read_file(path)
        media_type = file_media_type(name, Path(resolved), data)
        return self.add_bytes(data, resolved, name, media_type=media_type, trust=trust, mode=mode)

    def _read_file(self, path: str | Path) -> tuple[bytes, str, str, int]:
        """The bytes, real path, name and mode of a file to add (never a directory or a vault's
        own file)."""
        path = Path(path).expanduser()
        if path.is_dir():
            raise SourceError(f"{path} is a directory: add it with add_dir (read recursively).")
        resolved = path.resolve()
        self._refuse_vault_files(resolved)
        try:
            with resolved.open("rb") as handle:  # the mode of the very file read
                mode = os.fstat(handle.fileno()).st_mode
                data = handle.read()
        except FileNotFoundError as exc:
            raise SourceError(f"{path} does not exist. Check the path and retry.") from exc
        except OSError as exc:
            raise SourceError(f"{path} can't be read ({exc.strerror}). Check permissions.") from exc
        return data, str(resolved), path.name, mode

    def add_files(
        self,
        paths: builtins.list[Path],
        trust: str | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> builtins.list[AddResult | AffidavitError]:
        """Add files as :meth:`add_file` does, one outcome (a result, or the error that file
        met) per path. New sources are stored in groups (up to :data:`GROUP_BYTES`): one
        parallel fsync pass of their files and one directory fsync, then one transaction for
        their rows, then one git commit; the order per source is the same as one add's
        (files durable, then rows, then git), so an interrupted group leaves nothing a single
        add wouldn't. ``progress`` is called as ``(files_read, file_count)`` after each file is
        read and extracted."""
        self._trust(trust)
        outcomes: builtins.list[AddResult | AffidavitError | None] = [None] * len(paths)
        group: builtins.list[tuple[int, _Prepared]] = []
        size = 0
        for n, path in enumerate(paths):
            try:
                prepared = self._prepare_file(path, trust)
            except AffidavitError as exc:
                outcomes[n] = exc
                continue
            finally:
                if progress is not None:
                    progress(n + 1, len(paths))
            if isinstance(prepared, AddResult):
                outcomes[n] = prepared
                continue
            group.append((n, prepared))
            size += len(prepared.data) + len(prepared.text)
            if size >= GROUP_BYTES:
                self._store_group(group, outcomes)
                group, size = [], 0
        self._store_group(group, outcomes)
        return [o for o in outcomes if o is not None]

    def _prepare_file(self, path: Path, trust: str | None) -> _Prepared | AddResult:
        data, resolved, name, mode = self._read_file(path)
        media_type = file_media_type(name, Path(resolved), data)
        return self._prepare(data, resolved, name, media_type, trust, None, mode)

    def _store_group(
        self,
        group: builtins.list[tuple[int, _Prepared]],
        outcomes: builtins.list[AddResult | AffidavitError | None],
    ) -> None:
        if not group:
            return
        try:
            with self.vault.write_lock():
                fresh: dict[str, _Prepared] = {}
                for n, prepared in group:
                    record = prepared.record
                    existing = self._find(record.id)  # another process may have added it
                    if existing is not None:
                        self._commit_interrupted(existing)
                        outcomes[n] = self._unchanged(existing)
                    elif record.id in fresh:  # the same bytes twice in one group
                        outcomes[n] = self._unchanged(record)
                    else:
                        fresh[record.id] = prepared
                if not fresh:
                    return
                self.vault.sources_dir.mkdir(exist_ok=True)
                files = [
                    (self.vault.root / relative, data, digest, p.mode)
                    for p in fresh.values()
                    for relative, data, digest in (
                        (p.record.original_file, p.data, p.record.id),
                        (p.record.text_file, p.text, p.record.text_sha256),
                    )
                ]
                write_readonly_all(files, self.vault.sources_dir)
                with dbmod.transaction(self.vault.db):
                    for key, prepared in fresh.items():
                        fresh[key] = replace(prepared, record=self._insert(prepared.record))
                records = [p.record for p in fresh.values()]
                # their own files only: anything else dropped or staged in sources/ stays out
                own = [f for r in records for f in (r.original_file, r.text_file)]
                self.vault.git.commit(_add_message(records), own)
        except AffidavitError as exc:
            for n, _ in group:
                outcomes[n] = outcomes[n] or exc
            return
        for n, prepared in group:
            if outcomes[n] is None:  # as stored: with its version
                outcomes[n] = _added(fresh[prepared.record.id].record)

    def discover(self, path: str | Path) -> builtins.list[Path]:
        """The files :meth:`add_dir` would add from ``path``: recursive, sorted, supported
        extensions only, hidden files and directories and the vault's own files skipped."""
        root = Path(path).expanduser().resolve()
        if not root.is_dir():
            raise SourceError(f"{path} is not a directory. Check the path and retry.")
        skip = {self.vault.sources_dir.resolve(), self.vault.wiki_dir.resolve()}
        found: builtins.list[Path] = []
        for current, dirs, files in os.walk(root):
            here = Path(current)
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and here / d not in skip)
            found += (
                here / name
                for name in sorted(files)
                if not name.startswith(".")
                and (Path(name).suffix.lower() in EXTENSIONS or is_man_page_name(name))
            )
        return sorted(found, key=lambda p: p.relative_to(root).parts)

    def add_dir(
        self,
        path: str | Path,
        trust: str | None = None,
        on_error: ErrorHandler | None = None,
    ) -> builtins.list[AddResult]:
        """Add every supported file under ``path`` (see :meth:`discover`), in a stable order.

        A file that fails is passed to ``on_error`` and the rest are still added; without
        ``on_error``, the failures are raised together as one SourceError after the others are in.
        """
        self._trust(trust)
        results: builtins.list[AddResult] = []
        failures: builtins.list[str] = []
        files = self.discover(path)
        for file, outcome in zip(files, self.add_files(files, trust), strict=True):
            if isinstance(outcome, AddResult):
                results.append(outcome)
            elif on_error is None:
                failures.append(f"{file}: {outcome}")
            else:
                on_error(file, outcome)
        if failures:
            added = sum(result.added for result in results)
            raise SourceError(
                f"{len(failures)} file(s) could not be added ({added} other(s) were):\n"
                + "\n".join(failures)
            )
        return results

    def add_url(
        self, url: str, trust: str | None = None, *, public_only: bool = False
    ) -> AddResult:
        """Fetch ``url`` within the vault's limits and add the bytes it served. The origin, and so
        the URL trust rules are matched against, is the URL that finally answered (after
        redirects), so a redirect can't borrow a trusted site's tier."""
        self._trust(trust)
        config = self.vault.config
        fetched = fetch_url(
            url,
            max_bytes=config.max_url_bytes,
            timeout=float(config.url_timeout_seconds),
            max_redirects=config.max_redirects,
            client=self.client,
            allowed_hosts=config.allow_private_hosts,
            public_only=public_only,
        )
        name = url_name(fetched.final_url)
        media_type = detect_media_type(name, fetched.data, fetched.content_type)
        return self.add_bytes(
            fetched.data,
            fetched.final_url,
            name,
            media_type=media_type,
            trust=trust,
            charset=charset_of(fetched.content_type),
        )

    def add_bytes(
        self,
        data: bytes,
        origin: str,
        name: str,
        media_type: str | None = None,
        trust: str | None = None,
        charset: str | None = None,
        mode: int | None = None,
    ) -> AddResult:
        """Store ``data`` as a source unless the same bytes are already stored.

        The tier is ``trust`` if given, else the longest ``trust.rules`` pattern matching
        ``origin``, else ``sources.default_trust``. ``charset`` is a web server's declared text
        encoding, if any. ``mode``: the original file's mode (None for bytes with no file): the
        stored copies are never more readable (:func:`affidavit.privacy.source_mode`).
        """
        prepared = self._prepare(data, origin, name, media_type, trust, charset, mode)
        if isinstance(prepared, AddResult):
            return prepared
        record = prepared.record
        with self.vault.write_lock():
            existing = self._find(record.id)  # another process may have added it meanwhile
            if existing is not None:
                self._commit_interrupted(existing)
                return self._unchanged(existing)
            self.vault.sources_dir.mkdir(exist_ok=True)
            self._write_if_needed(
                self.vault.root / record.original_file, data, record.id, prepared.mode
            )
            self._write_if_needed(
                self.vault.root / record.text_file, prepared.text, record.text_sha256, prepared.mode
            )
            record = self._insert(record)
            # its own two files only: anything else dropped or staged in sources/ stays out
            self.vault.git.commit(_add_message([record]), [record.original_file, record.text_file])
        return _added(record)

    def _prepare(
        self,
        data: bytes,
        origin: str,
        name: str,
        media_type: str | None,
        trust: str | None,
        charset: str | None,
        original_mode: int | None = None,
    ) -> _Prepared | AddResult:
        """The record and files of a new source (nothing written), or the stored one's result
        (its stored copies made no more readable than this original)."""
        tier = self._trust(trust, origin)
        source_id = sha256_hex(data)
        shared = bool(self.vault.config.get("privacy.shared_group"))
        mode = source_mode(shared, original_mode)
        existing = self._find(source_id)
        if existing is not None and not self.vault.read_only:
            with self.vault.write_lock():  # the same bytes from a more private file: private
                for relative in (existing.original_file, existing.text_file):
                    tighten(inside(self.vault.root, relative, under="sources"), mode)
            if self.uncommitted(existing):
                with self.vault.write_lock():
                    self._commit_interrupted(existing)
            return self._unchanged(existing)
        media_type = media_type or detect_media_type(name, data)
        if media_type not in BINARY and (
            why := binary_reason(gunzip(data) if media_type == MAN else data)
        ):
            raise SourceError(
                f"{origin}: refusing binary content, although it is named as {media_type}: {why}. "
                f"Affidavit reads text documents ({SUPPORTED_HELP}); if this is a document, "
                f"convert it to text (e.g. with pandoc) and add the result."
            )
        extracted = extract(
            data,
            media_type,
            charset,
            cache=self.vault.state_dir / SIGHT_CACHE,
            owner=owner_of(self.vault.root),
            office=bool(self.vault.config.get("sources.render_office")),
        )
        text_bytes = extracted.text.encode("utf-8")
        stated = stated_of(name, origin, data, extracted.text)
        record = SourceRecord(
            id=source_id,
            origin=origin,
            name=name,
            media_type=media_type,
            original_file=f"sources/{source_id}.{MEDIA_EXTENSIONS[media_type]}",
            text_file=f"sources/{source_id}.extracted.txt",
            text_sha256=sha256_hex(text_bytes),
            size_bytes=len(data),
            text_chars=len(extracted.text),
            trust=tier,
            status="active",
            added_at=iso(self.vault.clock()),
            text_map=extracted.text_map,
            flags=extracted.flags,
            trust_chosen=tier if trust is not None else "",
            origin_key=origin_key(origin),
            stated=stated.value if stated else "",
            stated_key=stated.key if stated else "",
            stated_rank=stated.rank if stated else 0,
        )
        return _Prepared(record, data, text_bytes, mode)

    # --- reading ------------------------------------------------------------------------------

    def get(self, id_or_prefix: str) -> SourceRecord:
        """The source with this id or unique id prefix (at least 4 hex digits)."""
        ref = id_or_prefix.strip().lower()
        if len(ref) < MIN_LOOKUP_LENGTH or not _HEX.match(ref):
            raise NotFoundError(
                f"{id_or_prefix!r} is not a source id. Give at least {MIN_LOOKUP_LENGTH} hex "
                f"digits of one; `affidavit sources list` shows them."
            )
        rows = self._rows_with_prefix(ref, limit=2)
        if not rows:
            raise NotFoundError(
                f"No source with id {ref}. `affidavit sources list` shows the stored sources."
            )
        if len(rows) > 1:
            raise NotFoundError(
                f"{ref} is ambiguous: several sources start with it. Give more digits of the id."
            )
        return self._record(rows[0])

    def resolve(self, ref: str) -> str | None:
        """The full id for a source id or unique prefix of >= 12 hex digits, else None."""
        ref = ref.strip().lower()
        if not MIN_REF_LENGTH <= len(ref) <= 64 or not _HEX.match(ref):
            return None
        if ref in self._known:
            return ref
        rows = self._rows_with_prefix(ref, limit=2)
        if len(rows) != 1:
            return None
        if len(ref) == 64:  # a full id names its source for good; a prefix may turn ambiguous
            self._known.add(ref)
        return str(rows[0]["id"])

    def text(self, source_id: str) -> str:
        """The stored extracted text of a source (exactly as stored: no newline translation)."""
        cached = self._texts.get(source_id)
        if cached is not None and self._still_on_disk(source_id):
            self._texts.move_to_end(source_id)
            return cached
        row = self.vault.db.execute(
            "SELECT text_file FROM sources WHERE id = ?", (source_id,)
        ).fetchone()
        if row is None:
            raise NotFoundError(f"No source with id {source_id}. Check the id.")
        shared = cached_text(self.text_key(source_id))  # the verifier's, if the file is intact
        if shared is not None:
            self._keep(source_id, shared)
            return shared
        path = self.vault.root / row["text_file"]
        try:
            value: str = read_inside(self.vault.base, row["text_file"], under="sources").decode(
                "utf-8"
            )
        except FileNotFoundError as exc:
            raise IntegrityError(
                f"The text of source {source_id[:12]} ({path}) is missing. Run `affidavit doctor`."
            ) from exc
        self._keep(source_id, value)
        return value

    def _keep(self, source_id: str, text: str) -> None:
        row = self.vault.db.execute(
            "SELECT text_file FROM sources WHERE id = ?", (source_id,)
        ).fetchone()
        stamp = file_stamp(self.vault.base, row[0]) if row is not None else None
        if stamp is None:
            return
        self._stamps[source_id] = stamp
        self._checked[source_id] = self._round
        self._texts[source_id] = text
        self._text_chars += len(text)
        while self._text_chars > _TEXT_CACHE_CHARS and len(self._texts) > 1:
            dropped_id, dropped = self._texts.popitem(last=False)
            self._stamps.pop(dropped_id, None)
            self._checked.pop(dropped_id, None)
            self._text_chars -= len(dropped)

    def forget_changed(self) -> None:
        """From now on, a kept text whose file changed on disk since it was read (by inode, size,
        mtime and ctime, which no write can leave as they were) is dropped before it is used:
        a store kept across admissions reads a tampered file again, as a new store would, and
        the gate sees what is stored now. Each kept text's file is looked at when the text is
        next asked for, once until the next call (not every kept text's at every call: a plan
        reads a few of them, and an ingest keeps hundreds)."""
        self._round += 1

    def _still_on_disk(self, source_id: str) -> bool:
        """False (and the kept text dropped) when ``source_id``'s kept text's file changed since
        it was read; looked at once per :meth:`forget_changed` round."""
        if self._checked.get(source_id) == self._round:
            return True
        relpath, stamp = self._stamps[source_id]
        if file_stamp(self.vault.base, relpath) == (relpath, stamp):
            self._checked[source_id] = self._round
            return True
        self._stamps.pop(source_id, None)
        self._checked.pop(source_id, None)
        text = self._texts.pop(source_id, None)
        if text is not None:
            self._text_chars -= len(text)
        return False

    def text_key(self, source_id: str) -> str | None:
        """The SHA-256 of a source's stored text, if its file still has it (None if missing or
        changed): the verifier's shared cache finds the text's normalised form by it without
        reading the file again. Checked by file status (:func:`~affidavit.sources.files.file_sha256`), not re-hashed."""
        row = self.vault.db.execute(
            "SELECT text_file, text_sha256 FROM sources WHERE id = ?", (source_id,)
        ).fetchone()
        if row is None:
            return None
        try:
            intact = file_sha256(self.vault.base, row["text_file"]) == row["text_sha256"]
        except (OSError, AffidavitError):
            return None
        return str(row["text_sha256"]) if intact else None

    def flags(self, source_id: str) -> builtins.list[Flag]:
        """The sanitizer flags of a source, by position (stored with the source, never changed:
        read once per store)."""
        known = self._flags.get(source_id)
        if known is not None:
            return list(known)
        rows = self.vault.db.execute(
            'SELECT kind, start, "end", detail FROM source_flags WHERE source_id = ? '
            'ORDER BY start, "end", kind',
            (source_id,),
        ).fetchall()
        flags = [Flag(row["kind"], row["start"], row["end"], row["detail"]) for row in rows]
        if rows or self._find_row(source_id):  # no row yet: an add may still insert its flags
            self._flags[source_id] = flags
        return list(flags)

    def check_integrity(self, source_id: str) -> builtins.list[str]:
        """Problems with a source's stored files (missing, or bytes that no longer match their
        hashes); an empty list when all is well."""
        record = self.get(source_id)
        problems: builtins.list[str] = []
        for label, relative, expected in (
            ("original", record.original_file, record.id),
            ("extracted text", record.text_file, record.text_sha256),
        ):
            try:  # a path from the database: W10
                digest = file_sha256(self.vault.base, relative)
            except FileNotFoundError:
                problems.append(f"{label} file {relative} is missing")
            except AffidavitError as exc:
                problems.append(f"{label} file {relative}: {exc}")
            else:
                if digest != expected:
                    problems.append(
                        f"{label} file {relative} no longer matches its SHA-256 {expected}"
                    )
        return problems

    def list(self) -> builtins.list[SourceRecord]:
        """Every stored source, oldest first."""
        rows = self.vault.db.execute("SELECT * FROM sources ORDER BY added_at, name, id").fetchall()
        return [self._record(row) for row in rows]

    # --- internals ----------------------------------------------------------------------------

    def _trust(self, trust: str | None, origin: str | None = None) -> str:
        """An explicit tier, else the longest ``trust.rules`` pattern matching ``origin``, else
        ``sources.default_trust``."""
        config = self.vault.config
        if trust is None:
            if origin is None:
                return config.default_trust
            return trust_for(origin, config.trust_rules, config.default_trust).tier
        if trust not in TRUST_TIERS:
            raise SourceError(
                f"Unknown trust tier {trust!r}. Use one of: {', '.join(TRUST_TIERS)}."
            )
        return trust

    def _refuse_vault_files(self, path: Path) -> None:
        for folder, why in (
            (self.vault.sources_dir, "it is already a stored source file"),
            (self.vault.wiki_dir, "wiki pages are rendered from claims, never their own evidence"),
        ):
            if path.is_relative_to(folder.resolve()):
                raise SourceError(f"{path} is inside this vault's {folder.name}/: {why}.")

    def _rows_with_prefix(self, prefix: str, limit: int) -> builtins.list[sqlite3.Row]:
        upper = prefix + "g"  # ids are lowercase hex: every id with the prefix sorts below this
        return self.vault.db.execute(
            "SELECT * FROM sources WHERE id >= ? AND id < ? ORDER BY id LIMIT ?",
            (prefix, upper, limit),
        ).fetchall()

    def _find_row(self, source_id: str) -> bool:
        return (
            self.vault.db.execute("SELECT 1 FROM sources WHERE id = ?", (source_id,)).fetchone()
            is not None
        )

    def _find(self, source_id: str) -> SourceRecord | None:
        row = self.vault.db.execute("SELECT * FROM sources WHERE id = ?", (source_id,)).fetchone()
        return self._record(row) if row is not None else None

    def _record(self, row: sqlite3.Row) -> SourceRecord:
        values = dict(row)
        values["text_map"] = json.loads(values["text_map"])
        return SourceRecord(**values, flags=self.flags(values["id"]))

    def uncommitted(self, record: SourceRecord) -> builtins.list[str]:
        """The stored files of ``record`` that git's HEAD lacks: an add killed after its
        database row and before its commit leaves them so (doctor reports it)."""
        files = (record.original_file, record.text_file)
        return [f for f in files if not self.vault.git.in_head(f)]

    def _commit_interrupted(self, record: SourceRecord) -> None:
        """Adding a stored source again finishes an add that was killed before its git commit:
        its files are committed, when they are still intact (under the caller's writer lock)."""
        missing = self.uncommitted(record)
        if missing and not self.check_integrity(record.id):
            self.vault.git.commit(_add_message([record]), missing)

    def _unchanged(self, record: SourceRecord) -> AddResult:
        return AddResult(
            record, False, f"already stored as {record.short_id} ({record.name}); nothing changed"
        )

    @staticmethod
    def _write_if_needed(path: Path, data: bytes, digest: str, mode: int) -> None:
        """Write a read-only file unless an intact copy is already there (left by an add that was
        interrupted before its database row was written)."""
        if path.is_file() and sha256_file(str(path)) == digest:
            keep_readonly(path, mode)
            return
        write_readonly(path, data, mode)

    def _insert(self, record: SourceRecord) -> SourceRecord:
        """Insert ``record`` (under the writer lock) as the next version of its origin; returns
        it with its version and the id of the version it replaces."""
        with dbmod.transaction(self.vault.db) as db:
            latest = current_version(db, record.origin_key) if record.origin_key else None
            if latest is not None:
                record = replace(record, version=latest[1] + 1, previous_id=latest[0])
            db.execute(
                "INSERT INTO sources (id, origin, name, media_type, original_file, text_file, "
                "text_sha256, size_bytes, text_chars, trust, status, added_at, text_map, "
                "trust_chosen, origin_key, version, previous_id, stated, stated_key, stated_rank) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    record.id,
                    record.origin,
                    record.name,
                    record.media_type,
                    record.original_file,
                    record.text_file,
                    record.text_sha256,
                    record.size_bytes,
                    record.text_chars,
                    record.trust,
                    record.status,
                    record.added_at,
                    json.dumps(record.text_map, separators=(",", ":")),
                    record.trust_chosen,
                    record.origin_key,
                    record.version,
                    record.previous_id,
                    record.stated,
                    record.stated_key,
                    record.stated_rank,
                ),
            )
            db.executemany(
                'INSERT INTO source_flags (source_id, kind, start, "end", detail) '
                "VALUES (?, ?, ?, ?, ?)",
                [(record.id, f.kind, f.start, f.end, f.detail) for f in record.flags],
            )
        return record


__all__ = [
    "AddResult",
    "SourceRecord",
    "SourceStore",
    "binary_reason",
    "url_name",
]
