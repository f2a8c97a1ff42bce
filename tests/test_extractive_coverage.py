"""The extractive engine covers its source: every usable sentence a claim, under the document's
own headings and title; topic pages only for subjects named repeatedly, never for a stray capital."""

from __future__ import annotations

from typing import Any

from affidavit.extractive import propose_plan
from affidavit.extractive.segment import segment
from affidavit.extractive.topics import name_key
from affidavit.extractive.units import build_units
from affidavit.plan.schema import MAX_OPERATIONS, parse_plan
from affidavit.providers.base import IngestTask, PageBrief

SOURCE = "fedcba9876543210" * 4

# A tutorial page as the extraction renders reStructuredText: ATX headings, code fenced.
TUTORIAL = """# Whetting Your Appetite

If you do much work on computers, eventually you find that there's some task you'd like to automate.
Python is simple to use, but it is a real programming language, offering much more structure.
Python allows you to split your program into modules that can be reused in other programs.
Python is an interpreted language, which can save you considerable time during development.
The interpreter can be used interactively, which makes it easy to experiment with features.
By the way, the language is named after the BBC show "Monty Python's Flying Circus".

## Loops

Loop statements may have an else clause; it is executed when the loop terminates through exhaustion of the iterable.
Instead print the value of each item when the loop is finished.
Grep stops reading a file after the first match when it is told to.

```
>>> for n in range(2, 10):
...     print(n)
Token(type='END', value=';')
```

END marks the end of the input and NUM marks a number token in this example.

## Tokens

The tokenizer emits an END token when the input stream is exhausted.
A scanner that meets a digit returns a NUM token with its value attached.
Each parser treats a NUM token as an operand and an END token as the stop signal.
Here we instead print the token stream for debugging the scanner.
The loop would instead print nothing at all when the input is empty.
Scripts often instead print a warning message and continue with the next file.
The base class defines the interface and a base class may be abstract.
Base classes are listed in the class statement after the name of the class.
Every base class is searched from left to right when an attribute is looked up.
"""


def task(text: str, name: str = "tutorial-appetite.rst", **kw: Any) -> IngestTask:
    return IngestTask("n" * 16, SOURCE, name, text, 0, 0, 1, **kw)


def page_ops(plan: dict[str, Any], slug: str) -> list[dict[str, Any]]:
    return [
        op
        for op in plan["operations"]
        if op["op"] in ("create_page", "add_claims") and slug in (op.get("slug"), op.get("page"))
    ]


def test_the_title_is_the_documents_own_first_heading_not_its_file_name() -> None:
    plan = propose_plan(task(TUTORIAL))
    parse_plan(plan)
    create = plan["operations"][0]
    assert create["op"] == "create_page" and create["category"] == "sources"
    assert create["title"] == "Whetting Your Appetite"
    assert "appetite.rst" not in create["title"] and "tutorial" not in create["title"].lower()


def test_every_usable_sentence_becomes_a_claim_under_its_heading() -> None:
    plan = propose_plan(task(TUTORIAL))
    slug = plan["operations"][0]["slug"]
    ops = page_ops(plan, slug)
    on_page = [c["text"] for op in ops for c in op["claims"]]
    usable = [u.text for u in build_units(TUTORIAL, segment(TUTORIAL))]
    assert len(usable) >= 12
    # a code block is one claim of its own, shown as code (issue 24): never cut into sentences
    code = [t for t in on_page if t.startswith("`")]
    assert code == ["`>>> for n in range(2, 10): ... print(n) Token(type='END', value=';')`"]
    on_page = [t for t in on_page if not t.startswith("`")]
    assert on_page == usable  # all of them, in document order: no selection
    sections = {c["text"]: op["section"] for op in ops for c in op["claims"]}
    assert sections[usable[0]] == "Overview"
    loop = next(t for t in usable if t.startswith("Loop statements"))
    assert sections[loop] == "Loops"
    assert not any("Token(" in t or ">>>" in t for t in on_page)  # no prose claim holds code


def test_a_long_source_is_split_over_operations_within_the_schemas_limits() -> None:
    sections = []
    for s in range(12):
        sentences = " ".join(
            f"Section {s} states fact number {n} about the storage engine in plain words."
            for n in range(40 if s == 0 else 4)
        )
        sections.append(f"## Part {s}\n\n{sentences}\n")
    text = "# The Storage Engine\n\n" + "\n".join(sections)
    plan = propose_plan(task(text, "storage.md"))
    parse_plan(plan)  # the schema accepts it: at most 20 operations, 30 claims each
    assert len(plan["operations"]) <= MAX_OPERATIONS
    assert all(len(op.get("claims", [])) <= 30 for op in plan["operations"])
    slug = plan["operations"][0]["slug"]
    claims = [c["text"] for op in page_ops(plan, slug) for c in op["claims"]]
    assert len(claims) == 40 + 11 * 4  # none dropped for room


def test_near_duplicate_sentences_become_one_claim() -> None:
    text = (
        "# Notes\n\nThe cache is flushed every ten minutes by the worker.\n\n"
        "The cache is flushed every ten minutes by the worker!\n\n"
        "Entries older than a day are removed by the nightly job.\n"
    )
    plan = propose_plan(task(text, "notes.md"))
    claims = [
        c["text"] for op in page_ops(plan, plan["operations"][0]["slug"]) for c in op["claims"]
    ]
    assert sum("cache is flushed" in c for c in claims) == 1


def topic_titles(plan: dict[str, Any]) -> list[str]:
    return [op["title"] for op in plan["operations"] if op.get("category") == "topics"]


def test_no_topic_for_a_sentence_initial_capital_or_an_all_caps_token() -> None:
    titles = topic_titles(propose_plan(task(TUTORIAL)))
    keys = {name_key(t) for t in titles}
    for stray in ("instead print", "grep stop", "end", "num", "level level"):
        assert stray not in keys, titles


def test_base_class_and_base_classes_are_one_topic() -> None:
    assert name_key("Base classes") == name_key("Base class") == "base class"
    titles = topic_titles(propose_plan(task(TUTORIAL)))
    assert [name_key(t) for t in titles].count("base class") <= 1
    assert "base class" in {name_key(t) for t in titles}  # named in three sentences


def test_a_name_mentioned_twice_gets_a_page_only_when_another_source_names_it() -> None:
    text = (
        "# Interpreters\n\nThe reference interpreter was written by Guido van Rossum in C.\n"
        "Guido van Rossum chose the name after a comedy series from the BBC.\n"
        "The interpreter reads a program and runs it one statement at a time.\n"
    )
    assert "Guido van Rossum" not in topic_titles(propose_plan(task(text, "interp.md")))
    other = PageBrief("history", "History", "Guido van Rossum released the first version.")
    plan = propose_plan(task(text, "interp.md", pages=(other,)))
    assert "Guido van Rossum" in topic_titles(plan)


REFERENCE = """# shutil --- High-level file operations

The shutil module offers a number of high-level operations on files and collections of files.

## Directory and files operations

```
rmtree(path, ignore_errors=False, onerror=None)
```

Delete an entire directory tree; path must point to a directory.
If ignore_errors is true, errors resulting from failed removals will be ignored.

## Options

-a, --all  do not ignore entries starting with .

-C  list entries by columns

The generator has a period of 2**19937-1 and a block of 10*1024 bytes.
"""


def test_api_reference_options_and_arithmetic_keep_their_words() -> None:
    plan = propose_plan(task(REFERENCE, "library-shutil.rst"))
    parse_plan(plan)
    claims = {
        c["text"]: c for op in page_ops(plan, plan["operations"][0]["slug"]) for c in op["claims"]
    }
    described = "rmtree(path, ignore_errors=False, onerror=None): Delete an entire directory tree;"
    (rmtree,) = [c for t, c in claims.items() if t.startswith(described)]
    quotes = [e["quote"] for e in rmtree["evidence"]]
    assert quotes[0] == "rmtree(path, ignore_errors=False, onerror=None)"
    assert all(q in REFERENCE for q in quotes)
    assert "-a, --all do not ignore entries starting with ." in claims  # an option, not a fragment
    assert "-C list entries by columns" in claims
    assert "The generator has a period of 2**19937-1 and a block of 10*1024 bytes." in claims
    assert not any(t.startswith("rmtree(") and "ignore_errors is true" in t for t in claims)
