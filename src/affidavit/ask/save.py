"""``ask --save``: an answer becomes a synthesis page proposal that waits in the inbox.

Each kept sentence becomes a claim that names the claims it rests on (``derived_from``) and
carries their verbatim quotes as its evidence, so the gate checks it like any other claim.
"""

from __future__ import annotations

import re
from typing import Any

from ..inbox import Proposal, propose
from ..plan.nonce import issue_nonce
from ..plan.schema import RESERVED_SLUGS
from .answer import Answer

_NOT_SLUG = re.compile(r"[^a-z0-9]+")


def free_slug(question: str, taken: set[str]) -> str:
    """The answer page's slug: the question's words, not one of ``taken`` (pages and slugs
    reserved by pending plans), nor a reserved slug."""
    base = _NOT_SLUG.sub("-", question.casefold()).strip("-")[:56].strip("-") or "answer"
    if base[0] == "-" or base in RESERVED_SLUGS:
        base = f"q-{base}".strip("-")
    slug, n = base, 2
    while slug in taken:
        slug, n = f"{base}-{n}", n + 1
    return slug


def answer_plan(answer: Answer, nonce: str, slug: str) -> dict[str, Any]:
    """The plan that saves ``answer`` (already checked) as page ``slug``, with ``nonce``."""
    by_id = {h.claim_id: h for h in answer.given}
    claims = []
    for sentence in answer.sentences:
        titles = [answer.titles[c] for c in sentence.claims if c in answer.titles]
        quotes = [  # a page title the answer rests on is quoted from its source's own line
            {"source": e.source_id, "quote": e.quote}
            for e in [*titles, *(e for cid in sentence.claims for e in by_id[cid].evidence)]
        ][:5]
        claims.append(
            {"text": sentence.text, "evidence": quotes, "derived_from": list(sentence.claims)[:10]}
        )
    title = answer_title(answer)
    return {
        "nonce": nonce,
        "summary": f"Saved answer to: {title}"[:300],
        "operations": [
            {
                "op": "create_page",
                "slug": slug,
                "title": title,
                "summary": " ".join(answer.sentences[0].text.split())[:300],
                "category": "answers",
                "section": "Answer",
                "claims": claims[:30],
            }
        ],
    }


def answer_title(answer: Answer) -> str:
    return " ".join(answer.question.split())[:120]


def propose_answer(vault: object, answer: Answer, author: str) -> Proposal:
    """Propose ``answer`` (already checked) as a new page by ``author``; returns the inbox
    proposal."""
    from ..vault import Vault

    assert isinstance(vault, Vault)
    taken = {r[0] for r in vault.db.execute("SELECT slug FROM pages")} | {
        r[0] for r in vault.db.execute("SELECT slug FROM slug_reservations")
    }
    nonce = issue_nonce(vault.db, vault.clock, "ask-save")
    plan = answer_plan(answer, nonce, free_slug(answer.question, taken))
    return propose(vault, plan, author, f"ask:{answer_title(answer)[:60]}")
