"""The wiki's content on PostgreSQL through the door (issue 26, stage 2b): sources stored
content-addressed and re-hashed on read, pages, claims and evidence written by a plan's
create_page / add_claims inside the door's advisory-locked transaction, quotes re-verified against
the stored source (W3), and a batch killed mid-way leaving nothing behind."""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from affidavit.errors import ConflictError, IntegrityError, PlanValidationError
from affidavit.hashing import sha256_hex
from affidavit.storage import open_storage

from .pg_appliers import ACTOR, EXPIRES, NOW
from .pg_cluster import drop_vaults

pytestmark = pytest.mark.xdist_group("postgres")  # one cluster, on one worker

psycopg = pytest.importorskip("psycopg")

ATTACK = "'; DROP TABLE v_main.pages; -- <script>alert(1)</script> «ü» 🚀 \\x00 %s {s} $$"
TEXT = (
    "Line one of the source.\r\n"
    f"The committee met on 3 March and said: {ATTACK}\r\n"
    "Zero-width\u200bjoiner and e\u0301 (combining) stay as they are.\n"
    "Robert'); DROP TABLE claims;-- was a student.\n"
)
DATA = b"\xef\xbb\xbf" + TEXT.encode("utf-8")  # a BOM: the bytes are not the text
CRATES = "".join(f"Crate {i} holds {i + 3} apples.\n" for i in range(300)).encode()


def crate(i: int) -> str:
    """A sentence of CRATES: distinct claims the gate finds supported and not duplicates."""
    return f"Crate {i} holds {i + 3} apples."


def crate_claim(source: str, i: int) -> dict[str, Any]:
    return {"text": crate(i), "evidence": [{"source": source, "quote": crate(i)}]}


@pytest.fixture
def storage(pg_url: str) -> Iterator[Any]:
    drop_vaults(pg_url)
    made = open_storage(pg_url)
    made.create_vault("main", "ann")
    yield made
    made.close()


def add(storage: Any, data: bytes = DATA, text: str | None = TEXT, trust: str = "trusted") -> str:
    return str(
        storage.add_source(
            "main", data, origin=f"/in/{ATTACK}", name=ATTACK, added_at=NOW, text=text,
            media_type="text/markdown", trust=trust,
        )
    )  # fmt: skip


def propose(storage: Any, plan_id: str, *ops: dict[str, Any]) -> str:
    plan = {"nonce": f"nonce-{plan_id}-0123456789abcdef", "operations": list(ops)}
    storage.propose(
        "main", plan_id, author="ann", origin="cli", plan_json=json.dumps(plan),
        created_at=NOW, expires_at=EXPIRES,
    )  # fmt: skip
    return plan_id


def page_op(slug: str, source: str, *quotes: str, title: str = ATTACK) -> dict[str, Any]:
    return {
        "op": "create_page", "slug": slug, "title": title, "summary": f"About {ATTACK}",
        "claims": [{"text": q, "evidence": [{"source": source, "quote": q}]} for q in quotes],
    }  # fmt: skip


def apply(storage: Any, batch: str, *plans: str) -> int:
    with storage.door("main", batch) as door:
        for plan_id in plans:
            door.apply_plan(plan_id, now=NOW, actor=ACTOR)
        return int(door.seal())


def test_content_round_trips_byte_for_byte_through_the_door(storage: Any) -> None:
    source = add(storage)
    assert source == sha256_hex(DATA) and add(storage) == source  # content-addressed, once
    quotes = [
        "said: " + ATTACK,
        "Robert'); DROP TABLE claims;--",
        "Zero-width\u200bjoiner and e\u0301",
    ]
    propose(storage, "p1", page_op("committee", source[:12], *quotes[:2]))
    propose(storage, "p2", {
        "op": "add_claims", "page": "committee", "section": ATTACK[:70],
        "claims": [{"text": quotes[2], "evidence": [{"source": source, "quote": quotes[2]}]}],
    })  # fmt: skip
    assert apply(storage, "b-1", "p1") == 1 and apply(storage, "b-2", "p2") == 2
    assert storage.source_bytes("main", source) == DATA
    assert storage.source_text("main", source) == TEXT
    record = storage.source("main", source)
    assert (record.name, record.origin, record.size_bytes, record.text_chars) == (
        ATTACK,
        f"/in/{ATTACK}",
        len(DATA),
        len(TEXT),
    )
    page = storage.page("main", "committee")
    assert (page.title, page.summary, page.plan_id) == (ATTACK, f"About {ATTACK}", "p1")
    assert [c.section for c in page.claims] == ["Overview", "Overview", ATTACK[:70]]
    assert [c.position for c in page.claims] == [0, 1, 2]
    assert [c.plan_id for c in page.claims] == ["p1", "p1", "p2"]
    assert [c.text for c in page.claims] == quotes
    for claim, quote in zip(page.claims, quotes, strict=True):
        (ev,) = claim.evidence
        assert ev.quote == quote and ev.source_id == source
        assert (ev.start, ev.end) == (TEXT.index(quote), TEXT.index(quote) + len(quote))
        assert TEXT[ev.start : ev.end] == quote and claim.trust == "trusted"
    assert page.claims[1].evidence[0].location == "line 4"
    applied = [json.loads(e.detail) for e in storage.audit("main")]
    assert [d["claims"] for d in applied] == [[c.id for c in page.claims[:2]], [page.claims[2].id]]
    assert [r.plans for r in storage.batches("main")] == [("p1",), ("p2",)]
    assert storage.page("main", "nowhere") is None
    with psycopg.connect(storage.pool.conninfo) as conn:  # still there: the SQL was data
        assert conn.execute("SELECT count(*) FROM v_main.claims").fetchone() == (3,)


def test_a_source_stating_a_large_release_is_stored(storage: Any) -> None:
    """A version such as 112.5 (rank ~1.1e14, 9999.9999.9999.9999 ~1e16) fits the column, as on
    SQLite: PostgreSQL's INTEGER refused it and the source was lost."""
    for i, version in enumerate(("112.5", "9999.9999.9999.9999")):
        text = f"---\nversion: {version}\n---\n\nThe tower is {i + 40} metres tall.\n"
        source = storage.add_source(
            "main", text.encode(), origin=f"/in/notes-{i}.md", name=f"notes-{i}.md",
            added_at=NOW, text=text, media_type="text/markdown", trust="trusted",
        )  # fmt: skip
        with storage._tx() as conn:
            row = conn.execute(
                "SELECT stated, stated_rank FROM v_main.sources WHERE id = %s",
                (source,),
            ).fetchone()
        assert row["stated"] == version and row["stated_rank"] > 2**31


def test_a_claim_takes_its_weakest_sources_trust(storage: Any) -> None:
    strong = add(storage)
    weak = add(storage, b"An untrusted blog post says the committee met.", None, "untrusted")
    propose(storage, "p1", {
        "op": "create_page", "slug": "mixed", "title": "Mixed", "summary": "Mixed",
        "claims": [{"text": "The committee met", "evidence": [
            {"source": strong, "quote": "Line one of the source."},
            {"source": weak, "quote": "the committee met"},
        ]}],
    })  # fmt: skip
    apply(storage, "b-1", "p1")
    (claim,) = storage.page("main", "mixed").claims
    assert claim.trust == "untrusted" and [e.source_id for e in claim.evidence] == [strong, weak]


@pytest.mark.parametrize(
    ("evidence", "why"),
    [
        ({"quote": "The committee met on 4 March"}, "not found in source"),  # not its words
        ({"quote": "one of the sour"}, "cuts a word"),  # W3: word boundaries
        ({"sentence": 99}, "sentence 99"),  # no such sentence
        ({"source": "f" * 64, "quote": "Line one of the source."}, "unknown source"),
    ],
)
def test_a_quote_that_does_not_verify_is_refused_and_nothing_is_written(
    storage: Any, evidence: dict[str, Any], why: str
) -> None:
    """The gate judges claim by claim, as on SQLite: a claim whose quote doesn't verify is
    rejected alone (the plan's record keeps it as ``verified: false``) and its good neighbour
    goes in; a plan with nothing else is refused whole, nothing written, no number taken."""
    source = add(storage)
    good = {"text": "Line one of the source.",
            "evidence": [{"source": source, "quote": "Line one of the source."}]}  # fmt: skip
    bad = {"text": "The committee met.", "evidence": [{"source": source, **evidence}]}
    page = {"op": "create_page", "slug": "bad", "title": "T", "summary": "S", "claims": [bad]}
    propose(storage, "p1", page)
    with pytest.raises(ConflictError, match=why):
        apply(storage, "b-1", "p1")
    assert storage.page("main", "bad") is None and storage.batches("main") == []
    assert storage.plan("main", "p1").status == "pending"
    assert storage.committed("main", "b-1") is None
    propose(storage, "p2", {**page, "slug": "good", "claims": [good, bad]})  # p1 holds "bad"
    with storage.door("main", "b-2") as door:
        door.apply_plan("p2", now=NOW, actor=ACTOR)
        (op,) = door.admissions["p2"].ops
    assert [c.text for c in storage.page("main", "good").claims] == ["Line one of the source."]
    assert [(c.status, c.check) for c in op.claims] == [("admitted", ""), ("rejected", "evidence")]
    assert not op.claims[1].evidence[0].verified and why in op.claims[1].reason
    with psycopg.connect(storage.pool.conninfo) as conn:  # the verdicts are recorded
        (stored,) = conn.execute("SELECT admission FROM v_main.plans WHERE id = 'p2'").fetchone()
    assert json.loads(stored)["ops"][0]["claims"][1]["evidence"][0]["verified"] is False


def test_quotes_are_found_as_sqlites_verifier_finds_them(storage: Any) -> None:
    """One verifier (evidence/) on both backends: a quote that differs from the source in case,
    line ending, spacing, NFKC form or markdown emphasis is found, and a host-numbered sentence
    citation resolved; what is stored is the source's own words at the offsets found."""
    source = add(storage)
    quotes = [
        ("line one of THE source.", "Line one of the source."),  # case
        ("said:   '; DROP TABLE v_main.pages;", "said: '; DROP TABLE v_main.pages;"),  # spacing
        ("Robert'); DROP\u00a0TABLE claims;-- *was* a student.",
         "Robert'); DROP TABLE claims;-- was a student."),  # NBSP, emphasis
    ]  # fmt: skip
    claims = [{"text": own, "evidence": [{"source": source, "quote": q}]} for q, own in quotes]
    propose(storage, "p1", {"op": "create_page", "slug": "found", "title": "Line one",
                            "summary": "Line one of the source.", "claims": claims})  # fmt: skip
    line = "Line one of the source."
    propose(
        storage,
        "p2",
        *(
            {"op": "create_page", "slug": slug, "title": "Line one", "summary": line,
             "claims": [{"text": line, "evidence": [{"source": source, **cite}]}]}
            for slug, cite in (("crlf", {"quote": line + "\n"}), ("cited", {"sentence": 1}))
        ),
    )  # fmt: skip
    with storage.door("main", "b-1") as door:
        for plan_id in ("p1", "p2"):
            door.apply_plan(plan_id, now=NOW, actor=ACTOR)
            for op in door.admissions[plan_id].ops:
                assert [c.reason for c in op.claims if not c.passes] == []
    page = storage.page("main", "found")
    assert [c.evidence[0].quote for c in page.claims] == [own for _, own in quotes]
    for slug in ("found", "crlf", "cited"):
        for claim in storage.page("main", slug).claims:
            (ev,) = claim.evidence
            assert TEXT[ev.start : ev.end] == ev.quote
    for slug in ("crlf", "cited"):
        (claim,) = storage.page("main", slug).claims
        assert (claim.evidence[0].quote, claim.evidence[0].start) == (line, 0)


def test_a_plan_the_door_cannot_write_here_is_refused_whole(storage: Any) -> None:
    source = add(storage)
    propose(storage, "p1", page_op("a", source, "Line one of the source."),
            {"op": "carry_source", "source": source, "to": "ab" * 32,
             "claims": ["c-0123456789abcdef"]})  # fmt: skip
    propose(
        storage,
        "p2",
        {
            "op": "add_claims",
            "page": "missing",
            "claims": [
                {
                    "text": "Line one of the source.",
                    "evidence": [{"source": source, "quote": "Line one of the source."}],
                }
            ],
        },
    )
    propose(storage, "p3", page_op("dup", source, "Line one of the source."))
    propose(storage, "p4", page_op("dup", source, "Line one of the source."))
    with pytest.raises(ConflictError, match=r"source (ab)+ does not exist"):
        apply(storage, "b-1", "p1")  # the carry's target: the whole plan is refused
    with pytest.raises(ConflictError, match="page 'missing' neither exists"):
        apply(storage, "b-2", "p2")
    with pytest.raises(ConflictError, match="already exists"):
        apply(storage, "b-3", "p3", "p4")  # the second create of the slug undoes the first
    assert storage.page("main", "a") is None and storage.page("main", "dup") is None
    assert apply(storage, "b-4", "p3") == 1  # nothing was numbered by the refused batches
    propose(storage, "p5", {"nonce": "x"})  # type: ignore[arg-type]
    with pytest.raises(PlanValidationError):
        apply(storage, "b-5", "p5")
    with pytest.raises(ConflictError, match="is applied"):
        apply(storage, "b-6", "p3")  # W5: the re-check under the lock


def test_a_tampered_source_byte_or_quote_is_found(storage: Any) -> None:
    source = add(storage)
    propose(storage, "p1", page_op("page", source, "Line one of the source."))
    propose(
        storage,
        "p2",
        {
            "op": "add_claims",
            "page": "page",
            "claims": [
                {
                    "text": "Robert was a student.",
                    "evidence": [
                        {"source": source, "quote": "Robert'); DROP TABLE claims;-- was a student"}
                    ],
                }
            ],
        },
    )
    apply(storage, "b-1", "p1")
    admin = psycopg.connect(storage.pool.conninfo, autocommit=True)
    try:
        admin.execute("UPDATE v_main.sources SET data = set_byte(data, 7, get_byte(data, 7) # 1)")
        with pytest.raises(IntegrityError, match="bytes no longer hash"):
            storage.source_bytes("main", source)
        with pytest.raises(IntegrityError, match="bytes no longer hash"):
            storage.source_text("main", source)
        with pytest.raises(IntegrityError, match="bytes no longer hash"):
            storage.page("main", "page")
        with pytest.raises(
            ConflictError, match=r"no claim of this operation passed: .*bytes no longer hash"
        ):
            apply(storage, "b-2", "p2")  # the door re-hashes what it quotes from: no claim left
        assert storage.plan("main", "p2").status == "pending"
        admin.execute("UPDATE v_main.sources SET data = %s", (DATA,))  # bytes back, text altered
        admin.execute("UPDATE v_main.sources SET text = replace(text, 'committee', 'commission')")
        with pytest.raises(IntegrityError, match="text no longer matches"):
            storage.source_text("main", source)
        with pytest.raises(
            ConflictError, match=r"no claim of this operation passed: .*text no longer matches"
        ):
            apply(storage, "b-2", "p2")
        admin.execute("UPDATE v_main.sources SET text = %s", (TEXT,))
        assert storage.source_text("main", source) == TEXT
        admin.execute("UPDATE v_main.evidence SET start = start + 1")  # offsets moved
        with pytest.raises(IntegrityError, match="evidence was altered"):
            storage.page("main", "page")
        admin.execute(
            "UPDATE v_main.evidence SET start = start - 1, quote = 'Line one of the SOURCE.'"
        )
        with pytest.raises(IntegrityError, match="evidence was altered"):
            storage.page("main", "page")
    finally:
        admin.close()


def test_a_batch_killed_mid_way_leaves_no_partial_page(storage: Any) -> None:
    """Each batch creates two pages and adds to a third; its backend is killed with
    ``pg_terminate_backend`` after its first, second or third plan. Nothing of a killed batch
    is left, and the surviving batches are numbered without gaps."""
    source = add(storage, CRATES, None)
    propose(storage, "root", page_op("root", source, crate(0), title="Crate 0"))
    apply(storage, "b-root", "root")
    admin = psycopg.connect(storage.pool.conninfo, autocommit=True)
    committed, killed = [], []
    try:
        for n in range(12):
            plans = [
                propose(storage, f"p{n}a", page_op(f"a{n}", source, crate(10 + n), crate(30 + n),
                                                   title=f"Crate {10 + n}")),
                propose(storage, f"p{n}b", page_op(f"b{n}", source, crate(50 + n),
                                                   title=f"Crate {50 + n}")),
                propose(storage, f"p{n}c", {"op": "add_claims", "page": "root",
                                            "claims": [crate_claim(source, 70 + n)]}),
            ]  # fmt: skip
            kill_after = n % 4  # 3: no kill
            try:
                with storage.door("main", f"b-{n}") as door:
                    for k, plan_id in enumerate(plans):
                        door.apply_plan(plan_id, now=NOW, actor=ACTOR)
                        if k == kill_after:
                            admin.execute(
                                "SELECT pg_terminate_backend(%s, 10000)", (door.backend_pid,)
                            )
                committed.append(n)
            except psycopg.OperationalError as exc:
                assert "terminating connection" in str(exc)
                killed.append(n)
    finally:
        admin.close()
    assert committed == [3, 7, 11] and len(killed) == 9
    assert [r.batch_id for r in storage.batches("main")] == ["b-root", "b-3", "b-7", "b-11"]
    assert [r.seq for r in storage.batches("main")] == [1, 2, 3, 4]
    for n in range(12):
        pages = [storage.page("main", f"{x}{n}") for x in "ab"]
        if n in committed:
            assert [len(p.claims) for p in pages] == [2, 1]
        else:
            assert pages == [None, None]
            assert {storage.plan("main", f"p{n}{x}").status for x in "abc"} == {"pending"}
    root = storage.page("main", "root")
    assert [c.text for c in root.claims[1:]] == [crate(73), crate(77), crate(81)]
    assert [c.position for c in root.claims] == [0, 1, 2, 3]
    assert storage.verify_audit("main") == []


def test_appliers_on_separate_connections_add_to_one_page_in_turn(storage: Any) -> None:
    """Four appliers, each with its own pool (as on four hosts), add claims to one page and race
    to create the same new page: the advisory lock puts them in turn — positions contiguous,
    batch numbers gap-free, the page created once and the other creates refused."""
    source = add(storage, CRATES, None)
    propose(storage, "root", page_op("root", source, crate(0), title="Crate 0"))
    apply(storage, "b-root", "root")
    for n in range(4):
        for k in range(5):
            propose(
                storage,
                f"p{n}-{k}",
                {
                    "op": "add_claims",
                    "page": "root",
                    "claims": [crate_claim(source, 100 + 10 * n + k)],
                },
            )
        propose(storage, f"new{n}", page_op("new", source, crate(200 + n), title="Crate"))

    def run(n: int) -> list[str]:
        mine = open_storage(storage.pool.conninfo)
        outcomes = []
        try:
            for k in range(5):
                apply(mine, f"b-{n}-{k}", f"p{n}-{k}")
                outcomes.append("ok")
            try:
                apply(mine, f"b-new{n}", f"new{n}")
                outcomes.append("created")
            except ConflictError as exc:
                outcomes.append(str(exc))
        finally:
            mine.close()
        return outcomes

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(run, range(4)))
    ends = [r[-1] for r in results]
    # new0, proposed first, holds the slug (W5): another create is refused before or after it
    assert ends[0] == "created" and all(
        "already exists" in e or "reserved by pending plan new0" in e for e in ends[1:]
    )
    root = storage.page("main", "root")
    assert [c.position for c in root.claims] == list(range(21))
    assert sorted(c.text for c in root.claims[1:]) == sorted(
        crate(100 + 10 * n + k) for n in range(4) for k in range(5)
    )
    assert [r.seq for r in storage.batches("main")] == list(range(1, 23))
    assert len(storage.page("main", "new").claims) == 1


def test_text_a_renderer_flagged_as_hidden_is_quarantined_and_a_flag_outside_the_text_refused(
    storage: Any,
) -> None:
    """W12 on PostgreSQL: the caller's extraction may flag hidden text (a renderer's finding);
    a claim quoting it is quarantined by the gate, and the policy never applies it."""
    from affidavit.config import Config
    from affidavit.sources.sanitizer import Flag

    text = "The dam is 40 metres high. The dam was sold to a private buyer in 2020."
    hidden = text.index("The dam was sold")
    with pytest.raises(ConflictError, match="outside the text"):
        storage.add_source("main", text.encode(), origin="/in/dam.html", name="dam.html",
                           added_at=NOW, flags=[Flag("hidden", 0, len(text) + 1, "white text")])  # fmt: skip
    source = storage.add_source(
        "main", text.encode(), origin="/in/dam.html", name="dam.html", added_at=NOW,
        trust="trusted", flags=[Flag("hidden", hidden, len(text), "white text on white")],
    )  # fmt: skip
    sold = "The dam was sold to a private buyer in 2020."
    propose(storage, "p1", {"op": "create_page", "slug": "dam", "title": "The dam",
                            "summary": "The dam is 40 metres high.", "claims": [
        {"text": "The dam is 40 metres high.",
         "evidence": [{"source": source, "quote": "The dam is 40 metres high."}]},
        {"text": sold, "evidence": [{"source": source, "quote": sold}]}]})  # fmt: skip
    trusted = Config({"policy.auto_apply": "trusted"})
    refused = pytest.raises(ConflictError, match="waits for a person: quarantined")
    with refused, storage.door("main", "b-1") as door:
        door.apply_plan("p1", now=NOW, actor=ACTOR, config=trusted, approval="policy")
    (op,) = door.admissions["p1"].ops
    assert [c.status for c in op.claims] == ["admitted", "quarantined"]
    assert "evidence inside white text on white" in op.claims[1].reason
    assert storage.page("main", "dam") is None and storage.batches("main") == []
