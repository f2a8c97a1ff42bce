"""The deterministic lint checks (SPEC W9) on a real vault: a clean wiki has no findings, and each
kind of problem, made for real (bytes flipped, files edited, rows changed, clocks moved), is found
exactly: its kind, its subject, the claims and pages it is about, and the fix it proposes."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from affidavit.config import load_config
from affidavit.doctor import run_doctor
from affidavit.inbox import approve, propose
from affidavit.lint.checks import CheckContext, check_stale_embedding, run_checks
from affidavit.lint.findings import CHECK_KINDS, Finding
from affidavit.plan.schema import parse_plan
from affidavit.retrieval.vectors import text_sha256, to_blob
from affidavit.vault import Vault

from .conftest import FakeClock, add_samples, add_text, claim, make_plan, sample_plan_text

ROOSEVELT = "80fe4d9fab5f87e51dcc9db90a9e41ab0b01a580f6690f092191e40873adc5f2"
PAGE = "wiki/four-freedoms.md"
FIRST = "The first is freedom of speech"


@pytest.fixture
def sample(vault: Vault) -> Vault:
    """The sample wiki (four-freedoms → monroe-doctrine → washington-1790), through the door."""
    add_samples(vault)
    approve(
        vault, propose(vault, sample_plan_text(vault), "tester", "sample").plan_id, None, "tester"
    )
    return vault


def apply_plan(vault: Vault, *ops: dict[str, Any]) -> str:
    proposal = propose(vault, make_plan(vault, *ops), "tester", "test")
    assert proposal.status == "pending", proposal.message
    approve(vault, proposal.plan_id, None, "tester")
    return proposal.plan_id


@pytest.fixture
def wiki(sample: Vault) -> Vault:
    """The sample wiki with its loop closed (washington-1790 → four-freedoms): nothing to find."""
    apply_plan(sample, {"op": "link_pages", "page": "washington-1790", "to": "four-freedoms"})
    return sample


def claim_citing(vault: Vault, quote_prefix: str) -> str:
    row = vault.db.execute(
        "SELECT claim_id FROM evidence WHERE quote LIKE ?", (quote_prefix + "%",)
    ).fetchone()
    return str(row[0])


def flip_byte(path: Path, needle: bytes) -> None:
    """Change one byte inside ``needle`` ("first" becomes "girst"; a case flip would verify)."""
    os.chmod(path, 0o644)
    data = bytearray(path.read_bytes())
    data[data.index(needle) + 4] ^= 0x01
    path.write_bytes(bytes(data))


@contextmanager
def raw_db(vault: Vault) -> Iterator[sqlite3.Connection]:
    """A second connection, as another process (or a person with sqlite3) would have."""
    db = sqlite3.connect(vault.state_dir / "db.sqlite")
    try:
        with db:
            yield db
    finally:
        db.close()


def by_kind(findings: list[Finding]) -> dict[str, list[Finding]]:
    out: dict[str, list[Finding]] = {}
    for finding in findings:
        out.setdefault(finding.kind, []).append(finding)
    return out


def about(finding: Finding) -> tuple[str, str, list[str], list[str]]:
    return finding.kind, finding.subject, finding.claims, finding.pages


def test_a_clean_wiki_has_no_findings_and_every_check_reports_progress(wiki: Vault) -> None:
    calls: list[tuple[str, int, int]] = []
    assert run_checks(wiki, progress=lambda *a: calls.append(a)) == []
    total = len(CHECK_KINDS)
    assert calls == [(k, n, total) for n, k in enumerate(CHECK_KINDS)] + [
        ("plan_expiring", total, total)
    ]
    assert run_doctor(wiki).clean


def test_a_flipped_byte_in_a_source_text_is_tampering_and_unverified_evidence(wiki: Vault) -> None:
    flip_byte(wiki.sources_dir / f"{ROOSEVELT}.extracted.txt", FIRST.encode())
    first = claim_citing(wiki, FIRST)
    found = run_checks(wiki)
    assert [about(f) for f in found] == [
        ("source_tampered", ROOSEVELT, [], []),
        ("evidence_unverified", first, [first], ["four-freedoms"]),
    ]
    tampered, evidence = found
    assert tampered.severity == "error" and "extracted text file" in tampered.message
    assert "no longer matches its SHA-256" in tampered.message
    assert f"checkout -- sources/{ROOSEVELT}.md sources/{ROOSEVELT}.extracted.txt" in (
        tampered.fix_hint
    )
    [quote] = evidence.quotes
    assert quote.verified is False and quote.quote.startswith(FIRST)
    assert (quote.claim_id, quote.source_id) == (first, ROOSEVELT)
    assert "quote not found in source" in quote.reason and quote.reason in evidence.message
    # the source was tampered with: restoring it is the fix, not retracting a good claim
    assert evidence.fix is None and ROOSEVELT[:12] in evidence.fix_hint


def test_a_flipped_byte_in_an_original_is_tampering_only(wiki: Vault) -> None:
    flip_byte(wiki.sources_dir / f"{ROOSEVELT}.md", FIRST.encode())
    [finding] = run_checks(wiki)
    assert about(finding) == ("source_tampered", ROOSEVELT, [], [])
    assert "original file" in finding.message and "extracted text" not in finding.message


def test_text_inserted_before_the_quotes_moves_them(wiki: Vault) -> None:
    path = wiki.sources_dir / f"{ROOSEVELT}.extracted.txt"
    os.chmod(path, 0o644)
    path.write_bytes(b"Inserted. " + path.read_bytes())
    citing = {
        r[0]: r[1]
        for r in wiki.db.execute(
            "SELECT DISTINCT c.id, c.page_slug FROM claims c JOIN evidence e ON e.claim_id = c.id "
            "WHERE e.source_id = ? AND c.status = 'active'",
            (ROOSEVELT,),
        )
    }
    found = by_kind(run_checks(wiki))
    assert set(found) == {"source_tampered", "evidence_unverified"}
    moved = found["evidence_unverified"]
    assert {f.subject: f.pages for f in moved} == {
        cid: [page] if page else [] for cid, page in citing.items()
    }
    assert len(citing) == 6 and ([] in [f.pages for f in moved])  # one is a context.md entry
    for finding in moved:
        assert finding.severity == "warning" and "moved in their source" in finding.message
        assert all(not q.verified and "recorded at" in q.reason for q in finding.quotes)


def test_a_quote_missing_from_an_intact_source_proposes_retracting_the_claim(
    wiki: Vault,
) -> None:
    first = claim_citing(wiki, FIRST)
    with raw_db(wiki) as db:
        # evidence is offsets (m021): the words recorded at them no longer match (their CRC)
        db.execute("UPDATE evidence_rows SET crc = crc + 1 WHERE claim_id = ?", (first,))
    found = run_checks(wiki)
    assert [about(f) for f in found] == [
        ("evidence_unverified", first, [first], ["four-freedoms"]),
        # the rendered footnote carries the quote, so the page now differs from the database
        ("file_drift", PAGE, [], ["four-freedoms"]),
    ]
    evidence = found[0]
    assert evidence.severity == "error"
    assert evidence.fix == {
        "op": "retract_claim",
        "claim": first,
        "reason": f"its evidence is no longer in source {ROOSEVELT[:12]}",
    }
    assert '"op": "retract_claim"' in evidence.fix_hint
    parse_plan({"nonce": "n" * 24, "operations": [evidence.fix]})  # a valid plan operation


def test_a_hand_edited_page_is_file_drift_with_a_diff(wiki: Vault) -> None:
    path = wiki.root / PAGE
    path.write_text(path.read_text().replace("first essential freedom", "first freedom"))
    [finding] = run_checks(wiki)
    assert about(finding) == ("file_drift", PAGE, [], ["four-freedoms"])
    assert finding.fix is None  # not an operation: doctor --propose reads the edit into a plan
    assert "doctor --propose" in finding.fix_hint
    diff = finding.message.splitlines()
    assert f"    --- {PAGE} (database)" in diff and f"    +++ {PAGE} (on disk)" in diff
    assert any(line.startswith("    -") and "first essential freedom" in line for line in diff)
    assert any(line.startswith("    +") and "first freedom" in line for line in diff)


def test_missing_and_unknown_files_are_file_drift(wiki: Vault) -> None:
    (wiki.root / "wiki/washington-1790.md").unlink()
    (wiki.wiki_dir / "notes.md").write_text("# My notes\n")
    (wiki.wiki_dir / ".obsidian").mkdir()
    (wiki.wiki_dir / ".obsidian" / "workspace.md").write_text("editor state\n")
    missing, unknown = run_checks(wiki)
    assert about(missing) == ("file_drift", "wiki/washington-1790.md", [], ["washington-1790"])
    assert missing.severity == "error" and missing.fix is None
    assert about(unknown) == ("file_drift", "wiki/notes.md", [], [])
    assert unknown.fix is None and "doctor --propose" in unknown.fix_hint


def test_links_to_missing_pages_on_disk_and_in_the_database(wiki: Vault) -> None:
    path = wiki.root / PAGE
    path.write_text(
        path.read_text()
        + "\nSee [[nowhere]], [[nowhere|again]], [elsewhere](elsewhere.md#top), [[monroe-doctrine]],"
        " ![[diagram.png]], [the source](../sources/abc.md), [web](https://example.org/x.md),"
        " [[index]] and [[context-archive]].\n"
    )
    (wiki.wiki_dir / "notes.md").write_text("Notes about [[ghost-page]].\n")
    with raw_db(wiki) as db:
        db.execute("INSERT INTO links (src, dst, plan_id) VALUES ('washington-1790', 'gone', 'x')")
        db.execute(
            "INSERT INTO links (src, dst, plan_id) VALUES ('vanished', 'monroe-doctrine', 'x')"
        )
    found = by_kind(run_checks(wiki))
    broken = {(f.subject, f.message.split("'")[1]): f for f in found["broken_link"]}
    assert sorted(broken) == [
        (PAGE, "elsewhere"),
        (PAGE, "nowhere"),
        ("wiki/monroe-doctrine.md", "vanished"),  # its "Linked from" shows the dangling row
        ("wiki/notes.md", "ghost-page"),
        ("wiki/washington-1790.md", "gone"),
    ]
    assert broken[(PAGE, "nowhere")].pages == ["four-freedoms", "nowhere"]
    assert broken[("wiki/notes.md", "ghost-page")].pages == ["ghost-page"]
    assert broken[("wiki/washington-1790.md", "gone")].pages == ["gone", "washington-1790"]
    assert "the links table" in broken[("wiki/washington-1790.md", "gone")].message
    assert "the file on disk" in broken[(PAGE, "nowhere")].message
    # the rows also change two pages' renderings, and the hand edits are drift of their own
    assert {f.subject for f in found["file_drift"]} == {
        PAGE,
        "wiki/notes.md",
        "wiki/monroe-doctrine.md",
        "wiki/washington-1790.md",
    }


def test_pages_nobody_links_to_are_orphans(sample: Vault) -> None:
    src = add_text(sample, "greek.md", "Alpha is the first letter of the Greek alphabet.\n")
    apply_plan(
        sample,
        {
            "op": "create_page",
            "slug": "alpha",
            "title": "Alpha",
            "summary": "The first letter of the Greek alphabet.",
            "claims": [claim("Alpha is the first letter.", src, "Alpha is the first letter")],
        },
    )
    found = run_checks(sample)
    assert [about(f) for f in found] == [
        ("orphan_page", "alpha", [], ["alpha"]),
        ("orphan_page", "four-freedoms", [], ["four-freedoms"]),
    ]
    alpha, freedoms = found
    assert alpha.severity == "info" and alpha.fix is None and '"to": "alpha"' in alpha.fix_hint
    # it links to monroe-doctrine already: the obvious fix is the link back
    assert freedoms.fix == {"op": "link_pages", "page": "monroe-doctrine", "to": "four-freedoms"}
    apply_plan(sample, freedoms.fix)  # a plan operation as is: through the door, it fixes it
    assert [about(f) for f in run_checks(sample)] == [("orphan_page", "alpha", [], ["alpha"])]


def test_a_page_without_active_claims_is_empty(wiki: Vault) -> None:
    with raw_db(wiki) as db:  # its claims went out of the wiki (as a retraction does)
        db.execute("UPDATE claims SET status = 'retracted' WHERE page_slug = 'washington-1790'")
    found = run_checks(wiki)
    assert [about(f) for f in found] == [
        ("empty_page", "washington-1790", [], ["washington-1790"]),
        ("file_drift", "wiki/washington-1790.md", [], ["washington-1790"]),
    ]
    assert found[0].message == (
        "page 'washington-1790' has no active claims (1 claim(s) in its history, none active)"
    )
    assert '"op": "add_claims", "page": "washington-1790"' in found[0].fix_hint


def test_a_deleted_index_and_an_edited_log_are_drift(wiki: Vault) -> None:
    (wiki.wiki_dir / "index.md").unlink()
    log = wiki.wiki_dir / "log.md"
    log.write_text(log.read_text().replace("Approved by", "Signed off by", 1))
    index, log_drift = run_checks(wiki)
    assert about(index) == ("index_drift", "wiki/index.md", [], [])
    assert index.message == "wiki/index.md is missing"
    assert about(log_drift) == ("log_drift", "wiki/log.md", [], [])
    lines = log_drift.message.splitlines()
    assert lines[0] == "wiki/log.md differs from what the database renders:"
    assert "    -Approved by tester." in lines and "    +Signed off by tester." in lines
    assert len(lines) <= 1 + 2 + 8 + 1  # a few lines of the diff, not the whole file
    assert "checkout -- wiki/log.md" in log_drift.fix_hint


def test_context_over_its_cap(wiki: Vault) -> None:
    sentences = [f"Entry number {n} of the overview is a sentence." for n in range(10)]
    src = add_text(wiki, "overview.md", "\n".join(sentences) + "\n")
    entries = [claim(s, src, s) for s in sentences]
    apply_plan(wiki, {"op": "update_context", "entries": entries})
    assert run_checks(wiki) == []
    lines = (wiki.wiki_dir / "context.md").read_text().count("\n")
    config = wiki.config_path.read_text().replace("max_lines = 400", "max_lines = 20")
    wiki.config_path.write_text(config)
    wiki.config = load_config(wiki.config_path)
    [finding] = run_checks(wiki)
    assert about(finding) == ("context_over_cap", "wiki/context.md", [], [])
    assert finding.message == f"wiki/context.md has {lines} lines, over its cap of 20 " + (
        "(context.max_lines)"
    )


class FakeEmbedder:
    def __init__(self, name: str = "mini", version: str = "2", dim: int = 4) -> None:
        self.name, self.version, self.dim = name, version, dim

    def embed(self, texts: Any) -> Any:
        return np.ones((len(texts), self.dim), dtype=np.float32) / 2


def test_stale_vectors(wiki: Vault) -> None:
    ctx = CheckContext(wiki)
    assert check_stale_embedding(ctx) == [] and ctx._embedder is None  # no vectors: no model
    rows = wiki.db.execute("SELECT id, text FROM claims WHERE status = 'active' ORDER BY id")
    claims = [(r[0], r[1]) for r in rows][:4]
    vector = to_blob(np.ones(4, dtype=np.float32) / 2)
    lineage = [("mini", "2"), ("mini", "2"), ("mini", "1"), ("mini", "2")]
    with raw_db(wiki) as db:
        for (cid, text), (model, version) in zip(claims, lineage, strict=True):
            sha = text_sha256(text + " (edited)" if cid == claims[1][0] else text)
            db.execute(
                "INSERT INTO vectors (claim_id, model, model_version, text_sha256, dim, vector, "
                "created_at) VALUES (?, ?, ?, ?, 4, ?, 'x')",
                (cid, model, version, sha, vector),
            )
        db.execute("UPDATE claims SET status = 'superseded' WHERE id = ?", (claims[3][0],))
    context = CheckContext(wiki, embedder=FakeEmbedder())
    found = run_checks(wiki, kinds=["stale_embedding"], context=context)
    assert [about(f) for f in found] == [
        ("stale_embedding", "vectors/inactive", [], []),
        ("stale_embedding", "vectors/text", [], []),
        ("stale_embedding", "vectors/mini/1", [], []),
    ]
    inactive, text, old = found
    assert inactive.message.endswith(f": {claims[3][0]}") and "1 vector(s)" in inactive.message
    assert text.message.endswith(f": {claims[1][0]}")
    assert old.message.startswith("1 vector(s) of mini 1 (4 dimensions)")
    assert all("affidavit reindex" in f.fix_hint for f in found)


def test_pending_plans_near_their_expiry(wiki: Vault, clock: FakeClock) -> None:
    plan_id = propose(
        wiki,
        make_plan(wiki, {"op": "link_pages", "page": "four-freedoms", "to": "washington-1790"}),
        "tester",
        "test",
    ).plan_id
    clock.advance(hours=17)  # 7 hours left, the window is 6
    assert run_checks(wiki) == []
    clock.advance(hours=2, minutes=30)
    [finding] = run_checks(wiki)
    assert about(finding) == ("plan_expiring", plan_id, [], [])
    assert finding.message == (
        f"pending plan {plan_id[:12]} by tester (test) expires in 4h 30m (2026-12-01T09:00:00Z)"
    )
    assert f"affidavit approve {plan_id[:12]}" in finding.fix_hint
    clock.advance(hours=5)
    [late] = run_checks(wiki)
    assert late.fingerprint == finding.fingerprint
    assert late.message == (
        f"pending plan {plan_id[:12]} by tester (test) expired 30m ago (2026-12-01T09:00:00Z) "
        "and can no longer be applied"
    )


def test_fingerprints_are_stable_across_runs(sample: Vault) -> None:
    flip_byte(sample.sources_dir / f"{ROOSEVELT}.extracted.txt", FIRST.encode())
    (sample.wiki_dir / "index.md").unlink()
    (sample.wiki_dir / "notes.md").write_text("Notes about [[ghost-page]].\n")
    first = run_checks(sample)
    second = run_checks(sample, verifier=CheckContext(sample).verifier)
    assert {f.kind for f in first} == {
        "broken_link",
        "orphan_page",
        "index_drift",
        "source_tampered",
        "evidence_unverified",
        "file_drift",
    }
    assert [f.fingerprint for f in first] == [f.fingerprint for f in second]
    assert [f.model_dump() for f in first] == [f.model_dump() for f in second]
    assert len({f.fingerprint for f in first}) == len(first)


def test_unknown_check_kinds_are_refused(wiki: Vault) -> None:
    with pytest.raises(ValueError, match="unknown check"):
        run_checks(wiki, kinds=["spelling"])
