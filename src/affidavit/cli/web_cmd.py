"""``web``: the web desk from the command line — a fresh one-time login link."""

from __future__ import annotations

from pathlib import Path

import click

from ._common import echo_json, json_option, user_errors


@click.group("web")
def web() -> None:
    """The web review desk of a running daemon (`affidavit serve --web`).

    \b
    Example:
      affidavit web login-link
    """


@web.command("login-link")
@click.option(
    "--socket",
    "socket",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="The daemon's Unix socket (default: $AFFIDAVIT_SOCKET, else the one `affidavit serve` "
    "uses: $XDG_RUNTIME_DIR/affidavit/affidavit.sock, /run/user/UID/affidavit/affidavit.sock or "
    "~/.affidavit/run/affidavit.sock).",
)
@json_option
@user_errors
def login_link(socket: Path | None, as_json: bool) -> None:
    """Print a fresh one-time login link for the web desk (works once, for 15 minutes).

    Asks the daemon on its Unix socket, as the user you are: only a local user gets a link, for
    their own vaults. Works without $XDG_RUNTIME_DIR (the socket is found as `serve` placed it).

    \b
    Example:
      affidavit web login-link
      affidavit web login-link --socket /tmp/afd/affidavit.sock --json
    """
    from ..client import DaemonClient, socket_path
    from ..errors import ConfigError

    where = socket or socket_path()
    if not where.exists():
        raise ConfigError(
            f"no daemon socket at {where}: start the daemon with `affidavit serve --web`, or "
            "name its socket with --socket (or $AFFIDAVIT_SOCKET)."
        )
    try:
        reply = DaemonClient(where, timeout=30).call("POST", "/v1/web/login-link")
    except OSError as exc:
        raise ConfigError(
            f"the daemon's socket {where} does not answer ({exc.strerror or exc}): start it with "
            "`affidavit serve --web`."
        ) from exc
    url = str(reply.get("url", "")) if isinstance(reply, dict) else ""
    if as_json:
        echo_json({"url": url, "socket": str(where)})
    else:
        click.echo(url)


COMMANDS = [web]
