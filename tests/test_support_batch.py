"""A plan's support checks with their parses batched (:mod:`affidavit.support.batch`) give the
verdicts the checks give one by one, over the recorded inputs of tests/test_support_same.py."""

from __future__ import annotations

import json

import pytest

from affidavit.gate import admission
from affidavit.gate.admission import admit
from affidavit.gate.verdicts import OpResult
from affidavit.plan.schema import parse_plan
from affidavit.store.apply import gate_services
from affidavit.support import batch, check, parse, rules, structure
from affidavit.support.parse import Deferred, collecting
from affidavit.vault import Vault

from .conftest import add_text, claim, make_plan
from .test_support import LIGHTHOUSE, tower_page, trusted_vault
from .test_support_same import FIXTURE

STANDS = "The Eddystone Lighthouse stands on the Eddystone Rocks"
DESIGNED = "The present tower was designed by James Douglass"
UNSAFE = "The old bridge is unsafe for pedestrians."

ROWS = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]


def _clear() -> None:
    rules._check.cache_clear()
    structure._read.cache_clear()
    parse._CACHE.clear()


def _verdicts() -> list[list[object]]:
    out: list[list[object]] = []
    for row in ROWS:
        found = check(
            row["text"], tuple(row["quotes"]), share=row["share"], context=tuple(row["context"])
        )
        out.append([found.verdict, list(found.missing), found.reason, list(found.changes)])
    return out


def _items() -> list[batch.Item]:
    return [(r["text"], tuple(r["quotes"]), r["share"], (), tuple(r["context"])) for r in ROWS]


def test_batched_verdicts_are_the_one_by_one_verdicts() -> None:
    _clear()
    one_by_one = _verdicts()
    assert [v[:3] for v in one_by_one] == [r["found"] for r in ROWS]
    _clear()
    parsed = batch.prepare(_items())
    assert parsed > 500  # the texts were parsed in the batch, not by the checks after it
    batched = _verdicts()
    differ = [
        (r["text"], a, b) for r, a, b in zip(ROWS, one_by_one, batched, strict=True) if a != b
    ]
    assert not differ, f"{len(differ)} verdicts differ when batched, first: {differ[0]}"


def test_prepare_parses_every_text_the_checks_parse() -> None:
    _clear()
    batch.prepare(_items())
    rules._check.cache_clear()
    structure._read.cache_clear()
    with collecting() as asked:  # a check that still wanted a parse would raise here
        verdicts = _verdicts()
    assert asked == []
    assert [v[:3] for v in verdicts] == [r["found"] for r in ROWS]


def test_a_check_stopped_for_its_parse_is_not_kept() -> None:
    _clear()
    stopped = []
    for row in ROWS[:60]:
        args = (row["text"], tuple(row["quotes"]))
        with collecting() as asked:
            try:
                check(*args, share=row["share"], context=tuple(row["context"]))
            except Deferred:
                assert row["text"] in asked
                stopped.append(row)
            else:
                assert asked == []
    assert len(stopped) > 20
    with pytest.raises(Deferred), collecting():
        check(stopped[0]["text"], tuple(stopped[0]["quotes"]), share=stopped[0]["share"])
    for row in stopped:  # parsed now, one by one
        found = check(
            row["text"], tuple(row["quotes"]), share=row["share"], context=tuple(row["context"])
        )
        assert [found.verdict, list(found.missing), found.reason] == row["found"]


def test_collecting_records_nothing_once_parsed() -> None:
    text = "The bridge was opened in 1932 by the mayor."
    parse.parse(text)
    with collecting() as asked:
        assert parse.parse(text)[0].text == "The"
    assert asked == []
    assert parse.parse_many([text]) == [parse.parse(text)]


def test_the_gate_parses_a_plans_claims_and_quotes_in_one_batch(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = add_text(vault, "lighthouse.md", LIGHTHOUSE, "trusted")
    said = [
        ("The Eddystone Lighthouse is located on the Eddystone Rocks.", STANDS),
        ("James Douglass designed the present tower.", DESIGNED),
        ("The old bridge is not safe for people walking.", UNSAFE),
    ]
    plan = parse_plan(make_plan(vault, tower_page(src, *(claim(t, src, q) for t, q in said))))
    store, verifier = gate_services(vault)
    _clear()
    nlp = parse._nlp()
    batches: list[list[str]] = []

    class Counting:
        def pipe(self, texts: list[str], batch_size: int, disable: list[str]) -> object:
            batches.append(list(texts))
            return nlp.pipe(texts, batch_size=batch_size, disable=disable)

    monkeypatch.setattr(parse, "_nlp", Counting)
    admission = admit(vault.db, vault.config, store, verifier, plan, "p")
    first = set(batches[0])
    assert {t for t, _ in said} | {STANDS, DESIGNED, UNSAFE} <= first  # one batch, before any
    monkeypatch.undo()
    _clear()  # and the verdicts one by one are the same
    for c, (text, quote) in zip(admission.ops[0].claims, said, strict=True):
        assert check(text, [quote]).verdict == c.support


def test_the_gate_parses_a_pages_title_summary_and_heading_in_the_claims_batch(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = add_text(vault, "lighthouse.md", LIGHTHOUSE, "trusted")
    said = [
        ("The Eddystone Lighthouse is located on the Eddystone Rocks.", STANDS),
        ("James Douglass designed the present tower.", DESIGNED),
        ("The old bridge is not safe for people walking.", UNSAFE),
    ]
    page = tower_page(
        src, *(claim(t, src, q) for t, q in said), title="James Douglass designed the tower"
    )
    page["summary"] = "The tower on the Eddystone Rocks was not designed by James Douglass."
    page["section"] = "Who designed the towers that stand on the rocks"
    texts = {page["title"], page["summary"], page["section"]}
    plan = parse_plan(make_plan(vault, page))
    store, verifier = gate_services(vault)
    _clear()
    nlp = parse._nlp()
    batches: list[list[str]] = []

    class Counting:
        def pipe(self, texts: list[str], batch_size: int, disable: list[str]) -> object:
            batches.append(list(texts))
            return nlp.pipe(texts, batch_size=batch_size, disable=disable)

    def judged(op: OpResult) -> list[tuple[str, ...]]:
        return [(t.what, t.status, t.support, t.reason, t.host) for t in op.texts]

    monkeypatch.setattr(parse, "_nlp", Counting)
    batched = admit(vault.db, vault.config, store, verifier, plan, "p").ops[0]
    assert len(batches) == 1  # the texts were parsed with the claims, none after them
    assert texts <= set(batches[0])
    monkeypatch.setattr(admission, "prepare", lambda items: 0)  # each check parses its own
    _clear()
    batches.clear()
    one_by_one = admit(vault.db, vault.config, store, verifier, plan, "p").ops[0]
    assert len(batches) > 3
    assert judged(batched) == judged(one_by_one)
    assert [t.support for t in batched.texts] == ["supported", "unsupported", "uncertain"]
    assert [(c.support, c.status) for c in batched.claims] == [
        (c.support, c.status) for c in one_by_one.claims
    ]


def test_texts_judged_on_fewer_quotes_than_predicted_keep_their_verdicts(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The batch predicts each text's check against every verified claim; a claim refused and
    one that waits leave the judge other quotes: its verdicts are still the one-by-one ones."""
    vault = trusted_vault(vault)
    src = add_text(vault, "lighthouse.md", LIGHTHOUSE, "trusted")
    said = [
        ("The Eddystone Lighthouse is located on the Eddystone Rocks.", STANDS),
        ("The old bridge was designed by James Douglass.", UNSAFE),  # refused
        ("The present tower was designed by James Douglass, a famous engineer.", DESIGNED),
    ]
    page = tower_page(
        src, *(claim(t, src, q) for t, q in said), title="James Douglass designed the tower"
    )
    page["summary"] = "The Eddystone Lighthouse, designed by James Douglass, stands on rocks."
    page["section"] = "Where the old bridge stands"
    plan = parse_plan(make_plan(vault, page))
    store, verifier = gate_services(vault)

    def judged() -> list[tuple[str, ...]]:
        op = admit(vault.db, vault.config, store, verifier, plan, "p").ops[0]
        return [(t.what, t.status, t.support, t.reason, t.host) for t in op.texts] + [
            (c.text, c.status, c.support, c.support_reason) for c in op.claims
        ]

    _clear()
    batched = judged()
    monkeypatch.setattr(admission, "prepare", lambda items: 0)
    _clear()
    assert judged() == batched
    statuses = [row[1] for row in batched[3:]]
    assert "rejected" in statuses and "uncertain" in [row[2] for row in batched[3:]]
