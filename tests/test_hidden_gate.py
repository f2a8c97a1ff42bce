"""End to end (issue 23 item 4): a sentence hidden by a technique only rendering sees, in an
HTML and in a PDF source, never becomes clean evidence at the gate (quarantined, the reason
naming the renderer), while the visible sentence of the same source is admitted. Without a
renderer, evidence from HTML below ``trusted`` is never applied by policy, and the plan says
why and how to install one.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from affidavit.inbox import propose
from affidavit.sources import render_html
from affidavit.sources.store import SourceStore
from affidavit.vault import Vault, open_vault
from tests.conftest import claim, make_plan
from tests.pdf_tricks import TRICKS, page
from tests.test_hidden_text import VISIBLE

HIDDEN = "The archive of Zorvath holds 4512 charts drawn by Admiral Quell in 1887."
HTML_DOC = (
    "<html><head><title>Port Elling</title></head><body>"
    f'<p>{VISIBLE}</p><p style="color:oklch(1 0 0)">{HIDDEN}</p></body></html>'
).encode()
PDF_DOC = page(TRICKS["fill alpha /ca 0"](HIDDEN), VISIBLE, "The pier is 212 metres long.")


def _add(vault: Vault, name: str, data: bytes, media: str, trust: str) -> str:
    result = SourceStore(vault).add_bytes(
        data, origin=f"/test/{name}", name=name, media_type=media, trust=trust
    )
    return result.record.id


def _page(slug: str, source: str) -> dict[str, Any]:
    return {
        "op": "create_page",
        "slug": slug,
        "title": "Port Elling",
        "summary": "About Port Elling.",
        "claims": [
            claim(VISIBLE, source, VISIBLE),
            claim(HIDDEN, source, HIDDEN),
        ],
    }


@pytest.fixture
def trusting(vault: Vault) -> Iterator[Vault]:
    """The vault with ``policy.auto_apply = "trusted"``."""
    cfg = vault.config_path.read_text().replace('auto_apply = "never"', 'auto_apply = "trusted"')
    vault.config_path.write_text(cfg)
    reopened = open_vault(vault.root, clock=vault.clock)
    try:
        yield reopened
    finally:
        reopened.close()


@pytest.mark.parametrize(
    ("name", "media"),
    [
        pytest.param(
            "port.html",
            "text/html",
            marks=pytest.mark.skipif(render_html.available() != "", reason="no HTML renderer"),
        ),
        ("port.pdf", "application/pdf"),
    ],
)
def test_hidden_evidence_is_quarantined_and_the_visible_admitted(
    trusting: Vault, name: str, media: str
) -> None:
    data = HTML_DOC if media == "text/html" else PDF_DOC
    source = _add(trusting, name, data, media, "trusted")
    record = SourceStore(trusting).get(source)
    assert record.text_map["visibility"]["checked"] == "rendered"
    proposal = propose(trusting, make_plan(trusting, _page("port-elling", source)), "t", "t")
    visible, hidden = proposal.admission.ops[0].claims
    assert visible.status == "admitted", visible.reason
    assert hidden.status == "quarantined" and hidden.check == "sanitizer"
    assert "rendered by" in hidden.reason
    # a trusted source, yet the plan waits: nothing of it reached the wiki
    assert proposal.status == "pending" and proposal.admission.needs_approval
    assert not (trusting.wiki_dir / "port-elling.md").exists()


def test_without_a_renderer_html_below_trusted_waits_and_says_why(
    trusting: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(render_html, "available", lambda: render_html.INSTALL)
    source = _add(trusting, "plain.html", f"<p>{VISIBLE}</p>".encode(), "text/html", "semi-trusted")
    record = SourceStore(trusting).get(source)
    assert record.text_map["visibility"]["checked"] == "rules"
    plan = {
        "op": "create_page",
        "slug": "port-elling",
        "title": "Port Elling",
        "summary": "About Port Elling.",
        "claims": [claim(VISIBLE, source, VISIBLE)],
    }
    proposal = propose(trusting, make_plan(trusting, plan), "t", "t")
    assert proposal.status == "pending"
    reason = proposal.admission.policy_reason
    assert "not confirmed by rendering" in reason and "pip install 'affidavit[render]'" in reason


def test_without_a_renderer_trusted_html_still_applies(
    trusting: Vault, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(render_html, "available", lambda: render_html.INSTALL)
    source = _add(trusting, "own.html", f"<p>{VISIBLE}</p>".encode(), "text/html", "trusted")
    plan = {
        "op": "create_page",
        "slug": "port-elling",
        "title": "Port Elling",
        "summary": "About Port Elling.",
        "claims": [claim(VISIBLE, source, VISIBLE)],
    }
    proposal = propose(trusting, make_plan(trusting, plan), "t", "t")
    assert proposal.status == "applied", proposal.admission.policy_reason
