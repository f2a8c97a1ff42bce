"""Token lifetimes are honoured exactly (``1m`` is one minute, not an hour) and bad ones refused."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from pydantic import ValidationError

from affidavit.cli import main
from affidavit.clock import parse_iso
from affidavit.service.models import TokenCreateRequest
from affidavit.service.tokens import parse_duration
from affidavit.vault import init_vault


@pytest.fixture
def root(tmp_path: Path) -> Path:
    vault, _ = init_vault(tmp_path / "v")
    vault.close()
    return tmp_path / "v"


@pytest.mark.parametrize(
    ("text", "lifetime"),
    [
        ("30s", timedelta(seconds=30)),
        ("1m", timedelta(minutes=1)),
        ("90m", timedelta(minutes=90)),
        ("2h", timedelta(hours=2)),
        ("7d", timedelta(days=7)),
        ("1w", timedelta(weeks=1)),
    ],
)
def test_cli_token_lives_exactly_as_long_as_asked(
    root: Path, text: str, lifetime: timedelta
) -> None:
    out = CliRunner().invoke(
        main,
        ["--vault", str(root), "tokens", "create", "--role", "read", "--expires", text, "--json"],
    )
    assert out.exit_code == 0, out.output
    info = json.loads(out.output)["info"]
    assert parse_iso(info["expires_at"]) - parse_iso(info["created_at"]) == lifetime


@pytest.mark.parametrize(
    "text", ["0m", "0s", "-1h", "1", "1.5h", "h", "1y", "", "1 hour", "99999999d"]
)
def test_bad_lifetimes_are_refused_naming_the_forms(root: Path, text: str) -> None:
    out = CliRunner().invoke(
        main, ["--vault", str(root), "tokens", "create", "--role", "read", "--expires", text]
    )
    assert out.exit_code == 2, out.output
    assert "Traceback" not in out.output and "--expires" in out.output
    assert "30s, 1m, 2h, 7d, 1w" in out.output or "shorter" in out.output
    listed = CliRunner().invoke(main, ["--vault", str(root), "tokens", "list", "--json"])
    assert json.loads(listed.output) == []


def test_lifetime_beyond_the_vault_limit_is_refused_with_the_limit(root: Path) -> None:
    out = CliRunner().invoke(
        main, ["--vault", str(root), "tokens", "create", "--role", "read", "--expires", "91d"]
    )
    assert out.exit_code == 1 and "at most 90 days" in out.output
    ok = CliRunner().invoke(
        main, ["--vault", str(root), "tokens", "create", "--role", "read", "--expires", "90d"]
    )
    assert ok.exit_code == 0, ok.output


def test_api_request_takes_seconds_or_hours_not_both() -> None:
    assert TokenCreateRequest(role="read", expires_seconds=60).lifetime() == timedelta(minutes=1)
    assert TokenCreateRequest(role="read", expires_hours=2).lifetime() == timedelta(hours=2)
    assert TokenCreateRequest(role="read").lifetime() == timedelta(hours=720)
    with pytest.raises(ValidationError):
        TokenCreateRequest(role="read", expires_seconds=60, expires_hours=1)
    with pytest.raises(ValidationError):
        TokenCreateRequest(role="read", expires_seconds=0)
    with pytest.raises(ValueError, match="30s, 1m, 2h, 7d, 1w"):
        parse_duration("0h")
