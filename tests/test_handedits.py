"""``doctor --propose``: hand edits of wiki/ become plans that go through the same gate (SPEC §1, W4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from affidavit.doctor import run_doctor
from affidavit.errors import ConflictError
from affidavit.handedits import AUTHOR, HandEditProposal, parse_markdown, propose_hand_edits
from affidavit.inbox import approve, get_plan, list_plans, propose
from affidavit.store.render import expected_files
from affidavit.vault import Vault, open_vault

from .conftest import add_text, claim, make_plan

TEXT = (
    "Alpha is the first letter of the Greek alphabet. Beta is the second letter.\n"
    "Gamma is the third letter and comes after beta.\n"
    "Delta is the fourth letter and looks like a triangle.\n"
) + "".join(f"Item number {i} of the list is recorded here.\n" for i in range(25))


@pytest.fixture
def src(vault: Vault) -> str:
    """A source and a small applied wiki: pages alpha (linking to beta) and beta."""
    source = add_text(vault, "greek.md", TEXT)
    alpha = {
        "op": "create_page",
        "slug": "alpha",
        "title": "Alpha",
        "summary": "The letter alpha.",
        "claims": [
            claim(
                "Alpha is the *first* letter [of the alphabet].",
                source,
                "Alpha is the first letter of the Greek alphabet",
            ),
            claim("Gamma comes third.", source, "Gamma is the third letter and comes after beta"),
        ],
    }
    beta = {
        "op": "create_page",
        "slug": "beta",
        "title": "Beta",
        "summary": "The letter beta.",
        "claims": [claim("Beta comes second.", source, "Beta is the second letter")],
    }
    link = {"op": "link_pages", "page": "alpha", "to": "beta"}
    approve(vault, propose(vault, make_plan(vault, alpha, beta, link), "t", "t").plan_id, None, "t")
    assert run_doctor(vault).clean
    return source


def page_path(vault: Vault, slug: str) -> Path:
    return vault.wiki_dir / f"{slug}.md"


def insert_after(vault: Vault, slug: str, anchor: str, text: str, notes: str = "") -> bytes:
    """Insert ``text`` after the line starting with ``anchor`` and ``notes`` at the end."""
    path = page_path(vault, slug)
    lines = path.read_text().split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith(anchor))
    lines[at + 1 : at + 1] = ["", *text.split("\n")]
    body = "\n".join(lines).rstrip("\n") + "\n" + notes
    path.write_text(body)
    return path.read_bytes()


def only(results: list[HandEditProposal]) -> HandEditProposal:
    assert len(results) == 1, [r.message for r in results]
    return results[0]


def reasons(result: HandEditProposal) -> list[str]:
    return [u.reason for u in result.unconverted]


def test_a_clean_wiki_proposes_nothing(vault: Vault, src: str) -> None:
    assert propose_hand_edits(vault) == []
    assert list_plans(vault) == []


def test_added_paragraph_with_a_valid_footnote_becomes_a_pending_add_claims(
    vault: Vault, src: str
) -> None:
    edited = insert_after(
        vault,
        "alpha",
        "Gamma comes third.",
        "Delta is shaped like a _triangle_.[^new]  ",
        f'[^new]: "Delta is the fourth letter and looks like a triangle" — source `{src[:12]}`\n',
    )
    result = only(propose_hand_edits(vault))
    assert result.status == "pending" and result.unconverted == []
    assert result.operations == [
        {
            "op": "add_claims",
            "page": "alpha",
            "section": "Overview",
            "claims": [
                claim(
                    "Delta is shaped like a triangle.",
                    src[:12],
                    "Delta is the fourth letter and looks like a triangle",
                )
            ],
        }
    ]
    assert result.proposal is not None and result.proposal.admission.counts["admitted"] == 1
    record = get_plan(vault, result.plan_id or "")
    assert (record.author, record.origin) == (AUTHOR, "doctor:wiki/alpha.md")
    assert page_path(vault, "alpha").read_bytes() == edited  # --propose writes nothing
    assert "differs" in run_doctor(vault).findings[0].message
    json.dumps(result.to_json())  # what `doctor --propose --json` prints
    approve(vault, record.id, None, "tester")
    text = page_path(vault, "alpha").read_text()
    assert "Delta is shaped like a triangle.[^3]" in text
    assert "“Delta is the fourth letter and looks like a triangle”" in text
    assert run_doctor(vault).clean
    assert propose_hand_edits(vault) == []


def test_fabricated_quote_is_recorded_unverified_and_never_reaches_the_wiki(
    vault: Vault, src: str
) -> None:
    insert_after(
        vault,
        "beta",
        "Beta comes second.",
        "Delta is fourth.[^4]\n\nOmega is the first letter.[^5]",
        f"[^4]: “Delta is the fourth letter” — source `{src[:12]}`\n"
        f"[^5]: “Omega is the first letter of all” — source `{src[:12]}`\n",
    )
    result = only(propose_hand_edits(vault))
    assert result.proposal is not None
    statuses = [c.status for c in result.proposal.admission.ops[0].claims]
    assert statuses == ["admitted", "rejected"]
    flat = json.dumps(get_plan(vault, result.plan_id or "").to_json())
    assert flat.count('"verified": false') == 1
    approve(vault, result.plan_id or "", None, "tester")
    text = page_path(vault, "beta").read_text()
    assert "Delta is fourth." in text and "Omega" not in text
    assert (
        vault.db.execute("SELECT count(*) FROM claims WHERE text LIKE 'Omega%'").fetchone()[0] == 0
    )


def test_a_plan_with_only_a_fabricated_quote_is_rejected_and_cannot_be_approved(
    vault: Vault, src: str
) -> None:
    insert_after(
        vault,
        "beta",
        "Beta comes second.",
        "Omega is first.[^9]",
        f"[^9]: “Omega is the first letter of all” source {src}\n",
    )
    result = only(propose_hand_edits(vault))
    assert result.status == "rejected" and "rejected" in result.message
    with pytest.raises(ConflictError):
        approve(vault, result.plan_id or "", None, "tester")
    assert "Omega" not in expected_files(vault.db)["wiki/beta.md"]


def test_paragraph_without_a_footnote_is_reported_with_its_line(vault: Vault, src: str) -> None:
    insert_after(vault, "alpha", "Gamma comes third.", "Epsilon is fifth, I think.")
    result = only(propose_hand_edits(vault))
    assert result.status == "nothing" and result.plan_id is None
    [item] = result.unconverted
    line = page_path(vault, "alpha").read_text().split("\n").index("Epsilon is fifth, I think.") + 1
    assert (item.file, item.line, item.text) == (
        "wiki/alpha.md",
        line,
        "Epsilon is fifth, I think.",
    )
    assert item.reason.startswith("needs a quote")
    assert f"wiki/alpha.md:{line}: needs a quote" in result.message
    assert list_plans(vault) == []


@pytest.mark.parametrize(
    ("note", "problem"),
    [
        ("[^7]: the source says so, `{short}`", "has no quote"),
        ("[^7]: “Delta is the fourth letter”", "names no source id"),
        ("", "has no definition"),
    ],
)
def test_incomplete_footnotes_are_reported(vault: Vault, src: str, note: str, problem: str) -> None:
    insert_after(
        vault,
        "alpha",
        "Gamma comes third.",
        "Delta is fourth.[^7]",
        note.format(short=src[:12]) + "\n",
    )
    result = only(propose_hand_edits(vault))
    assert result.status == "nothing"
    assert any(problem in r for r in reasons(result))


def test_edited_claim_with_its_footnote_becomes_supersede_claim(vault: Vault, src: str) -> None:
    path = page_path(vault, "beta")
    old = vault.db.execute("SELECT id FROM claims WHERE text = 'Beta comes second.'").fetchone()[0]
    path.write_text(
        path.read_text().replace("Beta comes second.", "Beta is the **second** letter.")
    )
    result = only(propose_hand_edits(vault))
    assert result.unconverted == []
    [op] = result.operations
    assert op["op"] == "supersede_claim" and op["claim"] == old
    assert op["by"]["text"] == "Beta is the second letter."
    assert op["by"]["evidence"] == [{"source": src[:12], "quote": "Beta is the second letter"}]
    assert op["reason"].startswith("hand edit of wiki/beta.md, line ")
    approve(vault, result.plan_id or "", None, "tester")
    row = vault.db.execute(
        "SELECT status, superseded_by FROM claims WHERE id = ?", (old,)
    ).fetchone()
    assert row["status"] == "superseded"
    assert "## Superseded" in path.read_text()
    assert run_doctor(vault).clean


def test_deleted_claims_and_links_are_reported_only(vault: Vault, src: str) -> None:
    path = page_path(vault, "alpha")
    text = path.read_text().replace("Gamma comes third.[^2]\n", "")
    path.write_text(text.replace("- [Beta](beta.md)\n", ""))
    result = only(propose_hand_edits(vault))
    assert result.status == "nothing"
    found = reasons(result)
    assert any("was deleted; deletions aren't plan operations yet" in r for r in found)
    assert any("the link to 'beta' under 'see also' was removed" in r for r in found)
    assert list_plans(vault) == []


def test_a_new_page_file_becomes_create_page_with_sections_and_links(
    vault: Vault, src: str
) -> None:
    body = (
        "# Gamma and delta\r\n\r\nGamma and delta are letters.\r\n\r\n"
        "## Letters\r\n\r\nGamma is third.[^1]\r\n\r\n\r\n"
        "## Triangle\r\n\r\nDelta looks like a triangle.[^2]   \r\n\r\n"
        "## See also\r\n\r\n- [[alpha]]\r\n- [Beta](beta.md)\r\n- [[nowhere]]\r\n\r\n"
        f"[^1]: “Gamma is the third letter” — [greek.md](../sources/{src}.md)\r\n"
        f"[^2]: “Delta is the fourth letter and\r\n    looks like a triangle” source `{src[:12]}`\r\n"
    )
    path = page_path(vault, "gamma")
    path.write_bytes(body.encode())
    result = only(propose_hand_edits(vault))
    assert result.status == "pending"
    assert [op["op"] for op in result.operations] == [
        "create_page",
        "add_claims",
        "link_pages",
        "link_pages",
    ]
    create = result.operations[0]
    assert (create["title"], create["summary"], create["section"]) == (
        "Gamma and delta",
        "Gamma and delta are letters.",
        "Letters",
    )
    assert create["claims"] == [claim("Gamma is third.", src, "Gamma is the third letter")]
    assert result.operations[1]["claims"][0]["evidence"][0]["quote"] == (
        "Delta is the fourth letter and looks like a triangle"
    )
    assert [u.line for u in result.unconverted] == [18]
    assert "'nowhere' is not a page" in result.unconverted[0].reason
    assert path.read_bytes() == body.encode()
    approve(vault, result.plan_id or "", None, "tester")
    assert path.read_text() == expected_files(vault.db)["wiki/gamma.md"]
    assert "[Gamma and delta](gamma.md)" in page_path(vault, "beta").read_text()
    assert run_doctor(vault).clean


def test_a_new_page_takes_its_title_and_summary_from_frontmatter(vault: Vault, src: str) -> None:
    page_path(vault, "delta").write_text(
        "---\ntitle: \"Delta\"\nsummary: 'The fourth letter'\ncategory: letters\n---\n\n"
        f"Delta is fourth.[^a]\n\n[^a]: “Delta is the fourth letter” {src[:16]}\n"
    )
    create = only(propose_hand_edits(vault)).operations[0]
    assert (create["title"], create["summary"], create["category"], create["section"]) == (
        "Delta",
        "The fourth letter",
        "letters",
        "Overview",
    )


def test_a_new_page_without_claims_or_with_a_bad_name_gives_no_plan(vault: Vault, src: str) -> None:
    page_path(vault, "draft").write_text("# Draft\n\nJust an idea.\n\nMore thoughts.\n")
    (vault.wiki_dir / "My Notes.md").write_text("# Notes\n")
    (vault.wiki_dir / ".trash").mkdir()
    (vault.wiki_dir / ".trash" / "old.md").write_text("# Old\n")
    page_path(vault, "beta").unlink()
    page_path(vault, "secret").symlink_to(vault.config_path)
    results = {r.file: r for r in propose_hand_edits(vault)}
    assert all(r.status == "nothing" for r in results.values())
    assert any("needs a quote" in r for r in reasons(results["wiki/draft.md"]))
    assert "not a usable page slug" in reasons(results["wiki/My Notes.md"])[0]
    assert "pages live directly in wiki/" in reasons(results["wiki/.trash/old.md"])[0]
    assert "the file is missing" in reasons(results["wiki/beta.md"])[0]
    assert "a symbolic link" in reasons(results["wiki/secret.md"])[0]
    assert list_plans(vault) == []


def test_a_plan_the_gate_refuses_is_recorded_not_raised(vault: Vault, src: str) -> None:
    taken = {
        "op": "create_page",
        "slug": "delta",
        "title": "D",
        "summary": "Delta.",
        "claims": [claim("Delta is fourth.", src, "Delta is the fourth letter")],
    }
    propose(vault, make_plan(vault, taken), "someone", "t")  # reserves the slug
    page_path(vault, "delta").write_text(
        f"# Delta\n\nThe fourth.\n\nDelta is 4th.[^1]\n\n[^1]: “Delta is the fourth letter” {src}\n"
    )
    result = only(propose_hand_edits(vault))
    assert result.status == "failed" and "reserved by pending plan" in result.error
    assert "plan refused" in result.message


def test_proposing_twice_does_not_duplicate_the_plan(vault: Vault, src: str) -> None:
    insert_after(
        vault,
        "beta",
        "Beta comes second.",
        "Delta is fourth.[^4]",
        f"[^4]: “Delta is the fourth letter” — source `{src[:12]}`\n",
    )
    first = only(propose_hand_edits(vault))
    second = only(propose_hand_edits(vault))
    assert second.status == "already-proposed" and second.plan_id == first.plan_id
    assert len(list_plans(vault)) == 1


def test_more_than_twenty_operations_are_split_into_several_plans(vault: Vault, src: str) -> None:
    paras = "\n\n".join(f"## Part {i}\n\nItem {i} is recorded.[^p{i}]" for i in range(25))
    notes = "".join(
        f"[^p{i}]: “Item number {i} of the list is recorded here” source `{src[:12]}`\n"
        for i in range(25)
    )
    insert_after(vault, "beta", "- [Alpha](alpha.md)", paras, notes)
    results = propose_hand_edits(vault)
    assert [len(r.operations) for r in results] == [20, 5]
    assert [r.status for r in results] == ["pending", "pending"]
    assert {op["section"] for r in results for op in r.operations} == {
        f"Part {i}" for i in range(25)
    }


def test_new_links_and_context_entries(vault: Vault, src: str) -> None:
    insert_after(vault, "beta", "- [Alpha](alpha.md)", "## See also\n\n- [[Alpha|the first]]")
    context = vault.wiki_dir / "context.md"
    context.write_text(
        context.read_text() + f"\nAlpha leads.[^1]\n\n[^1]: “Alpha is the first "
        f"letter” — source `{src[:12]}`\n"
    )
    results = {r.file: r for r in propose_hand_edits(vault)}
    assert results["wiki/beta.md"].operations == [
        {"op": "link_pages", "page": "beta", "to": "alpha"}
    ]
    [op] = results["wiki/context.md"].operations
    assert op["op"] == "update_context" and op["entries"][0]["text"] == "Alpha leads."
    for result in results.values():
        approve(vault, result.plan_id or "", None, "tester")
    assert run_doctor(vault).clean


def test_formatting_only_edits_and_generated_files_are_reported(vault: Vault, src: str) -> None:
    path = page_path(vault, "alpha")
    text = path.read_text().replace("*The letter alpha.*", "_The letter alpha._")
    text = text.replace("Gamma comes third.[^2]", "GAMMA comes **third**.[^2] ^gamma")
    path.write_bytes(text.replace("\n", "\r\n").replace("\r\n\r\n", "\r\n\r\n\r\n").encode())
    index = vault.wiki_dir / "index.md"
    index.write_text(index.read_text() + "\nMy own note.\n")
    results = {r.file: r for r in propose_hand_edits(vault)}
    assert set(results) == {"wiki/alpha.md", "wiki/index.md"}
    assert "only in what the wiki doesn't keep" in reasons(results["wiki/alpha.md"])[0]
    assert "generated file" in reasons(results["wiki/index.md"])[0]
    assert list_plans(vault) == []


def test_title_summary_and_section_moves_are_reported(vault: Vault, src: str) -> None:
    path = page_path(vault, "alpha")
    text = path.read_text().replace("# Alpha", "# Alpha, the letter")
    text = text.replace("*The letter alpha.*", "The first letter.")
    text = text.replace("## Overview\n\nAlpha", "## Overview\n\n## Elsewhere\n\nAlpha")
    path.write_text(text)
    found = reasons(only(propose_hand_edits(vault)))
    assert any(r.startswith("title and summary edits aren't plan operations yet") for r in found)
    assert any(r.startswith("summary edits aren't plan operations yet") for r in found)
    assert any("to another section" in r for r in found)
    assert all("git -C VAULT checkout -- wiki/alpha.md" in r for r in found)


def test_parse_markdown_reads_obsidian_style_pages() -> None:
    doc = parse_markdown(
        '\ufeff---\r\ntitle: "A \\"T\\""\r\n---\r\n# Heading  \r\n\r\n'
        "> quoted\r\ntext[^x]\r\n\r\n* item one\r\n  continued\r\n\r\n```\r\nx[^y]\r\n```\r\n"
        "[^x]: first\r\n    second line\r\n[^x]: again\r\n"
    )
    assert doc.meta == {"title": 'A "T"'} and doc.title == "Heading"
    assert [(b.kind, b.line, b.text) for b in doc.blocks] == [
        ("para", 6, "quoted text[^x]"),
        ("item", 9, "item one continued"),
        ("code", 12, "```\nx[^y]\n```"),
    ]
    assert doc.notes["x"].text == "first second line" and doc.twice == [("x", 17)]


def test_untouched_claims_with_markdown_characters_still_match(vault: Vault, src: str) -> None:
    text = page_path(vault, "alpha").read_text()
    assert "Alpha is the \\*first\\* letter \\[of the alphabet\\]." in text
    insert_after(vault, "alpha", "- [Beta]", "", "")
    # Only a trailing blank line changed: the escaped claim still matches, nothing is proposed.
    assert "only in what the wiki doesn't keep" in reasons(only(propose_hand_edits(vault)))[0]


def test_a_new_linked_from_line_links_the_other_page_here(vault: Vault, src: str) -> None:
    insert_after(vault, "alpha", "- [Beta](beta.md)", "## Linked from\n\n- [Beta](beta.md)")
    result = only(propose_hand_edits(vault))
    assert result.operations == [{"op": "link_pages", "page": "beta", "to": "alpha"}]
    approve(vault, result.plan_id or "", None, "tester")
    assert "## See also\n\n- [Alpha](alpha.md)" in page_path(vault, "beta").read_text()
    assert run_doctor(vault).clean


def test_with_auto_apply_a_trusted_hand_edit_is_applied_through_the_door(
    vault: Vault, src: str
) -> None:
    config = vault.config_path.read_text()
    vault.config_path.write_text(config.replace('auto_apply = "never"', 'auto_apply = "trusted"'))
    trusting = open_vault(vault.root, clock=vault.clock)
    try:
        for slug, anchor in (("alpha", "Gamma comes third."), ("beta", "Beta comes second.")):
            insert_after(
                trusting,
                slug,
                anchor,
                "Delta is the fourth letter.[^d]",
                f"[^d]: “Delta is the fourth letter” — source `{src[:12]}`\n",
            )
        results = propose_hand_edits(trusting)
        assert [(r.file, r.status) for r in results] == [
            ("wiki/alpha.md", "applied"),
            ("wiki/beta.md", "applied"),
        ]
        assert "Delta is the fourth letter.[^3]" in page_path(trusting, "alpha").read_text()
        assert run_doctor(trusting).clean
    finally:
        trusting.close()


def test_one_sentence_edit_reports_only_that_claim(vault: Vault) -> None:
    """The page's summary says what its first claim says (as the extractive engine writes
    pages): editing another sentence must not report that line as a moved or repeated claim."""
    source = add_text(vault, "greek.md", TEXT)
    first = "Alpha is the first letter of the Greek alphabet."
    page = {
        "op": "create_page",
        "slug": "greek",
        "title": "Greek letters",
        "summary": first,
        "section": "Letters",
        "claims": [
            claim(first, source, "Alpha is the first letter of the Greek alphabet"),
            claim(
                "Delta looks like a triangle.",
                source,
                "Delta is the fourth letter and looks like a triangle",
            ),
            claim(
                "Gamma comes after beta.", source, "Gamma is the third letter and comes after beta"
            ),
        ],
    }
    approve(vault, propose(vault, make_plan(vault, page), "t", "t").plan_id, None, "t")
    path = page_path(vault, "greek")
    rendered = path.read_text()
    assert rendered.count(first) == 3  # frontmatter, the summary line and the claim
    path.write_text(rendered.replace("Delta looks like a triangle.", "Delta is the fourth letter."))
    delta = vault.db.execute("SELECT id FROM claims WHERE text LIKE 'Delta%'").fetchone()[0]
    result = only(propose_hand_edits(vault))
    assert reasons(result) == []
    assert [(op["op"], op["claim"], op["by"]["text"]) for op in result.operations] == [
        ("supersede_claim", delta, "Delta is the fourth letter.")
    ]


def test_a_moved_claim_is_still_reported(vault: Vault) -> None:
    source = add_text(vault, "greek.md", TEXT)
    page = {
        "op": "create_page",
        "slug": "greek",
        "title": "Greek letters",
        "summary": "Some Greek letters.",
        "section": "Letters",
        "claims": [
            claim(
                "Delta looks like a triangle.",
                source,
                "Delta is the fourth letter and looks like a triangle",
            )
        ],
    }
    approve(vault, propose(vault, make_plan(vault, page), "t", "t").plan_id, None, "t")
    path = page_path(vault, "greek")
    path.write_text(path.read_text().replace("## Letters", "## Shapes"))
    assert any("moving claim" in r for r in reasons(only(propose_hand_edits(vault))))
