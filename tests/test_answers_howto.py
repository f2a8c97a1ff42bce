"""Issue 24 items 1 and 4 on manuals (branch answers6): how-do-I questions answered by the
option or command that does it, and the two extraction faults behind wrong answers on SQLite's
and git's documentation — an FAQ's list of questions joined into one claim, and an option whose
description's first sentence ("Delete a branch.") is too short to be a claim alone. Each
reproduced first on pages of our own."""

from __future__ import annotations

from pathlib import Path

from affidavit.ask import Asker
from affidavit.ask.extractive import extractive_answer
from affidavit.ask.manuals import action
from affidavit.ask.measures import dimension
from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.retrieval.search import EvidenceRef, Hit
from affidavit.sources.extract import extract
from affidavit.vault import Vault

SOURCE = "ab" * 32


def hit(n: int, text: str, title: str = "Notes") -> Hit:
    ref = EvidenceRef(SOURCE, "notes.md", text, f"line {n}", 100 * n, 100 * n + len(text))
    return Hit(f"c-{n:016x}", "notes", title, text, "trusted", 1.0 / (n + 1), (ref,))


def _active(vault: Vault) -> list[str]:
    return [r[0] for r in vault.db.execute("SELECT text FROM claims WHERE status = ?", ("active",))]


FAQ = b"""<html><head><title>Frob FAQ</title></head><body>
<h1>Frequently Asked Questions</h1>
<ol>
<li><a href="#q1">STORE is really slow - I can only do a few dozen stores per second</a></li>
<li><a href="#q2">I accidentally removed some important records from my frob archive.</a></li>
</ol>
<p><b>(1) STORE is really slow - I can only do a few dozen stores per second</b></p>
<blockquote>Actually, frob will easily do 50,000 or more writes each second on an average
desktop computer. But it will only do a few dozen archive syncs each second.</blockquote>
</body></html>"""


def test_an_faq_list_of_questions_is_not_one_sentence(vault: Vault, tmp_path: Path) -> None:
    # main joined the two questions of the list into "... per second I accidentally removed
    # ...": list items without a full stop ran together as one soft-wrapped line
    text = extract(FAQ, "text/html").text
    assert "per second\n\nI accidentally removed" in text, text
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "faq.html").write_bytes(FAQ)
    report = Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(docs)], "trusted")
    assert not report.failed
    claims = _active(vault)
    assert claims
    assert not [c for c in claims if "per second" in c and "accidentally" in c], claims


MAN = """<html><head><title>frob-branch(1)</title></head><body>
<h2>NAME</h2><p>frob-branch - List, create, or delete branches</p>
<h2>OPTIONS</h2><div class="dlist"><dl>
<dt class="hdlist1">
-d
</dt>
<dt class="hdlist1">
--delete
</dt>
<dd>
<p>
        Delete a branch. The branch must be fully merged in its
        upstream branch, or in <code>HEAD</code> if no upstream was set.
</p>
</dd>
<dt class="hdlist1">-q</dt><dd><p>Be quiet.</p></dd>
</dl></div>
<p>Delete it.</p>
</body></html>"""


def test_a_short_description_under_an_option_is_a_claim(vault: Vault, tmp_path: Path) -> None:
    # main dropped "Delete a branch." (shorter than a claim may be), so git-branch's page never
    # said what -d does: only "The branch must be fully merged ..." was kept
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "frob-branch.html").write_text(MAN)
    report = Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(docs)], "trusted")
    assert not report.failed
    claims = _active(vault)
    assert "`-d, --delete`: Delete a branch." in claims, claims
    assert any(c.startswith("The branch must be fully merged") for c in claims), claims
    # the term and sentence together must still make a claim's length; a short sentence
    # under no term stays out
    assert not [c for c in claims if "Be quiet" in c], claims
    assert not [c for c in claims if c.startswith("Delete it")], claims


def test_the_action_a_how_question_asks_for() -> None:
    assert action("How do I rename a file in the repository?") == "renam"
    assert action("How do I temporarily stash my changes?") == "stash"
    assert action("How do I get the rows back?") == ""  # a light verb tells nothing apart
    assert action("How do I turn on foreign keys?") == ""
    assert action("What is a frob?") == ""


def test_the_claim_that_does_the_action_answers_how() -> None:
    # main answered with the --file option, which holds "file" and "repository" but renames
    # nothing; the page's NAME line does the renaming, and its command is the short answer
    hits = [
        hit(
            0,
            "`-f <file>, --file <file>`: For writing options: write to the specified file rather "
            "than the repository .frob/config.",
        ),
        hit(1, "frob-mv - Move or rename a file, a directory, or a symlink"),
        hit(2, "Showing untracked files means that frob reads all the files in the repository."),
        hit(3, "For following files across renames while traversing history, see --follow."),
        hit(4, "Turn off rename detection, even when the configuration file asks for it."),
        hit(5, "The --summary option describes newly added, deleted, renamed and copied files."),
    ]
    reply = extractive_answer("How do I rename a file in the repository?", hits, "n")
    assert reply["sentences"][0]["text"].startswith("frob-mv - Move or rename"), reply
    assert reply["short_answer"]["text"] == "frob-mv", reply


def test_an_option_comes_before_a_sentence_that_names_none() -> None:
    # main answered "How do I delete a local branch?" with the sentence that holds every word
    # of it and no way to do it
    hits = [
        hit(
            0,
            "Frob keeps data unless it is thrown away; this extends to local references to "
            "branches on remotes that have themselves deleted those branches.",
        ),
        hit(1, "frob-branch - List, create, or delete branches"),
        hit(2, "frob-pull - Fetch from and integrate with another archive or a local branch"),
        hit(3, "In combination with -d (or --delete), allow deleting the branch even unmerged."),
        hit(4, "When local, rebase is set to true for tracked branches of other local branches."),
        hit(5, "A local branch can be listed in colour."),
        hit(6, "Local changes are kept when switching branches."),
    ]
    reply = extractive_answer("How do I delete a local branch?", hits, "n")
    assert reply["sentences"][0]["text"].startswith("In combination with -d"), reply
    assert reply["short_answer"]["text"] in ("-d", "--delete"), reply
    # a best sentence that names its options (one letter each) is left first
    hits[0] = hit(
        0, "To delete local branches moved from one remote to another, see the -C option."
    )
    reply = extractive_answer("How do I delete a local branch?", hits, "n")
    assert reply["sentences"][0]["text"].startswith("To delete local branches moved"), reply


def test_how_many_can_asks_for_a_maximum() -> None:
    assert dimension("How many frobs can be attached to one connection?") == ("many", "maximum")
    assert dimension("How many frobs were attached?") == ("", "")
    hits = [
        hit(
            0,
            "There is a limit, set using frob_limit(), to the number of frobs that can be "
            "simultaneously attached to a single connection.",
        ),
        hit(1, "The ATTACH statement adds another frob to the current connection."),
        hit(2, "The maximum number of attached frobs cannot be increased above 125."),
    ]
    reply = extractive_answer("How many frobs can be attached to one connection?", hits, "n")
    assert reply["short_answer"]["text"] == "125", reply


def test_an_faq_question_is_followed_where_it_is_answered(vault: Vault, tmp_path: Path) -> None:
    # the question's claim quotes its first place, the FAQ's list of questions; main took the
    # claims after it there (the next questions), never the answer under the question itself
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "faq.html").write_bytes(FAQ)
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(docs)], "trusted")
    asker = Asker(vault, None)
    answer = asker.ask("Why is STORE really slow?")
    assert answer.verdict == "answered", answer
    by_id = {h.claim_id: h.text for h in answer.given}
    followers = [by_id[c] for c in asker._context]  # the claims taken after the question
    assert any(t.startswith("Actually, frob will easily do 50,000") for t in followers), followers
    assert any(t.startswith("But it will only do a few dozen") for t in followers), followers
    assert not [t for t in followers if "accidentally" in t], followers


def test_if_you_want_to_is_an_instruction_as_to_is() -> None:
    # git's manual: "How do I throw away all my local changes to tracked files?" was answered
    # by an aside that holds the words ("This is used to throw away local changes.") over the
    # sentence that tells the reader what to do, which opens "If you want to throw away"
    hits = [
        hit(
            0,
            "If --recurse-submodules is specified, submodule content is also restored to match "
            "the switching target. This is used to throw away local changes.",
        ),
        hit(
            1,
            "If you want to throw away all uncommitted changes in your working directory, you "
            "should see frob-reset(1), particularly the --hard option.",
        ),
        hit(2, "Local changes to tracked files are listed by frob-status."),
    ]
    question = "How do I throw away all my local changes to tracked files?"
    reply = extractive_answer(question, hits, "n")
    assert reply["sentences"][0]["text"].startswith("If you want to throw away"), reply
    # the attacker's side: a conditional that is no instruction ("If you want ... then") for
    # another verb, and "If ... is specified" asides, gain nothing
    hits[1] = hit(1, "If you want the frob to print more, the changes are shown in colour.")
    reply = extractive_answer(question, hits, "n")
    assert not reply["sentences"][0]["text"].startswith("If you want the frob"), reply
    # ... and "If you want to <another verb>" gains no instruction's bonus: for "put away" the
    # command that does it stays in the answer beside the sentence about throwing away
    hits = [
        hit(0, "frob-stash - Stash the changes in a dirty working directory away"),
        hit(
            1,
            "If you want to throw away all uncommitted changes in your working directory, you "
            "should see frob-reset(1), particularly the --hard option.",
        ),
    ]
    reply = extractive_answer("How do I temporarily put away my uncommitted changes?", hits, "n")
    assert any(s["text"].startswith("frob-stash") for s in reply["sentences"]), reply
