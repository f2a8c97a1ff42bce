"""The storage contract on PostgreSQL 15+ through psycopg 3 and a psycopg_pool connection pool.

Several vaults per database, a schema each (``v_<name>``), listed in ``affidavit.vaults`` whose
``id`` is the vault's advisory-lock key. The door's step (:meth:`PostgresStorage.door`) is one
transaction that first takes ``pg_advisory_xact_lock(LOCK_CLASS, <vault id>)`` — held until the
transaction ends, whoever's connection, whichever host — then re-checks each plan (W5) and writes
it, and seals the batch with the next number from the vault's ``batch_counter`` row, updated in
the same transaction: a batch that rolls back (an error, a killed backend) takes its number with
it, so the sequence has no gaps and numbers commit in order. (A BIGSERIAL would not do: sequence
values are handed out outside transactions and commit out of order, so a reader of "id > last"
skips rows.) Every value is a bound parameter; schema names are validated and quoted by
``sql.Identifier``. Needs the ``[postgres]`` extra; nothing imports this module on a plain install.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, cast

import psycopg
from psycopg import sql
from psycopg.rows import dict_row

from ..agents import is_agent
from ..errors import ConflictError, IntegrityError
from ..hashing import canonical_json
from ..store import audit as auditlog
from .base import (
    VAULT_NAME,
    AuditEntry,
    BatchRecord,
    PlanRow,
    check_batch_id,
    check_text,
    check_vault_name,
    group_batches,
    recheck,
)
from .content import ClaimRecord, PageRecord, SourceRecord
from .pg_migrations import REGISTRY, VAULT
from .pg_pool import FailFastPool

if TYPE_CHECKING:  # the gate is imported when a plan is applied, not with the module
    from ..config import Config
    from ..gate.verdicts import Admission, Held
    from ..sources.sanitizer import Flag
    from ..store.parts import Parts
    from ..support import SupportChecker

NOTHING_SURE = "nothing of it goes in without a person; it waits in the inbox"
LOCK_CLASS = 0x4166  # "Af": the first key of Affidavit's advisory locks; the second is the vault
MIGRATION_KEY = 0  # (LOCK_CLASS, 0): migrations and vault creation; vault ids start at 1
REGISTRY_SCHEMA = "affidavit"

Conn = psycopg.Connection[dict[str, Any]]


def _q(text: str, schema: str) -> sql.Composed:
    return sql.SQL(text).format(s=sql.Identifier(schema))


def _apply_migrations(conn: Conn, schema: str, migrations: list[tuple[str, str]]) -> list[str]:
    conn.execute(_q("CREATE SCHEMA IF NOT EXISTS {s}", schema))
    conn.execute(
        _q("CREATE TABLE IF NOT EXISTS {s}._migrations (name TEXT PRIMARY KEY, applied_at "
           "TIMESTAMPTZ NOT NULL DEFAULT now())", schema)
    )  # fmt: skip
    done = {r["name"] for r in conn.execute(_q("SELECT name FROM {s}._migrations", schema))}
    applied = []
    for name, script in migrations:
        if name in done:
            continue
        conn.execute(_q(script, schema))
        conn.execute(_q("INSERT INTO {s}._migrations (name) VALUES (%s)", schema), (name,))
        applied.append(f"{schema}.{name}")
    return applied


def _registered(conn: Conn) -> list[str]:
    """The registry's vault names that :func:`check_vault_name` accepts. A row written past this
    module (by hand in psql, by a tampered dump) names no schema: a migration never creates
    ``v_<anything>`` for it, and the daemon's registry reports it as refused and serves the rest."""
    rows = conn.execute(_q("SELECT name FROM {s}.vaults ORDER BY id", REGISTRY_SCHEMA))
    return [n for r in rows if isinstance(n := r["name"], str) and VAULT_NAME.fullmatch(n)]


def _plan(conn: Conn, schema: str, plan_id: str) -> PlanRow | None:
    row = conn.execute(
        _q("SELECT id, author, origin, status, expires_at FROM {s}.plans WHERE id = %s", schema),
        (check_text("plan id", plan_id),),
    ).fetchone()
    return None if row is None else PlanRow(**row)


def _agents_plans(conn: Conn, schema: str) -> list[str]:
    """The pending plans that hold a slug and are agents' (:func:`affidavit.agents.is_agent`)."""
    rows = conn.execute(
        _q("SELECT p.id, p.author, p.origin FROM {s}.slug_reservations r JOIN {s}.plans p "
           "ON p.id = r.plan_id", schema)
    ).fetchall()  # fmt: skip
    return [str(r["id"]) for r in rows if is_agent(str(r["author"]), str(r["origin"]))]


def _creates(plan_json: str) -> list[str]:
    """The slugs a recorded plan creates (none if it doesn't parse: the door refuses it)."""
    from ..errors import PlanValidationError
    from ..plan.schema import CreatePage, parse_plan

    try:
        plan = parse_plan(plan_json)
    except PlanValidationError:
        return []
    return [op.slug for op in plan.operations if isinstance(op, CreatePage)]


def insert_plan(
    conn: Conn,
    schema: str,
    plan_id: str,
    *,
    author: str,
    origin: str,
    plan_json: str,
    created_at: str,
    expires_at: str,
) -> None:
    """Record a pending plan and reserve the slugs it creates, in the caller's transaction
    (:meth:`PostgresStorage.propose`; an ingest job's fenced write, :mod:`affidavit.jobs.pg_ingest`)."""
    values = (plan_id, author, origin, plan_json, created_at, expires_at)
    names = ("plan id", "author", "origin", "plan", "created_at", "expires_at")
    for field, value in zip(names, values, strict=True):
        check_text(field, value)
    conn.execute(
        _q("INSERT INTO {s}.plans (id, author, origin, plan_json, status, admission, "
           "created_at, expires_at) VALUES (%s, %s, %s, %s, 'pending', '{{}}', %s, %s)",
           schema),
        values,
    )  # fmt: skip
    person = not is_agent(author, origin)
    for slug in _creates(plan_json):
        # the first pending plan keeps a slug (W5), but a person's plan takes one an
        # agent's plan holds (W13: the owner's work goes first), as on SQLite
        conn.execute(
            _q("INSERT INTO {s}.slug_reservations AS r (slug, plan_id) VALUES (%s, %s) "
               "ON CONFLICT (slug) DO UPDATE SET plan_id = excluded.plan_id "
               "WHERE %s AND r.plan_id = ANY(%s)", schema),
            (slug, plan_id, person, _agents_plans(conn, schema)),
        )  # fmt: skip


class NothingSure(ConflictError):
    """An approval that takes only what needs no person (the policy, ``approve --all --yes``)
    found nothing of the plan that does: the plan waits for a person, unchanged."""


class PostgresDoor:
    """The door's step on PostgreSQL, inside the transaction that holds the vault's lock."""

    def __init__(self, conn: Conn, schema: str, batch_id: str) -> None:
        self.conn = conn
        self.schema = schema
        self.batch_id = check_batch_id(batch_id)
        self.applied: list[str] = []
        self.sealed: int | None = None
        self.admissions: dict[str, Admission] = {}

    @property
    def backend_pid(self) -> int:
        """The server process of this transaction (what ``pg_terminate_backend`` takes)."""
        return int(self.conn.info.backend_pid)

    def _x(self, text: str, params: tuple[Any, ...] = ()) -> psycopg.Cursor[dict[str, Any]]:
        return self.conn.execute(_q(text, self.schema), params)

    def plan(self, plan_id: str) -> PlanRow | None:
        return _plan(self.conn, self.schema, plan_id)

    def mark_applied(
        self, plan_id: str, *, now: str, actor: str, detail: Mapping[str, Any]
    ) -> AuditEntry:
        if self.sealed is not None:
            raise ConflictError(f"batch {self.batch_id} is sealed; open a new one.")
        recheck(self.plan(plan_id), plan_id, now)
        self._x(
            "UPDATE {s}.plans SET status = 'applied', decided_at = %s, decided_by = %s "
            "WHERE id = %s",
            (check_text("time", now), check_text("actor", actor), plan_id),
        )
        self._x("DELETE FROM {s}.slug_reservations WHERE plan_id = %s", (plan_id,))
        entry = self._append(now, "applied", plan_id, actor, {**detail, "batch": self.batch_id})
        self.applied.append(plan_id)
        return entry

    def apply_plan(
        self,
        plan_id: str,
        *,
        now: str,
        actor: str,
        config: Config | None = None,
        approval: str = "person",
        support: SupportChecker | None = None,
        ops: Sequence[int] | None = None,
        sure_only: bool = False,
    ) -> AuditEntry:
        """Apply the recorded plan in this batch through the gate, as SQLite's door does:
        re-check it (W5), admit it again against the vault as it is now, under the lock
        (:func:`affidavit.gate.admission.admit` reading through :mod:`.postgres_gate`: targets
        and slug reservations; evidence found by the one verifier, with case, whitespace, NFKC,
        emphasis and sentence citations as on SQLite; support W11, provenance, sanitizer flags,
        trust, consistency, policy), write what it admitted (:mod:`.postgres_content`), then
        record it applied like :meth:`mark_applied`. ``approval``: ``"person"`` writes every
        passing claim and text (uncertain and quarantined ones too, which a person approves by
        approving the plan); ``"policy"`` applies the plan only if the policy (``config``'s
        ``policy.auto_apply``, W13 for agents) lets it in without a person, and refuses it
        otherwise: it stays pending. The policy — and a person's approval given unseen,
        ``sure_only`` (``approve --all --yes``) — writes each operation's *sure* part only, as
        SQLite's door does (:func:`affidavit.store.parts.choose`): the texts that wait for a
        person (W11: uncertain, quarantined, leaning on one that waits) stay with the plan as its
        pending remainder (``plans.held``), which a person approves or rejects later; when
        nothing is sure, :class:`NothingSure` (nothing written). ``ops``: the operations
        (0-based) a person approves now, as ``affidavit approve --ops`` selects them; the others
        stay pending (approvable until the plan expires), and the plan is applied once every
        operation is decided and nothing of it is held. The gate's verdicts are in
        :attr:`admissions`."""
        from ..config import Config
        from ..errors import AdmissionError
        from ..evidence import Verifier
        from ..gate.admission import admit
        from ..gate.verdicts import Held
        from ..plan.schema import CreatePage, UpdateContext
        from ..store.batch import held_json
        from . import postgres_context as context
        from .postgres_content import (
            WRITABLE,
            ContentWriter,
            applied_ops,
            held_ops,
            load_plan,
            selection,
        )
        from .postgres_gate import PgReads, PgSources

        if approval not in ("person", "policy"):
            raise ConflictError(f"approval {approval!r} is not 'person' or 'policy'.")
        if self.sealed is not None:
            raise ConflictError(f"batch {self.batch_id} is sealed; open a new one.")
        if ops is not None and approval != "person":
            raise ConflictError(
                "only a person approves some operations of a plan; the policy takes it whole."
            )
        sure_only = sure_only or approval == "policy"
        row = recheck(self.plan(plan_id), plan_id, now)
        plan = load_plan(self.conn, self.schema, plan_id)
        done, decided = applied_ops(self.conn, self.schema, plan_id)
        held = held_ops(self.conn, self.schema, plan_id)
        chosen = selection(plan_id, plan, decided, ops, held, sure_only=sure_only)
        if not chosen:
            raise NothingSure(f"plan {plan_id[:12]}: {NOTHING_SURE}")
        for index in chosen:
            op = plan.operations[index]
            if not isinstance(op, WRITABLE):
                raise ConflictError(
                    f"plan {plan_id[:12]}: operation {index + 1} ({op.op}) can't be applied on "
                    "PostgreSQL (docs/storage.md): apply it on a SQLite vault."
                )
        sources = PgSources(self.conn, self.schema)
        agent = is_agent(row.author, row.origin)
        config = config or Config()
        try:
            admission = admit(
                PgReads(self.conn, self.schema), config, sources, Verifier(sources),
                plan, plan_id, chosen, applying=True, support=support, agent=agent,
                remainder={i: h for i, h in held.items() if i in chosen},
            )  # fmt: skip
        except AdmissionError as exc:
            raise ConflictError(
                f"plan {plan_id[:12]} no longer fits the wiki: {exc} Reject it and propose anew."
            ) from exc
        self.admissions[plan_id] = admission
        if not admission.admitted_ops:
            why = "; ".join(f"op {op.index + 1}: {op.reason}" for op in admission.ops)
            raise ConflictError(f"nothing in plan {plan_id[:12]} passes the gate now: {why}")
        self._refuse_grown(plan_id, admission)
        if approval == "policy" and admission.needs_approval:
            raise ConflictError(
                f"plan {plan_id[:12]} waits for a person: {admission.policy_reason}"
            )
        parts = _parts(admission, held, sure_only)
        if not parts.ops:
            raise NothingSure(f"plan {plan_id[:12]}: {NOTHING_SURE}")
        with self.conn.transaction():  # a savepoint: the plan's part whole, or nothing of it
            writer = ContentWriter(
                self.conn, self.schema, plan_id, check_text("time", now), sources, self._append
            )
            if any(isinstance(plan.operations[i], UpdateContext) for i in parts.ops):
                context.snapshot(self.conn, self.schema, plan_id, now)  # W6: context.md as it was
            summary = writer.write(plan, admission, parts)
            archived = (
                context.spill(self.conn, self.schema, plan_id, now, config.context_max_lines)
                if writer.context_changed
                else []
            )
            failing = set(chosen) - set(admission.admitted_ops)  # decided: not left pending
            done = sorted({*done, *parts.ops})
            decided = sorted({*decided, *failing, *parts.ops})
            left = {i: h for i, h in held.items() if i not in parts.ops and i not in failing}
            for i, h in parts.held.items():  # what waits, with the ids its operation wrote
                left[i] = Held(h.claims, h.texts, tuple(writer.claims_by_op.get(i, [])),
                               writer.headings.get(i, True))  # fmt: skip
            remaining = sorted(
                {*(i for i in range(len(plan.operations)) if i not in decided), *left}
            )
            self._x(
                "UPDATE {s}.plans SET admission = %s, selected_ops = %s, decided_ops = %s, "
                "held = %s WHERE id = %s",
                (self._admission_json(plan_id, admission, parts.remainder), json.dumps(done),
                 json.dumps(decided), held_json(left), plan_id),
            )  # fmt: skip
            detail = {
                "ops": summary,
                "claims": writer.claim_ids,
                "approval": approval,
                **({"pending_ops": remaining} if remaining else {}),
                **({"superseded": writer.superseded} if writer.superseded else {}),
                **({"retracted": writer.retracted} if writer.retracted else {}),
                **({"archived": archived} if archived else {}),
            }
            if not remaining:
                return self.mark_applied(plan_id, now=now, actor=actor, detail=detail)
            for slug in [op.slug for i in parts.ops
                         if isinstance(op := plan.operations[i], CreatePage)]:  # fmt: skip
                self._x(
                    "DELETE FROM {s}.slug_reservations WHERE plan_id = %s AND slug = %s",
                    (plan_id, slug),
                )
            entry = self._append(now, "applied", plan_id, actor, {**detail, "batch": self.batch_id})
            self.applied.append(plan_id)
            return entry

    def _admission_json(
        self, plan_id: str, admission: Admission, remainder: Mapping[int, Held]
    ) -> str:
        """The plan's verdicts: ``admission``'s, merged into those of its earlier partial
        approvals (as SQLite's door merges them, :func:`affidavit.store.parts.merged`; for an
        operation completing an earlier apply, ``remainder``, only its held parts)."""
        from ..gate.verdicts import Admission
        from ..store.parts import merged

        row = self._x("SELECT admission FROM {s}.plans WHERE id = %s", (plan_id,)).fetchone()
        stored = json.loads(str(row["admission"])) if row else {}
        if stored:
            admission = merged(Admission.from_json(stored), admission, remainder)
        return canonical_json(admission.to_json())

    def _append(
        self, at: str, action: str, plan_id: str | None, actor: str, detail: Mapping[str, Any]
    ) -> AuditEntry:
        """:func:`affidavit.store.audit.append` on PostgreSQL: the same chain and hashes."""
        last = self._x("SELECT seq, hash FROM {s}.audit ORDER BY seq DESC LIMIT 1").fetchone()
        seq = int(last["seq"]) + 1 if last else 1
        prev = str(last["hash"]) if last else auditlog.GENESIS
        text = canonical_json(dict(detail))
        digest = auditlog.entry_hash(seq, at, action, plan_id, actor, text, prev)
        self._x(
            "INSERT INTO {s}.audit (seq, at, action, plan_id, actor, detail, prev_hash, hash) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
            (seq, at, action, plan_id, actor, text, prev, digest),
        )
        return AuditEntry(seq, at, action, plan_id, actor, text, prev, digest)

    def _refuse_grown(self, plan_id: str, admission: Admission) -> None:
        """W5 for retractions, as SQLite's door (:func:`affidavit.store.door_plan.
        refuse_grown_retractions`): a retraction that would take out claims now that the
        radius recorded with the plan (what the person was shown) did not is refused."""
        from ..gate.verdicts import Admission as Verdicts
        from ..store.door_plan import refuse_grown_retractions

        row = self._x("SELECT admission FROM {s}.plans WHERE id = %s", (plan_id,)).fetchone()
        recorded = json.loads(str(row["admission"]) or "{}") if row else {}
        if isinstance(recorded, dict) and "ops" in recorded:
            refuse_grown_retractions(plan_id, Verdicts.from_json(recorded), admission)

    def seal(self) -> int:
        if self.sealed is not None:
            return self.sealed
        if not self.applied:
            raise ConflictError("a batch that applied no plan has no number; apply a plan first.")
        row = self._x("UPDATE {s}.batch_counter SET last = last + 1 RETURNING last").fetchone()
        assert row is not None, "batch_counter has its one row from pg001_batch_sequence"
        seq = int(row["last"])
        upto = self._x("SELECT max(seq) AS upto FROM {s}.audit").fetchone()
        try:
            self._x(
                "INSERT INTO {s}.batches (seq, batch_id, plans, audit_upto) "
                "VALUES (%s, %s, %s, %s)",
                (seq, self.batch_id, json.dumps(self.applied), int(upto["upto"]) if upto else 0),
            )
        except psycopg.errors.UniqueViolation:
            raise ConflictError(
                f"batch {self.batch_id} is already recorded; use a new batch id."
            ) from None
        self.sealed = seq
        return seq


class PostgresStorage:
    """Vaults in one PostgreSQL database, reached through a connection pool."""

    backend = "postgresql"

    def __init__(
        self,
        url: str,
        *,
        max_connections: int = 8,
        timeout: float = 60.0,
        fail_after: float | None = None,
    ) -> None:
        """``timeout``: how long a caller waits for a busy pool's connection; with
        ``fail_after`` (the daemon's request paths), a database that doesn't answer is
        ``PoolTimeout`` after that many seconds instead (:class:`FailFastPool`)."""
        self.pool = FailFastPool(
            url,
            fail_after=fail_after,
            min_size=1,
            max_size=max_connections,
            kwargs={"autocommit": True, "row_factory": dict_row},
            check=FailFastPool.check_connection,  # a terminated backend is replaced
            timeout=timeout,
            open=True,
            name="affidavit",
        )
        self._ids: dict[str, int] = {}

    def close(self) -> None:
        self.pool.close()

    @contextmanager
    def _tx(self) -> Iterator[Conn]:
        with self.pool.connection() as conn, conn.transaction():
            yield conn

    def _vault(self, name: str) -> tuple[int, str]:
        """The vault's lock key and schema; a vault not in the registry is refused."""
        check_vault_name(name)
        if name not in self._ids:
            with self._tx() as conn:
                row = conn.execute(
                    _q("SELECT id FROM {s}.vaults WHERE name = %s", REGISTRY_SCHEMA), (name,)
                ).fetchone()
            if row is None:
                raise ConflictError(
                    f"no vault {name!r} in this database; create it first "
                    "(PostgresStorage.create_vault)."
                )
            self._ids[name] = int(row["id"])
        return self._ids[name], f"v_{name}"

    def migrate(self) -> list[str]:
        with self._tx() as conn:
            conn.execute(
                "SELECT pg_advisory_xact_lock(%s::int4, %s::int4)", (LOCK_CLASS, MIGRATION_KEY)
            )
            applied = _apply_migrations(conn, REGISTRY_SCHEMA, REGISTRY)
            for name in _registered(conn):
                applied += _apply_migrations(conn, f"v_{name}", VAULT)
        return applied

    def create_vault(self, name: str, owner: str) -> None:
        check_vault_name(name)
        with self._tx() as conn:
            conn.execute(
                "SELECT pg_advisory_xact_lock(%s::int4, %s::int4)", (LOCK_CLASS, MIGRATION_KEY)
            )
            _apply_migrations(conn, REGISTRY_SCHEMA, REGISTRY)
            conn.execute(
                _q("INSERT INTO {s}.vaults (name, owner) VALUES (%s, %s) "
                   "ON CONFLICT (name) DO NOTHING", REGISTRY_SCHEMA),
                (name, check_text("owner", owner)),
            )  # fmt: skip
            _apply_migrations(conn, f"v_{name}", VAULT)

    def vaults(self) -> list[str]:
        with self._tx() as conn:
            exists = conn.execute("SELECT to_regclass('affidavit.vaults') AS t").fetchone()
            if exists is None or exists["t"] is None:
                return []
            return _registered(conn)

    def propose(
        self,
        vault: str,
        plan_id: str,
        *,
        author: str,
        origin: str,
        plan_json: str,
        created_at: str,
        expires_at: str,
    ) -> None:
        _, schema = self._vault(vault)
        with self._tx() as conn:
            insert_plan(conn, schema, plan_id, author=author, origin=origin,
                        plan_json=plan_json, created_at=created_at, expires_at=expires_at)  # fmt: skip

    def plan(self, vault: str, plan_id: str) -> PlanRow | None:
        _, schema = self._vault(vault)
        with self._tx() as conn:
            return _plan(conn, schema, plan_id)

    @contextmanager
    def door(self, vault: str, batch_id: str) -> Iterator[PostgresDoor]:
        key, schema = self._vault(vault)
        with self._tx() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s::int4, %s::int4)", (LOCK_CLASS, key))
            door = PostgresDoor(conn, schema, batch_id)
            # every page, claim and link this transaction writes names its batch (pg006)
            conn.execute("SELECT set_config('affidavit.batch', %s, true)", (door.batch_id,))
            yield door
            if door.applied and door.sealed is None:
                door.seal()

    def committed(self, vault: str, batch_id: str) -> int | None:
        _, schema = self._vault(vault)
        with self._tx() as conn:
            row = conn.execute(
                _q("SELECT seq FROM {s}.batches WHERE batch_id = %s", schema), (batch_id,)
            ).fetchone()
        return None if row is None else int(row["seq"])

    def audit(self, vault: str) -> list[AuditEntry]:
        _, schema = self._vault(vault)
        with self._tx() as conn:
            rows = conn.execute(_q("SELECT * FROM {s}.audit ORDER BY seq", schema)).fetchall()
        return [AuditEntry.of(row) for row in rows]

    def batches(self, vault: str, after: int = 0) -> list[BatchRecord]:
        """The batches above ``after``, each checked against its "applied" audit entries (the
        same plans, in order, contiguous): a mismatch or a gap is an :class:`IntegrityError`."""
        _, schema = self._vault(vault)
        with self._tx() as conn:
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            rows = conn.execute(
                _q("SELECT seq, batch_id, plans FROM {s}.batches WHERE seq > %s ORDER BY seq",
                   schema), (after,),
            ).fetchall()  # fmt: skip
            start = conn.execute(
                _q("SELECT audit_upto FROM {s}.batches WHERE seq = %s", schema), (after,)
            ).fetchone()
            entries = conn.execute(
                _q("SELECT * FROM {s}.audit WHERE action = 'applied' AND seq > %s ORDER BY seq",
                   schema), (int(start["audit_upto"]) if start else 0,),
            ).fetchall()  # fmt: skip
        groups = group_batches([AuditEntry.of(e) for e in entries])
        if len(groups) != len(rows):
            raise IntegrityError(
                f"vault {vault}: {len(rows)} batch(es) above {after} but the audit log has "
                f"{len(groups)}; restore the database from a backup."
            )
        out = []
        for expected, row, (batch_id, group) in zip(
            range(after + 1, after + 1 + len(rows)), rows, groups, strict=True
        ):
            record = BatchRecord(int(row["seq"]), str(row["batch_id"]), tuple(group))
            if record.seq != expected:
                raise IntegrityError(
                    f"vault {vault}: batch {expected} is missing from the sequence"
                )
            if batch_id != record.batch_id or list(record.plans) != json.loads(row["plans"]):
                raise IntegrityError(
                    f"vault {vault}: batch {record.seq} ({record.batch_id}) does not match its "
                    "audit entries; restore the database from a backup."
                )
            out.append(record)
        return out

    def add_source(
        self,
        vault: str,
        data: bytes,
        *,
        origin: str,
        name: str,
        added_at: str,
        text: str | None = None,
        media_type: str = "text/plain",
        trust: str = "semi-trusted",
        flags: list[Flag] | None = None,
        text_map: dict[str, Any] | None = None,
    ) -> str:
        """Store a source's bytes under their SHA-256 (the same bytes are one source); returns
        the id. ``text``, ``flags`` and ``text_map``: its extracted text, its flags and how the
        text's offsets map to the original (pages of a PDF…); given neither text nor flags, a
        markdown or plain text is extracted here as on SQLite (``sources.extract``: hidden inline
        HTML and comments flagged, W12), any other type read as UTF-8 and scanned."""
        from ..sources.extract import MARKDOWN, PLAIN, extract
        from .postgres_content import add_source

        if text is None and flags is None and media_type in (MARKDOWN, PLAIN):
            # W12 as on SQLite: what a renderer hides in markdown (inline HTML a style hides, a
            # comment) is flagged by extraction, not only by the sanitizer's scan of the text
            extracted = extract(data, media_type, render=False)
            text, flags = extracted.text, extracted.flags
        key, schema = self._vault(vault)
        with self._tx() as conn:
            # the door's lock: a source's version is the next of its origin's (issue 27)
            conn.execute("SELECT pg_advisory_xact_lock(%s::int4, %s::int4)", (LOCK_CLASS, key))
            return add_source(
                conn, schema, data, text=text, origin=origin, name=name,
                media_type=media_type, trust=trust, added_at=added_at, flags=flags,
                text_map=text_map,
            )  # fmt: skip

    def source(self, vault: str, source_id: str) -> SourceRecord:
        from .postgres_content import source_record, source_row

        _, schema = self._vault(vault)
        with self._tx() as conn:
            return source_record(source_row(conn, schema, check_text("source id", source_id)))

    def source_bytes(self, vault: str, source_id: str) -> bytes:
        """The source's original bytes, re-hashed against its id (an altered byte is refused)."""
        from .postgres_content import checked_source, source_row

        _, schema = self._vault(vault)
        with self._tx() as conn:
            return checked_source(source_row(conn, schema, check_text("source id", source_id)))[0]

    def source_text(self, vault: str, source_id: str) -> str:
        """The source's extracted text; its bytes and text re-hashed first."""
        from .postgres_content import checked_source, source_row

        _, schema = self._vault(vault)
        with self._tx() as conn:
            return checked_source(source_row(conn, schema, check_text("source id", source_id)))[1]

    def page(self, vault: str, slug: str) -> PageRecord | None:
        """The page with its claims in order and their evidence, every quote checked against
        its source's (re-hashed) text at its offsets; None when there is no such page."""
        from .postgres_content import read_page

        _, schema = self._vault(vault)
        with self._tx() as conn:
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            return read_page(conn, schema, check_text("slug", slug))

    def context(self, vault: str) -> tuple[ClaimRecord, ...]:
        """The context's active entries in order, with their evidence, checked as a page's."""
        from .postgres_content import read_context

        _, schema = self._vault(vault)
        with self._tx() as conn:
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            return read_context(conn, schema)

    def context_snapshots(self, vault: str) -> list[tuple[str, str]]:
        """Every stored ``context.md`` (W6) as (plan id, content), oldest first: each is the
        context as it was before that plan changed it."""
        _, schema = self._vault(vault)
        with self._tx() as conn:
            rows = conn.execute(
                _q("SELECT plan_id, content FROM {s}.context_snapshots ORDER BY id", schema)
            ).fetchall()
        return [(str(r["plan_id"]), str(r["content"])) for r in rows]

    def verify_audit(self, vault: str) -> list[str]:
        _, schema = self._vault(vault)
        with self._tx() as conn:
            conn.execute(
                "SELECT set_config('search_path', %s, true)",
                (sql.Identifier(schema).as_string(conn),),
            )
            # the one chain check (store/audit.py) reads rows by column name, as dict_row gives
            return auditlog.verify_chain(cast(Any, conn))


def _parts(admission: Admission, held: Mapping[int, Held], sure_only: bool) -> Parts:
    """What the door writes of a plan now, as SQLite's door chooses it
    (:func:`affidavit.store.parts.choose`): a person's approval, every admitted operation whole
    (an operation completing an earlier apply, only its held part); an approval that takes only
    what needs no person, each sure operation's sure part, its waiting texts held."""
    from ..gate.verdicts import held_parts
    from ..store.parts import Parts

    passing = set(admission.admitted_ops)
    if not sure_only:
        remainder = {i: h for i, h in held.items() if i in passing}
        return Parts(tuple(admission.admitted_ops), {}, remainder)
    sure = [op for op in admission.ops if op.sure and op.index not in held]
    return Parts(
        tuple(op.index for op in sure), {op.index: p for op in sure if (p := held_parts(op))}
    )
