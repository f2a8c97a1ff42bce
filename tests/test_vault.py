"""init, open and configuration."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from affidavit.cli import main
from affidavit.config import SETTINGS, load_config, render_default_config
from affidavit.db import MIGRATIONS
from affidavit.errors import ConfigError, VaultError
from affidavit.vault import init_vault, open_vault


def test_init_creates_the_vault_layout(tmp_path: Path) -> None:
    vault, created = init_vault(tmp_path / "v")
    with vault:
        assert created
        for name in (
            "affidavit.toml",
            "wiki/index.md",
            "wiki/log.md",
            "wiki/context.md",
            "sources",
            ".affidavit/db.sqlite",
            ".git",
        ):
            assert (vault.root / name).exists(), name
        mode = vault.db.execute("PRAGMA journal_mode").fetchone()[0]
        assert mode == "wal"
        names = [r[0] for r in vault.db.execute("SELECT name FROM _migrations ORDER BY rowid")]
        assert names == [name for name, _ in MIGRATIONS]
        assert names[:3] == ["m001_initial", "m002_ingest", "m003_retrieval"]
        assert names == sorted(names)  # numbered, applied in order
        author = vault.git.run("log", "-1", "--format=%an <%ae>|%cn").strip()
        assert author == "affidavit <affidavit@localhost>|affidavit"
        assert vault.git.is_clean(["."])


def test_init_is_idempotent(tmp_path: Path) -> None:
    vault, _ = init_vault(tmp_path / "v")
    head = vault.git.head()
    config = vault.config_path.read_bytes()
    vault.close()
    again, created = init_vault(tmp_path / "v")
    with again:
        assert not created
        assert again.git.head() == head
        assert again.config_path.read_bytes() == config


def test_init_refuses_a_vault_inside_a_vault(tmp_path: Path) -> None:
    init_vault(tmp_path / "v")[0].close()
    with pytest.raises(VaultError, match="inside the vault"):
        init_vault(tmp_path / "v" / "wiki" / "nested")


def test_open_outside_a_vault_names_the_fix(tmp_path: Path) -> None:
    with pytest.raises(VaultError, match="affidavit init"):
        open_vault(tmp_path)


def test_default_config_documents_every_setting() -> None:
    text = render_default_config()
    data = tomllib.loads(text)
    for setting in SETTINGS:
        assert data[setting.section][setting.key] == setting.default
        assert f"# {setting.doc}" in text


@pytest.mark.parametrize(
    ("snippet", "message"),
    [
        ("[plans]\nexpiry_hours = 0\n", "at least 1"),
        ("[plans]\nexpiry_hours = 'soon'\n", "whole number"),
        ("[policy]\nauto_apply = 'always'\n", "use one of"),
        ("[plans]\nexpiry_hour = 3\n", "unknown setting"),
        ("[network]\nproxy = 1\n", "unknown section"),
        ("[plans\n", "not valid TOML"),
    ],
)
def test_bad_config_values_name_the_fix(tmp_path: Path, snippet: str, message: str) -> None:
    path = tmp_path / "affidavit.toml"
    path.write_text(snippet)
    with pytest.raises(ConfigError, match=message):
        load_config(path)


def test_cli_init_and_json(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["init", str(tmp_path / "v"), "--json"])
    assert result.exit_code == 0, result.output
    assert '"created": true' in result.output
    result = runner.invoke(main, ["init", str(tmp_path / "v")])
    assert "nothing changed" in result.output
    result = runner.invoke(main, ["--vault", str(tmp_path / "nope"), "inbox"])
    assert result.exit_code == 1 and "affidavit init" in result.output


def test_open_refuses_a_symlinked_database_or_state_folder(tmp_path: Path) -> None:
    """A vault can't borrow another vault's database (its tokens, its claims) through a link."""
    other, _ = init_vault(tmp_path / "other")
    other.close()
    mine, _ = init_vault(tmp_path / "mine")
    mine.close()
    db = tmp_path / "mine" / ".affidavit" / "db.sqlite"
    db.unlink()
    db.symlink_to(tmp_path / "other" / ".affidavit" / "db.sqlite")
    with pytest.raises(VaultError, match="symlink"):
        open_vault(tmp_path / "mine")
    state = tmp_path / "mine" / ".affidavit"
    shutil.rmtree(state)
    state.symlink_to(tmp_path / "other" / ".affidavit", target_is_directory=True)
    with pytest.raises(VaultError, match="symlink"):
        open_vault(tmp_path / "mine")
