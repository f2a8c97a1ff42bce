"""A sentence that opens with a pronoun or demonstrative keeps its subject: the claim cites the
sentence before it too, so its text names what it is about and every word is quoted (W3, W11)."""

from __future__ import annotations

from pathlib import Path

from affidavit.extractive import propose_plan
from affidavit.ingest.pipeline import Ingestor
from affidavit.providers.base import IngestTask
from affidavit.providers.extractive import ExtractiveProvider
from affidavit.vault import Vault

SOURCE = "0123456789abcdef" * 4
RANDOM = """# random: Generate pseudo-random numbers

## Notes on the generator

Python uses the Mersenne Twister as the core generator. It produces 53-bit precision floats and has a period of 2**19937-1. The underlying implementation in C is both fast and threadsafe.

## Other functions

This module also provides functions that shuffle a list in place without copying it.
"""


def claims_of(plan: dict[str, object]) -> list[dict[str, object]]:
    ops = plan["operations"]
    assert isinstance(ops, list)
    return [c for op in ops for c in op.get("claims", [])]


def test_a_pronoun_sentence_is_one_claim_with_the_sentence_before() -> None:
    plan = propose_plan(IngestTask("n" * 16, SOURCE, "random.rst", RANDOM, 0, 0, 1))
    claims = claims_of(plan)
    (twister,) = [c for c in claims if "period of 2**19937-1" in str(c["text"])]
    assert str(twister["text"]).startswith("Python uses the Mersenne Twister")
    quotes = [e["quote"] for e in twister["evidence"]]  # type: ignore[union-attr]
    assert quotes == [
        "Python uses the Mersenne Twister as the core generator.",
        "It produces 53-bit precision floats and has a period of 2**19937-1.",
    ]
    assert " ".join(quotes) == twister["text"]
    # not also a claim of its own: the sentence is cited once
    assert not [c for c in claims if c["text"] == quotes[0]]
    # a sentence that opens a section has no sentence before it there: it stays as it is
    assert any(str(c["text"]).startswith("This module also provides") for c in claims)
    # a sentence that names its subject is not joined
    assert any(str(c["text"]).startswith("The underlying implementation") for c in claims)


def test_the_joined_claim_passes_the_gate(vault: Vault, tmp_path: Path) -> None:
    doc = tmp_path / "random.md"
    doc.write_text(RANDOM)
    Ingestor(vault, ExtractiveProvider(), apply_now=True).run([str(doc)], "trusted")
    rows = vault.db.execute(
        "SELECT c.id, c.text FROM claims c WHERE c.status = 'active' AND c.text LIKE '%19937%'"
    ).fetchall()
    assert rows and all(r["text"].startswith("Python uses the Mersenne Twister") for r in rows)
    quotes = vault.db.execute(
        "SELECT COUNT(*) FROM evidence WHERE claim_id = ?", (rows[0]["id"],)
    ).fetchone()[0]
    assert quotes == 2


GREP = """# grep, egrep, fgrep, rgrep - print lines that match patterns

## NAME

grep, egrep, fgrep, rgrep - print lines that match patterns

## DESCRIPTION

grep searches for PATTERNS in each FILE. PATTERNS is one or more patterns separated by newline characters.

print lines is a fragment the title does not make a sentence.
"""


def test_a_command_named_by_the_title_may_start_a_sentence_in_lower_case() -> None:
    texts = [
        str(c["text"])
        for c in claims_of(propose_plan(IngestTask("n" * 16, SOURCE, "grep.1", GREP, 0, 0, 1)))
    ]
    assert "grep searches for PATTERNS in each FILE." in texts
    assert "grep, egrep, fgrep, rgrep - print lines that match patterns" in texts  # NAME
    assert not [t for t in texts if t.startswith("print lines")]  # not the title's first word
    # the same sentence in a document about something else is still a lower-case fragment
    other = GREP.replace("# grep, egrep, fgrep, rgrep", "# Search tools")
    texts = [
        str(c["text"])
        for c in claims_of(propose_plan(IngestTask("n" * 16, SOURCE, "tools.md", other, 0, 0, 1)))
    ]
    assert not [t for t in texts if t.startswith("grep searches")]


FUNCTOOLS = """# functools: Higher-order functions

```
lru_cache(user_function)
lru_cache(maxsize=128, typed=False)
```

Decorator to wrap a function with a memoizing callable that saves up to the maxsize most recent calls.
"""


def test_a_fence_of_overloaded_signatures_names_the_description_that_follows() -> None:
    (claim,) = [
        c
        for c in claims_of(propose_plan(IngestTask("n" * 16, SOURCE, "f.rst", FUNCTOOLS, 0, 0, 1)))
        if "memoizing" in str(c["text"])
    ]
    assert str(claim["text"]).startswith("lru_cache(user_function): Decorator to wrap")
    assert claim["evidence"][0]["quote"] == "lru_cache(user_function)"  # type: ignore[index]
