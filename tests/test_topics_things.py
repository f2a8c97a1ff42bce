"""Issue 24 item 5, round 2 (branch ``overview``): topic pages are things. Each noise below was a
topic page of the SQLite manual's vault (bench/overview_judged.json), reproduced on a document
of our own that names it as often as a real subject; the attacker's side: the real subjects
beside them, written the same way, still become pages."""

from __future__ import annotations

from affidavit.extractive.analysis import _units
from affidavit.extractive.topics import find_topics, topic_candidates
from affidavit.providers.base import IngestTask


def _titles(text: str, name: str = "notes.md") -> list[str]:
    task = IngestTask("n" * 16, "0" * 64, name, text, 0, 0, 1)
    units, _ = _units(task)
    return [t.title for t in find_topics(units, {}, 12, text=text)]


def test_plural_interface_words_and_generic_labels_are_no_names() -> None:
    text = "# Guide\n\n" + "\n".join(
        f"The Contents of part {n} list the Purpose of each Write Ahead Log feature in the Pager."
        for n in range(4)
    )
    titles = _titles(text)
    assert "Contents" not in titles and "Purpose" not in titles, titles
    assert "Write Ahead Log" in titles and "Pager" in titles, titles


def test_example_placeholders_are_no_names_but_real_people_are() -> None:
    text = "# Examples\n\n" + "\n".join(
        f"In example {n}, Alice sends a row to Bob while Richard Hipp reviews the Query Planner."
        for n in range(4)
    )
    titles = _titles(text)
    assert "Alice" not in titles and "Bob" not in titles, titles
    assert "Richard Hipp" in titles and "Query Planner" in titles, titles


def test_a_capitalised_label_before_a_colon_is_no_mention() -> None:
    rows = "\n".join(
        f"Column {n} has Resulting Affinity: TEXT in the Storage Engine and the Btree Module."
        for n in range(4)
    )
    titles = _titles(f"# Affinity\n\n{rows}\n")
    assert "Resulting Affinity" not in titles, titles
    assert "Storage Engine" in titles and "Btree Module" in titles, titles


def test_modifier_phrases_and_cut_phrases_are_no_topics() -> None:
    lines = [
        "Each single row of the result goes through the page cache once.",
        "A single row may hold a returned text from the page cache as well.",
        "The returned text of a query is copied into the page cache.",
        "Another single row and its returned text stay in the page cache for the next query.",
    ]
    titles = [t.lower() for t in _titles("# Queries\n\n" + "\n".join(lines) + "\n")]
    assert "single row" not in titles and "returned text" not in titles, titles
    assert "page cache" in titles, titles


def test_a_phrase_always_cut_from_a_longer_one_is_no_candidate() -> None:
    lines = [
        "Ordinary common table expressions are helpful for making queries easier to read.",
        "All common table expressions are created by prepending a WITH clause to the statement.",
        "The ordinary common table expressions factor subqueries out of the main statement.",
        "A WITH clause can contain ordinary common table expressions and recursive ones.",
        "Each common table expression of a query is run once.",
    ]
    text = "# Queries\n\n" + "\n".join(lines) + "\n"
    units, _ = _units(IngestTask("n" * 16, "0" * 64, "notes.md", text, 0, 0, 1))
    keys = [c.key for c in topic_candidates(units, (), text)]
    # "common table" is always followed by "expression(s)", "ordinary common" by "table"
    assert "common table" not in keys and "ordinary common" not in keys, keys
    assert "common table expression" in keys, keys


def test_a_verb_phrase_is_no_topic() -> None:
    lines = [  # fts5.html's three sentences (and a fourth like them)
        "The exception is if the tokenizer supports synonyms.",
        "Custom tokenizers may also support synonyms.",
        "When parsing a document, a tokenizer that supports synonyms calls xToken() 5 times.",
        "Every Porter tokenizer of the index supports synonyms in its own way.",
    ]
    text = "# fts5\n\n" + "\n".join(lines) + "\n"
    units, _ = _units(IngestTask("n" * 16, "0" * 64, "fts5.html", text, 0, 0, 1))
    keys = [c.key for c in topic_candidates(units, (), text)]
    assert "support synonym" not in keys, keys


def _context_line(name: str, text: str) -> str:
    from affidavit.extractive import propose_plan

    plan = propose_plan(IngestTask("n" * 16, "0" * 64, name, text, 0, 0, 1))
    (op,) = [o for o in plan["operations"] if o["op"] == "update_context"]
    return str(op["entries"][0]["text"])


def test_a_speech_is_summed_up_by_its_opening_not_its_richest_detail() -> None:
    """The quick start's first speech: its overview line was the loan completed in Holland (a
    detail rich in numbers and names); a document's opening sentence says what it is about."""
    from pathlib import Path

    import affidavit

    path = Path(affidavit.__file__).parent / "samples" / "sotu" / "1790-washington.md"
    text = path.read_text()[:6000]
    line = _context_line("1790-washington.md", text[: text.rindex(".") + 1])
    assert line.startswith("The abundant fruits of another year have blessed our country"), line


def test_the_opening_is_passed_over_when_it_is_no_statement() -> None:
    """An attacker's (or a manual's) first lines: a labelled aside, a pointer elsewhere, a line
    that introduces a list, a syntax diagram's words. None is the overview line."""
    text = (
        "# Frobnicator\n\n"
        "Update: As of version 3.2 the frobnicator keeps its cache in memory by default.\n\n"
        "See the frobnicator tuning guide for the details of every knob it offers.\n\n"
        "The following restrictions apply to frobnicating a table inside a trigger:\n\n"
        "WITH RECURSIVE frob-expression , SELECT DISTINCT frob-column , FROM frob-table\n\n"
        "The frobnicator is a tool that compacts the tables of a database file in place.\n\n"
        "It reads each page of the file once and writes the compacted page back to it.\n"
    )
    line = _context_line("frob.md", text)
    assert line.startswith("The frobnicator is a tool that compacts"), line


def test_a_title_alone_is_no_topic_but_the_named_person_is() -> None:
    """The quick start's "Emperor" page (the Emperor of Russia, of France... whoever a speech
    means): a title names no one; the name with it does."""
    text = "# Speech\n\n" + "\n".join(
        f"The Emperor received our minister {n} times, and Emperor Alexander answered each note."
        for n in range(4)
    )
    titles = _titles(text)
    assert "Emperor" not in titles, titles
    assert "Emperor Alexander" in titles, titles


def test_a_heading_or_fragment_is_no_overview_line_but_a_name_line_is() -> None:
    text = (
        "# sqlite3\n\n"
        "The sqlite3 program is a shell for databases, tables and the indexes of every\n\n"
        "Each statement typed at the sqlite3 prompt runs against the open database file.\n"
    )
    assert _context_line("cli.html", text).startswith("Each statement typed at the sqlite3")
    manual = "# git-add(1)\n\n## NAME\n\ngit-add - Add file contents to the index\n"
    assert _context_line("git-add.html", manual) == "git-add - Add file contents to the index"


def test_menu_items_and_placeholders_are_no_topics_but_the_current_branch_is() -> None:
    """git's noise: "Use Vim", "Use Neovim" (a merge tool menu), "Git foo", "Pattern foo"; the
    current branch, git's subject on fourteen pages, stays a topic."""
    lines = [
        "Use Vim to resolve the conflict, or Use Neovim, and the current branch moves on.",
        "Run Git foo in the current branch to see the pattern foo of the working tree.",
        "The current branch is the one HEAD names; Use Vim again to edit its message.",
        "Each commit on the current branch records the pattern foo with Use Neovim set.",
    ]
    text = "# git-mergetool\n\n" + "\n".join(lines) + "\n"
    units, _ = _units(IngestTask("n" * 16, "0" * 64, "git-mergetool.html", text, 0, 0, 1))
    keys = [c.key for c in topic_candidates(units, (), text)]
    for noise in ("use vim", "use neovim", "git foo", "pattern foo", "run git"):
        assert noise not in keys, keys
    assert "current branch" in keys, keys
    assert "Current branch" in _titles(text, "git-mergetool.html")
