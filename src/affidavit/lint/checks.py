"""The deterministic lint checks (SPEC W9): re-derive what can be re-derived, report what disagrees.

Each check is one function of a shared :class:`CheckContext` (``checks_context.py``: it renders the
wiki, re-hashes the sources and re-finds the quotes at most once per run) and returns
:class:`Finding` objects of one kind of :data:`CHECK_KINDS`: the wiki's own checks are in
``checks_wiki.py``, those of sources, evidence, vectors and plans in ``checks_state.py``. Nothing
here writes anything. The re-derivations are doctor's own (:func:`affidavit.doctor.source_problems`,
:func:`~affidavit.doctor.quote_problems`, :func:`~affidavit.doctor.file_problems`), so lint and
doctor never disagree about them.

A finding's ``subject``, ``claims`` and ``pages`` make its fingerprint, so they only name what the
problem is about (a page, a claim, a source, a file, a plan) and never change between two runs
over the same state; counts and times go into the message. ``fix``, when set, is one operation of
the plan schema that fixes the problem (:mod:`affidavit.lint.fixes` proposes it as is):

* ``{"op": "retract_claim", "claim": id, "reason": ...}``: evidence no longer in an intact source;
* ``{"op": "link_pages", "page": b, "to": a}``: an orphan page ``a`` that links to page ``b``.

Everything else says in ``fix_hint`` which command fixes it (a hand edit: ``affidavit doctor
--propose``, which turns it into a plan; a tampered source: ``git checkout``; stale vectors:
``affidavit reindex``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

from ..evidence import Verifier
from ..vault import Vault
from .checks_context import CheckContext, Progress, diff_excerpt
from .checks_pages import check_unsupported_page_words
from .checks_state import (
    check_evidence_unverified,
    check_plan_expiring,
    check_source_tampered,
    check_stale_embedding,
)
from .checks_support import check_unsupported_claim
from .checks_wiki import (
    check_broken_link,
    check_context_over_cap,
    check_empty_page,
    check_file_drift,
    check_index_drift,
    check_log_drift,
    check_orphan_page,
)
from .findings import CHECK_KINDS, Finding

__all__ = [
    "CHECKS",
    "CheckContext",
    "Progress",
    "check_broken_link",
    "check_context_over_cap",
    "check_empty_page",
    "check_evidence_unverified",
    "check_file_drift",
    "check_index_drift",
    "check_log_drift",
    "check_orphan_page",
    "check_plan_expiring",
    "check_source_tampered",
    "check_stale_embedding",
    "check_unsupported_claim",
    "check_unsupported_page_words",
    "diff_excerpt",
    "run_checks",
]

Check = Callable[[CheckContext], list[Finding]]

CHECKS: dict[str, Check] = {
    "broken_link": check_broken_link,
    "orphan_page": check_orphan_page,
    "empty_page": check_empty_page,
    "index_drift": check_index_drift,
    "log_drift": check_log_drift,
    "context_over_cap": check_context_over_cap,
    "source_tampered": check_source_tampered,
    "evidence_unverified": check_evidence_unverified,
    "unsupported_claim": check_unsupported_claim,
    "unsupported_page_words": check_unsupported_page_words,
    "file_drift": check_file_drift,
    "stale_embedding": check_stale_embedding,
    "plan_expiring": check_plan_expiring,
}
"""Every check by kind, in :data:`CHECK_KINDS` order."""
assert tuple(CHECKS) == CHECK_KINDS


@contextmanager
def _snapshot(vault: Vault) -> Iterator[None]:
    """One read transaction (WAL: a consistent snapshot), unless the caller already has one."""
    if vault.db.in_transaction:
        yield
        return
    vault.db.execute("BEGIN")
    try:
        yield
    finally:
        vault.db.execute("COMMIT")


def run_checks(
    vault: Vault,
    *,
    verifier: Verifier | None = None,
    progress: Progress | None = None,
    kinds: Iterable[str] | None = None,
    context: CheckContext | None = None,
) -> list[Finding]:
    """Run the deterministic checks (all, or those of ``kinds``) and return their findings, in
    check order. Reads one consistent snapshot of the database; writes nothing.

    ``verifier`` is shared with the caller's own quote checks (its cache of normalised sources);
    ``context`` replaces the default :class:`CheckContext` (e.g. to give another embedder).
    """
    chosen = set(CHECK_KINDS if kinds is None else kinds)
    wanted = tuple(k for k in CHECK_KINDS if k in chosen)
    unknown = chosen - set(CHECK_KINDS)
    if unknown:
        raise ValueError(f"unknown check(s): {', '.join(sorted(unknown))}")
    ctx = context if context is not None else CheckContext(vault, verifier)
    findings: list[Finding] = []
    with _snapshot(vault):
        for done, kind in enumerate(wanted):
            if progress is not None:
                progress(kind, done, len(wanted))
            findings += CHECKS[kind](ctx)
    if progress is not None and wanted:
        progress(wanted[-1], len(wanted), len(wanted))
    return findings
