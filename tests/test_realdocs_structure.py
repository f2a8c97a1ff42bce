"""Issue 24 item 1: the structure a reader of technical documentation relies on. Each failure
reproduced first on a document of our own: a manual whose options are a definition list, a
section whose heading is in the chunk before."""

from __future__ import annotations

import json
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


GUIDE = """# Foreign keys

## Enabling Foreign Key Support

Assuming the library is compiled with foreign key constraints enabled, it must still be enabled by the application at runtime, using the PRAGMA foreign_keys command. For example:

```
sqlite> PRAGMA foreign_keys = ON;
```

Foreign key constraints are disabled by default, so must be enabled separately for each connection.

```
CREATE TABLE artist(
  artistid    INTEGER PRIMARY KEY,
  artistname  TEXT
);
```

(nb "<" and ">" are stripped)

The author names are by convention some form of a personal name.
"""


def test_code_blocks_are_quotable_evidence_never_split() -> None:
    plan = propose_plan(IngestTask("n" * 16, SOURCE, "foreignkeys.html", GUIDE, 0, 0, 1))
    texts = [str(c["text"]) for c in claims_of(plan)]
    joined = [t for t in texts if t.endswith("`sqlite> PRAGMA foreign_keys = ON;`")]
    assert joined and joined[0].startswith("Assuming the library is compiled"), texts
    assert "`CREATE TABLE artist( artistid INTEGER PRIMARY KEY, artistname TEXT );`" in texts
    (create,) = [c for c in claims_of(plan) if str(c["text"]).startswith("`CREATE TABLE")]
    quotes = [str(e["quote"]) for e in create["evidence"]]  # type: ignore[union-attr]
    assert quotes == [GUIDE[GUIDE.index("CREATE TABLE") : GUIDE.index(");") + 2]]
    # code is never cut into sentences, and a parenthetical is no term
    assert not any(t.startswith(("artistid", "`(nb")) for t in texts), texts
    sections = {
        op.get("section") for op in plan["operations"] if "PRAGMA" in json.dumps(op.get("claims"))
    }
    assert sections == {"Enabling Foreign Key Support"}


def test_code_claims_pass_the_gate(vault: Vault, tmp_path: Path) -> None:
    doc = tmp_path / "foreignkeys.md"
    doc.write_text(GUIDE)
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(doc)], "trusted")
    texts = [
        r["text"]
        for r in vault.db.execute("SELECT text FROM claims WHERE status = 'active'").fetchall()
    ]
    assert any(t.endswith("`sqlite> PRAGMA foreign_keys = ON;`") for t in texts), texts
    assert "`CREATE TABLE artist( artistid INTEGER PRIMARY KEY, artistname TEXT );`" in texts


CONFLICT = """<html><body><h1>The ON CONFLICT Clause</h1>
<p>The ON CONFLICT clause is a non-standard extension specific to SQLite that can appear in many
other SQL commands.</p>
<svg><text>ON CONFLICT</text><text>ROLLBACK</text><text>REPLACE</text></svg>
<dl><dt>ROLLBACK</dt>
<dd><p>When an applicable constraint violation occurs, the ROLLBACK resolution algorithm aborts
the current SQL statement with an SQLITE_CONSTRAINT error and rolls back the current
transaction.</p></dd>
<dt>REPLACE</dt>
<dd><p>When a UNIQUE or PRIMARY KEY constraint violation occurs, the REPLACE algorithm deletes
pre-existing rows that are causing the constraint violation prior to inserting the current row
and the command continues executing normally.</p></dd></dl>
</body></html>
"""


def test_a_heading_also_drawn_in_hidden_text_holds_nothing_back(
    vault: Vault, tmp_path: Path
) -> None:
    doc = tmp_path / "lang_conflict.html"
    doc.write_text(CONFLICT)
    report = Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(doc)], "trusted")
    assert not report.failed
    pending = vault.db.execute("SELECT COUNT(*) FROM plans WHERE status = 'pending'").fetchone()
    assert pending[0] == 0
    texts = [
        r["text"]
        for r in vault.db.execute("SELECT text FROM claims WHERE status = 'active'").fetchall()
    ]
    assert any("the REPLACE algorithm deletes pre-existing rows" in t for t in texts), texts


def test_no_section_is_named_by_words_hidden_text_holds() -> None:
    text = (
        "# The ON CONFLICT Clause\n\nON CONFLICT ROLLBACK ABORT FAIL IGNORE REPLACE\n\n"
        "The ON CONFLICT clause is a non-standard extension specific to SQLite.\n\nREPLACE\n\n"
        "When a UNIQUE or PRIMARY KEY constraint violation occurs, the REPLACE algorithm deletes "
        "pre-existing rows that are causing the constraint violation.\n"
    )
    diagram = text.index("ON CONFLICT ROLLBACK")
    flagged = ((diagram, text.index("\n", diagram)),)  # an SVG diagram's text: hidden
    task = IngestTask("n" * 16, SOURCE, "lang_conflict.html", text, 0, 0, 1, flagged=flagged)
    sections = [op.get("section") for op in propose_plan(task)["operations"] if op.get("claims")]
    assert sections and not {"Replace", "REPLACE"} & set(sections), sections
