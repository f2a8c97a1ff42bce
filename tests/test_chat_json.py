"""``affidavit chat --json``: questions from stdin, one JSON object per answer line."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from affidavit.cli import main
from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.vault import Vault

from .conftest import SAMPLES


def test_chat_json_prints_one_answer_per_line(vault: Vault) -> None:
    doc = str(SAMPLES / "sotu" / "1941-roosevelt.md")
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([doc], "trusted")
    root = str(vault.root)
    questions = "What are the four freedoms?\nWhat about the Congress?\n\nnever asked\n"
    out = CliRunner().invoke(main, ["--vault", root, "chat", "--json"], input=questions)
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert len(lines) == 2  # the empty line ended the conversation; no prompt on stdout
    first, second = (json.loads(line) for line in lines)
    assert (first["turn"], second["turn"]) == (1, 2)
    assert first["conversation"] == second["conversation"] != ""
    assert first["question"] == "What are the four freedoms?"
    assert first["verdict"] == "answered" and first["citations"]
    cited = {c["claim_id"] for c in first["citations"]}
    assert all(
        vault.db.execute("SELECT 1 FROM claims WHERE id = ?", (claim,)).fetchone()
        for claim in cited
    )
    # the same fields as `affidavit ask --json`
    asked = CliRunner().invoke(
        main, ["--vault", root, "ask", "What are the four freedoms?", "--json"]
    )
    assert asked.exit_code == 0, asked.output
    assert set(first) - {"conversation", "turn"} == set(json.loads(asked.output))


def test_chat_json_with_no_question_prints_nothing(vault: Vault, tmp_path: Path) -> None:
    out = CliRunner().invoke(main, ["--vault", str(vault.root), "chat", "--json"], input="")
    assert out.exit_code == 0 and out.output == ""
