"""Messages speak to the user: no internal wall numbers in help or the default config, and every
command a message suggests (`affidavit xyz --flag`) exists, with that flag."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from affidavit.cli import main
from affidavit.cli.watch_cmd import WatchGroup
from affidavit.config import render_default_config

from .conftest import ROOT

SRC = ROOT / "src" / "affidavit"
JARGON = re.compile(r"\(W\d+\)|\bSPEC W\d+|through the (?:one )?door|the list routes")


def commands(group: click.Group, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    yield path
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            yield from commands(command, (*path, name))
        else:
            yield (*path, name)


def test_no_help_text_speaks_internals() -> None:
    runner = CliRunner()
    paths = list(commands(main))
    assert len(paths) > 20
    for path in paths:
        out = runner.invoke(main, [*path, "--help"], terminal_width=200)
        assert out.exit_code == 0, (path, out.output)
        assert not JARGON.search(out.output), (path, JARGON.search(out.output))


def test_the_default_config_speaks_plainly() -> None:
    text = render_default_config()
    assert not JARGON.search(text), JARGON.search(text)


def _strings(path: Path) -> Iterator[tuple[int, str]]:
    """Every string literal of a module (the literal parts of f-strings too), with its line."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value


SUGGESTION = re.compile(r"`(?:\$ )?affidavit ([^`]+)`|^\s*(?:\$ )?affidavit ([a-z][^\n#]*)", re.M)
STOP = {"&&", "||", "|", ">", "<", ";", "#"}


def suggestions() -> Iterator[tuple[str, str]]:
    for path in sorted(SRC.rglob("*.py")):
        for line, text in _strings(path):
            for match in SUGGESTION.finditer(text):
                where = f"{path.relative_to(ROOT)}:{line}"
                yield where, (match.group(1) or match.group(2)).strip()


def _options(command: click.Command) -> dict[str, bool]:
    """The command's options, each with whether it takes a value."""
    return {
        o: not (p.is_flag or p.count)
        for p in command.params
        if isinstance(p, click.Option)
        for o in p.opts + p.secondary_opts
    }


def resolve(words: str) -> str | None:
    """Why ``affidavit <words>`` is not a command of the CLI, or None when it is."""
    command: click.Command = main
    allowed = {**_options(main), "--help": False}
    tokens = words.split()
    routing = True
    skip = False
    for token in tokens:
        if skip:  # the value of the option before
            skip = False
            continue
        if token in STOP or token.startswith("#"):
            break
        if routing and isinstance(command, WatchGroup) and token not in command.commands:
            if token != "--help":  # `watch DIR…` and `watch --once` are `watch run …`
                command = command.commands["run"]
                allowed |= _options(command)
            routing = False
        if token.startswith("-") and allowed.get(token):
            skip = True
            continue
        if routing and isinstance(command, click.Group) and not token.startswith("-"):
            sub = command.commands.get(token)
            if sub is None:
                if command is main or not command.invoke_without_command:
                    return f"no command {token!r} under {command.name!r}"
                routing = False
                continue
            command = sub
            allowed |= _options(command)
            continue
        routing = False
        flag = token.split("=", 1)[0]
        if flag.startswith("--") and re.fullmatch(r"--[a-z][a-z-]*", flag) and flag not in allowed:
            return f"{command.name!r} has no option {flag}"
    if command is main:
        return "no command at all"
    return None


def test_every_suggested_command_exists() -> None:
    found = list(suggestions())
    assert len(found) > 50  # the parser finds the suggestions (examples and messages)
    wrong = [(where, words, why) for where, words in found if (why := resolve(words))]
    assert not wrong, "\n".join(f"{w}: `affidavit {s}`: {y}" for w, s, y in wrong)


@pytest.mark.parametrize(
    ("words", "ok"),
    [
        ("lint --list", False),
        ("lint --propose", True),
        ("findings show f-1", True),
        ("frobnicate", False),
        ("jobs wait job-3f --deadline 600", True),
        ("--vault ~/v inbox", True),
        ("watch ~/notes --debounce 2", True),
        ("watch ~/notes --frobnicate", False),
        ("watch add ~/notes", True),
        ("watch --once ~/notes", True),
    ],
)
def test_the_resolver_tells_real_commands_from_invented_ones(words: str, ok: bool) -> None:
    assert (resolve(words) is None) is ok
