"""Trust rules mean what they say: a scheme-less host rule is that site on its default ports, not
any service on another port of the host; and `doctor` re-derives every claim's trust from its
evidence and sets every source's tier beside its rule."""

from __future__ import annotations

import sqlite3

import pytest

from affidavit.doctor import run_doctor
from affidavit.inbox import approve, propose
from affidavit.sources.store import SourceStore
from affidavit.sources.trust import trust_for
from affidavit.vault import Vault, open_vault

from .conftest import add_text, claim, make_plan

RULES = [
    {"pattern": "example.com", "tier": "trusted"},
    {"pattern": "*.wiki.example", "tier": "semi-trusted"},
    {"pattern": "example.com:8443/docs/", "tier": "semi-trusted"},
    {"pattern": "[::1]:8080", "tier": "trusted"},
    {"pattern": "bad.example:http", "tier": "trusted"},
]


@pytest.mark.parametrize(
    ("origin", "tier"),
    [
        ("http://example.com/a", "trusted"),
        ("https://example.com/a", "trusted"),
        ("https://example.com:443/a", "trusted"),  # the default port, written
        ("http://example.com:80/a", "trusted"),
        # another port of the same host is another service: a dev server, an upload endpoint
        ("http://example.com:8080/a", "untrusted"),
        ("https://example.com:8443/a", "untrusted"),
        ("http://example.com:443/a", "untrusted"),  # 443 is not http's default port
        ("https://example.com:80/a", "untrusted"),
        ("https://en.wiki.example:9000/page", "untrusted"),
        ("https://en.wiki.example/page", "semi-trusted"),
        # a port written in the rule: that port only
        ("https://example.com:8443/docs/x", "semi-trusted"),
        ("http://example.com:8443/docs/x", "semi-trusted"),
        ("https://example.com:8443/other", "untrusted"),
        ("http://[::1]:8080/x", "trusted"),
        ("http://[::1]/x", "untrusted"),
        # a port that is not a number makes the rule match nothing
        ("http://bad.example/x", "untrusted"),
    ],
)
def test_a_scheme_less_rule_matches_default_ports_unless_a_port_is_written(
    origin: str, tier: str
) -> None:
    assert trust_for(origin, RULES, "untrusted").tier == tier


def _plan(vault: Vault, source: str) -> dict[str, object]:
    return make_plan(
        vault,
        {
            "op": "create_page",
            "slug": "bridge",
            "title": "The bridge",
            "summary": "The bridge opened in 1932.",
            "claims": [claim("The bridge opened in 1932.", source, "The bridge opened in 1932")],
        },
    )


def test_doctor_reports_a_claims_trust_raised_in_the_database(vault: Vault) -> None:
    source = add_text(vault, "n.md", "The bridge opened in 1932 after six years.", "untrusted")
    done = propose(vault, _plan(vault, source), "ann", "test")
    approve(vault, done.plan_id, None, "ann")
    report = run_doctor(vault)
    assert report.clean, report.findings
    assert report.counts["trust_rederived_claims"] == 1
    db = sqlite3.connect(vault.state_dir / "db.sqlite")
    with db:  # an attacker with the database: the claim now outranks trusted ones (W7)
        db.execute("UPDATE claims SET trust = 'trusted'")
    db.close()
    report = run_doctor(vault)
    [finding] = [f for f in report.findings if f.check == "trust"]
    assert "recorded as trusted but rests on untrusted evidence" in finding.message


def test_doctor_notes_a_source_whose_tier_its_rule_does_not_give(vault: Vault) -> None:
    SourceStore(vault).add_bytes(  # no --trust: sources.default_trust (semi-trusted) gives it
        b"The bridge opened in 1932 after six years.", origin="/test/n.md", name="n.md",
        media_type="text/markdown",
    )  # fmt: skip
    assert run_doctor(vault).notes == []
    db = sqlite3.connect(vault.state_dir / "db.sqlite")
    with db:  # a tier below the rule's is always safe: nothing to say
        db.execute("UPDATE sources SET trust = 'untrusted'")
    assert run_doctor(vault).notes == []
    with db:  # above it: said, with what to do
        db.execute("UPDATE sources SET trust = 'trusted'")
    db.close()
    root, clock = vault.root, vault.clock
    report = run_doctor(vault)
    [note] = report.notes
    assert "is trusted; sources.default_trust gives" in note
    # a rule that gives the recorded tier: nothing to note
    vault.config_path.write_text(
        '[trust]\nrules = [{ pattern = "/test/", tier = "trusted" }]\n', encoding="utf-8"
    )
    vault.close()
    again = open_vault(root, clock=clock)
    try:
        assert run_doctor(again).notes == []
    finally:
        again.close()


def test_a_tier_chosen_with_trust_is_no_note_but_a_row_raised_above_it_is(vault: Vault) -> None:
    """``sources add --trust trusted`` above the default is the person's choice (the quickstart
    does it): doctor says nothing on every later run. A row raised above the chosen tier is."""
    add_text(vault, "t.md", "The bridge opened in 1932 after six years.", "trusted")
    add_text(vault, "s.md", "The tunnel opened in 1940 after two years.", "semi-trusted")
    assert run_doctor(vault).notes == []
    db = sqlite3.connect(vault.state_dir / "db.sqlite")
    with db:
        db.execute("UPDATE sources SET trust = 'trusted' WHERE origin = '/test/s.md'")
    db.close()
    [note] = run_doctor(vault).notes
    assert "/test/s.md) is trusted; it was added with --trust semi-trusted" in note
