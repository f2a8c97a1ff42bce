"""Helpers of the web desk's tests: vaults with pending plans, a logged-in desk client."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from fastapi.testclient import TestClient

from affidavit import inbox
from affidavit.server.app import create_app
from affidavit.server.registry import Registry
from affidavit.vault import Vault, init_vault
from affidavit.web.desk import WebDesk
from tests.conftest import SAMPLES, add_samples, fresh_nonce

BASE = "http://127.0.0.1:8765"
PAGES = {"four-freedoms": 0, "monroe-doctrine": 2, "washington-1790": 3}
"""The sample plan's create_page operations, by the page each creates."""


def plan_text(vault: Vault, pages: list[str]) -> str:
    """A plan creating ``pages`` (from the bundled sample plan), with a fresh nonce; an entry
    ``page:slug`` creates that page of the sample under another slug."""
    sample = json.loads((SAMPLES / "sotu-plan.json").read_text(encoding="utf-8"))
    ops = []
    for entry in pages:
        page, _, slug = entry.partition(":")
        op = dict(sample["operations"][PAGES[page]])
        if slug:
            op["slug"] = slug
        ops.append(op)
    return json.dumps({"nonce": fresh_nonce(vault), "summary": "test", "operations": ops})


def propose(vault: Vault, pages: list[str]) -> str:
    return inbox.propose(vault, plan_text(vault, pages), "tester", "test").plan_id


def make_vault(root: Path, plans: list[list[str]]) -> list[str]:
    """A vault with the three sample sources and one pending plan per entry of ``plans``."""
    vault, _ = init_vault(root)
    try:
        add_samples(vault)
        return [propose(vault, pages) for pages in plans]
    finally:
        vault.close()


@contextmanager
def desk_client(root: Path) -> Iterator[tuple[TestClient, WebDesk, Registry]]:
    """The daemon's app with the desk, in-process (no socket: the desk's own rules only)."""
    registry = Registry.open([root])
    app = create_app(registry, run_workers=False, web=True)
    desk: WebDesk = app.state.web
    desk.base_url = BASE
    with TestClient(app, base_url=BASE) as client:
        yield client, desk, registry


def login_owner(client: TestClient, desk: WebDesk) -> None:
    url = desk.login_url(os.geteuid())
    response = client.get(url.removeprefix(BASE), follow_redirects=False)
    assert response.status_code == 303, response.text


def form_values(html: str, form_id: str) -> dict[str, str]:
    """The hidden fields (csrf, seen) of one form of a page."""
    start = html.index(f'id="{form_id}"')
    chunk = html[start : html.index("</form>", start)]
    return dict(re.findall(r'name="(csrf|seen)" value="([^"]+)"', chunk))
