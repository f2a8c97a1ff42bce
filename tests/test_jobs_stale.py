"""A killed command or worker never leaves its job ``running``: the next look settles it.

Real processes and SIGKILL: a foreground ingest killed mid-chunk is failed with the reason by the
next ``affidavit jobs`` / ``affidavit ingest``, and ``jobs cancel`` ends it (a live one is refused,
naming its process); two ingests creating the same page at once both land, the later as
``add_claims``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from click.testing import CliRunner

from affidavit.cli import main
from affidavit.ingest.pipeline import Ingestor
from affidavit.jobs import JobQueue
from affidavit.providers.base import ModelRequest
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.providers.scripted import ScriptedProvider
from affidavit.vault import Vault, open_vault

from .conftest import SAMPLES

DOC = str(SAMPLES / "sotu" / "1790-washington.md")

HANGING_INGEST = """
import sys, time
from pathlib import Path
from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.scripted import ScriptedProvider
from affidavit.vault import open_vault

def hang(request):
    Path(sys.argv[2]).write_text("asked")
    time.sleep(600)

vault = open_vault(Path(sys.argv[1]))
Ingestor(vault, ScriptedProvider([hang])).run([sys.argv[3]])
"""


def hanging_ingest(root: Path, marker: Path) -> subprocess.Popen[bytes]:
    """A foreground ingest that hangs in its first model call (after ``marker`` appears)."""
    proc = subprocess.Popen([sys.executable, "-c", HANGING_INGEST, str(root), str(marker), DOC])
    while not marker.exists():  # a state, not a speed
        assert proc.poll() is None, "the ingest ended before its model call"
        time.sleep(0.02)
    return proc


def jobs_cli(root: Path, *args: str) -> tuple[int, str]:
    out = CliRunner().invoke(main, ["--vault", str(root), "jobs", *args])
    return out.exit_code, out.output


def killed(proc: subprocess.Popen[bytes]) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    assert proc.wait() == -signal.SIGKILL


def test_a_killed_foreground_ingest_is_failed_by_the_next_look(
    vault: Vault, tmp_path: Path
) -> None:
    proc = hanging_ingest(vault.root, tmp_path / "asked")
    try:
        code, out = jobs_cli(vault.root, "--json")
        [job] = json.loads(out)
        assert code == 0 and job["status"] == "running" and not job["queued"]  # it is alive
    finally:
        killed(proc)
    code, out = jobs_cli(vault.root, "--json")
    [job] = json.loads(out)
    assert job["status"] == "failed", job
    assert (
        f"pid {proc.pid}" in job["error"]
        and "run the same `affidavit ingest` again" in job["error"]
    )
    events = JobQueue(vault).events(job["id"])
    assert [e.type for e in events] == ["failed"]


def test_the_next_ingest_settles_a_killed_one_and_finishes_its_work(
    vault: Vault, tmp_path: Path
) -> None:
    proc = hanging_ingest(vault.root, tmp_path / "asked")
    killed(proc)
    again = Ingestor(vault, ExtractiveProvider(), apply_now=True).run([DOC])
    assert again.sources[0].status == "ingested" and not again.failed
    rows = vault.db.execute("SELECT id, status, error FROM jobs ORDER BY rowid").fetchall()
    assert [r["status"] for r in rows] == ["failed", "done"]
    assert rows[0]["error"].startswith("interrupted: the command running it")


def test_cancel_ends_a_dead_foreground_run_and_refuses_a_live_one(
    vault: Vault, tmp_path: Path
) -> None:
    proc = hanging_ingest(vault.root, tmp_path / "asked")
    try:
        [row] = vault.db.execute("SELECT id FROM jobs").fetchall()
        code, out = jobs_cli(vault.root, "cancel", row["id"])
        assert code == 1 and f"pid {proc.pid}" in out and "stop that command" in out
    finally:
        killed(proc)
    code, out = jobs_cli(vault.root, "cancel", row["id"])
    assert code == 0 and f"Cancelled {row['id']}" in out, out
    job = JobQueue(vault).get(row["id"])
    assert job.status == "cancelled" and job.error.startswith("cancelled by")


def test_a_dead_workers_job_is_requeued_by_the_next_look(vault: Vault) -> None:
    from affidavit.jobs.lease import claim

    from .test_jobs_support import SleepPayload

    queue = JobQueue(vault)
    job = queue.submit(SleepPayload(marker="/nonexistent/never-runs"), "ann", max_attempts=2)
    assert claim(vault.db, "worker-a", 3600, time.time(), vault.clock) is not None
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          text=True, capture_output=True, check=True)  # fmt: skip
    vault.db.execute("UPDATE jobs SET lease_pid = ? WHERE id = ?", (int(gone.stdout), job.id))
    [listed] = queue.list()
    assert listed.status == "queued" and listed.attempts == 1
    reason = queue.events(job.id)[-1]
    assert reason.type == "requeued" and "worker-a" in reason.data["reason"]
    # its last attempt: failed, not requeued again
    assert claim(vault.db, "worker-b", 3600, time.time(), vault.clock) is not None
    vault.db.execute("UPDATE jobs SET lease_pid = ? WHERE id = ?", (int(gone.stdout), job.id))
    final = queue.get(job.id)
    assert final.status == "failed" and "gave up after 2 attempt(s)" in final.error


def _plan(request: ModelRequest, quote: str) -> str:
    assert request.task is not None
    return json.dumps(
        {
            "nonce": request.task.nonce,
            "operations": [
                {
                    "op": "create_page",
                    "slug": "harbour",
                    "title": "Harbour",
                    "summary": "The harbour.",
                    "claims": [
                        {
                            "text": quote + ".",
                            "evidence": [{"source": request.task.source_id, "quote": quote}],
                        }
                    ],
                }
            ],
        }
    )


def test_two_ingests_creating_one_page_both_land(vault: Vault, tmp_path: Path) -> None:
    first, second = tmp_path / "wall.md", tmp_path / "quay.md"
    first.write_text("# Wall\n\nThe harbour wall was rebuilt in 1904.\n")
    second.write_text("# Quay\n\nFishing boats land their catch at the north quay.\n")

    def meanwhile(request: ModelRequest) -> str:
        """While this ingest waits for its model, another one creates the same page."""
        other = open_vault(vault.root)
        try:
            done = Ingestor(
                other,
                ScriptedProvider([lambda r: _plan(r, "The harbour wall was rebuilt in 1904")]),
                apply_now=True,
            ).run([str(first)])
            assert done.sources[0].chunks[0].status == "applied"
        finally:
            other.close()
        return _plan(request, "Fishing boats land their catch at the north quay")

    provider = ScriptedProvider([meanwhile])
    report = Ingestor(vault, provider, apply_now=True).run([str(second)])
    [chunk] = report.sources[0].chunks
    assert chunk.status == "applied", chunk.message
    assert len(provider.requests) == 1  # not re-asked: the plan was retargeted, not refused
    texts = {
        r[0] for r in vault.db.execute("SELECT text FROM claims WHERE page_slug = ?", ("harbour",))
    }
    assert texts == {
        "The harbour wall was rebuilt in 1904.",
        "Fishing boats land their catch at the north quay.",
    }
