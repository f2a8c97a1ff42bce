"""Docs are checked by tests: every setting, command and operation is documented."""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

import click

from affidavit.cli import main
from affidavit.config import SETTINGS
from affidavit.plan.schema import OPERATION_KINDS, Operation

ROOT = Path(__file__).resolve().parent.parent
DOCS = "\n".join(p.read_text() for p in sorted((ROOT / "docs").glob("*.md")))
README = (ROOT / "README.md").read_text()


def commands(group: click.Group, prefix: str = "affidavit") -> list[str]:
    out = []
    for name, command in sorted(group.commands.items()):
        out.append(f"{prefix} {name}")
        if isinstance(command, click.Group):
            out += commands(command, f"{prefix} {name}")
    return out


def test_every_setting_is_documented() -> None:
    text = (ROOT / "docs" / "configuration.md").read_text()
    for setting in SETTINGS:
        assert f"`{setting.name}`" in text, setting.name


def test_every_command_is_documented_and_has_an_example() -> None:
    for name in commands(main):
        assert name in DOCS + README, f"{name} is not documented"
        command: click.Command | None = main
        for part in name.split()[1:]:
            assert isinstance(command, click.Group)
            command = command.commands[part]
        assert command is not None
        assert "Example" in (command.help or ""), f"{name} --help has no example"


def test_every_operation_is_documented() -> None:
    text = (ROOT / "docs" / "plans.md").read_text()
    union = get_args(get_args(Operation)[0])
    kinds = {get_args(model.model_fields["op"].annotation)[0] for model in union}
    assert kinds == set(OPERATION_KINDS)
    for kind in OPERATION_KINDS:
        assert f"`{kind}`" in text, kind


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    match = re.search(r"^scripts/test\.sh\b", README, re.M)
    assert match, "README must show scripts/test.sh as the test command"
    assert "scripts/test.sh" in ci
    assert "scripts/quickstart.sh" in README
