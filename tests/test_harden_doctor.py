"""Issue 11 item 8, re-attacked: more database tampering that a re-render and a commit hide from
every check but the replay of the applied plans."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from affidavit.doctor import run_doctor
from affidavit.vault import Vault

from .test_doctor_replay import one_claim, tamper, wiki  # noqa: F401  (the fixture)

CASES: dict[str, Callable[[str], list[str]]] = {
    "section moved": lambda c: [f"UPDATE claims SET section = 'Elsewhere' WHERE id = '{c}'"],
    "evidence source swapped": lambda c: [
        "UPDATE evidence SET source_id = (SELECT id FROM sources ORDER BY id DESC LIMIT 1) "
        f"WHERE claim_id = '{c}'"
    ],
    "page title": lambda c: [
        "UPDATE pages SET title = 'Five Freedoms' WHERE slug = (SELECT page_slug FROM claims "
        f"WHERE id = '{c}')"
    ],
    "page summary": lambda c: [
        "UPDATE pages SET summary = 'Roosevelt named five freedoms.' WHERE slug = "
        f"(SELECT page_slug FROM claims WHERE id = '{c}')"
    ],
}


@pytest.mark.parametrize("what", sorted(CASES))
def test_more_tampering_is_reported(wiki: Vault, what: str) -> None:  # noqa: F811
    assert run_doctor(wiki).clean
    claim = one_claim(wiki)
    tamper(wiki, *CASES[what](claim))
    report = run_doctor(wiki)
    assert not report.clean, (what, [f.message for f in report.findings])
