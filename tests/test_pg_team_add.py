"""``affidavit team add`` reads what ``affidavit add`` reads (issue 26 with issue 27's formats): an
HTML page or a Word document added to a vault of a PostgreSQL database is stored with its
extracted text, its text map and its hidden text flagged (W12), so an ingest job's claims are the
reader's words, never the markup nor what a style hides. Before, `team add` stored an HTML file's
markup as plain text and refused every other format. The attacker's tests: a hidden paragraph
and a hidden Word run never become claims; binary bytes named as markdown are refused."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.xdist_group("postgres")
pytest.importorskip("psycopg")

from affidavit.storage.postgres import PostgresStorage  # noqa: E402

from .office_docs import HIDDEN, VISIBLE, hidden_docx  # noqa: E402
from .pg_cluster import drop_vaults  # noqa: E402
from .test_pg_serve_cli import cli  # noqa: E402

PAGE = """<!DOCTYPE html><html><head><title>The bridge</title>
<style>.aside { display: none }</style></head><body>
<h1>The bridge</h1>
<p>The bridge over the river Tamar opened in 1932 after four years of work.</p>
<p class="aside">The bridge was quietly sold to Mallory Holdings in 2020 for one pound.</p>
<p>Its central span is 152 metres long and carries two lanes of traffic.</p>
</body></html>
"""


class Team:
    def __init__(self, url: str, tmp: Path) -> None:
        drop_vaults(url)
        self.url, self.tmp = url, tmp
        self.storage = PostgresStorage(url)
        self.storage.create_vault("team", "ann")
        self.config = tmp / "affidavit.toml"
        self.config.write_text('[policy]\nauto_apply = "trusted"\n', encoding="utf-8")

    def add(self, path: Path, code: int = 0) -> Any:
        done = cli("team", "add", "team", str(path), "--trust", "trusted", "--ingest", "--json",
                   env={"AFFIDAVIT_DATABASE": self.url})  # fmt: skip
        assert done.returncode == code, done.stderr
        return json.loads(done.stdout) if code == 0 else done.stderr

    def drain(self) -> None:
        done = cli("worker", "--database", self.url, "--vault", "team", "--drain",
                   "--config", str(self.config))  # fmt: skip
        assert done.returncode == 0, done.stderr

    def q(self, query: str, *params: Any) -> list[dict[str, Any]]:
        with self.storage.pool.connection() as conn:
            return list(conn.execute(query.replace("{s}", "v_team"), params or None).fetchall())

    def claims(self) -> list[str]:
        return [
            str(r["text"]) for r in self.q("SELECT text FROM {s}.claims WHERE status = 'active'")
        ]


@pytest.fixture
def team(pg_url: str, tmp_path: Path) -> Iterator[Team]:
    made = Team(pg_url, tmp_path)
    yield made
    made.storage.close()


def test_an_html_page_is_read_as_a_reader_sees_it(team: Team) -> None:
    page = team.tmp / "bridge.html"
    page.write_text(PAGE, encoding="utf-8")
    added = team.add(page)
    (row,) = team.q("SELECT media_type, text FROM {s}.sources WHERE id = %s", added["source"])
    assert row["media_type"] == "text/html"
    assert "<p" not in row["text"] and "display" not in row["text"]
    assert "opened in 1932" in row["text"]
    hidden = row["text"].index("Mallory")
    flags = team.q('SELECT kind, start, "end" FROM {s}.source_flags WHERE source_id = %s',
                   added["source"])  # fmt: skip
    assert any(f["start"] <= hidden < f["end"] for f in flags), flags
    team.drain()
    claims = team.claims()
    assert any("1932" in c for c in claims) and any("152 metres" in c for c in claims)
    assert not any("Mallory" in c for c in claims), claims
    assert not any("<" in c for c in claims)


def test_a_word_document_keeps_its_hidden_runs_out(team: Team) -> None:
    doc = team.tmp / "report.docx"
    doc.write_bytes(hidden_docx())
    added = team.add(doc)
    (row,) = team.q("SELECT media_type, text FROM {s}.sources WHERE id = %s", added["source"])
    assert row["media_type"].endswith("wordprocessingml.document")
    team.drain()
    claims = " ".join(team.claims())
    assert VISIBLE.rstrip(".") in claims
    for technique, sentence in HIDDEN["docx"].items():
        assert sentence.rstrip(".") not in claims, technique


def test_binary_bytes_named_as_markdown_are_refused(team: Team) -> None:
    fake = team.tmp / "notes.md"
    fake.write_bytes(bytes(range(256)) * 8)
    why = team.add(fake, code=1)
    assert "refusing binary content" in why and "notes.md" in why
    assert team.q("SELECT id FROM {s}.sources") == []
