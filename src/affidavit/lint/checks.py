"""The deterministic lint checks (SPEC W9): re-derive what can be re-derived, report what disagrees.

Each check is one function of a shared :class:`CheckContext` (which renders the wiki, re-hashes the
sources and re-finds the quotes at most once per run) and returns :class:`Finding` objects of one
kind of :data:`CHECK_KINDS`. Nothing here writes anything. The re-derivations are doctor's own
(:func:`affidavit.doctor.source_problems`, :func:`~affidavit.doctor.quote_problems`,
:func:`~affidavit.doctor.file_problems`), so lint and doctor never disagree about them.

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

import difflib
import shlex
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from functools import cached_property
from typing import Any, Literal

from ..clock import iso, parse_iso
from ..doctor import FileProblem, QuoteProblem, SourceProblem, file_problems, quote_problems
from ..doctor import source_problems as doctor_source_problems
from ..evidence import Verifier
from ..handedits import _link_targets  # the reader doctor --propose uses for links
from ..retrieval.embeddings import Embedder, load_embedder
from ..retrieval.vectors import text_sha256
from ..sources.store import SourceStore
from ..store.render import CONTEXT_ARCHIVE, GENERATED, expected_files
from ..vault import Vault
from .findings import CHECK_KINDS, Finding, FindingQuote

__all__ = ["CHECKS", "CheckContext", "Progress", "diff_excerpt", "run_checks"]

Progress = Callable[[str, int, int], None]
"""Called as ``progress(check, done, total)`` before each check starts (``done`` checks have
finished), and once more as ``(last check, total, total)`` when the last one has finished."""

INDEX, LOG, CONTEXT = (f"wiki/{name}" for name in GENERATED)
_GENERATED_SLUGS = frozenset(name.removesuffix(".md") for name in GENERATED)
_DIFF_LINES = 8
_DIFF_WIDTH = 160
_DIFF_MAX_CHARS = 4_000_000  # beyond this, sizes are reported instead of a diff
_EXAMPLES = 5


class CheckContext:
    """What the checks share within one run: the vault, its source store and verifier, and the
    re-derivations several checks need, each computed once on first use.

    ``embedder`` is the current embedding model for :func:`check_stale_embedding`; left out, the
    installed one is loaded only if the vault has vectors at all (None when the extra is missing).
    """

    def __init__(
        self,
        vault: Vault,
        verifier: Verifier | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        self.vault = vault
        self.db = vault.db
        self.store = SourceStore(vault)
        self.verifier = verifier if verifier is not None else Verifier(self.store)
        self._embedder = embedder

    @cached_property
    def root(self) -> str:
        """The vault's path, quoted for a shell command."""
        return shlex.quote(str(self.vault.root))

    @cached_property
    def pages(self) -> set[str]:
        return {row[0] for row in self.db.execute("SELECT slug FROM pages")}

    @cached_property
    def links(self) -> list[tuple[str, str]]:
        return [
            (r[0], r[1]) for r in self.db.execute("SELECT src, dst FROM links ORDER BY src, dst")
        ]

    @cached_property
    def expected(self) -> dict[str, str]:
        """Every file under wiki/ as the database renders it."""
        return expected_files(self.db)

    @cached_property
    def files(self) -> list[FileProblem]:
        """Files under wiki/ that are missing, differ from their rendering, or are unknown."""
        return file_problems(self.vault, self.expected)

    @cached_property
    def sources(self) -> list[SourceProblem]:
        return doctor_source_problems(self.vault, self.store)[1]

    @cached_property
    def tampered(self) -> set[str]:
        """Ids of sources whose stored bytes are missing or no longer match their hashes."""
        return {p.source_id for p in self.sources if p.tampered}

    @cached_property
    def quotes(self) -> list[QuoteProblem]:
        return quote_problems(self.vault, self.verifier)[1]

    def embedder(self) -> Embedder | None:
        if self._embedder is None:
            self._embedder = load_embedder()
        return self._embedder

    def disk_text(self, relpath: str) -> str | None:
        """A file under the vault as text (None if missing; undecodable bytes replaced)."""
        path = self.vault.root / relpath
        if not path.is_file():
            return None
        return path.read_bytes().decode("utf-8", errors="replace")


def diff_excerpt(expected: str, actual: str, path: str, lines: int = _DIFF_LINES) -> str:
    """The first ``lines`` lines of a unified diff from the rendered ``expected`` to ``actual``."""
    if len(expected) + len(actual) > _DIFF_MAX_CHARS:
        return f"    ({len(expected):,} characters rendered, {len(actual):,} on disk)"
    diff = difflib.unified_diff(
        expected.splitlines(),
        actual.splitlines(),
        f"{path} (database)",
        f"{path} (on disk)",
        n=1,
        lineterm="",
    )
    out: list[str] = []
    for line in diff:
        if len(out) == lines + 2:  # the two header lines don't count
            out.append("…")
            break
        out.append(line if len(line) <= _DIFF_WIDTH else line[: _DIFF_WIDTH - 1] + "…")
    return "\n".join("    " + line for line in out)


def _slug_of(relpath: str) -> str | None:
    """The page slug of ``wiki/<slug>.md`` (None for generated files and anything else)."""
    if not relpath.startswith("wiki/") or not relpath.endswith(".md") or relpath.count("/") != 1:
        return None
    slug = relpath[len("wiki/") : -len(".md")]
    return None if slug in _GENERATED_SLUGS else slug


def _examples(items: list[str]) -> str:
    shown = ", ".join(items[:_EXAMPLES])
    return shown + (f" and {len(items) - _EXAMPLES} more" if len(items) > _EXAMPLES else "")


# --- links and pages ----------------------------------------------------------------------------


def _page_targets(markdown: str) -> Iterator[str]:
    """Targets of the wikilinks and markdown links of ``markdown`` that name a wiki page: URLs,
    files outside wiki/ (``../sources/…``), attachments (``x.png``) and bare anchors are skipped."""
    for target in _link_targets(markdown):
        if target and ":" not in target and not target.startswith("../") and "." not in target:
            yield target


def check_broken_link(ctx: CheckContext) -> list[Finding]:
    """Links to pages that don't exist: rows of ``links`` whose end is not a page (rendered as a
    link on the other end's page), and wikilinks or markdown links in hand-edited or unknown files
    under wiki/. Files equal to their rendering hold only the database's links, checked already."""
    known = ctx.pages | _GENERATED_SLUGS | {CONTEXT_ARCHIVE}  # context.md links the archive early
    found: dict[tuple[str, str], list[str]] = {}
    for src, dst in ctx.links:
        if dst not in ctx.pages:
            found.setdefault((f"wiki/{src}.md", dst), []).append("the links table")
        if src not in ctx.pages:  # shown under "Linked from" on dst's page
            found.setdefault((f"wiki/{dst}.md", src), []).append("the links table")
    for problem in ctx.files:
        if problem.kind == "missing":
            continue
        text = ctx.disk_text(problem.path) or ""
        for target in _page_targets(text):
            if target not in known:
                where = found.setdefault((problem.path, target), [])
                if "the file on disk" not in where:
                    where.append("the file on disk")
    findings = []
    for (relpath, target), where in sorted(found.items()):
        slug = _slug_of(relpath)
        in_db = "the links table" in where
        fix_hint = (
            f"create the page '{target}' with a plan (create_page), or restore the database from "
            "a backup"
            if in_db
            else f"edit {relpath} to link an existing page, or propose a page '{target}' "
            "(create_page) first"
        )
        findings.append(
            Finding(
                kind="broken_link",
                severity="warning",
                subject=relpath,
                message=f"{relpath} links to '{target}', which is not a page (found in "
                f"{' and '.join(where)})",
                pages=sorted({target} | ({slug} & ctx.pages if slug else set())),
                fix_hint=fix_hint,
            )
        )
    return findings


def check_orphan_page(ctx: CheckContext) -> list[Finding]:
    """Pages no other page links to (index.md doesn't count; context.md links the archive)."""
    inbound = {dst for src, dst in ctx.links if src != dst and src in ctx.pages}
    inbound.add(CONTEXT_ARCHIVE)
    outgoing: dict[str, list[str]] = {}
    for src, dst in ctx.links:
        if dst in ctx.pages and dst != src:
            outgoing.setdefault(src, []).append(dst)
    findings = []
    for slug in sorted(ctx.pages - inbound):
        targets = outgoing.get(slug, [])
        fix = {"op": "link_pages", "page": targets[0], "to": slug} if targets else None
        hint = (
            f"link it from '{targets[0]}' (it links there already) with a link_pages plan"
            if targets
            else f"link it from a related page with a plan: "
            f'{{"op": "link_pages", "page": "<related>", "to": "{slug}"}}'
        )
        findings.append(
            Finding(
                kind="orphan_page",
                severity="info",
                subject=slug,
                message=f"no other page links to '{slug}' (only the index lists it)",
                pages=[slug],
                fix=fix,
                fix_hint=hint,
            )
        )
    return findings


def check_empty_page(ctx: CheckContext) -> list[Finding]:
    """Pages without a single active claim (all retracted or superseded, or never any)."""
    rows = ctx.db.execute(
        "SELECT p.slug, count(c.id) FROM pages p LEFT JOIN claims c ON c.page_slug = p.slug "
        "GROUP BY p.slug HAVING sum(c.status = 'active') IS NULL OR sum(c.status = 'active') = 0 "
        "ORDER BY p.slug"
    ).fetchall()
    findings = []
    for slug, total in rows:
        history = f" ({total} claim(s) in its history, none active)" if total else ""
        findings.append(
            Finding(
                kind="empty_page",
                severity="warning",
                subject=slug,
                message=f"page '{slug}' has no active claims{history}",
                pages=[slug],
                fix_hint=f"add claims to it with a plan "
                f'({{"op": "add_claims", "page": "{slug}", ...}}) or `affidavit ingest` a source '
                "about it",
            )
        )
    return findings


# --- rendered files -----------------------------------------------------------------------------


def _generated_drift(
    ctx: CheckContext, relpath: str, kind: Literal["index_drift", "log_drift"]
) -> list[Finding]:
    rendered = ctx.expected[relpath]
    actual = ctx.disk_text(relpath)
    if actual == rendered:
        return []
    if actual is None:
        message = f"{relpath} is missing"
    else:
        message = (
            f"{relpath} differs from what the database renders:\n"
            f"{diff_excerpt(rendered, actual, relpath)}"
        )
    return [
        Finding(
            kind=kind,
            severity="warning",
            subject=relpath,
            message=message,
            fix_hint=f"it is generated: the next applied plan rewrites it; "
            f"`git -C {ctx.root} checkout -- {relpath}` restores the committed copy now",
        )
    ]


def check_index_drift(ctx: CheckContext) -> list[Finding]:
    """wiki/index.md missing or different from what the database renders."""
    return _generated_drift(ctx, INDEX, "index_drift")


def check_log_drift(ctx: CheckContext) -> list[Finding]:
    """wiki/log.md missing or different from what the database renders."""
    return _generated_drift(ctx, LOG, "log_drift")


def check_context_over_cap(ctx: CheckContext) -> list[Finding]:
    """wiki/context.md, as rendered, longer than ``context.max_lines`` (counted as apply does)."""
    cap = ctx.vault.config.context_max_lines
    lines = ctx.expected[CONTEXT].count("\n")
    if lines <= cap:
        return []
    return [
        Finding(
            kind="context_over_cap",
            severity="warning",
            subject=CONTEXT,
            message=f"{CONTEXT} has {lines} lines, over its cap of {cap} (context.max_lines)",
            fix_hint=f"the next applied plan moves the oldest entries into the page "
            f"'{CONTEXT_ARCHIVE}'; or raise [context] max_lines in {ctx.vault.config_path}",
        )
    ]


def check_file_drift(ctx: CheckContext) -> list[Finding]:
    """Pages and context.md that differ from what the database renders, are missing, or are
    unknown files under wiki/ (index.md and log.md are index_drift and log_drift)."""
    findings = []
    for problem in ctx.files:
        relpath = problem.path
        if relpath in (INDEX, LOG):
            continue
        slug = _slug_of(relpath)
        pages = [slug] if slug is not None and slug in ctx.pages else []
        restore = f"`git -C {ctx.root} checkout -- {relpath}`"
        if problem.kind == "missing":
            findings.append(
                Finding(
                    kind="file_drift",
                    severity="error",
                    subject=relpath,
                    message=f"{relpath} is missing: the database renders it but there is no file",
                    pages=pages,
                    fix_hint=f"{restore} restores it",
                )
            )
            continue
        if problem.kind == "unknown":
            message = f"{relpath} is an unknown file: no page in the database renders it"
            hint = "`affidavit doctor --propose` turns it into a create_page plan, or delete it"
        else:
            actual = ctx.disk_text(relpath) or ""
            message = (
                f"{relpath} differs from what the database renders (hand edit?):\n"
                f"{diff_excerpt(problem.text, actual, relpath)}"
            )
            hint = (
                f"`affidavit doctor --propose` turns the edit into a plan; {restore} restores "
                "the rendered file"
            )
        findings.append(
            Finding(
                kind="file_drift",
                severity="warning",
                subject=relpath,
                message=message,
                pages=pages,
                fix_hint=hint,
            )
        )
    return findings


# --- sources and evidence -----------------------------------------------------------------------


def check_source_tampered(ctx: CheckContext) -> list[Finding]:
    """Stored sources whose original or extracted text is missing or no longer hashes right."""
    by_source: dict[str, list[str]] = {}
    for problem in ctx.sources:
        if problem.tampered:
            by_source.setdefault(problem.source_id, []).append(problem.message)
    findings = []
    for source_id, problems in sorted(by_source.items()):
        row = ctx.db.execute(
            "SELECT s.original_file, s.text_file, count(DISTINCT c.id) FROM sources s "
            "LEFT JOIN evidence e ON e.source_id = s.id "
            "LEFT JOIN claims c ON c.id = e.claim_id AND c.status = 'active' WHERE s.id = ?",
            (source_id,),
        ).fetchone()
        files = " ".join(shlex.quote(f) for f in (row[0], row[1]))
        findings.append(
            Finding(
                kind="source_tampered",
                severity="error",
                subject=source_id,
                message=f"source {source_id[:12]}: {'; '.join(problems)} "
                f"({row[2]} active claim(s) cite it)",
                fix_hint=f"restore it from git: `git -C {ctx.root} checkout -- {files}`, then "
                f"`chmod a-w` them",
            )
        )
    return findings


def check_evidence_unverified(ctx: CheckContext) -> list[Finding]:
    """Active claims with a quote that is no longer in its source, or not at its recorded offsets.

    A quote missing from an intact source gets a ``retract_claim`` fix; when the source itself was
    tampered with, restoring it (see source_tampered) is the fix, not retracting the claim.
    """
    by_claim: dict[str, list[QuoteProblem]] = {}
    for problem in ctx.quotes:
        by_claim.setdefault(problem.claim_id, []).append(problem)
    findings = []
    for claim_id, problems in sorted(by_claim.items()):
        page = problems[0].page
        where = f"page '{page}'" if page else "context.md"
        tampered = sorted({p.source_id[:12] for p in problems if p.source_id in ctx.tampered})
        missing = [p for p in problems if p.kind != "moved"]
        quotes = [
            FindingQuote(
                quote=p.quote,
                claim_id=claim_id,
                source_id=p.source_id,
                verified=False,
                location=p.location,
                reason=p.reason if p.kind != "moved" else f"{p.reason}: the source's text changed",
            )
            for p in problems
        ]
        fix: dict[str, Any] | None = None
        if tampered:
            hint = f"restore source(s) {', '.join(tampered)} from git (see source_tampered)"
        elif missing:
            reason = f"its evidence is no longer in source {missing[0].source_id[:12]}"
            fix = {"op": "retract_claim", "claim": claim_id, "reason": reason}
            hint = (
                f'retract it: propose {{"op": "retract_claim", "claim": "{claim_id}", '
                f'"reason": "{reason}"}}'
            )
        else:
            hint = "the quote is still in the source at other offsets; restore the source's text"
        what = "no longer verify" if missing else "moved in their source"
        findings.append(
            Finding(
                kind="evidence_unverified",
                severity="error" if missing else "warning",
                subject=claim_id,
                message=f"claim {claim_id} on {where}: {len(problems)} quote(s) {what}: "
                + "; ".join(q.reason for q in quotes),
                quotes=quotes,
                claims=[claim_id],
                pages=[page] if page else [],
                fix=fix,
                fix_hint=hint,
            )
        )
    return findings


# --- embeddings and plans -----------------------------------------------------------------------


def check_stale_embedding(ctx: CheckContext) -> list[Finding]:
    """Stored vectors search would ignore: of claims no longer active, of text that changed, or of
    another embedding model or version than the installed one. One finding per reason (they are
    all fixed by one ``affidavit reindex``); without vectors nothing is loaded."""
    if ctx.db.execute("SELECT 1 FROM vectors LIMIT 1").fetchone() is None:
        return []
    cursor = ctx.db.cursor()
    cursor.row_factory = None
    rows = cursor.execute(
        "SELECT v.claim_id, v.model, v.model_version, v.dim, v.text_sha256, c.status, c.text "
        "FROM vectors v LEFT JOIN claims c ON c.id = v.claim_id ORDER BY v.claim_id"
    ).fetchall()
    embedder = ctx.embedder()
    current = None if embedder is None else (embedder.name, embedder.version, embedder.dim)
    stale: dict[str, list[str]] = {"inactive": [], "text": []}
    lineages: dict[tuple[str, str, int], list[str]] = {}
    for claim_id, model, version, dim, sha, status, text in rows:
        if status != "active":
            stale["inactive"].append(claim_id)
        elif sha != text_sha256(text):
            stale["text"].append(claim_id)
        elif current is not None and (model, version, dim) != current:
            lineages.setdefault((model, version, dim), []).append(claim_id)
    fix_hint = "`affidavit reindex` rebuilds stale vectors and deletes those of inactive claims"
    findings = []
    for reason, what in (
        ("inactive", "belong to claims that are no longer active (or gone)"),
        ("text", "were embedded from another text than their claim's current one"),
    ):
        ids = stale[reason]
        if ids:
            findings.append(
                Finding(
                    kind="stale_embedding",
                    severity="warning",
                    subject=f"vectors/{reason}",
                    message=f"{len(ids)} vector(s) {what}: {_examples(ids)}",
                    fix_hint=fix_hint,
                )
            )
    for (model, version, dim), ids in sorted(lineages.items()):
        assert current is not None
        findings.append(
            Finding(
                kind="stale_embedding",
                severity="warning",
                subject=f"vectors/{model}/{version}",
                message=f"{len(ids)} vector(s) of {model} {version} ({dim} dimensions), but the "
                f"installed model is {current[0]} {current[1]}: search ignores them; "
                f"{_examples(ids)}",
                fix_hint=fix_hint,
            )
        )
    return findings


def _duration(delta: timedelta) -> str:
    minutes = int(abs(delta).total_seconds() // 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m" if hours else f"{minutes}m"


def check_plan_expiring(ctx: CheckContext) -> list[Finding]:
    """Pending plans that expire within ``lint.expiring_hours`` (or already have)."""
    now = ctx.vault.clock()
    hours = int(ctx.vault.config.get("lint.expiring_hours"))
    rows = ctx.db.execute(
        "SELECT id, author, origin, expires_at FROM plans WHERE status = 'pending' "
        "AND expires_at <= ? ORDER BY expires_at, id",
        (iso(now + timedelta(hours=hours)),),
    ).fetchall()
    findings = []
    for plan_id, author, origin, expires_at in rows:
        left = parse_iso(expires_at) - now
        when = (
            f"expires in {_duration(left)} ({expires_at})"
            if left > timedelta(0)
            else f"expired {_duration(left)} ago ({expires_at}) and can no longer be applied"
        )
        short = plan_id[:12]
        findings.append(
            Finding(
                kind="plan_expiring",
                severity="warning",
                subject=plan_id,
                message=f"pending plan {short} by {author} ({origin}) {when}",
                fix_hint=f"review it with `affidavit inbox show {short}`, then "
                f"`affidavit approve {short}` or `affidavit reject {short} --reason ...`",
            )
        )
    return findings


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
    wanted = CHECK_KINDS if kinds is None else tuple(k for k in CHECK_KINDS if k in set(kinds))
    unknown = set(kinds or ()) - set(CHECK_KINDS)
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
