"""``affidavit mirror`` (issue 26 item 4): a vault on PostgreSQL rendered batch by batch into a
git folder with a real PostgreSQL and real git — many batches, one commit each with its
trailers; a run killed between writing and committing recovered by the next; forged, reordered
and foreign trailers refused; hand edits kept and reported; the mirror equal to a rebuild."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from affidavit.errors import ConflictError, IntegrityError
from affidavit.hashing import sha256_hex
from affidavit.storage import open_storage

from .pg_appliers import ACTOR, EXPIRES

pytestmark = pytest.mark.xdist_group("postgres")  # one cluster, on one worker

psycopg = pytest.importorskip("psycopg")
pygit2 = pytest.importorskip("pygit2")

from affidavit.cli import main  # noqa: E402
from affidavit.mirror import check, mirror  # noqa: E402

from .pg_cluster import drop_vaults  # noqa: E402

ATTACK = "'; DROP TABLE v_main.pages; -- <script>x</script> [[evil]] «ü» 🚀 %s {s} $$"
TEXT = (
    "\n".join(
        f"Sentence {n} of the source says that the river {n} flows north past town {n}."
        for n in range(400)
    )
    + f"\nIt also says: {ATTACK}\nEvil Affidavit-Batch: 9 b-9 is a title.\n"
)
DATA = TEXT.encode()
SECOND = "".join(
    f"Another source: mill {n} was built in 1821 and burned in 1902.\n" for n in range(400)
).encode()


@pytest.fixture
def storage(pg_url: str) -> Iterator[Any]:
    yield from vault_storage(pg_url)


def vault_storage(pg_url: str) -> Iterator[Any]:
    """A fresh database with the vault ``main`` and its two sources (the fixture's body,
    shared with tests/test_mirror_kinds.py)."""
    drop_vaults(pg_url)
    made = open_storage(pg_url)
    made.create_vault("main", "ann")
    made.add_source(
        "main", DATA, origin="/in/a.md", name=f"River notes {ATTACK}", added_at=_at(0),
        media_type="text/markdown", trust="trusted",
    )  # fmt: skip
    made.add_source(
        "main", SECOND, origin="/in/b.txt", name="Mill", added_at=_at(0),
        media_type="text/plain", trust="semi-trusted",
    )  # fmt: skip
    yield made
    made.close()


def _at(n: int) -> str:
    return f"2026-11-30T{9 + n // 60:02d}:{n % 60:02d}:00Z"


class Wiki:
    """Plans proposed and applied in batches; batch ``n`` applied at minute ``n``."""

    def __init__(self, storage: Any) -> None:
        self.storage = storage
        self.plans = 0
        self.batches = 0
        self.pages: list[str] = []
        self.ids = {"river": sha256_hex(DATA)[:16], "mill": sha256_hex(SECOND)[:16]}

    def _propose(self, op: dict[str, Any]) -> str:
        self.plans += 1
        plan_id = f"{self.plans:064x}"
        plan = {"nonce": f"nonce-{plan_id[-8:]}-0123456789abcdef", "operations": [op]}
        self.storage.propose(
            "main", plan_id, author="ann", origin="cli", plan_json=json.dumps(plan),
            created_at=_at(0), expires_at=EXPIRES,
        )  # fmt: skip
        return plan_id

    def _claim(self, n: int) -> dict[str, Any]:
        """A claim its quote supports (the door runs the gate, W11), never one twice."""
        if n % 7 == 3:
            quote = f"mill {n} was built in 1821 and burned in 1902"
            return {"text": f"Mill {n} was built in 1821 and burned in 1902.", "evidence": [
                {"source": self.ids["mill"], "quote": quote}]}  # fmt: skip
        quote = f"the river {n} flows north past town {n}"
        return {"text": f"The river {n} flows north past town {n}.", "evidence": [
            {"source": self.ids["river"], "quote": quote}]}  # fmt: skip

    def create(self, slug: str, claims: int = 2) -> dict[str, Any]:
        self.pages.append(slug)
        return {
            "op": "create_page", "slug": slug, "title": f"Page {slug} {ATTACK[:30]}",
            "summary": f"About {slug}: {ATTACK}", "category": "topics" if len(slug) % 2 else "places",
            "claims": [
                {"text": f"It also says: {ATTACK}",
                 "evidence": [{"source": self.ids["river"], "quote": f"It also says: {ATTACK}"}]},
                *(self._claim(self.plans * 3 + j) for j in range(claims - 1)),
            ],
        }  # fmt: skip

    def add(self, slug: str, claims: int = 1) -> dict[str, Any]:
        return {
            "op": "add_claims", "page": slug, "section": f"More {self.plans % 3}",
            "claims": [self._claim(self.plans * 5 + j) for j in range(claims)],
        }  # fmt: skip

    def batch(self, *ops: dict[str, Any]) -> int:
        ids = [self._propose(op) for op in ops]
        self.batches += 1
        with self.storage.door("main", f"b-{self.batches}") as door:
            for plan_id in ids:
                door.apply_plan(plan_id, now=_at(self.batches), actor=ACTOR)
            return int(door.seal())

    def grow(self, batches: int) -> None:
        """``batches`` more batches: pages created, claims added to old ones, some batches of
        several plans."""
        for _ in range(batches):
            n = self.batches
            if n % 3 == 0 or not self.pages:
                self.batch(self.create(f"page-{n}"))
            elif n % 3 == 1:
                self.batch(self.add(self.pages[n % len(self.pages)], 2))
            else:
                slug = f"page-{n}"
                self.batch(self.create(slug, 1), self.add(slug), self.add(self.pages[0]))


@pytest.fixture
def wiki(storage: Any) -> Wiki:
    return Wiki(storage)


def _head(folder: Path) -> str:
    return str(pygit2.Repository(str(folder)).head.target)


def _log(folder: Path) -> list[str]:
    repo = pygit2.Repository(str(folder))
    return [c.message for c in repo.walk(repo.head.target, pygit2.enums.SortMode.REVERSE)]


def _files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for top in ("wiki", "sources")
        for p in sorted((folder / top).rglob("*"))
        if p.is_file()
    }


def test_many_batches_one_commit_each_and_equal_to_a_rebuild(
    storage: Any, wiki: Wiki, tmp_path: Path
) -> None:
    wiki.grow(14)
    folder = tmp_path / "mirror"
    report = mirror(storage, "main", folder)
    assert (report.before, report.after, len(report.commits)) == (0, 14, 14)
    messages = _log(folder)
    assert [m.splitlines()[-1] for m in messages] == [
        f"Affidavit-Batch: {n} b-{n}" for n in range(1, 15)
    ]
    assert all("Affidavit-Vault: main" in m for m in messages)
    assert check(storage, "main", folder).ok
    pages = [f"wiki/{slug}.md" for slug in wiki.pages]
    files = _files(folder)
    assert set(pages) < set(files) and {"wiki/index.md", "wiki/log.md", "wiki/context.md"} < set(
        files
    )
    sources = [p for p in files if p.startswith("sources/")]
    assert sorted(files[p] for p in sources) == sorted([DATA, SECOND])  # the bytes, as added
    assert "\\[\\[evil\\]\\]" in files[pages[0]].decode()  # the renderer's escaping, reused
    assert mirror(storage, "main", folder).commits == []  # up to date: nothing to do

    wiki.grow(9)  # the database moves on; the mirror catches up from its last trailer
    report = mirror(storage, "main", folder)
    assert (report.before, report.after, len(report.commits)) == (14, 23, 9)
    rebuilt = tmp_path / "rebuilt"
    assert mirror(storage, "main", rebuilt).after == 23
    assert _head(rebuilt) == _head(folder)  # the same commits, ids and all
    assert _files(rebuilt) == _files(folder)
    assert check(storage, "main", folder).ok and check(storage, "main", rebuilt).ok
    # each commit changes what its batch wrote: the log, the batch's pages, and index.md when
    # its pages changed (it lists pages; claims alone leave it as it was)
    repo = pygit2.Repository(str(folder))
    tip = repo.head.peel(pygit2.Commit)
    changed = {d.delta.new_file.path for d in repo.diff(tip.parents[0], tip)}
    assert "wiki/log.md" in changed and len(changed) <= 6


@pytest.mark.parametrize("where", ["written", "committed"])
def test_a_run_killed_between_write_and_commit_is_recovered_by_the_next(
    storage: Any, wiki: Wiki, tmp_path: Path, pg_url: str, where: str
) -> None:
    wiki.grow(6)
    folder = tmp_path / "mirror"
    script = (
        "import os, sys\nfrom pathlib import Path\n"
        "from affidavit.storage import open_storage\nfrom affidavit.mirror import mirror\n"
        "seen = []\n"
        "def step(name):\n"
        "    seen.append(name)\n"
        f"    if seen.count({where!r}) == 4: os._exit(9)\n"
        "mirror(open_storage(sys.argv[1]), 'main', Path(sys.argv[2]), step=step)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, pg_url, str(folder)], env=os.environ, check=False
    )
    assert done.returncode == 9  # killed at batch 4, as kill -9 would
    assert len(_log(folder)) == (3 if where == "written" else 4)
    assert not check(storage, "main", folder).ok
    report = mirror(storage, "main", folder)
    assert report.after == 6 and report.hand_edits == [] and report.kept == []
    assert [m.splitlines()[-1] for m in _log(folder)] == [
        f"Affidavit-Batch: {n} b-{n}" for n in range(1, 7)
    ]
    rebuilt = tmp_path / "rebuilt"
    mirror(storage, "main", rebuilt)
    assert _head(rebuilt) == _head(folder) and _files(rebuilt) == _files(folder)
    assert check(storage, "main", folder).ok
    assert not list((folder / "wiki").glob(".*affidavit-tmp"))


def _commit_on(folder: Path, text: str) -> None:
    repo = pygit2.Repository(str(folder))
    head = repo.head.peel(pygit2.Commit)
    sig = pygit2.Signature("mallory", "m@example.org")
    repo.create_commit("HEAD", sig, sig, text, head.tree.id, [head.id])


@pytest.mark.parametrize(
    ("trailer", "says"),
    [
        ("Affidavit-Vault: main\nAffidavit-Batch: 5 b-forged", "forged"),  # wrong id
        ("Affidavit-Vault: main\nAffidavit-Batch: 3 b-3", "out of order"),  # replayed
        ("Affidavit-Vault: main\nAffidavit-Batch: 7 b-7", "out of order"),  # one skipped
        ("Affidavit-Vault: other\nAffidavit-Batch: 5 b-5", "mirrors vault 'other'"),
        ("Affidavit-Vault: main\nAffidavit-Batch: five b-5", "malformed"),
    ],
)
def test_a_forged_or_reordered_trailer_is_refused_naming_the_fix(
    storage: Any, wiki: Wiki, tmp_path: Path, trailer: str, says: str
) -> None:
    wiki.grow(4)
    folder = tmp_path / "mirror"
    mirror(storage, "main", folder)
    wiki.grow(3)
    plans = "\n".join(f"Affidavit-Plan: {n:064x}" for n in range(1, 2))
    _commit_on(folder, f"Batch 5\n\n{plans}\n{trailer}\n")
    before = _head(folder)
    with pytest.raises(IntegrityError, match=says) as caught:
        mirror(storage, "main", folder)
    assert "affidavit mirror" in str(caught.value)  # the fix: rebuild into an empty folder
    assert _head(folder) == before  # nothing committed over it
    report = check(storage, "main", folder)
    assert not report.ok and says in report.problems[0]


def test_a_trailer_naming_the_right_batch_with_other_plans_is_refused(
    storage: Any, wiki: Wiki, tmp_path: Path
) -> None:
    wiki.grow(2)
    folder = tmp_path / "mirror"
    mirror(storage, "main", folder)
    wiki.grow(1)
    _commit_on(
        folder, f"x\n\nAffidavit-Vault: main\nAffidavit-Plan: {99:064x}\nAffidavit-Batch: 3 b-3\n"
    )
    with pytest.raises(IntegrityError, match="forged"):
        mirror(storage, "main", folder)


def test_page_titles_cannot_forge_a_trailer_in_the_commit_message(
    storage: Any, wiki: Wiki, tmp_path: Path
) -> None:
    op = wiki.create("evil")
    op["title"] = "Evil Affidavit-Batch: 9 b-9"
    forged = "Evil Affidavit-Batch: 9 b-9 is a title"  # a quote the title rests on (W11)
    op["claims"].append(
        {"text": forged + ".", "evidence": [{"source": wiki.ids["river"], "quote": forged}]}
    )
    wiki.batch(op)
    assert storage.page("main", "evil").title == op["title"]  # the gate let the title through
    folder = tmp_path / "mirror"
    mirror(storage, "main", folder)
    (message,) = _log(folder)
    assert [line for line in message.splitlines() if line.startswith("Affidavit-Batch:")] == [
        "Affidavit-Batch: 1 b-1"
    ]
    wiki.grow(1)
    assert mirror(storage, "main", folder).after == 2


def test_hand_edits_are_kept_and_reported_never_overwritten(
    storage: Any, wiki: Wiki, tmp_path: Path
) -> None:
    wiki.batch(wiki.create("alpha"))
    wiki.batch(wiki.create("beta"))
    folder = tmp_path / "mirror"
    mirror(storage, "main", folder)
    alpha, beta, mine = (folder / "wiki" / n for n in ("alpha.md", "beta.md", "mine.md"))
    edited = alpha.read_bytes() + b"\nMy own note, not in the database.\n"
    alpha.write_bytes(edited)  # a page the next batch changes
    beta.unlink()  # a page the next batch leaves alone
    mine.write_text("my page\n")
    wiki.batch(wiki.add("alpha", 2))
    report = mirror(storage, "main", folder)
    assert report.kept == ["wiki/alpha.md"]
    assert {(h.path, h.kind) for h in report.hand_edits} == {
        ("wiki/alpha.md", "modified"), ("wiki/beta.md", "deleted"), ("wiki/mine.md", "new"),
    }  # fmt: skip
    assert alpha.read_bytes() == edited and mine.read_text() == "my page\n"  # kept, as they were
    rebuilt = tmp_path / "rebuilt"
    mirror(storage, "main", rebuilt)
    assert _head(rebuilt) == _head(folder)  # the commits hold the database's versions
    problems = check(storage, "main", folder).problems
    assert len(problems) == 3 and all("by hand" in p for p in problems)
    # put the database's versions back: the mirror is clean again
    for name in ("alpha.md", "beta.md"):
        (folder / "wiki" / name).write_bytes((rebuilt / "wiki" / name).read_bytes())
    mine.unlink()
    assert check(storage, "main", folder).ok


def test_a_commit_made_by_hand_shows_as_a_difference(
    storage: Any, wiki: Wiki, tmp_path: Path
) -> None:
    wiki.grow(3)
    folder = tmp_path / "mirror"
    mirror(storage, "main", folder)
    page = folder / "wiki" / f"{wiki.pages[0]}.md"
    page.write_text("rewritten\n")
    repo = pygit2.Repository(str(folder))
    repo.index.add(f"wiki/{wiki.pages[0]}.md")
    repo.index.write()
    head = repo.head.peel(pygit2.Commit)
    sig = pygit2.Signature("me", "me@example.org")
    tree = repo.index.write_tree()
    repo.create_commit("HEAD", sig, sig, "my edit\n", tree, [head.id])
    problems = check(storage, "main", folder).problems
    assert problems == [f"wiki/{wiki.pages[0]}.md: the mirror's commit differs from the database"]


def test_a_symlinked_wiki_folder_is_refused_and_nothing_written_outside(
    storage: Any, wiki: Wiki, tmp_path: Path
) -> None:
    wiki.grow(1)
    folder = tmp_path / "mirror"
    mirror(storage, "main", folder)
    outside = tmp_path / "outside"
    outside.mkdir()
    for child in (folder / "wiki").iterdir():
        child.unlink()
    (folder / "wiki").rmdir()
    (folder / "wiki").symlink_to(outside)
    wiki.grow(1)
    with pytest.raises(IntegrityError, match=r"not a path inside|symlink"):
        mirror(storage, "main", folder)
    assert list(outside.iterdir()) == []


def test_a_folder_that_is_not_a_mirror_is_refused(storage: Any, wiki: Wiki, tmp_path: Path) -> None:
    wiki.grow(1)
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "diary.md").write_text("mine\n")
    with pytest.raises(ConflictError, match="empty folder"):
        mirror(storage, "main", folder)
    assert (folder / "diary.md").read_text() == "mine\n" and not (folder / ".git").exists()
    with pytest.raises(IntegrityError, match="no vault 'nope'"):
        mirror(storage, "nope", tmp_path / "x")


def test_the_cli_mirrors_and_checks(storage: Any, wiki: Wiki, tmp_path: Path, pg_url: str) -> None:
    wiki.grow(3)
    folder = tmp_path / "mirror"
    runner = CliRunner()
    base = ["mirror", "--database", pg_url, "--vault", "main", str(folder)]
    done = runner.invoke(main, base)
    assert done.exit_code == 0, done.output
    assert "Mirrored batches 1–3" in done.output
    done = runner.invoke(main, [*base, "--check", "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.output)["ok"] is True
    (folder / "wiki" / "index.md").write_text("# mine\n")
    done = runner.invoke(main, [*base, "--check"])
    assert done.exit_code == 1 and "wiki/index.md: modified by hand" in done.output
    wiki.grow(1)
    done = runner.invoke(main, [*base, "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.output)["kept"] == ["wiki/index.md"]
    done = runner.invoke(
        main, ["mirror", "--database", "sqlite://x", "--vault", "main", str(folder)]
    )
    assert done.exit_code == 1 and "postgresql://" in done.output


def test_a_vault_with_no_batch_yet_mirrors_to_an_empty_repository(
    storage: Any, tmp_path: Path
) -> None:
    folder = tmp_path / "mirror"
    report = mirror(storage, "main", folder)
    assert (report.after, report.commits) == (0, [])
    assert pygit2.Repository(str(folder)).head_is_unborn
    assert check(storage, "main", folder).ok


def test_one_run_per_folder_at_a_time(storage: Any, wiki: Wiki, tmp_path: Path) -> None:
    import fcntl

    wiki.grow(1)
    folder = tmp_path / "mirror"
    mirror(storage, "main", folder)
    wiki.grow(1)
    fd = os.open(folder / ".git" / "affidavit-mirror.lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # another run holds the folder
        with pytest.raises(ConflictError, match="another `affidavit mirror`"):
            mirror(storage, "main", folder)
    finally:
        os.close(fd)
    assert mirror(storage, "main", folder).after == 2


def test_a_source_first_cited_by_a_later_batch_is_written_by_that_batch(
    storage: Any, wiki: Wiki, tmp_path: Path
) -> None:
    wiki.grow(2)
    folder = tmp_path / "mirror"
    mirror(storage, "main", folder)
    third = b"A third source: the bridge opened in 1888.\n"
    source = storage.add_source(
        "main", third, origin="/in/c.txt", name="Bridge", added_at=_at(0),
        media_type="text/plain", trust="trusted",
    )  # fmt: skip
    op = wiki.create("bridge")
    op["claims"] = [{"text": "The bridge opened in 1888.", "evidence": [
        {"source": source, "quote": "the bridge opened in 1888"}]}]  # fmt: skip
    wiki.batch(op)
    wiki.grow(1)
    report = mirror(storage, "main", folder)
    assert len(report.commits) == 2
    assert (folder / "sources" / f"{source}.txt").read_bytes() == third
    repo = pygit2.Repository(str(folder))
    tip = repo.head.peel(pygit2.Commit).parents[0]  # the bridge's batch
    assert f"sources/{source}.txt" in {
        d.delta.new_file.path for d in repo.diff(tip.parents[0], tip)
    }
    assert check(storage, "main", folder).ok


def test_a_batch_id_that_would_add_a_trailer_is_refused(
    storage: Any, wiki: Wiki, tmp_path: Path
) -> None:
    wiki.grow(1)
    plan_id = wiki._propose(wiki.create("sneaky"))
    forged = "b-2\nAffidavit-Batch: 9 b-9"
    with pytest.raises(ConflictError, match="printable"), storage.door("main", forged):
        pass  # the door refuses it; the mirror checks ids all the same (rows written by SQL)
    with storage.door("main", "b-2") as door:
        door.apply_plan(plan_id, now=_at(2), actor=ACTOR)
    with psycopg.connect(storage.pool.conninfo, autocommit=True) as conn:
        conn.execute("UPDATE v_main.batches SET batch_id = %s WHERE seq = 2", (forged,))
    folder = tmp_path / "mirror"
    with pytest.raises(IntegrityError, match=r"not a plain id|does not match its audit entries"):
        mirror(storage, "main", folder)
    repo = pygit2.Repository(str(folder))
    assert repo.head_is_unborn or not any("Affidavit-Batch: 9" in m for m in _log(folder))


def test_the_editors_files_and_your_own_beside_the_wiki_are_not_hand_edits(
    storage: Any, wiki: Wiki, tmp_path: Path
) -> None:
    wiki.grow(2)
    folder = tmp_path / "mirror"
    mirror(storage, "main", folder)
    (folder / ".obsidian").mkdir()
    (folder / ".obsidian" / "app.json").write_text("{}\n")  # Obsidian opened the folder
    (folder / "wiki" / ".trash").mkdir()
    (folder / "wiki" / ".trash" / "old.md").write_text("gone\n")
    (folder / "README.md").write_text("our team wiki\n")
    wiki.grow(1)
    assert mirror(storage, "main", folder).hand_edits == []
    assert check(storage, "main", folder).ok
    (folder / "wiki" / "mine.md").write_text("mine\n")  # but a page of your own in wiki/ is
    assert [h.path for h in mirror(storage, "main", folder).hand_edits] == ["wiki/mine.md"]


def test_a_repository_that_is_not_a_mirror_is_left_alone(
    storage: Any, wiki: Wiki, tmp_path: Path
) -> None:
    wiki.grow(1)
    folder = tmp_path / "notes"
    (folder / "wiki").mkdir(parents=True)
    page = folder / "wiki" / "page-0.md"
    page.write_text("my own page\n")
    repo = pygit2.init_repository(str(folder))
    repo.index.add("wiki/page-0.md")
    repo.index.write()
    sig = pygit2.Signature("me", "me@example.org")
    repo.create_commit("HEAD", sig, sig, "my notes\n", repo.index.write_tree(), [])
    with pytest.raises(ConflictError, match="not a mirror"):
        mirror(storage, "main", folder)
    assert page.read_text() == "my own page\n" and len(_log(folder)) == 1


def _claim_ids(storage: Any, slug: str) -> list[str]:
    page = storage.page("main", slug)
    return [c.id for c in page.claims if c.status == "active"]


def test_links_supersessions_and_retractions_are_followed_batch_by_batch(
    storage: Any, wiki: Wiki, tmp_path: Path
) -> None:
    wiki.grow(4)
    folder = tmp_path / "mirror"
    mirror(storage, "main", folder)  # the mirror stops here, then follows each kind of batch
    first, second = wiki.pages[0], wiki.pages[1]
    wiki.batch({"op": "link_pages", "page": first, "to": second})
    old, gone = _claim_ids(storage, first)[:2]
    by = wiki._claim(40)
    wiki.batch({"op": "supersede_claim", "claim": old, "by": by, "reason": "Says it better."})
    wiki.batch({"op": "retract_claim", "claim": gone, "reason": "The source was misread."})
    wiki.grow(2)  # and ordinary batches after them
    report = mirror(storage, "main", folder)
    assert report.after == wiki.batches and report.hand_edits == []
    assert check(storage, "main", folder).ok, check(storage, "main", folder).problems
    rebuilt = tmp_path / "rebuilt"
    mirror(storage, "main", rebuilt)
    assert _head(rebuilt) == _head(folder) and _files(rebuilt) == _files(folder)
    text = (folder / "wiki" / f"{first}.md").read_text()
    assert "## See also" in text and "## Superseded" in text and "## Retracted" in text
    assert f"`{old}` → superseded by" in text and f"`{gone}`" in text
    assert "## Linked from" in (folder / "wiki" / f"{second}.md").read_text()
    # history: the commit of the link batch shows the link, not yet the supersession
    repo = pygit2.Repository(str(folder))
    commits = list(repo.walk(repo.head.target, pygit2.enums.SortMode.REVERSE))
    at_link = commits[4].tree[f"wiki/{first}.md"].data.decode()
    assert "## See also" in at_link and "## Superseded" not in at_link and old in at_link
