"""What ``affidavit ingest`` prints at the end: counts in words, never a Python dict."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from affidavit.cli import main
from affidavit.vault import Vault


def test_the_plans_line_counts_in_words(vault: Vault, tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text(
        "# Incubator\n\nThe incubator in room 214 is set to 37 °C and 5% CO2.\n"
        "Its water pan is refilled every Monday with sterile distilled water.\n",
        encoding="utf-8",
    )
    root = vault.root
    vault.close()
    result = CliRunner().invoke(main, ["--vault", str(root), "ingest", str(notes)])
    assert result.exit_code == 0, result.output
    line = next(x for x in result.output.splitlines() if x.startswith("Plans: "))
    assert line.startswith("Plans: 1 pending · operations admitted: "), line
    assert "{" not in result.output and "'" not in line
    assert "Review the plans: affidavit inbox" in result.output
