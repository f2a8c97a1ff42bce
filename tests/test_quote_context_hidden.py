"""A quote's context shows what the document hides from its reader as hidden (W12): the
stored text keeps a Word run marked hidden, white text or an HTML comment, and a reviewer who
read it beside the quote as the document's own words would be misled ("the dose is now 10 mg"
hidden next to a faithful quote)."""

from __future__ import annotations

import json
import re

from click.testing import CliRunner

from affidavit.cli import main
from affidavit.inbox import propose
from affidavit.service import vaults as service
from affidavit.service.quote_context import CONTEXT_CHARS, pieces, quote_context
from affidavit.sources.sanitizer import Flag
from affidavit.sources.store import SourceRecord, SourceStore
from affidavit.vault import Vault

from .conftest import add_text, claim, make_plan

HIDDEN = "The dose is now 10 mg per kilogram."
SOURCE = (
    "# Dosing\n\n"
    "The dose is 5 mg per kilogram, given once a day.\n"
    f"Children are weighed before each dose. <!-- {HIDDEN} -->\n"
)


def _plan(vault: Vault) -> str:
    source = add_text(vault, "dosing.md", SOURCE)
    plan = make_plan(
        vault,
        {
            "op": "create_page", "slug": "dosing", "title": "Dosing",
            "summary": "The dose is 5 mg per kilogram, given once a day.",
            "claims": [
                claim("The dose is 5 mg per kilogram, given once a day.", source,
                      "The dose is 5 mg per kilogram, given once a day."),
            ],
        },
    )  # fmt: skip
    proposal = propose(vault, json.dumps(plan), "tester", "test")
    assert proposal.admission.counts["admitted"] == 1
    return proposal.plan_id


def test_the_plan_detail_names_the_hidden_span_of_a_quotes_context(vault: Vault) -> None:
    detail = service.plan_detail(vault, _plan(vault))
    (quote,) = detail.quotes
    shown = quote.before + quote.quote + quote.after
    assert HIDDEN in quote.after
    (span,) = quote.hidden
    assert HIDDEN in shown[span.start : span.end]
    assert "Children are weighed" not in shown[span.start : span.end]
    assert "comment" in span.why.lower()
    seen = "".join(text for _, text, why in pieces(quote) if not why)
    assert HIDDEN not in seen and "Children are weighed before each dose." in seen


def test_inbox_show_marks_the_hidden_words_and_says_why(vault: Vault) -> None:
    plan_id = _plan(vault)
    result = CliRunner().invoke(main, ["--vault", str(vault.root), "inbox", "show", plan_id])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if HIDDEN in line and "│" in line]
    assert lines and all(re.search(r"⟦[^⟧]*" + re.escape(HIDDEN), line) for line in lines)
    assert "not shown to a reader of the document" in result.output


def test_a_hidden_span_cut_at_the_contexts_edge_is_marked_from_the_cut(vault: Vault) -> None:
    """A long hidden run beginning before the shown context: the mark starts at the context's
    first character (after the "…"), never outside it, and never covers the quote."""
    words = " ".join(f"word{n}" for n in range(200))
    text = f"{words} The quote sits here. After it."
    start = text.index("The quote")
    end = start + len("The quote sits here.")
    record = SourceStore(vault).get(add_text(vault, "long.md", text))
    record = SourceRecord(
        **{**record.__dict__, "flags": [Flag("hidden", 0, start - 1, "white text")]}
    )
    context = quote_context(record, text, start, end, op=0, claim=0, evidence=0)
    assert context.before.startswith("…") and len(context.before) <= CONTEXT_CHARS + 1
    (span,) = context.hidden
    assert (span.start, span.end) == (1, len(context.before) - 1)
    parts = pieces(context)
    assert [p for p, _, why in parts if why] == ["before"]
    assert parts[0] == ("before", "…", "")
    assert ("quote", "The quote sits here.", "") in parts


def test_the_desks_plan_screen_strikes_the_hidden_words_through(vault: Vault) -> None:
    from tests.web import desk_client, login_owner

    plan_id = _plan(vault)
    root = vault.root
    vault.close()
    with desk_client(root) as (client, desk, _):
        login_owner(client, desk)
        html = client.get(f"/web/vault/plans/{plan_id}").text
    unseen = re.findall(
        r'<span class="unseen" title="[^"]*"><span class="unseen-tag">[^<]*</span>([^<]*)</span>',
        html,
    )
    assert any(HIDDEN in text for text in unseen), html
    assert HIDDEN not in re.sub(r'<span class="unseen".*?</span>[^<]*</span>', "", html)
    assert "Children are weighed before each dose." in html
