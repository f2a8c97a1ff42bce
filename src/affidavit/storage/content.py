"""The wiki's content as the storage contract reads it back: a source (content-addressed bytes and
their extracted text), a page with its claims, each claim with its evidence (a quote and its
offsets into the source's text). Backend-neutral records and the checks both backends make on
read: a source's bytes re-hashed against its id, its text against ``text_sha256``, and each
quote against the source's text at its offsets (W3)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import IntegrityError
from ..hashing import sha256_hex


@dataclass(frozen=True)
class SourceRecord:
    """A stored source, without its bytes (:meth:`source_bytes` / :meth:`source_text` read them)."""

    id: str  # SHA-256 of the original bytes
    origin: str
    name: str
    media_type: str
    trust: str
    status: str
    added_at: str
    size_bytes: int
    text_chars: int


@dataclass(frozen=True)
class EvidenceRecord:
    idx: int
    source_id: str
    quote: str  # the source's own words at [start, end) of its text, never the proposer's
    start: int
    end: int
    location: str  # a human-readable place in the original ("line 12")


@dataclass(frozen=True)
class ClaimRecord:
    id: str
    section: str
    position: int
    text: str
    status: str
    trust: str
    plan_id: str
    created_at: str
    evidence: tuple[EvidenceRecord, ...]


@dataclass(frozen=True)
class PageRecord:
    slug: str
    title: str
    summary: str
    category: str
    created_at: str
    updated_at: str
    plan_id: str
    claims: tuple[ClaimRecord, ...]  # in page order (position)


def verified_bytes(source_id: str, data: bytes) -> bytes:
    """``data`` if it hashes to ``source_id``; else the stored bytes were altered."""
    if sha256_hex(data) != source_id:
        raise IntegrityError(
            f"source {source_id[:12]}'s stored bytes no longer hash to its id: they were altered. "
            "Restore the database from a backup, or add the original file again."
        )
    return data


def verified_text(source_id: str, text: str, text_sha256: str) -> str:
    """``text`` if it hashes to the recorded ``text_sha256``; else the stored text was altered."""
    if sha256_hex(text) != text_sha256:
        raise IntegrityError(
            f"source {source_id[:12]}'s stored text no longer matches its recorded hash: it was "
            "altered. Restore the database from a backup, or add the original file again."
        )
    return text


def verified_quote(claim_id: str, evidence: EvidenceRecord, text: str) -> EvidenceRecord:
    """``evidence`` if its quote is the source's text at its offsets (W3)."""
    if not 0 <= evidence.start < evidence.end <= len(text) or (
        text[evidence.start : evidence.end] != evidence.quote
    ):
        raise IntegrityError(
            f"claim {claim_id}'s quote {evidence.idx + 1} is not the text of source "
            f"{evidence.source_id[:12]} at [{evidence.start}, {evidence.end}): the evidence was "
            "altered. Restore the database from a backup."
        )
    return evidence


Row = Mapping[str, Any]


def page_record(
    page: Row, claims: Sequence[Row], evidence: Sequence[Row], text_of: Callable[[str], str]
) -> PageRecord:
    """A page from its rows (either backend's ``pages``, ``claims`` in position order, and
    ``evidence`` by claim and index), each quote checked against ``text_of(source)``, the
    source's text as re-hashed by the backend."""
    return PageRecord(
        str(page["slug"]), str(page["title"]), str(page["summary"]), str(page["category"]),
        str(page["created_at"]), str(page["updated_at"]), str(page["plan_id"]),
        claim_records(claims, evidence, text_of),
    )  # fmt: skip


def claim_records(
    claims: Sequence[Row], evidence: Sequence[Row], text_of: Callable[[str], str]
) -> tuple[ClaimRecord, ...]:
    """Claims from their rows (in order) and their evidence's (by claim and index), each quote
    checked against ``text_of(source)``: a page's claims, or the context's entries."""
    by_claim: dict[str, list[EvidenceRecord]] = {}
    for e in evidence:
        record = EvidenceRecord(
            int(e["idx"]), str(e["source_id"]), str(e["quote"]), int(e["start"]), int(e["end"]),
            str(e["location"]),
        )  # fmt: skip
        claim = str(e["claim_id"])
        by_claim.setdefault(claim, []).append(
            verified_quote(claim, record, text_of(record.source_id))
        )
    return tuple(
        ClaimRecord(
            str(c["id"]), str(c["section"]), int(c["position"]), str(c["text"]),
            str(c["status"]), str(c["trust"]), str(c["plan_id"]), str(c["created_at"]),
            tuple(by_claim.get(str(c["id"]), ())),
        )
        for c in claims
    )  # fmt: skip
