"""Claim vectors with lineage (model, version, text hash), reindex and brute-force search.

Lineage: changing the embedding model or a claim's text makes its old vector unusable until
``reindex`` rebuilds it; vectors of claims that are no longer active are removed.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")

from affidavit.inbox import approve, propose  # noqa: E402
from affidavit.retrieval import vectors as vectors_module  # noqa: E402
from affidavit.retrieval.embeddings import Embedder, load_embedder  # noqa: E402
from affidavit.retrieval.vectors import (  # noqa: E402
    ReindexReport,
    VectorIndex,
    from_blobs,
    text_sha256,
    to_blob,
    top_k,
)
from affidavit.vault import Vault  # noqa: E402

from .conftest import FakeClock, add_text, claim, make_plan  # noqa: E402

TEXT = (
    "The Golden Gate Bridge opened to traffic in 1937 after four years of construction.\n"
    "Photosynthesis converts sunlight into chemical energy in green plants.\n"
    "The central bank raised interest rates to slow down inflation.\n"
)
BRIDGE = "The Golden Gate Bridge opened to traffic in 1937."
PLANTS = "Green plants turn sunlight into chemical energy."
BANK = "The central bank raised interest rates to slow inflation."


class Relabelled:
    """The real embedder under another lineage (another model name or version)."""

    def __init__(self, inner: Embedder, name: str | None = None, version: str | None = None):
        self.inner = inner
        self.name = name or inner.name
        self.version = version or inner.version
        self.dim = inner.dim

    def embed(self, texts: Sequence[str]) -> Any:
        return self.inner.embed(texts)


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    found = load_embedder()
    if found is None:
        pytest.skip("embeddings extra not installed")
    return found


@pytest.fixture
def claims(vault: Vault) -> dict[str, str]:
    """Three active claims on one page, through propose + approve; short name → claim id."""
    src = add_text(vault, "facts.md", TEXT)
    page = {
        "op": "create_page",
        "slug": "facts",
        "title": "Facts",
        "summary": "The Golden Gate Bridge, sunlight and interest rates.",
        "claims": [
            claim(BRIDGE, src, "Golden Gate Bridge opened to traffic in 1937"),
            claim(
                PLANTS, src, "Photosynthesis converts sunlight into chemical energy in green plants"
            ),
            claim(BANK, src, "central bank raised interest rates to slow down inflation"),
        ],
    }
    proposal = propose(vault, make_plan(vault, page), "tester", "test")
    assert proposal.status != "rejected", proposal.message
    if proposal.status == "pending":
        approve(vault, proposal.plan_id, None, "tester")
    rows = vault.db.execute("SELECT id, text FROM claims WHERE status = 'active'").fetchall()
    by_text = {r["text"]: r["id"] for r in rows}
    return {"bridge": by_text[BRIDGE], "plants": by_text[PLANTS], "bank": by_text[BANK]}


def ids(results: list[tuple[str, float]]) -> list[str]:
    return [cid for cid, _ in results]


def test_reindex_then_search_finds_the_claim(
    vault: Vault, claims: dict[str, str], embedder: Embedder, clock: FakeClock
) -> None:
    index = VectorIndex(clock=clock)
    assert index.stale(vault.db, embedder) == 3
    assert index.search(vault.db, embedder, "When did the bridge open?", 3) == []
    seen: list[tuple[int, int]] = []
    report = index.reindex(
        vault.db, embedder, progress=lambda done, total: seen.append((done, total))
    )
    assert report == ReindexReport(embedded=3, reused=0, removed=0)
    assert seen == [(3, 3)]
    assert index.stale(vault.db, embedder) == 0
    results = index.search(vault.db, embedder, "When did the Golden Gate bridge open?", 3)
    assert ids(results)[0] == claims["bridge"]
    scores = [s for _, s in results]
    assert scores == sorted(scores, reverse=True) and 0.5 < scores[0] <= 1.0001
    assert ids(index.search(vault.db, embedder, "How do plants use light?", 1)) == [
        claims["plants"]
    ]
    row = vault.db.execute(
        "SELECT * FROM vectors WHERE claim_id = ?", (claims["bridge"],)
    ).fetchone()
    assert (row["model"], row["model_version"], row["dim"]) == (
        embedder.name,
        embedder.version,
        384,
    )
    assert row["text_sha256"] == text_sha256(BRIDGE) and row["created_at"] == "2026-11-30T09:00:00Z"
    assert len(row["vector"]) == 4 * 384
    # nothing to do the second time
    assert index.reindex(vault.db, embedder) == ReindexReport(embedded=0, reused=3, removed=0)
    assert index.search(vault.db, embedder, "", 3) == []
    assert index.search(vault.db, embedder, "bridge", 0) == []


@pytest.mark.parametrize("change", [{"version": "9.9.9+000000000000"}, {"name": "other-model"}])
def test_another_model_finds_nothing_until_reindexed_with_it(
    vault: Vault, claims: dict[str, str], embedder: Embedder, change: dict[str, str]
) -> None:
    index = VectorIndex()
    index.reindex(vault.db, embedder)
    query = "When did the Golden Gate bridge open?"
    assert ids(index.search(vault.db, embedder, query, 1)) == [claims["bridge"]]
    other = Relabelled(embedder, **change)
    assert index.search(vault.db, other, query, 3) == []
    assert index.stale(vault.db, other) == 3
    assert index.reindex(vault.db, other) == ReindexReport(embedded=3, reused=0, removed=0)
    assert ids(index.search(vault.db, other, query, 1)) == [claims["bridge"]]
    # the old lineage was replaced: now the original embedder has nothing usable
    assert index.search(vault.db, embedder, query, 3) == []
    assert index.stale(vault.db, embedder) == 3
    assert index.reindex(vault.db, embedder).embedded == 3


def test_changed_claim_text_makes_its_vector_unused_until_reindexed(
    vault: Vault, claims: dict[str, str], embedder: Embedder
) -> None:
    index = VectorIndex()
    index.reindex(vault.db, embedder)
    query = "When did the Golden Gate bridge open?"
    assert claims["bridge"] in ids(index.search(vault.db, embedder, query, 3))  # cache is warm
    # Claims never change text through the door; the lineage check is what is under test here.
    new_text = "The Golden Gate Bridge carries US Route 101 across the strait."
    vault.db.execute("UPDATE claims SET text = ? WHERE id = ?", (new_text, claims["bridge"]))
    assert claims["bridge"] not in ids(index.search(vault.db, embedder, query, 3))
    assert index.stale(vault.db, embedder) == 1
    assert index.reindex(vault.db, embedder) == ReindexReport(embedded=1, reused=2, removed=0)
    stored = vault.db.execute(
        "SELECT text_sha256 FROM vectors WHERE claim_id = ?", (claims["bridge"],)
    ).fetchone()[0]
    assert stored == text_sha256(new_text)
    assert ids(index.search(vault.db, embedder, "Which road crosses the bridge?", 1)) == [
        claims["bridge"]
    ]


def test_a_change_from_another_connection_is_seen_by_a_warm_cache(
    vault: Vault, claims: dict[str, str], embedder: Embedder
) -> None:
    index = VectorIndex()
    index.reindex(vault.db, embedder)
    query = "How do plants use light?"
    assert ids(index.search(vault.db, embedder, query, 1)) == [claims["plants"]]
    other = sqlite3.connect(vault.state_dir / "db.sqlite", isolation_level=None)
    try:
        other.execute(
            "UPDATE claims SET text = 'Plants are green.' WHERE id = ?", (claims["plants"],)
        )
    finally:
        other.close()
    assert claims["plants"] not in ids(index.search(vault.db, embedder, query, 3))


def test_superseded_claims_are_never_found_and_their_vectors_are_removed(
    vault: Vault, claims: dict[str, str], embedder: Embedder
) -> None:
    index = VectorIndex()
    index.reindex(vault.db, embedder)
    src = vault.db.execute("SELECT id FROM sources").fetchone()[0]
    new = claim(
        "The Golden Gate Bridge opened in 1937.",
        src,
        "Golden Gate Bridge opened to traffic in 1937",
    )
    sup = {"op": "supersede_claim", "claim": claims["bridge"], "by": new, "reason": "clearer"}
    proposal = propose(vault, make_plan(vault, sup), "tester", "test")
    if proposal.status == "pending":
        approve(vault, proposal.plan_id, None, "tester")
    status = vault.db.execute("SELECT status FROM claims WHERE id = ?", (claims["bridge"],))
    assert status.fetchone()[0] == "superseded"
    query = "When did the Golden Gate bridge open?"
    assert claims["bridge"] not in ids(index.search(vault.db, embedder, query, 5))  # before reindex
    assert index.reindex(vault.db, embedder) == ReindexReport(embedded=1, reused=2, removed=1)
    kept = {r[0] for r in vault.db.execute("SELECT claim_id FROM vectors")}
    assert claims["bridge"] not in kept and len(kept) == 3
    top = ids(index.search(vault.db, embedder, query, 1))[0]
    assert top not in claims.values()  # the new claim


def test_allowed_restricts_the_candidates_and_claim_ids_restrict_reindex(
    vault: Vault, claims: dict[str, str], embedder: Embedder
) -> None:
    index = VectorIndex()
    assert index.reindex(vault.db, embedder, claim_ids=[claims["bank"]]).embedded == 1
    assert index.stale(vault.db, embedder) == 2
    index.reindex(vault.db, embedder)
    query = "When did the Golden Gate bridge open?"
    assert ids(index.search(vault.db, embedder, query, 3, allowed={claims["bank"]})) == [
        claims["bank"]
    ]
    assert index.search(vault.db, embedder, query, 3, allowed={"no-such-claim"}) == []
    assert len(index.search(vault.db, embedder, query, 10)) == 3


def test_repeated_searches_reuse_the_cached_matrix(
    vault: Vault, claims: dict[str, str], embedder: Embedder
) -> None:
    index = VectorIndex()
    index.reindex(vault.db, embedder)
    index.search(vault.db, embedder, "bridge", 1)
    matrices = [e.matrix for e in vectors_module._CACHE.values()]
    index.search(vault.db, embedder, "plants", 1)
    assert [e.matrix for e in vectors_module._CACHE.values()] == matrices  # same objects
    vault.db.execute("UPDATE claims SET position = position WHERE id = ?", (claims["bank"],))
    index.search(vault.db, embedder, "bank", 1)  # claims changed: lineage re-checked, no reload
    assert any(e.matrix is matrices[-1] for e in vectors_module._CACHE.values())
    index.reindex(vault.db, Relabelled(embedder, version="x"))
    index.reindex(vault.db, embedder)  # vectors rewritten: the matrix is reloaded
    index.search(vault.db, embedder, "bank", 1)
    assert all(e.matrix is not matrices[-1] for e in vectors_module._CACHE.values())


def test_a_logged_question_does_not_re_derive_the_usable_rows(
    vault: Vault, claims: dict[str, str], embedder: Embedder
) -> None:
    """Every ask logs its question; that changes the database, not the claims, so the usable
    mask (one SHA-256 per claim) must not be recomputed."""
    index = VectorIndex()
    index.reindex(vault.db, embedder)
    index.search(vault.db, embedder, "bridge", 1)
    masks = [e.usable for e in vectors_module._CACHE.values()]
    vault.db.execute(
        "INSERT INTO questions (at, question, min_trust, provider, retrieved, answer, verdict, "
        "dropped, prompt_tokens) VALUES ('x', 'bridge?', 'untrusted', 'x', '[]', '{}', 'x', 0, 0)"
    )
    index.search(vault.db, embedder, "bridge", 1)
    after = [e.usable for e in vectors_module._CACHE.values()]
    assert len(after) == len(masks) and all(a is b for a, b in zip(after, masks, strict=True))
    vault.db.execute("UPDATE claims SET status = 'retracted' WHERE id = ?", (claims["bank"],))
    assert claims["bank"] not in ids(index.search(vault.db, embedder, "bank", 3))


class Constant:
    """Every text to the same unit vector: every score ties."""

    name, version, dim = "constant", "1", 384

    def embed(self, texts: Sequence[str]) -> Any:
        vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        vectors[:, 0] = 1.0
        return vectors


def test_equal_scores_are_ordered_by_claim_id(vault: Vault, claims: dict[str, str]) -> None:
    index = VectorIndex()
    index.reindex(vault.db, Constant())
    in_order = sorted(claims.values())
    assert ids(index.search(vault.db, Constant(), "anything", 3)) == in_order
    assert ids(index.search(vault.db, Constant(), "anything", 2)) == in_order[:2]
    assert [s for _, s in index.search(vault.db, Constant(), "x", 3)] == [1.0, 1.0, 1.0]


def test_top_k_is_exact_and_breaks_ties_by_row() -> None:
    rng = np.random.default_rng(3)
    matrix = rng.standard_normal((500, 16)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    query = matrix[42]
    got = top_k(matrix, query, 5)
    expected = np.argsort(-(matrix @ query), kind="stable")[:5]
    assert [r for r, _ in got] == list(expected) and got[0][0] == 42
    for rows in (np.array([3, 42, 400]), np.arange(0, 500, 2)):  # scored alone, or picked
        got = top_k(matrix, query, 2, rows)
        best = rows[np.argsort(-(matrix[rows] @ query), kind="stable")[:2]]
        assert [r for r, _ in got] == list(best)
    tied = np.tile(matrix[:1], (10, 1))
    assert [r for r, _ in top_k(tied, matrix[0], 4)] == [0, 1, 2, 3]
    assert [r for r, _ in top_k(tied, matrix[0], 3, np.array([2, 5, 7, 9]))] == [2, 5, 7]
    rank = np.arange(10, dtype=np.int64)[::-1].copy()  # ids in reverse row order
    assert [r for r, _ in top_k(tied, matrix[0], 4, rank=rank)] == [9, 8, 7, 6]
    assert len(top_k(matrix, query, 1000)) == 500 and top_k(matrix, query, 0) == []


def test_blobs_round_trip_as_little_endian_float32() -> None:
    vectors = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    blobs = [to_blob(v) for v in vectors]
    assert blobs[0] == np.asarray(vectors[0], dtype="<f4").tobytes() and len(blobs[0]) == 16
    assert np.array_equal(from_blobs(blobs, 4), vectors)
    assert from_blobs([], 4).shape == (0, 4)
