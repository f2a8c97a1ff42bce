"""``affidavit lint``: run the checks and the finders, gate the findings, record them, report.

One run: the deterministic checks (:mod:`affidavit.lint.checks`), the extractive engine's
candidates (:mod:`affidavit.lint.candidates`), and — when a language model is configured — the
model's findings (:mod:`affidavit.lint.model`). Every model-kind finding passes the quote gate;
the ones that can't show their quotes are dropped and counted, and kept in the run's record with
their ``verified: false`` quotes. Kept findings are stored (new, refreshed, or left dismissed);
check findings that a run no longer sees are resolved. With ``propose`` the fixable ones become
plans in the inbox.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..clock import iso
from ..config import Config
from ..db import transaction
from ..evidence import Verifier
from ..heap import few_collections
from ..providers.base import Provider
from ..sources.store import SourceStore
from ..storage.queries import Sql
from ..vault import Vault
from .candidates import (
    Candidate,
    PairWork,
    Search,
    Thresholds,
    classify_pairs,
    data_version,
    find_candidates,
    load_claims,
    missing_links,
    read_pair_work,
    titles_named,
)
from .duplicates import report_once
from .findings import (
    CHECK_KINDS,
    Finding,
    FindingStore,
    StoredFinding,
    bump_counter,
    reset_counter,
)
from .fixes import FixReport, propose_fixes
from .quotes import ProposedQuote, QuoteGate

if TYPE_CHECKING:
    from ..ingest.ahead import Ahead
    from .since import LintPoint, Scope

Progress = Callable[[str, int, int], None]
INGEST_COUNTER = "ingests_since_lint"


@dataclass
class LintReport:
    run: int
    findings: list[StoredFinding] = field(default_factory=list)
    """Open findings after this run, most severe first."""
    new: list[str] = field(default_factory=list)
    resolved: int = 0
    dropped: list[dict[str, Any]] = field(default_factory=list)
    model_calls: int = 0
    invalid_replies: list[str] = field(default_factory=list)
    fixes: FixReport | None = None
    dismissed: int = 0
    incremental: bool = False
    """Whether the run looked only at what changed since the last one."""
    open_counts: dict[str, int] | None = None
    """The open findings by kind, when the run did not list them (:attr:`findings` empty: an
    automatic lint after an ingest reports counts, not O(findings) rows)."""

    def counts(self) -> dict[str, int]:
        if self.open_counts is not None:
            return dict(self.open_counts)
        return dict(sorted(Counter(f.finding.kind for f in self.findings).items()))

    @property
    def open(self) -> int:
        """How many findings are open after the run."""
        return sum(self.counts().values())

    def to_json(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "incremental": self.incremental,
            "open": self.open,
            "new": len(self.new),
            "resolved": self.resolved,
            "dismissed": self.dismissed,
            "dropped": len(self.dropped),
            "counts": self.counts(),
            "model_calls": self.model_calls,
            "invalid_replies": self.invalid_replies,
            "findings": [f.to_json() for f in self.findings],
            "dropped_findings": self.dropped,
            "fixes": self.fixes.to_json() if self.fixes else None,
        }


@dataclass(frozen=True)
class Covered:
    """The pairs a set of claims is part of, classified by one pass (the supersession pass after
    an ingest), for the next pass over the same claims (the automatic lint): what
    ``find_candidates(db, involving=ids)`` returns for any ``ids`` among :attr:`claims`, while no
    other connection has committed since (:meth:`~affidavit.lint.candidates.Search.fresh`)."""

    claims: frozenset[str]
    search: Search

    def involving(self, vault: Vault, ids: set[str]) -> list[Candidate] | None:
        """The candidates of the pairs ``ids`` are part of; None when this search can't tell."""
        if not ids <= self.claims or not self.search.fresh(vault.db):
            return None
        return self.search.involving(ids)

    def extended(self, vault: Vault, ids: set[str]) -> Covered | None:
        """This search and one of the claims of ``ids`` it did not search, merged (the claims a
        duplicate joins to the changed ones); None when it can't be (not fresh, or a whole-wiki
        search)."""
        from .nearby import merged, nearby_pairs

        if not self.search.fresh(vault.db) or self.search.keys is None:
            return None
        more = set(ids) - self.claims
        if not more:
            return self
        search = merged(self.search, nearby_pairs(vault.db, more, thresholds(vault)))
        return None if search is None else Covered(self.claims | more, search)


@dataclass
class Supersessions:
    """What :func:`supersede_after_ingest` found and proposed, and the search it made."""

    found: list[StoredFinding] = field(default_factory=list)
    fixes: FixReport | None = None
    covered: Covered | None = None


def thresholds(vault: Vault) -> Thresholds:
    return config_thresholds(vault.config)


def config_thresholds(config: Config) -> Thresholds:
    """The pair search's thresholds as ``config`` sets them (``lint.*``)."""
    get = config.get
    return Thresholds(
        same_subject=int(get("lint.same_subject")) / 100,
        restatement=int(get("lint.restatement")) / 100,
        duplicate=int(get("lint.duplicate")) / 100,
    )


def _checks(
    vault: Vault, verifier: Verifier, progress: Progress | None, scope: Scope | None = None
) -> list[Finding]:
    from .checks import CheckContext, run_checks

    context = CheckContext(vault, verifier, scope=scope) if scope is not None else None
    return run_checks(vault, verifier=verifier, progress=progress, context=context)


SCOPED_CHECKS = (
    "broken_link",
    "file_drift",
    "source_tampered",
    "evidence_unverified",
    "unsupported_claim",
    "unsupported_page_words",
)
"""The checks an incremental run (:mod:`affidavit.lint.since`) runs over what changed: their
findings about anything else stand as the last run left them. The others read a table or a
generated file and run whole."""


def _scope_subjects(scope: Scope | None, kind: str) -> set[str] | None:
    """The subjects of ``kind``'s findings an incremental run looked at again (None: all)."""
    if scope is None or kind not in SCOPED_CHECKS:
        return None
    if kind in ("broken_link", "file_drift"):
        return scope.files
    if kind == "source_tampered":
        return scope.sources
    if kind == "unsupported_page_words":
        return scope.pages
    return scope.checked_claims


def _thresholds_key(vault: Vault) -> list[int]:
    get = vault.config.get
    return [int(get("lint.same_subject")), int(get("lint.restatement")), int(get("lint.duplicate"))]


def lint_scope(
    vault: Vault, full: bool, settled: set[str] | None = None
) -> tuple[LintPoint, Scope | None]:
    """The checkpoint of now and what changed since the last run's (None: check everything,
    asked for or without a usable checkpoint), without the claims of ``settled`` the last run
    looked at (:func:`~affidavit.lint.since.settle`). The caller holds the writer lock."""
    from .since import load, scope_since, settle, take

    now = take(vault)
    now.settings = _thresholds_key(vault)
    if full:
        return now, None
    old = load(vault)
    if old is None or old.settings != now.settings:
        return now, None
    scope = scope_since(vault, old, now, settled)
    if scope is not None and settled:
        scope = settle(vault.db, scope, settled, old.rowids["claims"])
    return now, scope


@dataclass(frozen=True)
class Checked:
    """The deterministic checks' findings, run ahead of a :func:`run_lint` on the same state (by
    :func:`check_ahead`), with the verifier that re-found their quotes (its cache of normalised
    sources serves the quote gate after them)."""

    findings: list[Finding]
    verifier: Verifier
    version: int
    """``PRAGMA data_version`` before the checks read the database."""

    def current(self, vault: Vault, recheck: tuple[str, ...] = ()) -> list[Finding] | None:
        """The findings, with the checks of ``recheck`` run again (their inputs were written
        since by this connection), while no other connection has committed since they ran;
        None once one has (then they all run again)."""
        if self.version != data_version(vault.db):
            return None
        if not recheck:
            return self.findings
        from .checks import run_checks

        with vault.write_lock():
            again = run_checks(vault, verifier=self.verifier, kinds=recheck)
        order = {kind: n for n, kind in enumerate(CHECK_KINDS)}
        kept = [f for f in self.findings if f.kind not in recheck]
        # each check's findings in its own order, the checks in theirs (as run_checks gives them)
        return sorted([*kept, *again], key=lambda f: order.get(f.kind, len(order)))


PROPOSAL_CHECKS = ("plan_expiring",)
"""The checks that read what proposing a plan writes (the ``plans`` table; its audit entry is a
``proposed`` one, which nothing rendered reads): after a pass that proposed plans, these run
again and the other checks' findings stand (:meth:`Checked.current`)."""


def check_ahead(vault: Vault, progress: Progress | None = None) -> Checked:
    """The checks :func:`run_lint` runs first, run now, as it runs them (under the writer lock,
    one snapshot). :func:`run_lint` takes them while no other connection has committed since;
    the caller hands them on only while its own connection wrote nothing they read."""
    verifier = Verifier(SourceStore(vault))
    version = data_version(vault.db)
    with vault.write_lock(), few_collections():
        findings = _checks(vault, verifier, progress)
    return Checked(findings, verifier, version)


def run_lint(
    vault: Vault,
    provider: Provider | None = None,
    *,
    trigger: str = "manual",
    propose: bool = False,
    actor: str = "lint",
    progress: Progress | None = None,
    job_id: str | None = None,
    search: Search | None = None,
    checked: Checked | None = None,
    recheck: tuple[str, ...] = (),
    full: bool = False,
    settled: set[str] | None = None,
    listing: bool = True,
    covered: Covered | None = None,
) -> LintReport:
    """One lint run over ``vault``; ``provider`` adds model findings unless it is extractive.
    By default the run looks at what changed since the last one (:mod:`affidavit.lint.since`:
    the changed claims' pairs, the changed files, sources and quotes); ``full``, or no usable
    checkpoint, looks at everything.
    ``search``: the candidate pairs an earlier pass classified (used while the database is
    unchanged, see :class:`~affidavit.lint.candidates.Search`); ``checked``: the checks run
    ahead (:func:`check_ahead`), used on the same terms, but for the kinds of ``recheck``, whose
    inputs this connection has written since (:data:`PROPOSAL_CHECKS` after proposals). Either
    makes its part of the run a full one. ``settled``: claims a re-ingest carried unchanged
    to a new version of their source, left out of an incremental run's pairs and checks when
    the last run looked at them (:func:`lint_scope`). ``listing=False``: the report counts the
    open and dismissed findings by kind instead of listing them (:attr:`LintReport.open_counts`;
    what an automatic lint reports). ``covered``: the supersession pass's search of the new
    claims' pairs, taken for the changed claims' pairs when they are among them. The passes over
    the whole wiki
    run with few garbage collections (:func:`affidavit.heap.few_collections`): they keep a few
    containers per claim until they end, which set off full collections of every object of the
    process (millions after a large ingest); a model's calls run with the caller's settings."""
    store = SourceStore(vault)
    checks = checked.current(vault, recheck) if checked is not None else None
    # the write lock: no apply between its commit and its renames, so no false drift; the
    # checkpoint is taken before anything is read, so what is written meanwhile counts as new
    with vault.write_lock(), few_collections():
        point, scope = lint_scope(vault, full or checks is not None, settled)
        if checked is not None and checks is not None:
            verifier = checked.verifier
        else:
            verifier = Verifier(store)
            checks = _checks(vault, verifier, progress, scope)
    gate = QuoteGate(vault.db, store, verifier)

    def found(n: int, total: int) -> None:
        if progress is not None:
            progress("findings", n, total)

    involving: set[str] | None = None
    titles: set[str] | None = None
    if scope is not None and search is None:
        involving = _active(vault, scope.claims)
        if scope.files is not None:  # (a link changed outside the door: every title)
            titles = titles_named(vault.db, scope.claims, scope.pages)
    with few_collections():
        if involving is None:
            candidates = find_candidates(vault.db, thresholds(vault), found, search=search)
        else:
            candidates = [
                *(_changed_pairs(vault, involving, found, covered) if involving else []),
                *missing_links(vault.db, titles),
            ]
        proposed: list[tuple[Finding, list[ProposedQuote]]] = [
            (c.finding, c.quotes) for c in report_once(candidates)
        ]
    calls, invalid = 0, []
    if provider is not None and provider.name != "extractive":
        from .model import ask_model

        groups = int(vault.config.get("lint.model_groups"))
        run = ask_model(vault, provider, load_claims(vault.db), groups, job_id)
        proposed += run.candidates
        calls, invalid = run.calls, run.invalid
    with few_collections():
        kept, dropped = _judge(gate, proposed)
    with vault.write_lock(), transaction(vault.db), few_collections():
        now = iso(vault.clock())
        findings = FindingStore(vault.db)
        run_id = findings.start_run(now, trigger, provider.name if provider else "")
        new: list[str] = []
        for finding in [*checks, *kept]:
            fid, is_new = findings.record(run_id, now, finding)
            if is_new:
                new.append(fid)
        if scope is None:
            resolved = findings.resolve_unseen(run_id, now, "check")
        else:
            resolved = sum(
                findings.resolve_unseen_of(run_id, now, "check", kind, _scope_subjects(scope, kind))
                for kind in CHECK_KINDS
            )
        if involving is None:
            resolved += findings.resolve_unseen(run_id, now, "extractive")
        else:  # the pairs of unchanged claims were not looked at; the links were
            resolved += findings.resolve_unseen_of(
                run_id, now, "extractive", "missing_link", _linking(vault, titles)
            )
        resolved += findings.resolve_dead_claims(now)
        kinds = Counter(f.kind for f in [*checks, *kept])
        findings.finish_run(
            run_id,
            now,
            kept=len(checks) + len(kept),
            dropped=len(dropped),
            detail={
                "counts": dict(kinds),
                "dropped": dropped,
                "invalid_replies": invalid,
                "scope": "full" if scope is None else scope.to_json(),
                "pairs": "full" if involving is None else len(involving),
            },
        )
        reset_counter(vault.db, INGEST_COUNTER)
    from .since import save

    save(vault, point)
    report = LintReport(
        run=run_id,
        new=new,
        resolved=resolved,
        dropped=dropped,
        model_calls=calls,
        invalid_replies=invalid,
        incremental=scope is not None,
    )
    if propose:
        report.fixes = propose_fixes(vault, findings.list(), actor)
    if not listing:
        report.open_counts = FindingStore(vault.db).counts()
        report.dismissed = sum(FindingStore(vault.db).counts(("dismissed",)).values())
        return report
    with few_collections():
        report.findings = FindingStore(vault.db).list()
    report.dismissed = len(FindingStore(vault.db).list(status=("dismissed",)))
    return report


DUPLICATE_ROUNDS = 4
"""How far :func:`_changed_pairs` follows duplicates from the changed claims before it stops."""


def _changed_pairs(
    vault: Vault,
    involving: set[str],
    progress: Callable[[int, int], None],
    covered: Covered | None = None,
) -> list[Candidate]:
    """The candidates of the pairs ``involving`` claims are part of, and of the pairs of every
    claim they duplicate, as far as duplicates join them: shared text is reported once per
    group of duplicates (:func:`~affidavit.lint.duplicates.report_once`), so the group must be
    whole for its finding to be the one a full run makes. ``covered``: a search made already,
    used for what it covers."""
    limits = thresholds(vault)
    asked = set(involving)
    for _ in range(DUPLICATE_ROUNDS):
        if covered is not None:
            covered = covered.extended(vault, asked)
        known = covered.involving(vault, asked) if covered is not None else None
        found = (
            known
            if known is not None
            else find_candidates(vault.db, limits, progress, involving=asked)
        )
        joined = {
            claim for c in found if c.finding.kind == "duplicate" for claim in c.finding.claims
        }
        if joined <= asked:
            return found
        asked |= joined
    return find_candidates(vault.db, limits, progress, involving=asked)


def _linking(vault: Vault, titles: set[str] | None) -> set[str] | None:
    """The subjects of the open missing_link findings about a link to one of ``titles``."""
    if titles is None:
        return None
    rows = vault.db.execute(
        "SELECT subject FROM findings WHERE status = 'open' AND kind = 'missing_link'"
    )
    return {str(r[0]) for r in rows if str(r[0]).rpartition("->")[2] in titles}


def _active(vault: Vault, claims: set[str]) -> set[str]:
    """The active claims of ``claims``."""
    import json

    return {
        str(r[0])
        for r in vault.db.execute(
            "SELECT id FROM claims WHERE +status = 'active' AND id IN "  # (by id, not status)
            "(SELECT value FROM json_each(?))",
            (json.dumps(sorted(claims)),),
        )
    }


def _judge(
    gate: QuoteGate, proposed: list[tuple[Finding, list[ProposedQuote]]]
) -> tuple[list[Finding], list[dict[str, Any]]]:
    """The findings the quote gate keeps, and the ones it drops with why."""
    kept: list[Finding] = []
    dropped: list[dict[str, Any]] = []
    gate.prefetch(q for _, quotes in proposed for q in quotes)
    for finding, quotes in proposed:
        verdict = gate.judge(finding, quotes)
        if verdict.kept:
            kept.append(verdict.finding)
        else:
            dropped.append(
                {**verdict.finding.model_dump(mode="json"), "dropped_because": verdict.reason}
            )
    return kept, dropped


def lint_due(vault: Vault, sources: int) -> bool:
    """Whether :func:`after_ingest` with ``sources`` will run lint, as the counter stands now."""
    every = int(vault.config.get("lint.every_ingests"))
    if sources <= 0 or every <= 0:
        return False
    row = vault.db.execute(
        "SELECT value FROM counters WHERE name = ?", (INGEST_COUNTER,)
    ).fetchone()
    return (int(row[0]) if row is not None else 0) + sources >= every


PAIRS = "affidavit.lint.candidates:classify_pairs"
PAIRS_STAGE = "candidate pairs"
PAIRS_AHEAD_MIN_CLAIMS = 10_000
"""Below this many active claims the ingest's pair search runs in this process: starting the
worker costs about what the search itself does (~35 µs a claim)."""


class PendingSearch:
    """An ingest's pair search (:func:`start_ingest_search`): its claims read here, classified
    in a worker process on the machine's other core (idle once the chunks are done) while this
    process runs the checks (:func:`check_ahead`). The worker computes
    :func:`~affidavit.lint.candidates.classify_pairs`, a pure function of the values it is sent,
    with this package's own code (:mod:`affidavit.ingest.ahead`); when it can't, this process
    does. Either way :meth:`result` is what :func:`search_pairs` gives."""

    def __init__(self, work: PairWork, version: int, ahead: Ahead | None) -> None:
        self.work = work
        self.version = version
        self.ahead = ahead
        self.stopped: str | None = None
        """Why the worker did not answer, if it didn't (the search then ran here)."""
        if ahead is not None:
            ahead.extend([("pairs", work)])

    def result(self, progress: Progress | None = None) -> Search:
        """The search; ``progress`` is called as ``(PAIRS_STAGE, done, total)``."""
        ready, pairs = False, None
        if self.ahead is not None:
            if progress is not None:
                progress(PAIRS_STAGE, 0, 1)  # the worker's own progress is not seen here
            try:
                ready, pairs = self.ahead.take("pairs")
                self.stopped = self.ahead.stopped or (
                    None if ready else "the worker's classification raised"
                )
            finally:
                self.close()
        if not ready or not isinstance(pairs, list):

            def counted(done: int, total: int) -> None:
                if progress is not None:
                    progress(PAIRS_STAGE, done, total)

            with few_collections():
                pairs = classify_pairs(self.work, counted)
        elif progress is not None:
            progress(PAIRS_STAGE, 1, 1)
        return Search(pairs=pairs, version=self.version)

    def close(self) -> None:
        """Stop the worker, answered or not (again: nothing)."""
        ahead, self.ahead = self.ahead, None
        if ahead is not None:
            ahead.close()


def lint_claims_ahead(vault: Vault, sources: int) -> set[str]:
    """When the automatic lint after an ingest of ``sources`` will run and look at what changed
    since its checkpoint: the claims it will pair (changed since, as now), for the supersession
    pass to search with its own (:class:`Covered`); else none."""
    from .since import claims_since, load

    if not lint_due(vault, sources) or not will_be_incremental(vault):
        return set()
    old = load(vault)
    return claims_since(vault.db, old) if old is not None else set()


def will_be_incremental(vault: Vault) -> bool:
    """Whether a lint run now would look only at what changed (a usable checkpoint)."""
    from .since import load

    old = load(vault)
    if old is None or old.settings != _thresholds_key(vault):
        return False
    return old.schema == int(vault.db.execute("PRAGMA schema_version").fetchone()[0])


def start_ingest_search(vault: Vault, plan_ids: list[str], sources: int) -> PendingSearch | None:
    """One classification of the whole wiki's candidate pairs for both passes after an ingest
    (the supersession pass and the automatic lint), when both will run and the lint is a full
    one; else None (each pass searches what it needs). A wiki of :data:`PAIRS_AHEAD_MIN_CLAIMS` or more has it classified
    by a worker process (:class:`PendingSearch`)."""
    if not plan_ids or not vault.config.get("ingest.propose_supersessions"):
        return None
    if not lint_due(vault, sources):
        return None
    if will_be_incremental(vault):
        return None  # each pass then reads only the new claims' pairs, through the word index
    active = vault.db.execute("SELECT count(*) FROM claims WHERE status = 'active'").fetchone()[0]
    ahead = None
    if active >= PAIRS_AHEAD_MIN_CLAIMS:
        from ..ingest.ahead import Ahead  # the worker starts while the claims are read

        ahead = Ahead(PAIRS, depth=1)
    try:
        with few_collections():
            work, version = read_pair_work(vault.db, thresholds(vault))
    except BaseException:
        if ahead is not None:
            ahead.close()
        raise
    return PendingSearch(work, version, ahead)


def after_ingest(
    vault: Vault,
    sources: int,
    provider: Provider | None = None,
    search: Search | None = None,
    checked: Checked | None = None,
    recheck: tuple[str, ...] = (),
    progress: Progress | None = None,
    settled: set[str] | None = None,
    covered: Covered | None = None,
) -> LintReport | None:
    """Count ``sources`` ingested; run lint when ``lint.every_ingests`` is reached (0 = never).
    ``search``, ``checked``, ``recheck``, ``progress``, ``settled`` and ``covered``: as
    :func:`run_lint` takes them. The report counts the open findings, without listing them."""
    every = int(vault.config.get("lint.every_ingests"))
    if sources <= 0:
        return None
    with vault.write_lock(), transaction(vault.db):
        count = bump_counter(vault.db, INGEST_COUNTER, sources)
    if every <= 0 or count < every:
        return None
    return run_lint(
        vault,
        provider,
        trigger="auto",
        search=search,
        checked=checked,
        recheck=recheck,
        progress=progress,
        settled=settled,
        listing=False,
        covered=covered,
    )


def supersede_after_ingest(
    vault: Vault,
    plan_ids: list[str],
    actor: str = "ingest",
    search: Search | None = None,
    after: int | None = None,
    ahead: set[str] | None = None,
) -> Supersessions:
    """Findings the claims of ``plan_ids`` (just applied) raise against older claims, recorded;
    the stale ones (a newer, at least as trusted source changed a fact) get a ``supersede_claim``
    proposal carrying both quotes, which waits in the inbox for a person. ``after``: a claims
    rowid all of those plans' claims are past (the largest before they were applied), so they
    are found without reading every active claim (``claims.plan_id`` has no index). Its search
    of the new claims' pairs comes back with them (:attr:`Supersessions.covered`), for the
    automatic lint; with ``ahead``, the claims the lint will pair, searched with them
    (:func:`lint_claims_ahead`)."""
    if not plan_ids or not vault.config.get("ingest.propose_supersessions"):
        return Supersessions()
    from .nearby import index_claims

    index_claims(vault.db)  # the new claims' words: the next pass reads them, not the wiki
    marks = ",".join("?" * len(plan_ids))
    past = "" if after is None else f"rowid > {int(after)} AND +"
    new = {
        str(row[0])
        for row in vault.db.execute(
            f"SELECT id FROM claims WHERE {past}status = 'active' AND plan_id IN ({marks})",
            plan_ids,
        )
    }
    if not new:
        return Supersessions()
    store = SourceStore(vault)
    gate = QuoteGate(vault.db, store, Verifier(store))
    with few_collections():
        asked = new | _active(vault, ahead) if ahead else new
        if search is None or not search.fresh(vault.db):
            from .nearby import search_involving

            search = search_involving(vault.db, asked, thresholds(vault))
        else:
            asked = new
        # (a search of more claims than the new: its pairs of the new are theirs alone)
        candidates = find_candidates(vault.db, thresholds(vault), involving=new, search=search)
    covered = Covered(frozenset(asked), search)
    kept = judge_changed_facts(gate, candidates)
    if not kept:
        return Supersessions(covered=covered)
    with vault.write_lock(), transaction(vault.db):
        ids = record_supersessions(vault.db, iso(vault.clock()), kept)
    stored = [FindingStore(vault.db).get(fid) for fid in ids]
    stale = [s for s in stored if s.finding.kind == "stale"]
    fixes = propose_fixes(vault, stale, actor) if stale else None
    return Supersessions([FindingStore(vault.db).get(fid) for fid in ids], fixes, covered)


CHANGED_FACTS = ("stale", "contradiction")
"""The kinds the supersession pass after an ingest records: a fact the new claims changed."""


def judge_changed_facts(gate: QuoteGate, candidates: list[Candidate]) -> list[Finding]:
    """The stale and contradiction findings of ``candidates`` the quote gate keeps, in order
    (the supersession pass's, on either backend)."""
    judged = [c for c in candidates if c.finding.kind in CHANGED_FACTS]
    gate.prefetch(q for c in judged for q in c.quotes)
    kept: list[Finding] = []
    for candidate in judged:
        verdict = gate.judge(candidate.finding, candidate.quotes)
        if verdict.kept:
            kept.append(verdict.finding)
    return kept


def record_supersessions(db: Sql, now: str, kept: list[Finding]) -> list[str]:
    """Record the supersession pass's findings as one lint run (trigger ``ingest``) in the
    caller's transaction; their ids."""
    findings = FindingStore(db)
    run_id = findings.start_run(now, "ingest", "")
    ids = [findings.record(run_id, now, finding)[0] for finding in kept]
    findings.finish_run(
        run_id,
        now,
        kept=len(kept),
        dropped=0,
        detail={"counts": dict(Counter(f.kind for f in kept))},
    )
    return ids


def judge_pairs(
    gate: QuoteGate, candidates: list[Candidate]
) -> tuple[list[Finding], list[dict[str, Any]]]:
    """A whole-wiki pair search's findings (each shared text once) the quote gate keeps, and
    the ones it drops with why."""
    return _judge(gate, [(c.finding, c.quotes) for c in report_once(candidates)])


def record_pair_run(
    db: Sql, now: str, trigger: str, kept: list[Finding], dropped: list[dict[str, Any]]
) -> LintReport:
    """Record a lint run of the extractive finder over the whole wiki's pairs (no checks), in
    the caller's transaction, as :func:`run_lint` records a full run: findings new or refreshed,
    the finder's findings it no longer sees resolved, those about a claim no longer active
    resolved, the ingest counter reset. The report counts the open findings."""
    findings = FindingStore(db)
    run_id = findings.start_run(now, trigger, "")
    new = [fid for fid, is_new in (findings.record(run_id, now, f) for f in kept) if is_new]
    resolved = findings.resolve_unseen(run_id, now, "extractive")
    resolved += findings.resolve_dead_claims(now)
    findings.finish_run(
        run_id,
        now,
        kept=len(kept),
        dropped=len(dropped),
        detail={
            "counts": dict(Counter(f.kind for f in kept)),
            "dropped": dropped,
            "invalid_replies": [],
            "scope": "pairs",
            "pairs": "full",
        },
    )
    reset_counter(db, INGEST_COUNTER)
    report = LintReport(run=run_id, new=new, resolved=resolved, dropped=dropped)
    report.open_counts = findings.counts()
    report.dismissed = sum(findings.counts(("dismissed",)).values())
    return report
