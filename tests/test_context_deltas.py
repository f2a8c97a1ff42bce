"""context.md's snapshots as keyframes and line deltas (issue 25 item 5, migration
``m023_context_deltas``): every snapshot reads back exactly, one in :data:`KEYFRAME` is whole, a
vault written before the migration is converted and stays doctor-clean, and a delta whose chain
was tampered with is refused, never read as other text."""

from __future__ import annotations

import random
import sqlite3
from typing import Any

import pytest

from affidavit.db import migrate
from affidavit.doctor import run_doctor
from affidavit.errors import IntegrityError
from affidavit.evidence.spans import ensure_functions
from affidavit.evidence.spans import register as register_spans
from affidavit.inbox import approve, propose
from affidavit.plan.snapshots import KEYFRAME, all_texts, delta, patch, save, text_of
from affidavit.plan.stored import pack
from affidavit.storage.sqlite import SQLiteStorage
from affidavit.vault import Vault, open_vault

from .conftest import add_text, claim, make_plan


def _db() -> sqlite3.Connection:
    db = sqlite3.connect(":memory:")
    ensure_functions(db)
    migrate(db)
    return db


def _texts(rnd: random.Random, n: int) -> list[str]:
    """context.md-like texts: each the one before with lines added, changed, dropped."""
    lines = [f"# Context {rnd.random()}\n", "\n"] + [f"entry {i}\n" for i in range(30)]
    out = []
    for _ in range(n):
        for _ in range(rnd.randint(0, 4)):
            where = rnd.randrange(len(lines) + 1)
            kind = rnd.random()
            if kind < 0.5:
                lines.insert(where, f"new {rnd.random()}\n" + ("\n" if rnd.random() < 0.2 else ""))
            elif kind < 0.8 and where < len(lines):
                lines[where] = f"changed {rnd.random()}\n"
            elif where < len(lines):
                del lines[where]
        text = "".join(lines)
        if rnd.random() < 0.1:
            text = text.rstrip("\n")  # no final newline
        out.append(text)
    return out


def test_random_histories_read_back_exactly_with_a_keyframe_every_run() -> None:
    for seed in range(6):
        rnd = random.Random(seed)
        db = _db()
        texts = _texts(rnd, 3 * KEYFRAME + rnd.randint(0, KEYFRAME))
        for n, text in enumerate(texts):
            save(db, f"plan-{n}", "2026-01-01T00:00:00Z", text)
        assert all_texts(db) == [(f"plan-{n}", t) for n, t in enumerate(texts)]
        ids = [r[0] for r in db.execute("SELECT id FROM context_snapshots ORDER BY id")]
        assert [text_of(db, i) for i in ids] == texts
        bases = [r[0] for r in db.execute("SELECT base FROM context_snapshots ORDER BY id")]
        whole = [n for n, base in enumerate(bases) if base is None]
        assert whole == list(range(0, len(texts), KEYFRAME))  # bounded chains
        assert all(bases[n] == ids[n - 1] for n in range(len(ids)) if n not in whole)


def test_a_delta_is_smaller_than_the_text_packed_whole() -> None:
    base = "".join(f"Entry {i}: a sentence of the overview, cited.[^{i}]\n" for i in range(400))
    text = base.replace("Entry 3:", "Entry three:") + "Entry 400: one more.\n"
    ops = delta(base, text)
    assert patch(base, ops) == text
    assert len(pack(ops)) * 20 < len(pack(text))


def _chained(db: sqlite3.Connection) -> list[int]:
    save(db, "p0", "t", "a\nb\nc\n")
    save(db, "p1", "t", "a\nB\nc\nd\n")
    save(db, "p2", "t", "a\nB\nc\nd\ne\n")
    return [r[0] for r in db.execute("SELECT id FROM context_snapshots ORDER BY id")]


def test_a_tampered_chain_is_refused_not_read_as_other_text() -> None:
    db = _db()
    first, second, third = _chained(db)
    assert text_of(db, third) == "a\nB\nc\nd\ne\n"
    db.execute(
        "UPDATE context_snapshots SET content_z = ? WHERE id = ?", (pack("[[0, 99]]"), second)
    )
    with pytest.raises(IntegrityError, match="delta is not readable"):
        text_of(db, third)
    db.execute(
        "UPDATE context_snapshots SET content_z = ? WHERE id = ?", (pack('[{"x": 1}]'), second)
    )
    with pytest.raises(IntegrityError):
        all_texts(db)
    db.execute("UPDATE context_snapshots SET content_z = ? WHERE id = ?", (b"not zlib", second))
    with pytest.raises(IntegrityError):
        text_of(db, second)

    db = _db()
    first, second, third = _chained(db)
    db.execute("DELETE FROM context_snapshots WHERE id = ?", (first,))
    with pytest.raises(IntegrityError, match="is missing"):
        text_of(db, third)

    db = _db()
    first, second, third = _chained(db)
    db.execute("UPDATE context_snapshots SET base = ? WHERE id = ?", (third, second))  # a loop
    with pytest.raises(IntegrityError, match="later base"):
        text_of(db, third)


def _context_plans(vault: Vault, batches: int, first: int = 0) -> None:
    lines = "\n".join(
        f"Fact number {i} is that the value {i} is recorded here."
        for i in range(3 * (first + batches))
    )
    src = add_text(vault, f"facts{first}.md", lines + "\n")
    for batch in range(first, first + batches):
        entries = [
            claim(
                f"Value {i} is recorded.", src, f"Fact number {i} is that the value {i} is recorded"
            )
            for i in range(batch * 3, batch * 3 + 3)
        ]
        plan = make_plan(vault, {"op": "update_context", "entries": entries})
        proposal = propose(vault, plan, "t", "t")
        assert proposal.status == "pending", str(proposal.admission.to_json()["ops"])
        assert approve(vault, proposal.plan_id, None, "t").applied


def _as_before_m023(vault: Vault) -> list[tuple[str, str]]:
    """The vault's database as a release before m023 wrote it: every snapshot whole."""
    db = sqlite3.connect(vault.state_dir / "db.sqlite")
    register_spans(db, vault.root)
    try:
        texts = all_texts(db)
        ids = [r[0] for r in db.execute("SELECT id FROM context_snapshots ORDER BY id")]
        with db:
            for snapshot_id, (_, text) in zip(ids, texts, strict=True):
                db.execute(
                    "UPDATE context_snapshots SET content_z = ?, base = NULL WHERE id = ?",
                    (pack(text), snapshot_id),
                )
            db.execute("DELETE FROM _migrations WHERE name = 'm023_context_deltas'")
        db.execute("ALTER TABLE context_snapshots DROP COLUMN base")
        return texts
    finally:
        db.close()


def test_the_migration_converts_an_old_vault_which_stays_doctor_clean(vault: Vault) -> None:
    _context_plans(vault, KEYFRAME + 3)
    root = vault.root
    vault.close()
    texts = _as_before_m023(vault)
    assert len(texts) == KEYFRAME + 3
    size: dict[str, Any] = {}
    raw = sqlite3.connect(root / ".affidavit" / "db.sqlite")
    size["before"] = raw.execute("SELECT sum(length(content_z)) FROM context_snapshots").fetchone()
    raw.close()
    with open_vault(root) as again:
        bases = [r[0] for r in again.db.execute("SELECT base FROM context_snapshots ORDER BY id")]
        assert [n for n, b in enumerate(bases) if b is None] == [0, KEYFRAME]
        assert all_texts(again.db) == texts
        assert SQLiteStorage(again).context_snapshots("default") == texts
        after = again.db.execute("SELECT sum(length(content_z)) FROM context_snapshots").fetchone()
        assert after[0] * 3 < size["before"][0]
        assert run_doctor(again).clean
        _context_plans(again, 2, KEYFRAME + 3)  # the door goes on writing deltas after it
        assert len(all_texts(again.db)) == KEYFRAME + 5
        assert run_doctor(again).clean


def _context_md(first: int, last: int) -> str:
    """A context.md-like text: entries ``first``..``last`` with footnotes numbered from 1."""
    paras = [f"Entry {i} of the overview.[^{n + 1}]\n\n" for n, i in enumerate(range(first, last))]
    notes = [
        f"[^{n + 1}]: “Quote {i}” — [source](../s.md), line {i}\n"
        for n, i in enumerate(range(first, last))
    ]
    return "# Context\n\n" + "".join(paras) + "".join(notes)


def test_a_spill_that_renumbers_every_footnote_is_a_small_delta() -> None:
    base, text = _context_md(0, 300), _context_md(5, 306)  # 5 spilled, 6 added: all renumbered
    ops = delta(base, text)
    assert patch(base, ops) == text and '"masked"' in ops
    assert len(pack(ops)) * 10 < len(pack(text))
    odd = base.replace("[^7]", "[^70]", 1)  # numbers out of order: kept as they are
    assert patch(odd, delta(odd, text)) == text and patch(base, delta(base, odd)) == odd
    with pytest.raises(IntegrityError, match="don't mask"):
        patch(odd, ops)  # a masked delta against a base whose footnotes were tampered with
