"""A new version costs what changed (issue 27): the carry finds a quote of an unchanged line at
its shifted offsets without a search, and only when the old text's words at its offsets are the
quote; a changed line's quote is looked up as before."""

from __future__ import annotations

from pathlib import Path

from affidavit.inbox import propose
from affidavit.ingest.lineage import changed_units
from affidavit.sources.store import SourceStore
from affidavit.sources.stretches import same_stretches
from affidavit.vault import Vault

from .conftest import fresh_nonce
from .test_lineage import V1, ingest, live

FISHING = "Fishing boats land their catch at the north quay every morning."


def _carry(vault: Vault, source: str, to: str, claims: list[str]) -> dict[str, object]:
    plan = {
        "nonce": fresh_nonce(vault),
        "operations": [{"op": "carry_source", "source": source, "to": to, "claims": claims}],
    }
    return propose(vault, plan, "person:me", "cli").admission.ops[0].detail


def _v1_and_v2(vault: Vault, tmp_path: Path, new: str) -> tuple[str, str, list[str]]:
    path = tmp_path / "harbour.md"
    path.write_text(V1)
    ingest(vault, path)
    store = SourceStore(vault)
    v1 = store.list()[0].id
    claims = [c for c, (_, s) in live(vault).items() if s == v1]
    v2 = store.add_bytes(new.encode(), str(path), "harbour.md", trust="trusted").record.id
    return v1, v2, claims


def test_same_stretches_are_the_same_bytes_at_shifted_offsets() -> None:
    old = "a line\nsecond line\nthird line. Same sentence. fourth\n"
    new = "a new first line\na line\nsecond line changed\nthird line. Same sentence. fourth\n"
    stretches = same_stretches(old, new)
    assert stretches, "the unchanged lines are found"
    for start, end, shift in stretches:
        assert old[start:end] == new[start + shift : end + shift]
    covered = "".join(old[s:e] for s, e, _ in stretches)
    assert "third line. Same sentence. fourth\n" in covered and "second line\n" not in covered


def test_a_quote_in_an_unchanged_line_keeps_its_own_words_not_an_earlier_copy(
    vault: Vault, tmp_path: Path
) -> None:
    """The new version repeats a sentence before the line a claim quotes: the claim is carried to
    its own line (shifted), not to the first place the words now appear."""
    v2_text = V1.replace("# Harbour\n\n", f"# Harbour\n\n{FISHING} (A new note.)\n\n", 1)
    v1, v2, claims = _v1_and_v2(vault, tmp_path, v2_text)
    fishing = next(c for c in claims if FISHING in live(vault)[c][0])
    detail = _carry(vault, v1, v2, claims)
    [[_, start, end]] = detail["carried"][fishing]
    own = v2_text.index(FISHING, v2_text.index(FISHING) + 1)
    assert (start, end) == (own, own + len(FISHING))
    text = SourceStore(vault).text(v2)
    row = vault.db.execute(
        'SELECT start, "end", quote FROM evidence WHERE claim_id = ? AND idx = 0', (fishing,)
    ).fetchone()
    assert tuple(row) == (own, own + len(FISHING), text[own : own + len(FISHING)])


def test_tampered_offsets_are_not_shifted_into_the_new_version(
    vault: Vault, tmp_path: Path
) -> None:
    """The attacker's carry: a claim's offsets edited in ``evidence_rows`` (its quote now reads as
    unreadable) inside an unchanged line must not be carried to the shifted span of the new
    version — whose words the claim never quoted."""
    v2_text = "Preface line added.\n\n" + V1
    v1, v2, claims = _v1_and_v2(vault, tmp_path, v2_text)
    fishing = next(c for c in claims if FISHING in live(vault)[c][0])
    vault.db.execute(
        'UPDATE evidence_rows SET start = start + 8, "end" = "end" - 3 WHERE claim_id = ?',
        (fishing,),
    )
    vault.db.commit()
    detail = _carry(vault, v1, v2, claims)
    assert fishing in detail["left"] and fishing not in detail["carried"]
    assert len(detail["carried"]) == len(claims) - 1


def test_only_what_differs_is_cut_into_sentences_a_wrapped_one_whole() -> None:
    """The alignment cuts only the differing stretches (with context) into sentences: a changed
    sentence wrapped over two lines is one changed unit, whole, and nothing unchanged is
    reported as changed."""
    old = (
        "# Harbour\n\nIntro line one. Intro line two. Intro three.\n\n"
        "The harbour wall was\nrebuilt in 1904 after a storm. Fishing boats land daily.\n"
        "Tourists come. In summer. Mostly.\n"
    )
    new = old.replace("1904", "1911")
    assert [new[s:e] for s, e in changed_units(old, new)] == [
        "The harbour wall was\nrebuilt in 1911 after a storm."
    ]
    later = old.replace("Mostly.", "Mostly, in July.")
    assert [later[s:e] for s, e in changed_units(old, later)] == ["Mostly, in July."]
    assert changed_units(old, old) == []
