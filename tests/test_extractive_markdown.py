"""Code a CommonMark renderer shows as code is never a sentence claim, wherever markdown puts it:
an indented block, a fence inside a list item or a block quote (markdown-it-py's token maps, as
offsets of the stored text)."""

from __future__ import annotations

from affidavit.extractive import propose_plan
from affidavit.extractive.markdown import code_spans
from affidavit.providers.base import IngestTask

SOURCE = "00ff" * 16
CODE = "This line reads like prose but a renderer shows it as code"
DOC = f"""# Keeper's notes

The lighthouse keeper wrote every storm into the logbook before dawn.

    {CODE}, indented by four.
    {CODE}, the second indented line.

- A list item says the lamp was lit at dusk every evening of the year.

  ```
  {CODE}, fenced inside a list item.
  ```

> A quoted keeper said the fog horn sounded twice an hour all night.
>
> ```
> {CODE}, fenced inside a block quote.
> ```

The harbour master read the logbook aloud at the end of every month.
"""


def texts(doc: str, name: str = "notes.md", fence: str = "") -> list[str]:
    plan = propose_plan(IngestTask("n" * 16, SOURCE, name, doc, 0, 0, 1, open_fence=fence))
    return [str(c["text"]) for op in plan["operations"] for c in op.get("claims", [])]


def test_indented_and_nested_code_gives_no_claim() -> None:
    claims = texts(DOC)
    assert any("logbook before dawn" in c for c in claims)
    assert any("lamp was lit at dusk" in c for c in claims)
    assert any("fog horn sounded" in c for c in claims)
    assert any("harbour master" in c for c in claims)
    assert not [c for c in claims if "reads like prose" in c]


def test_code_spans_are_offsets_of_the_chunk_itself() -> None:
    spans = code_spans(DOC)
    assert len(spans) == 3
    assert all(CODE in DOC[a:b] for a, b in spans)
    # a chunk that begins inside a fence: its first lines are code up to the closing fence
    chunk = f"{CODE}.\n```\n\nThe keeper closed the logbook at dawn every single day.\n"
    ((a, b),) = code_spans(chunk, "```")
    assert (a, chunk[a:b]) == (0, f"{CODE}.\n```\n")
    assert code_spans("Plain prose with no code at all, in one sentence.\n") == ()
