"""``tokens``: bearer tokens for the daemon's TCP port — create, list, revoke (owner only)."""

from __future__ import annotations

import click

from ..client import open_backend
from ..service.models import TokenCreateRequest, TokenInfo
from ..service.tokens import DURATION_FORMS, parse_duration
from ._common import echo_json, json_option, user_errors, vault_path


@click.group("tokens")
def tokens() -> None:
    """Bearer tokens for the daemon's TCP port, one vault and one role each.

    Only the vault's owner manages them. Roles: read (search, pages, ask), propose (also plans
    and jobs), approve (also approve, reject, cancel). Tokens are stored hashed; the secret is
    shown once, when it is created.

    \b
    Example:
      affidavit tokens create --role read --expires 30d --label laptop
    """


def _line(info: TokenInfo) -> str:
    label = f"  {info.label}" if info.label else ""
    return f"{info.id}  {info.role:<8} {info.status:<8} expires {info.expires_at}{label}"


@tokens.command("create")
@click.option(
    "--role",
    type=click.Choice(["read", "propose", "approve"]),
    required=True,
    help="What it may do.",
)
@click.option(
    "--expires",
    default="30d",
    show_default=True,
    help=f"Lifetime, exactly: {DURATION_FORMS}.",
)
@click.option("--label", default="", help="A note for yourself (e.g. where it is used).")
@json_option
@click.pass_context
@user_errors
def create(ctx: click.Context, role: str, expires: str, label: str, as_json: bool) -> None:
    """Create a token; its secret is printed once and never stored.

    \b
    Example:
      affidavit tokens create --role propose --expires 7d --label ci
    """
    try:
        lifetime = parse_duration(expires)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--expires") from exc
    request = TokenCreateRequest(
        role=role, expires_seconds=int(lifetime.total_seconds()), label=label
    )
    with open_backend(vault_path(ctx)) as backend:
        created = backend.create_token(request)
    if as_json:
        echo_json(created.model_dump())
        return
    click.echo(_line(created.info))
    click.echo(f"\n{created.token}\n")
    click.echo("Keep it secret: it is shown only now. Use it as: Authorization: Bearer <token>")


@tokens.command("list")
@json_option
@click.pass_context
@user_errors
def list_(ctx: click.Context, as_json: bool) -> None:
    """List the vault's tokens (ids, roles, expiry, status; never secrets).

    \b
    Example:
      affidavit tokens list --json
    """
    with open_backend(vault_path(ctx)) as backend:
        items = backend.list_tokens()
    if as_json:
        echo_json([i.model_dump() for i in items])
        return
    if not items:
        click.echo("No tokens.")
    for info in items:
        click.echo(_line(info))


@tokens.command("revoke")
@click.argument("token_id")
@json_option
@click.pass_context
@user_errors
def revoke(ctx: click.Context, token_id: str, as_json: bool) -> None:
    """Revoke a token at once (by the id `tokens list` shows).

    \b
    Example:
      affidavit tokens revoke 3f2a9c81d0e4
    """
    with open_backend(vault_path(ctx)) as backend:
        info = backend.revoke_token(token_id)
    if as_json:
        echo_json(info.model_dump())
    else:
        click.echo(f"revoked {_line(info)}")


COMMANDS = [tokens]
