"""scripts/apt_install.sh with a pinned package (``NAME=VERSION``, as scripts/setup_postgres.sh
asks for postgresql-15): the pinned package may be (re)installed, no other installed package may
move. A stand-in ``apt-get`` on PATH prints what apt's simulation would and records installs."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from .conftest import ROOT

FAKE_APT = """#!/usr/bin/env bash
case "$*" in
  *update*) exit 0 ;;
  *" -s "*) cat "$APT_SIMULATION" ;;
  *) echo "$*" >> "$APT_INSTALLED" ;;
esac
"""

SAME = "Inst postgresql-15 [15.18-0+deb12u1] (15.18-0+deb12u1 Debian:12.15/oldstable [amd64])\n"
MOVES_LIBPQ = (
    "Inst libpq5 [15.18-0+deb12u1] (15.20-0+deb12u1 Debian-Security:12/oldstable-security)\n"
    "Inst postgresql-15 [15.18-0+deb12u1] (15.20-0+deb12u1 Debian-Security:12/oldstable)\n"
)
ITSELF = "Inst postgresql-15 [15.18-0+deb12u1] (15.20-0+deb12u1 Debian-Security:12/oldstable)\n"


def run(tmp_path: Path, simulation: str, *packages: str) -> tuple[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name in ("apt-get", "sudo"):
        tool = bin_dir / name
        tool.write_text(FAKE_APT if name == "apt-get" else '#!/usr/bin/env bash\nexec "$@"\n')
        tool.chmod(0o755)
    (tmp_path / "sim").write_text(simulation)
    installed = tmp_path / "installed"
    installed.write_text("")
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "APT_SIMULATION": str(tmp_path / "sim"),
        "APT_INSTALLED": str(installed),
    }
    script = f'. {ROOT / "scripts" / "apt_install.sh"}; apt_install "$@"'
    done = subprocess.run(
        ["bash", "-c", script, "apt", *packages],
        capture_output=True, text=True, env=env, check=True,
    )  # fmt: skip
    return installed.read_text(), done.stderr


def test_a_pinned_installed_version_is_reinstalled(tmp_path: Path) -> None:
    installed, stderr = run(tmp_path, SAME, "postgresql-15=15.18-0+deb12u1")
    assert "--reinstall postgresql-15=15.18-0+deb12u1" in installed and stderr == ""


def test_a_package_that_would_move_libpq5_is_refused(tmp_path: Path) -> None:
    for package in ("postgresql-15", "postgresql-15=15.20-0+deb12u1"):
        installed, stderr = run(tmp_path, MOVES_LIBPQ, package)
        assert installed == ""
        assert f"not installing {package}" in stderr and "libpq5 15.18-0+deb12u1 ->" in stderr


def test_the_pinned_package_itself_may_move_to_its_pin(tmp_path: Path) -> None:
    installed, stderr = run(tmp_path, ITSELF, "postgresql-15=15.20-0+deb12u1")
    assert "postgresql-15=15.20-0+deb12u1" in installed and stderr == ""
