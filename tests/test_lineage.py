"""Versions of a source (issue 27 item 1): a changed file is a new version of its origin, its
unchanged claims are carried without a person, what changed is proposed for a person, a deleted
file's claims get a retraction proposal; all through the one door."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from affidavit.cli import main
from affidavit.errors import AdmissionError
from affidavit.inbox import get_plan, propose
from affidavit.ingest.lineage import ingest_changed, propose_deleted
from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.sources.lineage import origin_key
from affidavit.sources.store import SourceStore
from affidavit.store.apply import gate_services
from affidavit.store.replay import claim_problems
from affidavit.vault import Vault, open_vault

from .conftest import fresh_nonce

V1 = (
    "# Harbour\n\n"
    "The harbour wall was rebuilt in 1904 after a storm destroyed the old pier.\n\n"
    "Fishing boats land their catch at the north quay every morning.\n\n"
    "The lighthouse keeper lived in a cottage beside the tower until 1950.\n\n"
    "Tourists visit the harbour museum during the summer months.\n"
)
V2 = (
    "# Harbour\n\n"
    "The harbour wall was rebuilt in 1911 after a storm destroyed the old pier.\n\n"
    "Fishing boats land their catch at the north quay every morning.\n\n"
    "Tourists visit the harbour museum during the summer months.\n\n"
    "A ferry terminal opened on the south side of the harbour in 2019.\n"
)
RAIL = (
    "# Railways\n\n"
    "The mountain railway climbs 1,200 metres over eleven kilometres of track.\n\n"
    "Its steepest gradient is one in eight near the summit station.\n"
)


def ingest(vault: Vault, *targets: Path) -> dict[str, object]:
    report = Ingestor(vault, ExtractiveProvider(), apply_now=True).run(
        [str(t) for t in targets], "trusted"
    )
    return report.to_json()


def live(vault: Vault) -> dict[str, tuple[str, str]]:
    """Active claims: id -> (text, the source of their first evidence)."""
    return {
        r[0]: (r[1], r[2])
        for r in vault.db.execute(
            "SELECT c.id, c.text, e.source_id FROM claims c JOIN evidence e ON e.claim_id = c.id "
            "AND e.idx = 0 WHERE c.status = 'active'"
        )
    }


def pending_lineage(vault: Vault) -> list[dict[str, object]]:
    ops = []
    for (plan_id,) in vault.db.execute(
        "SELECT id FROM plans WHERE status = 'pending' AND origin LIKE 'lineage:%'"
    ):
        record = get_plan(vault, plan_id)
        for op, verdict in zip(record.plan.operations, record.admission.ops, strict=True):
            ops.append({**op.model_dump(mode="json", exclude_none=True), "detail": verdict.detail})
    return ops


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "harbour.md").write_text(V1)
    (folder / "rail.md").write_text(RAIL)
    return folder


def test_a_changed_file_is_a_new_version_its_claims_carried_without_a_person(
    vault: Vault, docs: Path
) -> None:
    ingest(vault, docs)
    before = live(vault)
    v1 = SourceStore(vault).list()[0 if "harbour" in SourceStore(vault).list()[0].name else 1]
    (docs / "harbour.md").write_text(V2)
    report = ingest(vault, docs)
    harbour = next(s for s in report["sources"] if s["name"] == "harbour.md")  # type: ignore[index, union-attr]
    lineage = harbour["lineage"]
    assert lineage["version"] == 2 and lineage["replaces"] == [v1.id]
    v2 = SourceStore(vault).get(lineage["source_id"])
    assert (v2.version, v2.previous_id, v2.origin_key) == (
        2,
        v1.id,
        origin_key(docs / "harbour.md"),
    )
    after = live(vault)
    # unchanged sentences: the same claims, now citing version 2 at its offsets
    for claim_id, (text, _source) in before.items():
        if "Fishing boats" in text or "Tourists" in text:
            assert after[claim_id] == (text, v2.id)
    assert lineage["carried"] >= 2
    carry = vault.db.execute(
        "SELECT status, decided_by FROM plans WHERE origin LIKE 'lineage:carry:%'"
    ).fetchall()
    assert [tuple(r) for r in carry] == [("applied", "policy")]  # no person
    text = SourceStore(vault).text(v2.id)
    for start, end, quote, _source in vault.db.execute(
        'SELECT start, "end", quote, source_id FROM evidence WHERE source_id = ?', (v2.id,)
    ):
        assert text[start:end] == quote
    # history: the audit entry keeps both versions' offsets
    entry = json.loads(
        vault.db.execute(
            "SELECT detail FROM audit WHERE action = 'applied' AND plan_id = ?",
            (lineage["plans"][0],),
        ).fetchone()[0]
    )
    op = entry["ops"][0]
    assert op["kind"] == "carry_source" and op["source"] == v1.id and op["to"] == v2.id
    assert set(op["was"]) == set(op["carried"])
    # the doctor re-derives the carried evidence from the audit log: nothing unexplained
    store, verifier = gate_services(vault)
    _, problems = claim_problems(vault.db, verifier, store)
    assert problems == []


def test_changed_and_removed_sentences_get_proposals_with_both_versions_words(
    vault: Vault, docs: Path
) -> None:
    ingest(vault, docs)
    (docs / "harbour.md").write_text(V2)
    ingest(vault, docs)
    ops = pending_lineage(vault)
    supersede = [op for op in ops if op["op"] == "supersede_claim"]
    retract = [op for op in ops if op["op"] == "retract_claim"]
    assert supersede and all("1904" in str(op["reason"]) for op in supersede)
    assert all("1911" in str(op["reason"]) for op in supersede)
    texts = dict(vault.db.execute("SELECT id, text FROM claims").fetchall())
    for op in supersede:  # the claim the model wrote from the new words succeeds the old one
        assert "1904" in texts[op["claim"]] and "1911" in op["by"]["text"]
    # ... held out of the chunk's plan: the new fact is not in the wiki beside the old one
    assert not [t for t in texts.values() if "1911" in t]
    assert retract and all("lighthouse keeper" in str(op["reason"]) for op in retract)
    assert all("radius" in op["detail"] for op in retract)  # blast radius shown
    # withdrawals wait for a person: the old claims are still active
    assert all(
        vault.db.execute("SELECT status FROM claims WHERE id = ?", (op["claim"],)).fetchone()[0]
        == "active"
        for op in ops
    )
    # the unchanged file was not touched
    assert all("mountain" not in str(op.get("reason")) for op in ops)


def test_same_bytes_again_change_nothing(vault: Vault, docs: Path) -> None:
    ingest(vault, docs)
    plans = vault.db.execute("SELECT count(*) FROM plans").fetchone()[0]
    report = ingest(vault, docs)
    assert report["totals"]["sources"] == {"unchanged": 2}  # type: ignore[index]
    assert vault.db.execute("SELECT count(*) FROM plans").fetchone()[0] == plans
    assert vault.db.execute("SELECT max(version) FROM sources").fetchone()[0] == 1


def test_only_the_changed_chunks_are_read_again(vault: Vault, tmp_path: Path) -> None:
    vault.config_path.write_text(
        vault.config_path.read_text().replace("chunk_chars = 6000", "chunk_chars = 500")
    )
    vault = open_vault(vault.root, clock=vault.clock)
    paragraphs = [
        f"Station {n} of the survey recorded {100 + n} nesting pairs of terns on the dunes."
        for n in range(40)
    ]
    doc = tmp_path / "survey.md"
    doc.write_text("# Survey\n\n" + "\n\n".join(paragraphs) + "\n")
    first = ingest(vault, doc)
    edited = list(paragraphs)
    edited[20] = edited[20].replace("120 nesting", "125 nesting")
    doc.write_text("# Survey\n\n" + "\n\n".join(edited) + "\n")
    second = ingest(vault, doc)
    assert first["totals"]["model_calls"] >= 6  # type: ignore[index]
    assert second["totals"]["model_calls"] <= 1  # type: ignore[index]
    source = second["sources"][0]  # type: ignore[index]
    assert source["lineage"]["carried"] >= 30
    # one proposal for the changed sentence's claim: the ingest's stale fix (the model wrote
    # the new sentence's claim) or the new version's own, never both
    ops = [
        op
        for (text,) in vault.db.execute("SELECT plan_json FROM plans WHERE status = 'pending'")
        for op in json.loads(text)["operations"]
        if op["op"] in ("supersede_claim", "retract_claim")
    ]
    texts = dict(vault.db.execute("SELECT id, text FROM claims").fetchall())
    assert ops and all("120 nesting" in texts[op["claim"]] for op in ops)
    assert len({op["claim"] for op in ops}) == len(ops)


def test_a_deleted_file_gets_a_retraction_proposal_once(vault: Vault, docs: Path) -> None:
    ingest(vault, docs)
    (docs / "rail.md").unlink()
    report = ingest(vault, docs)
    deleted = report["totals"]["deleted"]  # type: ignore[index]
    assert len(deleted) == 1
    record = get_plan(vault, deleted[0])
    assert record.status == "pending"  # waits for a person
    op = record.plan.operations[0]
    assert op.op == "retract_source"
    assert record.admission.ops[0].detail["radius"]["retracted"]
    again = ingest(vault, docs)
    assert "deleted" not in again["totals"]  # type: ignore[operator]
    assert propose_deleted(vault, [docs / "rail.md"]) == []  # pending already


def test_sources_gone_proposes_for_a_named_file(vault: Vault, docs: Path) -> None:
    ingest_changed(vault, [docs / "rail.md"], provider=ExtractiveProvider(), apply_now=True)
    runner = CliRunner()
    result = runner.invoke(
        main, ["--vault", str(vault.root), "sources", "gone", str(docs / "rail.md"), "--json"]
    )
    assert result.exit_code == 0, result.output
    proposed = json.loads(result.output)["proposed"]
    assert len(proposed) == 1 and proposed[0]["status"] == "pending"


def _carry_plan(vault: Vault, source: str, to: str, claims: list[str]) -> dict[str, object]:
    return {
        "nonce": fresh_nonce(vault),
        "operations": [{"op": "carry_source", "source": source, "to": to, "claims": claims}],
    }


def test_carry_to_a_source_of_another_origin_is_refused(vault: Vault, docs: Path) -> None:
    """The attacker's carry: re-point claims at an unrelated source's matching words."""
    ingest(vault, docs)
    other = docs.parent / "copy.md"
    other.write_text(V1 + "\nAn unrelated line.\n")
    ingest(vault, other)
    store = SourceStore(vault)
    harbour = next(r for r in store.list() if r.name == "harbour.md")
    copy = next(r for r in store.list() if r.name == "copy.md")
    claims = [c for c, (_, s) in live(vault).items() if s == harbour.id]
    with pytest.raises(AdmissionError, match="not a newer version"):
        propose(vault, _carry_plan(vault, harbour.id, copy.id, claims), "mallory", "cli")


def test_an_agents_carry_waits_and_a_vanished_quote_is_not_carried(
    vault: Vault, docs: Path
) -> None:
    ingest(vault, docs)
    store = SourceStore(vault)
    v1 = next(r for r in store.list() if r.name == "harbour.md")
    claims = [c for c, (_, s) in live(vault).items() if s == v1.id]
    # a new version stored without an ingest (nothing carried yet)
    v2 = store.add_bytes(V2.encode(), str(docs / "harbour.md"), "harbour.md", trust="trusted")
    assert v2.record.previous_id == v1.id
    agent = propose(vault, _carry_plan(vault, v1.id, v2.record.id, claims), "token:t1", "mcp")
    assert agent.status == "pending" and agent.admission.needs_approval  # W13
    detail = agent.admission.ops[0].detail
    left = detail["left"]
    texts = dict(vault.db.execute("SELECT id, text FROM claims").fetchall())
    assert all("1904" in texts[c] or "lighthouse" in texts[c] for c in left)
    assert all("1904" not in texts[c] for c in detail["carried"])
    person = propose(vault, _carry_plan(vault, v1.id, v2.record.id, claims), "person:me", "cli")
    assert person.status == "applied"


def test_a_less_trusted_new_version_carries_nothing(vault: Vault, docs: Path) -> None:
    ingest(vault, docs)
    store = SourceStore(vault)
    v1 = next(r for r in store.list() if r.name == "harbour.md")
    claims = [c for c, (_, s) in live(vault).items() if s == v1.id]
    v2 = store.add_bytes(V1.encode() + b"\nMore.\n", str(docs / "harbour.md"), "harbour.md")
    assert v2.record.trust != "trusted"
    result = propose(vault, _carry_plan(vault, v1.id, v2.record.id, claims), "person:me", "cli")
    assert result.status == "rejected"
    assert set(result.admission.ops[0].detail["left"]) == set(claims)
    assert all(s == v1.id for c, (_, s) in live(vault).items() if c in claims)


def test_origin_keys_normalise_paths_and_urls(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    assert origin_key(tmp_path / "a" / ".." / "x.md") == (tmp_path / "x.md").resolve().as_posix()
    assert origin_key("HTTPS://Example.ORG:443/doc#part") == "https://example.org/doc"
    assert origin_key("http://example.org:8080/a?b=1") == "http://example.org:8080/a?b=1"
