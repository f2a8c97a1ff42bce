"""A new version's plan may cite its changed text alone (issue 27 item 1): a model that cites an
unchanged sentence — in a gap between the changed parts it was shown, or shown around a change —
does not make it a new claim of the new version; it was carried already."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from affidavit.ingest.chunking import changed_chunks
from affidavit.ingest.citing import UNCHANGED, keep_changed
from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.base import ModelRequest
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.providers.scripted import ScriptedProvider
from affidavit.sources.sentences import SourceSentences, number_sentences
from affidavit.vault import Vault

from .test_lineage_reread import _doc, _paragraphs, _small_chunks

FAR = (3, 12, 21, 30, 38)  # far apart: one sparse chunk of five parts
NEAR = (3, 5)  # one unchanged sentence between: one stretch that shows it


def _number(text: str, station: int) -> int:
    """The source's own number of the sentence about ``station``."""
    at = text.index(f"Station {station} of")
    return next(s.n for s in number_sentences(text) if s.start == at)


def _claim(source: str, evidence: dict[str, Any], text: str) -> dict[str, Any]:
    return {"text": text, "evidence": [{"source": source, **evidence}]}


def _attacker(
    text: str, changed: int, unchanged: int, quote: bool = False, source: str = ""
) -> Callable[..., str]:
    """A model that writes one claim from a changed sentence and one from an unchanged one (of
    ``source`` when given: another version's id)."""

    def reply(request: ModelRequest) -> str:
        task = request.task
        assert task is not None
        old = (
            f"Station {unchanged} of the survey recorded {100 + unchanged} nesting pairs of "
            "terns on the dunes."
        )
        bad = {"quote": old} if quote else {"sentence": _number(text, unchanged)}
        claims = [
            _claim(
                task.source_id,
                {"sentence": _number(text, changed)},
                f"Station {changed} of the survey recorded {105 + changed} nesting pairs of "
                "terns on the dunes.",
            ),
            _claim(source or task.source_id, bad, old),
        ]
        plan = {
            "nonce": task.nonce,
            "summary": "stations",
            "operations": [
                {
                    "op": "create_page",
                    "slug": "tern-stations",
                    "title": "Tern stations",
                    "summary": "Nesting pairs of terns counted at the survey's stations.",
                    "claims": claims,
                }
            ],
        }
        return json.dumps(plan)

    return reply


def _reingest(
    vault: Vault, tmp_path: Path, edited: tuple[int, ...], reply: Callable[[str], Any]
) -> tuple[Vault, str, ScriptedProvider, Any]:
    vault = _small_chunks(vault)
    doc = tmp_path / "survey.md"
    doc.write_text(_doc(_paragraphs()))
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(doc)], "trusted")
    new = _doc(_paragraphs(edited))
    doc.write_text(new)
    model = ScriptedProvider([reply(new)])
    report = Ingestor(vault, model, apply_now=True).run([str(doc)], "trusted")
    return vault, new, model, report


def _new_claims(vault: Vault) -> list[str]:
    """Texts of the active claims written from version 2 (not carried to it), and of those held
    for the lineage's proposals (a changed sentence's claim waits in the supersession of the
    claim it replaces: tests/test_lineage_decision.py)."""
    new_id = vault.db.execute("SELECT id FROM sources WHERE version = 2").fetchone()[0]
    return [
        r[0]
        for r in vault.db.execute(
            "SELECT c.text FROM claims c JOIN evidence e ON e.claim_id = c.id "
            "WHERE e.source_id = ? AND c.status = 'active' AND c.page_slug = 'tern-stations'",
            (new_id,),
        )
    ] + held_texts(vault)


def held_texts(vault: Vault) -> list[str]:
    """The new claims of the pending lineage plans (``by``, and claims added beside)."""
    out = []
    for (plan,) in vault.db.execute(
        "SELECT plan_json FROM plans WHERE status = 'pending' AND origin LIKE 'lineage:%'"
    ):
        for op in json.loads(plan)["operations"]:
            if isinstance(op.get("by"), dict):
                out.append(str(op["by"]["text"]))
            out += [str(c["text"]) for c in op.get("claims", [])]
    return out


def test_a_sentence_in_a_gap_between_parts_is_not_a_new_claim(vault: Vault, tmp_path: Path) -> None:
    vault, _, model, report = _reingest(
        vault, tmp_path, FAR, lambda text: _attacker(text, changed=12, unchanged=20)
    )
    assert len(model.requests) == 1
    claims = _new_claims(vault)
    assert any("117 nesting" in c for c in claims)  # the changed sentence's claim went in
    assert not any("Station 20 " in c for c in claims)  # today's main: it went in too
    chunk = report.sources[0].chunks[0]
    assert chunk.reasons.get(UNCHANGED) == 1


def test_an_unchanged_sentence_shown_around_a_change_is_not_a_new_claim(
    vault: Vault, tmp_path: Path
) -> None:
    vault, new, model, _ = _reingest(
        vault, tmp_path, NEAR, lambda text: _attacker(text, changed=5, unchanged=4)
    )
    prompt = model.requests[0].messages[-1].content
    # shown between the two changes, as context: not numbered (today's main: "[s6] Station 4")
    assert "\nStation 4 of" in prompt and f"[s{_number(new, 4)}]" not in prompt
    assert f"[s{_number(new, 3)}] Station 3 of" in prompt
    claims = _new_claims(vault)
    assert any("110 nesting" in c for c in claims)
    assert not any("Station 4 " in c for c in claims)


def test_a_free_quote_of_unchanged_text_is_not_a_new_claim(vault: Vault, tmp_path: Path) -> None:
    vault, _, _, _ = _reingest(
        vault, tmp_path, FAR, lambda text: _attacker(text, changed=30, unchanged=33, quote=True)
    )
    claims = _new_claims(vault)
    assert any("135 nesting" in c for c in claims)
    assert not any("Station 33 " in c for c in claims)


def test_a_sentence_of_the_older_version_is_not_a_new_claim(vault: Vault, tmp_path: Path) -> None:
    vault = _small_chunks(vault)
    doc = tmp_path / "survey.md"
    doc.write_text(_doc(_paragraphs()))
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(doc)], "trusted")
    old_id = str(vault.db.execute("SELECT id FROM sources WHERE version = 1").fetchone()[0])
    new = _doc(_paragraphs(FAR))
    doc.write_text(new)
    model = ScriptedProvider([_attacker(new, changed=21, unchanged=20, source=old_id[:16])])
    Ingestor(vault, model, apply_now=True).run([str(doc)], "trusted")
    claims = [
        str(r[0])
        for r in vault.db.execute(
            "SELECT text FROM claims WHERE status = 'active' AND page_slug = 'tern-stations'"
        )
    ] + held_texts(vault)
    assert any("126 nesting" in c for c in claims)
    assert not any("Station 20 " in c for c in claims)  # cited from version 1: still old words


class _SmallModel(ScriptedProvider):
    context_length: ClassVar[int] = 4096  # type: ignore[misc]


def test_a_small_models_schema_offers_the_changed_sentences_alone(
    vault: Vault, tmp_path: Path
) -> None:
    vault = _small_chunks(vault)
    doc = tmp_path / "survey.md"
    doc.write_text(_doc(_paragraphs()))
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(doc)], "trusted")
    new = _doc(_paragraphs(FAR))
    doc.write_text(new)

    def nothing(request: ModelRequest) -> str:
        assert request.task is not None
        return json.dumps({"nonce": request.task.nonce, "summary": "none", "operations": []})

    model = _SmallModel([nothing])
    Ingestor(vault, model, apply_now=True).run([str(doc)], "trusted")
    schema = model.requests[0].schema
    assert schema is not None
    offered = schema["$defs"]["Evidence"]["properties"]["sentence"]["enum"]
    assert offered == [_number(new, n) for n in FAR]  # today's main: every number s4..s39


def test_keep_changed_leaves_a_plan_citing_changed_text_alone() -> None:
    text = _doc(_paragraphs(NEAR))
    spans = []
    for n in NEAR:
        at = text.index(f"Station {n} of")
        spans.append((at, text.index(".", at) + 1))
    (chunk,) = changed_chunks(text, spans, 500)
    assert chunk.cite == tuple(spans) and not chunk.parts  # one stretch, two citable spans
    numbered = SourceSentences(text)
    source = "ab" * 32
    good = _claim(source, {"sentence": _number(text, 3)}, "Station 3 of the survey.")
    bad = _claim(source[:12], {"sentences": [_number(text, 3), _number(text, 5)]}, "Three.")
    other = _claim("cd" * 32, {"sentence": _number(text, 4)}, "Another source's sentence.")
    plan = {
        "nonce": "n",
        "operations": [
            {"op": "add_claims", "page": "p", "claims": [good, bad, other]},
            {"op": "add_claims", "page": "q", "claims": [bad]},
            {"op": "supersede_claim", "claim": "c" * 16, "by": bad, "reason": "changed"},
        ],
    }
    kept, dropped = keep_changed(plan, source, numbered, chunk.cite)
    assert dropped == 3  # a range over the unchanged sentence is not inside the changes
    assert kept["operations"] == [{"op": "add_claims", "page": "p", "claims": [good, other]}]
    assert keep_changed(plan, source, numbered, ()) == (plan, 0)  # a first version: all of it
