"""Two edits before a decision: a newer version replaces the pending plans it makes wrong.

Version 2 of a note changes "two minutes" to "three minutes": the lineage proposes, for a person,
the supersession of the old claim by a claim of version 2's words (:mod:`.lineage`). Before anyone
decides, version 3 changes the sentence again ("one minute"). The pending plan still names the old
claim, so version 3 proposed nothing for it and held nothing of what the model wrote from the
changed sentence: "one minute" went into the wiki beside "two minutes" (both facts), and
approving the waiting plan later brought in "three minutes", words no version holds any more.

So :func:`replace_stale`, called when a version is followed (after the carry, before its changes
are worked out), rejects each pending lineage plan of the origin's older versions that

- adds or supersedes with a claim citing words of an older version that the new version no
  longer has, or
- ends a claim the carry just moved to the new version (its words are back: an edit undone).

An edit undone to the very bytes of another version is no new version (the store keeps bytes
once, by their hash): the ingest finds them stored, and :func:`reverted` rejects the pending
plans of the origin's other versions that those words make wrong, in the same way, and proposes
for a person what those versions brought in that the file no longer says.

The claims such a plan ended are no longer waiting, so the new version proposes them again
against its own text. The plan's new claims whose words the new version still has are not lost:
they are handed back (:class:`.holding.Held`, their evidence re-pointed at the new version) to
the new proposals, as the model's claims held from the changed text are — a reworded
retraction's added claims move to the plan that retracts the old claim now.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ..clock import iso
from ..db import transaction
from ..evidence.verify import locate
from ..inbox import reject
from ..retract import LINEAGE_ORIGIN
from ..sources.sentences import sentences_of
from ..sources.store import SourceRecord, SourceStore
from ..store import audit
from ..vault import Vault
from .holding import Held

__all__ = ["follow_undone", "new_claims", "replace_stale", "reverted"]

_ADDING = {"add_claims": "claims", "create_page": "claims", "update_context": "entries"}


def new_claims(op: dict[str, Any]) -> list[dict[str, Any]]:
    """The new claims an operation of a lineage plan writes (``by``, ``claims``, ``entries``)."""
    if op.get("op") == "supersede_claim":
        return [op["by"]] if isinstance(op.get("by"), dict) else []
    found = op.get(_ADDING.get(str(op.get("op")), ""))
    return [c for c in found if isinstance(c, dict)] if isinstance(found, list) else []


def follow_undone(vault: Vault, found: Iterable[SourceRecord], actor: str) -> list[str]:
    """For each ``record`` whose bytes were found at its origin's own path again (stored
    already): when the file last held another version of the origin (an edit undone, or
    undone and redone), :func:`reverted`. One read of the origins' versions and one of the
    ``source_reverted`` entries for them all. Returns the plans rejected."""
    records = [r for r in found if r.origin_key]
    keys = sorted({r.origin_key for r in records})
    if not keys:
        return []
    versions: dict[str, list[str]] = {}
    for key, source_id in vault.db.execute(
        "SELECT origin_key, id FROM sources WHERE origin_key IN (SELECT value FROM json_each(?)) "
        "ORDER BY version DESC",
        (json.dumps(keys),),
    ):
        versions.setdefault(str(key), []).append(str(source_id))
    records = [r for r in records if len(versions.get(r.origin_key, ())) >= 2]
    if not records:
        return []
    seen: dict[str, tuple[str, str]] = {}  # origin -> (version it went back to, newest then)
    for (detail,) in vault.db.execute(
        "SELECT detail FROM audit WHERE action = 'source_reverted' ORDER BY seq"
    ):
        entry = json.loads(detail)
        seen[str(entry.get("origin"))] = (str(entry.get("to")), str(entry.get("newest")))
    out: list[str] = []
    for record in records:
        newest = versions[record.origin_key][0]
        to, then = seen.get(record.origin_key, (newest, newest))
        if (to if then == newest else newest) != record.id:
            out += reverted(vault, record, versions[record.origin_key], actor)
    return out


def reverted(vault: Vault, record: SourceRecord, versions: list[str], actor: str) -> list[str]:
    """``record``'s bytes are its origin's file again, after other ``versions`` of it (newest
    first): the pending plans of those versions that its words make wrong are rejected (the
    claims resting on it that they end are right again), and what they brought in that its
    words no longer say is proposed for a person (:func:`_follow_back`). An audit entry
    ``source_reverted`` records which version the file holds now (:func:`follow_undone` reads
    it: the same bytes seen again change nothing). Returns the plans rejected."""
    others = [v for v in versions if v != record.id]
    resting = {
        str(row[0])
        for row in vault.db.execute(
            "SELECT DISTINCT claim_id FROM evidence_rows WHERE source_key = "
            "(SELECT key FROM source_keys WHERE source_id = ?)",
            (record.id,),
        )
    }
    store = SourceStore(vault)
    with vault.write_lock():
        rejected, _ = replace_stale(vault, store, record, others, resting, actor)
        _follow_back(vault, store, record, others, actor)
        with transaction(vault.db):
            audit.append(
                vault.db,
                iso(vault.clock()),
                "source_reverted",
                None,
                actor,
                {"origin": record.origin_key, "to": record.id, "newest": versions[0]},
            )
    return rejected


def _follow_back(
    vault: Vault, store: SourceStore, record: SourceRecord, newer: list[str], actor: str
) -> None:
    """What the newer versions brought in that ``record``'s words (the file again) no longer
    say — a supersession approved before the edit was undone — is proposed for a person, as a
    new version's changes are (:func:`.lineage.propose_changes`: superseded by a claim quoting
    ``record``'s words where it restates them, else retracted). Claims whose words ``record``
    has stay where they are."""
    from ..store.blast import LIVE
    from .alignment import _align
    from .lineage import VersionFollow, VersionOutcome, _waiting_claims, changes_of
    from .lineage import evidence_rows_of as rows_of
    from .lineage import propose_changes as propose

    text = store.text(record.id)
    waiting = _waiting_claims(vault)
    follow = VersionFollow(record, VersionOutcome(record.id, record.version, newer))
    marks = ",".join("?" * len(LIVE))
    for source_id in newer:
        claims = [
            str(row[0])
            for row in vault.db.execute(
                "SELECT DISTINCT e.claim_id FROM evidence_rows e JOIN claims c ON c.id = "
                "e.claim_id WHERE e.source_key = (SELECT key FROM source_keys WHERE source_id = "
                f"?) AND c.status IN ({marks}) ORDER BY e.claim_id",
                (source_id, *LIVE),
            )
            if str(row[0]) not in waiting
        ]
        if claims:
            old = store.text(source_id)
            rows = rows_of(vault, source_id, claims)
            follow.changes += changes_of(rows, claims, old, text, _align(old, text))
    if follow.changes:
        propose(vault, follow, actor)


def replace_stale(
    vault: Vault,
    store: SourceStore,
    record: SourceRecord,
    older: list[str],
    carried: set[str],
    actor: str,
) -> tuple[list[str], list[Held]]:
    """Reject the pending lineage plans of the ``older`` versions of ``record``'s origin (or,
    for :func:`reverted`, its newer ones) that ``record`` makes wrong (see the module doc);
    ``carried``: the claims resting on ``record``. Returns the plans rejected and their new
    claims that ``record`` still states, re-pointed at it, for its proposals."""
    origins = {f"{LINEAGE_ORIGIN}:{source_id[:12]}": source_id for source_id in older}
    marks = ",".join("?" * len(origins))
    rows = vault.db.execute(
        f"SELECT id, plan_json FROM plans WHERE status = 'pending' AND origin IN ({marks}) "
        "ORDER BY rowid",
        tuple(origins),
    ).fetchall()
    if not rows:
        return [], []
    new_text = store.text(record.id)
    texts: dict[str, str] = {}
    rejected: list[str] = []
    moved: list[Held] = []
    for plan_id, plan_json in rows:
        try:
            ops = [op for op in json.loads(plan_json).get("operations", []) if isinstance(op, dict)]
        except (ValueError, AttributeError):
            continue
        keep: list[Held] = []
        stale = any(op.get("claim") in carried for op in ops)  # its words are back
        for op in ops:
            for claim in new_claims(op):
                repointed = _repointed(vault, store, claim, older, record, new_text, texts)
                if repointed is None:
                    stale = True
                elif repointed[1]:
                    keep.append(_held(vault, op, *repointed))
        if not stale:
            continue
        reject(
            vault,
            plan_id,
            f"version {record.version} of {record.name} ({record.short_id}) changed these "
            "words again: what it still says is proposed again against it",
            actor,
        )
        rejected.append(plan_id)
        moved += keep
    return rejected, moved


def _repointed(
    vault: Vault,
    store: SourceStore,
    claim: dict[str, Any],
    older: list[str],
    record: SourceRecord,
    new_text: str,
    texts: dict[str, str],
) -> tuple[dict[str, Any], tuple[tuple[int, int], ...]] | None:
    """``claim`` with its evidence in the ``older`` versions re-pointed at ``record`` (a quote
    of the same words), and where they are in its text; None when a cited span's words are not
    in it."""
    evidence = claim.get("evidence")
    if not isinstance(evidence, list):
        return claim, ()
    out: list[Any] = []
    spans: list[tuple[int, int]] = []
    for item in evidence:
        source = _older(item, older)
        if source is None:
            out.append(item)
            continue
        words = _words(store, source, item, texts)
        found = locate(new_text, words) if words else None
        if found is None:
            return None
        spans.append(found)
        out.append({"source": record.id, "quote": words})
    return {**claim, "evidence": out}, tuple(spans)


def _older(item: object, older: Iterable[str]) -> str | None:
    """The older version ``item`` (an evidence entry) cites, by its id or a 12+ hex prefix."""
    if not isinstance(item, dict):
        return None
    source = item.get("source")
    if not isinstance(source, str) or len(source) < 12:
        return None
    return next((s for s in older if s.startswith(source.lower())), None)


def _words(store: SourceStore, source: str, item: dict[str, Any], texts: dict[str, str]) -> str:
    """The words an evidence entry cites in ``source``: its quote, or its sentences' text."""
    if isinstance(item.get("quote"), str):
        return str(item["quote"])
    numbers = item.get("sentences")
    if numbers is None and item.get("sentence") is not None:
        numbers = [item["sentence"], item["sentence"]]
    if not (isinstance(numbers, list) and len(numbers) == 2):
        return ""
    if source not in texts:
        texts[source] = store.text(source)
    try:
        return sentences_of(source, texts[source]).sentence_text(int(numbers[0]), int(numbers[1]))
    except (IndexError, TypeError, ValueError):
        return ""


def _held(
    vault: Vault, op: dict[str, Any], claim: dict[str, Any], spans: tuple[tuple[int, int], ...]
) -> Held:
    """A rejected plan's claim handed to the new proposals as the model's held claims are: a
    supersession's ``by`` onto the superseded claim's page, an added claim where it was added."""
    if op.get("op") == "supersede_claim":
        row = vault.db.execute(
            "SELECT page_slug, section FROM claims WHERE id = ?", (op.get("claim"),)
        ).fetchone()
        page, section = (str(row[0] or ""), str(row[1] or "")) if row else ("", "")
        return Held("add_claims", page, section, claim, spans)
    where = op.get("slug") if op.get("op") == "create_page" else op.get("page")
    return Held(str(op.get("op")), str(where or ""), str(op.get("section") or ""), claim, spans)
