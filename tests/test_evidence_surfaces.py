"""Anchored quotes at the door and after (W3): every surface shows the source's own words at the
recorded offsets, never the proposer's string; ``doctor`` re-verifies stored evidence under the
current rules."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from affidavit.cli import main
from affidavit.doctor import run_doctor
from affidavit.inbox import approve, propose
from affidavit.service import vaults as service
from affidavit.service.quote_context import CONTEXT_CHARS
from affidavit.store.render import escape_inline
from affidavit.vault import Vault

from .conftest import add_text, claim, make_plan

SOURCE = (
    "Harbour notice.\n"
    "The harbour master said \u201cThe Old Bridge is CLOSED\u201d on Monday, 3 May.\n"
    "Barges carry 1500 pounds; a skiff carries 500 pounds per vessel.\n"
)
SPAN = "\u201cThe Old Bridge is CLOSED\u201d on Monday"
"""The source's bytes the quote below stands for."""
QUOTE = '"the old bridge   is closed" ON\nmonday'
"""The proposer's string: other case, other spaces, straight quote marks."""


def _cli(vault: Vault, *args: str) -> str:
    result = CliRunner().invoke(main, ["--vault", str(vault.root), *args])
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.fixture
def applied(vault: Vault) -> dict[str, str]:
    source = add_text(vault, "harbour.md", SOURCE)
    plan = make_plan(
        vault,
        {
            "op": "create_page",
            "slug": "old-bridge",
            "title": "Old Bridge",
            "summary": "The Old Bridge is closed on Monday.",
            "claims": [
                claim("The Old Bridge is closed on Monday.", source, QUOTE),
                claim(
                    "A skiff carries 500 pounds per vessel.",
                    source,
                    "a skiff carries 500 pounds per vessel",
                ),
            ],
        },
    )
    proposal = propose(vault, json.dumps(plan), "tester", "test")
    assert proposal.admission.counts["rejected"] == 0
    [check, skiff] = [c.evidence[0] for c in proposal.admission.ops[0].claims]
    assert check.verified and check.span == SPAN and check.quote == QUOTE
    assert skiff.start == SOURCE.index("a skiff carries 500")  # not inside "1500 pounds"
    shown = _cli(vault, "inbox", "show", proposal.plan_id)
    assert SPAN in shown
    detail = service.plan_detail(vault, proposal.plan_id)
    assert detail.quotes[0].quote == SPAN
    assert detail.admission["ops"][0]["claims"][0]["evidence"][0]["span"] == SPAN
    result = approve(vault, proposal.plan_id, None, "tester")
    return {"source": source, "claim": result.claims[0], "skiff": result.claims[1]}


def test_every_surface_shows_the_sources_bytes(vault: Vault, applied: dict[str, str]) -> None:
    [row] = vault.db.execute(
        'SELECT quote, start, "end" FROM evidence WHERE claim_id = ?', (applied["claim"],)
    ).fetchall()
    assert row["quote"] == SPAN == SOURCE[row["start"] : row["end"]]

    page = (vault.wiki_dir / "old-bridge.md").read_text(encoding="utf-8")
    assert f"[^1]: “{escape_inline(SPAN)}” — " in page
    assert "the old bridge" not in page and "ON\nmonday" not in page

    detail = service.get_page(vault, "old-bridge")
    assert detail.claims[0].evidence[0].quote == SPAN
    hits = service.search(vault, "old bridge closed", 5, "untrusted", None).hits
    assert hits[0].evidence[0].quote == SPAN
    assert f"“{SPAN}”" in _cli(vault, "search", "old bridge closed")
    answer = _cli(vault, "ask", "Is the Old Bridge closed on Monday?", "--model", "extractive")
    assert SPAN in answer and QUOTE not in answer


def test_doctor_reports_stored_evidence_that_only_the_old_rules_accepted(
    vault: Vault, applied: dict[str, str]
) -> None:
    assert run_doctor(vault).clean
    # An old vault: the skiff's evidence recorded inside "1500 pounds", as the old matcher
    # (first occurrence, no word boundaries) would have; the claim's quote cut "-ic" off a word.
    inside = SOURCE.index("500 pounds;")
    vault.db.execute(
        'UPDATE evidence SET quote = ?, start = ?, "end" = ? WHERE claim_id = ?',
        ("500 pounds", inside, inside + len("500 pounds"), applied["skiff"]),
    )
    cut = SOURCE.index("arbour master said")
    vault.db.execute(
        'UPDATE evidence SET quote = ?, start = ?, "end" = ? WHERE claim_id = ?',
        ("arbour master said", cut, cut + len("arbour master said"), applied["claim"]),
    )
    vault.db.commit()
    report = run_doctor(vault)
    found = {f.subject: f for f in report.findings if f.check == "evidence"}
    assert set(found) == {applied["claim"], applied["skiff"]}
    short = applied["source"][:12]
    claim_finding = found[applied["claim"]].message
    assert "“arbour master said”" in claim_finding and short in claim_finding
    assert "only where it cuts a word" in claim_finding
    skiff = found[applied["skiff"]].message
    assert "“500 pounds”" in skiff and short in skiff
    assert f"recorded at chars {inside}–{inside + 10}" in skiff and "cuts a word" in skiff
    assert f"found whole at chars {SOURCE.index('500 pounds per')}" in skiff
    assert "whole words" in found[applied["skiff"]].fix
    # lint's evidence_unverified check reads the same re-verification
    lint = json.loads(_cli(vault, "lint", "--json", "--no-model"))
    kinds = {(f["kind"], f["subject"]) for f in lint["findings"]}
    assert ("evidence_unverified", applied["claim"]) in kinds
    assert ("evidence_unverified", applied["skiff"]) in kinds


def test_a_quote_in_a_one_line_source_is_shown_with_bounded_context(vault: Vault) -> None:
    filler = " ".join(f"Word{i} of the long address." for i in range(400))
    target = "The harbour froze solid in 1709."
    source = add_text(vault, "address.md", f"{filler} {target} {filler}\n")
    plan = make_plan(
        vault,
        {
            "op": "create_page",
            "slug": "harbour",
            "title": "Harbour",
            "summary": target,
            "claims": [claim(target, source, target)],
        },
    )
    proposal = propose(vault, json.dumps(plan), "tester", "test")
    [shown] = service.plan_detail(vault, proposal.plan_id).quotes
    assert shown.quote == target
    limit = CONTEXT_CHARS + 1
    assert shown.before.startswith("…") and len(shown.before) <= limit
    assert shown.after.endswith("…") and len(shown.after) <= limit
    assert (
        f"{shown.before.lstrip('…')}{target}{shown.after.rstrip('…')}"
        in f"{filler} {target} {filler}"
    )


def test_render_escaping_matches_its_lookbehind_first_spelling() -> None:
    # store/render.py puts each escaped character before its lookbehind (so the regex engine can
    # skip to candidates); the matches must be those of the rule as first written.
    import random
    import re

    from affidavit.store import render

    written = re.compile(
        r"[\\`*\[\]<>|~!#&$^]|(?<![^\W_])_|_(?![^\W_])|%(?=%)|(?<=%)%|=(?==)|(?<==)="
        r"|(?<=\w)\.(?=[^\W\d_])(?![^\W\d_](?:[^\w-]|$))|(?<=[^\W\d_]):(?=\S)|(?<=/)/"
    )
    pieces = ["a", "é", "1", "_", " ", "\n", ".", ":", "/", "%", "=", "\\", "*", "[", "]", "x.y"]
    pieces += [
        "evil.com/x",
        "https://a.b",
        "==hi==",
        "%%c%%",
        "a:b",
        "1.5",
        "é.x",
        "漢.字",
        "e.g.",
        "A_B",
    ]
    rng = random.Random(3)
    for _ in range(4000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 24)))
        spans = [m.span() for m in render._ESCAPE.finditer(text)]
        assert spans == [m.span() for m in written.finditer(text)], text
