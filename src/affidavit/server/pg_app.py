"""The daemon's application over the vaults of a PostgreSQL database (``serve --database URL``):
the same guard (authentication, roles, tokens, body limits), error bodies, request log and
request/response models as over SQLite vaults (:mod:`.app`), and the routes ported so far —
reads (the vault, search, pages, claims, the inbox) and the inbox's writes (nonces, propose,
approve, reject) through the PostgreSQL door (:mod:`affidavit.service.pg_vaults`), token
management for the vault's owner, jobs, and lint findings (list, show, decide, propose their
fixes: :mod:`affidavit.service.pg_findings`), and ``/mcp/{vault}``: the MCP tools over the same
services (:mod:`affidavit.mcp.pg`) behind the same guard, and with ``web`` the review desk
(:mod:`affidavit.web`, over :mod:`affidavit.web.pg`). Any other route of a vault answers 501 with what
works and what doesn't (:data:`~affidavit.service.pg_vaults.NOT_PORTED`), never a fallback to SQLite.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext
from typing import Annotated, Any, Literal

import anyio
import psycopg
from fastapi import APIRouter, Depends, FastAPI, Header, Path, Query, Request
from fastapi.responses import JSONResponse, StreamingResponse
from psycopg_pool import PoolTimeout

from .. import __version__
from ..jobs.models import JOB_STATUSES, Job, JobEvent
from ..lint.findings import FindingKind, Status, StoredFinding
from ..plan.schema import plan_json_schema
from ..service.backend import Forbidden
from ..service.models import (
    AccessRole,
    ApproveManyRequest,
    ApproveManyResponse,
    ApproveRequest,
    ApproveResponse,
    AskRequest,
    AskResponse,
    AuditPage,
    ClaimOut,
    Health,
    NonceRequest,
    NonceResponse,
    PageDetail,
    PageSummary,
    PlanDetail,
    PlanSummary,
    ProposalOut,
    ProposeRequest,
    RejectRequest,
    RejectResponse,
    SearchResponse,
    SourceOut,
    Tier,
    TokenCreated,
    TokenCreateRequest,
    TokenInfo,
    VaultAccess,
    VaultInfo,
    Whoami,
)
from ..service.pg_ask import ask as answer
from ..service.pg_findings import PgFindings
from ..service.pg_jobs import IngestRequest, LintRequest, PgJobs
from ..service.pg_vaults import NOT_PORTED, PgVault
from . import errors
from .app import _no_telemetry
from .auth import DOWN_FIX, ROLE_KEY, VAULT_KEY, Guard, Principal, access, allows
from .deps import _principal, _state, require
from .job_stream import event_stream, resume_at
from .logs import RequestLog, event
from .pg_registry import PgRegistry, PgServedVault
from .routes.lint import DecisionRequest, FixRequest, FixResponse

VAULT_NAME = r"^[a-z][a-z0-9_]{0,47}$"
"""A vault's name in a database (``storage.base.VAULT_NAME``): its URL segment as it is."""
ALL_STATUSES = ("pending", "applied", "rejected", "expired", "refused")


async def _served(request: Request) -> PgServedVault:
    served = _state(request).get(VAULT_KEY)
    if not isinstance(served, PgServedVault):
        raise Forbidden("no authorised vault")
    return served


async def _vault(served: Annotated[PgServedVault, Depends(_served)]) -> PgVault:
    return served.service


async def _role(request: Request) -> AccessRole:
    role: AccessRole = _state(request)[ROLE_KEY]
    return role


async def _vault_param(
    vault: Annotated[str, Path(pattern=VAULT_NAME, description="The vault's name.")],
) -> str:
    return vault


CallerDep = Annotated[Principal, Depends(_principal)]
ServedDep = Annotated[PgServedVault, Depends(_served)]
VaultDep = Annotated[PgVault, Depends(_vault)]
RoleDep = Annotated[AccessRole, Depends(_role)]

meta = APIRouter(prefix="/v1", tags=["meta"])
vaults = APIRouter(prefix="/v1/vaults/{vault}", dependencies=[Depends(_vault_param)])


@meta.get("/health", response_model=Health, **access("public"))
def health() -> Health:
    """Liveness: the daemon answers. Needs no credentials and tells nothing about vaults."""
    return Health(version=__version__)


@meta.get("/whoami", response_model=Whoami, **access("authenticated"))
def whoami(caller: CallerDep, request: Request) -> Whoami:
    """Who the daemon takes you for, and the vaults you may use with your role on each."""
    registry: PgRegistry = request.app.state.registry
    mine = []
    for served in registry.vaults.values():
        role = caller.role_on(served)
        if role is not None:
            mine.append(
                VaultAccess(
                    name=served.name, root=served.root, owner_uid=served.owner_uid, role=role
                )
            )
    return Whoami(
        transport=caller.transport,
        uid=caller.uid,
        user=caller.user,
        token_id=caller.token_id,
        vaults=mine,
    )


@meta.get("/plan-schema", **access("authenticated"))
def plan_schema() -> dict[str, Any]:
    """The JSON Schema of a plan: the closed set of operations (as `affidavit schema`)."""
    return plan_json_schema()


@vaults.get("", response_model=VaultInfo, tags=["vaults"], **access("read"))
def vault_info(served: ServedDep, vault: VaultDep, role: RoleDep) -> VaultInfo:
    """The vault's name, owner, your role and its counts."""
    return VaultInfo(
        name=served.name,
        root=served.root,
        owner_uid=served.owner_uid,
        role=role,
        counts=vault.counts(),
    )


@vaults.get("/search", response_model=SearchResponse, tags=["search"], **access("read"))
def search(
    vault: VaultDep,
    q: Annotated[str, Query(min_length=1, max_length=1000, description="The query.")],
    k: Annotated[int, Query(ge=1, le=100)] = 10,
    min_trust: Tier = "untrusted",
) -> SearchResponse:
    """The claims that best match ``q`` (PostgreSQL full text)."""
    return vault.search(q, k, min_trust)


@vaults.post("/ask", response_model=AskResponse, tags=["ask"], **access("read"))
def ask(vault: VaultDep, role: RoleDep, caller: CallerDep, body: AskRequest) -> AskResponse:
    """Answer a question from the vault's claims: every sentence cites claims whose quotes
    support it (the same answerer and checks as on SQLite). ``save`` needs the propose role; the
    saved answer is the caller's plan (a token's waits for a person)."""
    if body.save:
        require(role, "propose", "saving an answer")
    return answer(vault, body, caller.actor)


@vaults.get("/pages", response_model=list[PageSummary], tags=["pages"], **access("read"))
def list_pages(vault: VaultDep) -> list[PageSummary]:
    """Every page with its title, summary and number of active claims."""
    return vault.list_pages()


@vaults.get("/pages/{slug}", response_model=PageDetail, tags=["pages"], **access("read"))
def get_page(vault: VaultDep, slug: Annotated[str, Path(max_length=64)]) -> PageDetail:
    """A page: its claims with their evidence (each quote checked against its source), its
    links, and its markdown (the bytes of its file in an up-to-date `affidavit mirror`)."""
    return vault.get_page(slug)


@vaults.get("/claims/{claim_id}", response_model=ClaimOut, tags=["claims"], **access("read"))
def get_claim(vault: VaultDep, claim_id: Annotated[str, Path(max_length=200)]) -> ClaimOut:
    """One claim with its evidence (verbatim quotes and their offsets)."""
    return vault.get_claim(claim_id)


@vaults.get("/sources", response_model=list[SourceOut], tags=["sources"], **access("read"))
def list_sources(vault: VaultDep) -> list[SourceOut]:
    """Every stored source, oldest first, with its sanitizer flags."""
    return vault.list_sources()


@vaults.get("/sources/{source_id}", response_model=SourceOut, tags=["sources"], **access("read"))
def get_source(
    vault: VaultDep, source_id: Annotated[str, Path(min_length=4, max_length=64)]
) -> SourceOut:
    """One source by id or unique id prefix (at least 4 hex digits)."""
    return vault.get_source(source_id)


@vaults.get("/audit", response_model=AuditPage, tags=["audit"], **access("read"))
def audit(
    vault: VaultDep,
    after: Annotated[int, Query(ge=0, le=2**62)] = 0,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> AuditPage:
    """The hash-chained audit log, oldest first, ``limit`` entries after ``after``."""
    return vault.audit_page(after, limit)


@vaults.post(
    "/plans/approve", response_model=ApproveManyResponse, tags=["plans"], **access("approve")
)
def approve_many(
    vault: VaultDep, caller: CallerDep, body: ApproveManyRequest
) -> ApproveManyResponse:
    """Approve several whole plans as one batch: in the order given, all or nothing, one batch
    number. ``dry_run`` says what that would do and applies nothing; ``sure_only`` (an approval
    given unseen) applies each plan's sure part and keeps the texts that wait for a person as
    its pending remainder, as on SQLite."""
    return vault.approve_many(
        body.plans, caller.actor, dry_run=body.dry_run, sure_only=body.sure_only
    )


@vaults.post("/nonces", response_model=NonceResponse, tags=["plans"], **access("propose"))
def new_nonce(vault: VaultDep, caller: CallerDep, body: NonceRequest) -> NonceResponse:
    """A fresh single-use nonce for one plan (its "nonce" field); a token over its proposal
    quota gets none (429)."""
    return vault.new_nonce(body.hours, caller.actor)


@vaults.post("/plans", response_model=ProposalOut, tags=["plans"], **access("propose"))
def propose(vault: VaultDep, caller: CallerDep, body: ProposeRequest) -> ProposalOut:
    """Check a plan (schema, nonce, the gate) and put it in the inbox (or apply it at once when
    the policy allows a person's plan; an agent's always waits)."""
    return vault.propose(body.plan, caller.actor, f"api:{body.origin}")


@vaults.get("/plans", response_model=list[PlanSummary], tags=["plans"], **access("read"))
def list_plans(
    vault: VaultDep,
    status: Annotated[
        Literal["pending", "applied", "rejected", "expired", "all"], Query()
    ] = "pending",
) -> list[PlanSummary]:
    """The inbox: pending plans (or those of another status, or ``all``) with age and expiry."""
    return vault.list_plans(ALL_STATUSES if status == "all" else (status,))


@vaults.get("/plans/{plan_id}", response_model=PlanDetail, tags=["plans"], **access("read"))
def get_plan(vault: VaultDep, plan_id: Annotated[str, Path(max_length=64)]) -> PlanDetail:
    """A plan with the gate's verdicts."""
    return vault.plan_detail(plan_id)


@vaults.post(
    "/plans/{plan_id}/approve", response_model=ApproveResponse, tags=["plans"], **access("approve")
)
def approve(
    vault: VaultDep,
    caller: CallerDep,
    plan_id: Annotated[str, Path(max_length=64)],
    body: ApproveRequest,
) -> ApproveResponse:
    """Apply a pending plan through the door (re-checked and admitted again under the vault's
    lock): exactly once, whichever daemon approves it."""
    return vault.approve(plan_id, body.ops, caller.actor)


@vaults.post(
    "/plans/{plan_id}/reject", response_model=RejectResponse, tags=["plans"], **access("approve")
)
def reject(
    vault: VaultDep,
    caller: CallerDep,
    plan_id: Annotated[str, Path(max_length=64)],
    body: RejectRequest,
) -> RejectResponse:
    """Reject a pending plan with a reason; its reserved slugs are released."""
    return vault.reject(plan_id, body.reason, caller.actor)


@vaults.get("/tokens", response_model=list[TokenInfo], tags=["tokens"], **access("owner"))
def list_tokens(vault: VaultDep) -> list[TokenInfo]:
    """Every token of the vault with its role, expiry and status (never a secret)."""
    return vault.list_tokens()


@vaults.post(
    "/tokens", response_model=TokenCreated, status_code=201, tags=["tokens"], **access("owner")
)
def create_token(vault: VaultDep, caller: CallerDep, body: TokenCreateRequest) -> TokenCreated:
    """Create a token of one role; the secret is in this response only (stored hashed)."""
    info, secret = vault.create_token(body.role, body.lifetime(), body.label, caller.actor)
    return TokenCreated(info=info, token=secret)


@vaults.delete("/tokens/{token_id}", response_model=TokenInfo, tags=["tokens"], **access("owner"))
def revoke_token(
    vault: VaultDep,
    caller: CallerDep,
    token_id: Annotated[str, Path(pattern=r"^[0-9a-f]{12}$")],
) -> TokenInfo:
    """Revoke a token at once."""
    return vault.revoke_token(token_id, caller.actor)


@vaults.post("/jobs", response_model=Job, status_code=202, tags=["jobs"], **access("propose"))
def submit_job(
    vault: VaultDep, caller: CallerDep, role: RoleDep, body: IngestRequest | LintRequest
) -> Job:
    """Queue an ingest of the sources sent (their text, stored in the database as sources), or
    with `{"kind": "lint"}` a lint of the vault; `affidavit worker --database` runs it on any
    host. A trusted source needs approve."""
    if isinstance(body, LintRequest):
        return PgJobs(vault).submit_lint(body, caller.actor)
    return PgJobs(vault).submit(body, caller.actor, allows(role, "approve"))


@vaults.get("/jobs", response_model=list[Job], tags=["jobs"], **access("read"))
def list_jobs(
    vault: VaultDep,
    status: Annotated[str | None, Query(pattern="^(" + "|".join(JOB_STATUSES) + ")$")] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> list[Job]:
    """The newest jobs, optionally only those with ``status``."""
    return PgJobs(vault).list(status, limit)


@vaults.get("/jobs/{job_id}", response_model=Job, tags=["jobs"], **access("read"))
def get_job(vault: VaultDep, job_id: Annotated[str, Path(max_length=64)]) -> Job:
    """A job: status, progress, result or error, attempts, the worker holding it."""
    return PgJobs(vault).get(job_id)


@vaults.post("/jobs/{job_id}/cancel", response_model=Job, tags=["jobs"], **access("propose"))
def cancel_job(
    vault: VaultDep, caller: CallerDep, role: RoleDep,
    job_id: Annotated[str, Path(max_length=64)],
) -> Job:  # fmt: skip
    """Cancel a job: a queued one at once, a running one at its worker's next chunk. Needs
    approve, or propose for a job you submitted yourself."""
    jobs = PgJobs(vault)
    job = jobs.get(job_id)
    if not allows(role, "approve") and job.requested_by != caller.actor:
        raise Forbidden(
            f"job {job.id} was submitted by {job.requested_by}; cancelling it needs approve."
        )
    return jobs.cancel(job.id, caller.actor)


@vaults.get("/lint/findings", response_model=list[StoredFinding], tags=["lint"], **access("read"))
def list_findings(
    vault: VaultDep,
    status: Annotated[list[Status] | None, Query()] = None,
    kind: Annotated[list[FindingKind] | None, Query()] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 200,
) -> list[StoredFinding]:
    """Lint findings, errors first; ``status`` (default open) and ``kind`` may repeat."""
    return PgFindings(vault).find(tuple(status or ("open",)), tuple(kind or ()), limit)


@vaults.get(
    "/lint/findings/{finding_id}", response_model=StoredFinding, tags=["lint"], **access("read")
)
def get_finding(
    vault: VaultDep, finding_id: Annotated[str, Path(min_length=4, max_length=80)]
) -> StoredFinding:
    """One finding with its quotes (verified when recorded) and the fix it would propose."""
    return PgFindings(vault).get(finding_id)


@vaults.post(
    "/lint/findings/{finding_id}/decision",
    response_model=StoredFinding,
    tags=["lint"],
    **access("approve"),
)
def decide_finding(
    vault: VaultDep,
    caller: CallerDep,
    finding_id: Annotated[str, Path(min_length=4, max_length=80)],
    body: DecisionRequest,
) -> StoredFinding:
    """Dismiss (later lints keep it dismissed), resolve or reopen a finding; audited."""
    return PgFindings(vault).decide(finding_id, body.status, caller.actor, body.note)


@vaults.post("/lint/fixes", response_model=FixResponse, tags=["lint"], **access("propose"))
def propose_fix_plans(vault: VaultDep, caller: CallerDep, body: FixRequest) -> FixResponse:
    """Propose fix plans (at most 20 fixes each) for open findings; they wait in the inbox for
    a person, whatever the policy."""
    report = PgFindings(vault).propose_fixes(body.findings, body.keep, caller.actor)
    return FixResponse(plans=report.plans, fixed=report.fixed, skipped=report.skipped)


@vaults.get(
    "/jobs/{job_id}/events",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}, "description": "Job events (SSE)."}},
    tags=["jobs"],
    **access("read"),
)
async def job_events(
    request: Request,
    vault: VaultDep,
    job_id: Annotated[str, Path(max_length=64)],
    after: Annotated[int, Query(ge=0, le=2**62)] = 0,
    last_event_id: Annotated[str | None, Header(max_length=20)] = None,
) -> StreamingResponse:
    """The job's events (its ``job_events`` rows) as ``text/event-stream``, from ``after`` (or
    Last-Event-ID) until the job is done, failed or cancelled, as on a SQLite vault."""
    jobs = PgJobs(vault)
    full = await anyio.to_thread.run_sync(jobs.queue.resolve, vault.name, job_id)

    def poll(seq: int) -> tuple[list[JobEvent], Job]:
        return jobs.events(full, seq), jobs.get(full)

    return event_stream(poll, resume_at(after, last_event_id), request.app.state.stopping)


@vaults.api_route(
    "/{rest:path}",
    methods=["GET", "POST", "PUT", "PATCH", "DELETE"],
    include_in_schema=False,
    **access("read"),
)
def not_ported(rest: str) -> JSONResponse:
    """Every other route of a vault: not on PostgreSQL yet, and saying so."""
    return errors.error_response(
        501, "NotImplemented", f"…/{rest[:80]} is not served on PostgreSQL yet.", NOT_PORTED
    )


async def _database_down(request: Request, exc: Exception) -> JSONResponse:
    """The database unreachable or gone mid-request: 503, naming no URL or password."""
    event("database_error", kind=type(exc).__name__)
    return errors.error_response(
        503,
        "DatabaseUnavailable",
        "the PostgreSQL database did not answer; nothing was done.",
        DOWN_FIX,
    )


def create_pg_app(
    registry: PgRegistry,
    *,
    stopping: threading.Event | None = None,
    threads: int = 16,
    web: bool = False,
    web_hosts: frozenset[str] = frozenset(),
) -> FastAPI:
    stop = stopping or threading.Event()
    mcp = _mcp_endpoint(registry)
    mcp_running: AbstractAsyncContextManager[Any] = mcp.running() if mcp else nullcontext()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        anyio.to_thread.current_default_thread_limiter().total_tokens = threads
        event("ready", database=registry.shown_url, vaults=sorted(registry.vaults))
        try:
            async with mcp_running:
                yield
        finally:
            stop.set()
            registry.close()

    app = FastAPI(
        title="Affidavit daemon (PostgreSQL)",
        version=__version__,
        description="The Affidavit daemon over the vaults of a PostgreSQL database. " + NOT_PORTED,
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        **_no_telemetry(),
    )
    app.state.registry = registry
    app.state.stopping = stop
    errors.install(app)
    app.add_exception_handler(psycopg.OperationalError, _database_down)
    app.add_exception_handler(PoolTimeout, _database_down)
    routers = (meta, vaults)  # the catch-all last: the guard takes the first route that matches
    for router in routers:
        app.include_router(router)
    table = [route for router in routers for route in router.routes]
    if mcp is not None:  # /mcp/{vault}: the MCP tools, behind the same Guard as every route
        from ..mcp.http import mcp_route

        route = mcp_route(mcp)
        app.router.routes.append(route)
        table.append(route)
    if web:  # the review desk (serve --database URL --web): the same desk, over PgVault
        from ..web import mount
        from ..web.pg import pg_desk

        mount(app, registry, table, web_hosts, opener=pg_desk)
    app.add_middleware(Guard, registry=registry, routes=lambda: table)
    app.add_middleware(RequestLog)
    return app


def _mcp_endpoint(registry: PgRegistry) -> Any:
    """The streamable-HTTP MCP endpoint over the database's vaults, when the [mcp] extra is
    installed (as over SQLite vaults: :func:`.app._mcp_endpoint`)."""
    try:
        from ..mcp.http import pg_endpoint
    except ImportError:
        return None
    return pg_endpoint(registry)


__all__ = ["create_pg_app"]
