"""One document into a linted vault costs what it changed (issue 25 item 1, branch ``lintinc``).

- The supersession pass and the automatic lint after an ingest share one search of the new
  claims' pairs (:class:`~affidavit.lint.runner.Covered`), and the lint still finds what a full
  run on a copy finds about the new claims: a changed fact, a duplicate, a missing link.
- A shared search is not taken once another connection has committed, nor for claims it did not
  search.
- How common a word is comes from ``words.n`` (migration ``m022_word_counts``), which counts the
  postings of ``claim_words`` exactly, through ingests, a rebuilt index and the migration itself.
- The automatic lint reports open findings by kind, counted, not listed; the quote gate looks
  each source's quotes up at once and judges as it judges one quote at a time; missing links stop
  reading a title's mentions once it is too common, and otherwise find what the ordered scan
  found.
"""

from __future__ import annotations

import random
import re
import shutil
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from affidavit.db import migrate
from affidavit.evidence import Verifier
from affidavit.ingest.pipeline import Ingestor
from affidavit.lint import nearby, postings
from affidavit.lint.candidates import (
    _PHRASE,
    MAX_LINKERS,
    _first_mentions,
    find_candidates,
    missing_links,
    search_pairs,
)
from affidavit.lint.findings import FindingStore
from affidavit.lint.quotes import ProposedQuote, QuoteGate
from affidavit.lint.runner import Covered, run_lint
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.sources.store import SourceStore
from affidavit.store.render import CONTEXT_ARCHIVE
from affidavit.vault import Vault, init_vault, open_vault

from .conftest import FakeClock
from .test_lint_since import _doc, _open


def _vault(tmp_path: Path, clock: FakeClock, every: int) -> Vault:
    vault, _ = init_vault(tmp_path / "v", clock=clock)
    config = vault.config_path.read_text().replace("every_ingests = 10", f"every_ingests = {every}")
    vault.config_path.write_text(config)
    vault.close()
    return open_vault(tmp_path / "v", clock=clock)


def _ingest(vault: Vault, tmp_path: Path, text: str, name: str) -> Any:
    path = tmp_path / name
    path.write_text(text)
    return Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(path)], "trusted")


TAMAR = (
    "# Tamar Bridge\n\nThe Tamar Bridge carries 40,000 vehicles each day between Plymouth and "
    "Saltash. The bridge was built by Cleveland Bridge in the years after the war. The Tamar "
    "Bridge has a main span of 335 metres.\n"
)
SEVERN = (
    "# Severn Bridge\n\nThe Severn Bridge carries 80,000 vehicles each day across the estuary. "
    "The Severn Bridge opened in 1966 after five years of work.\n"
)
CLEVELAND = (  # another source: a changed number, a sentence repeated, a title old claims name
    "# Cleveland Bridge\n\nThe Tamar Bridge carries 45,000 vehicles each day between Plymouth "
    "and Saltash. The bridge was built by Cleveland Bridge in the years after the war. Traffic "
    "on the Severn Bridge is heavy in the summer months.\n"
)


def _searches(monkeypatch: pytest.MonkeyPatch) -> list[set[str]]:
    """The claims of each search of pairs through the word index from now on."""
    searches: list[set[str]] = []
    search = nearby.nearby_pairs

    def counted(db: sqlite3.Connection, involving: set[str], *args: Any) -> Any:
        searches.append(set(involving))
        return search(db, involving, *args)

    monkeypatch.setattr(nearby, "nearby_pairs", counted)
    return searches


def _once_each(searches: list[set[str]]) -> bool:
    """Whether no claim's pairs were searched twice (one search for both passes; a claim a
    duplicate joins is searched alone and merged in)."""
    return bool(searches) and sum(map(len, searches)) == len(set().union(*searches))


def _extractive(vault: Vault) -> dict[str, tuple[str, str, tuple[str, ...]]]:
    return {k: v for k, v in _open(vault).items() if v[0] == "extractive"}


def _full_on_a_copy(tmp_path: Path, vault: Vault, clock: FakeClock) -> tuple[Vault, Vault]:
    vault.close()
    shutil.copytree(tmp_path / "v", tmp_path / "w", symlinks=True)
    copy = open_vault(tmp_path / "w", clock=clock)
    assert not run_lint(copy, full=True).incremental
    return open_vault(tmp_path / "v", clock=clock), copy


def test_the_lint_after_an_ingest_finds_a_changed_fact_a_duplicate_and_a_missing_link(
    tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = _vault(tmp_path, clock, every=1)  # each ingest: the supersession pass, then lint
    rnd = random.Random(4)
    for n in range(3):  # enough claims that the new ones' pairs are searched through the index
        _ingest(vault, tmp_path, _doc(rnd, n), f"doc{n}.md")
    _ingest(vault, tmp_path, TAMAR, "tamar.md")
    _ingest(vault, tmp_path, SEVERN, "severn.md")
    searches = _searches(monkeypatch)
    clock.advance(days=30)
    report = _ingest(vault, tmp_path, CLEVELAND, "cleveland.md")
    assert report.lint is not None and _once_each(searches), searches  # one search, both passes
    monkeypatch.undo()
    found = _extractive(vault)
    cleveland = {
        str(r[0])
        for r in vault.db.execute(
            "SELECT id FROM claims WHERE text LIKE "
            "'%45,000%' OR text LIKE '%Severn Bridge is heavy%' OR (text LIKE '%built by Cleveland%' "
            "AND rowid = (SELECT max(rowid) FROM claims WHERE text LIKE '%built by Cleveland%'))"
        )
    }
    about = [v for v in found.values() if set(v[2]) & cleveland or "'Cleveland Bridge'" in v[1]]
    messages = " ".join(v[1] for v in about)
    assert "says 40,000" in messages and "says 45,000" in messages  # a changed fact
    assert "repeats claim" in messages  # a duplicate
    assert "mentions 'Cleveland Bridge'" in messages  # a missing link to the new page
    # the report counts them by kind, without listing them
    assert report.lint["counts"] == FindingStore(vault.db).counts()
    assert report.lint["open"] == sum(report.lint["counts"].values())
    vault, copy = _full_on_a_copy(tmp_path, vault, clock)
    assert _extractive(vault) == _extractive(copy)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_one_search_serves_both_passes_and_the_lint_finds_what_a_full_run_finds(
    tmp_path: Path, clock: FakeClock, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rnd = random.Random(seed)
    vault = _vault(tmp_path, clock, every=1)
    for n in range(4):
        _ingest(vault, tmp_path, _doc(rnd, n), f"doc{n}.md")
    old = {str(r[0]) for r in vault.db.execute("SELECT id FROM claims")}
    searches = _searches(monkeypatch)
    clock.advance(days=30)
    report = _ingest(vault, tmp_path, _doc(rnd, 4), "doc4.md")
    assert report.lint is not None and _once_each(searches), searches
    monkeypatch.undo()
    vault, copy = _full_on_a_copy(tmp_path, vault, clock)
    new = {str(r[0]) for r in vault.db.execute("SELECT id FROM claims")} - old

    def about_new(found: dict[str, tuple[str, str, tuple[str, ...]]]) -> dict[str, object]:
        return {k: v for k, v in found.items() if v[0] != "check" and set(v[2]) & new}

    assert about_new(_open(vault)) == about_new(_open(copy))
    links = {k: v for k, v in _open(vault).items() if "doesn't link to it" in v[1]}
    assert links == {k: v for k, v in _open(copy).items() if "doesn't link to it" in v[1]}


def test_a_shared_search_is_not_taken_stale_or_for_claims_it_did_not_search(
    tmp_path: Path, clock: FakeClock
) -> None:
    rnd = random.Random(5)
    vault = _vault(tmp_path, clock, every=0)
    for n in range(3):
        _ingest(vault, tmp_path, _doc(rnd, n), f"doc{n}.md")
    db = vault.db
    claims = sorted(str(r[0]) for r in db.execute("SELECT id FROM claims WHERE status = 'active'"))
    asked = set(claims[-6:])
    covered = Covered(frozenset(asked), nearby.nearby_pairs(db, asked))
    alone = find_candidates(db, involving=set(claims[-3:]))
    got = covered.involving(vault, set(claims[-3:]))
    assert got is not None
    assert [c.finding.fingerprint for c in got] == [c.finding.fingerprint for c in alone]
    assert covered.involving(vault, {claims[0], *claims[-3:]}) is None  # not searched
    other = sqlite3.connect(vault.root / ".affidavit" / "db.sqlite")
    with other:  # another writer changes the claims: the search no longer tells their pairs
        other.execute("UPDATE claims SET status = 'retracted' WHERE id = ?", (claims[-1],))
    other.close()
    assert covered.involving(vault, set(claims[-3:])) is None


@pytest.mark.parametrize("seed", [21, 22])
def test_two_searches_merged_are_one_search_of_both(
    tmp_path: Path, clock: FakeClock, seed: int
) -> None:
    rnd = random.Random(seed)
    vault = _vault(tmp_path, clock, every=0)
    for n in range(5):
        _ingest(vault, tmp_path, _doc(rnd, n), f"doc{n}.md")
    db = vault.db
    claims = sorted(str(r[0]) for r in db.execute("SELECT id FROM claims WHERE status = 'active'"))
    for _ in range(4):
        one, other = set(rnd.sample(claims, 8)), set(rnd.sample(claims, 5))
        both = nearby.merged(nearby.nearby_pairs(db, one), nearby.nearby_pairs(db, other))
        alone = nearby.nearby_pairs(db, one | other)
        assert both is not None and alone.pairs
        assert [(a, b, c.finding) for a, b, c in both.pairs] == [
            (a, b, c.finding) for a, b, c in alone.pairs
        ]
        assert both.keys == alone.keys


def test_past_the_claims_it_reads_for_their_words_the_search_reads_postings(
    tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A wiki with a long history of superseded claims: their words are not read, and the
    pairs are still the whole-wiki search's."""
    rnd = random.Random(23)
    vault = _vault(tmp_path, clock, every=0)
    for n in range(5):
        _ingest(vault, tmp_path, _doc(rnd, n), f"doc{n}.md")
    db = vault.db
    with db:
        db.execute("UPDATE claims SET status = 'superseded' WHERE rowid % 5 = 0")
    claims = sorted(str(r[0]) for r in db.execute("SELECT id FROM claims WHERE status = 'active'"))
    asked = set(rnd.sample(claims, len(claims) // 3))
    whole = search_pairs(db, involving=asked)
    full = [(c.finding.fingerprint, c.finding.claims) for c in whole.involving(asked)]
    for limit in (0, 10**6):
        monkeypatch.setattr(nearby, "OTHERS_READ", limit)
        got = nearby.nearby_pairs(db, asked)
        assert [(c.finding.fingerprint, c.finding.claims) for c in got.involving(asked)] == full
        assert full


def _counted(db: sqlite3.Connection) -> dict[int, int]:
    """Each word's postings in the index, counted."""
    return dict(Counter(word for word, _ in postings.every_posting(db)))


def _postings(db: sqlite3.Connection) -> dict[int, int]:
    counted = _counted(db)
    return {int(w): int(n) for w, n in db.execute("SELECT id, n FROM words") if n or w in counted}


def test_word_counts_are_the_postings_through_ingests_a_rebuild_and_the_migration(
    tmp_path: Path, clock: FakeClock
) -> None:
    rnd = random.Random(9)
    vault = _vault(tmp_path, clock, every=0)
    for n in range(3):
        _ingest(vault, tmp_path, _doc(rnd, n), f"doc{n}.md")
    db = vault.db
    nearby.index_claims(db)

    def exact() -> None:
        counted = _counted(db)
        stored = {int(w): int(n) for w, n in db.execute("SELECT id, n FROM words")}
        assert counted and {w: stored[w] for w in counted} == counted
        assert all(n == 0 for w, n in stored.items() if w not in counted)

    exact()
    with db:  # a posting appended is counted with it, one already held is neither
        (word,) = db.execute("SELECT id FROM words ORDER BY id LIMIT 1").fetchone()
        postings.append(db, {int(word): [999998, 999999]})
        postings.append(db, {int(word): [999999]})
    exact()
    with db:  # the rows the index ended on are other claims now: it is rebuilt, counts with it
        db.execute("UPDATE claim_words_state SET claim = 'c-someone-else'")
    assert nearby.index_claims(db) > 0
    exact()
    before = sorted(postings.every_posting(db))
    with db:  # a vault from before m022: its postings in claim_words' rows, no counts
        db.execute(
            "CREATE TABLE claim_words (word INTEGER NOT NULL, claim INTEGER NOT NULL, "
            "PRIMARY KEY (word, claim)) WITHOUT ROWID"
        )
        db.executemany("INSERT INTO claim_words VALUES (?, ?)", before)
        db.execute("DROP TABLE word_postings")
        db.execute("ALTER TABLE words DROP COLUMN n")
        db.execute(
            "DELETE FROM _migrations WHERE name IN ('m022_word_counts', 'm028_word_postings')"
        )
    assert {"m022_word_counts", "m028_word_postings"} <= set(migrate(db))
    assert sorted(postings.every_posting(db)) == before  # m028 moved every posting
    exact()


def test_word_counts_give_the_pairs_the_postings_give(tmp_path: Path, clock: FakeClock) -> None:
    """A count that disagrees with the postings changes which words are rare: the search reads
    the counts, so a forged count shows (this is what the count must be kept exact for)."""
    rnd = random.Random(11)
    vault = _vault(tmp_path, clock, every=0)
    for n in range(4):
        _ingest(vault, tmp_path, _doc(rnd, n), f"doc{n}.md")
    db = vault.db
    new = {
        str(r[0])
        for r in db.execute("SELECT id FROM claims WHERE status = 'active' ORDER BY rowid DESC")
    }
    new = set(sorted(new)[:8])
    right = nearby.nearby_pairs(db, new)
    full = find_candidates(db, involving=new, search=None)
    assert [c.finding.fingerprint for c in right.involving(new)] == [
        c.finding.fingerprint for c in full
    ]
    with db:
        db.execute("UPDATE words SET n = 1000")  # every word too common to pair claims on
    assert nearby.nearby_pairs(db, new).pairs == []


def _ordered_mentions(
    db: sqlite3.Connection, phrase: str, pattern: re.Pattern[str], slug: str
) -> dict[str, tuple[str, str, str]] | None:
    """What missing_links read before: every mention in order, the first match of each page."""
    rows = db.execute(
        "SELECT c.id, c.page_slug, e.source_id, e.quote FROM claims_fts f "
        "JOIN claims c ON c.rowid = f.rowid JOIN evidence e ON e.claim_id = c.id "
        "WHERE claims_fts MATCH ? AND c.status = 'active' AND c.page_slug NOT IN (?, '', ?) "
        "ORDER BY c.page_slug, c.position, c.id, e.idx",
        (phrase, slug, CONTEXT_ARCHIVE),
    ).fetchall()
    by_page: dict[str, tuple[str, str, str]] = {}
    for claim_id, page, source, quote in rows:
        if page not in by_page and pattern.search(quote):
            by_page[page] = (claim_id, source, quote)
    return None if len(by_page) > MAX_LINKERS else by_page


def test_missing_links_read_what_the_ordered_scan_read(tmp_path: Path, clock: FakeClock) -> None:
    rnd = random.Random(13)
    vault = _vault(tmp_path, clock, every=0)
    for n in range(5):
        _ingest(vault, tmp_path, _doc(rnd, n), f"doc{n}.md")
    db = vault.db
    phrases = ["tamar", "bridge", "vehicles", "cleveland bridge", "main span", "crossings report"]
    for (title,) in db.execute("SELECT title FROM pages").fetchall():
        phrases.append(" ".join(_PHRASE.findall(str(title).casefold())))
    compared = 0
    for words in phrases:
        split = words.split()
        if not split:
            continue
        pattern = re.compile(r"\b" + r"\W+".join(map(re.escape, split)) + r"\b", re.IGNORECASE)
        for slug in ("", "no-such-page"):
            got = _first_mentions(db, '"' + words + '"', pattern, slug)
            assert got == _ordered_mentions(db, '"' + words + '"', pattern, slug), words
            compared += got is not None and len(got) > 1
    assert compared  # some phrase was mentioned on several pages
    assert missing_links(db)  # and the links are still found


def test_a_title_on_more_pages_than_a_fix_can_serve_is_left_alone(
    tmp_path: Path, clock: FakeClock
) -> None:
    vault = _vault(tmp_path, clock, every=0)
    paths = []
    for n in range(MAX_LINKERS + 3):  # a town a document (and a page)
        path = tmp_path / f"town{n}.md"
        path.write_text(
            f"# Town {n} of Place{n}\n\nThe town of Place{n} lies beside the Tamar river, "
            f"{n + 2} miles from the sea.\n"
        )
        paths.append(str(path))
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run(paths, "trusted")
    pages = vault.db.execute("SELECT count(DISTINCT page_slug) FROM claims").fetchone()[0]
    assert pages > MAX_LINKERS
    db = vault.db
    pattern = re.compile(r"\btamar\b", re.IGNORECASE)
    assert _ordered_mentions(db, '"tamar"', pattern, "") is None  # (the reference agrees)
    assert _first_mentions(db, '"tamar"', pattern, "") is None


def test_the_gate_judges_prefetched_quotes_as_it_judges_them_one_by_one(
    tmp_path: Path, clock: FakeClock
) -> None:
    rnd = random.Random(17)
    vault = _vault(tmp_path, clock, every=0)
    for n in range(4):
        _ingest(vault, tmp_path, _doc(rnd, n), f"doc{n}.md")
    db = vault.db
    candidates = find_candidates(db)
    assert candidates
    rows = db.execute(
        "SELECT e.claim_id, e.source_id, e.quote FROM evidence e ORDER BY e.claim_id LIMIT 3"
    ).fetchall()
    forged = [  # an invented quote, a quote from another claim's source, no such claim/source
        ProposedQuote("The bridge carries a million vehicles.", claim_id=str(rows[0][0])),
        ProposedQuote(str(rows[1][2]), claim_id=str(rows[0][0]), source_id=str(rows[2][1])),
        ProposedQuote(str(rows[1][2]), claim_id="c-nobody"),
        ProposedQuote(str(rows[1][2]), source_id="f" * 64),
        ProposedQuote(str(rows[1][2]), source_id=str(rows[1][1])),
    ]
    proposed = [(c.finding, [*c.quotes]) for c in candidates]
    proposed += [(candidates[0].finding, [q, *candidates[0].quotes[:1]]) for q in forged]

    def verdicts(prefetch: bool) -> list[Any]:
        store = SourceStore(vault)
        gate = QuoteGate(db, store, Verifier(store))
        if prefetch:
            gate.prefetch(q for _, quotes in proposed for q in quotes)
        return [gate.judge(f, quotes) for f, quotes in proposed]

    one_by_one, at_once = verdicts(False), verdicts(True)
    assert [(v.kept, v.reason, v.finding) for v in at_once] == [
        (v.kept, v.reason, v.finding) for v in one_by_one
    ]
    assert any(not v.kept for v in at_once) and any(v.kept for v in at_once)
