"""Issue 11 items 5 and 9, re-attacked: URL spellings that servers read as a step out of a
trusted folder, and an address range the public-address check let through."""

from __future__ import annotations

import ipaddress

import pytest

from affidavit.sources.addresses import refusal
from affidavit.sources.trust import trust_for

RULES = [
    {"pattern": "https://example.org/docs/", "tier": "trusted"},
    {"pattern": "example.com/docs/", "tier": "trusted"},
]


@pytest.mark.parametrize(
    "origin",
    [
        "https://example.org/docs/..;/uploads/evil.md",  # Tomcat/Spring: ..;/ is ../
        "https://example.org/docs/..;jsessionid=1/uploads/evil.md",
        "https://example.org/docs/%2e%2e;/uploads/evil.md",
        "https://example.org/docs//../uploads/evil.md",  # merge_slashes: /docs/../uploads
        "https://example.com/docs//../uploads/evil.md",
        "https://example.org/docs/%C0%AE%C0%AE/uploads/evil.md",  # overlong UTF-8 dots
        "https://example.org/docs/%uff0e%uff0e/uploads/evil.md",  # IIS %u escapes
        "https://example.org/docs/\uff0e\uff0e/uploads/evil.md",  # fullwidth dots (NFKC ..)
        "https://example.org/docs/%EF%BC%8E%EF%BC%8E/uploads/evil.md",
    ],
)
def test_server_specific_dot_segments_match_no_path_rule(origin: str) -> None:
    assert trust_for(origin, RULES, "untrusted").tier == "untrusted"


@pytest.mark.parametrize(
    "origin",
    [
        "https://example.org/docs/a.md",
        "https://example.org/docs/a;v=1",
        "https://example.org/docs/./a.md",
        "https://example.org/docs/x/../a.md",
        "https://example.org/docs/caf%C3%A9.md",
        "https://example.org/docs/a?next=//../x",
        "https://example.com/docs/sub/",
    ],
)
def test_plain_paths_under_the_rule_still_match(origin: str) -> None:
    assert trust_for(origin, RULES, "untrusted").tier == "trusted"


@pytest.mark.parametrize("address", ["fec0::1", "feff:ffff::1"])
def test_site_local_ipv6_is_refused(address: str) -> None:
    reason = refusal(ipaddress.ip_address(address))
    assert reason is not None and "site-local" in reason
