"""Trust rules: longest match wins, hosts match whole labels, prefixes end at segments."""

from __future__ import annotations

from pathlib import Path

import pytest

from affidavit.sources.trust import trust_for

RULES = [
    {"pattern": "trusted.org", "tier": "trusted"},
    {"pattern": "*.wiki.example", "tier": "semi-trusted"},
    {"pattern": "wiki.example/talk/", "tier": "untrusted"},
    {"pattern": "https://docs.example.com/stable/", "tier": "trusted"},
    {"pattern": "/home/me/papers/", "tier": "trusted"},
    {"pattern": "/home/me/papers/drafts", "tier": "untrusted"},
]


@pytest.mark.parametrize(
    ("origin", "tier"),
    [
        ("https://trusted.org/a", "trusted"),
        ("http://TRUSTED.org./a", "trusted"),
        ("https://trusted.org.evil.net/a", "semi"),
        ("https://eviltrusted.org/a", "semi"),
        ("https://sub.trusted.org/a", "semi"),
        ("https://en.wiki.example/page", "semi-trusted"),
        ("https://wiki.example/page", "semi-trusted"),
        ("https://wiki.example/talk/page", "untrusted"),
        ("https://wiki.example/talkative", "semi-trusted"),
        ("https://docs.example.com/stable/x.html", "trusted"),
        ("http://docs.example.com/stable/x.html", "semi"),
        ("https://docs.example.com/stable-evil/x", "semi"),
        ("https://docs.example.com:8443/stable/x", "semi"),
        ("/home/me/papers/a.pdf", "trusted"),
        ("/home/me/papers/drafts/b.md", "untrusted"),
        ("/home/me/papers-evil/a.pdf", "semi"),
        ("/home/me/papers/../secrets/a", "semi"),
        ("file:///home/me/papers/a.pdf", "semi"),
    ],
)
def test_rules(origin: str, tier: str) -> None:
    assert trust_for(origin, RULES, "semi").tier == tier


def test_default_and_deciding_rule_are_reported() -> None:
    assert trust_for("https://x.org", [], "untrusted").rule == ""
    assert trust_for("https://wiki.example/talk/x", RULES, "semi").rule == "wiki.example/talk/"


DOCS = [
    {"pattern": "https://example.org/docs/", "tier": "trusted"},
    {"pattern": "wiki.example/docs", "tier": "trusted"},
    {"pattern": "bücher.example/katalog/", "tier": "trusted"},
]


@pytest.mark.parametrize(
    "origin",
    [
        "https://example.org/docs/%2e%2e/uploads/evil.md",  # the reported bypass
        "https://example.org/docs/%2E%2E/uploads/evil.md",
        "https://example.org/docs/.%2e/uploads/evil.md",
        "https://example.org/docs/../uploads/evil.md",
        "https://example.org/docs/./../uploads/evil.md",
        "https://example.org/docs/..%2fuploads/evil.md",  # an encoded slash: ambiguous
        "https://example.org/docs/%2e%2e%2fuploads/evil.md",
        "https://example.org/docs/%252e%252e/uploads/evil.md",  # double encoding
        "https://example.org/docs/..%5cuploads/evil.md",  # a backslash
        "https://example.org/docsevil/x.md",
        "https://example.org/docs%2Fx/../../uploads/evil.md",
        "https://wiki.example/docs/%2e%2e/talk/x",
        "https://wiki.example/docsevil/x",
        "https://bücher.example/katalog/%2e%2e/x",
    ],
)
def test_dot_segments_and_encodings_do_not_escape_a_path_rule(origin: str) -> None:
    assert trust_for(origin, DOCS, "untrusted").tier == "untrusted", origin


@pytest.mark.parametrize(
    "origin",
    [
        "https://example.org/docs/guide.md",
        "https://EXAMPLE.org./docs/guide.md",
        "https://example.org:443/docs/guide.md",  # the default port, spelled out
        "https://example.org/%64ocs/guide.md",  # %64 is "d": unreserved, decoded
        "https://example.org/docs/a/../guide.md",  # stays under /docs/
        "https://example.org/other/../docs/guide.md",
        "https://wiki.example/docs",
        "https://xn--bcher-kva.example/katalog/a",  # the IDNA spelling of the rule's host
        "https://BÜCHER.example/katalog/a",
    ],
)
def test_equivalent_spellings_of_a_trusted_url_match(origin: str) -> None:
    assert trust_for(origin, DOCS, "untrusted").tier == "trusted", origin


def test_file_rules_compare_real_paths(tmp_path: Path) -> None:
    trusted, outside = tmp_path / "papers", tmp_path / "uploads"
    trusted.mkdir()
    outside.mkdir()
    (outside / "evil.md").write_text("x")
    (trusted / "evil.md").symlink_to(outside / "evil.md")
    (trusted / "good.md").write_text("x")
    rules = [{"pattern": f"{trusted}/", "tier": "trusted"}]
    assert trust_for(str(trusted / "good.md"), rules, "untrusted").tier == "trusted"
    assert trust_for(str(trusted / "evil.md"), rules, "untrusted").tier == "untrusted"
    assert trust_for(f"{trusted}/../uploads/evil.md", rules, "untrusted").tier == "untrusted"
    # a rule naming a symlinked folder matches the files it leads to
    (tmp_path / "link").symlink_to(trusted)
    linked = [{"pattern": f"{tmp_path}/link", "tier": "trusted"}]
    assert trust_for(str(trusted / "good.md"), linked, "untrusted").tier == "trusted"
