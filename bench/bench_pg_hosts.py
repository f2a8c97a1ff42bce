"""Throughput and reads across hosts (issue 26, "Measured"): PostgreSQL on its own host, workers or
daemons each on another, clients on one more — every host a network namespace joined by veth
pairs (tests/netns.py, tests/multihost.py; TCP over the links, password auth).

``jobs``: W = 1, 2, 4 workers (``PgWorker``, what ``affidavit worker --database`` runs), each on
its own host, drain a queue of ``--jobs`` ingest jobs of ``--sources`` one-chunk sources in a
fresh vault per run. The model is the extractive engine behind a provider that sleeps ``--delay``
seconds per call (a slow language model): what several workers overlap is that sleep. The clock
starts once every worker is up and connected (start-up is not timed) and stops when the last
worker found the queue empty and exited. Each run checks its outcome: every job done, one
"applied" audit entry per chunk (no plan twice), batches 1..n with no gap, every chunk's
checkpoint "applied". A sampler counts the backends waiting for a lock (the door's advisory
lock; a job row's lock) every 50 ms.

``reads``: the wiki of bench_pg_serve.py (``--articles`` SQuADShifts articles, the extractive
engine, carried into a PostgreSQL vault through its door); 3 daemons (``affidavit serve
--database … --tcp <its address> --allow-remote --workers 1``), each on its own host; 32 client
threads on a client host (its own links to the daemons' hosts) send the articles' questions,
alternately as ``GET …/search?q=`` and ``POST …/ask``, round robin over the setup's daemons
(1 daemon: the first only; 3 daemons: all), for ``--seconds``; each run starts on the questions
the runs before it did not reach (after a ``--warmup`` on all three daemons), so no run is
answered from what another's questions left in a daemon's memory. p50/p99 per kind and requests
a second.

Every setup runs ``--rounds`` times, the order reversed each round; the load average (1 min) is
recorded before and after each run. The namespaces share the machine's cores: a CPU-bound setup
can't scale with hosts here. Needs root and PostgreSQL 15 with the ``affidavit-pg`` user
(scripts/setup_postgres.sh).

    sudo PYTHONPATH=src .venv/bin/python bench/bench_pg_hosts.py jobs [--jobs 32] [--sources 1]
        [--delay 1.0] [--workers 1,2,4] [--rounds 2]
    sudo PYTHONPATH=src .venv/bin/python bench/bench_pg_hosts.py reads [--articles 12]
        [--clients 32] [--seconds 10] [--rounds 2]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

TEXT = (
    "# Beacon {n}\n\n"
    "The beacon number {n} was painted red and white in the year {year}. "
    "Keepers climbed its {steps} steps every evening to light the lamp. "
    "Ships from the northern ports relied on its beam during the winter storms.\n"
)
PORT = 8765


def load_average() -> float:
    return round(os.getloadavg()[0], 2)


def _env(password: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}:{ROOT}", "PGPASSWORD": password,
            "AFFIDAVIT_DATABASE": ""}  # fmt: skip


def _ready(proc: subprocess.Popen[str], what: str, log: Path) -> str:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line:
        raise RuntimeError(f"{what} ended before it was ready: {log.read_text()[-3000:]}")
    return line


# -- the worker host's process ----------------------------------------------------------------
def worker_main(args: argparse.Namespace) -> None:
    """On a worker host: connect, say ``ready``, wait for ``go`` on stdin, drain the vault's
    queue with a model that sleeps per call, print what it did (JSON)."""
    from affidavit.config import Config
    from affidavit.jobs.pg_worker import PgWorker
    from affidavit.providers.base import Completion, ModelRequest, Provider
    from affidavit.providers.extractive import ExtractiveProvider
    from affidavit.storage.postgres import PostgresStorage

    delay = args.delay

    class Sleepy(Provider):
        name = "extractive"
        supports_schema = True
        reads_prompt = False

        def complete(self, request: ModelRequest) -> Completion:
            time.sleep(delay)
            return ExtractiveProvider().complete(request)

    events: Counter[str] = Counter()
    storage = PostgresStorage(args.url, max_connections=3)
    storage.vaults()  # connected before the clock starts
    print("ready", flush=True)
    sys.stdin.readline()
    began = resource.getrusage(resource.RUSAGE_SELF)
    try:
        PgWorker(
            storage, vaults=[args.vault], config=Config({"policy.auto_apply": "trusted"}),
            provider_for=lambda model: Sleepy(), log=lambda e: events.update([e["event"]]),
            poll_seconds=0.05, lease_seconds=30.0,
        ).run(drain=True)  # fmt: skip
    finally:
        storage.close()
    end = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (end.ru_utime - began.ru_utime) + (end.ru_stime - began.ru_stime)
    from affidavit.support import parse

    print(json.dumps({"events": dict(events), "cpu_s": round(cpu, 2),
                      "parser_loaded": bool(parse._NLP)}), flush=True)  # fmt: skip


def server_cpu(data: Path) -> float:
    """CPU seconds of the PostgreSQL server so far: the postmaster, its backends that ended
    (reaped: its children's time) and those still running."""
    postmaster = int((data / "postmaster.pid").read_text().split()[0])

    total = process_cpu(postmaster)
    for child in Path(f"/proc/{postmaster}/task/{postmaster}/children").read_text().split():
        with contextlib.suppress(FileNotFoundError):  # ended (and reaped) between the reads
            total += process_cpu(int(child))
    return total


def process_cpu(pid: int) -> float:
    """CPU seconds of process ``pid`` so far, its reaped children's included."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = sum(int(f) for f in fields[11:15])  # utime, stime, cutime, cstime
    return ticks / os.sysconf("SC_CLK_TCK")


class Waits:
    """Samples every 50 ms the backends waiting for a lock — the door's advisory lock, any other
    (a job row's, a transaction's) — and whether the door's lock is held at all."""

    def __init__(self, url: str) -> None:
        import psycopg

        from affidavit.storage.postgres import LOCK_CLASS

        self.lock_class = LOCK_CLASS
        self.conn = psycopg.connect(url, autocommit=True)
        self.samples: list[tuple[int, int, int]] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.stop.wait(0.05):
            row = self.conn.execute(
                "SELECT count(*) FILTER (WHERE NOT granted AND locktype = 'advisory'), "
                "count(*) FILTER (WHERE NOT granted AND locktype <> 'advisory'), "
                "count(*) FILTER (WHERE granted AND locktype = 'advisory' AND classid = %s) "
                "FROM pg_locks",
                (self.lock_class,),
            ).fetchone()
            assert row is not None
            self.samples.append((int(row[0]), int(row[1]), int(row[2])))

    def __enter__(self) -> Waits:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()
        self.conn.close()

    def summary(self) -> dict[str, float]:
        n = max(1, len(self.samples))
        return {
            "door_held_share": round(sum(1 for _, _, c in self.samples if c) / n, 2),
            "door_waiting_mean": round(sum(a for a, _, _ in self.samples) / n, 2),
            "door_waited_share": round(sum(1 for a, _, _ in self.samples if a) / n, 2),
            "other_lock_waited_share": round(sum(1 for _, b, _ in self.samples if b) / n, 2),
        }


def jobs_run(net: Any, db: Any, tmp: Path, workers: int, tag: str,
             args: argparse.Namespace) -> dict[str, Any]:  # fmt: skip
    from tests import multihost

    from affidavit.jobs.payloads import StoredIngestPayload
    from affidavit.storage.postgres import PostgresStorage
    from affidavit.storage.postgres_jobs import PostgresJobStore

    storage = PostgresStorage(db.url("team"))
    vault = f"jobs_{tag}"
    storage.create_vault(vault, "ann")
    queue = PostgresJobStore(storage)
    n = 0
    for _ in range(args.jobs):
        ids = []
        for _ in range(args.sources):
            text = TEXT.format(n=n, year=1700 + n, steps=100 + n)
            ids.append(storage.add_source(
                vault, text.encode(), origin=f"/b/{n}.md", name=f"beacon-{n}.md",
                added_at="2026-12-07T00:00:00Z", trust="trusted",
            ))  # fmt: skip
            n += 1
        queue.enqueue(vault, StoredIngestPayload(sources=ids).model_dump(mode="json"), "ann")
    procs = []
    for h in range(workers):
        host = f"w{h + 1}"
        argv = net.argv(host, [sys.executable, __file__, "worker", "--url",
                               db.tcp_url(host, "team"), "--vault", vault, "--delay",
                               str(args.delay)])  # fmt: skip
        log = tmp / f"{tag}-{host}.log"
        with log.open("wb") as err:
            procs.append((host, log, subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True,
                env=_env(db.password), preexec_fn=multihost.die_with_parent,
            )))  # fmt: skip
    for host, log, proc in procs:
        _ready(proc, f"the worker on {host}", log)
    load_before = load_average()
    cpu_before = server_cpu(db.data)
    with Waits(db.url("team")) as waits:
        started = time.perf_counter()
        for _, _, proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        outs = {}
        for host, log, proc in procs:
            out, _ = proc.communicate(timeout=3600)
            assert proc.returncode == 0, log.read_text()[-3000:]
            outs[host] = json.loads(out.strip().splitlines()[-1])
        wall = time.perf_counter() - started
    cpu_server = server_cpu(db.data) - cpu_before
    load_after = load_average()
    # the outcome
    rows = queue.jobs(vault)
    assert all(r.status == "done" for r in rows), Counter(r.status for r in rows)
    applied = [e.plan_id for e in storage.audit(vault) if e.action == "applied"]
    assert len(applied) == len(set(applied)) == n, (len(applied), len(set(applied)), n)
    batches = storage.batches(vault)  # each checked against its audit entries as it is read
    assert [b.seq for b in batches] == list(range(1, n + 1))
    assert sorted(p for b in batches for p in b.plans) == sorted(p or "" for p in applied)
    with storage.pool.connection() as conn:
        outcomes = Counter(str(r["outcome"]) for r in conn.execute(
            f"SELECT outcome FROM v_{vault}.ingested_chunks").fetchall())  # fmt: skip
    assert outcomes == {"applied": n}, outcomes
    assert storage.verify_audit(vault) == []
    storage.close()
    return {
        "workers": workers, "chunks": n, "wall_s": round(wall, 2),
        "chunks_per_s": round(n / wall, 3),
        "jobs_per_worker": [outs[h]["events"].get("done", 0) for h in sorted(outs)],
        "worker_cpu_s": round(sum(o["cpu_s"] for o in outs.values()), 1),
        "workers_that_loaded_the_parser": sum(1 for o in outs.values() if o["parser_loaded"]),
        "postgres_cpu_s": round(cpu_server, 1),
        **waits.summary(), "load_before": load_before, "load_after": load_after,
        "checked": "all jobs done; one applied entry per chunk; batches 1..n; audit chain ok",
    }  # fmt: skip


def jobs_main(args: argparse.Namespace) -> dict[str, Any]:
    from tests import multihost, netns

    counts = [int(w) for w in args.workers.split(",")]
    hosts = [f"w{h + 1}" for h in range(max(counts))]
    runs: dict[int, list[dict[str, Any]]] = {w: [] for w in counts}
    with netns.Network("bhj", hosts) as net, tempfile.TemporaryDirectory() as tmp:
        db = multihost.start_database(net)
        try:
            for r in range(args.rounds):
                order = counts if r % 2 == 0 else list(reversed(counts))
                for w in order:
                    got = jobs_run(net, db, Path(tmp), w, f"{w}_{r}", args)
                    print(json.dumps(got), file=sys.stderr, flush=True)
                    runs[w].append(got)
        finally:
            db.stop()
    for r in range(args.rounds):
        base = runs[counts[0]][r]["chunks_per_s"]
        for w in counts:
            runs[w][r]["speedup"] = round(runs[w][r]["chunks_per_s"] / base, 2)
    return {"delay_s": args.delay, "jobs": args.jobs, "sources": args.sources,
            "runs": {str(w): v for w, v in runs.items()}}  # fmt: skip


# -- reads --------------------------------------------------------------------------------------
def clients_main(args: argparse.Namespace) -> None:
    """On the client host: ``--clients`` threads, each alternating search and ask, round robin
    over ``--targets``, for ``--seconds``; prints latencies (ms) per kind and the rate (JSON)."""
    import httpx

    targets = args.targets.split(",")
    questions = json.loads(Path(args.questions).read_text())
    times: dict[str, list[float]] = {"search": [], "ask": []}
    errors: Counter[str] = Counter()
    lock = threading.Lock()
    start = threading.Barrier(args.clients + 1)
    stop = [0.0]

    def client(n: int) -> None:
        mine: dict[str, list[float]] = {"search": [], "ask": []}
        bad: Counter[str] = Counter()
        headers = {"Authorization": f"Bearer {args.token}"}
        with httpx.Client(headers=headers, timeout=120) as http:
            start.wait()
            i, step = n, 0  # request i of all: its daemon and question; half of each asks
            while time.monotonic() < stop[0]:
                base = f"http://{targets[i % len(targets)]}/v1/vaults/main"
                q = questions[(args.offset + i) % len(questions)]
                kind = "search" if (step + n) % 2 == 0 else "ask"
                step += 1
                began = time.perf_counter()
                if kind == "search":
                    got = http.get(f"{base}/search", params={"q": q, "k": 10})
                else:
                    got = http.post(f"{base}/ask", json={"question": q})
                mine[kind].append((time.perf_counter() - began) * 1000)
                if got.status_code != 200:
                    bad[f"{kind} {got.status_code}"] += 1
                i += args.clients
        with lock:
            for kind, got_times in mine.items():
                times[kind].extend(got_times)
            errors.update(bad)

    threads = [threading.Thread(target=client, args=(n,)) for n in range(args.clients)]
    for t in threads:
        t.start()
    stop[0] = time.monotonic() + args.seconds
    began = time.monotonic()
    start.wait()
    for t in threads:
        t.join()
    took = time.monotonic() - began
    out: dict[str, Any] = {"rps": round(sum(len(v) for v in times.values()) / took, 1),
                           "errors": dict(errors)}  # fmt: skip
    for kind, got_times in times.items():
        ms = sorted(got_times)
        out[kind] = {"n": len(ms), "rps": round(len(ms) / took, 1),
                     "p50_ms": round(statistics.median(ms), 1) if ms else None,
                     "p99_ms": round(ms[int(0.99 * (len(ms) - 1))], 1) if ms else None}  # fmt: skip
    print(json.dumps(out), flush=True)


def _wiki(db: Any, work: Path, articles_count: int) -> tuple[list[str], str, int]:
    """The wiki in vault ``main``; the questions, a read token, the active claims."""
    from bench_pgmirror import articles, carry

    from affidavit.ingest.pipeline import Ingestor
    from affidavit.providers.extractive import ExtractiveProvider
    from affidavit.service.pg_vaults import PgVault
    from affidavit.storage.postgres import PostgresStorage
    from affidavit.vault import init_vault

    docs, qas = articles(articles_count, work)
    vault, _ = init_vault(work / "vault")
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(docs)], "trusted")
    storage = PostgresStorage(db.url("team"))
    storage.create_vault("main", "bench")
    carry(vault, storage)
    claims = int(vault.db.execute(
        "SELECT count(*) FROM claims WHERE status = 'active' AND page_slug != ''").fetchone()[0])  # fmt: skip
    vault.close()
    _, token = PgVault(storage, "main").create_token("read", timedelta(days=1), "bench", "bench")
    storage.close()
    return [q for q, _ in qas], token, claims


def reads_main(args: argparse.Namespace) -> dict[str, Any]:
    import httpx
    from tests import multihost, netns

    daemons = ["d1", "d2", "d3"]
    result: dict[str, Any] = {"articles": args.articles, "clients": args.clients,
                              "seconds": args.seconds}  # fmt: skip
    with netns.Network("bhr", [*daemons, "client"]) as net, \
            tempfile.TemporaryDirectory() as tmp_name:  # fmt: skip
        tmp = Path(tmp_name)
        db = multihost.start_database(net)
        procs: list[subprocess.Popen[bytes]] = []
        try:
            addresses = multihost.client_links(net, "client", daemons)
            questions, token, result["claims"] = _wiki(db, tmp, args.articles)
            (tmp / "questions.json").write_text(json.dumps(questions))
            for host in daemons:
                run = tmp / f"run-{host}"
                run.mkdir(mode=0o700)
                argv = net.argv(host, [
                    sys.executable, "-c", "from affidavit.cli import main; main()", "serve",
                    "--database", db.tcp_url(host, "team"), "--socket", str(run / "s.sock"),
                    "--tcp", f"{addresses[host]}:{PORT}", "--allow-remote", "--workers", "1",
                ])  # fmt: skip
                with (tmp / f"{host}.log").open("wb") as err:
                    procs.append(subprocess.Popen(
                        argv, stdout=subprocess.DEVNULL, stderr=err, env=_env(db.password),
                        preexec_fn=multihost.die_with_parent))  # fmt: skip
                transport = httpx.HTTPTransport(uds=str(run / "s.sock"))

                def healthy(transport: httpx.HTTPTransport = transport, host: str = host) -> bool:
                    assert procs[-1].poll() is None, (tmp / f"{host}.log").read_text()
                    try:
                        with httpx.Client(transport=transport, base_url="http://a") as c:
                            return c.get("/v1/health").status_code == 200
                    except httpx.HTTPError:
                        return False

                multihost.until(healthy, f"the daemon on {host}", 300)
            setups = {"1 daemon": daemons[:1], "3 daemons": daemons}

            asked = [0]  # questions sent so far: each run starts on questions not yet asked

            def clients(targets: list[str], count: int, seconds: float) -> dict[str, Any]:
                argv = net.argv("client", [
                    sys.executable, __file__, "clients", "--targets",
                    ",".join(f"{addresses[h]}:{PORT}" for h in targets), "--token", token,
                    "--questions", str(tmp / "questions.json"), "--clients", str(count),
                    "--seconds", str(seconds), "--offset", str(asked[0]),
                ])  # fmt: skip
                done = subprocess.run(argv, capture_output=True, text=True, timeout=3600,
                                      env=_env(""), check=False)  # fmt: skip
                assert done.returncode == 0, done.stderr[-3000:]
                got: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
                got["first_question"] = asked[0]
                asked[0] += got["search"]["n"] + got["ask"]["n"]
                return got

            # every daemon's first requests (imports, the answerer's tables), not measured
            clients(daemons, args.clients, args.warmup)
            runs: dict[str, list[dict[str, Any]]] = {name: [] for name in setups}
            for r in range(args.rounds):
                order = list(setups) if r % 2 == 0 else list(reversed(setups))
                for name in order:
                    before = load_average()
                    cpu = [sum(process_cpu(p.pid) for p in procs), server_cpu(db.data),
                           resource.getrusage(resource.RUSAGE_CHILDREN)]  # fmt: skip
                    got = clients(setups[name], args.clients, args.seconds)
                    spent = resource.getrusage(resource.RUSAGE_CHILDREN)
                    n = max(1, got["search"]["n"] + got["ask"]["n"])
                    got["cpu_ms_per_request"] = {
                        "daemons": round(
                            (sum(process_cpu(p.pid) for p in procs) - cpu[0]) * 1000 / n, 1),
                        "postgres": round((server_cpu(db.data) - cpu[1]) * 1000 / n, 1),
                        "clients": round((spent.ru_utime + spent.ru_stime - cpu[2].ru_utime
                                          - cpu[2].ru_stime) * 1000 / n, 1),
                    }  # fmt: skip
                    got |= {"load_before": before, "load_after": load_average()}
                    print(json.dumps({name: got}), file=sys.stderr, flush=True)
                    runs[name].append(got)
            result["runs"] = runs
        finally:
            for proc in procs:
                proc.terminate()
            for proc in procs:
                proc.wait(timeout=120)
            db.stop()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    jobs = sub.add_parser("jobs", help="W workers on W hosts drain a queue")
    jobs.add_argument("--jobs", type=int, default=32)
    jobs.add_argument("--sources", type=int, default=1, help="one-chunk sources per job")
    jobs.add_argument("--delay", type=float, default=1.0, help="the model's seconds per call")
    jobs.add_argument("--workers", default="1,2,4")
    jobs.add_argument("--rounds", type=int, default=2)
    reads = sub.add_parser("reads", help="search and ask on 1 and 3 daemons, 3 hosts")
    reads.add_argument("--articles", type=int, default=12)
    reads.add_argument("--clients", type=int, default=32)
    reads.add_argument("--seconds", type=float, default=10.0)
    reads.add_argument("--warmup", type=float, default=20.0)
    reads.add_argument("--rounds", type=int, default=2)
    worker = sub.add_parser("worker", help="(on a worker host: started by `jobs`)")
    worker.add_argument("--url", required=True)
    worker.add_argument("--vault", required=True)
    worker.add_argument("--delay", type=float, required=True)
    client = sub.add_parser("clients", help="(on the client host: started by `reads`)")
    for name in ("--targets", "--token", "--questions"):
        client.add_argument(name, required=True)
    client.add_argument("--clients", type=int, required=True)
    client.add_argument("--seconds", type=float, required=True)
    client.add_argument("--offset", type=int, default=0, help="the first question")
    args = parser.parse_args()
    if args.command == "worker":
        worker_main(args)
        return
    if args.command == "clients":
        clients_main(args)
        return
    from tests import netns

    why = netns.unavailable()
    if why:
        raise SystemExit(f"bench_pg_hosts: {why}")
    result = jobs_main(args) if args.command == "jobs" else reads_main(args)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
