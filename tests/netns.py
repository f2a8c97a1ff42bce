"""Network namespaces for the multi-host tests (tests/test_multihost.py): a "database host" and
worker hosts, each its own network namespace, joined by veth pairs — one /30 per worker out of
one private /24 — with no other route: a host reaches the database's address on its link and
nothing else (no default route, no loopback traffic to anything that listens).

    with Network("t", ["w1", "w2"]) as net:
        net.argv("w1", ["python", ...])      # runs the command on host w1 (ip netns exec)
        net.database_address("w1")           # the database's address on w1's link
        net.link("w1", up=False)             # take w1's link down (in its namespace); heal with up=True

Names carry this process's pytest-xdist worker and pid, so parallel runs never share one; every
namespace (and with it its veth ends) is removed on exit, on a failed test too, and namespaces
left by a process that was killed outright are swept by the next run. Needs root and
``ip netns`` (iproute2): :func:`unavailable` says why not, with the fix, and the tests skip.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
from types import TracebackType

PREFIX = "affnet-"
SUBNET = "10.231.7"
"""The private /24 the links are cut from; it exists only inside the test's namespaces (the
root namespace gets no address, so it cannot clash with the machine's own networks)."""
CIDR = f"{SUBNET}.0/24"


class Unavailable(Exception):
    """Network namespaces can't be made here; the message says why and what to do."""


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, check=False, timeout=60)
    if check and done.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip()}")
    return done


def unavailable() -> str | None:
    """Why namespaces can't be made here (with the fix), or None when they can."""
    if os.geteuid() != 0:
        return "the multi-host tests make network namespaces: run them as root (CI does)"
    if shutil.which("ip") is None:
        return "no `ip` command: install iproute2 (scripts/setup_postgres.sh does)"
    probe = f"{PREFIX}probe-{os.getpid()}"
    made = _ip("netns", "add", probe, check=False)
    if made.returncode != 0:
        return f"`ip netns add` fails here ({made.stderr.strip()}): run as root on a Linux host"
    _ip("netns", "del", probe, check=False)
    return None


def _alive(pid: int) -> bool:
    # not affidavit.jobs.lease.pid_alive: this module also runs under the system python3 with
    # no affidavit installed (test_without_root_the_tests_skip_saying_how_to_run_them)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep() -> list[str]:
    """Remove the namespaces of test processes that are gone (killed before their cleanup)."""
    removed = []
    listed = _ip("netns", "list", check=False).stdout
    for line in listed.splitlines():
        name = line.split(" ", 1)[0]
        found = re.fullmatch(rf"{PREFIX}[\w-]*?-(\d+)-\w+", name)
        if found and not _alive(int(found.group(1))):
            _kill_inside(name)
            _ip("netns", "del", name, check=False)
            removed.append(name)
    return removed


def _kill_inside(name: str) -> None:
    """SIGKILL every process still in namespace ``name`` (a namespace outlives its name while a
    process is inside)."""
    pids = _ip("netns", "pids", name, check=False).stdout.split()
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(pid), 9)


class Network:
    """The database host ``db`` and the worker hosts ``hosts``, each a namespace; host ``n``
    (from 0) has ``SUBNET.(4n+2)/30`` on its link and the database ``SUBNET.(4n+1)``."""

    def __init__(self, tag: str, hosts: list[str]) -> None:
        if len(hosts) > 60:
            raise ValueError("at most 60 hosts fit in the /24")
        worker = re.sub(r"\W", "", os.environ.get("PYTEST_XDIST_WORKER", "main"))[:8]
        self.base = f"{PREFIX}{tag}-{worker}-{os.getpid()}"
        self.hosts = list(hosts)
        self.made: list[str] = []

    # -- names and addresses -------------------------------------------------------------
    def ns(self, host: str) -> str:
        return f"{self.base}-{host}"

    def _index(self, host: str) -> int:
        return self.hosts.index(host)

    def address(self, host: str) -> str:
        """Host ``host``'s own address."""
        return f"{SUBNET}.{4 * self._index(host) + 2}"

    def database_address(self, host: str) -> str:
        """The database host's address on ``host``'s link (what ``host`` connects to)."""
        return f"{SUBNET}.{4 * self._index(host) + 1}"

    def database_addresses(self) -> list[str]:
        return [self.database_address(h) for h in self.hosts]

    def host_of(self, address: str) -> str | None:
        """The host whose address ``address`` is (a connection's client address)."""
        for host in self.hosts:
            if address == self.address(host):
                return host
        return None

    @staticmethod
    def _link(n: int) -> str:
        return f"h{n}"  # the database's end of host n's link (its name inside the db namespace)

    # -- life ------------------------------------------------------------------------------
    def create(self) -> None:
        sweep()
        try:
            for host in ["db", *self.hosts]:
                _ip("netns", "add", self.ns(host))
                self.made.append(self.ns(host))
                _ip("-n", self.ns(host), "link", "set", "lo", "up")
            db = self.ns("db")
            for n, host in enumerate(self.hosts):
                # both ends made where they live: no name ever appears in the root namespace
                _ip("-n", db, "link", "add", self._link(n), "type", "veth", "peer", "name",
                    "eth0", "netns", self.ns(host))  # fmt: skip
                _ip("-n", db, "addr", "add", f"{self.database_address(host)}/30", "dev",
                    self._link(n))  # fmt: skip
                _ip("-n", self.ns(host), "addr", "add", f"{self.address(host)}/30", "dev", "eth0")
                _ip("-n", db, "link", "set", self._link(n), "up")
                _ip("-n", self.ns(host), "link", "set", "eth0", "up")
        except BaseException:
            self.remove()
            raise

    def remove(self) -> None:
        """Kill what still runs inside and delete every namespace made (veths go with them)."""
        for name in reversed(self.made):
            _kill_inside(name)
            _ip("netns", "del", name, check=False)
        self.made = []

    def __enter__(self) -> Network:
        self.create()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.remove()

    # -- use ---------------------------------------------------------------------------------
    def argv(self, host: str, argv: list[str]) -> list[str]:
        """``argv`` run on ``host`` (``ip netns exec`` execs it: the pid is the command's)."""
        return ["ip", "netns", "exec", self.ns(host), *argv]

    def link(self, host: str, *, up: bool) -> None:
        """Take ``host``'s link down or up, inside its namespace."""
        _ip("-n", self.ns(host), "link", "set", "eth0", "up" if up else "down")

    def routes(self, host: str) -> str:
        return _ip("-n", self.ns(host), "route", "show").stdout

    def exists(self) -> list[str]:
        listed = _ip("netns", "list", check=False).stdout
        return [n for n in (line.split(" ", 1)[0] for line in listed.splitlines()) if
                n.startswith(self.base)]  # fmt: skip
