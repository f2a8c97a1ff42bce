"""Issue 11 item 12, re-attacked: input nested too deeply for a recursive parser gives a one-line
error (or is read as plain text), never a RecursionError traceback: a vault's own config, and a
hand-edited page's frontmatter that `doctor --propose` reads."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from affidavit.cli import main
from affidavit.vault import init_vault


def test_a_deeply_nested_config_is_a_one_line_error(tmp_path: Path) -> None:
    vault, _ = init_vault(tmp_path / "v")
    vault.close()
    config = tmp_path / "v" / "affidavit.toml"
    config.write_text(config.read_text() + "\nx = " + "[" * 100_000 + "]" * 100_000 + "\n")
    result = CliRunner(env={"AFFIDAVIT_NO_DAEMON": "1"}).invoke(
        main, ["--vault", str(tmp_path / "v"), "inbox"]
    )
    assert result.exit_code == 1
    assert "nests arrays or tables too deeply" in result.output, result.output
    assert "Traceback" not in result.output and not isinstance(result.exception, RecursionError)


def test_a_config_that_is_not_utf8_is_a_one_line_error(tmp_path: Path) -> None:
    vault, _ = init_vault(tmp_path / "v")
    vault.close()
    config = tmp_path / "v" / "affidavit.toml"
    config.write_bytes(config.read_bytes() + b"\n# caf\xe9\n")
    result = CliRunner(env={"AFFIDAVIT_NO_DAEMON": "1"}).invoke(
        main, ["--vault", str(tmp_path / "v"), "inbox"]
    )
    assert result.exit_code == 1 and "is not UTF-8" in result.output, result.output


def test_deeply_nested_frontmatter_in_a_hand_edit_is_not_a_traceback(tmp_path: Path) -> None:
    vault, _ = init_vault(tmp_path / "v")
    vault.close()
    page = tmp_path / "v" / "wiki" / "newpage.md"
    page.write_text("---\ntitle: " + "[" * 50_000 + "]" * 50_000 + "\n---\n# New\n\nSome text.\n")
    result = CliRunner(env={"AFFIDAVIT_NO_DAEMON": "1"}).invoke(
        main, ["--vault", str(tmp_path / "v"), "doctor", "--propose"]
    )
    assert not isinstance(result.exception, RecursionError), result.output[-300:]
    assert "newpage.md" in result.output
