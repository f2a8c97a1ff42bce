"""Held remainders on both backends (issue 26, W11 judged text by text): the policy — and a
person's approval given unseen (``approve --all --yes``, ``sure_only``) — applies a plan's sure
part and keeps its uncertain texts waiting as the plan's pending remainder, which ``inbox show``
(the API's plan detail, the MCP's plan status) lists and a person approves or rejects later.
The same script runs against a SQLite vault and a PostgreSQL one through the service each door
uses (:mod:`affidavit.service.vaults`, :class:`affidavit.service.pg_vaults.PgVault`) and must
say the same, word for word (plan ids aside). The attacker's tests: a remainder approved twice
(the second approver learns it went in, nothing is written twice), an approval given unseen
never takes a remainder, and a stored remainder edited by hand is refused, not guessed at."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from affidavit.config import Config
from affidavit.errors import ConflictError, IntegrityError
from affidavit.hashing import sha256_hex
from affidavit.service import vaults as sqlite_service
from affidavit.storage import open_storage
from affidavit.vault import init_vault, open_vault

from .conftest import FakeClock, add_text

pytestmark = pytest.mark.xdist_group("postgres")

TEXT = "The bridge opened in 1932 after six years of work. The bridge is 503 metres long."
SURE = "The bridge is 503 metres long."
UNSURE = "The bridge opened in 1932 in Bristol."  # a place the quote never names: uncertain


def says(text: str, source: str, quote: str) -> dict[str, Any]:
    return {"text": text, "evidence": [{"source": source, "quote": quote}]}


def mixed(source: str, slug: str = "bridge") -> list[dict[str, Any]]:
    """One page of a sure claim and an uncertain one."""
    return [
        {"op": "create_page", "slug": slug, "title": "The bridge", "summary": SURE,
         "claims": [says(SURE, source, "The bridge is 503 metres long"),
                    says(UNSURE, source, "The bridge opened in 1932")]}
    ]  # fmt: skip


class SqliteFront:
    backend = "sqlite"

    def __init__(self, root: Path, auto_apply: str) -> None:
        vault, _ = init_vault(root, clock=FakeClock())
        vault.config_path.write_text(f'[policy]\nauto_apply = "{auto_apply}"\n', "utf-8")
        vault.close()
        self.vault = open_vault(root, clock=FakeClock())
        self.source = add_text(self.vault, "bridge.md", TEXT, "trusted")

    def propose(self, ops: list[dict[str, Any]]) -> Any:
        nonce = sqlite_service.new_nonce(self.vault, 24).nonce
        return sqlite_service.propose(self.vault, {"nonce": nonce, "operations": ops}, "ann", "cli")

    def approve(self, plan_id: str) -> Any:
        return sqlite_service.approve(self.vault, plan_id, None, "ann")

    def approve_many(self, ids: list[str], sure_only: bool) -> Any:
        return sqlite_service.approve_many(self.vault, ids, "ann", sure_only=sure_only)

    def reject(self, plan_id: str) -> Any:
        return sqlite_service.reject(self.vault, plan_id, "not that one", "ann")

    def detail(self, plan_id: str) -> Any:
        return sqlite_service.plan_detail(self.vault, plan_id)

    def inbox(self) -> Any:
        return sqlite_service.list_plans(self.vault, ("pending",))

    def preview(self, plan_id: str) -> Any:
        return sqlite_service.approve_many(self.vault, [plan_id], "ann", dry_run=True).preview

    def claims(self, slug: str) -> list[str]:
        page = sqlite_service.get_page(self.vault, slug, with_markdown=False)
        return [c.text for c in page.claims if c.status == "active"]

    def applied_entries(self, plan_id: str) -> int:
        rows = self.vault.db.execute(
            "SELECT count(*) FROM audit WHERE action = 'applied' AND plan_id = ?", (plan_id,)
        )
        return int(rows.fetchone()[0])

    def set_held(self, plan_id: str, value: str) -> None:
        self.vault.db.execute("UPDATE plans SET held = ? WHERE id = ?", (value, plan_id))
        self.vault.db.commit()

    def close(self) -> None:
        self.vault.close()


class PgFront:
    backend = "postgresql"

    def __init__(self, url: str, name: str, auto_apply: str) -> None:
        from affidavit.service.pg_vaults import PgVault

        self.storage: Any = open_storage(url)
        self.storage.create_vault(name, "ann")
        self.name = name
        config = Config({"policy.auto_apply": auto_apply})
        self.service = PgVault(self.storage, name, config, clock=FakeClock())
        self.source = self.storage.add_source(
            name, TEXT.encode(), origin="/docs/bridge.md", name="bridge.md",
            added_at="2026-12-06T12:00:00Z", media_type="text/markdown", trust="trusted",
        )  # fmt: skip

    def propose(self, ops: list[dict[str, Any]]) -> Any:
        nonce = self.service.new_nonce(24).nonce
        return self.service.propose({"nonce": nonce, "operations": ops}, "ann", "cli")

    def approve(self, plan_id: str) -> Any:
        return self.service.approve(plan_id, None, "ann")

    def approve_many(self, ids: list[str], sure_only: bool) -> Any:
        return self.service.approve_many(ids, "ann", sure_only=sure_only)

    def reject(self, plan_id: str) -> Any:
        return self.service.reject(plan_id, "not that one", "ann")

    def detail(self, plan_id: str) -> Any:
        return self.service.plan_detail(plan_id)

    def inbox(self) -> Any:
        return self.service.list_plans(("pending",))

    def preview(self, plan_id: str) -> Any:
        return self.service.approve_many([plan_id], "ann", dry_run=True).preview

    def claims(self, slug: str) -> list[str]:
        page = self.service.get_page(slug, with_markdown=False)
        return [c.text for c in page.claims if c.status == "active"]

    def applied_entries(self, plan_id: str) -> int:
        return sum(
            1
            for e in self.storage.audit(self.name)
            if e.action == "applied" and e.plan_id == plan_id
        )

    def set_held(self, plan_id: str, value: str) -> None:
        with self.storage.pool.connection() as conn:
            conn.execute(
                f"UPDATE v_{self.name}.plans SET held = %s WHERE id = %s", (value, plan_id)
            )

    def close(self) -> None:
        self.storage.close()


@pytest.fixture
def both(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """``build(auto_apply)``: a SQLite front and a PostgreSQL front over the same source."""
    made: list[Any] = []

    def build(auto_apply: str = "trusted") -> tuple[Any, Any]:
        n = len(made)
        name = f"held_{sha256_hex(request.node.nodeid.encode())[:10]}_{n}"
        pair = (
            SqliteFront(tmp_path / f"v{n}", auto_apply),
            PgFront(request.getfixturevalue("pg_url"), name, auto_apply),
        )
        made.extend(pair)
        return pair

    yield build
    for front in made:
        front.close()


def said(front: Any, value: Any, *ids: str) -> Any:
    """``value`` as JSON data with the plan ids (whole or 12-character), the source id, claim
    ids and nonces made generic, and no git commit (PostgreSQL's is the mirror's): what must be
    equal across the backends."""
    data = value.model_dump() if hasattr(value, "model_dump") else value
    text = json.dumps(data)
    text = re.sub(r'"commit": "[0-9a-f]{40}"', '"commit": null', text)
    text = re.sub(r'"nonce": "[^"]*"', '"nonce": ""', text)
    for n, plan_id in enumerate(ids):
        text = text.replace(plan_id, f"<plan{n}>").replace(plan_id[:12], f"<plan{n}>")
    text = text.replace(front.source, "<source>").replace(front.source[:12], "<source>")
    return json.loads(re.sub(r"c-[0-9a-f]{16}", "<claim>", text))


def waiting_of(detail: Any) -> list[tuple[int, str, str, bool]]:
    return [(w.op, w.part, w.verdict, w.applied) for w in detail.waiting]


def test_the_policy_applies_the_sure_part_and_a_person_approves_the_rest(both: Any) -> None:
    fronts = both()
    out: list[list[Any]] = []
    for front in fronts:
        proposal = front.propose(mixed(front.source))
        plan_id = proposal.plan_id
        assert proposal.status == "partial", proposal.message  # the sure claim went in
        assert front.claims("bridge") == [SURE]
        assert "1 text(s) wait for a person" in proposal.message
        assert [(w.part, w.verdict, w.applied) for w in proposal.waiting] == [
            ("claim 2", "uncertain", True)
        ]
        detail = front.detail(plan_id)  # `inbox show`, GET …/plans/{id}, MCP plan_status
        assert detail.status == "pending" and detail.applied_ops == [1]
        assert waiting_of(detail) == [(1, "claim 2", "uncertain", True)]
        (listed,) = front.inbox()
        assert listed.id == plan_id and listed.waiting == detail.waiting
        (preview,) = front.preview(plan_id)
        assert preview.ops == [1] and "the rest of bridge" in preview.lines[0]
        done = front.approve(plan_id)  # a person, having read it: the remainder goes in
        assert done.applied and done.ops == [1] and len(done.claims) == 1
        assert front.claims("bridge") == [SURE, UNSURE]
        assert front.detail(plan_id).status == "applied" and front.inbox() == []
        assert front.applied_entries(plan_id) == 2  # the sure part, then the rest
        out.append([said(front, v, plan_id) for v in (proposal, detail, preview, done)])
    assert out[0] == out[1]  # SQLite and PostgreSQL say the same, word for word


def test_a_rejected_remainder_leaves_the_sure_part(both: Any) -> None:
    for front in both():
        plan_id = front.propose(mixed(front.source)).plan_id
        assert front.reject(plan_id).status == "rejected"
        assert front.claims("bridge") == [SURE] and front.inbox() == []
        with pytest.raises(ConflictError, match="rejected"):
            front.approve(plan_id)
        assert front.claims("bridge") == [SURE] and front.applied_entries(plan_id) == 1


def test_an_unseen_approval_applies_what_is_sure_and_never_the_remainder(both: Any) -> None:
    """``approve --all --yes``: each plan's sure part goes in, one batch; what waits stays; a
    second unseen approval finds nothing that goes in without a person (applied: false), and
    only a person's approval by id takes the remainder."""
    out: list[list[Any]] = []
    for front in both("never"):
        first = front.propose(mixed(front.source)).plan_id
        whole = front.propose(
            [{"op": "create_page", "slug": "length", "title": "The bridge", "summary": SURE,
              "claims": [says(SURE, front.source, "The bridge is 503 metres long")]}]
        ).plan_id  # fmt: skip
        assert front.detail(first).status == "pending"  # never: both wait for a person
        assert front.detail(whole).status == "pending"
        done = front.approve_many([first, whole], sure_only=True)
        assert [r.applied for r in done.results] == [True, True]
        assert front.claims("bridge") == [SURE] and front.claims("length") == [SURE]
        assert front.detail(whole).status == "applied"
        assert waiting_of(front.detail(first)) == [(1, "claim 2", "uncertain", True)]
        again = front.approve_many([first], sure_only=True)
        (nothing,) = again.results
        assert not nothing.applied and "without a person" in nothing.message
        assert front.claims("bridge") == [SURE] and front.applied_entries(first) == 1
        rest = front.approve(first)
        assert rest.applied and front.claims("bridge") == [SURE, UNSURE]
        out.append([said(front, v, first, whole) for v in (done, again, rest)])
    assert out[0] == out[1]


def test_an_applied_plan_approved_again_is_nothing_to_do_on_both(both: Any) -> None:
    """The second approver of a race learns the plan went in (exit 0, 200, ``applied: false``),
    not an error that looks like a fault; nothing is written twice."""
    out = []
    for front in both("never"):
        plan_id = front.propose(mixed(front.source)).plan_id
        assert front.approve(plan_id).applied
        again = front.approve(plan_id)
        assert not again.applied and again.message.endswith("is already applied; nothing to do")
        many = front.approve_many([plan_id], sure_only=False)
        assert [r.applied for r in many.results] == [False]
        assert front.applied_entries(plan_id) == 1
        out.append([said(front, v, plan_id) for v in (again, *many.results)])
    assert out[0] == out[1]


def test_a_stored_remainder_edited_by_hand_is_refused(both: Any) -> None:
    for front in both():
        plan_id = front.propose(mixed(front.source)).plan_id
        front.set_held(plan_id, json.dumps({"0": {"claims": [0], "texts": ["../../etc"]}}))
        with pytest.raises(IntegrityError, match=r"plans\.held\) is malformed"):
            front.approve(plan_id)
        assert front.claims("bridge") == [SURE]


def test_a_token_made_or_revoked_is_audited_alike_on_both(both: Any) -> None:
    """Creating and revoking a token is an audit entry of the vault's hash chain on both
    backends, with the same detail (the token's id, role and expiry; never its secret)."""
    from datetime import timedelta

    from affidavit.service import tokens

    sqlite, pg = both()
    made = [
        tokens.create_token(sqlite.vault.db, sqlite.vault.clock, "read", timedelta(days=1), "ci",
                            "ann"),
        pg.service.create_token("read", timedelta(days=1), "ci", "ann"),
    ]  # fmt: skip
    tokens.revoke_token(sqlite.vault.db, sqlite.vault.clock, made[0][0].id, "ann")
    pg.service.revoke_token(made[1][0].id, "ann")
    rows = sqlite.vault.db.execute(
        "SELECT action, actor, detail FROM audit WHERE action LIKE 'token_%' ORDER BY seq"
    ).fetchall()
    entries = [
        [(str(r[0]), str(r[1]), json.loads(r[2])) for r in rows],
        [
            (e.action, e.actor, json.loads(e.detail))
            for e in pg.storage.audit(pg.name)
            if e.action.startswith("token_")
        ],
    ]
    for (info, secret), said_ in zip(made, entries, strict=True):
        assert [a for a, _, _ in said_] == ["token_created", "token_revoked"]
        assert said_[0][2] == {"token": info.id, "role": "read", "expires_at": info.expires_at}
        assert said_[1][2] == {"token": info.id}
        assert secret.removeprefix(f"afd_{info.id}_") not in json.dumps(said_)


def test_a_mirror_follows_a_remainder_and_equals_a_rebuild(pg_url: str, tmp_path: Path) -> None:
    """The mirror renders each batch as it stood: the sure part under the host's title and
    heading, then the remainder a person approved (the proposed title, the heading moved onto
    the claims written before); a mirror rebuilt from nothing makes the same commits."""
    pytest.importorskip("pygit2")
    from affidavit.mirror import check, mirror

    front = PgFront(pg_url, f"held_m_{sha256_hex(str(tmp_path).encode())[:8]}", "trusted")
    try:
        ops = mixed(front.source)
        ops[0]["title"] = "The bridge in Bristol"  # named by the uncertain claim only
        ops[0]["section"] = "Bristol"
        proposal = front.propose(ops)
        assert proposal.status == "partial", proposal.message
        held = {(w.part, w.verdict) for w in proposal.waiting}
        assert ("claim 2", "uncertain") in held, held
        folder = tmp_path / "mirror"
        assert mirror(front.storage, front.name, folder).after == 1
        first = (folder / "wiki" / "bridge.md").read_text()
        assert "The bridge in Bristol" not in first and UNSURE not in first
        assert front.approve(proposal.plan_id).applied
        assert mirror(front.storage, front.name, folder).after == 2
        assert check(front.storage, front.name, folder).ok
        now = (folder / "wiki" / "bridge.md").read_text()
        assert UNSURE in now
        rebuilt = tmp_path / "rebuilt"
        assert mirror(front.storage, front.name, rebuilt).after == 2
        assert (rebuilt / "wiki" / "bridge.md").read_text() == now
        import pygit2

        heads = [str(pygit2.Repository(str(f)).head.target) for f in (folder, rebuilt)]
        assert heads[0] == heads[1]
    finally:
        front.close()
