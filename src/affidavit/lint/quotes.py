"""The quote gate for findings (SPEC W9): nothing lint reports may rest on a quote that isn't there.

A proposed finding names quotes with the claim or source they come from. The host re-reads each
one in the stored source text: a quote cited with a claim id must be found in a source that claim
cites; a quote cited with a source id must be found in that source (and is then attributed to the
active claims whose evidence it overlaps). Unverified quotes are kept with ``verified: false`` and
the reason, and the finding is dropped when it can't show what its kind needs:

- contradiction, duplicate: two or more verified quotes from different claims;
- stale: one or more verified quotes, and the claim it says is stale;
- missing page, missing link: one or more verified quotes.

A finding that carries any unverified quote is dropped as well: a proposer that invents one quote
gets no benefit of the doubt for the others.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from ..evidence import QuoteCheck, Verifier
from ..sources.extract import locator
from ..sources.lineage import claim_replaces
from ..storage.queries import Sql
from .findings import Finding, FindingQuote

CONTEXT_CHARS = 120
"""Characters of source text shown on each side of a quote."""


class QuotedSources(Protocol):
    """What the gate reads of the stored sources: a vault's ``SourceStore``, or a PostgreSQL
    vault's :class:`~affidavit.storage.postgres_gate.PgSources`."""

    def resolve(self, ref: str) -> str | None: ...

    def text(self, source_id: str) -> str: ...

    def get(self, id_or_prefix: str) -> Any: ...


@dataclass(frozen=True)
class ProposedQuote:
    """A quote as a proposer gave it: the text and the claim and/or source it says it is from."""

    quote: str
    claim_id: str | None = None
    source_id: str | None = None


@dataclass(frozen=True)
class Verdict:
    kept: bool
    reason: str
    finding: Finding


def _one_line(text: str) -> str:
    return " ".join(text.split())


class QuoteGate:
    """Re-finds the quotes of proposed findings in the stored sources.

    A gate reads each claim's status and sources, and each source's text and where its lines
    start, once: use one per pass over a database that doesn't change meanwhile (a lint run
    judges its findings before it records any)."""

    def __init__(self, db: Sql, store: QuotedSources, verifier: Verifier) -> None:
        self.db = db
        self.store = store
        self.verifier = verifier
        self._sources: dict[str, list[str]] = {}
        self._status: dict[str, str | None] = {}
        self._texts: dict[str, tuple[str, Callable[[int], str]]] = {}
        self._checked: dict[tuple[str, str], QuoteCheck] = {}

    def prefetch(self, proposed: Iterable[ProposedQuote]) -> None:
        """Look up at once every quote of ``proposed`` in each source a check of it would read
        (the sources its claim cites, or the source it names): the verifier then reads each
        source once for all its quotes (:meth:`~affidavit.evidence.Verifier.check_many`)
        instead of once per quote. :meth:`check` gives what it gives without."""
        pairs: dict[tuple[str, str], None] = {}
        for p in proposed:
            if p.claim_id is not None:
                if self._claim_status(p.claim_id) is None:
                    continue
                for source_id in self._claim_sources(p.claim_id):
                    pairs[(source_id, p.quote)] = None
            elif p.source_id is not None:
                full = self.store.resolve(p.source_id)
                if full is not None:
                    pairs[(full, p.quote)] = None
        wanted = [pair for pair in pairs if pair not in self._checked]
        for pair, found in zip(wanted, self.verifier.check_many(wanted), strict=True):
            self._checked[pair] = found

    def _claim_sources(self, claim_id: str) -> list[str]:
        known = self._sources.get(claim_id)
        if known is None:
            rows = self.db.execute(
                "SELECT DISTINCT source_id FROM evidence WHERE claim_id = ? ORDER BY source_id",
                (claim_id,),
            ).fetchall()
            known = self._sources[claim_id] = [str(row[0]) for row in rows]
        return list(known)

    def _claim_status(self, claim_id: str) -> str | None:
        """The claim's status (None: no such claim)."""
        if claim_id not in self._status:
            row = self.db.execute("SELECT status FROM claims WHERE id = ?", (claim_id,)).fetchone()
            self._status[claim_id] = None if row is None else row[0]
        return self._status[claim_id]

    def _text(self, source_id: str) -> tuple[str, Callable[[int], str]]:
        """A source's text and its :func:`~affidavit.sources.extract.locator`."""
        known = self._texts.get(source_id)
        if known is None:
            text = self.store.text(source_id)
            known = self._texts[source_id] = (
                text,
                locator(text, self.store.get(source_id).text_map),
            )
        return known

    def _claims_at(self, source_id: str, start: int, end: int) -> list[str]:
        rows = self.db.execute(
            "SELECT DISTINCT e.claim_id FROM evidence e JOIN claims c ON c.id = e.claim_id "
            "WHERE e.source_key = (SELECT key FROM source_keys WHERE source_id = ?) "
            "AND e.start < ? AND e.\"end\" > ? AND c.status = 'active' "
            "ORDER BY c.created_at, e.claim_id",
            (source_id, end, start),
        ).fetchall()
        return [str(row[0]) for row in rows]

    def _found(self, proposed: ProposedQuote, source_id: str) -> FindingQuote | None:
        check = self._checked.get((source_id, proposed.quote))
        if check is None:
            check = self.verifier.check(source_id, proposed.quote)
        if not check.verified:
            return None
        assert check.source_id is not None and check.start is not None and check.end is not None
        text, where = self._text(check.source_id)
        before = text[max(0, check.start - CONTEXT_CHARS) : check.start]
        after = text[check.end : check.end + CONTEXT_CHARS]
        context = (
            f"{_one_line(before)} «{_one_line(text[check.start : check.end])}» {_one_line(after)}"
        )
        return FindingQuote(
            quote=proposed.quote,
            claim_id=proposed.claim_id,
            source_id=check.source_id,
            verified=True,
            start=check.start,
            end=check.end,
            location=where(check.start),
            context=context.strip(),
        )

    def check(self, proposed: ProposedQuote) -> FindingQuote:
        """Look ``proposed`` up where it says it is from."""

        def failed(reason: str) -> FindingQuote:
            return FindingQuote(
                quote=proposed.quote,
                claim_id=proposed.claim_id,
                source_id=proposed.source_id,
                verified=False,
                reason=reason,
            )

        if proposed.claim_id is not None:
            if self._claim_status(proposed.claim_id) is None:
                return failed(f"there is no claim {proposed.claim_id}")
            sources = self._claim_sources(proposed.claim_id)
            if proposed.source_id is not None:
                full = self.store.resolve(proposed.source_id)
                if full is None or full not in sources:
                    return failed(
                        f"source {proposed.source_id[:12]} is not evidence of claim "
                        f"{proposed.claim_id}"
                    )
                sources = [full]
            for source_id in sources:
                found = self._found(proposed, source_id)
                if found is not None:
                    return found
            return failed(f"quote not found in the sources of claim {proposed.claim_id}")
        if proposed.source_id is None:
            return failed("the quote names neither a claim nor a source")
        full = self.store.resolve(proposed.source_id)
        if full is None:
            return failed(f"there is no source {proposed.source_id[:12]}")
        found = self._found(proposed, full)
        if found is None:
            return failed(f"quote not found in source {full[:12]}")
        assert found.start is not None and found.end is not None
        claims = self._claims_at(full, found.start, found.end)
        return found.model_copy(update={"claim_id": claims[0]}) if claims else found

    def judge(self, finding: Finding, proposed: list[ProposedQuote]) -> Verdict:
        """Verify every quote of ``finding`` and decide whether it may be kept."""
        quotes = [self.check(p) for p in proposed]
        claims = list(finding.claims)
        for q in quotes:
            if q.verified and q.claim_id and q.claim_id not in claims:
                claims.append(q.claim_id)
        checked = finding.model_copy(update={"quotes": quotes, "claims": claims})
        bad = [q for q in quotes if not q.verified]
        if bad:
            return Verdict(False, f"{len(bad)} quote(s) not found: {bad[0].reason}", checked)
        verified_claims = {q.claim_id for q in quotes if q.verified and q.claim_id}
        kind = finding.kind
        if kind in ("contradiction", "duplicate"):
            if len(verified_claims) < 2:
                return Verdict(
                    False,
                    f"a {kind} needs verified quotes from two different claims; "
                    f"it has {len(verified_claims)}",
                    checked,
                )
        elif kind == "stale":
            if not quotes:
                return Verdict(False, "a stale finding needs at least one verified quote", checked)
            if not finding.claims:
                return Verdict(False, "a stale finding must name the stale claim", checked)
            if len(finding.claims) < 2 or not claim_replaces(
                self.db, finding.claims[1], finding.claims[0]
            ):
                return Verdict(
                    False,
                    "a stale finding needs a newer claim that cites a later version of the same "
                    "source (same path or URL), or a later release of the same document by the "
                    "version or date both state, than the stale one; being ingested later is no "
                    "evidence",
                    checked,
                )
        elif not quotes:
            return Verdict(False, f"a {kind} finding needs at least one verified quote", checked)
        for claim in checked.claims:
            if self._claim_status(claim) != "active":
                return Verdict(False, f"claim {claim} is not active", checked)
        return Verdict(True, "", checked)
