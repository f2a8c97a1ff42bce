# ruff: noqa: F811 - ``wiki`` is test_ask's fixture, imported and then requested by name
"""What one answer costs the daemon (issue 25 item 4): its nonce and question rows written in
batches, not a transaction each; the cited sources' texts read once per process and kept by
their hash; and every citation still checked (W8, W11)."""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from affidavit.ask import Asker, texts
from affidavit.ask import answer as answer_module
from affidavit.ask import log as asklog
from affidavit.errors import PlanValidationError
from affidavit.plan.nonce import check_nonce
from affidavit.vault import Vault

from .test_ask import scripted, wiki  # noqa: F401 - the fixture

QUESTION = "Who designed the Eddystone Lighthouse tower?"


class Statements:
    """The statements a connection runs (SQLite's trace callback)."""

    def __init__(self, vault: Vault) -> None:
        self.seen: list[str] = []
        self.lock = threading.Lock()
        vault.db.set_trace_callback(self._add)

    def _add(self, sql: str) -> None:
        with self.lock:
            self.seen.append(" ".join(sql.split()[:2]).upper())

    def writes(self) -> int:
        """Write transactions begun (a read snapshot's plain ``BEGIN`` is not one)."""
        with self.lock:
            return self.seen.count("BEGIN IMMEDIATE")


@pytest.fixture(autouse=True)
def no_timer(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a full batch or a close writes, unless a test says otherwise (a timer firing after
    the test's vault closed would write nothing and log a warning)."""
    monkeypatch.setattr(asklog, "DELAY", 3600.0)


def _log(vault: Vault) -> asklog.AskLog:
    return asklog.AskLog(lambda: contextlib.nullcontext(vault))


def _rows(vault: Vault) -> tuple[int, int]:
    questions = vault.db.execute("SELECT count(*) FROM questions").fetchone()[0]
    nonces = vault.db.execute("SELECT count(*) FROM nonces WHERE purpose = 'ask'").fetchone()[0]
    return int(questions), int(nonces)


def test_an_answer_outside_the_daemon_writes_its_rows_in_one_transaction(
    vault: Vault, wiki: dict[str, str]
) -> None:
    statements = Statements(vault)
    for _ in range(3):
        Asker(vault, None).ask(QUESTION)
    assert statements.writes() == 3  # one per answer (the nonce and the question together)
    assert _rows(vault) == (3, 3)


def test_the_daemons_answers_write_their_rows_in_batches(
    vault: Vault, wiki: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(asklog, "BATCH", 4)
    monkeypatch.setattr(asklog, "DELAY", 3600.0)  # only a full batch or the close writes here
    log = _log(vault)
    statements = Statements(vault)
    for n in range(9):
        answer = Asker(vault, None, log=log).ask(QUESTION)
        assert answer.verdict == "answered"
        assert _rows(vault) == (4 * ((n + 1) // 4),) * 2
    assert statements.writes() == log.writes == 2 and log.pending() == 1
    log.close()
    assert _rows(vault) == (9, 9) and log.writes == 3 and log.pending() == 0
    Asker(vault, None, log=log).ask(QUESTION)  # after the close: written at once
    assert _rows(vault) == (10, 10)


def test_a_waiting_answers_rows_are_written_by_the_timer(
    vault: Vault, wiki: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(asklog, "DELAY", 0.05)
    log = _log(vault)
    lock = threading.Lock()  # the vault's connection: one thread at a time

    @contextlib.contextmanager
    def borrow() -> Any:
        with lock:
            yield vault

    log = asklog.AskLog(borrow)
    with lock:
        Asker(vault, None, log=log).ask(QUESTION)
    done = threading.Event()
    for _ in range(400):  # the timer fires after DELAY; wait for it, up to a generous bound
        with lock:
            if log.pending() == 0:
                done.set()
                break
        done.wait(0.05)
    assert done.is_set() and log.writes == 1
    assert _rows(vault) == (1, 1)


def test_a_nonce_whose_row_is_still_waiting_is_no_plan_nonce(
    vault: Vault, wiki: dict[str, str]
) -> None:
    """The attacker who learnt an answer's nonce (a model that echoes it) can't use it as a
    plan's while it waits: unknown to the vault, it is refused as never issued."""
    seen: list[str] = []

    def reply(nonce: str, text: str) -> dict[str, Any]:
        seen.append(nonce)
        return {"nonce": nonce, "not_in_wiki": True}

    log = _log(vault)
    Asker(vault, scripted(reply), log=log).ask(QUESTION)
    assert len(seen) == 1 and log.pending() == 1
    with pytest.raises(PlanValidationError, match="never issued"):
        check_nonce(vault.db, vault.clock, seen[0], "p-attacker")


def test_an_answers_nonce_once_written_is_still_no_plans(
    vault: Vault, wiki: dict[str, str]
) -> None:
    """Written to the vault's nonces (purpose ``ask``), the nonce the model was shown is still
    refused for a plan, as on PostgreSQL (tests/test_pg_ask.py)."""
    seen: list[str] = []

    def reply(nonce: str, text: str) -> dict[str, Any]:
        seen.append(nonce)
        return {"nonce": nonce, "not_in_wiki": True}

    Asker(vault, scripted(reply)).ask(QUESTION)  # no daemon log: its rows are written at once
    row = vault.db.execute("SELECT purpose FROM nonces WHERE nonce = ?", (seen[0],)).fetchone()
    assert row["purpose"] == "ask"
    with pytest.raises(PlanValidationError, match="never issued"):
        check_nonce(vault.db, vault.clock, seen[0], "p-attacker")


def _counting_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    reads: list[str] = []
    real = texts.read_inside

    def read(root: Any, relpath: str, **kw: Any) -> bytes:
        reads.append(relpath)
        return real(root, relpath, **kw)

    monkeypatch.setattr(texts, "read_inside", read)
    return reads


def test_a_cited_sources_text_is_read_once_and_citations_are_still_checked(
    vault: Vault, wiki: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    texts.forget()
    reads = _counting_reads(monkeypatch)

    def reply(nonce: str, text: str) -> dict[str, Any]:
        return {
            "nonce": nonce,
            "sentences": [
                {
                    "text": "James Douglass designed the present tower.",
                    "claims": [wiki["designed"]],
                },
                {
                    "text": "James Douglass designed the present tower and was convicted of fraud.",
                    "claims": [wiki["designed"]],
                },
            ],
        }

    log = _log(vault)
    for n in range(3):
        answer = Asker(vault, scripted(reply), log=log).ask(QUESTION)
        assert [s.text for s in answer.sentences] == ["James Douglass designed the present tower."]
        assert [d.verdict for d in answer.dropped] == ["unsupported"]
        if n == 0:
            first = list(reads)
    assert reads == first and len(set(first)) == len(first) == 2  # each cited source, once


def test_a_kept_text_is_the_one_its_hash_names_and_a_changed_file_is_never_kept(
    vault: Vault, wiki: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    texts.forget()
    reads = _counting_reads(monkeypatch)
    (text_file,) = vault.db.execute(
        "SELECT text_file FROM sources WHERE id = ?", (wiki["source"],)
    ).fetchone()
    path = Path(vault.root) / text_file
    original = path.read_bytes()
    given = Asker(vault, None).ask(QUESTION).given
    first = answer_module.source_quotes(vault, given)
    assert reads.count(text_file) == 1  # the answer's check read it; the quotes were kept
    # the file changed by hand (doctor reports it): a kept text still shows the source's words
    os.chmod(path, 0o600)
    path.write_bytes(original.replace(b"James Douglass", b"Jimmy Dougless"))
    assert answer_module.source_quotes(vault, given) == first
    assert reads.count(text_file) == 1
    assert any("James Douglass" in q for quotes in first.values() for q in quotes)
    # read for the first time changed: used as read (as before), never kept
    texts.forget()
    for n in range(2):
        answer_module.source_quotes(vault, given)
        assert reads.count(text_file) == 2 + n
    digest = vault.db.execute(
        "SELECT text_sha256 FROM sources WHERE id = ?", (wiki["source"],)
    ).fetchone()[0]
    assert texts._kept(digest) is None


@pytest.mark.skipif(os.geteuid() != 0, reason="runs a daemon as root")
def test_the_daemon_writes_waiting_answers_rows_when_it_stops(tmp_path: Path) -> None:
    """A real daemon (one vault, the default batch): three answers through the socket, and
    every row is in the vault once it has stopped."""
    from affidavit.server.registry import Registry

    from .test_server_authz import make_alpha, private_dir, start_daemon

    base = private_dir("afd-asklog-")
    root = base / "alpha"
    make_alpha(root)
    toml = root / "affidavit.toml"
    toml.write_text(toml.read_text().replace("ask_log_batch = 1\n", "ask_log_batch = 32\n"))
    registry = Registry.open([root])
    try:
        served = registry.get("alpha")
        log = served.ask_log()
        assert log is not None and log.batch == 32
    finally:
        registry.close()
    daemon = start_daemon([root], base)
    try:
        with daemon.unix() as client:
            for question in ("What are the four freedoms?", "Who spoke?", "What is freedom?"):
                response = client.post("/v1/vaults/alpha/ask", json={"question": question})
                assert response.status_code == 200, response.text
    finally:
        assert daemon.stop() == 0
    import sqlite3

    db = sqlite3.connect(root / ".affidavit" / "db.sqlite")
    try:
        assert db.execute("SELECT count(*) FROM questions").fetchone()[0] == 3
        assert db.execute("SELECT count(*) FROM nonces WHERE purpose = 'ask'").fetchone()[0] == 3
    finally:
        db.close()


def test_a_batch_of_one_writes_each_answer_with_it(tmp_path: Path) -> None:
    from affidavit.server.registry import Registry
    from affidavit.vault import init_vault

    vault, _ = init_vault(tmp_path / "v")
    vault.close()
    toml = tmp_path / "v" / "affidavit.toml"
    toml.write_text(toml.read_text().replace("ask_log_batch = 32\n", "ask_log_batch = 1\n"))
    registry = Registry.open([tmp_path / "v"])
    try:
        assert registry.get("v").ask_log() is None
    finally:
        registry.close()
