"""``ingest --dry-run`` and ``--budget`` (issue 27 item 4): the estimate is what a model is sent,
a dry run changes nothing, a budget stops cleanly and a rerun resumes without redoing a chunk."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from affidavit.cli import main
from affidavit.errors import ConfigError
from affidavit.ingest.cost import request_tokens
from affidavit.ingest.dry_run import estimate
from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.base import ModelRequest
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.providers.scripted import ScriptedProvider
from affidavit.vault import Vault, open_vault

from .conftest import SAMPLES, snapshot

SPEECH = SAMPLES / "sotu" / "1823-monroe.md"
_LINE = re.compile(r"^\[s(\d+)\] (.+)$", re.M)


def _reply(request: ModelRequest) -> str:
    """A plan citing the chunk's first numbered sentence on a page of its own: pages grow as
    the ingest goes, so later prompts list more related pages than the dry run saw."""
    assert request.task is not None
    found = _LINE.search(request.messages[1].content)
    if found is None:
        return json.dumps({"nonce": request.task.nonce, "operations": []})
    number, sentence = int(found.group(1)), found.group(2).strip()
    return json.dumps(
        {
            "nonce": request.task.nonce,
            "operations": [
                {
                    "op": "create_page",
                    "slug": f"address-part-{request.task.chunk_index + 1}",
                    "title": f"Address part {request.task.chunk_index + 1}",
                    "summary": sentence[:200],
                    "claims": [
                        {
                            "text": sentence[:280],
                            "evidence": [{"source": request.task.source_id, "sentence": number}],
                        }
                    ],
                }
            ],
        }
    )


def _with_config(vault: Vault, **settings: str) -> Vault:
    """The vault reopened with ``affidavit.toml``'s lines replaced (old=new)."""
    text = vault.config_path.read_text()
    for old, new in settings.items():
        assert old in text, old
        text = text.replace(old, new)
    vault.config_path.write_text(text)
    return open_vault(vault.root, clock=vault.clock)


@pytest.fixture
def small_chunks(vault: Vault) -> Vault:
    return _with_config(vault, **{"chunk_chars = 6000": "chunk_chars = 3000"})


def _speech(tmp_path: Path) -> Path:
    doc = tmp_path / "monroe.md"
    doc.write_text(SPEECH.read_text())
    return doc


def _first_calls(provider: ScriptedProvider) -> list[ModelRequest]:
    """Each chunk's first request (no re-asks: those the estimate says it leaves out)."""
    return [r for r in provider.requests if r.messages[-1].role == "user" and len(r.messages) == 2]


def test_the_estimate_is_within_ten_percent_of_what_the_model_is_sent(
    small_chunks: Vault, tmp_path: Path
) -> None:
    vault = small_chunks
    doc = _speech(tmp_path)
    provider = ScriptedProvider(replies=[_reply] * 200)
    found = estimate(vault, provider, [str(doc)], "trusted").to_json()
    report = Ingestor(vault, provider, apply_now=True).run([str(doc)], "trusted")
    sent = sum(request_tokens(r, provider) for r in _first_calls(provider))
    chunks = found["totals"]["chunks_to_ingest"]
    assert chunks == len(_first_calls(provider)) == len(report.sources[0].chunks) > 5
    assert vault.db.execute("SELECT count(*) FROM pages").fetchone()[0] > 3  # the wiki grew
    assert abs(found["totals"]["prompt_tokens"] - sent) <= 0.10 * sent, (found["totals"], sent)
    # the estimate is made of the prompts, not of a constant per chunk: the text dominates
    assert found["totals"]["prompt_tokens"] > len(SPEECH.read_text()) / 6
    vault.close()


def test_a_dry_run_changes_nothing(vault: Vault, tmp_path: Path) -> None:
    doc = _speech(tmp_path)
    before = snapshot(vault)
    nonces = vault.db.execute("SELECT count(*) FROM nonces").fetchone()[0]
    provider = ScriptedProvider(replies=[])
    found = estimate(vault, provider, [str(doc)], "trusted")
    assert found.sources[0].status == "new" and found.sources[0].chunks_to_ingest >= 1
    assert provider.requests == []  # nothing sent
    assert snapshot(vault) == before  # no source, no plan, no job, no commit
    assert vault.db.execute("SELECT count(*) FROM nonces").fetchone()[0] == nonces


def test_the_extractive_engine_costs_nothing(vault: Vault, tmp_path: Path) -> None:
    found = estimate(vault, ExtractiveProvider(), [str(_speech(tmp_path))]).to_json()
    assert found["totals"]["chunks_to_ingest"] >= 1
    assert found["totals"]["prompt_tokens"] == found["totals"]["model_calls"] == 0
    assert found["totals"]["cost"] is None


def test_a_budget_stops_cleanly_and_a_rerun_resumes_without_redoing_work(
    small_chunks: Vault, tmp_path: Path
) -> None:
    vault = small_chunks
    doc = _speech(tmp_path)
    whole = estimate(vault, ScriptedProvider(), [str(doc)], "trusted")
    chunks = whole.sources[0].chunks
    per_chunk = (whole.sources[0].prompt_tokens + whole.sources[0].completion_tokens) // chunks
    first = ScriptedProvider(replies=[_reply] * 200)
    report = Ingestor(vault, first, budget=int(per_chunk * 2.5)).run([str(doc)], "trusted")
    assert report.stopped is not None and report.stopped["reason"] == "budget"
    assert "Run the same ingest again" in report.stopped["message"]
    done = [r.task.chunk_index for r in first.requests if r.task]
    assert 1 <= len(done) < chunks
    assert report.sources[0].status == "ingested"  # stopped, not failed
    assert report.totals()["stopped"]["spent"] <= int(per_chunk * 2.5) * 1.1
    left = estimate(vault, ScriptedProvider(), [str(doc)], "trusted").sources[0]
    assert left.status == "known" and left.chunks_to_ingest == chunks - len(done)
    second = ScriptedProvider(replies=[_reply] * 200)
    again = Ingestor(vault, second).run([str(doc)], "trusted")
    redone = [r.task.chunk_index for r in second.requests if r.task]
    assert again.stopped is None
    assert sorted(done + redone) == list(range(chunks))  # every chunk once, none twice
    vault.close()


def test_a_budget_too_small_for_one_chunk_sends_nothing(vault: Vault, tmp_path: Path) -> None:
    provider = ScriptedProvider(replies=[_reply] * 5)
    report = Ingestor(vault, provider, budget=10).run([str(_speech(tmp_path))], "trusted")
    assert provider.requests == []
    assert report.stopped is not None and report.stopped["spent"] == 0


def test_prices_turn_tokens_into_a_cost(vault: Vault, tmp_path: Path) -> None:
    priced = _with_config(
        vault,
        **{
            "prompt_price_per_1k = 0.0": "prompt_price_per_1k = 0.5",
            "completion_price_per_1k = 0.0": "completion_price_per_1k = 2",
        },
    )
    totals = estimate(priced, ScriptedProvider(), [str(_speech(tmp_path))]).totals()
    expected = totals["prompt_tokens"] / 1000 * 0.5 + totals["completion_tokens"] / 1000 * 2
    assert totals["cost"] == pytest.approx(expected) and totals["cost"] > 0
    assert totals["currency"] == "USD"
    priced.close()


def test_a_price_that_is_not_a_number_is_refused(vault: Vault) -> None:
    vault.config_path.write_text(
        vault.config_path.read_text().replace(
            "prompt_price_per_1k = 0.0", 'prompt_price_per_1k = "cheap"'
        )
    )
    with pytest.raises(ConfigError, match="must be a number"):
        open_vault(vault.root)


def test_ingest_dry_run_on_the_command_line(vault: Vault, tmp_path: Path) -> None:
    doc = _speech(tmp_path)
    runner = CliRunner()
    before = snapshot(vault)
    result = runner.invoke(main, ["--vault", str(vault.root), "ingest", str(doc), "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "chunk(s) to ingest" in result.output
    assert "sends nothing anywhere" in result.output  # the default engine is extractive
    result = runner.invoke(
        main, ["--vault", str(vault.root), "ingest", str(doc), "--dry-run", "--json"]
    )
    data = json.loads(result.output)
    assert data["dry_run"] is True and data["sources"][0]["status"] == "new"
    assert snapshot(vault) == before


def test_a_dry_run_job_is_the_daemons_preview(vault: Vault, tmp_path: Path) -> None:
    from affidavit.jobs import IngestPayload, JobQueue, Worker

    doc = _speech(tmp_path)
    before = vault.db.execute("SELECT count(*) FROM sources").fetchone()[0]
    job = JobQueue(vault).submit(IngestPayload(sources=[str(doc)], dry_run=True), "ann")
    with Worker(vault.root, "w1") as worker:
        done = worker.run_once()
    assert done is not None and done.id == job.id and done.status == "done", done
    assert done.result is not None and done.result["dry_run"] is True
    assert done.result["sources"][0]["status"] == "new"
    assert done.result["totals"]["chunks_to_ingest"] >= 1
    assert vault.db.execute("SELECT count(*) FROM sources").fetchone()[0] == before


def test_a_changed_file_of_a_known_origin_is_its_next_version(vault: Vault, tmp_path: Path) -> None:
    """Issue 27: the same path with changed bytes is version N+1 of the known source, not new."""
    doc = _speech(tmp_path)
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(doc)], "trusted")
    first = vault.db.execute("SELECT id, version FROM sources").fetchone()
    assert first is not None and first[1] == 1
    doc.write_text(doc.read_text() + "\n\nCongress adjourned on the ninth day of the month.\n")
    before = snapshot(vault)
    found = estimate(vault, ExtractiveProvider(), [str(doc)], "trusted").sources[0]
    assert found.status == "new version"
    assert found.source_id != first[0]
    assert (found.version, found.previous_id, found.previous_version) == (2, first[0], 1)
    assert "version 2 of" in found.message and first[0][:12] in found.message
    assert snapshot(vault) == before
    runner = CliRunner()
    args = ["--vault", str(vault.root), "ingest", str(doc), "--dry-run"]
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "(new)" not in result.output
    assert f"(version 2 of known source {first[0][:12]})" in result.output, result.output
    data = json.loads(runner.invoke(main, [*args, "--json"]).output)["sources"][0]
    assert data["status"] == "new version"
    assert (data["version"], data["previous_id"], data["previous_version"]) == (2, first[0], 1)
    # the unchanged file, and a file never seen, keep their labels
    unrelated = tmp_path / "other.md"
    unrelated.write_text("A different address entirely.\n")
    fresh = estimate(vault, ExtractiveProvider(), [str(unrelated)], "trusted").sources[0]
    assert fresh.status == "new" and fresh.previous_id == "" and fresh.version == 1
