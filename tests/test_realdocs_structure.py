"""Issue 24 item 1: the structure a reader of technical documentation relies on. Each failure
reproduced first on a document of our own: a manual whose options are a definition list, a
section whose heading is in the chunk before."""

from __future__ import annotations

from pathlib import Path

from affidavit.extractive import propose_plan
from affidavit.extractive.terms import description, is_term
from affidavit.ingest.chunking import chunk_text, heading_before
from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.base import IngestTask
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.vault import Vault

SOURCE = "0123456789abcdef" * 4

MANUAL = """<html><head><title>frob-commit(1)</title></head><body>
<h1>frob-commit(1) Manual Page</h1>
<h2>NAME</h2><p>frob-commit - Record changes to the frob repository</p>
<h2>OPTIONS</h2>
<dl>
<dt>-a</dt><dt>--all</dt>
<dd><p>Tell the command to automatically stage files that have been modified and deleted.</p></dd>
<dt>--amend</dt>
<dd><p>Replace the tip of the current branch by creating a new commit. The recorded tree is
prepared as usual and the message from the original commit is used as the starting point.</p></dd>
<dt>--author=&lt;author&gt;</dt>
<dd><p>Override the commit author recorded in the new commit object.</p></dd>
<dt>core.quotePath</dt>
<dd><p>Commands that output paths quote unusual characters in the pathname.</p></dd>
</dl>
<h2>DISCUSSION</h2>
<p>Though not required, it is a good idea to begin the commit message with a single short line.</p>
</body></html>
"""


def claims_of(plan: dict[str, object]) -> list[dict[str, object]]:
    ops = plan["operations"]
    assert isinstance(ops, list)
    return [c for op in ops for c in op.get("claims", [])]


def _text_of(html: str) -> str:
    from affidavit.sources.extract import HTML, extract

    return extract(html.encode(), HTML, render=False).text


def test_a_definition_list_term_and_its_description_are_one_claim() -> None:
    text = _text_of(MANUAL)
    plan = propose_plan(IngestTask("n" * 16, SOURCE, "frob-commit.html", text, 0, 0, 1))
    by_text = {str(c["text"]): c for c in claims_of(plan)}
    amend = by_text.get(
        "`--amend`: Replace the tip of the current branch by creating a new commit."
    )
    assert amend is not None, list(by_text)
    quotes = [str(e["quote"]) for e in amend["evidence"]]  # type: ignore[union-attr]
    assert "--amend" in quotes[0] and quotes[0].endswith("by creating a new commit.")
    assert "`-a, --all`: Tell the command to automatically stage files" in " ".join(by_text)
    assert any(t.startswith("`--author=<author>`: Override the commit author") for t in by_text)
    assert any(t.startswith("`core.quotePath`: Commands that output paths") for t in by_text)
    # the description is not also a claim without its term
    assert "Replace the tip of the current branch by creating a new commit." not in by_text
    # prose before a paragraph is no term
    assert not any(t.startswith("`") and "good idea" in t for t in by_text)


def test_the_definitions_pass_the_gate(vault: Vault, tmp_path: Path) -> None:
    doc = tmp_path / "frob-commit.html"
    doc.write_text(MANUAL)
    report = Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(doc)], "trusted")
    assert not report.failed
    rows = vault.db.execute(
        "SELECT text FROM claims WHERE status = 'active' AND text LIKE '`--amend`:%'"
    ).fetchall()
    assert [r["text"] for r in rows] == [
        "`--amend`: Replace the tip of the current branch by creating a new commit."
    ]
    page = (vault.root / "wiki" / "frob-commit.md").read_text()
    assert "--amend\\`: Replace the tip" in page


def test_what_is_a_term() -> None:
    assert is_term(["-a", "--all"])
    assert is_term(["--fixup=[(amend|reword):]<commit>"])
    assert is_term(["push [-p|--patch] [-S|--staged] [--] [<pathspec>…]"])
    assert is_term(["--amend::"])
    assert is_term(["SQLITE_BUSY"])
    assert is_term(["verbatim"])
    assert not is_term(["Introduction"])  # a title over a paragraph
    assert not is_term(["The content to be committed can be specified in several ways:"])
    assert not is_term(["This is a sentence."])
    assert not is_term(["## Heading"])
    assert not is_term(["Some words of a title"])
    assert description("`--amend`: Replace the tip.") == "Replace the tip."
    assert description("Plain text: with a colon.") == "Plain text: with a colon."


def test_a_chunk_knows_the_heading_it_begins_under() -> None:
    text = "# Tool\n\n## OPTIONS\n\n```\n# not a heading\n```\n\n" + " ".join(
        f"The option number {n} changes how the tool writes its report of file {n}."
        for n in range(12)
    )
    assert heading_before(text, len(text) - 5) == "OPTIONS"
    chunks = chunk_text(text, 300)
    assert len(chunks) > 1 and all(c.section == "OPTIONS" for c in chunks[1:])
    second = chunks[-1]
    task = IngestTask(
        "n" * 16,
        SOURCE,
        "tool.md",
        text[second.start : second.end],
        second.start,
        len(chunks) - 1,
        len(chunks),
        open_section=second.section,
    )
    plan = propose_plan(task)
    sections = [op.get("section") for op in plan["operations"] if op.get("claims")]
    assert sections and all(s == "OPTIONS" for s in sections), sections
