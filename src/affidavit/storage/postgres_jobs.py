"""The job-queue contract (:mod:`affidavit.storage.jobs`) on PostgreSQL: each vault's ``jobs``
table (migration ``pg002_jobs``), claimed by any number of workers on any hosts at once.

A claim is one transaction: ``SELECT … FOR UPDATE SKIP LOCKED`` takes the oldest job that is
queued, or running with an expired lease, that no other claim in flight has locked (two workers
never wait on, nor take, the same row); the row's ``fence`` goes up by one and a new secret is
drawn. Leases expire by the database's clock (``clock_timestamp()``), so hosts' clocks don't
matter. Every later write names the job, its fence and its secret in its ``WHERE`` clause: a
worker whose claim is no longer current changes no row and gets :class:`~.jobs.LeaseLost`.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from typing import Any

from psycopg import sql

from ..errors import ConflictError, NotFoundError
from ..jobs.payloads import parse_payload
from .base import check_text
from .jobs import (
    Claim,
    JobRecord,
    check_attempts,
    check_lease,
    lost,
    result_json,
    well_formed,
)
from .postgres import Conn, PostgresStorage, _q

ISO = '\'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"\''
CLAIMABLE = "status = 'queued' OR (status = 'running' AND lease_expires_at <= clock_timestamp())"


def _event(conn: Conn, schema: str, job_id: str, type_: str, data: Mapping[str, Any]) -> None:
    conn.execute(
        _q("INSERT INTO {s}.job_events (job_id, type, data) VALUES (%s, %s, %s)", schema),
        (job_id, type_, json.dumps(dict(data), ensure_ascii=False, sort_keys=True)),
    )


class PostgresJobStore:
    """The queues of the vaults of one PostgreSQL database (``storage``'s pool)."""

    backend = "postgresql"

    def __init__(self, storage: PostgresStorage) -> None:
        self.storage = storage

    def close(self) -> None:
        self.storage.close()

    def _schema(self, vault: str) -> str:
        return self.storage._vault(vault)[1]

    def enqueue(
        self,
        vault: str,
        payload: Mapping[str, Any],
        requested_by: str,
        *,
        max_attempts: int = 3,
    ) -> str:
        schema = self._schema(vault)
        typed = parse_payload(payload)
        check_attempts(max_attempts)
        job_id = "job-" + secrets.token_hex(6)
        text = json.dumps(typed.model_dump(mode="json"), sort_keys=True)
        with self.storage._tx() as conn:
            conn.execute(
                _q("INSERT INTO {s}.jobs (id, kind, status, payload, requested_by, max_attempts) "
                   "VALUES (%s, %s, 'queued', %s, %s, %s)", schema),
                (job_id, typed.kind, text, check_text("requested_by", requested_by), max_attempts),
            )  # fmt: skip
            _event(conn, schema, job_id, "submitted",  # as on SQLite (jobs/models.py EVENT_TYPES)
                   {"kind": typed.kind, "requested_by": requested_by})  # fmt: skip
        return job_id

    def claim(self, vault: str, owner: str, lease_seconds: float) -> Claim | None:
        schema = self._schema(vault)
        check_text("owner", owner)
        seconds = check_lease(lease_seconds)
        with self.storage._tx() as conn:
            while True:
                row = conn.execute(
                    _q(f"SELECT id, status, attempts, max_attempts, lease_owner, "
                       f"cancel_requested_by FROM {{s}}.jobs "
                       f"WHERE {CLAIMABLE} ORDER BY n LIMIT 1 FOR UPDATE SKIP LOCKED", schema)
                ).fetchone()  # fmt: skip
                if row is None:
                    return None
                if row["cancel_requested_by"] is not None:  # its worker died before it stopped
                    self._end(conn, schema, str(row["id"]), "cancelled",
                              error=f"cancelled by {row['cancel_requested_by']}")  # fmt: skip
                    continue
                if row["status"] == "running" and row["attempts"] >= row["max_attempts"]:
                    self._give_up(conn, schema, row)
                    continue  # the next job, in the same transaction
                token = secrets.token_hex(16)
                got = conn.execute(
                    _q("UPDATE {s}.jobs SET status = 'running', attempts = attempts + 1, "
                       "fence = fence + 1, lease_token = %s, lease_owner = %s, "
                       "lease_expires_at = clock_timestamp() + make_interval(secs => %s), "
                       "heartbeat_at = clock_timestamp(), "
                       "started_at = coalesce(started_at, clock_timestamp()) "
                       "WHERE id = %s RETURNING fence, attempts", schema),
                    (token, owner, seconds, row["id"]),
                ).fetchone()  # fmt: skip
                assert got is not None, "the row is locked by this transaction"
                _event(
                    conn,
                    schema,
                    row["id"],
                    "started",
                    {"attempt": got["attempts"], "fence": got["fence"], "worker": owner},
                )
                return Claim(
                    vault, str(row["id"]), int(got["fence"]), token, owner, int(got["attempts"])
                )

    def _give_up(self, conn: Conn, schema: str, row: Mapping[str, Any]) -> None:
        error = (
            f"gave up after {row['attempts']} attempt(s): the worker running it "
            f"({row['lease_owner']}) let its lease expire each time before it finished. "
            "Look at the workers' logs, then submit the job again."
        )
        self._end(conn, schema, str(row["id"]), "failed", error=error)

    def _end(
        self,
        conn: Conn,
        schema: str,
        job_id: str,
        status: str,
        *,
        error: str = "",
        result: str | None = None,
    ) -> None:
        conn.execute(
            _q("UPDATE {s}.jobs SET status = %s, error = %s, result = coalesce(%s, result), "
               "finished_at = clock_timestamp(), lease_token = NULL, lease_owner = NULL, "
               "lease_expires_at = NULL WHERE id = %s", schema),
            (status, error, result, job_id),
        )  # fmt: skip
        _event(conn, schema, job_id, status, {"error": error} if error else {})

    def _fenced(self, conn: Conn, claim: Claim, sets: str, params: tuple[Any, ...]) -> str:
        """Run ``UPDATE jobs SET <sets>`` on the claim's job only if the claim is current (job,
        fence and secret, still running); else :class:`LeaseLost`. Returns the schema."""
        if not well_formed(claim):
            raise lost(claim, None)
        schema = self._schema(claim.vault)
        changed = conn.execute(
            sql.SQL("UPDATE {t} SET ").format(t=sql.Identifier(schema, "jobs"))
            + sql.SQL(sets)
            + sql.SQL(
                " WHERE id = %s AND fence = %s AND lease_token = %s AND status = 'running' "
                "RETURNING id"
            ),
            (*params, claim.job_id, claim.fence, claim.token),
        ).fetchone()
        if changed is None:
            now = conn.execute(
                _q("SELECT status, fence FROM {s}.jobs WHERE id = %s", schema), (claim.job_id,)
            ).fetchone()
            raise lost(claim, now)
        return schema

    def renew(self, claim: Claim, lease_seconds: float) -> None:
        seconds = check_lease(lease_seconds)
        with self.storage._tx() as conn:
            self._fenced(
                conn,
                claim,
                "lease_expires_at = clock_timestamp() + make_interval(secs => %s), "
                "heartbeat_at = clock_timestamp()",
                (seconds,),
            )

    def progress(self, claim: Claim, done: int, total: int, message: str) -> None:
        text = check_text("message", message)[:500]
        with self.storage._tx() as conn:
            schema = self._fenced(
                conn,
                claim,
                "progress_done = %s, progress_total = %s, progress_message = %s",
                (int(done), int(total), text),
            )
            _event(conn, schema, claim.job_id, "progress",
                   {"done": done, "total": total, "message": text})  # fmt: skip

    def _finish(self, claim: Claim, status: str, *, error: str = "", result: str | None) -> None:
        with self.storage._tx() as conn:
            # a no-op SET: the fenced UPDATE checks the claim and locks the row until commit
            schema = self._fenced(conn, claim, "lease_token = lease_token", ())
            self._end(conn, schema, claim.job_id, status, error=error, result=result)

    def held(self, conn: Conn, claim: Claim) -> str | None:
        """In the caller's transaction (a write the job makes to the wiki): check that ``claim``
        is the job's current one and lock its row until that transaction ends, so no other
        worker can claim the job meanwhile (claims skip a locked row); :class:`LeaseLost` if
        not. Returns who asked to cancel the job, or None."""
        if not well_formed(claim):
            raise lost(claim, None)
        schema = self._schema(claim.vault)
        row = conn.execute(
            _q("SELECT cancel_requested_by FROM {s}.jobs WHERE id = %s AND fence = %s "
               "AND lease_token = %s AND status = 'running' FOR SHARE", schema),
            (claim.job_id, claim.fence, claim.token),
        ).fetchone()  # fmt: skip
        if row is None:
            now = conn.execute(
                _q("SELECT status, fence FROM {s}.jobs WHERE id = %s", schema), (claim.job_id,)
            ).fetchone()
            raise lost(claim, now)
        return None if row["cancel_requested_by"] is None else str(row["cancel_requested_by"])

    def cancel(self, vault: str, job_id: str, actor: str) -> str:
        """Cancel a job: a queued one at once, a running one by asking its worker to stop (it
        does at its next chunk; a worker that died meanwhile leaves it to the next claim, which
        ends it). Returns the job's status after; a finished job is refused."""
        schema = self._schema(vault)
        with self.storage._tx() as conn:
            row = conn.execute(
                _q("SELECT status FROM {s}.jobs WHERE id = %s FOR UPDATE", schema),
                (check_text("job id", job_id),),
            ).fetchone()
            if row is None:
                raise NotFoundError(
                    f"no job {job_id[:40]!r} in vault {vault}; GET …/jobs lists them."
                )
            status = str(row["status"])
            if status in ("done", "failed", "cancelled"):
                raise ConflictError(f"job {job_id} is already {status}; nothing to cancel.")
            by = check_text("actor", actor)
            if status == "queued":
                self._end(conn, schema, job_id, "cancelled", error=f"cancelled by {by}")
                return "cancelled"
            conn.execute(
                _q("UPDATE {s}.jobs SET cancel_requested_by = coalesce(cancel_requested_by, %s) "
                   "WHERE id = %s", schema),
                (by, job_id),
            )  # fmt: skip
            _event(conn, schema, job_id, "cancel_requested", {"actor": by})
            return "running"

    def release(self, claim: Claim, reason: str) -> None:
        """Give the claim's job back to the queue (its worker is stopping): another worker
        claims it at once, with a new fence; :class:`LeaseLost` if the claim is not current."""
        with self.storage._tx() as conn:
            schema = self._fenced(
                conn, claim, "status = 'queued', lease_token = NULL, lease_owner = NULL, "
                "lease_expires_at = NULL", (),
            )  # fmt: skip
            _event(conn, schema, claim.job_id, "requeued", {"reason": check_text("reason", reason)})

    def rows(
        self, vault: str, job_id: str | None = None, limit: int = 100, status: str | None = None
    ) -> list[dict[str, Any]]:
        """The jobs' rows as stored (every column, timestamps as ISO text), newest first — only
        those with ``status`` when given — or the one ``job_id`` names; what the daemon shows
        (:mod:`affidavit.service.pg_jobs`)."""
        schema = self._schema(vault)
        where, params = ("WHERE id = %s", (check_text("job id", job_id),)) if job_id else ("", ())
        if status is not None and not job_id:
            where, params = "WHERE status = %s", (check_text("job status", status),)
        with self.storage._tx() as conn:
            found = conn.execute(
                _q(f"SELECT *, to_char(created_at AT TIME ZONE 'UTC', {ISO}) AS created, "
                   f"to_char(started_at AT TIME ZONE 'UTC', {ISO}) AS started, "
                   f"to_char(finished_at AT TIME ZONE 'UTC', {ISO}) AS finished, "
                   f"to_char(heartbeat_at AT TIME ZONE 'UTC', {ISO}) AS heartbeat, "
                   f"to_char(lease_expires_at AT TIME ZONE 'UTC', {ISO}) AS lease_until "
                   f"FROM {{s}}.jobs {where} ORDER BY n DESC LIMIT %s", schema),
                (*params, max(1, min(int(limit), 1000))),
            ).fetchall()  # fmt: skip
        return [dict(r) for r in found]

    def resolve(self, vault: str, ref: str) -> str:
        """The full id of the job ``ref`` names: its id, or a unique prefix (with or without
        ``job-``) of at least 4 characters, as on SQLite (:meth:`JobQueue.resolve`)."""
        ref = check_text("job id", ref).strip().lower()[:64]
        bare = ref.removeprefix("job-")
        if len(bare) < 4:
            raise NotFoundError(f"job id {ref!r} is too short; give at least 4 characters.")
        schema = self._schema(vault)
        with self.storage._tx() as conn:  # starts_with: a prefix, never a LIKE pattern
            found = conn.execute(
                _q("SELECT id FROM {s}.jobs WHERE starts_with(id, %s) OR starts_with(id, %s) "
                   "ORDER BY id LIMIT 2", schema),
                (ref, "job-" + bare),
            ).fetchall()  # fmt: skip
        if not found:
            raise NotFoundError(
                f"no job {ref!r} in vault {vault}; `affidavit jobs` (GET …/jobs) lists them."
            )
        if len(found) > 1:
            raise NotFoundError(f"job id {ref!r} is ambiguous; give more characters.")
        return str(found[0]["id"])

    def events(
        self, vault: str, job_id: str, after_seq: int = 0, limit: int = 1000
    ) -> list[dict[str, Any]]:
        """The job's events with ``seq`` greater than ``after_seq``, oldest first (``at`` as ISO
        text, ``data`` as stored JSON text): what SQLite's ``job_events`` holds."""
        schema = self._schema(vault)
        with self.storage._tx() as conn:
            found = conn.execute(
                _q(f"SELECT seq, job_id, to_char(at AT TIME ZONE 'UTC', {ISO}) AS at, type, data "
                   "FROM {s}.job_events WHERE job_id = %s AND seq > %s ORDER BY seq LIMIT %s",
                   schema),
                (check_text("job id", job_id), int(after_seq), max(1, min(int(limit), 1000))),
            ).fetchall()  # fmt: skip
        return [dict(r) for r in found]

    def cancelled(self, claim: Claim, by: str) -> None:
        """End the claim's job as cancelled (its worker stopped at a cancel request)."""
        self._finish(claim, "cancelled", error=f"cancelled by {by}", result=None)

    def complete(self, claim: Claim, result: Mapping[str, Any]) -> None:
        self._finish(claim, "done", result=check_text("result", result_json(result)))

    def fail(self, claim: Claim, error: str) -> None:
        self._finish(claim, "failed", error=check_text("error", error) or "failed", result=None)

    def recover(self, vault: str) -> list[str]:
        schema = self._schema(vault)
        recovered = []
        with self.storage._tx() as conn:
            rows = conn.execute(
                _q("SELECT id, attempts, max_attempts, lease_owner FROM {s}.jobs "
                   "WHERE status = 'running' AND lease_expires_at <= clock_timestamp() "
                   "ORDER BY n FOR UPDATE SKIP LOCKED", schema)
            ).fetchall()  # fmt: skip
            for row in rows:
                recovered.append(str(row["id"]))
                if row["attempts"] >= row["max_attempts"]:
                    self._give_up(conn, schema, row)
                    continue
                conn.execute(
                    _q("UPDATE {s}.jobs SET status = 'queued', lease_token = NULL, "
                       "lease_owner = NULL, lease_expires_at = NULL WHERE id = %s", schema),
                    (row["id"],),
                )  # fmt: skip
                reason = f"the lease of {row['lease_owner']} expired during attempt "
                _event(
                    conn, schema, row["id"], "requeued", {"reason": reason + str(row["attempts"])}
                )
        return recovered

    def _records(self, vault: str, where: str, params: tuple[Any, ...]) -> list[JobRecord]:
        schema = self._schema(vault)
        with self.storage._tx() as conn:
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            rows = conn.execute(
                _q(f"SELECT * FROM {{s}}.jobs {where} ORDER BY n", schema), params
            ).fetchall()
            events = conn.execute(
                _q(f"SELECT job_id, type FROM {{s}}.job_events WHERE job_id IN "
                   f"(SELECT id FROM {{s}}.jobs {where}) ORDER BY seq", schema), params,
            ).fetchall()  # fmt: skip
        kinds: dict[str, list[str]] = {}
        for event in events:
            kinds.setdefault(str(event["job_id"]), []).append(str(event["type"]))
        return [
            JobRecord(
                id=str(row["id"]),
                kind=str(row["kind"]),
                status=str(row["status"]),
                payload=json.loads(row["payload"]),
                attempts=int(row["attempts"]),
                max_attempts=int(row["max_attempts"]),
                fence=int(row["fence"]),
                owner=row["lease_owner"],
                progress=(
                    int(row["progress_done"]),
                    int(row["progress_total"]),
                    str(row["progress_message"]),
                ),
                result=json.loads(row["result"]) if row["result"] else None,
                error=str(row["error"]),
                events=tuple(kinds.get(str(row["id"]), ())),
            )
            for row in rows
        ]

    def job(self, vault: str, job_id: str) -> JobRecord | None:
        found = self._records(vault, "WHERE id = %s", (check_text("job id", job_id),))
        return found[0] if found else None

    def jobs(self, vault: str) -> list[JobRecord]:
        return self._records(vault, "", ())
