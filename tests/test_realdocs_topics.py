"""Issue 24 item 5: topic pages are things. Reproduced first on a document of our own whose
interface words, e-mail header fields and generic nouns recur as often as its one real subject."""

from __future__ import annotations

from affidavit.extractive.analysis import _units
from affidavit.extractive.topics import _phrase_edge, find_topics
from affidavit.providers.base import IngestTask

MAIL = """# Mail

Date: Fri, 5 Nov 2021 10:00:00 +0100 was set by the sender of the patch.
The header said Date: Fri, 12 Nov 2021 and the body was a patch of the working tree.
Another header said Date: Fri, 19 Nov 2021 for the next patch of the working tree.
Click Edit to change the entry, then Edit again to save it in the working tree.
Press Edit when the list shows an Empty list or a Boolean value for the working tree.
An Empty list is shown when no Boolean value is set in the working tree.
Every Empty list and Boolean value stays in the working tree until Edit is pressed.
The Linux Foundation hosts the project, and the Linux Foundation pays for the servers.
Each year the Linux Foundation publishes a report on the working tree.
Members of the Linux Foundation vote on its budget every spring.
"""


def test_interface_words_header_fields_and_generic_nouns_are_no_topics() -> None:
    task = IngestTask("n" * 16, "0" * 64, "mail.md", MAIL, 0, 0, 1)
    units, _ = _units(task)
    titles = [t.title for t in find_topics(units, {}, 10, text=MAIL)]
    for noise in ("Fri", "Nov", "Date", "Edit", "Empty list", "Boolean value"):
        assert noise not in titles, titles
    assert "Linux Foundation" in titles and "Working tree" in titles, titles


SPEECH = """# 1941-Franklin D Roosevelt

I address you, the Members of the Seventy-Seventh Congress, at a moment unprecedented in the history of the Union.

Fortunately, only one of these-the four-year War Between the States-ever threatened our national unity.

In the future days, which we seek to make secure, we look forward to a world founded upon four essential human freedoms.

The first is freedom of speech and expression-everywhere in the world.
"""

MANUAL = """# git-commit(1)

## NAME

git-commit - Record changes to the repository

## DESCRIPTION

Create a new commit containing the current contents of the index and the given log message describing the changes. The new commit is a direct child of HEAD, usually the tip of the current branch.
"""


def test_the_overview_line_says_what_a_source_is_about() -> None:
    from affidavit.extractive import propose_plan

    def context_line(name: str, text: str) -> str:
        plan = propose_plan(IngestTask("n" * 16, "0" * 64, name, text, 0, 0, 1))
        (op,) = [o for o in plan["operations"] if o["op"] == "update_context"]
        return str(op["entries"][0]["text"])

    speech = context_line("1941-roosevelt.md", SPEECH)
    assert not speech.startswith("Fortunately"), speech
    assert (
        context_line("git-commit.html", MANUAL) == "git-commit - Record changes to the repository"
    )


def test_verb_phrases_and_example_identifiers_are_no_topics() -> None:
    text = "# Queries\n\n" + "\n".join(
        f"When the query contains a {w} term, the function returns a row and Create makes Idx1 "
        f"hold the {w} value for the Query Planner of the Linux Foundation."
        for w in ("first", "second", "third", "fourth")
    )
    task = IngestTask("n" * 16, "0" * 64, "queries.md", text, 0, 0, 1)
    units, _ = _units(task)
    titles = [t.title for t in find_topics(units, {}, 10, text=text)]
    for noise in ("Query contains", "Function returns", "Create", "Idx1"):
        assert noise not in titles, titles
    assert "Query Planner of the Linux Foundation" in titles, titles


def test_a_definitions_first_verb_and_letter_runs_are_no_topics() -> None:
    text = "# git-mergetool\n\n" + "\n\n".join(
        f"--opt-{n}\n\nPrint a list of merge tools that may be used with the Merge Driver {n}.\n\n"
        f"The graph shows B C and D D D next to the Merge Driver in row {n}."
        for n in range(4)
    )
    task = IngestTask("n" * 16, "0" * 64, "git-mergetool.html", text, 0, 0, 1)
    units, _ = _units(task)
    assert any(u.text.startswith("`--opt-0`: Print") for u in units)
    titles = [t.title for t in find_topics(units, {}, 10, text=text)]
    assert "Print" not in titles and "B C" not in titles and "D D D" not in titles, titles
    assert "Merge Driver" in titles, titles


def test_capital_headings_unit_symbols_and_verb_openings_are_no_topics() -> None:
    """git's noise (bench/overview_judged.json): "INCOMPATIBLE OPTIONS" and "BACKEND SPECIFIC
    HINTS" (sections in capitals a sentence refers to: "below", "section"), "MiB" (a unit), "Reduces index load" (a definition's
    sentence opened by its verb). The attacker's side: a name in title case, a name of mixed
    case ("OpenSSL"), SQL's keywords in capitals ("ALTER TABLE") and key phrases that open with a plural noun stay topics."""
    text = "# git-config\n\n" + "\n".join(
        f"See INCOMPATIBLE OPTIONS below and the BACKEND SPECIFIC HINTS section: the Merge "
        f"Driver uses OpenSSL and keeps {n} MiB. This reduces index load time for the pack files "
        f"of the Merge Driver. The files changed by the pack files reach OpenSSL, and the ALTER "
        f"TABLE command alters them."
        for n in range(4)
    )
    task = IngestTask("n" * 16, "0" * 64, "git-config.html", text, 0, 0, 1)
    units, _ = _units(task)
    titles = [t.title for t in find_topics(units, {}, 12, text=text)]
    for noise in ("INCOMPATIBLE OPTIONS", "BACKEND SPECIFIC HINTS", "MiB", "Reduces index load"):
        assert noise not in titles, titles
    assert "Merge Driver" in titles and "OpenSSL" in titles and "Pack files" in titles, titles
    assert "ALTER TABLE" in titles, titles  # SQL's keywords in capitals are subjects
    # "This reduces index load time ...": a phrase may not open with a verb's third person
    assert _phrase_edge("reduces", "load") and _phrase_edge("commits", "output")
    assert not _phrase_edge("pack", "files") and not _phrase_edge("changes", "list")
