"""The compact plan schema: the subset of the plan schema a small model is offered under a grammar.

A constrained reply that runs into ``max_tokens`` is cut off mid-JSON and is worth nothing, so the
schema a small model decodes under is sized to its reply budget: :func:`worst_case_chars` bounds
the longest reply a schema admits, and :func:`compact_plan_schema` with ``budget_tokens`` takes the
most generous rung of :data:`LADDER` whose longest reply fits. Every plan the compact schema admits
is a valid plan; the gate still checks the full schema, the nonce and every quote.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .schema import plan_json_schema

CHARS_PER_TOKEN = 2
"""The fewest characters of reply one token is counted to carry when sizing a schema to a budget.

Conservative on purpose: English words are ~4 characters a token, but hex ids, digits and JSON
punctuation tokenise worse, and a grammar lets the model spell anything one character at a time."""

COMPACT_SLUG = r"^[a-z0-9][a-z0-9-]{0,39}$"
"""Slugs offered to a small model: at most 40 characters (the full schema allows 64)."""


@dataclass(frozen=True)
class Limits:
    """The bounds of one compact schema: counts of operations, claims and quotes, and lengths."""

    operations: int = 2
    claims: int = 2
    evidence: int = 1
    text: int = 160
    title: int = 120
    summary: int = 160
    quote: int = 150


LADDER = (
    Limits(),
    Limits(operations=1),
    Limits(operations=1, text=120, title=80, summary=120, quote=120),
    Limits(operations=1, claims=1, text=120, title=80, summary=120, quote=120),
    Limits(operations=1, claims=1, text=80, title=60, summary=80, quote=80),
)
"""From most generous to smallest; :func:`compact_plan_schema` takes the first rung that fits."""


def worst_case_chars(schema: dict[str, Any]) -> float:
    """The most characters a JSON reply valid under ``schema`` (and its grammar) can take.

    Counts each string character once (an escape such as ``\\u00e9`` is six, but rare) and one
    optional space after each separator, as the local provider's grammar allows. Unbounded
    strings or arrays give ``math.inf``.
    """
    defs = schema.get("$defs", {})

    def size(node: dict[str, Any]) -> float:
        if "$ref" in node:
            return size(defs[str(node["$ref"]).rsplit("/", 1)[1]])
        if "const" in node:
            return len(json.dumps(node["const"]))
        if "enum" in node:
            return max(len(json.dumps(value)) for value in node["enum"])
        for key in ("oneOf", "anyOf"):
            if key in node:
                return max(size(option) for option in node[key])
        kind = node.get("type")
        if kind == "string":
            return float(node["maxLength"]) + 2 if "maxLength" in node else math.inf
        if kind == "array":
            if "maxItems" not in node:
                return math.inf
            return 2 + int(node["maxItems"]) * (size(node["items"]) + 2)
        if kind == "object":
            props: dict[str, Any] = node.get("properties", {})
            return 2 + sum(len(json.dumps(k)) + 4 + size(v) for k, v in props.items())
        if kind == "boolean":
            return 5
        return 24  # a number

    return size(schema)


def compact_plan_schema(
    nonce: str | None = None,
    sources: list[str] | None = None,
    pages: list[str] | None = None,
    *,
    sentences: tuple[int, int] | None = None,
    only: Sequence[int] | None = None,
    limits: Limits | None = None,
    budget_tokens: int | None = None,
) -> dict[str, Any]:
    """A stricter subset of the plan schema for small models under constrained decoding.

    Tighter bounds force a small model's grammar to close the JSON within its reply budget, and
    fixing ``nonce`` and ``sources`` to the request's own keeps it from inventing them. Only the
    operations a small model can target are offered: ``create_page``, ``update_context`` (append
    only: replacing the overview withdraws its entries) and ``add_claims`` to one of ``pages``
    (when there are any), without the optional fields that have defaults (plan summary, page
    category and section), which cost reply tokens and carry nothing checkable.

    With ``sentences`` (the first and last sentence numbers shown in the prompt) evidence is a
    sentence citation only, ``{"source", "sentence"}``, its number bounded to that range: a small
    model then writes a number instead of retyping a quote, and can't cite a sentence it wasn't
    shown. ``only``: the numbers it may cite, when not every one in the range (a new version's
    changed sentences, not the unchanged ones between them).

    ``limits`` fixes the bounds; else ``budget_tokens`` picks the first rung of :data:`LADDER`
    whose :func:`worst_case_chars` fits ``budget_tokens * CHARS_PER_TOKEN`` (the smallest rung
    when none does); else the most generous rung.
    """
    if limits is not None:
        return _build(nonce, sources, pages, sentences, limits, only)
    schema: dict[str, Any] = {}
    for rung in LADDER:
        schema = _build(nonce, sources, pages, sentences, rung, only)
        if budget_tokens is None or worst_case_chars(schema) <= budget_tokens * CHARS_PER_TOKEN:
            break
    return schema


def _build(
    nonce: str | None,
    sources: list[str] | None,
    pages: list[str] | None,
    sentences: tuple[int, int] | None,
    limits: Limits,
    only: Sequence[int] | None = None,
) -> dict[str, Any]:
    schema = copy.deepcopy(plan_json_schema())
    defs = schema["$defs"]
    allowed = ["CreatePage", "UpdateContext"] + (["AddClaims"] if pages else [])
    items = schema["properties"]["operations"]["items"]
    items["oneOf"] = [{"$ref": f"#/$defs/{name}"} for name in allowed]
    items["discriminator"]["mapping"] = {
        op: ref
        for op, ref in items["discriminator"]["mapping"].items()
        if ref.rsplit("/", 1)[1] in allowed
    }
    for name in (
        "LinkPages",
        "SupersedeClaim",
        "RetractClaim",
        "RetractSource",
        "CarrySource",
        "UpdatePage",
        *([] if pages else ["AddClaims"]),
    ):
        del defs[name]
    # optional fields with defaults: each costs reply tokens and carries nothing the gate checks
    del schema["properties"]["summary"]
    for name, key in (
        ("CreatePage", "category"),
        ("CreatePage", "section"),
        ("UpdateContext", "mode"),
    ):
        del defs[name]["properties"][key]
    if pages:
        defs["AddClaims"]["properties"]["page"] = {"type": "string", "enum": list(pages)}
        del defs["AddClaims"]["properties"]["section"]
    defs["CreatePage"]["properties"]["slug"].update(pattern=COMPACT_SLUG, maxLength=40)
    if nonce is not None:
        schema["properties"]["nonce"] = {"type": "string", "const": nonce}
    if sources:
        defs["Evidence"]["properties"]["source"] = {"type": "string", "enum": list(sources)}
    defs["Evidence"]["properties"]["quote"]["maxLength"] = limits.quote
    evidence = defs["Evidence"]["properties"]
    if sentences is None:  # free quotes only, as before sentence citations existed
        defs["Evidence"]["properties"] = {"source": evidence["source"], "quote": evidence["quote"]}
        defs["Evidence"]["required"] = ["source", "quote"]
    else:
        # an enum, not minimum/maximum: llama.cpp's schema-to-grammar converter ignores bounds
        numbers = range(sentences[0], sentences[1] + 1) if only is None else sorted(set(only))
        number = {"type": "integer", "enum": list(numbers)}
        defs["Evidence"]["properties"] = {"source": evidence["source"], "sentence": number}
        defs["Evidence"]["required"] = ["source", "sentence"]
    schema["properties"]["operations"]["maxItems"] = limits.operations
    for name in ("CreatePage", "AddClaims"):
        if name in defs:
            defs[name]["properties"]["claims"]["maxItems"] = limits.claims
    defs["UpdateContext"]["properties"]["entries"]["maxItems"] = limits.claims
    # ingest claims are never syntheses: an offered derived_from only invites invented claim ids
    del defs["ClaimDraft"]["properties"]["derived_from"]
    defs["ClaimDraft"]["properties"]["evidence"]["maxItems"] = limits.evidence
    defs["ClaimDraft"]["properties"]["text"]["maxLength"] = limits.text
    page = defs["CreatePage"]["properties"]
    page["title"]["maxLength"] = min(page["title"]["maxLength"], limits.title)
    page["summary"]["maxLength"] = min(page["summary"]["maxLength"], limits.summary)
    return schema


__all__ = ["CHARS_PER_TOKEN", "LADDER", "Limits", "compact_plan_schema", "worst_case_chars"]
