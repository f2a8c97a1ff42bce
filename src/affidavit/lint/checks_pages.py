"""Lint's ``unsupported_page_words`` check (W11, issue 27): a page's title or summary that its
active claims no longer say.

A page's title and summary are judged when the page is created, against the quotes of the claims
that go in with it (:mod:`affidavit.gate.texts`). Its claims change afterwards — a new version of
a source supersedes one, a retraction takes one out — and a summary in other words than a claim's
("Steep green tea briefly, two minutes at most") goes on stating the old fact beside the new
claim; :mod:`affidavit.store.summary_follows` only carries a summary that is the superseded
claim's own words. This check judges each page's title and summary again with the gate's own
rule (:meth:`~affidavit.gate.texts.TextJudge.judge`: the support check at the gate's shares,
the cited sources' names, a heading found verbatim) against the quotes of the page's active
claims — on the pages that lost a claim (superseded or retracted; an incremental run: those of
them changed since): a page's claims only ever added to since its words were judged still
support them (more quotes never take support away), so a first ingest costs it nothing. An unsupported one is a warning; one the check is only uncertain of is not reported (a
person may have approved it reading the words that lack support). The fix is an ``update_page``
with the host's text, as the gate writes in place of a rejected one (the first claim's words for
a summary, its source's heading or name for a title), judged again at the gate; it always waits
for a person.
"""

from __future__ import annotations

from typing import Any

from ..gate.grounding import Grounding
from ..gate.reads import SqliteReads
from ..gate.texts import MAX, SUMMARY_SHARE, TITLE_SHARE, TextJudge
from ..gate.verdicts import REJECTED, OpResult, TextResult
from ..support import SupportChecker, headings_above, load_model
from ..support.kept import keeping_in
from .checks_context import CheckContext
from .findings import Finding

__all__ = ["check_unsupported_page_words"]


def check_unsupported_page_words(ctx: CheckContext) -> list[Finding]:
    """Pages whose title or summary their active claims' quotes don't support (see the module)."""
    scope = ctx.scope.pages if ctx.scope is not None else None
    rows = ctx.db.execute(  # only a page that lost a claim can lose its words' support
        "SELECT slug, title, summary FROM pages WHERE slug IN (SELECT page_slug FROM claims "
        "WHERE status IN ('superseded', 'retracted')) ORDER BY slug"
    ).fetchall()
    judge: TextJudge | None = None
    findings: list[Finding] = []
    with keeping_in(None if ctx.vault.read_only else ctx.vault.state_dir):
        for slug, title, summary in rows:
            if scope is not None and slug not in scope:
                continue
            claims = [
                str(r[0])
                for r in ctx.db.execute(
                    "SELECT id FROM claims WHERE page_slug = ? AND status = 'active' "
                    "ORDER BY position, id",
                    (slug,),
                )
            ]
            if not claims:
                continue  # empty_page's
            if judge is None:
                judge = TextJudge(
                    SqliteReads(ctx.db),
                    ctx.store,
                    Grounding(ctx.store, ctx.verifier),
                    SupportChecker(load_model(ctx.vault.config)),
                )
            found = _unsupported(judge, claims, {"title": str(title), "summary": str(summary)})
            if found:
                findings.append(_finding(ctx, slug, claims[0], found))
    return findings


def _unsupported(
    judge: TextJudge, claims: list[str], texts: dict[str, str]
) -> dict[str, TextResult]:
    """The texts of ``texts`` the quotes of ``claims`` don't support (rejected by the rule)."""
    basis = judge._stored(claims, [])
    out: dict[str, TextResult] = {}
    for what, share in (("title", TITLE_SHARE), ("summary", SUMMARY_SHARE)):
        verdict = TextResult(what, texts[what])
        judge.judge(OpResult(index=0, kind="update_page"), verdict, basis, share)
        if verdict.status == REJECTED:
            out[what] = verdict
    return out


def _finding(ctx: CheckContext, slug: str, first: str, found: dict[str, TextResult]) -> Finding:
    texts = " and ".join(f"{what} “{verdict.text}”" for what, verdict in found.items())
    reasons = "; ".join(verdict.reason for verdict in found.values())
    fix: dict[str, Any] = {"op": "update_page", "page": slug}
    host = _host(ctx, first)
    for what in found:
        if host[what] and host[what] != found[what].text:
            fix[what] = host[what]
    fix["reason"] = f"its claims no longer say its {' and '.join(found)}"[:300]
    return Finding(
        kind="unsupported_page_words",
        severity="warning",
        subject=slug,
        message=f"page '{slug}': its {texts} — {reasons}"[:1000],
        pages=[slug],
        fix=fix if len(fix) > 3 else None,
        fix_hint="give the page words its claims say (update_page), or add the claims that say "
        "them",
    )


def _host(ctx: CheckContext, claim: str) -> dict[str, str]:
    """The host's title and summary from the page's first active claim: its source's heading
    above its first quote (else the source's name), and its own words."""
    text = ctx.db.execute("SELECT text FROM claims WHERE id = ?", (claim,)).fetchone()
    row = ctx.db.execute(
        "SELECT source_id, start FROM evidence WHERE claim_id = ? ORDER BY idx LIMIT 1", (claim,)
    ).fetchone()
    title = ""
    if row is not None:
        try:
            found = list(headings_above(ctx.store.text(str(row[0])), int(row[1])))
            name = ctx.store.get(str(row[0])).name
        except Exception:  # a source that can't be read: no title of its
            found, name = [], ""
        title = _line(found[-1] if found else name, MAX["title"])
    summary = _line(str(text[0]) if text else "", MAX["summary"])
    return {"title": title, "summary": summary}


def _line(text: str, limit: int) -> str:
    line = " ".join(text.split())
    return line if 0 < len(line) <= limit else ""
