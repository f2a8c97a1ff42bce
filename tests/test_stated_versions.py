"""A version or date the sources themselves state (issue 24 item 3, issue 27): two releases of
one document in different folders are ordered by the versions they state, never by which was
ingested later; one release orders nothing; an attacker's "Version 999" retires nothing."""

from __future__ import annotations

import json
from pathlib import Path

from affidavit.ingest.pipeline import Ingestor
from affidavit.lint.runner import run_lint
from affidavit.plan.stored import plan_text
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.service.vaults import get_source
from affidavit.sources.stated import stated_of
from affidavit.vault import Vault, init_vault

from .conftest import FakeClock


def _guide(version: str, knobs: int, extra: str = "") -> str:
    return (
        "# Widget Guide\n\n"
        f"Version {version}\n\n"
        f"The widget control panel has {knobs} brass knobs on its front plate.\n\n"
        "The widget ships in a cardboard box with a printed manual.\n"
        f"{extra}"
    )


def _ingest(vault: Vault, path: Path, trust: str) -> None:
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(path)], trust)


def _vault(tmp_path: Path) -> tuple[Vault, FakeClock]:
    clock = FakeClock()
    vault, _ = init_vault(tmp_path / "vault", clock=clock)
    return vault, clock


def _knob_claims(vault: Vault) -> dict[str, str]:
    """Active claims about the knobs: text -> id."""
    return {
        text: claim_id
        for claim_id, text in vault.db.execute(
            "SELECT id, text FROM claims WHERE status = 'active' AND text LIKE '%brass knobs%'"
        )
    }


def _withdrawals(vault: Vault) -> list[tuple[str, dict[str, object]]]:
    return [
        (row["status"], op)
        for row in vault.db.execute("SELECT * FROM plans")
        for op in json.loads(plan_text(row, vault.db))["operations"]
        if op["op"] in ("supersede_claim", "retract_claim")
    ]


def test_what_a_document_states_about_itself_is_read_and_a_mention_is_not() -> None:
    html = (
        b'<html><head><title>git-commit(1)</title><meta name="version" content="2.39.2">'
        b"</head><body>...</body></html>"
    )
    stated = stated_of("git-commit.html", "/r/git-2.39/git-commit.html", html, "git-commit(1)\n")
    assert stated is not None and (stated.kind, stated.value) == ("version", "2.39.2")
    assert stated.document == "git-commit.html|git-commit( )"
    front = b"---\ntitle: Guide\nupdated: 2024-05-01\n---\n# Guide\n"
    stated = stated_of("guide.md", "/a/guide.md", front, "# Guide\n")
    assert stated is not None and (stated.kind, stated.value) == ("date", "2024-05-01")
    text = "# Guide\n\nLast updated: May 1, 2024\n\nBody."
    stated = stated_of("guide.md", "/a/guide.md", text.encode(), text)
    assert stated is not None and stated.value == "2024-05-01"
    newer = stated_of("guide.md", "/b/guide.md", b"", "# Guide\n\nVersion 3.10\n")
    older = stated_of("guide.md", "/a/guide.md", b"", "# Guide\n\nVersion 3.9\n")
    assert newer and older and newer.key == older.key and newer.rank > older.rank
    title = stated_of("index.html", "/d/index.html", b"", "SQLite 3.40.1 Manual\n\nText.")
    assert title is not None and title.value == "3.40.1"
    # a sentence that mentions a version or a date states nothing about the document
    for body in (
        "# Guide\n\nThe widget moved to version 3.2 of the protocol in 2019.\n",
        "# Guide\n\nIt was last updated on May 1, 2024 by the council, which met twice.\n",
        "# Joseph R. Biden, 2023\n\nMr. Speaker, thank you.\n",
    ):
        assert stated_of("guide.md", "/a/guide.md", body.encode(), body) is None


def test_two_releases_in_different_folders_follow_their_stated_versions(
    tmp_path: Path,
) -> None:
    vault, clock = _vault(tmp_path)
    old, new = tmp_path / "release-a" / "guide.md", tmp_path / "release-b" / "guide.md"
    for path, version, knobs in ((old, "1.0", 4), (new, "2.0", 6)):
        path.parent.mkdir()
        path.write_text(_guide(version, knobs))
    # the NEWER release is ingested first: "ingested later" would call the newer one stale
    _ingest(vault, new, "trusted")
    clock.advance(days=30)
    _ingest(vault, old, "trusted")
    stated = {r[0]: r[1] for r in vault.db.execute("SELECT origin, stated FROM sources")}
    assert stated == {str(old): "1.0", str(new): "2.0"}
    new_id = vault.db.execute("SELECT id FROM sources WHERE stated = '2.0'").fetchone()[0]
    assert get_source(vault, new_id).stated == "2.0"  # the HTTP API's model carries it
    claims = _knob_claims(vault)
    old_claim = next(c for t, c in claims.items() if " 4 " in t)
    new_claim = next(c for t, c in claims.items() if " 6 " in t)
    report = run_lint(vault, propose=True)
    stale = [s.finding for s in report.findings if s.finding.kind == "stale"]
    assert [f.claims for f in stale] == [[old_claim, new_claim]]
    ops = _withdrawals(vault)
    assert ops and {op["claim"] for _, op in ops} == {old_claim}
    assert all(status == "pending" for status, _ in ops)  # a person decides, even under --yes
    assert old_claim in _knob_claims(vault).values()


def test_one_release_states_one_version_and_nothing_is_stale(tmp_path: Path) -> None:
    vault, clock = _vault(tmp_path)
    docs = tmp_path / "release"
    docs.mkdir()
    # two documents of one release, both "Version 2.0", stating different numbers for
    # different things, and the same file name in two folders with different titles
    (docs / "guide.md").write_text(_guide("2.0", 6))
    (docs / "panel.md").write_text(_guide("2.0", 8).replace("Widget Guide", "Panel Notes"))
    (docs / "more").mkdir()
    (docs / "more" / "guide.md").write_text(
        _guide("2.1", 5).replace("Widget Guide", "Gadget Guide")
    )
    for path in sorted(docs.rglob("*.md")):
        _ingest(vault, path, "trusted")
        clock.advance(minutes=1)
    report = run_lint(vault, propose=True)
    assert not [s for s in report.findings if s.finding.kind == "stale"]
    assert not [op for _, op in _withdrawals(vault) if op["op"] == "supersede_claim"]


def test_an_attackers_version_999_retires_no_trusted_claim(tmp_path: Path) -> None:
    vault, clock = _vault(tmp_path)
    trusted, planted = tmp_path / "docs" / "guide.md", tmp_path / "upload" / "guide.md"
    trusted.parent.mkdir()
    planted.parent.mkdir()
    trusted.write_text(_guide("2.0", 6))
    planted.write_text(_guide("999", 0))
    _ingest(vault, trusted, "trusted")
    clock.advance(days=1)
    _ingest(vault, planted, "untrusted")
    report = run_lint(vault, propose=True)
    kinds = [s.finding.kind for s in report.findings]
    assert "stale" not in kinds
    trusted_claim = next(c for t, c in _knob_claims(vault).items() if " 6 " in t)
    assert trusted_claim in _knob_claims(vault).values()
    assert not [op for _, op in _withdrawals(vault) if op["claim"] == trusted_claim]
    # a contradiction, for a person, naming the newer version's weaker trust
    contradiction = [s.finding for s in report.findings if s.finding.kind == "contradiction"]
    assert contradiction and "less trusted" in (contradiction[0].fix_hint or "")
