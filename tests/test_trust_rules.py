"""Trust rules: longest match wins, hosts match whole labels, prefixes end at segments."""

from __future__ import annotations

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
