"""Admission of ``update_page``: a page's new title or summary, judged as ``create_page``'s are.

A page's title and summary are its own words (W11): ``create_page``'s are judged against the
quotes of the claims that go in with it (:mod:`.texts`). When the page's claims change later (a
new version supersedes one, a retraction takes one out), its summary can go on stating the old
fact ("Steep green tea briefly, two minutes at most" beside the claim "… three minutes").
``update_page`` gives it new words, judged against the quotes of the page's active claims,
without those an earlier operation of the same plan ends and with those it adds to the page (a
supersession's new claim, claims added to it): an unsupported text is rejected (the operation
with it), an uncertain one waits as it would anyway — the policy never applies an
``update_page`` without a person (:data:`PAGE_WORDS_POLICY`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..plan.schema import AddClaims, CreatePage, Plan, SupersedeClaim, UpdatePage
from ..support import UNCERTAIN
from .texts import SUMMARY_SHARE, TITLE_SHARE, TextJudge
from .verdicts import REJECTED, ClaimResult, OpResult, TextResult

if TYPE_CHECKING:
    from .admission import _Gate

__all__ = ["PAGE_WORDS_POLICY", "page_words"]

PAGE_WORDS_POLICY = (
    "update_page changes what a page says in its own words (its title or summary): a person "
    "reads the old and the new words first"
)


def page_words(
    gate: _Gate,
    judge: TextJudge,
    plan: Plan,
    op: UpdatePage,
    result: OpResult,
    earlier: Sequence[OpResult],
) -> None:
    """Decide ``op`` (see the module doc); ``earlier``: the plan's operations judged before it."""
    created = any(
        isinstance(plan.operations[r.index], CreatePage)
        and plan.operations[r.index].slug == op.page  # type: ignore[union-attr]
        for r in earlier
    )
    now = gate.wiki.page_texts(op.page)
    if not created and not now:
        result.decide(REJECTED, "targets", f"page '{op.page}' does not exist")
        return
    asked = {"title": op.title, "summary": op.summary}
    result.detail = {"page": op.page, "old": {k: v for k, v in now.items() if asked[k] is not None}}
    ids = [c for c in gate.wiki.active_claims(op.page) if c not in gate.ended]
    basis = judge._stored(ids, _added(gate, plan, op.page, earlier))
    for what, text, share in (
        ("title", op.title, TITLE_SHARE),
        ("summary", op.summary, SUMMARY_SHARE),
    ):
        if text is None:
            continue
        verdict = TextResult(what, text)
        result.texts.append(verdict)
        if not basis.all_quotes:
            verdict.decide(REJECTED, "support", f"no active claim of '{op.page}' says the {what}")
        else:
            judge.judge(result, verdict, basis, share)
        if verdict.status == REJECTED:
            result.decide(REJECTED, verdict.check or "support", verdict.reason)
        elif verdict.support == UNCERTAIN:
            result.uncertain[what] = list(verdict.missing)


def _added(gate: _Gate, plan: Plan, page: str, earlier: Sequence[OpResult]) -> list[ClaimResult]:
    """The passing claims earlier operations of the plan put on ``page``."""
    out: list[ClaimResult] = []
    for r in earlier:
        if not r.passes:
            continue
        op = plan.operations[r.index]
        if isinstance(op, CreatePage | AddClaims):
            lands = (op.slug if isinstance(op, CreatePage) else op.page) == page
        elif isinstance(op, SupersedeClaim) and op.by is not None:
            row = gate.wiki.claim(op.claim)
            lands = row is not None and row.page_slug == page
        else:
            lands = False
        if lands:
            out += [c for c in r.claims if c.passes and not c.role]
    return out
