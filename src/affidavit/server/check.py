"""``affidavit serve --check``: validate config and permissions without starting anything.

Reads only: nothing is created, migrated, recovered or bound for longer than a port probe.
"""

from __future__ import annotations

import os
import socket
import stat
from dataclasses import dataclass, field
from pathlib import Path

from ..config import load_config
from ..errors import AffidavitError
from ..service import vault_owner
from ..vault import CONFIG_NAME, STATE_DIR, find_vault_root, private_problems
from .registry import vault_name
from .runtime import ServeOptions, is_loopback, socket_answers


@dataclass
class CheckReport:
    lines: list[tuple[bool, str, str]] = field(default_factory=list)

    def ok(self, what: str, detail: str) -> None:
        self.lines.append((True, what, detail))

    def problem(self, what: str, detail: str) -> None:
        self.lines.append((False, what, detail))

    @property
    def passed(self) -> bool:
        return all(good for good, _, _ in self.lines)

    def render(self) -> str:
        out = [f"{'ok ' if good else 'BAD'} {what}: {detail}" for good, what, detail in self.lines]
        out.append("all checks passed" if self.passed else "some checks failed")
        return "\n".join(out)


def _check_socket(report: CheckReport, path: Path, shared: bool) -> None:
    directory = path.parent
    if directory.exists():
        info = directory.stat()
        mode = stat.S_IMODE(info.st_mode)
        if info.st_uid != os.geteuid():
            report.problem("socket directory", f"{directory} belongs to UID {info.st_uid}, not you")
        elif mode & 0o022:
            report.problem("socket directory", f"{directory} is writable by others (mode {mode:o})")
        elif shared and not mode & 0o001:
            report.problem("socket directory", f"--shared but others can't reach {directory}")
        else:
            report.ok("socket directory", f"{directory} (mode {mode:o})")
    else:
        parent = next((p for p in directory.parents if p.exists()), Path("/"))
        if os.access(parent, os.W_OK | os.X_OK):
            report.ok(
                "socket directory", f"{directory} will be created ({'0711' if shared else '0700'})"
            )
        else:
            report.problem(
                "socket directory", f"can't create {directory}: {parent} is not writable"
            )
    if path.exists():
        if not stat.S_ISSOCK(path.lstat().st_mode):
            report.problem("socket", f"{path} exists and is not a socket")
        elif socket_answers(path):
            report.problem("socket", f"a daemon already listens on {path}")
        else:
            report.ok("socket", f"{path} is stale and will be replaced")
    else:
        report.ok("socket", f"{path} ({'0666, shared' if shared else '0600'})")


def _check_tcp(report: CheckReport, options: ServeOptions) -> None:
    if options.tcp is None:
        report.ok("tcp", "off (Unix socket only)")
        return
    host, port = options.tcp
    if not is_loopback(host) and not options.allow_remote:
        report.problem("tcp", f"{host} is not loopback; pass --allow-remote to mean it")
        return
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    probe = socket.socket(family, socket.SOCK_STREAM)
    probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        probe.bind((host, port))
        report.ok("tcp", f"{host}:{port} is free" + ("" if is_loopback(host) else " (REMOTE)"))
    except OSError as exc:
        report.problem("tcp", f"can't listen on {host}:{port}: {exc.strerror}")
    finally:
        probe.close()


def _check_vault(report: CheckReport, path: Path, names: set[str]) -> None:
    root = find_vault_root(path)
    if root is None:
        report.problem("vault", f"no vault at {path}")
        return
    label = f"vault {root}"
    try:
        load_config(root / CONFIG_NAME)
    except AffidavitError as exc:
        report.problem(label, f"configuration: {exc}")
        return
    name = vault_name(root)
    if name in names:
        report.problem(label, f"another served vault is also called {name!r}")
        return
    names.add(name)
    owner = vault_owner(root)
    me = os.geteuid()
    if owner != me and me != 0:
        report.problem(label, f"owned by UID {owner}, but the daemon would run as UID {me}")
        return
    for directory in (root, root / STATE_DIR):
        mode = stat.S_IMODE(directory.stat().st_mode)
        if mode & 0o002 or (directory.name == STATE_DIR and mode & 0o020):
            report.problem(label, f"{directory} is writable by others (mode {mode:o})")
            return
    db = root / STATE_DIR / "db.sqlite"
    if not db.exists():
        report.problem(label, f"{db} is missing; run `affidavit init {root}`")
        return
    exposed = private_problems(root)
    if exposed:
        shown = ", ".join(exposed[:3]) + (
            f" and {len(exposed) - 3} more" if len(exposed) > 3 else ""
        )
        report.problem(
            label,
            f"private files other users may read: {shown}; fix: chmod -R go-rwx {root / STATE_DIR}",
        )
        return
    served = " (served read-only: another user's vault)" if owner != me else ""
    report.ok(label, f"name {name!r}, owner UID {owner}{served}")


def run_check(options: ServeOptions) -> CheckReport:
    report = CheckReport()
    _check_socket(report, options.socket_path, options.shared)
    _check_tcp(report, options)
    names: set[str] = set()
    for path in options.vaults:
        _check_vault(report, path, names)
    if not options.vaults:
        report.problem("vaults", "none to serve: pass --vault PATH (or run inside a vault)")
    return report


__all__ = ["CheckReport", "run_check"]
