"""The tantivy search index: kept in step by the door, self-healing when it falls behind, never
the source of a wrong answer, private, rebuilt by ``reindex`` and checked by ``doctor``."""

from __future__ import annotations

import json
import shutil
import stat
from pathlib import Path

import pytest
import tantivy
from click.testing import CliRunner

from affidavit.cli import main
from affidavit.doctor import run_doctor
from affidavit.inbox import approve, propose
from affidavit.retrieval import tantivy_index
from affidavit.retrieval.search import Retriever
from affidavit.retrieval.tantivy_index import DIRNAME, db_position, open_index, wait_for_refresh
from affidavit.vault import Vault, init_vault, private_problems

from .conftest import add_text, claim, make_plan

TEXT = (
    "The Eddystone Lighthouse stands on the Eddystone Rocks, 14 kilometres south of Rame Head.\n"
    "The present tower was designed by James Douglass and lit in 1882.\n"
    "Smeaton's Tower was dismantled and rebuilt on Plymouth Hoe.\n"
)


def build_wiki(vault: Vault, designer: str = "James Douglass") -> list[str]:
    source = add_text(vault, "lighthouse.md", TEXT.replace("James Douglass", designer), "trusted")
    plan = make_plan(
        vault,
        {
            "op": "create_page",
            "slug": "eddystone",
            "title": "Eddystone Lighthouse",
            "summary": "A lighthouse on the Eddystone Rocks",
            "claims": [
                claim(
                    "The Eddystone Lighthouse stands 14 kilometres south of Rame Head.",
                    source,
                    "The Eddystone Lighthouse stands on the Eddystone Rocks, 14 kilometres south "
                    "of Rame Head",
                ),
                claim(
                    f"Its present tower was designed by {designer} and lit in 1882.",
                    source,
                    f"The present tower was designed by {designer} and lit in 1882",
                ),
                claim(
                    "Smeaton's Tower was dismantled and rebuilt on Plymouth Hoe.",
                    source,
                    "Smeaton's Tower was dismantled and rebuilt on Plymouth Hoe",
                ),
            ],
        },
    )
    claims = approve(vault, propose(vault, plan, "t", "t").plan_id, None, "t").claims
    assert wait_for_refresh(60)  # the door's catch-up runs in the background
    return claims


def ids(retriever: Retriever, query: str, **kw: str) -> list[str]:
    return [hit.claim_id for hit in retriever.search(query, k=10, **kw)]  # type: ignore[arg-type]


def test_the_door_keeps_the_index_in_step_and_searches_use_it(vault: Vault) -> None:
    claims = build_wiki(vault)
    index = open_index(vault.db)
    assert index is not None and index.position == db_position(vault.db)  # the hook ran
    retriever = Retriever(vault.db)
    assert ids(retriever, "Who designed the present tower?")[0] == claims[1]
    assert retriever.used == "tantivy"


def test_the_index_files_are_private(vault: Vault) -> None:
    build_wiki(vault)
    Retriever(vault.db).search("tower")
    folder = vault.state_dir / DIRNAME
    assert folder.is_dir() and stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert private_problems(vault.root) == []


def test_a_change_the_index_missed_is_never_served(vault: Vault) -> None:
    """A crash between the database commit and the index update: the index still holds a claim
    that was retracted and lacks one that was added. The next search catches up first."""
    claims = build_wiki(vault)
    vault.db.execute("UPDATE claims SET status = 'retracted' WHERE id = ?", (claims[1],))
    vault.db.execute(
        "UPDATE claims SET text = 'Douglass designed the granite lantern.' WHERE id = ?",
        (claims[2],),
    )
    retriever = Retriever(vault.db)
    assert claims[1] not in ids(retriever, "Who designed the present tower?")
    assert ids(retriever, "granite lantern") == [claims[2]]
    assert retriever.used == "tantivy"  # caught up, not merely bypassed
    index = open_index(vault.db)
    assert index is not None and index.position == db_position(vault.db)


def test_a_busy_index_falls_back_to_fts5_with_the_right_answer(vault: Vault) -> None:
    claims = build_wiki(vault)
    vault.db.execute("UPDATE claims SET status = 'retracted' WHERE id = ?", (claims[1],))
    other = tantivy.Index.open(str(vault.state_dir / DIRNAME))
    writer = other.writer(15_000_000, 1)  # another process holds the index's writer
    try:
        retriever = Retriever(vault.db)
        found = ids(retriever, "Who designed the present tower?")
        assert claims[1] not in found and retriever.used == "fts5"
        assert not [f for f in run_doctor(vault).findings if f.check == "search"]  # behind: normal
    finally:
        writer.rollback()
        del writer
    retriever = Retriever(vault.db)
    assert claims[1] not in ids(retriever, "Who designed the present tower?")
    assert retriever.used == "tantivy"


def test_an_index_from_another_database_is_rebuilt(tmp_path: Path, vault: Vault) -> None:
    """An index copied from another vault (other epoch, more changes) holds claims this vault
    never had: it must be rebuilt, not trusted."""
    other, _ = init_vault(tmp_path / "other")
    try:
        foreign = build_wiki(other, "Henry Winstanley")
        Retriever(other.db).search("tower")
        mine = build_wiki(vault)
        shutil.rmtree(vault.state_dir / DIRNAME)
        shutil.copytree(other.state_dir / DIRNAME, vault.state_dir / DIRNAME)
        tantivy_index._OPEN.clear()  # a fresh process
        found = ids(Retriever(vault.db), "Who designed the present tower?")
        assert found[0] == mine[1] and foreign[1] not in found
    finally:
        other.close()


def test_doctor_checks_and_reindex_rebuilds_the_index(vault: Vault) -> None:
    claims = build_wiki(vault)
    assert not [f for f in run_doctor(vault).findings if f.check == "search"]
    index = open_index(vault.db)
    assert index is not None
    writer = index._writer(15_000_000, 1)  # documents lost behind the recorded position
    writer.delete_documents_by_term("key", "c:" + claims[0])
    writer.commit()
    del writer
    index.index.reload()
    found = [f for f in run_doctor(vault).findings if f.check == "search"]
    assert found and "3 active claims" in found[0].message and found[0].fix == "affidavit reindex"
    out = CliRunner().invoke(main, ["--vault", str(vault.root), "reindex", "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["search_index"]["documents"] == 4  # 3 claims, 1 page
    assert not [f for f in run_doctor(vault).findings if f.check == "search"]
    assert vault.db.execute("SELECT count(*) FROM search_changes").fetchone()[0] == 0  # pruned
    assert ids(Retriever(vault.db), "Rame Head kilometres")[0] == claims[0]


def test_a_deleted_index_is_rebuilt_in_the_background(vault: Vault) -> None:
    claims = build_wiki(vault)
    CliRunner().invoke(main, ["--vault", str(vault.root), "reindex"])  # prunes the change log
    shutil.rmtree(vault.state_dir / DIRNAME)
    tantivy_index._OPEN.clear()
    retriever = Retriever(vault.db)
    assert ids(retriever, "Plymouth Hoe")[0] == claims[2]  # FTS5 while it is rebuilt
    assert retriever.used == "fts5" and wait_for_refresh(60)
    assert ids(retriever, "Plymouth Hoe")[0] == claims[2] and retriever.used == "tantivy"


@pytest.mark.parametrize("engine", ["auto", "fts5"])
def test_trust_filter_holds_in_both_engines(vault: Vault, engine: str) -> None:
    build_wiki(vault)
    retriever = Retriever(vault.db, engine=engine)
    assert ids(retriever, "tower lighthouse", min_trust="trusted")
    vault.db.execute("UPDATE claims SET trust = 'untrusted'")
    assert ids(retriever, "tower lighthouse", min_trust="semi-trusted") == []
    assert len(ids(retriever, "tower lighthouse", min_trust="untrusted")) == 3


TREATY = (
    "The Treaty of Paris ended the war in 1783.\n"
    "The treaty was signed in the Hotel d'York on the rue Jacob.\n"
    "Paris hosted the peace talks for many months.\n"
    "Benjamin Franklin, John Adams and John Jay negotiated the treaty for the United States.\n"
)


@pytest.mark.parametrize("engine", ["auto", "fts5"])
def test_a_matching_page_never_outranks_the_best_bm25_hit(vault: Vault, engine: str) -> None:
    """Issue 15: RRF over the claim and page lists put a matching page's weaker claims above the
    claim that answers the question; the fused ranking keeps the best BM25 hit first."""
    source = add_text(vault, "treaty.md", TREATY, "trusted")
    plan = make_plan(
        vault,
        {
            "op": "create_page",
            "slug": "treaty-of-paris",
            "title": "Treaty of Paris",
            "summary": "The Treaty of Paris of 1783",
            "claims": [
                claim(
                    "The Treaty of Paris ended the war in 1783.",
                    source,
                    "The Treaty of Paris ended the war in 1783",
                ),
                claim(
                    "The treaty was signed in the Hotel d'York on the rue Jacob.",
                    source,
                    "The treaty was signed in the Hotel d'York on the rue Jacob",
                ),
            ],
        },
    )
    first = approve(vault, propose(vault, plan, "t", "t").plan_id, None, "t").claims
    source = add_text(vault, "delegation.md", TREATY.splitlines()[-1] + "\n", "trusted")
    plan = make_plan(
        vault,
        {
            "op": "create_page",
            "slug": "american-delegation",
            "title": "American delegation",
            "summary": "Benjamin Franklin, John Adams and John Jay",
            "claims": [
                claim(
                    "Benjamin Franklin, John Adams and John Jay negotiated the treaty for the "
                    "United States.",
                    source,
                    "Benjamin Franklin, John Adams and John Jay negotiated the treaty for the "
                    "United States",
                )
            ],
        },
    )
    proposed = propose(vault, plan, "t", "t")
    assert proposed.status == "pending", proposed
    claims = first + approve(vault, proposed.plan_id, None, "t").claims
    assert len(claims) == 3
    wait_for_refresh(60)
    question = "Who negotiated the treaty?"
    assert ids(Retriever(vault.db, engine=engine), question)[0] == claims[2]
    # the earlier fusion, kept for the benchmark, shows the bug this guards against
    assert ids(Retriever(vault.db, engine=engine, fusion="rrf"), question)[0] != claims[2]


def test_hydrating_only_the_first_k_claims_gives_the_answer_of_hydrating_2k(
    tmp_path: Path,
) -> None:
    """The search reads the rows of the first k ranked claims only when they settle the answer;
    on a wiki whose context.md repeats page claims (the twins ``_distinct`` folds), every k and
    question must give exactly what hydrating all 2k candidates gives."""
    from affidavit.db import read_snapshot
    from affidavit.ingest.pipeline import Ingestor
    from affidavit.providers.extractive import ExtractiveProvider
    from affidavit.retrieval.search import (
        RRF_K,
        _distinct,
        allowed_tiers,
        fuse_lexical,
        query_terms,
    )

    from .conftest import SAMPLES

    vault, _ = init_vault(tmp_path / "v")
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run(
        [str(SAMPLES / "sotu" / "1790-washington.md")], "trusted"
    )
    twins = vault.db.execute(
        "SELECT count(*) FROM claims a JOIN claims b ON a.text = b.text "
        "WHERE a.page_slug = '' AND b.page_slug != ''"
    ).fetchone()[0]
    assert twins > 0
    retriever = Retriever(vault.db)
    tiers = allowed_tiers("untrusted")
    fallbacks = 0
    for question in (
        "What loan was completed in Holland?",
        "The powers vested in me, a loan completed in Holland, and the public credit?",
        "What did the President say about the militia and public credit?",
        "Which laws concern the post office and the post roads?",
    ):
        for k in range(1, 9):
            with read_snapshot(vault.db):
                lists = retriever._lists(query_terms(question), k, tiers)
                ranked = fuse_lexical(lists["claims"], lists["pages"], lists["neighbours"])
                scores = {cid: 1.0 / (RRF_K + n + 1) for n, cid in enumerate(ranked)}
                want = _distinct(retriever._hits(ranked[: k * 2], scores, tiers), k)
                first = _distinct(retriever._hits(ranked[:k], scores, tiers), k)
            fallbacks += not (len(first) == k and all(hit.page for hit in first))
            assert retriever.search(question, k=k) == want, (question, k)
    assert fallbacks > 0  # some answers needed the other k rows: both branches ran
    vault.close()


def test_a_closed_vault_has_no_background_index_work_left(tmp_path: Path) -> None:
    """A copy taken right after ``close()`` (a backup, a test template) sees a quiet vault: the
    background catch-up that opens and closes the database (creating and removing ``-shm``) has
    finished. It made a copy fail once, with ``db.sqlite-shm`` gone mid-copy."""
    vault, _ = init_vault(tmp_path / "v")
    source = add_text(vault, "lighthouse.md", TEXT, "trusted")
    quote = "The present tower was designed by James Douglass and lit in 1882"
    plan = make_plan(
        vault,
        {
            "op": "create_page",
            "slug": "tower",
            "title": "Tower",
            "summary": "A tower",
            "claims": [claim(quote + ".", source, quote)],
        },
    )
    approve(vault, propose(vault, plan, "t", "t").plan_id, None, "t")
    database = Path(vault.state_dir / "db.sqlite").resolve()
    vault.close()
    refresher = tantivy_index._REFRESHER
    with refresher.cond:
        assert database not in refresher.pending.values() and refresher.current != database
    shutil.copytree(tmp_path / "v", tmp_path / "copy")
