"""Shared fixtures: a real vault (SQLite file, git repository, files) in a temp dir, a fixed clock."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from affidavit.plan.nonce import issue_nonce
from affidavit.sources.store import SourceStore
from affidavit.vault import Vault, init_vault

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "src" / "affidavit" / "samples"
SHARED_DATA = Path(os.environ.get("AFFIDAVIT_SHARED_DATA", ROOT.parent / "shared" / "data"))
"""The public evaluation data (../shared/data beside the repository, as CI lays it out)."""
if os.environ.get("CI") and not SHARED_DATA.is_dir():
    raise RuntimeError(f"CI needs the shared evaluation data at {SHARED_DATA}")
needs_shared_data = pytest.mark.skipif(
    not SHARED_DATA.is_dir(), reason=f"no shared evaluation data at {SHARED_DATA}"
)


class FakeClock:
    """A clock tests can move forward."""

    def __init__(self, start: datetime | None = None) -> None:
        self.now = start or datetime(2026, 11, 30, 9, 0, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **kwargs: float) -> None:
        self.now += timedelta(**kwargs)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def vault(tmp_path: Path, clock: FakeClock) -> Iterator[Vault]:
    v, _ = init_vault(tmp_path / "vault", clock=clock)
    yield v
    v.close()


def add_text(vault: Vault, name: str, text: str, trust: str = "trusted") -> str:
    """Store ``text`` as a markdown source; returns its id."""
    result = SourceStore(vault).add_bytes(
        text.encode(), origin=f"/test/{name}", name=name, media_type="text/markdown", trust=trust
    )
    return result.record.id


def fresh_nonce(vault: Vault) -> str:
    return issue_nonce(vault.db, vault.clock, "test")


def make_plan(vault: Vault, *ops: dict[str, Any], nonce: str | None = None) -> dict[str, Any]:
    return {"nonce": nonce or fresh_nonce(vault), "operations": list(ops)}


def claim(text: str, source: str, *quotes: str) -> dict[str, Any]:
    return {"text": text, "evidence": [{"source": source, "quote": q} for q in quotes]}


def snapshot(vault: Vault) -> dict[str, Any]:
    """Everything a plan could change: every file of the vault (but the database), every
    database row, and git HEAD."""
    files = {}
    for path in sorted(vault.root.rglob("*")):
        rel = path.relative_to(vault.root)
        if path.is_file() and rel.parts[0] not in (".git", ".affidavit"):
            files[str(rel)] = path.read_bytes()
    db = sqlite3.connect(vault.state_dir / "db.sqlite")
    try:
        rows = list(db.iterdump())
    finally:
        db.close()
    return {"files": files, "db": rows, "head": vault.git.head(), "log": vault.git.log_subjects()}


def sample_plan_text(vault: Vault) -> str:
    text = (SAMPLES / "sotu-plan.json").read_text(encoding="utf-8")
    return text.replace("__NONCE__", fresh_nonce(vault))


def add_samples(vault: Vault) -> list[str]:
    store = SourceStore(vault)
    ids = []
    for name in ("1790-washington.md", "1823-monroe.md", "1941-roosevelt.md"):
        ids.append(store.add_file(SAMPLES / "sotu" / name, trust="trusted").record.id)
    return ids


def dumps(value: Any) -> str:
    return json.dumps(value)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under pytest-xdist (``scripts/test.sh`` runs ``-n auto --dist loadgroup``) every test of a
    module that has a module- or session-scoped fixture (a daemon, a model server, a vault built
    once) runs on one worker, so the fixture is built once, not once per worker; any other test
    goes wherever a worker is free. A test marked ``xdist_group`` keeps its own group."""
    shared: dict[str, bool] = {}
    for item in items:
        group = item.get_closest_marker("xdist_group")
        if group is not None and group.args[:1] == ("postgres",):
            # "postgres" once put every PostgreSQL module on one worker (one cluster, and a
            # third of the suite on one core); each worker has a cluster of its own
            # (tests/pg_cluster.py), so the group is the module's, as any shared fixture's
            module = item.nodeid.split("::", 1)[0]
            item.add_marker(pytest.mark.xdist_group(module), append=False)
            shared[module] = True
            continue
        if group is not None:
            continue
        module = item.nodeid.split("::", 1)[0]
        info = getattr(item, "_fixtureinfo", None)
        defs = info.name2fixturedefs.values() if info is not None else ()
        if any(d[-1].scope in ("module", "package", "session") for d in defs if d):
            shared[module] = True
        if shared.get(module):
            item.add_marker(pytest.mark.xdist_group(module))
    # a module whose first tests use no shared fixture and later ones do: group them all
    for item in items:
        module = item.nodeid.split("::", 1)[0]
        if shared.get(module) and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(module))


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Any]:
    """This worker's PostgreSQL cluster (tests/pg_cluster.py), started by the first test that
    asks for it and stopped at the end of the session; skips with the reason when none can be."""
    from . import pg_cluster as clusters

    try:
        made = clusters.cluster()
    except clusters.Unavailable as exc:
        pytest.skip(str(exc))
    yield made
    clusters.stop()


@pytest.fixture(scope="module")
def pg_url(request: pytest.FixtureRequest, pg_cluster: Any) -> Iterator[str]:
    """A fresh PostgreSQL database for the test module; dropped after it."""
    url = str(pg_cluster.create_database(request.module.__name__.rsplit(".", 1)[-1]))
    yield url
    pg_cluster.drop_database(url)
