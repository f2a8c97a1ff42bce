"""Issue 11 items 14 and 19, re-attacked: a killed foreground ingest whose pid the kernel has
given to another process by the time anyone looks. The pid alone says "alive", so the job stayed
`running` and `jobs cancel` refused it forever; the holder records when its process started."""

from __future__ import annotations

import os
import re

from click.testing import CliRunner

from affidavit.cli import main
from affidavit.jobs.lease import inline_gone, pid_alive, process_start, start_inline
from affidavit.vault import Vault


def test_a_reused_pid_is_not_the_holder(vault: Vault) -> None:
    start_inline(vault.db, "job-reused", "ingest", "2026-01-01T00:00:00Z", "{}")
    row = vault.db.execute("SELECT * FROM jobs WHERE id = 'job-reused'").fetchone()
    assert row["lease_pid"] == os.getpid() and inline_gone(row) is False  # it is us, alive
    started = process_start(os.getpid())
    assert started is not None and f"started {started})" in row["lease_owner"]
    # the command was killed and the kernel gave its pid to a later process (this one):
    other = re.sub(r"started \d+\)", f"started {int(started) - 1})", row["lease_owner"])
    vault.db.execute("UPDATE jobs SET lease_owner = ? WHERE id = 'job-reused'", (other,))
    row = vault.db.execute("SELECT * FROM jobs WHERE id = 'job-reused'").fetchone()
    assert not pid_alive(os.getpid(), row["lease_owner"]) and inline_gone(row) is True
    result = CliRunner(env={"AFFIDAVIT_NO_DAEMON": "1"}).invoke(
        main, ["--vault", str(vault.root), "jobs", "cancel", "job-reused"]
    )
    assert result.exit_code == 0 and "Cancelled job-reused" in result.output, result.output


def test_an_old_holder_name_without_a_start_still_counts_as_alive() -> None:
    assert pid_alive(os.getpid(), "command (pid 1)")
    assert pid_alive(os.getpid(), None)
