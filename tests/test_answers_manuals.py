"""Issue 24 item 4 on manuals: a "how large/long ...?" question asks for a measure (a manual
states the size, "up to 281 terabytes in size", not how large), and a manual page's NAME line
("frob-blame - Show who last modified each line of a file") answers what its command is for.
Each reproduced first on our own pages: main answered with "1000 pages or more in size" and
with an option's description."""

from __future__ import annotations

from pathlib import Path

from affidavit.ask import Asker
from affidavit.ask.extractive import extractive_answer
from affidavit.ask.measures import dimension, measured
from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.retrieval.search import EvidenceRef, Hit
from affidavit.vault import Vault

SOURCE = "cd" * 32


def hit(n: int, text: str, title: str = "Notes") -> Hit:
    ref = EvidenceRef(SOURCE, "notes.md", text, f"line {n}", 100 * n, 100 * n + len(text))
    return Hit(f"c-{n:016x}", "notes", title, text, "trusted", 1.0 / (n + 1), (ref,))


def test_how_large_asks_for_a_size_in_a_unit_of_size() -> None:
    assert dimension("How large can a frob archive get?") == ("large", "size")
    assert dimension("How long is the river?") == ("long", "length")
    assert dimension("What is a frob archive?") == ("", "")
    assert measured("size", "archives up to 281 terabytes in size")
    assert measured("size", "a limit of 2 GiB")
    assert not measured("size", "when the log is 1000 pages or more in size")
    hits = [
        hit(0, "Frob checkpoints the log when the log file is 1000 pages or more in size."),
        hit(1, "Frob supports archive files up to 281 terabytes in size."),
        hit(2, "A large archive file takes longer to open."),
    ]
    reply = extractive_answer("How large can a frob archive file get?", hits, "n")
    assert reply["short_answer"]["text"] == "281 terabytes", reply
    assert reply["sentences"][0]["text"].startswith("Frob supports archive files up to 281")


MANUAL = {
    "frob-blame.html": """<html><head><title>frob-blame(1)</title></head><body>
<h2>NAME</h2><p>frob-blame - Show what revision and author last modified each line of a file</p>
<h2>OPTIONS</h2><dl><dt>--line-porcelain</dt>
<dd><p>Show the porcelain format, but output commit information for each line of the file,
not just the first time a commit is changed.</p></dd></dl></body></html>
""",
    "frob-log.html": """<html><head><title>frob-log(1)</title></head><body>
<h2>NAME</h2><p>frob-log - Show commit logs</p>
<h2>OPTIONS</h2><dl><dt>--shortstat</dt>
<dd><p>Output only the last line of the stat format, with the total number of modified
files.</p></dd>
<dt>--follow</dt><dd><p>Continue listing the history of a file beyond renames.</p></dd></dl>
</body></html>
""",
    "frobignore.html": """<html><head><title>frobignore(5)</title></head><body>
<h2>NAME</h2><p>frobignore - Specifies intentionally untracked files to ignore</p>
<h2>DESCRIPTION</h2><p>A frobignore file specifies intentionally untracked files that frob
should ignore. Each line in a frobignore file specifies a pattern.</p></body></html>
""",
}


def test_a_name_line_answers_what_a_command_is_for(vault: Vault, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in MANUAL.items():
        (docs / name).write_text(text)
    report = Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(docs)], "trusted")
    assert not report.failed
    asker = Asker(vault, None)
    answer = asker.ask("How do I see who last changed each line of a file?")
    assert answer.verdict == "answered"
    assert answer.sentences[0].text.startswith("frob-blame - Show what revision"), answer
    answer = asker.ask("What is a frobignore file for?")
    assert answer.sentences[0].text == (
        "frobignore - Specifies intentionally untracked files to ignore"
    ), answer
    # a how-do-I question only: a NAME line is no answer to "what does the log show?"
    answer = asker.ask("What does the history of a file show beyond renames?")
    assert not answer.sentences[0].text.startswith("frob-log - "), answer


def test_a_special_name_to_use_answers_how_do_i() -> None:
    hits = [
        hit(
            0,
            'To use a persistent file as the archive, enter the ".open" command right after '
            "the shell starts.",
        ),
        hit(
            1,
            "The most common way to keep a frob archive purely in memory is to open the archive "
            'using the special filename ":memory:".',
        ),
    ]
    reply = extractive_answer("How do I open an archive that lives only in memory?", hits, "n")
    assert reply["short_answer"]["text"] == ":memory:", reply


def test_an_option_named_after_two_words_of_the_question_answers_how_do_i() -> None:
    hits = [
        hit(0, "`--stat`: Show the log of each commit with a diffstat."),
        hit(1, "`--oneline`: Show the log of each commit as a short title."),
    ]
    reply = extractive_answer("How do I show the log with one line per commit?", hits, "n")
    assert reply["sentences"][0]["text"].startswith("`--oneline`"), reply
