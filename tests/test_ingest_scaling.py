"""Per-plan work that must not grow with the wiki, and must decide and render exactly as before:
the consistency check's page index finds what comparing a new claim with every claim on its page
would; a page's frontmatter, dumped key by key from a cache, is the mapping dumped at once."""

from __future__ import annotations

import random
from pathlib import Path

import yaml

from affidavit.doctor import run_doctor
from affidavit.errors import SourceError
from affidavit.gate.admission import NEAR_DUPLICATE, NEAR_MIN_WORDS, _comparable
from affidavit.gate.duplicates import PageIndex
from affidavit.sources.store import AddResult, SourceStore
from affidavit.store.render import _FrontmatterDumper, _Quoted, frontmatter
from affidavit.vault import Vault

WORDS = [f"w{n}" for n in range(40)]


def _text(rng: random.Random, base: list[str] | None = None) -> str:
    if base is not None and rng.random() < 0.7:  # a near copy: one word changed or dropped
        words = list(base)
        words[rng.randrange(len(words))] = rng.choice(WORDS)
        if rng.random() < 0.3:
            words.pop()
        return " ".join(words)
    return " ".join(rng.sample(WORDS, rng.randint(2, 16)))


def _matches(normal: str, mine: frozenset[str], rows: list[tuple[str, str]]) -> list[str]:
    """What a full scan of the page finds: exact copies and near copies, in page order."""
    out = []
    for claim_id, text in rows:
        their_normal, theirs = _comparable(text)
        near = (
            len(mine) >= NEAR_MIN_WORDS
            and len(theirs) >= NEAR_MIN_WORDS
            and len(mine & theirs) / len(mine | theirs) >= NEAR_DUPLICATE
        )
        if their_normal == normal or near:
            out.append(claim_id)
    return out


def test_the_page_index_finds_every_claim_a_full_scan_would_in_page_order() -> None:
    rng = random.Random(14)
    index = PageIndex(_comparable, NEAR_MIN_WORDS)
    rows: list[tuple[str, str]] = []
    for step in range(400):
        if rows and rng.random() < 0.2:  # a claim ends (superseded, retracted) or is rewritten
            victim = rng.randrange(len(rows))
            if rng.random() < 0.5:
                rows.pop(victim)
            else:
                rows[victim] = (rows[victim][0], _text(rng))
        base = rng.choice(rows)[1].split() if rows and rng.random() < 0.6 else None
        rows.append((f"c-{step}", _text(rng, base)))
        rng.shuffle(rows) if rng.random() < 0.05 else None  # the page's order may change
        index.sync((claim_id, text, n) for n, (claim_id, text) in enumerate(rows))
        assert set(index.items) == {claim_id for claim_id, _ in rows}
        query = _text(rng, rng.choice(rows)[1].split())
        normal, mine = _comparable(query)
        found = _matches(normal, mine, rows)
        candidates = index.candidates(normal, mine, NEAR_DUPLICATE)
        assert [c for c in candidates if c in found] == found  # every match, in page order
        order = {claim_id: n for n, (claim_id, _) in enumerate(rows)}
        assert candidates == sorted(candidates, key=order.__getitem__)


def test_a_claim_gone_from_the_page_is_no_longer_a_duplicate() -> None:
    index = PageIndex(_comparable, NEAR_MIN_WORDS)
    text = "The old stone bridge over the river was opened in 1932"
    index.sync([("c-1", text, 0)])
    normal, mine = _comparable(text)
    assert index.candidates(normal, mine, NEAR_DUPLICATE) == ["c-1"]
    index.sync([])  # retracted
    assert index.candidates(normal, mine, NEAR_DUPLICATE) == []
    assert not index.exact and not index.postings
    index.sync(
        [("c-1", "Something else entirely, said about another thing", 0)]
    )  # same id, new text
    assert index.candidates(normal, mine, NEAR_DUPLICATE) == []


def test_frontmatter_dumped_key_by_key_is_the_whole_mapping_dumped_at_once() -> None:
    rng = random.Random(5)
    alphabet = [*"ab :#-'\"\\\n\t\r\x00\x85\u2028é☃{}[],&*!|>%@`?~0123.", "yes", "null", "---"]
    for _ in range(2000):

        def value() -> str:
            return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 10)))

        fields: dict[str, object] = {
            "title": _Quoted(value()),
            "summary": _Quoted(value()),
            "category": value(),
            "slug": value(),
            "claims": rng.randint(0, 10**6),
            "created": value(),
            "updated": "2026-12-01T12:00:00Z",
            "generator": "affidavit",
        }
        whole = yaml.dump(
            fields,
            Dumper=_FrontmatterDumper,
            sort_keys=False,
            allow_unicode=True,
            width=2**31 - 1,
            default_flow_style=False,
        )
        assert frontmatter(fields) == ["---", *whole.rstrip("\n").split("\n"), "---"]


def _notes(tmp_path: Path, count: int) -> Path:
    """A folder of ``count`` short notes, ``note-N.md``, each stating its number."""
    folder = tmp_path / "docs"
    folder.mkdir()
    for n in range(count):
        (folder / f"note-{n}.md").write_text(f"# Note {n}\n\nThe number of this note is {n}.\n")
    return folder


def test_a_folder_of_sources_is_stored_in_one_commit_and_a_bad_file_fails_alone(
    vault: Vault, tmp_path: Path
) -> None:
    folder = _notes(tmp_path, 5)
    (folder / "copy.md").write_text("# Note 0\n\nThe number of this note is 0.\n")  # same bytes
    (folder / "bad.md").write_bytes(b"\x7fELF\x02\x01\x01" + b"\x00" * 64)
    store = SourceStore(vault)
    commits = len(vault.git.log_subjects())
    files = store.discover(folder)
    seen: list[tuple[int, int]] = []
    outcomes = store.add_files(files, "trusted", lambda done, total: seen.append((done, total)))
    assert seen == [(n, 7) for n in range(1, 8)]  # each file once, the bad one too
    by_name = dict(zip([f.name for f in files], outcomes, strict=True))
    assert isinstance(by_name["bad.md"], SourceError)
    added = [o for o in outcomes if isinstance(o, AddResult) and o.added]
    first, second = by_name["copy.md"], by_name["note-0.md"]  # the same bytes, in this order
    assert isinstance(first, AddResult) and isinstance(second, AddResult)
    assert len(added) == 5 and first.added and not second.added
    assert second.record.id == first.record.id
    assert "Add 5 sources" in vault.git.log_subjects()
    assert len(vault.git.log_subjects()) == commits + 1
    for result in added:
        record = result.record
        for relative in (record.original_file, record.text_file):
            path = vault.root / relative
            assert path.stat().st_mode & 0o777 == 0o400
        assert store.text(record.id) == (vault.root / record.text_file).read_text()
    assert vault.git.changed(["sources/" + p.name for p in vault.sources_dir.iterdir()]) == []
    again = store.add_files(files, "trusted")  # nothing new: no commit
    assert all(not o.added for o in again if isinstance(o, AddResult))
    assert len(vault.git.log_subjects()) == commits + 1
    assert run_doctor(vault).clean


def test_an_ingest_of_a_folder_says_how_far_it_has_read_its_files(
    vault: Vault, tmp_path: Path
) -> None:
    from affidavit.ingest.pipeline import Ingestor
    from affidavit.providers.extractive import ExtractiveProvider

    folder = _notes(tmp_path, 3)
    adding: list[tuple[str, int, int]] = []
    chunks: list[str] = []
    Ingestor(
        vault,
        ExtractiveProvider(),
        apply_now=True,
        progress=lambda name, done, total: chunks.append(name),
        adding_progress=lambda label, done, total: adding.append((label, done, total)),
    ).run([str(folder)], "trusted")
    assert adding == [(f"adding sources from {folder.name}", n, 3) for n in (1, 2, 3)]
    assert sorted(set(chunks)) == [f"note-{n}.md" for n in range(3)]  # chunks: by source
