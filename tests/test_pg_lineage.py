"""A changed file re-ingested on PostgreSQL never states both facts (issue 26, issue 27 item 1):
a worker's ingest of a new version carries the claims whose quotes still verify, holds the
model's claims of the changed words for one lineage proposal that retires the old claim in the
same decision, and proposes retractions for text gone (jobs/pg_lineage.py), as SQLite's ingest
does (tests/test_lineage_decision.py).

Found by reproducing the SQLite walk on PostgreSQL: ``team add --ingest``, ``worker --drain``,
``approve --all --yes``, the note edited ("two minutes" → "three minutes"), ``team add --ingest``
and ``worker --drain`` again: the new version's chunk plan went in beside the old claim and
``ask`` cited both; nothing was carried and nothing proposed."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from affidavit.providers.base import Completion, ModelRequest, Provider
from affidavit.providers.extractive import ExtractiveProvider

from .test_lineage_decision import NEW, OLD, TEA
from .test_pg_jobs import Team

pytestmark = pytest.mark.xdist_group("postgres")


def sent(text: str) -> list[dict[str, str]]:
    return [{"name": "tea.md", "text": text, "trust": "trusted"}]


@pytest.fixture
def team(pg_url: str) -> Iterator[Team]:
    made = Team(pg_url)
    yield made
    made.close()


def green(team: Team) -> set[str]:
    """What the wiki's active claims say green tea's steeping time is."""
    out: set[str] = set()
    for row in team.q("SELECT text FROM {s}.claims WHERE status = 'active' AND text LIKE %s",
                      "%reen%"):  # fmt: skip
        out |= {w for w in ("two minutes", "three minutes", "one minute") if w in row["text"]}
    return out


def plans(team: Team, origin: str) -> list[dict[str, Any]]:
    return team.q(
        "SELECT id, status, plan_json FROM {s}.plans WHERE origin LIKE %s ORDER BY created_at",
        origin,
    )


def approve(team: Team, plan_id: str) -> None:
    team.registry.get("team").service.approve(plan_id, None, "ann")


def ingest(team: Team, text: str, provider: Provider | None = None) -> dict[str, Any]:
    job = team.submit(sent(text))
    assert team.worker(provider).run(drain=True) >= 1
    done = dict(team.call("GET", f"/jobs/{job['id']}", "read").json())
    assert done["status"] == "done", done
    return done


def test_a_trusting_policy_applies_nothing_of_the_changed_fact(team: Team) -> None:
    """The policy applies the chunk plans at once (``auto_apply = trusted``): the carry goes in,
    the changed fact waits with the supersession; approving it states only the new fact."""
    ingest(team, TEA)
    assert green(team) == {"two minutes"}
    black = team.q("SELECT id FROM {s}.claims WHERE text LIKE %s", "%Black tea%")
    done = ingest(team, TEA.replace(OLD, NEW))
    assert green(team) == {"two minutes"}  # never both
    (lineage,) = [s["lineage"] for s in done["result"]["sources"]]
    assert lineage["carried"] >= 2 and lineage["supersede_proposals"] >= 1, lineage
    carry = plans(team, "lineage:carry:%")
    assert [p["status"] for p in carry] == ["applied"]
    # the unchanged sentences' claims now rest on the new version, their words unchanged
    new_id = team.q("SELECT id FROM {s}.sources WHERE version = 2")[0]["id"]
    rows = team.q("SELECT source_id FROM {s}.evidence WHERE claim_id = %s", black[0]["id"])
    assert {r["source_id"] for r in rows} == {new_id}
    (proposal,) = plans(team, "lineage:" + new_id[:12])
    assert proposal["status"] == "pending"
    ops = json.loads(proposal["plan_json"])["operations"]
    assert {op["op"] for op in ops} == {"supersede_claim"}
    assert all("three minutes" in op["by"]["text"] for op in ops)
    approve(team, proposal["id"])
    assert green(team) == {"three minutes"}


def test_deleted_text_gets_a_retraction(team: Team) -> None:
    """A sentence deleted: its claim gets a ``retract_claim`` proposal naming the old words;
    the other claims are carried."""
    ingest(team, TEA)
    ingest(team, TEA.replace(OLD + "\n", ""))
    (pending,) = [p for p in plans(team, "lineage:%") if p["status"] == "pending"]
    ops = json.loads(pending["plan_json"])["operations"]
    assert ops and {op["op"] for op in ops} == {"retract_claim"}, ops
    assert all("is no longer in it" in op["reason"] for op in ops)
    assert green(team) == {"two minutes"}  # until a person decides
    approve(team, pending["id"])
    assert green(team) == set()
    assert team.q("SELECT count(*) AS n FROM {s}.claims WHERE status = 'active' AND text LIKE %s",
                  "%Black tea%")[0]["n"] >= 1  # fmt: skip


def test_a_worker_killed_before_the_proposals_committed_leaves_them_to_the_next(
    team: Team, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Worker A dies (no cleanup) in the transaction proposing the version's changes, after it
    carried and read: nothing of the proposals stays. Worker B re-claims the job once A's lease
    expired: it carries nothing again, asks no chunk again, proposes once; the new fact still
    only with the old one's end (its words the new version's own: A's held claim is gone with
    A)."""
    from affidavit.jobs.pg_ingest import PgIngest
    from affidavit.jobs.pg_lineage import MARK

    from .test_pg_jobs import Crash, until

    ingest(team, TEA)
    job = team.submit(sent(TEA.replace(OLD, NEW)))
    real = PgIngest._mark

    def dying(self: PgIngest, conn: Any, record: Any, start: int, outcome: str) -> None:
        real(self, conn, record, start, outcome)
        if start == MARK:  # the proposals and their marker written, not committed
            raise Crash()

    monkeypatch.setattr(PgIngest, "_mark", dying)
    with pytest.raises(Crash):
        team.worker(lease_seconds=0.5).run_once()
    monkeypatch.setattr(PgIngest, "_mark", real)
    assert green(team) == {"two minutes"}
    assert [p["status"] for p in plans(team, "lineage:carry:%")] == ["applied"]
    assert [p for p in plans(team, "lineage:%") if p["status"] == "pending"] == []
    until(lambda: team.worker(lease_seconds=60).run_once(), "A's lease to expire")
    done = team.call("GET", f"/jobs/{job['id']}", "read").json()
    assert done["status"] == "done" and done["attempts"] == 2, done
    assert [p["status"] for p in plans(team, "lineage:carry:%")] == ["applied"]
    pending = [p["id"] for p in plans(team, "lineage:%") if p["status"] == "pending"]
    assert len(pending) == 1
    assert green(team) == {"two minutes"}
    approve(team, pending[0])
    assert green(team) == {"three minutes"}


class Attacker(Provider):
    """The extractive engine on a first version; on a new version, a model that writes the
    changed fact on a page of its own and in context.md, quoting the new words."""

    name = "scripted"
    supports_schema = True
    reads_prompt = False

    def __init__(self) -> None:
        self.inner = ExtractiveProvider()
        self.asked = 0

    def complete(self, request: ModelRequest) -> Completion:
        task = request.task
        assert task is not None
        self.asked += 1
        claim = {"text": "Green tea steeps for three minutes.",
                 "evidence": [{"source": task.source_id, "quote": NEW.rstrip(".")}]}  # fmt: skip
        plan = {"nonce": task.nonce, "summary": "tea", "operations": [
            {"op": "create_page", "slug": "steeping", "title": "Steeping", "category": "topics",
             "claims": [claim]},
            {"op": "update_context", "mode": "append", "entries": [claim]},
        ]}  # fmt: skip
        return Completion(text=json.dumps(plan), model="scripted")


def test_the_attackers_changed_fact_elsewhere_waits_for_the_supersession(team: Team) -> None:
    ingest(team, TEA)
    model = Attacker()
    ingest(team, TEA.replace(OLD, NEW), model)
    assert model.asked >= 1  # the changed text was read
    assert green(team) == {"two minutes"}
    (proposal,) = [p for p in plans(team, "lineage:%") if p["status"] == "pending"]
    bys = [op.get("by") for op in json.loads(proposal["plan_json"])["operations"]]
    assert {"text": "Green tea steeps for three minutes."}.items() <= (bys[0] or {}).items()
    approve(team, proposal["id"])
    assert green(team) == {"three minutes"}


def test_the_cli_path_never_states_both_facts(pg_url: str, tmp_path: Path) -> None:
    """What a user runs: ``team add --ingest``, ``worker --drain``, ``approve --all --yes``,
    edit, again, ``ask``; then the lineage plan approved by id."""
    from affidavit.cli import main

    from .pg_cluster import drop_vaults

    drop_vaults(pg_url)
    env = {"AFFIDAVIT_NO_DAEMON": "1", "AFFIDAVIT_DATABASE": pg_url}

    def run(*args: str) -> str:
        result = CliRunner().invoke(main, list(args), env=env)
        assert result.exit_code == 0, (args, result.output, result.exception)
        return result.output

    note = tmp_path / "tea.md"
    note.write_text(TEA)
    run("team", "create", "tea", "--owner", "ann")
    for text in (TEA, TEA.replace(OLD, NEW)):
        note.write_text(text)
        run("team", "add", "tea", str(note), "--trust", "trusted", "--ingest")
        run("worker", "--vault", "tea", "--drain")
        run("approve", "--all", "--yes", "--vault", "tea")
    answer = run("ask", "--vault", "tea", "How long is green tea steeped?")
    assert OLD in answer and NEW not in answer, answer
    inbox = run("inbox", "--vault", "tea")
    (line,) = [x for x in inbox.splitlines() if "lineage:" in x]
    run("approve", line.split()[0], "--vault", "tea")
    answer = run("ask", "--vault", "tea", "How long is green tea steeped?")
    assert NEW in answer and OLD not in answer, answer
    assert "Black tea" in run("ask", "--vault", "tea", "How long is black tea steeped?")
    # the mirror follows the carry and the supersession; the doctor finds both clean
    mirror = tmp_path / "mirror"
    run("mirror", "--vault", "tea", str(mirror))
    page = (mirror / "wiki" / "tea.md").read_text()
    assert NEW in page and "~~" + OLD in page, page
    run("doctor", "--vault", "tea", "--mirror", str(mirror))


class Gate(Provider):
    """The extractive engine, each call waiting until ``parties`` workers are in one."""

    name = "extractive"
    supports_schema = True
    reads_prompt = False

    def __init__(self, barrier: threading.Barrier) -> None:
        self.inner = ExtractiveProvider()
        self.barrier = barrier

    def complete(self, request: ModelRequest) -> Completion:
        with contextlib.suppress(threading.BrokenBarrierError):  # the other one is done
            self.barrier.wait()
        return self.inner.complete(request)


def test_two_workers_on_one_version_carry_and_propose_once(team: Team) -> None:
    """Two jobs of the same new version, run by two workers at once (each in its model call
    while the other is): one carry applied, one lineage proposal, the old fact alone stated."""
    ingest(team, TEA)
    first = team.submit(sent(TEA.replace(OLD, NEW)))
    second = team.submit(sent(TEA.replace(OLD, NEW)))
    assert first["id"] != second["id"]
    barrier = threading.Barrier(2, timeout=20)
    workers = [team.worker(Gate(barrier)) for _ in range(2)]
    threads = [threading.Thread(target=w.run_once) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    for job in (first, second):
        done = team.call("GET", f"/jobs/{job['id']}", "read").json()
        assert done["status"] == "done", done
    carried = [p for p in plans(team, "lineage:carry:%") if p["status"] == "applied"]
    assert len(carried) == 1
    pending = [p for p in plans(team, "lineage:%") if p["status"] == "pending"]
    assert len(pending) == 1, pending
    assert green(team) == {"two minutes"}
    approve(team, pending[0]["id"])
    assert green(team) == {"three minutes"}
    texts = [
        (r["page_slug"], r["text"])
        for r in team.q("SELECT page_slug, text FROM {s}.claims WHERE status = 'active'")
    ]
    assert len(texts) == len(set(texts)), texts  # fmt: skip


def test_an_older_version_read_after_a_newer_one_states_nothing_old(team: Team) -> None:
    """Versions 2 and 3 queued before either is read, each job claimed by a worker; version
    3's runs first: version 2's chunks, read after it, are not settled — its "three minutes"
    must not come in after version 3's "one minute" (which waits for its supersession)."""
    from affidavit.jobs.payloads import StoredIngestPayload
    from affidavit.jobs.pg_ingest import PgIngest

    from .test_pg_jobs import TRUSTED

    ingest(team, TEA)
    v2 = team.submit(sent(TEA.replace(OLD, NEW)))
    v3 = team.submit(sent(TEA.replace(OLD, OLD.replace("two minutes", "one minute"))))
    a = team.jobs.claim("team", "worker-a", 60)
    b = team.jobs.claim("team", "worker-b", 60)
    assert a is not None and b is not None
    assert (a.job_id, b.job_id) == (v2["id"], v3["id"])

    def run(claim: Any, job: dict[str, Any]) -> dict[str, Any]:
        payload = StoredIngestPayload(sources=job["payload"]["sources"])
        ingest = PgIngest(team.jobs, claim, ExtractiveProvider(), requested_by="ann",
                          config=TRUSTED)  # fmt: skip
        return ingest.run(payload)

    run(b, v3)
    assert green(team) == {"two minutes"}
    late = run(a, v2)
    assert late["totals"].get("superseded"), late
    assert green(team) == {"two minutes"}
    pending = [p for p in plans(team, "lineage:%") if p["status"] == "pending"]
    assert len(pending) == 1, pending
    approve(team, pending[0]["id"])
    assert green(team) == {"one minute"}
    texts = [
        (r["page_slug"], r["text"])
        for r in team.q("SELECT page_slug, text FROM {s}.claims WHERE status = 'active'")
    ]
    assert len(texts) == len(set(texts)), texts  # fmt: skip


SUMMARY = """# Tea notes

Green tea should steep for two minutes at 80 degrees Celsius.

Black tea needs water at a full boil and steeps for four minutes.
"""


def summary_after_edit(team: Team, before: str | None = None) -> tuple[str, list[Any]]:
    """Ingest SUMMARY (its first sentence the page's summary), set the summary to ``before``
    when given, ingest the edit, approve the lineage plan; the summary and the approval's
    audit entries' operations."""
    ingest(team, SUMMARY)
    (page,) = team.q("SELECT summary FROM {s}.pages WHERE slug = 'tea'")
    assert "two minutes" in page["summary"]  # the engine summarises with the first claim
    if before is not None:
        team.q("UPDATE {s}.pages SET summary = %s WHERE slug = 'tea' RETURNING slug", before)
    ingest(team, SUMMARY.replace("two minutes", "three minutes"))
    (pending,) = [p for p in plans(team, "lineage:%") if p["status"] == "pending"]
    approve(team, pending["id"])
    (page,) = team.q("SELECT summary FROM {s}.pages WHERE slug = 'tea'")
    entries = [e for e in team.storage.audit("team")
               if e.action == "applied" and e.plan_id == pending["id"]]  # fmt: skip
    return str(page["summary"]), [op for e in entries for op in json.loads(e.detail)["ops"]]


def test_a_summary_that_was_the_old_claims_words_follows_its_successor(team: Team) -> None:
    """As SQLite's door (store/summary_follows.py): approving the supersession moves the page
    summary that *is* the old claim's words to the successor's, and the audit entry says so."""
    summary, ops = summary_after_edit(team)
    assert "three minutes" in summary and "two minutes" not in summary, summary
    moved = [op["summary_follows"] for op in ops if "summary_follows" in op]
    assert [m["page"] for m in moved] == ["tea"] and moved[0]["summary"] == summary


def test_a_summary_in_other_words_stays(team: Team) -> None:
    """The other side: a summary that is not the superseded claim's words is a person's
    choice; the supersession leaves it, and names no move."""
    summary, ops = summary_after_edit(team, "Notes on steeping green and black tea.")
    assert summary == "Notes on steeping green and black tea."
    assert not [op for op in ops if "summary_follows" in op]


def test_an_agents_new_version_applies_nothing_by_the_policy(team: Team) -> None:
    """W13: a job an agent (a token) queued carries nothing by the policy either — its carry
    and its lineage proposal wait for a person, and the old fact alone is stated."""
    first = team.submit(sent(TEA), role="approve")  # the same token sends both versions
    assert team.worker().run(drain=True) == 1
    assert team.call("GET", f"/jobs/{first['id']}", "read").json()["status"] == "done"
    for plan in plans(team, "ingest:%"):  # a person approves the agent's first plans
        approve(team, plan["id"])
    assert green(team) == {"two minutes"}
    job = team.submit(sent(TEA.replace(OLD, NEW)), role="approve")
    assert team.worker().run(drain=True) == 1
    assert team.call("GET", f"/jobs/{job['id']}", "read").json()["status"] == "done"
    assert green(team) == {"two minutes"}
    made = plans(team, "lineage:%")
    assert made and {p["status"] for p in made} == {"pending"}, made
    assert team.q("SELECT count(*) AS n FROM {s}.evidence_carried")[0]["n"] == 0
