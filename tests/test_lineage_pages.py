"""A new version's changed sentences land on the page its earlier version made (issue 27 item 1).

Found by a walk: a note file ingested, one sentence edited, the folder watched again. The
changed stretch was read without the file's heading ("# Tea notes"), so the extractive engine
titled its source page from the file name ("tea"), found the page "tea" titled "Tea notes",
took that for another subject and created a page "tea-<version>" titled "tea" beside it: after
approval the wiki stated the new fact on a stray page as well as on the page the supersede
proposal put it on."""

from __future__ import annotations

from pathlib import Path

from affidavit.inbox import approve
from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.vault import Vault

TEA = """# Tea notes

Green tea is steeped at 80 degrees Celsius for two minutes.
Black tea is steeped at 95 degrees Celsius for four minutes.
Oolong tea is steeped at 90 degrees Celsius for three minutes.
"""


def test_a_changed_sentence_goes_to_the_earlier_versions_page(vault: Vault, tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    note = folder / "tea.md"
    note.write_text(TEA)
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(folder)], "trusted")
    pages = {str(r[0]): str(r[1]) for r in vault.db.execute("SELECT slug, title FROM pages")}
    note.write_text(TEA.replace("two minutes", "three minutes"))
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(folder)], "trusted")
    for (plan,) in vault.db.execute(  # the new fact comes in with the old one's supersession
        "SELECT id FROM plans WHERE status = 'pending' AND origin LIKE 'lineage:%'"
    ).fetchall():
        approve(vault, plan, None, "person")
    after = {str(r[0]): str(r[1]) for r in vault.db.execute("SELECT slug, title FROM pages")}
    assert after == pages  # main: a new page "tea-…" titled "tea"
    rows = vault.db.execute(
        "SELECT page_slug, status FROM claims WHERE text LIKE '%three minutes%' AND page_slug != ''"
        " AND text LIKE 'Green%'"
    ).fetchall()
    assert rows and {str(r[0]) for r in rows} <= set(pages)
