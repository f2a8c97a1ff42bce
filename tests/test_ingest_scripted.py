"""Ingest with the scripted provider: hostile replies never change the wiki (W1, W2, W3)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from affidavit.inbox import list_plans
from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.base import ModelRequest
from affidavit.providers.scripted import ScriptedProvider
from affidavit.vault import Vault

from .conftest import snapshot

DOC = (
    "# Harbour notes\n\n"
    "The harbour wall was rebuilt in 1904 after a storm destroyed the old pier.\n"
    "Fishing boats land their catch at the north quay every morning.\n"
)
OTHER = "A completely different source about mountain railways and their gradients.\n"


def page(req: ModelRequest, **over: Any) -> dict[str, Any]:
    assert req.task is not None
    plan = {
        "nonce": req.task.nonce,
        "operations": [
            {
                "op": "create_page",
                "slug": "harbour",
                "title": "Harbour",
                "summary": "The harbour and its wall.",
                "claims": [
                    {
                        "text": "The harbour wall was rebuilt in 1904.",
                        "evidence": [
                            {
                                "source": req.task.source_id,
                                "quote": "The harbour wall was rebuilt in 1904",
                            }
                        ],
                    }
                ],
            }
        ],
    }
    plan.update(over)
    return plan


def op(req: ModelRequest, **fields: Any) -> dict[str, Any]:
    plan = page(req)
    plan["operations"][0].update(fields)
    return plan


Reply = Callable[[ModelRequest], str]
HOSTILE: dict[str, Reply] = {
    "sixth verb": lambda r: json.dumps(
        page(r, operations=[*page(r)["operations"], {"op": "delete_page", "slug": "harbour"}])
    ),
    "write to sources": lambda r: json.dumps(
        page(r, operations=[{"op": "write_file", "path": "sources/x.md", "content": "x"}])
    ),
    "path in a slug": lambda r: json.dumps(op(r, slug="../../sources/evil")),
    "missing nonce": lambda r: json.dumps({k: v for k, v in page(r).items() if k != "nonce"}),
    "wrong nonce": lambda r: json.dumps(page(r, nonce="A" * 24)),
    "json lines": lambda r: "\n".join(json.dumps(o) for o in page(r)["operations"]),
    "bare array": lambda r: json.dumps(page(r)["operations"]),
    "prose around json": lambda r: "Sure! Here is the plan:\n" + json.dumps(page(r)),
    "10,000 operations": lambda r: json.dumps(
        page(r, operations=[{"op": "link_pages", "page": "a", "to": "b"}] * 10_000)
    ),
    "truncated reply": lambda r: json.dumps(page(r))[:-20],
}


@pytest.fixture
def doc(tmp_path: Path) -> Path:
    path = tmp_path / "harbour.md"
    path.write_text(DOC)
    return path


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_replies_never_change_the_wiki(vault: Vault, doc: Path, name: str) -> None:
    Ingestor(vault, ScriptedProvider(replies=[])).store.add_file(doc, "trusted")
    before = snapshot(vault)
    provider = ScriptedProvider(replies=[HOSTILE[name]] * 3)
    report = Ingestor(vault, provider, apply_now=True).run([str(doc)])
    after = snapshot(vault)
    assert after["files"] == before["files"] and after["head"] == before["head"]
    assert list_plans(vault, ("pending", "applied")) == []
    chunk = report.sources[0].chunks[0]
    assert chunk.status == "failed" and "gave up after 3 attempt(s)" in chunk.message
    # every re-ask fed the error back, fenced text unchanged
    assert len(provider.requests) == 3
    assert "Your reply was rejected" in provider.requests[1].messages[-1].content


def test_unverifiable_quotes_are_recorded_and_dropped(
    vault: Vault, doc: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other.md"
    other.write_text(OTHER)
    store = Ingestor(vault, ScriptedProvider(replies=[])).store
    other_id = store.add_file(other, "trusted").record.id

    def reply(r: ModelRequest) -> str:
        plan = page(r)
        claims = plan["operations"][0]["claims"]
        claims.append(
            {
                "text": "Invented.",
                "evidence": [
                    {"source": r.task.source_id, "quote": "The wall is made of gold bricks"}
                ],
            }
        )  # type: ignore[union-attr]
        claims.append(
            {
                "text": "Other source.",
                "evidence": [{"source": other_id, "quote": "The harbour wall was rebuilt"}],
            }
        )
        return json.dumps(plan)

    report = Ingestor(vault, ScriptedProvider(replies=[reply])).run([str(doc)], "trusted")
    chunk = report.sources[0].chunks[0]
    assert chunk.status == "pending"
    assert chunk.claims == {"admitted": 1, "quarantined": 0, "rejected": 2}
    (plan,) = list_plans(vault)
    flat = json.dumps(plan.to_json())
    assert flat.count('"verified": false') == 2


def test_well_formed_plan_lands_in_inbox_and_reingest_does_nothing(vault: Vault, doc: Path) -> None:
    provider = ScriptedProvider(replies=[lambda r: json.dumps(page(r))])
    report = Ingestor(vault, provider).run([str(doc)], "trusted")
    assert report.sources[0].chunks[0].status == "pending"
    req = provider.requests[0]
    fenced = req.messages[1].content
    assert f"<<<SOURCE {req.task.nonce}>>>" in fenced  # type: ignore[union-attr]
    # the chunk is shown whole, as host-numbered sentences (the heading unnumbered)
    assert "# Harbour notes\n[s1] The harbour wall was rebuilt in 1904 after a storm" in fenced
    assert "\n[s2] Fishing boats land their catch at the north quay every morning.\n" in fenced
    assert req.schema is not None and req.schema["title"] == "Affidavit plan"
    again = Ingestor(vault, ScriptedProvider(replies=[])).run([str(doc)], "trusted")
    assert again.sources[0].status == "unchanged" and again.calls == 0
    calls = vault.db.execute("SELECT purpose, outcome FROM model_calls").fetchall()
    assert [tuple(c) for c in calls] == [("ingest", "ok")]


def test_yes_applies_and_a_bad_file_does_not_stop_the_folder(vault: Vault, tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "a-harbour.md").write_text(DOC)
    (folder / "b-broken.pdf").write_bytes(b"%PDF-1.4 not really a pdf")
    (folder / "c-other.md").write_text(OTHER)
    replies = [
        lambda r: json.dumps(page(r)),
        lambda r: json.dumps({"nonce": r.task.nonce, "operations": []}),
    ]  # type: ignore[union-attr]
    report = Ingestor(vault, ScriptedProvider(replies=replies), apply_now=True).run(
        [str(folder)], "trusted"
    )
    assert [s.status for s in report.sources] == ["ingested", "failed", "ingested"]
    assert report.sources[0].chunks[0].status == "applied"
    assert report.sources[2].chunks[0].status == "empty"
    assert (vault.wiki_dir / "harbour.md").exists()


def _review(verdict: str | None) -> Callable[[ModelRequest], str]:
    def reply(request: ModelRequest) -> str:
        nonce = request.messages[1].content.split("Nonce: ", 1)[1].split("\n", 1)[0]
        if verdict is None:
            return "I think it is fine."
        return json.dumps({"nonce": nonce, "verdict": verdict, "reason": "claims repeat an order"})

    return reply


@pytest.mark.parametrize(
    ("verdict", "status"),
    [("ok", "applied"), ("suspicious", "pending"), (None, "pending")],
)
def test_the_reviewer_fails_closed(
    vault: Vault, doc: Path, verdict: str | None, status: str
) -> None:
    reviewer = ScriptedProvider(replies=[_review(verdict)])
    provider = ScriptedProvider(replies=[lambda r: json.dumps(page(r))])
    report = Ingestor(vault, provider, reviewer=reviewer, apply_now=True).run([str(doc)], "trusted")
    chunk = report.sources[0].chunks[0]
    assert chunk.status == status
    fenced = reviewer.requests[0].messages[1].content
    assert "The harbour wall was rebuilt in 1904." in fenced  # the claims it judges
    if status == "pending":
        (plan,) = list_plans(vault)
        assert plan.admission.policy_reason.startswith("reviewer")
