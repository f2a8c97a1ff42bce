"""``search``, ``ask`` and ``chat``: questions answered from the wiki with checked citations."""

from __future__ import annotations

import json
import secrets
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

import click

from ..client import open_daemon, open_local
from ._common import echo_json, json_option, opened_vault, user_errors, vault_path
from .database import database_options, database_vault

if TYPE_CHECKING:  # imported when a command runs in-process: a daemon's client needs none
    from ..ask import Answer, Asker
    from ..providers.base import Provider
    from ..retrieval.search import Retriever
    from ..vault import Vault

TIERS = click.Choice(["untrusted", "semi-trusted", "trusted"])
MODELS = click.Choice(["extractive", "openai", "anthropic", "local"])


def retriever_for(vault: Vault) -> Retriever:
    """FTS5 always; dense vectors too when the [embeddings] extra is installed and indexed."""
    from ..retrieval.dense import dense_search
    from ..retrieval.search import Retriever

    return Retriever(vault.db, dense_search(vault))


def _answerer(vault: Vault, model: str | None) -> Provider | None:
    from ..providers.from_config import provider_from_config

    name = model or str(vault.config.model("provider"))
    return None if name == "extractive" else provider_from_config(vault.config, name)


@click.command("search")
@click.argument("query")
@click.option("-k", "limit", default=10, show_default=True, help="How many claims to show.")
@click.option("--min-trust", type=TIERS, default="untrusted", show_default=True)
@database_options
@json_option
@click.pass_context
@user_errors
def search(
    ctx: click.Context, query: str, limit: int, min_trust: str, db_url: str | None,
    db_vault: str | None, as_json: bool,
) -> None:  # fmt: skip
    """Find the claims that best match QUERY (FTS5 BM25, plus vectors when indexed; PostgreSQL
    full text for a vault of a database).

    \b
    Examples:
      affidavit search "four freedoms" --min-trust trusted
      affidavit search "bridge" --database postgresql://wiki@db/wiki --vault handbook
    """
    daemon = None
    if db_vault is not None:
        with database_vault(db_url, db_vault) as pg:
            hits: list[dict[str, Any]] = pg.search(query, limit, min_trust).model_dump()["hits"]
    else:
        with open_daemon(vault_path(ctx)) as daemon:  # the daemon when it serves the vault
            if daemon is not None:
                hits = daemon.search_json(query, limit, min_trust)["hits"]
    if db_vault is None and daemon is None:
        with open_local(vault_path(ctx)) as backend:
            hits = [h.model_dump() for h in backend.search(query, limit, min_trust).hits]
    if as_json:
        echo_json(hits)
        return
    if not hits:
        click.echo("No claim matches.")
    for hit in hits:
        click.echo(f"{hit['claim_id']}  {hit['page_title']} [{hit['trust']}]")
        click.echo(f"    {hit['text']}")
        for e in hit["evidence"]:
            click.echo(f"    “{e['quote']}” — {e['source_name']}, {e['location']}")


@click.command("ask")
@click.argument("question")
@click.option(
    "--min-trust",
    type=TIERS,
    default="untrusted",
    show_default=True,
    help="Use only claims of this tier or above.",
)
@click.option("--model", type=MODELS, help="Answer with this provider instead of model.provider.")
@click.option("--save", is_flag=True, help="Propose the answer as a synthesis page (to the inbox).")
@database_options
@json_option
@click.pass_context
@user_errors
def ask(
    ctx: click.Context, question: str, min_trust: str, model: str | None, save: bool,
    db_url: str | None, db_vault: str | None, as_json: bool,
) -> None:  # fmt: skip
    """Answer QUESTION from the wiki; every sentence cites claims whose quotes are shown.

    Sentences citing nothing, or citing a claim the model was not given, are removed; when
    nothing supported is left the answer is "Not in the wiki".

    \b
    Examples:
      affidavit ask "What were the four freedoms?"
      affidavit ask "Who designed the tower?" --min-trust trusted --json
      affidavit ask "What did Monroe say about colonization?" --save
      affidavit ask "How long is the bridge?" --database postgresql://wiki@db/wiki --vault team
    """
    body = {"question": question, "min_trust": min_trust, "model": model, "save": save}
    if not 1 <= len(question) <= ASK_MAX_CHARS:  # AskRequest's bounds; its message says why
        _ask_request(body)
    daemon = None
    if db_vault is not None:  # the same answerer, over the database's vault
        from ..agents import local_actor
        from ..service.pg_ask import ask as answer_from

        with database_vault(db_url, db_vault) as pg:
            answer: dict[str, Any] = answer_from(pg, _ask_request(body), local_actor()).model_dump()
    else:
        with open_daemon(vault_path(ctx)) as daemon:  # the daemon when it serves the vault
            if daemon is not None:
                answer = daemon.ask_json(body)
    if db_vault is None and daemon is None:
        with open_local(vault_path(ctx)) as backend:
            answer = backend.ask(_ask_request(body)).model_dump()
    if as_json:
        echo_json({k: v for k, v in answer.items() if k not in ("markdown", "save_message")})
        return
    click.echo(answer["markdown"], nl=False)
    if answer.get("save_message") is not None:
        click.echo(f"\n{answer['save_message']}")
    elif save:
        click.echo("\nNothing to save: the answer is not in the wiki.")


ASK_MAX_CHARS = 2000
"""The longest question (``AskRequest.question``'s ``max_length``)."""


def _ask_request(body: dict[str, Any]) -> Any:
    """``body`` as an :class:`~affidavit.service.models.AskRequest`; a bad question is a usage
    error naming what is wrong."""
    from pydantic import ValidationError

    from ..service.models import AskRequest

    try:
        return AskRequest(**body)
    except ValidationError as exc:
        raise click.BadParameter(exc.errors()[0]["msg"], param_hint="QUESTION") from exc


def _questions(as_json: bool) -> Iterator[str]:
    """The conversation's questions until an empty line or end of input; with ``--json`` read
    plainly from stdin (no prompt on stdout, which carries only the answers)."""
    if as_json:
        for line in sys.stdin:
            if not line.strip():
                return
            yield line.strip()
        return
    while True:
        try:
            question = click.prompt("?", default="", show_default=False).strip()
        except (EOFError, click.Abort):
            return
        if not question:
            return
        yield question


def _chat_line(answer: Answer, conversation: str, turn: int) -> str:
    """One answer as one line of JSON: the fields of `affidavit ask --json`, plus its turn."""
    from ..service.models import AskResponse

    data: dict[str, Any] = answer.to_json()
    data["citations"] = [asdict(h) for h in answer.cited()]
    response = AskResponse(**data, saved_plan=None, save_message=None, markdown="")
    line = response.model_dump(exclude={"markdown", "save_message"})
    line.update(conversation=conversation, turn=turn)
    return json.dumps(line, ensure_ascii=False, sort_keys=True)


@click.command("chat")
@click.option("--min-trust", type=TIERS, default="untrusted", show_default=True)
@click.option("--model", type=MODELS, help="Answer with this provider instead of model.provider.")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Read questions from stdin, one a line; print each answer as one JSON line.",
)
@database_options
@click.pass_context
@user_errors
def chat(
    ctx: click.Context, min_trust: str, model: str | None, as_json: bool, db_url: str | None,
    db_vault: str | None,
) -> None:  # fmt: skip
    """Ask follow-up questions; each turn retrieves again, with the previous question in mind.

    An empty line or Ctrl-D ends the conversation. With --json, each answer is one line of JSON
    (JSON Lines) with the fields of `affidavit ask --json`, plus `conversation` and `turn`.

    \b
    Examples:
      affidavit chat --min-trust semi-trusted
      printf 'Who built the tower?\nWhen?\n' | affidavit chat --json
      affidavit chat --database postgresql://wiki@db/wiki --vault handbook
    """
    from ..ask import Asker

    with ExitStack() as stack:
        if db_vault is not None:  # the same answerer, over the database's vault
            from ..service.vaults import ask_provider
            from ..storage.pg_ask import PgAskWiki

            pg = stack.enter_context(database_vault(db_url, db_vault))
            provider = ask_provider(pg.config, model)
            asker = Asker(PgAskWiki(pg.storage, pg.name, pg.config, pg.clock), provider)
        else:
            vault = stack.enter_context(opened_vault(ctx))
            provider = _answerer(vault, model)
            asker = Asker(vault, provider, retriever_for(vault))
        _converse(asker, provider, min_trust, as_json)


def _converse(asker: Asker, provider: Provider | None, min_trust: str, as_json: bool) -> None:
    """Answer the conversation's questions, each with the turns before it."""
    from ..ask import render_answer

    conversation = "chat-" + secrets.token_hex(6)
    history: list[tuple[str, str]] = []
    try:
        for turn, question in enumerate(_questions(as_json), start=1):
            answer = asker.ask(
                question, min_trust=min_trust, history=history, conversation=conversation
            )
            if as_json:
                click.echo(_chat_line(answer, conversation, turn))
            else:
                click.echo(render_answer(answer))
            history.append((question, " ".join(s.text for s in answer.sentences)))
    finally:
        if provider is not None:
            provider.close()


COMMANDS = [search, ask, chat]


@click.command("reindex")
@click.option("--async", "run_async", is_flag=True, help="Queue it as a job; print the job id.")
@json_option
@click.pass_context
@user_errors
def reindex(ctx: click.Context, run_async: bool, as_json: bool) -> None:
    """Rebuild the search index from the database, then (with the [embeddings] extra) the claim
    vectors whose lineage (model, version, text hash) is missing or stale.

    Vectors of claims that are no longer active are removed. Without the extra only the search
    index is rebuilt (the output says how to install the extra).

    \b
    Example:
      affidavit reindex
      affidavit reindex --async      # a background job: affidavit jobs
    """
    if run_async:
        from ..jobs import ReindexPayload
        from .jobs_cmd import submit_job

        submit_job(ctx, ReindexPayload(), as_json)
        return
    from ..retrieval.embeddings import load_embedder, unavailable_reason
    from ..retrieval.tantivy_index import IndexBusy, rebuild_search_index

    embedder = load_embedder()
    with opened_vault(ctx) as vault:
        with vault.write_lock():
            try:
                search_index = rebuild_search_index(vault.db)
            except IndexBusy as exc:
                raise click.ClickException(str(exc)) from None
        data: dict[str, Any] = {"search_index": search_index}
        if embedder is None:
            data["vectors"] = f"skipped: {unavailable_reason()}"
        else:
            from ..retrieval.vectors import VectorIndex  # numpy: only with the extra

            stale = VectorIndex(clock=vault.clock).stale(vault.db, embedder)
            bar = (
                None if as_json or not stale else click.progressbar(length=stale, label="embedding")
            )

            def progress(done: int, total: int) -> None:
                if bar is not None:
                    bar.update(done - bar.pos)

            with vault.write_lock():
                report = VectorIndex(clock=vault.clock).reindex(
                    vault.db, embedder, progress=progress
                )
            if bar is not None:
                bar.render_finish()
            data.update(report.to_json())
        if as_json:
            echo_json(data)
            return
        click.echo(
            f"search index: {search_index['documents']} documents "
            f"(database change {search_index['change']})"
        )
        if embedder is None:
            click.echo(f"vectors {data['vectors']}")
        else:
            click.echo(
                f"{data['embedded']} embedded, {data['reused']} up to date, "
                f"{data['removed']} removed ({embedder.name} {embedder.version})"
            )


COMMANDS.append(reindex)
