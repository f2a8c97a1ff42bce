"""The door, hardened: batches of plans, dependency order, partial approvals that stay pending,
context replaces as withdrawals, and commits of exactly the files an apply wrote."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from affidavit.cli import main
from affidavit.doctor import run_doctor
from affidavit.errors import ConflictError
from affidavit.inbox import approve, approve_many, get_plan, propose
from affidavit.vault import Vault, init_vault, open_vault

from .conftest import add_text, claim, make_plan, snapshot

TEXT = (
    "Alpha is the first letter of the Greek alphabet. Beta is the second letter.\n"
    "Gamma is the third letter and comes after beta.\n"
    "Delta is the fourth letter. Epsilon is the fifth letter.\n"
)


@pytest.fixture
def src(vault: Vault) -> str:
    return add_text(vault, "greek.md", TEXT)


def page(slug: str, src: str, quote: str) -> dict[str, Any]:
    return {
        "op": "create_page",
        "slug": slug,
        "title": slug.title(),
        "summary": f"About {slug}.",
        "claims": [claim(f"{quote}.", src, quote)],
    }


def extend(slug: str, src: str, quote: str) -> dict[str, Any]:
    return {"op": "add_claims", "page": slug, "claims": [claim(f"{quote}.", src, quote)]}


def trusted(vault: Vault) -> Vault:
    cfg = vault.config_path.read_text().replace('auto_apply = "never"', 'auto_apply = "trusted"')
    vault.config_path.write_text(cfg)
    return open_vault(vault.root, clock=vault.clock)


@pytest.fixture
def live(tmp_path: Path) -> Iterator[Vault]:
    """A vault on the real clock, for the CLI (which opens the vault itself)."""
    v, _ = init_vault(tmp_path / "live")
    yield v
    v.close()


def commit_files(vault: Vault, rev: str = "HEAD") -> list[str]:
    out = vault.git.run("show", "--name-only", "--format=", rev)
    return sorted(line for line in out.splitlines() if line)


# --- item 4: a context replace ends claims, so it is a withdrawal ------------------------------


def test_a_context_replace_waits_for_a_person_and_is_audited_as_a_retraction(
    vault: Vault, src: str
) -> None:
    v = trusted(vault)
    try:
        first = propose(
            v,
            make_plan(
                v,
                {
                    "op": "update_context",
                    "entries": [
                        claim("Alpha is the first letter.", src, "Alpha is the first letter")
                    ],
                },
            ),
            "t",
            "t",
        )
        assert first.status == "applied"  # adding context is no withdrawal
        old = first.applied.claims[0] if first.applied else ""
        replace = {
            "op": "update_context",
            "mode": "replace",
            "entries": [claim("Delta is the fourth letter.", src, "Delta is the fourth letter")],
        }
        second = propose(v, make_plan(v, replace), "t", "t")
        assert second.status == "pending", second.message
        assert second.admission.needs_approval
        assert "replace context" in second.admission.policy_reason
        assert v.db.execute("SELECT status FROM claims WHERE id = ?", (old,)).fetchone()[0] == (
            "active"
        )
        # the inbox shows what goes
        shown = CliRunner().invoke(main, ["--vault", str(v.root), "inbox", "show", second.plan_id])
        assert shown.exit_code == 0, shown.output
        assert "retract 1 claim(s)" in shown.output and old in shown.output
        result = approve(v, second.plan_id, None, "tester")
        assert result.retracted == [old]
        status = v.db.execute("SELECT status FROM claims WHERE id = ?", (old,)).fetchone()[0]
        assert status == "retracted"
        entries = v.db.execute(
            "SELECT detail FROM audit WHERE action = 'retracted' AND plan_id = ?",
            (second.plan_id,),
        ).fetchall()
        assert len(entries) == 1 and old in json.loads(entries[0][0])["claims"]
        assert run_doctor(v).clean
    finally:
        v.close()


# --- item 6: the door commits only what it wrote ------------------------------------------------


def test_hand_edits_new_files_and_symlinks_stay_out_of_the_plan_commit(
    vault: Vault, src: str
) -> None:
    approve(
        vault,
        propose(
            vault, make_plan(vault, page("alpha", src, "Alpha is the first letter")), "t", "t"
        ).plan_id,
        None,
        "t",
    )
    approve(
        vault,
        propose(
            vault, make_plan(vault, page("beta", src, "Beta is the second letter")), "t", "t"
        ).plan_id,
        None,
        "t",
    )
    edited = vault.wiki_dir / "beta.md"
    edited.write_text(edited.read_text() + "\nMy own note.\n")
    (vault.wiki_dir / "fake.md").write_text("# Fake\n\nA page no plan made.\n")
    os.symlink("/etc/passwd", vault.wiki_dir / "passwd.md")
    vault.git.run("add", "wiki/fake.md")  # even a staged file stays out
    plan = make_plan(vault, extend("alpha", src, "Gamma is the third letter"))
    result = approve(vault, propose(vault, plan, "t", "t").plan_id, None, "t")
    files = commit_files(vault)
    assert files == ["wiki/alpha.md", "wiki/log.md"], files  # index.md: no page changed
    body = vault.git.run("log", "-1", "--format=%B")
    assert f"Affidavit-Plan: {result.plan_id}" in body
    report = run_doctor(vault)
    text = "\n".join(f"{f.check} {f.subject} {f.message}" for f in report.findings)
    assert "wiki/passwd.md" in text and "symlink" in text, text
    assert "wiki/fake.md" in text, text


# --- item 16: many plans at once, in dependency order ------------------------------------------


def test_dependent_plans_approved_together_in_the_wrong_order(vault: Vault, src: str) -> None:
    creates = propose(
        vault, make_plan(vault, page("alpha", src, "Alpha is the first letter")), "t", "t"
    )
    extends = propose(
        vault, make_plan(vault, extend("alpha", src, "Beta is the second letter")), "t", "t"
    )
    other = propose(
        vault, make_plan(vault, page("delta", src, "Delta is the fourth letter")), "t", "t"
    )
    before = snapshot(vault)
    with pytest.raises(ConflictError) as err:
        approve(vault, extends.plan_id, None, "t")
    message = str(err.value)
    assert f"approve {creates.plan_id[:12]} first" in message
    assert f"affidavit approve {creates.plan_id[:12]} {extends.plan_id[:12]}" in message
    assert "propose anew" not in message
    assert snapshot(vault) == before
    commits = len(vault.git.log_subjects())
    results = approve_many(
        vault, [extends.plan_id[:8], other.plan_id, creates.plan_id], None, "tester"
    )
    assert [r.plan_id for r in results] == [extends.plan_id, other.plan_id, creates.plan_id]
    assert all(r.applied for r in results) and len({r.commit for r in results}) == 1
    assert len(vault.git.log_subjects()) == commits + 1  # one commit for the batch
    body = vault.git.run("log", "-1", "--format=%B")
    for plan in (creates, extends, other):
        assert f"Affidavit-Plan: {plan.plan_id}" in body
        assert get_plan(vault, plan.plan_id).status == "applied"
    assert "Beta is the second letter." in (vault.wiki_dir / "alpha.md").read_text()
    assert run_doctor(vault).clean


def test_a_batch_is_all_or_nothing(vault: Vault, src: str) -> None:
    base = propose(
        vault, make_plan(vault, page("alpha", src, "Alpha is the first letter")), "t", "t"
    )
    approve(vault, base.plan_id, None, "t")
    good = propose(
        vault, make_plan(vault, page("delta", src, "Delta is the fourth letter")), "t", "t"
    )
    doomed = propose(
        vault, make_plan(vault, extend("alpha", src, "Beta is the second letter")), "t", "t"
    )
    rival = propose(
        vault, make_plan(vault, extend("alpha", src, "Beta is the second letter")), "t", "t"
    )
    approve(vault, rival.plan_id, None, "t")  # the doomed plan's claim is now a duplicate
    before = snapshot(vault)
    with pytest.raises(ConflictError, match=f"plan {doomed.plan_id[:12]}"):
        approve_many(vault, [good.plan_id, doomed.plan_id], None, "t")
    assert snapshot(vault) == before
    assert get_plan(vault, good.plan_id).status == "pending"
    assert list(vault.journal_dir.iterdir()) == []


def test_approve_several_and_all_from_the_cli(live: Vault) -> None:
    vault, src = live, add_text(live, "greek.md", TEXT)
    plans = [
        propose(vault, make_plan(vault, page(s, src, q)), "t", "t").plan_id
        for s, q in (("alpha", "Alpha is the first letter"), ("beta", "Beta is the second letter"))
    ]
    plans.insert(
        0,
        propose(
            vault, make_plan(vault, extend("alpha", src, "Gamma is the third letter")), "t", "t"
        ).plan_id,
    )
    runner = CliRunner()
    root = str(vault.root)
    shown = runner.invoke(main, ["--vault", root, "approve", "--all"], input="n\n")
    assert shown.exit_code != 0
    for plan_id in plans:
        assert plan_id[:12] in shown.output
    assert "Apply 3 plan(s)" in shown.output
    assert get_plan(vault, plans[0]).status == "pending"
    done = runner.invoke(main, ["--vault", root, "approve", "--all", "--yes"])
    assert done.exit_code == 0, done.output
    assert all(get_plan(vault, p).status == "applied" for p in plans)
    assert "Gamma is the third letter." in (vault.wiki_dir / "alpha.md").read_text()


def test_approve_all_never_applies_a_withdrawal_unshown(live: Vault) -> None:
    vault, src = live, add_text(live, "greek.md", TEXT)
    made = approve(
        vault,
        propose(
            vault, make_plan(vault, page("alpha", src, "Alpha is the first letter")), "t", "t"
        ).plan_id,
        None,
        "t",
    )
    retract = {"op": "retract_claim", "claim": made.claims[0], "reason": "wrong"}
    withdrawal = propose(vault, make_plan(vault, retract), "t", "t").plan_id
    plain = propose(
        vault, make_plan(vault, page("beta", src, "Beta is the second letter")), "t", "t"
    ).plan_id
    runner = CliRunner()
    root = str(vault.root)
    done = runner.invoke(main, ["--vault", root, "approve", "--all", "--yes"])
    assert done.exit_code == 0, done.output
    assert get_plan(vault, plain).status == "applied"
    assert get_plan(vault, withdrawal).status == "pending"
    assert f"affidavit approve {withdrawal[:12]}" in done.output
    # shown: every claim it ends is listed before the person says yes
    shown = runner.invoke(main, ["--vault", root, "approve", "--all"], input="y\n")
    assert shown.exit_code == 0, shown.output
    assert made.claims[0] in shown.output and "Alpha is the first letter." in shown.output
    assert get_plan(vault, withdrawal).status == "applied"


def test_the_api_approves_several_plans(vault: Vault, src: str) -> None:
    from affidavit.service.vaults import approve_many as svc_approve_many

    a = propose(vault, make_plan(vault, page("alpha", src, "Alpha is the first letter")), "t", "t")
    b = propose(
        vault, make_plan(vault, extend("alpha", src, "Beta is the second letter")), "t", "t"
    )
    dry = svc_approve_many(vault, [b.plan_id, a.plan_id], "api", dry_run=True)
    assert [p.plan_id for p in dry.preview] == [b.plan_id, a.plan_id] and not dry.results
    assert get_plan(vault, a.plan_id).status == "pending"
    done = svc_approve_many(vault, [b.plan_id, a.plan_id], "api")
    assert [r.applied for r in done.results] == [True, True] and done.commit


def test_a_journal_from_before_batches_still_recovers(
    vault: Vault, src: str, tmp_path: Path
) -> None:
    """A journal written before batches (``plan_id``, no ``batch``) still recovers."""
    proposal = propose(
        vault, make_plan(vault, page("alpha", src, "Alpha is the first letter")), "t", "t"
    )
    journal = {"plan_id": proposal.plan_id, "message": "m", "files": []}
    (vault.journal_dir / f"{proposal.plan_id}.json").write_text(json.dumps(journal))
    reopened = open_vault(vault.root, clock=vault.clock)
    try:
        assert list(reopened.journal_dir.iterdir()) == []
        assert get_plan(reopened, proposal.plan_id).status == "pending"
    finally:
        reopened.close()


def test_a_partial_approval_leaves_the_rest_approvable_from_the_cli(live: Vault) -> None:
    vault, src = live, add_text(live, "greek.md", TEXT)
    plan = make_plan(
        vault,
        page("alpha", src, "Alpha is the first letter"),
        page("delta", src, "Delta is the fourth letter"),
    )
    plan_id = propose(vault, plan, "t", "t").plan_id
    runner = CliRunner()
    root = str(vault.root)
    first = runner.invoke(main, ["--vault", root, "approve", plan_id[:8], "--ops", "1"])
    assert first.exit_code == 0, first.output
    assert f"affidavit approve {plan_id[:12]} --ops 2" in first.output
    listed = runner.invoke(main, ["--vault", root, "inbox"])
    assert plan_id[:12] in listed.output  # still pending, still expiring
    shown = runner.invoke(main, ["--vault", root, "inbox", "show", plan_id[:8]])
    assert "[1] create_page  — applied" in shown.output, shown.output
    assert "[2] create_page  — admitted" in shown.output
    rest = runner.invoke(main, ["--vault", root, "approve", plan_id[:8]])
    assert rest.exit_code == 0, rest.output
    assert (vault.wiki_dir / "delta.md").exists() and get_plan(vault, plan_id).status == "applied"
    assert run_doctor(vault).clean


# --- issue 14: a batch journal is untrusted input, validated whole ----------------------------


def _applied_batch(vault: Vault, src: str) -> str:
    """Apply two plans as one batch; returns the batch id the audit log names."""
    plans = [
        propose(vault, make_plan(vault, page(s, src, q)), "t", "t").plan_id
        for s, q in (
            ("alpha", "Alpha is the first letter"),
            ("delta", "Delta is the fourth letter"),
        )
    ]
    approve_many(vault, plans, None, "t")
    row = vault.db.execute(
        "SELECT json_extract(detail, '$.batch') FROM audit WHERE action = 'applied' "
        "ORDER BY seq DESC LIMIT 1"
    ).fetchone()
    return str(row[0])


@pytest.mark.parametrize(
    "forged",
    [
        {"plans": ["not-a-plan-id"]},
        {"plans": []},
        {"batch": "b-0123456789abcdef"},  # names another batch than its file name
        {
            "extra_file": {
                "path": "../outside.md",
                "temp": "wiki/.index.md.0123456789ab.affidavit-tmp",
            }
        },
        {"extra_file": {"path": "wiki/index.md", "temp": "../outside.md"}},
        {
            "extra_file": {
                "path": "wiki/alpha.md",
                "temp": "wiki/.index.md.0123456789ab.affidavit-tmp",
            }
        },
        {
            "extra_file": {
                "path": "sources/x.md",
                "temp": "sources/.x.md.0123456789ab.affidavit-tmp",
            }
        },
    ],
    ids=[
        "bad-plan-id",
        "no-plans",
        "other-batch",
        "path-out",
        "temp-out",
        "temp-of-other",
        "sources",
    ],
)
def test_a_forged_batch_journal_is_refused_whole(
    vault: Vault, src: str, tmp_path: Path, forged: dict[str, Any]
) -> None:
    """A batch journal (several plans, several files) with one bad part is refused whole: not
    even its valid entries are rewritten, and it stays for the doctor."""
    batch_id = _applied_batch(vault, src)  # committed: recovery would roll it forward
    plan_ids = [r[0] for r in vault.db.execute("SELECT id FROM plans ORDER BY id")]
    outside = vault.root.parent / "outside.md"
    outside.write_text("not the vault's\n")
    index = vault.wiki_dir / "index.md"
    index.write_text("a hand edit of the index\n")
    files = [{"path": "wiki/index.md", "temp": "wiki/.index.md.0123456789ab.affidavit-tmp"}]
    if "extra_file" in forged:
        files.append(forged["extra_file"])
    journal = {
        "batch": forged.get("batch", batch_id),
        "plans": forged.get("plans", plan_ids),
        "message": "forged",
        "files": files,
    }
    (vault.journal_dir / f"{batch_id}.json").write_text(json.dumps(journal))
    reopened = open_vault(vault.root, clock=vault.clock)
    try:
        assert [p.name for p in reopened.journal_dir.iterdir()] == [f"{batch_id}.json"]
        assert index.read_text() == "a hand edit of the index\n"  # its valid entry untouched
        assert outside.read_text() == "not the vault's\n"
        findings = [f for f in run_doctor(reopened).findings if f.check == "journal"]
        assert findings and "refuses" in findings[0].message
    finally:
        reopened.close()


def test_a_valid_batch_journal_rolls_forward_every_file(vault: Vault, src: str) -> None:
    """The same journal, valid: every file it names is re-rendered from the database and HEAD,
    which already carries the batch's trailer, gets no second commit."""
    batch_id = _applied_batch(vault, src)
    plan_ids = [r[0] for r in vault.db.execute("SELECT id FROM plans ORDER BY id")]
    expected = {p: (vault.wiki_dir / p).read_bytes() for p in ("index.md", "alpha.md")}
    for name in expected:
        (vault.wiki_dir / name).write_text("torn\n")
    commits = len(vault.git.log_subjects())
    files = [
        {"path": f"wiki/{n}", "temp": f"wiki/.{n}.0123456789ab.affidavit-tmp"} for n in expected
    ]
    journal = {"batch": batch_id, "plans": plan_ids, "message": "m", "files": files}
    (vault.journal_dir / f"{batch_id}.json").write_text(json.dumps(journal))
    reopened = open_vault(vault.root, clock=vault.clock)
    try:
        assert list(reopened.journal_dir.iterdir()) == []
        assert {n: (reopened.wiki_dir / n).read_bytes() for n in expected} == expected
        assert len(reopened.git.log_subjects()) == commits
        assert run_doctor(reopened).clean
    finally:
        reopened.close()


# --- issue 14: an ingest's chunks are one batch, and the wiki is the same -----------------------


def _ingest(root: Path, docs: Path, **batching: Any) -> tuple[dict[str, bytes], list[int]]:
    from affidavit.ingest.pipeline import Ingestor
    from affidavit.providers.from_config import provider_from_config

    from .conftest import FakeClock

    vault, _ = init_vault(root, clock=FakeClock())
    try:
        provider = provider_from_config(vault.config, "extractive")
        Ingestor(vault, provider, apply_now=True, **batching).run([str(docs)], "trusted")
        files = {p.name: p.read_bytes() for p in sorted(vault.wiki_dir.glob("*.md"))}
        bodies = vault.git.run("log", "--format=%B%x00").split("\0")
        trailers = [b.count("Affidavit-Plan:") for b in bodies if "Affidavit-Plan:" in b]
        assert run_doctor(vault).clean
    finally:
        vault.close()
    return files, trailers


def test_an_ingest_applies_its_chunks_as_one_batch_with_the_same_wiki(tmp_path: Path) -> None:
    """`ingest --yes` through the batch door: one commit naming every chunk's plan, and exactly
    the wiki that applying the plans one by one makes (each chunk saw its predecessors)."""
    from .conftest import SAMPLES

    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("1790-washington.md", "1941-roosevelt.md"):
        (docs / name).write_bytes((SAMPLES / "sotu" / name).read_bytes())
    one_by_one, singles = _ingest(tmp_path / "a", docs, batch_plans=1)
    batched, batches = _ingest(tmp_path / "b", docs, batch_seconds=3600)
    assert batched == one_by_one
    assert set(singles) == {1} and len(singles) >= 4
    assert batches == [len(singles)]  # one commit, one trailer per plan


def test_a_hand_edit_while_a_batch_is_open_is_never_overwritten(vault: Vault, src: str) -> None:
    """A page edited by hand after its plan joined an open batch: the batch refuses at its
    commit, whole, and the edit stays."""
    from affidavit.store.apply import Approval, Batch

    base = propose(
        vault, make_plan(vault, page("alpha", src, "Alpha is the first letter")), "t", "t"
    )
    approve(vault, base.plan_id, None, "t")
    first = propose(
        vault, make_plan(vault, extend("alpha", src, "Beta is the second letter")), "t", "t"
    )
    second = propose(
        vault, make_plan(vault, page("delta", src, "Delta is the fourth letter")), "t", "t"
    )
    edited = vault.wiki_dir / "alpha.md"
    refused = pytest.raises(ConflictError, match=r"wiki/alpha\.md was edited by hand")
    with refused, Batch(vault) as batch:
        batch.apply_many([(first.plan_id, None)], Approval("t"))
        edited.write_text(edited.read_text() + "\nMy own note.\n")
        batch.apply_many([(second.plan_id, None)], Approval("t"))
    assert edited.read_text().endswith("My own note.\n")
    assert get_plan(vault, first.plan_id).status == "pending"
    assert get_plan(vault, second.plan_id).status == "pending"
    assert list(vault.journal_dir.iterdir()) == []
