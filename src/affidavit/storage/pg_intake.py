"""A new source for a vault of a PostgreSQL database, read as a vault folder's source store reads
one (:meth:`affidavit.sources.store.SourceStore._prepare`): its media type, binary content under a
text name refused, its text extracted with its map and every flag of what a reader does not see
(W12: a style that hides it, a hidden Word run, white or tiny text), its trust tier from
``trust.rules`` or ``sources.default_trust`` — then stored in the database with its original bytes.
``affidavit team add`` and MCP's ``add_source`` on a database vault both come here. LibreOffice's
layout of Word and OpenDocument files (``sources.render_office``) is a vault folder's option only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..clock import iso, utc_now
from ..errors import SourceError
from ..sources.binary import binary_reason
from ..sources.extract import BINARY, MAN, SUPPORTED_HELP, Extracted, detect_media_type, extract
from ..sources.roff import gunzip
from ..sources.trust import trust_for

if TYPE_CHECKING:
    from ..config import Config
    from .postgres import PostgresStorage


def extracted(
    where: str, name: str, data: bytes, content_type: str | None = None, charset: str | None = None
) -> tuple[str, Extracted]:
    """The media type of ``data`` (named ``name``, served as ``content_type``) and its extracted
    text, map and flags; binary content under a text name is a :class:`SourceError` naming
    ``where`` it came from."""
    media = detect_media_type(name, data, content_type)
    if media not in BINARY and (why := binary_reason(gunzip(data) if media == MAN else data)):
        raise SourceError(
            f"{where}: refusing binary content, although it is named as {media}: {why}. Affidavit "
            f"reads text documents ({SUPPORTED_HELP}); convert it to text and add the result."
        )
    return media, extract(data, media, charset)


@dataclass(frozen=True)
class Added:
    """A source stored (or found stored: the same bytes are one source)."""

    id: str
    name: str
    trust: str
    added: bool


def add(
    storage: PostgresStorage,
    vault: str,
    config: Config,
    data: bytes,
    origin: str,
    name: str,
    *,
    content_type: str | None = None,
    charset: str | None = None,
) -> Added:
    """Store ``data`` from ``origin`` in ``vault`` at the tier ``config``'s trust rules give
    ``origin``; the same bytes already stored are that source, as it was stored."""
    from ..hashing import sha256_hex
    from .postgres import _q
    from .postgres_content import source_record, source_row

    media, text = extracted(origin, name, data, content_type, charset)
    tier = trust_for(origin, config.trust_rules, config.default_trust).tier
    source_id = sha256_hex(data)
    _, schema = storage._vault(vault)
    with storage.pool.connection() as conn:
        found = conn.execute(_q("SELECT 1 FROM {s}.sources WHERE id = %s", schema), (source_id,))
        before = found.fetchone()
    stored = storage.add_source(
        vault, data, origin=origin, name=name, added_at=iso(utc_now()), media_type=media,
        trust=tier, text=text.text, flags=text.flags, text_map=text.text_map,
    )  # fmt: skip
    with storage.pool.connection() as conn:
        record = source_record(source_row(conn, schema, stored))
    return Added(record.id, record.name, record.trust, before is None)


__all__ = ["Added", "add", "extracted"]
