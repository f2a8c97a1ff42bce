"""The MCP server: one thin adapter from MCP tools to the service layer (``affidavit.service``).

An agent reads sources, pages and findings, searches, asks, adds a source from an owner-configured
place and proposes plans through the same gate as everyone else (W4). No tool approves, rejects,
retracts, dismisses, or changes config, trust or tokens; an agent's plan always waits for a person,
whatever ``policy.auto_apply`` says (:mod:`affidavit.agents`, W13: the gate decides it from the
author and origin this door records). Results are text lines fitted into
``mcp.max_result_tokens`` and continued with a cursor; expected failures are :class:`ToolError`
naming the fix or the next call. ``propose_plan`` and ``add_source`` are charged to their
caller's quotas (:mod:`affidavit.agents`), the same quotas the REST API charges. Nothing here
prints: on stdio, stdout is the protocol.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Annotated, Any, Literal

import anyio
from mcp.server.fastmcp import Context, FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field, ValidationError

from .. import agents
from ..errors import AffidavitError, QuotaError
from ..evidence.normalize import normalize, normalize_quote
from ..service import vaults as svc
from ..service.models import AskRequest, WaitingOut
from ..vault import Vault
from .paging import fit, numbered_sentences, parse_cursor, sentence_lines, sentences_at
from .wiki import SqliteWiki, ToolWiki

INSTRUCTIONS = """\
Affidavit is a wiki where every sentence is a claim backed by a verbatim quote the host re-finds \
in a stored source. You propose; a person approves. Read with list_sources, read_source, \
find_quote, list_pages, read_page, search_claims, ask_wiki, get_context. Write only with \
propose_plan: the gate checks every quote and the plan waits in the inbox until a person runs \
`affidavit approve ID`. No tool here applies, approves, rejects or retracts anything. Cite \
read_source's numbered sentences as {"source": ID, "sentence": N}: the host fills in the words \
(a verbatim quote of 8-300 chars also works). Long results end with a cursor: call again with it."""

Tier = Literal["untrusted", "semi-trusted", "trusted"]
Cursor = Annotated[str | None, Field(max_length=24)]
SourceRef = Annotated[str, Field(min_length=1, max_length=64)]

READ = ToolAnnotations(
    readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=False
)
TOOLS = (
    "list_sources",
    "read_source",
    "find_quote",
    "list_pages",
    "read_page",
    "search_claims",
    "ask_wiki",
    "get_context",
    "list_findings",
    "plan_status",
    "propose_plan",
    "add_source",
)
"""Every tool the server offers; none of them approves, rejects, retracts or configures."""


_OTHER_SURFACE = re.compile(r"`affidavit |\b(?:GET|POST) [/…]")
"""A sentence naming a CLI command or an HTTP route: the service's hint for other callers."""


def _next(kind: str, text: str) -> str:
    """An error's message for an agent: the service's sentences minus those that send the caller
    to the CLI or the HTTP API (an agent can call neither), then the MCP call that helps."""
    hints = {
        "source": "call list_sources for the ids",
        "page": "call list_pages for the slugs, or create the page in the same plan",
        "plan": "call plan_status with an id propose_plan returned",
        "finding": "call list_findings for the ids",
        "propose": "fix what it names and call propose_plan again",
    }
    kept = [s for s in re.split(r"(?<=[.;])\s+", text) if not _OTHER_SURFACE.search(s)]
    shown = " ".join(kept).rstrip(" .;") if kept else text
    return f"{shown}; {hints[kind]}." if kind in hints else text


Caller = Callable[[Any], tuple[str, str]]
"""From a tool call's request (None on stdio) to the caller's ``(role, actor)`` on the vault."""


class Door:
    """The vault the tools act on and who acts: a composition root builds one per entry point.

    ``open_vault`` lends the vault for one call: a SQLite :class:`~affidavit.vault.Vault` (read
    through :class:`~.wiki.SqliteWiki`) or any :class:`~.wiki.ToolWiki` (a PostgreSQL vault's,
    :mod:`.pg`); ``caller`` says who calls (the daemon reads it from the request its Guard
    authenticated); without it the caller is ``actor``, the owner.
    """

    def __init__(
        self,
        open_vault: Callable[[], AbstractContextManager[Vault | ToolWiki]],
        actor: str,
        origin: str = "mcp",
        caller: Caller | None = None,
        threaded: bool = False,
    ) -> None:
        self._open = open_vault
        self.actor = actor
        self.origin = origin
        self._caller = caller
        self.threaded = threaded
        self._vectors: Any = None
        self._loaded = False

    @contextmanager
    def vault(self, kind: str = "") -> Iterator[ToolWiki]:
        """The vault for one call; service errors become ToolErrors naming the next call."""
        with self._open() as opened:
            wiki = SqliteWiki(opened, self.vectors) if isinstance(opened, Vault) else opened
            try:
                yield wiki
            except ToolError:
                raise
            except QuotaError as exc:  # says when to call again: no other call helps
                raise ToolError(str(exc)) from exc
            except AffidavitError as exc:
                raise ToolError(_next(kind, str(exc))) from exc
            except ValidationError as exc:
                shown = "; ".join(e["msg"] for e in exc.errors()[:3])
                raise ToolError(f"invalid argument: {shown}") from exc

    def writer(self, ctx: Context[Any, Any, Any]) -> str:
        """The actor of a call that proposes or adds, refused unless the caller may propose."""
        if self._caller is None:
            return self.actor
        request = ctx.request_context.request if ctx.request_context else None
        role, actor = self._caller(request)
        if role not in ("propose", "approve", "owner"):
            raise ToolError(
                f"this needs the propose role; yours is {role or 'none'}. Ask the vault's owner "
                "for a token with role propose (`affidavit tokens create --role propose`)."
            )
        return actor

    def vectors(self, vault: Vault) -> Any:
        if not self._loaded:
            self._vectors = svc.vectors_for(vault)
            self._loaded = True
        return self._vectors


def _cap(vault: ToolWiki) -> int:
    return int(vault.config.get("mcp.max_result_tokens"))


def _verdicts(admission: dict[str, Any]) -> list[str]:
    """One line per operation, claim and unverified quote: what the gate decided and why."""
    lines = []
    for op in admission.get("ops", []):
        why = f" ({op['check']}: {op['reason']})" if op.get("reason") else ""
        lines.append(f"op {op['index'] + 1} {op['kind']}: {op['status']}{why}")
        for claim in op.get("claims", []):
            why = f" ({claim['check']}: {claim['reason']})" if claim.get("reason") else ""
            lines.append(f"  claim {claim['index'] + 1}: {claim['status']}{why}")
            for quote in claim.get("evidence", []):
                if not quote.get("verified"):
                    lines.append(
                        f"    quote {quote['quote'][:60]!r} not verified: {quote['reason']}"
                    )
        for text in op.get("texts", []):
            if text.get("status") == "rejected":
                lines.append(f"  {text['what']}: rejected ({text['reason']})")
    return lines


def _waiting(waiting: list[WaitingOut]) -> list[str]:
    """One line per text that waits for a person, naming why (W11)."""
    return [f"waits: {w.line}" for w in waiting]


def _next_step(plan_id: str, status: str) -> str:
    if status == "partial":
        return (
            f"Next: its supported texts are in the wiki; a person reviews the ones that wait "
            f"with `affidavit inbox show {plan_id[:12]}`; call plan_status to follow it."
        )
    if status == "pending":
        return (
            f"Next: a person reviews it with `affidavit inbox show {plan_id[:12]}` and applies it "
            f"with `affidavit approve {plan_id[:12]}`; call plan_status to follow it."
        )
    if status == "rejected":
        return "Next: nothing passed the gate; fix what the verdicts name and propose again."
    return f"The plan is {status}."


def build_server(door: Door) -> FastMCP:
    """The FastMCP server over ``door``: the twelve tools of :data:`TOOLS`, nothing else."""
    server = FastMCP("affidavit", instructions=INSTRUCTIONS, log_level="WARNING")
    with door.vault() as vault:
        remote_model = str(vault.config.model("provider")) != "extractive"

    def tool(**options: Any) -> Callable[[Callable[..., str]], Any]:
        """``server.tool``; with ``door.threaded``, the call runs in a worker thread (the
        daemon's event loop never waits on SQLite or a model)."""

        def register(fn: Callable[..., str]) -> Any:
            if not door.threaded:
                return server.tool(structured_output=False, **options)(fn)

            @functools.wraps(fn)
            async def in_thread(*args: Any, **kwargs: Any) -> str:
                return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs))

            return server.tool(structured_output=False, **options)(in_thread)

        return register

    @tool(title="List sources", annotations=READ)
    def list_sources(cursor: Cursor = None) -> str:
        """Stored sources: id, trust, name, status. Use an id with read_source or in evidence."""
        with door.vault() as vault:
            lines = [
                f"{s.id[:16]} {s.trust} {s.status} {s.media_type} {s.name}" for s in vault.sources()
            ]
            return fit(lines, parse_cursor(cursor), _cap(vault), "id trust status type name").text

    @tool(title="Read a source", annotations=READ)
    def read_source(source: SourceRef, cursor: Cursor = None) -> str:
        """A source's stored text as host-numbered sentences, `[s17] ...`, paged.

        Cite it as evidence {"source": id, "sentence": 17} (a part: add "quote" inside it).
        """
        with door.vault("source") as vault:
            record, text = vault.source_text(source)
            lines = sentence_lines(text)
            header = (
                f"source {record.id[:16]} ({record.name}, {record.trust}): {len(lines)} sentences"
            )
            return fit(lines, parse_cursor(cursor, "s"), _cap(vault), header).text

    @tool(title="Find a quote", annotations=READ)
    def find_quote(source: SourceRef, phrase: Annotated[str, Field(max_length=300)]) -> str:
        """Where a phrase occurs in a source (case, spacing, emphasis ignored), with sentence numbers."""
        with door.vault("source") as vault:
            record, text = vault.source_text(source)
            needle = normalize_quote(phrase)
            if len(needle) < 3:
                raise ToolError("the phrase is empty or too short; give at least a few words.")
            folded = normalize(text)
            spans = numbered_sentences(text)
            lines: list[str] = []
            at = folded.text.find(needle)
            while at >= 0 and len(lines) < 20:
                start, end = folded.span(at, at + len(needle))
                numbers = ",".join(f"s{n}" for n in sentences_at(spans, start, end))
                lines.append(f"{numbers or '-'} offset {start}-{end}: {text[start:end]!r}")
                at = folded.text.find(needle, at + 1)
            if not lines:
                return f"not found in {record.id[:16]}; call read_source to see its sentences."
            return fit(lines, 0, _cap(vault), f"{len(lines)} match(es) in {record.id[:16]}").text

    @tool(title="List pages", annotations=READ)
    def list_pages(cursor: Cursor = None) -> str:
        """Wiki pages: slug, claims, title, summary."""
        with door.vault() as vault:
            lines = [
                f"{p.slug} ({p.active_claims} claims) {p.title}: {p.summary}" for p in vault.pages()
            ]
            if not lines:
                return "no pages yet; create one with propose_plan (op create_page)."
            return fit(lines, parse_cursor(cursor), _cap(vault)).text

    @tool(title="Read a page", annotations=READ)
    def read_page(slug: Annotated[str, Field(max_length=64)], cursor: Cursor = None) -> str:
        """A page's claims with their ids, sections, trust and verified quotes, paged."""
        with door.vault("page") as vault:
            page = vault.page(slug)  # its claims as lines, not its file
            lines = [
                f"[{c.id}] ({c.section}; {c.status}; {c.trust}) {c.text}"
                + "".join(f' <- {e.source_id[:12]} "{e.quote}"' for e in c.evidence)
                for c in page.claims
            ]
            header = f"# {page.title} ({page.slug})\n{page.summary}\nlinks to: " + (
                ", ".join(page.links_to) or "-"
            )
            return fit(lines, parse_cursor(cursor), _cap(vault), header).text

    @tool(title="Search claims", annotations=READ)
    def search_claims(
        query: Annotated[str, Field(min_length=1, max_length=500)],
        limit: Annotated[int, Field(ge=1, le=50)] = 10,
        min_trust: Tier = "untrusted",
    ) -> str:
        """Claims matching a query, best first, with page, trust and quotes."""
        with door.vault() as vault:
            hits = vault.search(query, limit, min_trust)
            lines = [
                f"[{h.claim_id}] {h.page}: {h.text}"
                + "".join(f' <- {e.source_id[:12]} "{e.quote}"' for e in h.evidence)
                for h in hits
            ]
            if not lines:
                return "no claims match; try other words or call list_pages."
            return fit(lines, 0, _cap(vault)).text

    @tool(
        title="Ask the wiki",
        annotations=ToolAnnotations(  # not read-only: the vault logs every question
            readOnlyHint=False,
            destructiveHint=False,
            idempotentHint=False,
            openWorldHint=remote_model,
        ),
    )
    def ask_wiki(
        question: Annotated[str, Field(min_length=1, max_length=2000)],
        min_trust: Tier = "untrusted",
    ) -> str:
        """A verified answer from the wiki's claims, footnotes quoting the sources (question logged)."""
        with door.vault() as vault:
            request = AskRequest(question=question, min_trust=min_trust)
            # never saved from here; an author that marks it the agent's all the same
            answer = vault.ask(request, door.actor + agents.VIA_MCP)
            return fit(answer.markdown.splitlines(), 0, _cap(vault)).text

    @tool(title="Get the context", annotations=READ)
    def get_context(cursor: Cursor = None) -> str:
        """The wiki's overview (context.md) and its counts: read it first."""
        with door.vault() as vault:
            counts = ", ".join(f"{k} {v}" for k, v in vault.counts().items())
            lines = vault.context().splitlines()
            return fit(lines, parse_cursor(cursor), _cap(vault), f"[{counts}]").text

    @tool(title="List lint findings", annotations=READ)
    def list_findings(cursor: Cursor = None) -> str:
        """Open lint findings (contradictions, stale claims, broken links...) with what fixes them."""
        with door.vault() as vault:
            lines = [
                f"{f.id[:12]} {f.finding.severity} {f.finding.kind}: {f.finding.message}"
                + (f" claims {','.join(f.finding.claims)}" if f.finding.claims else "")
                + (f" fix: {f.finding.fix_hint}" if f.finding.fix_hint else "")
                for f in vault.findings()
            ]
            if not lines:
                return "no open findings."
            return fit(lines, parse_cursor(cursor), _cap(vault)).text

    @tool(title="Plan status", annotations=READ)
    def plan_status(plan_id: Annotated[str, Field(min_length=4, max_length=64)]) -> str:
        """A proposed plan's status, each operation's verdict and reasons, and the next step."""
        with door.vault("plan") as vault:
            detail = vault.plan(plan_id)
            lines = [f"plan {detail.id[:12]}: {detail.status} {detail.reason}".rstrip()]
            lines += _verdicts(detail.admission)
            lines += _waiting(detail.waiting)
            lines.append(_next_step(detail.id, detail.status))
            return fit(lines, 0, _cap(vault)).text

    @tool(
        title="Propose a plan",
        annotations=ToolAnnotations(
            readOnlyHint=False, destructiveHint=False, idempotentHint=False, openWorldHint=False
        ),
    )
    def propose_plan(operations: list[dict[str, Any]], ctx: Context[Any, Any, Any]) -> str:
        """Propose up to 20 operations; the gate checks them and a person approves in the inbox.

        Ops (`op` names the kind; no other fields allowed):
        create_page {slug, title, summary, category?, section?, claims?};
        add_claims {page, section?, claims}; link_pages {page, to};
        update_context {mode? append|replace, entries}; supersede_claim {claim, by|successor, reason};
        retract_claim {claim, reason}; retract_source {source, reason}.
        A claim is {text, evidence: [{source: id (>=12 hex), sentence: N} or {source, quote:
        verbatim 8-300 chars}]}; cite read_source's [sN] numbers (sentences: [a, b] for <=3).
        Slugs: ^[a-z0-9][a-z0-9-]{0,63}$. Returns the plan id, verdicts and the next step.
        """
        actor = door.writer(ctx)
        with door.vault("propose") as vault:
            # the schema, then the quota, before a nonce is spent; charged and held as an
            # agent's by the gate's door, from this author and origin
            out = vault.propose(operations, actor + agents.VIA_MCP, door.origin)
            lines = [f"plan_id {out.plan_id}", f"status {out.status}: {out.message}"]
            lines += _verdicts(out.admission)
            lines += _waiting(out.waiting)
            lines.append(_next_step(out.plan_id, out.status))
            return fit(lines, 0, _cap(vault)).text

    @tool(
        title="Add a source",
        annotations=ToolAnnotations(
            readOnlyHint=False, destructiveHint=False, idempotentHint=True, openWorldHint=True
        ),
    )
    def add_source(
        location: Annotated[str, Field(min_length=1, max_length=2000)], ctx: Context[Any, Any, Any]
    ) -> str:
        """Store a public http(s) URL, or a file under a directory listed in mcp.source_dirs."""
        actor = door.writer(ctx)
        with door.vault() as vault:  # its errors name their own fix, not another tool
            return vault.add_source(location, actor)

    return server


__all__ = ["INSTRUCTIONS", "TOOLS", "Door", "build_server"]
