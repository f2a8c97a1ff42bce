"""The ``affidavit`` command line: one module per command group, assembled here."""

from __future__ import annotations

import click

from .. import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="affidavit")
@click.option(
    "--vault",
    type=click.Path(file_okay=False, path_type=str),
    envvar="AFFIDAVIT_VAULT",
    help="The vault to use (default: the one enclosing the current directory).",
)
def main(vault: str | None) -> None:
    """Affidavit: an LLM-maintained wiki where every sentence is a verified, quoted claim.

    \b
    Quick tour:
      affidavit init my-vault && cd my-vault
      affidavit sources add ~/papers/
      affidavit nonce                      # a fresh nonce for a hand-written plan
      affidavit propose plan.json          # checked (schema, nonce, quotes), then in the inbox
      affidavit inbox && affidavit inbox show PLAN
      affidavit approve PLAN --ops 1,2
      affidavit doctor
    """


def _register() -> None:
    from . import ask_cmd, doctor_cmd, ingest_cmd, init_cmd, lint_cmd, plans_cmd, sources_cmd

    modules = (init_cmd, sources_cmd, ingest_cmd, plans_cmd, ask_cmd, doctor_cmd, lint_cmd)
    from . import jobs_cmd, mcp_cmd, serve_cmd, tokens_cmd

    for module in (*modules, jobs_cmd, serve_cmd, tokens_cmd, mcp_cmd):
        for command in module.COMMANDS:
            main.add_command(command)


_register()
