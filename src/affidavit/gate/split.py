"""What of a plan waits for a person when the policy applies the rest (W11: judged text by text).

The policy may apply a plan's *sure* part — claims the support check found supported, resting on
trusted sources — while its uncertain texts wait for a person as the plan's pending remainder. A
plan split that way must not say, in the part that goes in, what it would not say whole. So a
claim waits, besides when its own support is uncertain or its evidence is quarantined, when it
*leans* on the claim before it and that one doesn't go in: a claim that opens with a pronoun, a
demonstrative or a connective ("It was retracted in 2010.", "However, …") reads as being about
whatever stands before it on the page, and without its antecedent it would be about something
else. An operation waits whole when none of its claims goes in, and so does every operation that
extends or links a page whose creation waits, and a page that would get no claim at all.

Titles, summaries and headings are judged afterwards against the claims that go in
(:mod:`.texts`), so a text supported only by a waiting claim's quotes waits with it.
"""

from __future__ import annotations

import re

from ..plan.schema import AddClaims, CreatePage, LinkPages, Plan, UpdateContext
from ..support import UNCERTAIN
from .verdicts import QUARANTINED, ClaimResult, OpResult

LEANING = frozenset(
    [
        "it",
        "its",
        "he",
        "she",
        "his",
        "her",
        "him",
        "they",
        "them",
        "their",
        "theirs",
        "this",
        "that",
        "these",
        "those",
        "such",
        "both",
        "either",
        "neither",
        "another",
        "former",
        "latter",
        "also",
        "however",
        "but",
        "and",
        "or",
        "nor",
        "so",
        "thus",
        "therefore",
        "hence",
        "then",
        "consequently",
        "moreover",
        "furthermore",
        "nevertheless",
        "nonetheless",
        "instead",
        "otherwise",
        "similarly",
        "likewise",
        "meanwhile",
        "later",
        "afterwards",
        "afterward",
        "still",
        "yet",
        "besides",
        "accordingly",
        "conversely",
        "additionally",
        "further",
        "finally",
        "subsequently",
        "again",
        "too",
    ]
)
"""Words that, opening a claim (or its main clause after a fronted phrase), make it lean on the
sentence before it: personal and demonstrative pronouns, determiners that point back, and
discourse connectives."""
POINTING = frozenset(
    [
        "it",
        "its",
        "he",
        "she",
        "his",
        "her",
        "him",
        "they",
        "them",
        "their",
        "this",
        "these",
        "those",
    ]
)
"""The words that, as the first word after a fronted phrase, make a claim lean (its subject
points back); a conjunction there ("…, and …") joins the claim's own clauses."""
PHRASES = (
    "as a result",
    "in addition",
    "in contrast",
    "by contrast",
    "on the other hand",
    "for example",
    "for instance",
    "in turn",
    "the latter",
    "the former",
    "the same",
)
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")


def leaning_word(text: str) -> str:
    """The word or phrase by which ``text`` leans on the sentence before it ('' when it doesn't):
    its first word, or the first word after its first comma (a fronted phrase). A word there
    that doesn't lean ("The tower, it seems, …") only makes the claim wait with the one before
    it when that one waits: the safe side."""
    lowered = text.strip().lstrip("\"'“‘([").casefold()
    for phrase in PHRASES:
        if lowered.startswith(phrase) and not lowered[len(phrase) : len(phrase) + 1].isalnum():
            return phrase
    words = _WORD.findall(lowered)
    if words and words[0] in LEANING:
        return str(words[0])
    _, comma, rest = lowered.partition(",")
    if comma:  # past a fronted phrase ("In 1990, he …"), however long
        after = _WORD.findall(rest)
        if after and after[0] in POINTING:
            return str(after[0])
    return ""


def _own(op: OpResult) -> list[ClaimResult]:
    return sorted((c for c in op.claims if not c.role), key=lambda c: c.index)


def mark_claims(op: OpResult, before: ClaimResult | None = None) -> ClaimResult | None:
    """Say of each claim the operation adds whether, and why, it waits for a person when the
    policy applies the rest of its plan (:attr:`ClaimResult.waits`). ``before``: the claim the
    plan puts before the first one on the same page (an earlier operation's). Returns the last."""
    for claim in _own(op):
        if not claim.passes:
            claim.waits = ""
        elif claim.status == QUARANTINED:
            claim.waits = f"quarantined: {claim.reason}"
        elif claim.support == UNCERTAIN:
            claim.waits = claim.support_reason or "the support check is uncertain"
        else:
            claim.waits = ""
            word = leaning_word(claim.text)
            if word and before is not None and not before.sure:
                what = "waits for a person" if before.passes else "was rejected"
                which = f"claim {before.index + 1}" + (
                    "" if before in op.claims else " of an earlier operation"
                )
                claim.waits = f"opens with '{word}', which leans on {which}, which {what}"
        before = claim
    return before


def mark_ops(plan: Plan, results: list[OpResult], remainder: set[int]) -> None:
    """Say of each passing operation whether it waits whole (:attr:`OpResult.waits`): none of
    its claims goes in; it creates a page that would get no claim that goes in; or it extends
    or links a page whose creation waits. Operations completing an earlier approval
    (``remainder``) are a person's decision and never wait."""
    by_index = {r.index: r for r in results}
    last: dict[str, ClaimResult | None] = {}  # the claim the plan put last on each page
    for r in sorted(results, key=lambda r: r.index):
        op = plan.operations[r.index]
        r.waits = ""
        if not r.passes or r.index in remainder:
            continue
        if isinstance(op, CreatePage | AddClaims | UpdateContext):
            page = op.slug if isinstance(op, CreatePage) else getattr(op, "page", "")
            last[page] = mark_claims(r, last.get(page))
            own = _own(r)
            if own and not any(c.sure for c in own):
                r.waits = "every claim of it waits for a person"
    changed = True
    while changed:
        changed = False
        creators = {
            op.slug: by_index[i]
            for i, op in enumerate(plan.operations)
            if isinstance(op, CreatePage) and i in by_index and i not in remainder
        }
        going: dict[str, int] = {slug: 0 for slug in creators}
        for r in results:
            op = plan.operations[r.index]
            if isinstance(op, CreatePage | AddClaims) and r.sure:
                slug = op.slug if isinstance(op, CreatePage) else op.page
                if slug in going:
                    going[slug] += sum(1 for c in _own(r) if c.sure)
        for slug, creator in creators.items():
            if creator.sure and going[slug] == 0:
                creator.waits = "no claim of the page goes in without a person"
                changed = True
        for r in results:
            op = plan.operations[r.index]
            if not r.sure or r.index in remainder:
                continue
            named = [op.page] if isinstance(op, AddClaims) else []
            named += [op.page, op.to] if isinstance(op, LinkPages) else []
            held = [s for s in named if s in creators and not creators[s].sure]
            if held:
                r.waits = f"it extends page '{held[0]}', whose creation waits for a person"
                changed = True
