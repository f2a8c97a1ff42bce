"""A zygote: one Python process that imports the modules a test's children need once, then
forks a child for each run — a child killed mid-write in ~10 ms instead of a fresh interpreter
importing the engine (~1–2 s of CPU) for every kill of a kill-at-every-step test.

A forked child is a fresh process as far as the vault can tell: it opens its own vault,
connections and repository; the zygote only imported modules (no vault, connection, thread or
file open), and ``random`` reseeds itself in a forked child. Its stdout and stderr go to files,
its exit status comes back as a returncode (``-9`` for a SIGKILL, like ``subprocess``)."""

from __future__ import annotations

import atexit
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path

ZYGOTE = textwrap.dedent(
    """
    import atexit, gc, importlib, json, os, pkgutil, sys
    for name in sys.argv[1:]:
        module, _, warm = name.partition(":")
        if module.endswith(".*"):  # "package.*": the package's modules, those that import here
            package = importlib.import_module(module[:-2])
            for found in pkgutil.iter_modules(package.__path__, f"{package.__name__}."):
                try:
                    importlib.import_module(found.name)
                except ImportError:
                    pass  # an optional extra not installed: the child finds the same
            continue
        loaded = importlib.import_module(module)
        if warm:  # "module:function": read-only data a child would load anyway, loaded once
            getattr(loaded, warm)()
    gc.collect()
    gc.freeze()  # a child's collections never touch (and so copy) the zygote's objects
    job = None
    for line in sys.stdin:
        pid = os.fork()
        if pid == 0:
            job = json.loads(line)
            break
        sys.stdout.write(json.dumps({"pid": pid}) + "\\n")
        sys.stdout.flush()
        _, status, usage = os.wait4(pid, 0)
        cpu = usage.ru_utime + usage.ru_stime
        reply = {"returncode": os.waitstatus_to_exitcode(status), "cpu": cpu}
        sys.stdout.write(json.dumps(reply) + "\\n")
        sys.stdout.flush()
    if job is not None:
        # the child: its environment and directory, stdin from its file (or /dev/null), stdout
        # and stderr to the files, then the code as `python -c` runs it (an uncaught exception:
        # traceback, exit 1)
        if job["env"] is not None:
            os.environ.clear()
            os.environ.update(job["env"])
        if job["cwd"] is not None:
            os.chdir(job["cwd"])
        for fd, path, flags in (
            (0, job["stdin"] or os.devnull, os.O_RDONLY),
            (1, job["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
            (2, job["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
        ):
            opened = os.open(path, flags, 0o600)
            os.dup2(opened, fd)
            os.close(opened)
        sys.argv = ["-c", *job["argv"]]
        code = compile(job["code"], "<string>", "exec")
        scope = {"__name__": "__main__", "__builtins__": __builtins__}
        status = 0
        try:
            exec(code, scope)
        except SystemExit as exc:
            if exc.code is None or isinstance(exc.code, int):
                status = exc.code or 0
            else:
                print(exc.code, file=sys.stderr)
                status = 1
        except BaseException:
            sys.excepthook(*sys.exc_info())
            status = 1
        # the interpreter's shutdown as it concerns the child's own objects (its vault and
        # connections closed, atexit handlers run), without tearing down every preloaded module
        # (that would touch, and so copy, the zygote's whole heap)
        scope.clear()
        gc.collect()
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    """
)


class Zygote:
    """Forks children that start with ``preload`` already imported (``"module:function"``: and
    that function called, for read-only data loaded on first use)."""

    def __init__(self, preload: Sequence[str], env: Mapping[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", ZYGOTE, *preload],
            env=None if env is None else dict(env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self.dir = Path(tempfile.mkdtemp(prefix="zygote-"))
        self.runs = 0
        self.child_cpu = 0.0
        """The CPU seconds (user and system) of the children run so far."""

    def _reply(self, deadline: float | None) -> dict[str, float]:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], deadline)
        if not ready:
            raise TimeoutError
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the zygote died ({self.proc.poll()})")
        reply: dict[str, float] = json.loads(line)
        return reply

    def run(
        self,
        code: str,
        args: Sequence[str],
        timeout: float,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        stdin: str = "",
    ) -> subprocess.CompletedProcess[str]:
        """Run ``code`` as ``python -c code *args`` would, in a forked child: ``env`` its whole
        environment (None: the zygote's), ``cwd`` its directory, ``stdin`` its input."""
        assert self.proc.stdin is not None
        self.runs += 1
        out, err = self.dir / f"{self.runs}.out", self.dir / f"{self.runs}.err"
        given = self.dir / f"{self.runs}.in"
        if stdin:
            given.write_text(stdin)
        argv = [str(a) for a in args]
        job = {
            "code": code,
            "argv": argv,
            "stdout": str(out),
            "stderr": str(err),
            "stdin": str(given) if stdin else None,
            "env": None if env is None else dict(env),
            "cwd": None if cwd is None else str(cwd),
        }
        self.proc.stdin.write(json.dumps(job) + "\n")
        self.proc.stdin.flush()
        pid = int(self._reply(timeout)["pid"])  # the first waits for the preload too
        try:
            done = self._reply(timeout)
        except TimeoutError:
            os.kill(pid, signal.SIGKILL)
            self.close()
            raise subprocess.TimeoutExpired(["zygote", *argv], timeout) from None
        returncode = int(done["returncode"])
        self.child_cpu += done["cpu"]
        stdout, stderr = out.read_text(), err.read_text()
        out.unlink()
        err.unlink()
        given.unlink(missing_ok=True)
        return subprocess.CompletedProcess(["zygote", *argv], returncode, stdout, stderr)

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            if not self.proc.stdin.closed:
                self.proc.stdin.close()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        shutil.rmtree(self.dir, ignore_errors=True)


CLI = (
    "affidavit.cli.*",
    "affidavit.storage.*",
    "affidavit.vault",
    "affidavit.store.apply",
    "affidavit.gate",
    "affidavit.support.checker",
    "affidavit.doctor",
    "affidavit.support.wordnet:_lexicon",
)
"""What an ``affidavit`` command run as a child (tests' ``cli()``) starts with."""

_ZYGOTES: dict[tuple[tuple[str, ...], str | None], Zygote] = {}


def zygote(*preload: str, pythonpath: str | None = None) -> Zygote:
    """This process's zygote for ``preload`` (with ``PYTHONPATH`` set to ``pythonpath`` when
    given), started on first use, closed at exit."""
    key = (preload, pythonpath)
    found = _ZYGOTES.get(key)
    if found is None or found.proc.poll() is not None:
        env = None if pythonpath is None else {**os.environ, "PYTHONPATH": pythonpath}
        found = _ZYGOTES[key] = Zygote(preload, env)
    return found


@atexit.register
def _close_all() -> None:
    for made in _ZYGOTES.values():
        made.close()
