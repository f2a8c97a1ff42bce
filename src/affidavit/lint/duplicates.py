"""Shared text reported once (issue 24 item 2): a sentence many sources state — a manual's
boilerplate on every page ("Report bugs to the mailing list.") — is one finding, not one per pair.

The extractive finder raises a duplicate for each pair of near-identical claims on related pages:
a sentence on 20 pages made up to 190 findings, each with a fix that would retire a true claim of
its page. Pairs that share claims are joined into groups; a group of :data:`SHARED` claims or more
becomes one ``info`` finding that lists them and proposes no fix (each page keeps its sentence: the
text is shared, not redundant). Two claims stay one ordinary duplicate finding with its merge fix.
"""

from __future__ import annotations

from .candidates import Candidate
from .findings import Finding

SHARED = 3
"""Claims stating one sentence at which it is shared text, reported once."""
SHOWN = 20
"""Claims a shared-text finding lists (the rest are counted in its message)."""


def report_once(candidates: list[Candidate]) -> list[Candidate]:
    """``candidates`` with each group of :data:`SHARED` or more duplicate claims as one finding,
    in the place of the group's first pair; other candidates unchanged and in order."""
    parent: dict[str, str] = {}

    def root(claim: str) -> str:
        while parent.setdefault(claim, claim) != claim:
            parent[claim] = parent[parent[claim]]
            claim = parent[claim]
        return claim

    pairs = [c for c in candidates if c.finding.kind == "duplicate" and len(c.finding.claims) == 2]
    for candidate in pairs:
        a, b = (root(c) for c in candidate.finding.claims)
        if a != b:
            parent[max(a, b)] = min(a, b)
    groups: dict[str, list[Candidate]] = {}
    for candidate in pairs:
        groups.setdefault(root(candidate.finding.claims[0]), []).append(candidate)
    out: list[Candidate] = []
    done: set[str] = set()
    for candidate in candidates:
        if candidate.finding.kind != "duplicate" or len(candidate.finding.claims) != 2:
            out.append(candidate)
            continue
        key = root(candidate.finding.claims[0])
        members = groups[key]
        claims = sorted({c for m in members for c in m.finding.claims})
        if len(claims) < SHARED:
            out.append(candidate)
        elif key not in done:
            done.add(key)
            out.append(_shared(members, claims))
    return out


def _shared(members: list[Candidate], claims: list[str]) -> Candidate:
    pages = sorted({p for m in members for p in m.finding.pages})
    first = members[0]
    quote = first.quotes[0].quote if first.quotes else ""
    shown = f"“{quote[:100]}{'…' if len(quote) > 100 else ''}” " if quote else ""
    more = f" (the first {SHOWN} listed)" if len(claims) > SHOWN else ""
    return Candidate(
        Finding(
            origin="extractive",
            kind="duplicate",
            severity="info",
            subject=claims[0],
            message=(
                f"shared text: {shown}is stated by {len(claims)} claims on {len(pages)} pages"
                f"{more}; reported once, each page keeps it"
            ),
            claims=claims[:SHOWN],
            pages=pages[:SHOWN],
            fix=None,
            fix_hint=(
                "Nothing to do for boilerplate; to keep one copy, supersede the others by hand "
                "(a plan with supersede_claim operations)."
            ),
        ),
        first.quotes,
    )
