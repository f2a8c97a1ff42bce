"""A large source costs the same per plan as a small one (issue 14: linear in size).

No per-plan work may read, hash, normalise, index or number the whole source again: each plan's
gate gets a fresh store and verifier, so what is computed once for a source must be found again by
content, and the source used last must stay cached however large it is. These tests bound the
work (what is rebuilt), not the time.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from affidavit.evidence import Verifier, verify
from affidavit.evidence import index as suffix
from affidavit.sources import sentences
from affidavit.sources.sentences import sentences_of
from affidavit.sources.store import SourceStore
from affidavit.vault import Vault

_SENTENCE = "The river floods the valley every spring, and the town rebuilds its {n} bridges. "


def _add(
    vault: Vault, tmp_path: Path, sentences_count: int, tag: str
) -> tuple[SourceStore, str, str]:
    """A source of its own (``tag`` keeps texts apart: the verifier's cache is per process)."""
    text = f"{tag}. " + "".join(_SENTENCE.format(n=n) for n in range(sentences_count))
    path = tmp_path / "large.txt"
    path.write_text(text, encoding="utf-8")
    store = SourceStore(vault)
    record = store.add_file(path, "trusted").record
    return store, record.id, text


def test_a_source_over_the_numbering_bound_is_numbered_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Over the bound, a source used to be numbered again for every citation of it (minutes per
    # chunk for a 50 MB source). The one numbered last now stays, whatever its size.
    monkeypatch.setattr(sentences, "_CACHE_CHARS", 100)
    text = "".join(_SENTENCE.format(n=n) for n in range(50))
    first = sentences_of("a" * 64, text)
    assert sentences_of("a" * 64, text) is first
    assert sentences_of("a" * 64, lambda: text) is first
    other = sentences_of("b" * 64, text + "One more sentence here.")
    assert sentences_of("b" * 64, text + "One more sentence here.") is other


def test_the_next_plan_reads_no_source_text_again(vault: Vault, tmp_path: Path) -> None:
    store, source_id, text = _add(vault, tmp_path, 400, "Next plan")
    check = Verifier(store).check(source_id, "the town rebuilds its 399 bridges")
    assert check.verified and check.span == "the town rebuilds its 399 bridges"
    cached = Verifier(store).normalized(source_id)
    # A later plan's gate: a new store and a new verifier. Both find the text by its recorded
    # hash; neither reads the file (the very same string object comes back).
    fresh_store = SourceStore(vault)
    assert fresh_store.text(source_id) is cached.original
    assert Verifier(fresh_store).normalized(source_id) is cached
    assert fresh_store.text(source_id) == text


def test_a_changed_text_under_the_same_id_is_never_served_from_the_cache(
    vault: Vault, tmp_path: Path
) -> None:
    store, source_id, _ = _add(vault, tmp_path, 50, "Changed text")
    assert Verifier(store).check(source_id, "its 49 bridges").verified
    path = vault.root / store.get(source_id).text_file
    path.chmod(stat.S_IWUSR | stat.S_IRUSR)
    path.write_text("Someone rewrote the stored text: 77 bridges.", encoding="utf-8")
    # The record's hash no longer matches the file: the gate's provenance check says so, and
    # what is read and verified is the file as it now is (doctor reports the quotes it breaks).
    problems = SourceStore(vault).check_integrity(source_id)
    assert problems and "no longer matches" in problems[0]
    assert SourceStore(vault).text_key(source_id) is None
    assert SourceStore(vault).text(source_id) == "Someone rewrote the stored text: 77 bridges."
    assert not Verifier(SourceStore(vault)).check(source_id, "its 49 bridges").verified
    assert Verifier(SourceStore(vault)).check(source_id, "77 bridges").verified


def test_integrity_is_checked_again_after_a_change(vault: Vault, tmp_path: Path) -> None:
    store, source_id, _ = _add(vault, tmp_path, 20, "Integrity")
    assert store.check_integrity(source_id) == []
    assert store.check_integrity(source_id) == []
    original = vault.root / store.get(source_id).original_file
    original.chmod(stat.S_IWUSR | stat.S_IRUSR)
    with original.open("ab") as handle:
        handle.write(b" tampered")
    os.sync()
    problems = SourceStore(vault).check_integrity(source_id)
    assert problems and "original file" in problems[0]


@pytest.mark.skipif(not suffix.AVAILABLE, reason="pydivsufsort is not installed")
def test_one_suffix_array_per_source_across_plans(vault: Vault, tmp_path: Path) -> None:
    store, source_id, _ = _add(vault, tmp_path, 400, "One index")  # ~33 k characters: indexable
    quotes = [f"the town rebuilds its {n} bridges" for n in (5, 250, 399)]
    built = []
    for quote in quotes:  # one plan each: a fresh store and verifier every time
        fresh = SourceStore(vault)
        assert Verifier(fresh).check(source_id, quote).verified
        built.append(Verifier(fresh)._source(source_id).index)
    assert built[0] is None  # the first lookup normalised the source; no index yet
    assert built[1] is not None and built[2] is built[1]  # built once, at the second, then kept
    assert isinstance(built[1], suffix.SuffixIndex)
    assert verify._shared_get(store.text_key(source_id) or "") is not None
