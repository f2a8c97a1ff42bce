"""A new version's changes are proposed once, by the lineage (issue 27 item 1): the ingest's
supersession pass leaves a followed version's claims to it instead of proposing a fix per stale
finding for the same claims; and a claim's replacement is not refused as a near-duplicate of the
very claim it replaces."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from affidavit.inbox import approve, propose
from affidavit.ingest.pipeline import Ingestor
from affidavit.lint.runner import run_lint
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.vault import Vault, open_vault

from .conftest import add_text, claim, make_plan

EDITED = (3, 12, 21, 30, 38)
WORDED = (7, 25)  # a word replaced, no number: a near-copy of the old sentence


def _paragraphs(edited: tuple[int, ...] = ()) -> list[str]:
    out = []
    for n in range(40):
        count = 100 + n + (5 if n in EDITED and n in edited else 0)
        place = "marshes" if n in WORDED and n in edited else "dunes"
        out.append(
            f"Station {n} of the survey recorded {count} nesting pairs of terns on the {place}."
        )
    return out


def _doc(paragraphs: list[str]) -> str:
    return "# Survey\n\n" + "\n\n".join(paragraphs) + "\n"


def _named(vault: Vault) -> Counter[str]:
    """How many pending withdrawal operations name each claim, and (key "lint") how many pending
    plans the supersession pass or lint proposed."""
    named: Counter[str] = Counter()
    for origin, text in vault.db.execute(
        "SELECT origin, plan_json FROM plans WHERE status = 'pending'"
    ):
        if origin == "lint":
            named["lint"] += 1
        for op in json.loads(text)["operations"]:
            if op["op"] in ("supersede_claim", "retract_claim"):
                named[op["claim"]] += 1
    return named


def test_a_new_versions_changes_are_proposed_once_by_the_lineage(
    vault: Vault, tmp_path: Path
) -> None:
    doc = tmp_path / "survey.md"
    doc.write_text(_doc(_paragraphs()))
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(doc)], "trusted")
    old = {
        n: str(row[0])
        for n in (*EDITED, *WORDED)
        for row in vault.db.execute(
            "SELECT id FROM claims WHERE status = 'active' AND text LIKE ?",
            (f"Station {n} of the survey%",),
        )
    }
    doc.write_text(_doc(_paragraphs((*EDITED, *WORDED))))
    report = Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(doc)], "trusted")
    assert report.supersessions is None  # today's main: a stale fix plan of its own
    named = _named(vault)
    assert named["lint"] == 0
    for n, claim_id in old.items():  # each changed claim: one proposal, the lineage's
        assert named[claim_id] == 1, (n, claim_id)
    ops = [
        op
        for (text,) in vault.db.execute(
            "SELECT plan_json FROM plans WHERE status = 'pending' AND origin LIKE 'lineage:%'"
        )
        for op in json.loads(text)["operations"]
    ]
    kinds = {op["claim"]: op["op"] for op in ops}
    assert all(kinds[old[n]] == "supersede_claim" for n in (*EDITED, *WORDED))


def test_a_replacement_may_be_close_to_the_claim_it_replaces(vault: Vault) -> None:
    long = (
        "of the coastal survey recorded {n} nesting pairs of common terns, twelve pairs of "
        "little terns and three pairs of roseate terns along the eastern {place} beyond the old "
        "lighthouse, the harbour wall and the ferry landing."
    )
    dunes = "Station 7 " + long.format(n=107, place="dunes")
    marshes = "Station 7 " + long.format(n=107, place="marshes")
    other = "Station 8 " + long.format(n=108, place="dunes")
    src = add_text(vault, "terns.md", f"{dunes}\n{marshes}\n{other}\n")
    created = propose(
        vault,
        make_plan(
            vault,
            {
                "op": "create_page",
                "slug": "terns",
                "title": "Terns",
                "summary": "Nesting pairs of terns at the coastal survey's stations.",
                "claims": [claim(dunes, src, dunes)],
            },
            {"op": "add_claims", "page": "terns", "claims": [claim(other, src, other)]},
        ),
        "t",
        "t",
    )
    approve(vault, created.plan_id, None, "t")
    ids = {
        str(r[1]): str(r[0])
        for r in vault.db.execute("SELECT id, text FROM claims WHERE page_slug = 'terns'")
    }
    assert set(ids) == {dunes, other}

    def supersede(target: str) -> str:
        op = {
            "op": "supersede_claim",
            "claim": ids[target],
            "by": claim(marshes, src, marshes),
            "reason": "the new version says marshes",
        }
        verdict = propose(vault, make_plan(vault, op), "t", "t").admission.ops[0]
        return verdict.claims[0].reason if verdict.claims else verdict.reason

    assert supersede(dunes) == ""  # today's main: a near-duplicate of itself
    # the same words replacing another claim still repeat the one they are close to
    assert f"near-duplicate of existing claim {ids[dunes]}" in supersede(other)


def _lint_every(vault: Vault, ingests: int) -> Vault:
    config = vault.config_path.read_text().replace(
        "every_ingests = 10", f"every_ingests = {ingests}"
    )
    vault.config_path.write_text(config)
    return open_vault(vault.root, clock=vault.clock)


def _last_auto_run(vault: Vault) -> dict[str, object]:
    row = vault.db.execute(
        "SELECT detail FROM lint_runs WHERE trigger = 'auto' ORDER BY id DESC LIMIT 1"
    ).fetchone()
    assert row is not None
    detail: dict[str, object] = json.loads(row[0])
    return detail


def _active_on(vault: Vault, version: int) -> int:
    return int(
        vault.db.execute(
            "SELECT count(DISTINCT c.id) FROM claims c JOIN evidence e ON e.claim_id = c.id "
            "JOIN sources s ON s.id = e.source_id WHERE c.status = 'active' AND s.version = ?",
            (version,),
        ).fetchone()[0]
    )


def test_the_lint_after_a_reingest_looks_at_what_changed_not_at_what_was_carried(
    vault: Vault, tmp_path: Path
) -> None:
    vault = _lint_every(vault, 1)
    doc = tmp_path / "survey.md"
    doc.write_text(_doc(_paragraphs()))
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(doc)], "trusted")
    assert _last_auto_run(vault)["pairs"] == "full"  # no checkpoint yet
    doc.write_text(_doc(_paragraphs(EDITED)))
    report = Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(doc)], "trusted")
    carried = report.sources[0].lineage["carried"] if report.sources[0].lineage else 0
    assert carried >= 30
    pairs = _last_auto_run(vault)["pairs"]
    assert isinstance(pairs, int)
    # the claims written from the changed sentences (and the pages' own), not the carried ones
    assert pairs < 3 * len(EDITED), pairs  # today's main: every carried claim as well


def test_a_carried_claim_no_lint_run_has_seen_is_still_looked_at(
    vault: Vault, tmp_path: Path
) -> None:
    first = tmp_path / "first.md"
    first.write_text("# Gulls\n\nThe gull colony on the north cliff held 300 pairs last year.\n")
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(first)], "trusted")
    run_lint(vault, trigger="manual")  # the checkpoint: the survey is not in the wiki yet
    vault = _lint_every(vault, 2)
    doc = tmp_path / "survey.md"
    doc.write_text(_doc(_paragraphs()))
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(doc)], "trusted")  # 1 of 2
    doc.write_text(_doc(_paragraphs(EDITED)))
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(doc)], "trusted")  # lint
    pairs = _last_auto_run(vault)["pairs"]
    assert isinstance(pairs, int)
    assert pairs >= _active_on(vault, 2)  # carried, but added since the last run: looked at
