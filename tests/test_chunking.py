"""Chunks never cut inside a code fence, a table or a list item; a fence longer than a chunk, or
one never closed, still yields no code claims."""

from __future__ import annotations

from pathlib import Path

from affidavit.ingest.chunking import blocks, chunk_text
from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.vault import Vault, open_vault

PROSE = "The lighthouse keeper wrote every storm into the logbook before dawn. "
CODE_LINE = "Every line in this block reads like prose but it is code inside a fence.\n"
"""Code an attacker (or a README) writes as sentences: a claim if the fence is lost."""


def covers(text: str, max_chars: int) -> list[tuple[int, int, str]]:
    chunks = chunk_text(text, max_chars)
    assert "".join(text[c.start : c.end] for c in chunks) == text
    assert all(c.end - c.start <= max_chars for c in chunks)
    return [(c.start, c.end, c.fence) for c in chunks]


def inside(cut: int, span: tuple[int, int]) -> bool:
    return span[0] < cut < span[1]


def test_a_fence_that_fits_is_never_cut_even_when_the_window_ends_inside_it() -> None:
    fence = "```\n" + "x = compute(1, 2)\n" * 20 + "```\n"
    text = PROSE * 10 + "\n" + fence + "\n" + PROSE * 10
    at = text.index("```")
    span = (at, text.index("```\n", at + 3) + 4)
    for limit in (800, 900, 1000, 1100, 1200):
        for start, _end, fence_marker in covers(text, limit):
            assert not inside(start, span), limit
            assert fence_marker == ""


def test_tables_and_list_items_are_not_cut() -> None:
    table = "| name | meaning |\n|---|---|\n" + "| keeper | the person who tends the light |\n" * 8
    item = "- A list item that runs over\n  several lines, " + "and keeps going, " * 12 + "ends.\n"
    text = PROSE * 8 + "\n" + table + "\n" + PROSE * 3 + "\n" + item + item + "\n" + PROSE * 8
    spans = [(b.start, b.end) for b in blocks(text)]
    assert len(spans) == 3  # the table and both items
    for limit in range(500, 1400, 37):
        for start, _end, _ in covers(text, limit):
            assert not any(inside(start, s) for s in spans), (limit, start)


def test_fence_rules_follow_commonmark() -> None:
    text = "````\n```\nstill code\n```\n````\nprose\n~~~\n```\n~~~~ \ntail\n"
    found = [(text[b.start : b.end], b.fence) for b in blocks(text)]
    assert found == [
        ("````\n```\nstill code\n```\n````\n", "````"),
        ("~~~\n```\n~~~~ \n", "~~~"),
    ]
    unclosed = "prose\n```python\nnever closed\n" + "more code\n" * 5
    (only,) = blocks(unclosed)
    assert (only.start, only.end, only.fence) == (6, len(unclosed), "```")


def test_a_chunk_that_begins_inside_a_long_fence_says_so() -> None:
    text = PROSE * 5 + "\n\n````\n" + CODE_LINE * 60 + "````\n\n" + PROSE * 5
    chunks = covers(text, 1000)
    opening = text.index("````")
    closing = text.index("````\n\n", opening + 4) + 5
    for start, _end, marker in chunks:
        assert marker == ("````" if opening < start < closing else "")
    assert sum(1 for _, _, m in chunks if m) >= 3


def ingest_all(vault: Vault, tmp_path: Path, text: str, chunk_chars: int) -> list[str]:
    vault.config_path.write_text(
        vault.config_path.read_text().replace("chunk_chars = 6000", f"chunk_chars = {chunk_chars}")
    )
    v = open_vault(vault.root, clock=vault.clock)
    doc = tmp_path / "attack.md"
    doc.write_text(text)
    Ingestor(v, ExtractiveProvider(), apply_now=True).run([str(doc)], "trusted")
    texts = [r[0] for r in v.db.execute("SELECT text FROM claims WHERE status = 'active'")]
    v.close()
    return texts


def test_a_fence_longer_than_a_chunk_gives_no_code_claims(vault: Vault, tmp_path: Path) -> None:
    text = (
        "# Keeper's notes\n\n"
        + PROSE * 4
        + "\n\n```\n"
        + CODE_LINE * 120
        + "```\n\n"
        + "The second paragraph after the code is prose again and names the harbour.\n"
    )
    claims = ingest_all(vault, tmp_path, text, 2000)
    assert any("logbook" in c for c in claims)
    assert any("harbour" in c for c in claims)
    assert not [c for c in claims if "reads like prose" in c]


def test_a_fence_never_closed_gives_no_code_claims(vault: Vault, tmp_path: Path) -> None:
    text = "# Keeper's notes\n\n" + PROSE * 4 + "\n\n```\n" + CODE_LINE * 120
    claims = ingest_all(vault, tmp_path, text, 2000)
    assert any("logbook" in c for c in claims)
    assert not [c for c in claims if "reads like prose" in c]


def test_a_fence_closed_by_a_shorter_marker_stays_open(vault: Vault, tmp_path: Path) -> None:
    """An attacker's `````` fence with ``` lines inside: a renderer shows all of it as code."""
    body = ("```\n" + CODE_LINE * 3) * 8
    text = "# Keeper's notes\n\n" + PROSE * 4 + "\n\n`````\n" + body + "`````\n\n" + PROSE
    claims = ingest_all(vault, tmp_path, text, 6000)
    assert any("logbook" in c for c in claims)
    assert not [c for c in claims if "reads like prose" in c]
