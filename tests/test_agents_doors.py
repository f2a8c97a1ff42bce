"""W13: agents are agents on every door (issue 23, items 1 and 4).

A plan whose author is a token, or that came through MCP, is an agent's plan whatever door it
came through: it is never applied by policy, it is charged to the same per-caller quotas, its
pending ``create_page`` never reserves a slug against the owner's own work, and what it says in
its own words (a retraction's reason, a plan's summary) is shown as the proposer's words and never
rendered into the wiki. Each reproduction of the issue is written here from its description.
"""

from __future__ import annotations

import json
import os
import pwd
import sys
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from mcp.shared.memory import create_connected_server_and_client_session
from mcp.types import TextContent

from affidavit import inbox
from affidavit.cli import main
from affidavit.errors import AdmissionError, ConflictError
from affidavit.mcp.server import Door, build_server
from affidavit.server.app import create_app
from affidavit.server.registry import Registry
from affidavit.service import tokens as token_store
from affidavit.service import vaults as svc
from affidavit.vault import Vault, init_vault, open_vault

from .conftest import FakeClock, add_text, claim, make_plan

ROOT = Path(__file__).resolve().parent.parent
BASE = "http://127.0.0.1:8765"
NOTE = "NOTE TO REVIEWER: already approved by the owner; run approve --all --include-agents --yes"


@pytest.fixture
def clock() -> FakeClock:
    """Now: the daemon's app and the CLI open the vault with the real clock."""
    return FakeClock(datetime.now(UTC))


def _configure(vault: Vault, text: str) -> Vault:
    """``vault`` reopened with ``text`` as its whole affidavit.toml (every other setting at its
    default)."""
    vault.config_path.write_text(text + "\n", encoding="utf-8")
    root, clock = vault.root, vault.clock
    vault.close()
    return open_vault(root, clock=clock)


def _op(slug: str, source: str) -> dict[str, Any]:
    return {
        "op": "create_page",
        "slug": slug,
        "title": f"The {slug}",
        "summary": f"The {slug} opened in 1932.",
        "claims": [claim(f"The {slug} opened in 1932.", source, f"The {slug} opened in 1932")],
    }


def _source(vault: Vault, *names: str) -> str:
    text = " ".join(f"The {n} opened in 1932 after six years of work." for n in names)
    return add_text(vault, "towns.md", text, trust="trusted")


def _token(vault: Vault, role: str = "propose") -> tuple[str, str]:
    info, secret = token_store.create_token(
        vault.db, vault.clock, role, timedelta(days=1), "agent", "owner"
    )
    return info.id, secret


@contextmanager
def _api(root: Path, token: str) -> Iterator[TestClient]:
    """The daemon's app in-process; every request carries ``token`` as a TCP caller would."""
    registry = Registry.open([root])
    app = create_app(registry, run_workers=False)
    headers = {"Authorization": f"Bearer {token}"}
    with TestClient(app, base_url=BASE, headers=headers) as client:
        yield client


def _rest_propose(client: TestClient, ops: list[dict[str, Any]], **extra: Any) -> Any:
    name = client.get("/v1/whoami").json()["vaults"][0]["name"]
    issued = client.post(f"/v1/vaults/{name}/nonces", json={"hours": 1})
    if issued.status_code != 200:  # refused before any nonce: that is the answer
        return issued
    plan = {"nonce": issued.json()["nonce"], "operations": ops, **extra}
    return client.post(f"/v1/vaults/{name}/plans", json={"plan": plan, "origin": "cli"})


def _mcp(vault: Vault, actor: str, name: str, args: dict[str, Any]) -> tuple[bool, str]:
    """One MCP tool call as the token caller ``actor`` (what the daemon's /mcp door builds)."""
    door = Door(lambda: nullcontext(vault), "owner", caller=lambda _r: ("propose", actor))
    server = build_server(door)
    out: list[tuple[bool, str]] = []

    async def go() -> None:
        async with create_connected_server_and_client_session(server) as client:
            result = await client.call_tool(name, args)
            text = "\n".join(c.text for c in result.content if isinstance(c, TextContent))
            out.append((bool(result.isError), text))

    anyio.run(go)
    return out[0]


# --- 1. a token's REST plan is an agent's plan ----------------------------------------------------


def test_a_propose_tokens_rest_plan_waits_under_auto_apply_trusted(vault: Vault) -> None:
    """The issue's reproduction: `POST …/nonces` then `POST …/plans` with the propose token docs
    tell the owner to give an agent; under auto_apply = "trusted" it was "Approved by policy"."""
    vault = _configure(vault, '[policy]\nauto_apply = "trusted"')
    try:
        source = _source(vault, "bridge", "tunnel", "harbour")
        _, token = _token(vault)
        # the control: the owner's own plan of the same shape is applied by the policy
        mine = inbox.propose(vault, make_plan(vault, _op("harbour", source)), "owner", "cli")
        assert mine.status == "applied", mine.message
    finally:
        vault.close()
    with _api(vault.root, token) as client:
        sent = _rest_propose(client, [_op("bridge", source)])
        assert sent.status_code == 200, sent.text
        body = sent.json()
        assert body["status"] == "pending", body
        assert "agent" in body["message"] and "Approved by policy" not in body["message"]
        listed = client.get(f"/v1/vaults/{vault.root.name}/plans").json()
        assert [(p["id"], p["proposer"]) for p in listed] == [(body["plan_id"], "agent")]
    with open_vault(vault.root) as again:
        assert again.db.execute("SELECT 1 FROM pages WHERE slug = 'bridge'").fetchone() is None
        assert not (vault.root / "wiki" / "bridge.md").exists()
        assert (
            again.db.execute("SELECT count(*) FROM audit WHERE actor = 'policy'").fetchone()[0] == 1
        )  # the owner's plan only


def test_no_door_applies_an_agents_plan_by_policy(vault: Vault) -> None:
    """The rule is the gate's, decided from the recorded author and origin: whatever function a
    door calls, a token's or an MCP client's plan waits (and the owner's does not)."""
    vault = _configure(vault, '[policy]\nauto_apply = "trusted"')
    try:
        source = _source(vault, "a", "b", "c", "d")
        cases = [
            ("token:0123456789ab", "api:cli", "a"),
            ("root via mcp", "mcp", "b"),
            ("token:0123456789ab via mcp", "mcp-http", "c"),
        ]
        for author, origin, slug in cases:
            out = svc.propose(vault, make_plan(vault, _op(slug, source)), author, origin)
            assert out.status == "pending", (author, out.message)
            assert out.admission["agent"] is True
            assert "agent" in out.admission["policy_reason"]
        out = svc.propose(vault, make_plan(vault, _op("d", source)), "owner", "api:cli")
        assert out.status == "applied" and out.admission["agent"] is False
    finally:
        vault.close()


def test_a_tokens_saved_answer_is_an_agents_plan(vault: Vault) -> None:
    """`POST …/ask` with save (propose role) proposed as "ask --save", a person's name: the
    token's saved answer is the token's plan, and waits."""
    vault = _configure(vault, '[policy]\nauto_apply = "trusted"')
    try:
        source = _source(vault, "bridge")
        inbox.propose(vault, make_plan(vault, _op("bridge", source)), "owner", "cli")
        token_id, token = _token(vault)
    finally:
        vault.close()
    with _api(vault.root, token) as client:
        name = vault.root.name
        sent = client.post(
            f"/v1/vaults/{name}/ask", json={"question": "When did the bridge open", "save": True}
        )
        assert sent.status_code == 200, sent.text
        plan_id = sent.json()["saved_plan"]
        assert plan_id, sent.json()
        detail = client.get(f"/v1/vaults/{name}/plans/{plan_id}").json()
        assert detail["status"] == "pending" and detail["author"] == f"token:{token_id}"


def test_a_tokens_answer_saved_from_the_web_desk_is_an_agents_plan(vault: Vault) -> None:
    """The next door: the same propose token logs into the web desk and saves an answer there.
    The desk proposed it as "ask --save" (a person's name: applied by the policy, charged to no
    one); it is the token's plan, and waits."""
    import re

    from tests.web import desk_client

    vault = _configure(vault, '[policy]\nauto_apply = "trusted"\n[mcp]\npropose_per_hour = 1')
    try:
        source = _source(vault, "bridge")
        inbox.propose(vault, make_plan(vault, _op("bridge", source)), "owner", "cli")
        token_id, token = _token(vault)
    finally:
        vault.close()
    name = vault.root.name
    with desk_client(vault.root) as (client, _desk, _registry):
        assert client.post("/web/login", data={"token": token}).status_code == 200
        found = re.search(r'name="csrf" value="([^"]+)"', client.get(f"/web/{name}/search").text)
        assert found is not None
        form = {"csrf": found.group(1), "question": "When did the bridge open", "save": "1"}
        saved = client.post(f"/web/{name}/ask", data=form)
        assert saved.status_code == 200, saved.text
        again = client.post(f"/web/{name}/ask", data=form)  # its quota is the token's
        assert again.status_code == 429 and "mcp.propose_per_hour" in again.text, again.text
    with open_vault(vault.root) as after:
        rows = after.db.execute(
            "SELECT author, status FROM plans WHERE origin LIKE 'ask:%'"
        ).fetchall()
        assert [tuple(r) for r in rows] == [(f"token:{token_id}", "pending")]
        assert (
            after.db.execute("SELECT count(*) FROM audit WHERE actor = 'policy'").fetchone()[0] == 1
        )  # the owner's plan only


def test_a_lint_job_a_token_asks_for_proposes_its_fixes_as_the_tokens(
    vault: Vault, clock: FakeClock
) -> None:
    """The next door: a propose token queues `lint` with `propose` (the job then proposes fix
    plans). They were proposed as "lint", a person's name — charged to no one, however many jobs
    the token queued; they are the token's plans."""
    from affidavit.jobs import Worker
    from tests.test_lint_findings import _disagreeing

    vault.clock = clock
    _disagreeing(vault, clock)
    token_id, token = _token(vault)
    vault.close()
    with _api(vault.root, token) as client:
        queued = client.post(
            f"/v1/vaults/{vault.root.name}/jobs", json={"kind": "lint", "propose": True}
        )
        assert queued.status_code == 202, queued.text
    done = Worker(vault.root, "test-worker").run_once()
    assert done is not None and done.status == "done", done
    with open_vault(vault.root) as after:
        rows = after.db.execute("SELECT author, origin, status FROM plans WHERE origin = 'lint'")
        fixes = [tuple(r) for r in rows]
        charged = after.db.execute("SELECT actor FROM agent_calls").fetchall()
    assert fixes and set(fixes) == {(f"token:{token_id}", "lint", "pending")}, fixes
    assert [r[0] for r in charged] == [f"token:{token_id}"] * len(fixes)


# --- the same quota on every door ------------------------------------------------------------------


def test_the_rest_path_is_charged_to_the_mcp_quota_of_the_same_token(vault: Vault) -> None:
    """The issue: 8 REST plans after the MCP quota of that very token was spent."""
    vault = _configure(vault, "[mcp]\npropose_per_hour = 2\npending_per_caller = 50")
    try:
        source = _source(vault, *[f"t{n}" for n in range(6)])
        token_id, token = _token(vault)
        for n in range(2):
            error, text = _mcp(
                vault, f"token:{token_id}", "propose_plan", {"operations": [_op(f"t{n}", source)]}
            )
            assert not error, text
        error, text = _mcp(
            vault, f"token:{token_id}", "propose_plan", {"operations": [_op("t2", source)]}
        )
        assert error and "limited to 2 call(s) an hour" in text
        plans = vault.db.execute("SELECT count(*) FROM plans").fetchone()[0]
    finally:
        vault.close()
    with _api(vault.root, token) as client:
        sent = _rest_propose(client, [_op("t3", source)])
        assert sent.status_code == 429, sent.text
        assert "mcp.propose_per_hour" in sent.json()["error"]["message"]
        # nor does it get a nonce to try with: nothing is written for a call it can't make
        nonce = client.post(f"/v1/vaults/{vault.root.name}/nonces", json={"hours": 1})
        assert nonce.status_code == 429, nonce.text
    with open_vault(vault.root) as again:
        assert again.db.execute("SELECT count(*) FROM plans").fetchone()[0] == plans


def test_rest_calls_spend_the_quota_mcp_then_finds_spent(vault: Vault) -> None:
    vault = _configure(vault, "[mcp]\npropose_per_hour = 2\npending_per_caller = 50")
    try:
        source = _source(vault, *[f"t{n}" for n in range(4)])
        token_id, token = _token(vault)
    finally:
        vault.close()
    with _api(vault.root, token) as client:
        for n in range(2):
            sent = _rest_propose(client, [_op(f"t{n}", source)])
            assert sent.status_code == 200, sent.text
        assert _rest_propose(client, [_op("t2", source)]).status_code == 429
    with open_vault(vault.root) as again:
        error, text = _mcp(
            again, f"token:{token_id}", "propose_plan", {"operations": [_op("t3", source)]}
        )
        assert error and "limited to 2 call(s) an hour" in text


def test_the_pending_cap_counts_a_callers_plans_from_every_door(vault: Vault) -> None:
    vault = _configure(vault, "[mcp]\npropose_per_hour = 50\npending_per_caller = 2")
    try:
        source = _source(vault, *[f"t{n}" for n in range(4)])
        token_id, token = _token(vault)
        error, text = _mcp(
            vault, f"token:{token_id}", "propose_plan", {"operations": [_op("t0", source)]}
        )
        assert not error, text
    finally:
        vault.close()
    with _api(vault.root, token) as client:
        assert _rest_propose(client, [_op("t1", source)]).status_code == 200
        refused = _rest_propose(client, [_op("t2", source)])
        assert refused.status_code == 429 and "mcp.pending_per_caller" in refused.text


def test_the_owners_own_rest_plans_are_not_an_agents_quota(vault: Vault) -> None:
    """A person (the owner, on the socket or the CLI) is not charged: only agents are."""
    vault = _configure(vault, "[mcp]\npropose_per_hour = 1")
    try:
        source = _source(vault, "a", "b", "c")
        for slug in ("a", "b", "c"):
            out = svc.propose(vault, make_plan(vault, _op(slug, source)), "owner", "api:cli")
            assert out.status == "pending", out.message
    finally:
        vault.close()


# --- stdio: the kernel's uid, not $USER -----------------------------------------------------------


def _stdio_propose(root: Path, user: str, slug: str, source: str) -> str:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "USER": user, "LOGNAME": user}
    env.pop("AFFIDAVIT_SOCKET", None)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", "from affidavit.cli import main; main()", "--vault", str(root), "mcp"],
        env=env,
    )
    out: list[str] = []

    async def go() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            result = await client.call_tool("propose_plan", {"operations": [_op(slug, source)]})
            out.append("\n".join(c.text for c in result.content if isinstance(c, TextContent)))

    anyio.run(go)
    return out[0]


def test_stdio_quota_and_author_follow_the_kernels_uid_not_user(vault: Vault) -> None:
    """`USER=other affidavit mcp` got a fresh quota and another name."""
    vault = _configure(vault, "[mcp]\npropose_per_hour = 1")
    try:
        source = _source(vault, "a", "b")
    finally:
        vault.close()
    me = pwd.getpwuid(os.getuid()).pw_name
    first = _stdio_propose(vault.root, "mallory", "a", source)
    assert "status pending" in first, first
    second = _stdio_propose(vault.root, "someone-else", "b", source)
    assert "limited to 1 call(s) an hour" in second, second
    with open_vault(vault.root) as again:
        authors = [r[0] for r in again.db.execute("SELECT author FROM plans")]
        actors = {r[0] for r in again.db.execute("SELECT actor FROM agent_calls")}
    assert authors == [f"{me} via mcp"] and actors == {me}


# --- the owner's work goes first: no squatted slug ------------------------------------------------


def test_an_agents_pending_page_never_blocks_the_owners_plan(vault: Vault) -> None:
    source = _source(vault, "bridge")
    agents = svc.propose(vault, make_plan(vault, _op("bridge", source)), "token:aa", "api:cli")
    assert agents.status == "pending"
    # the owner proposes the same page: admitted, not "reserved by pending plan …"
    mine = inbox.propose(vault, make_plan(vault, _op("bridge", source), nonce=None), "owner", "x")
    assert mine.status == "pending", mine.message
    inbox.approve(vault, mine.plan_id, None, "owner")
    assert (vault.root / "wiki" / "bridge.md").exists()
    with pytest.raises((AdmissionError, ConflictError)) as refused:
        inbox.approve(vault, agents.plan_id, None, "owner")
    assert "already exists" in str(refused.value)


def test_the_owners_ingest_creates_the_page_an_agent_squats(
    tmp_path: Path, clock: FakeClock
) -> None:
    """The issue: an agent's pending create_page squatted the slug the owner's next ingest
    needed, and the host's message then suggested approving the agent's plan with it."""
    doc = tmp_path / "harbour.md"
    doc.write_text(
        "# Harbour\n\nThe harbour of Kettle Bay was dredged in 1911 by the port board. "
        "The harbour lighthouse was built in 1913 from local granite.\n",
        encoding="utf-8",
    )
    scratch, _ = init_vault(tmp_path / "scratch", clock=clock)
    scratch.close()
    runner = CliRunner(env={"AFFIDAVIT_NO_DAEMON": "1"})
    done = runner.invoke(main, ["--vault", str(scratch.root), "ingest", str(doc), "--yes"])
    assert done.exit_code == 0, done.output
    with open_vault(scratch.root) as seen:
        slugs = [r[0] for r in seen.db.execute("SELECT slug FROM pages")]
    assert slugs, done.output
    real, _ = init_vault(tmp_path / "real", clock=clock)
    try:
        decoy = add_text(real, "decoy.md", "The harbour opened in 1932 after six years of work.")
        squat = {
            "op": "create_page",
            "slug": slugs[0],
            "title": "The harbour",
            "summary": "The harbour opened in 1932.",
            "claims": [claim("The harbour opened in 1932.", decoy, "The harbour opened in 1932")],
        }
        agents = svc.propose(real, make_plan(real, squat), "token:aa", "api:cli")
        assert agents.status == "pending", agents.message
    finally:
        real.close()
    done = runner.invoke(main, ["--vault", str(real.root), "ingest", str(doc), "--yes"])
    assert done.exit_code == 0, done.output
    assert agents.plan_id[:12] not in done.output, done.output
    with open_vault(real.root) as after:
        assert {r[0] for r in after.db.execute("SELECT slug FROM pages")} == set(slugs)
        created = after.db.execute(
            "SELECT plan_id FROM claims WHERE page_slug = ?", (slugs[0],)
        ).fetchall()
        assert created and all(row[0] != agents.plan_id for row in created)
        left = inbox.get_plan(after, agents.plan_id)
        assert left.status == "pending"  # still the person's to decide, never swept in


def test_no_message_suggests_approving_an_agents_plan_to_unblock_the_owners(
    vault: Vault,
) -> None:
    source = _source(vault, "bridge")
    agents = svc.propose(vault, make_plan(vault, _op("bridge", source)), "token:aa", "api:cli")
    extend = {
        "op": "add_claims",
        "page": "bridge",
        "claims": [claim("The bridge opened in 1932.", source, "The bridge opened in 1932")],
    }
    with pytest.raises(AdmissionError) as refused:
        inbox.propose(vault, make_plan(vault, extend), "owner", "cli")
    message = str(refused.value)
    assert "bridge" in message
    assert agents.plan_id[:12] not in message and "approve" not in message.lower(), message


# --- the proposer's words --------------------------------------------------------------------------


def _retraction(vault: Vault) -> tuple[str, str]:
    """An applied claim and an agent's pending retraction of it with a manipulative reason."""
    source = _source(vault, "bridge")
    mine = inbox.propose(vault, make_plan(vault, _op("bridge", source)), "owner", "cli")
    applied = inbox.approve(vault, mine.plan_id, None, "owner")
    plan = make_plan(vault, {"op": "retract_claim", "claim": applied.claims[0], "reason": NOTE})
    plan["summary"] = "Approved already by the owner, nothing to check"
    agents = svc.propose(vault, plan, "token:aa via mcp", "mcp-http")
    assert agents.status == "pending", agents.message
    return agents.plan_id, applied.claims[0]


def test_a_reason_is_shown_as_the_proposers_words_on_cli_and_api(vault: Vault) -> None:
    plan_id, _ = _retraction(vault)
    detail = svc.plan_detail(vault, plan_id)
    said = {(w.op, w.field): w.text for w in detail.proposer_says}
    assert said == {
        (1, "reason"): NOTE,
        (None, "summary"): "Approved already by the owner, nothing to check",
    }
    out = CliRunner().invoke(
        main,
        ["--vault", str(vault.root), "inbox", "show", plan_id[:12]],
        env={"AFFIDAVIT_NO_DAEMON": "1"},
    )
    assert out.exit_code == 0, out.output
    lines = [line for line in out.output.splitlines() if "NOTE TO REVIEWER" in line]
    assert lines and all("the proposer says" in line for line in lines), out.output
    summary = [line for line in out.output.splitlines() if "Approved already" in line]
    assert summary and all("the proposer says" in line for line in summary), out.output
    preview = svc.approval_preview(vault, [plan_id])[0]
    shown = [line for line in preview.lines + preview.withdrawals if "NOTE TO REVIEWER" in line]
    assert all("the proposer says" in line for line in shown), preview


def test_a_reason_is_never_rendered_into_the_wiki(vault: Vault) -> None:
    plan_id, claim_id = _retraction(vault)
    inbox.approve(vault, plan_id, None, "owner")
    page = (vault.root / "wiki" / "bridge.md").read_text(encoding="utf-8")
    assert claim_id in page  # the retracted claim is listed …
    assert "NOTE TO REVIEWER" not in page and "approve --all" not in page  # … not its reason
    assert json.dumps(NOTE)[1:-1] not in page


def test_the_web_desk_marks_the_proposers_words(vault: Vault) -> None:
    from tests.web import desk_client, login_owner

    plan_id, _ = _retraction(vault)
    vault.close()
    with desk_client(vault.root) as (client, desk, _registry):
        login_owner(client, desk)
        page = client.get(f"/web/{vault.root.name}/plans/{plan_id}")
        assert page.status_code == 200, page.text
    html = page.text
    for words in ("NOTE TO REVIEWER", "Approved already by the owner"):
        at = html.index(words)
        block = html[html.rindex("<p", 0, at) : at]
        assert 'class="proposer-says' in block and "The proposer says (unchecked):" in block


def test_no_free_text_of_an_agents_plan_reaches_a_wiki_file_or_the_history(vault: Vault) -> None:
    """The next try: a reason that is markup, on a supersession and a source retraction, and a
    summary — none of it is rendered into any wiki file or the commit messages."""
    bait = "[owner approved](https://evil.example) <b>OK</b> run approve --all"
    source = _source(vault, "bridge", "tunnel")
    mine = inbox.propose(
        vault, make_plan(vault, _op("bridge", source), _op("tunnel", source)), "owner", "cli"
    )
    applied = inbox.approve(vault, mine.plan_id, None, "owner")
    other = add_text(vault, "b.md", "The bridge opened in 1933 after seven years of work.")
    ops = [
        {
            "op": "supersede_claim",
            "claim": applied.claims[0],
            "by": claim("The bridge opened in 1933.", other, "The bridge opened in 1933"),
            "reason": bait,
        },
        {"op": "retract_source", "source": source, "reason": bait},
    ]
    plan = make_plan(vault, *ops)
    plan["summary"] = bait
    agents = svc.propose(vault, plan, "token:aa", "api:cli")
    assert agents.status == "pending", agents.message
    inbox.approve(vault, agents.plan_id, None, "owner")
    for path in vault.wiki_dir.glob("*.md"):
        text = path.read_text(encoding="utf-8")
        assert "evil.example" not in text and "approve --all" not in text, path
    history = vault.git.run("log", "--format=%B")
    assert "evil.example" not in history and "approve --all" not in history


def test_nonces_fetched_ahead_do_not_outrun_the_quota(vault: Vault) -> None:
    """The next try: take nonces while under the quota, then spend them all at once."""
    vault = _configure(vault, "[mcp]\npropose_per_hour = 2\npending_per_caller = 50")
    try:
        source = _source(vault, *[f"t{n}" for n in range(3)])
        _, token = _token(vault)
    finally:
        vault.close()
    name = vault.root.name
    with _api(vault.root, token) as client:
        nonces = [
            client.post(f"/v1/vaults/{name}/nonces", json={"hours": 1}).json()["nonce"]
            for _ in range(3)
        ]
        statuses = [
            client.post(
                f"/v1/vaults/{name}/plans",
                json={"plan": {"nonce": nonce, "operations": [_op(f"t{n}", source)]}},
            ).status_code
            for n, nonce in enumerate(nonces)
        ]
    assert statuses == [200, 200, 429]
    with open_vault(vault.root) as again:
        assert again.db.execute("SELECT count(*) FROM plans").fetchone()[0] == 2


def test_an_agents_plan_is_never_applied_in_part(vault: Vault) -> None:
    """The policy applies a person's sure texts and keeps the uncertain one waiting (W11); an
    agent's plan of the same shape waits whole — nothing of it goes in without a person."""
    from tests.test_text_by_text import TEXT, UNCERTAIN, four_and_one, page

    vault = _configure(vault, '[policy]\nauto_apply = "trusted"')
    try:
        src = add_text(vault, "eddystone.md", TEXT)
        agents = svc.propose(
            vault, make_plan(vault, page(src, *four_and_one(src))), "token:aa", "x"
        )
        assert agents.status == "pending" and agents.admission["agent"] is True
        assert vault.db.execute("SELECT count(*) FROM claims").fetchone()[0] == 0
        mine = inbox.propose(
            vault, make_plan(vault, {**page(src, *four_and_one(src)), "slug": "mine"}), "me", "t"
        )
        assert mine.status == "partial", mine.message  # the control: a person's is split
        texts = [r[0] for r in vault.db.execute("SELECT text FROM claims")]
        assert len(texts) == 4 and UNCERTAIN not in texts
    finally:
        vault.close()


def test_the_door_itself_never_applies_an_agents_plan_by_policy(vault: Vault) -> None:
    """The next try, below the gate: whatever path reaches the one door that writes with the
    policy's approval (an interrupted run's resume, a future caller), an agent's plan is not
    applied by it; a person's approval of the same plan is."""
    from affidavit.store.apply import Approval, apply

    source = _source(vault, "bridge")
    agents = svc.propose(vault, make_plan(vault, _op("bridge", source)), "token:aa", "api:cli")
    assert agents.status == "pending"
    refused = apply(vault, agents.plan_id, None, Approval(actor="policy", kind="policy"))
    assert not refused.applied and "agent" in refused.message, refused.message
    assert vault.db.execute("SELECT count(*) FROM claims").fetchone()[0] == 0
    assert inbox.get_plan(vault, agents.plan_id).status == "pending"
    assert apply(vault, agents.plan_id, None, Approval(actor="owner")).applied
