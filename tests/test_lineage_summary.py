"""A page summary that is a superseded claim's words follows it (issue 27 item 1).

Found by a walk after carry30: a note's first sentence is its page's summary (the extractive
engine summarises a page with its first claim); "two minutes" edited to "three minutes", the
file ingested again, the supersession approved — and the page's claims said three minutes while
its summary (front matter, first line, ``index.md``) still said two."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from affidavit.cli import main
from affidavit.store.apply import gate_services
from affidavit.store.replay import claim_problems
from affidavit.store.summary_follows import follows
from affidavit.vault import Vault

TEA = """# Tea notes

Green tea should steep for two minutes at 80 degrees Celsius.

Black tea needs water at a full boil and steeps for four minutes.
"""


def _cli(vault: Vault, *args: str) -> str:
    result = CliRunner().invoke(main, ["--vault", str(vault.root), *args])
    assert result.exit_code == 0, result.output
    return result.output


def _problems(vault: Vault) -> list[str]:
    store, verifier = gate_services(vault)
    _, problems = claim_problems(vault.db, verifier, store)
    return [p.message for p in problems]


def _edited(vault: Vault, tmp_path: Path) -> str:
    """Ingest the note, approve, edit its first sentence, ingest again, approve the lineage's
    proposal; the page's file."""
    folder = tmp_path / "notes"
    folder.mkdir()
    note = folder / "tea.md"
    note.write_text(TEA)
    _cli(vault, "ingest", str(folder), "--trust", "trusted", "--yes")
    summary = vault.db.execute("SELECT summary FROM pages WHERE slug = 'tea'").fetchone()[0]
    assert "two minutes" in summary  # the engine summarises with the first claim
    note.write_text(TEA.replace("two minutes", "three minutes"))
    _cli(vault, "ingest", str(folder), "--trust", "trusted", "--yes")
    (plan,) = [str(r[0]) for r in vault.db.execute("SELECT id FROM plans WHERE status = 'pending'")]
    _cli(vault, "approve", plan, "--yes")
    return (vault.root / "wiki" / "tea.md").read_text()


def test_the_summary_that_was_the_old_claim_s_words_follows_its_successor(
    vault: Vault, tmp_path: Path
) -> None:
    page = _edited(vault, tmp_path)
    assert "two minutes" not in page.split("## ")[0]  # main: front matter and first line
    assert 'summary: "Green tea should steep for three minutes' in page
    index = (vault.root / "wiki" / "index.md").read_text()
    assert "three minutes" in index and "two minutes" not in index
    entry = vault.db.execute(
        "SELECT detail FROM audit WHERE action = 'applied' ORDER BY seq DESC LIMIT 1"
    ).fetchone()[0]
    assert '"summary_follows"' in entry
    assert _problems(vault) == []  # the doctor's replay follows the same rule


def test_a_summary_changed_by_hand_after_it_followed_is_still_caught(
    vault: Vault, tmp_path: Path
) -> None:
    """The attacker's side: the door's new rule is no licence for other summaries."""
    _edited(vault, tmp_path)
    vault.db.execute("UPDATE pages SET summary = 'Green tea is best boiled.' WHERE slug = 'tea'")
    vault.db.commit()
    assert any("summary" in p for p in _problems(vault))


def test_only_the_claim_s_own_words_move_and_only_to_a_summary_s_length() -> None:
    old = "Green tea should steep for two minutes."
    new = "Green tea should steep for three minutes."
    assert follows(old, old, new)
    assert follows("Green tea should  steep for two minutes.", old, new)  # whitespace aside
    assert not follows("Notes on brewing green tea.", old, new)  # a summary in other words
    assert not follows(old, old, "x" * 301)  # longer than a summary may be
    assert not follows(old, old, "Green tea steeps.\nFor three minutes.")
    assert not follows(old, old, old)
