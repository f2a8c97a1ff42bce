"""``affidavit jobs`` and ``--async`` end to end through the CLI, with no daemon."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from affidavit.cli import main

from .conftest import SAMPLES


def run(vault: Path, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(main, ["--vault", str(vault), *args])
    assert result.exit_code == code, result.output
    return result.output


@pytest.fixture
def root(tmp_path: Path) -> Path:
    run(tmp_path, "init", str(tmp_path / "v"))
    return tmp_path / "v"


def test_ingest_async_then_work_wait_show(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copy(SAMPLES / "sotu" / "1790-washington.md", tmp_path / "speech.md")
    monkeypatch.chdir(tmp_path)
    queued = json.loads(
        run(root, "ingest", "speech.md", "--async", "--yes", "--trust", "trusted", "--json")
    )
    job_id = queued["id"]
    assert queued["status"] == "queued" and queued["kind"] == "ingest"
    assert queued["payload"]["sources"] == [str(tmp_path / "speech.md")]  # made absolute
    assert queued["payload"]["yes"] is True and queued["payload"]["trust"] == "trusted"
    assert job_id in run(root, "jobs", "--status", "queued")
    assert "still queued" in run(root, "jobs", "wait", job_id, "--deadline", "0.1", code=124)
    assert job_id in run(root, "jobs", "work", "--once")
    assert "No job to run." in run(root, "jobs", "work", "--once")
    assert f"{job_id} done" in run(root, "jobs", "wait", job_id[:10], "--deadline", "10")
    shown = json.loads(run(root, "jobs", "show", job_id, "--json"))
    assert shown["status"] == "done" and shown["result"]["totals"]["chunks"] == {"applied": 2}
    assert [e["type"] for e in shown["events"]][-1] == "done"
    assert "progress: 2/2" in run(root, "jobs", "show", job_id)
    listed = json.loads(run(root, "jobs", "--json"))
    assert [j["id"] for j in listed] == [job_id]
    assert "already done" in run(root, "jobs", "cancel", job_id, code=1)


def test_async_reports_mistakes_with_the_fix(root: Path) -> None:
    out = run(root, "ingest", "no-such-file.md", "--async", code=1)
    assert "does not exist" in out
    out = run(root, "ingest", "ftp://example.org/x", "--async", code=1)
    assert "only http and https" in out
    assert "no job" in run(root, "jobs", "show", "job-ffffff", code=1)


def test_cancel_and_reindex_async(root: Path) -> None:
    out = run(root, "reindex", "--async")
    job_id = out.split()[3].rstrip(".")
    assert out.startswith("Queued reindex job job-") and "affidavit jobs work --once" in out
    assert f"Cancelled {job_id}" in run(root, "jobs", "cancel", job_id)
    assert "cancelled by" in run(root, "jobs", "wait", job_id, code=1)
    assert "No done jobs." in run(root, "jobs", "--status", "done")


def test_every_jobs_command_has_an_example() -> None:
    result = CliRunner().invoke(main, ["jobs", "--help"])
    assert result.exit_code == 0 and "Example" in result.output
    for name in ("show", "cancel", "wait", "work"):
        result = CliRunner().invoke(main, ["jobs", name, "--help"])
        assert result.exit_code == 0 and "Example" in result.output, name
