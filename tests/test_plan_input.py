"""Hostile plan text gives one-line errors, never a traceback: deep nesting, non-UTF-8 bytes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from affidavit.cli import main
from affidavit.errors import PlanValidationError
from affidavit.ingest.replies import InvalidReply, parse_reply
from affidavit.jobs.payloads import JobPayloadError, parse_payload
from affidavit.plan.schema import parse_plan
from affidavit.providers.base import Completion
from affidavit.vault import Vault, init_vault

DEEP = "[" * 100_000 + "]" * 100_000
DEEP_OBJECT = '{"nonce": ' + '{"a": ' * 50_000 + "1" + "}" * 50_000 + "}"
LATIN1 = '{"nonce": "caf\u00e9", "operations": []}'.encode("latin-1")


@pytest.mark.parametrize("raw", [DEEP, DEEP.encode(), DEEP_OBJECT])
def test_deep_nesting_is_a_plan_error(raw: str | bytes) -> None:
    with pytest.raises(PlanValidationError, match="nested too deeply"):
        parse_plan(raw)


def test_latin1_bytes_are_a_plan_error() -> None:
    with pytest.raises(PlanValidationError, match=r"not UTF-8 text \(byte 0xe9 at offset 14\)"):
        parse_plan(LATIN1)


@pytest.mark.parametrize(
    ("content", "message"),
    [(DEEP.encode(), "nested too deeply"), (LATIN1, "is not UTF-8 text (byte 0xe9")],
)
def test_propose_reports_one_line(
    vault: Vault, tmp_path: Path, content: bytes, message: str
) -> None:
    plan = tmp_path / "plan.json"
    plan.write_bytes(content)
    runner = CliRunner()
    for args, stdin in (([str(plan)], None), (["-"], content)):
        result = runner.invoke(main, ["--vault", str(vault.root), "propose", *args], input=stdin)
        assert result.exit_code == 1, result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)
        error = result.output.strip()
        assert error.startswith("Error: ") and message in error and "\n" not in error


def test_a_deeply_nested_model_reply_is_an_invalid_reply() -> None:
    with pytest.raises(InvalidReply, match="too deeply"):
        parse_reply(Completion(DEEP), "n" * 16)


def test_a_deeply_nested_job_payload_is_a_payload_error() -> None:
    with pytest.raises(JobPayloadError, match="nested too deeply"):
        parse_payload(DEEP)


@pytest.mark.skipif(os.geteuid() != 0, reason="runs a daemon as root")
def test_the_daemon_answers_hostile_plan_bodies_with_400() -> None:
    from .test_server_authz import private_dir, start_daemon

    base = private_dir("afd-input-")
    init_vault(base / "alpha")[0].close()
    daemon = start_daemon([base / "alpha"], base)
    try:
        with daemon.unix() as client:
            for body in (DEEP.encode(), LATIN1, b'{"plan": ' + DEEP.encode() + b"}"):
                response = client.post(
                    "/v1/vaults/alpha/plans",
                    content=body,
                    headers={"Content-Type": "application/json"},
                )
                assert response.status_code in (400, 422), response.text
                error = response.json()["error"]
                assert "\n" not in error["message"]
    finally:
        assert daemon.stop() == 0
