"""The plan schema: a pydantic discriminated union over a closed set of operations (SPEC W1, W2).

Anything outside it — an unknown verb, an extra field, a path, a bad slug, more than 20 operations,
a quote shorter than 8 or longer than 300 characters — fails the whole plan. No field can name a
file, a directory, the configuration or the database: operations address pages by slug, claims by
id and sources by content hash only.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema

from ..errors import PlanValidationError

SLUG_PATTERN = r"^[a-z0-9][a-z0-9-]{0,63}$"
RESERVED_SLUGS = frozenset({"index", "log", "context", "context-archive"})
"""Slugs of generated files (wiki/index.md, log.md, context.md) and of the context spill page."""
SOURCE_ID_PATTERN = r"^[0-9a-f]{12,64}$"
CLAIM_ID_PATTERN = r"^c-[0-9a-f]{16}$"
NONCE_PATTERN = r"^[A-Za-z0-9_-]{16,64}$"
LINE_PATTERN = r"^[^\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]*$"
"""A one-line field (titles, summaries, headings, claim texts, reasons): no control character
(Cc: U+0000–001F, U+007F–009F, so no NEL U+0085), no line or paragraph separator (Zl, Zp:
U+2028, U+2029) and no bidirectional override or isolate (U+202A–202E, U+2066–2069)."""
MAX_OPERATIONS = 20
MAX_PLAN_BYTES = 512_000

Slug = Annotated[str, Field(pattern=SLUG_PATTERN, min_length=1, max_length=64)]
Line = Annotated[str, Field(pattern=LINE_PATTERN)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


MAX_SENTENCE = 1_000_000
"""Largest sentence number the schema accepts (the gate checks it against the source's count)."""
MAX_CITED_SENTENCES = 3
"""Longest sentence range: a claim is a sentence or two (SPEC §2), and three sentences keep a
citation to one passage whose words the support check can weigh (what a citation resolves to is
held to the 300-character quote limit besides)."""

SentenceNumber = Annotated[int, Field(ge=1, le=MAX_SENTENCE)]
Quote = Annotated[str, Field(min_length=8, max_length=300)]
SentenceRange = Annotated[list[SentenceNumber], Field(min_length=2, max_length=2)]


def _no_default(schema: dict[str, Any]) -> None:
    """Leave ``default: null`` out of the JSON Schema: a null is refused, the field is omitted."""
    schema.pop("default", None)


class Evidence(_Strict):
    """Where a claim's words are in one stored source, named by its content hash (or a prefix).

    Either a verbatim ``quote``; or a host-numbered ``sentence`` (or a range ``sentences``:
    [first, last], at most 3 sentences), optionally with a ``quote`` that lies inside it. For a
    sentence citation the host fills in the sentence's own text and offsets.
    """

    source: str = Field(pattern=SOURCE_ID_PATTERN, description="SHA-256 of the source (>=12 hex)")
    quote: Quote | SkipJsonSchema[None] = Field(
        default=None,
        json_schema_extra=_no_default,
        description="Verbatim text from the source; with a sentence number, a part of it",
    )
    sentence: SentenceNumber | SkipJsonSchema[None] = Field(
        default=None,
        json_schema_extra=_no_default,
        description="Number of the cited sentence, as shown in the prompt ([s17])",
    )
    sentences: SentenceRange | SkipJsonSchema[None] = Field(
        default=None,
        json_schema_extra=_no_default,
        description=f"[first, last]: a range of at most {MAX_CITED_SENTENCES} sentences",
    )

    @model_validator(mode="before")
    @classmethod
    def _no_nulls(cls, data: Any) -> Any:
        if isinstance(data, dict):
            nulls = sorted(str(k) for k, v in data.items() if v is None)
            if nulls:
                raise ValueError(f"omit {', '.join(nulls)} instead of giving null")
        return data

    @model_validator(mode="after")
    def _one_form(self) -> Evidence:
        if self.sentence is not None and self.sentences is not None:
            raise ValueError("give 'sentence' or 'sentences', not both")
        if self.sentence is None and self.sentences is None and self.quote is None:
            raise ValueError("give a 'quote', a 'sentence' number or a 'sentences' range")
        if self.sentences is not None:
            first, last = self.sentences
            if last < first:
                raise ValueError(f"sentences [{first}, {last}] is reversed: write [first, last]")
            if last - first + 1 > MAX_CITED_SENTENCES:
                raise ValueError(
                    f"sentences [{first}, {last}] covers {last - first + 1} sentences; at most "
                    f"{MAX_CITED_SENTENCES}: split the claim"
                )
        return self

    @model_serializer(mode="wrap")
    def _compact(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        return {k: v for k, v in data.items() if v is not None}  # old plans keep their ids

    @property
    def cited(self) -> tuple[int, int] | None:
        """``(first, last)`` sentence numbers cited, or None for a free quote."""
        if self.sentence is not None:
            return self.sentence, self.sentence
        if self.sentences is not None:
            return self.sentences[0], self.sentences[1]
        return None

    def id_parts(self) -> list[Any]:
        """What a claim id is derived from: ``[source, quote]`` for a free quote, as always."""
        cited = self.cited
        if cited is None:
            return [self.source, self.quote]
        return [self.source, self.quote or "", *cited]


class ClaimDraft(_Strict):
    """One statement (a sentence or two) backed by 1 to 5 quotes.

    A synthesis (e.g. a saved answer) also names the claims it rests on in ``derived_from``;
    its quotes are still checked like any other.
    """

    text: Line = Field(min_length=3, max_length=600)
    evidence: list[Evidence] = Field(min_length=1, max_length=5)
    derived_from: list[Annotated[str, Field(pattern=CLAIM_ID_PATTERN)]] = Field(
        default_factory=list, max_length=10
    )

    @model_serializer(mode="wrap")
    def _compact(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if not data.get("derived_from"):
            data.pop("derived_from", None)  # plain claims stay as they always were
        return data


def _check_slug(slug: str) -> None:
    if slug in RESERVED_SLUGS:
        raise ValueError(f"slug {slug!r} is reserved for a generated file")


class CreatePage(_Strict):
    """Create a new page, optionally with its first claims in one section."""

    op: Literal["create_page"]
    slug: Slug
    title: Line = Field(min_length=1, max_length=120)
    summary: Line = Field(min_length=1, max_length=300)
    category: Slug = "general"
    section: Line = Field(default="Overview", min_length=1, max_length=80)
    claims: list[ClaimDraft] = Field(default_factory=list, max_length=30)

    @model_validator(mode="after")
    def _reserved(self) -> CreatePage:
        _check_slug(self.slug)
        return self


class AddClaims(_Strict):
    """Add claims to a section of an existing page (or one created earlier in the same plan)."""

    op: Literal["add_claims"]
    page: Slug
    section: Line = Field(default="Notes", min_length=1, max_length=80)
    claims: list[ClaimDraft] = Field(min_length=1, max_length=30)


class LinkPages(_Strict):
    """Link page ``page`` to page ``to`` (both must exist or be created in the same plan)."""

    op: Literal["link_pages"]
    page: Slug
    to: Slug

    @model_validator(mode="after")
    def _distinct(self) -> LinkPages:
        if self.page == self.to:
            raise ValueError("a page can't link to itself")
        return self


class UpdateContext(_Strict):
    """Append entries to, or replace, the overview in wiki/context.md. Entries are claims too."""

    op: Literal["update_context"]
    mode: Literal["append", "replace"] = "append"
    entries: list[ClaimDraft] = Field(min_length=1, max_length=30)


ClaimId = Annotated[str, Field(pattern=CLAIM_ID_PATTERN)]


class SupersedeClaim(_Strict):
    """Replace an active claim, keeping the old one in history as superseded.

    The replacement is either a new claim (``by``, checked like any other) or an existing active
    claim (``successor``), e.g. the newer source's claim that a lint finding paired with it, or the
    claim a duplicate is merged into. Exactly one of the two is given.
    """

    op: Literal["supersede_claim"]
    claim: ClaimId
    by: ClaimDraft | None = None
    successor: ClaimId | None = None
    reason: Line = Field(min_length=3, max_length=300)

    @model_validator(mode="after")
    def _one_replacement(self) -> SupersedeClaim:
        if (self.by is None) == (self.successor is None):
            raise ValueError("give exactly one of 'by' (a new claim) or 'successor' (a claim id)")
        if self.successor == self.claim:
            raise ValueError("a claim can't succeed itself")
        return self

    @model_serializer(mode="wrap")
    def _compact(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for key in ("by", "successor"):
            if data.get(key) is None:
                data.pop(key, None)  # plans written before 'successor' existed keep their ids
        return data


class RetractClaim(_Strict):
    """Withdraw a claim from the wiki (it stays in history as retracted). Always waits for a person."""

    op: Literal["retract_claim"]
    claim: ClaimId
    reason: Line = Field(min_length=3, max_length=300)


class RetractSource(_Strict):
    """Withdraw a source: claims whose only evidence it is are retracted, with the syntheses that
    rest on them; claims with other evidence keep it. Always waits for a person."""

    op: Literal["retract_source"]
    source: str = Field(pattern=SOURCE_ID_PATTERN, description="SHA-256 of the source (>=12 hex)")
    reason: Line = Field(min_length=3, max_length=300)


MAX_CARRIED = 20_000
"""Most claims one ``carry_source`` operation names (a plan stays under its byte limit)."""


class CarrySource(_Strict):
    """Carry claims from an older version of a source to a newer version of the same origin
    (issue 27): each named claim whose quotes from ``source`` are found again, verbatim, in ``to``
    has that evidence re-pointed at ``to``'s offsets; its words don't change and its history
    stays in the audit log. The host proposes it when it stores a new version; the policy
    applies it without a person (nothing is added to or taken out of the wiki), except an
    agent's (W13)."""

    op: Literal["carry_source"]
    source: str = Field(pattern=SOURCE_ID_PATTERN, description="the older version (>=12 hex)")
    to: str = Field(pattern=SOURCE_ID_PATTERN, description="the newer version (>=12 hex)")
    claims: list[ClaimId] = Field(min_length=1, max_length=MAX_CARRIED)

    @model_validator(mode="after")
    def _distinct(self) -> CarrySource:
        if self.source == self.to:
            raise ValueError("a source can't be carried to itself")
        if len(set(self.claims)) != len(self.claims):
            raise ValueError("a claim is named twice")
        return self


class UpdatePage(_Strict):
    """Give an existing page a new title and/or summary (issue 27): each is judged, as
    ``create_page``'s are, against the page's active claims (and those the plan adds to it; the
    ones it ends don't count). Proposed by lint when a page's words no longer follow its claims,
    and by the lineage when a change retires a claim the summary said; always waits for a
    person."""

    op: Literal["update_page"]
    page: Slug
    title: Line | None = Field(default=None, min_length=1, max_length=120)
    summary: Line | None = Field(default=None, min_length=1, max_length=300)
    reason: Line = Field(min_length=3, max_length=300)

    @model_validator(mode="after")
    def _something(self) -> UpdatePage:
        if self.title is None and self.summary is None:
            raise ValueError("give a new 'title', a new 'summary', or both")
        return self

    @model_serializer(mode="wrap")
    def _compact(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for key in ("title", "summary"):
            if data.get(key) is None:
                data.pop(key, None)
        return data


Operation = Annotated[
    CreatePage
    | AddClaims
    | LinkPages
    | UpdateContext
    | SupersedeClaim
    | RetractClaim
    | RetractSource
    | CarrySource
    | UpdatePage,
    Field(discriminator="op"),
]
OPERATION_KINDS = (
    "create_page",
    "add_claims",
    "link_pages",
    "update_context",
    "supersede_claim",
    "retract_claim",
    "retract_source",
    "carry_source",
    "update_page",
)


class Plan(_Strict):
    """What a model, a person or the doctor proposes: at most 20 operations and the nonce."""

    nonce: str = Field(pattern=NONCE_PATTERN, description="The nonce the proposer was given")
    summary: Line = Field(default="", max_length=300)
    operations: list[Operation] = Field(min_length=1, max_length=MAX_OPERATIONS)

    @model_validator(mode="after")
    def _unique_pages(self) -> Plan:
        created = [op.slug for op in self.operations if isinstance(op, CreatePage)]
        duplicates = sorted({s for s in created if created.count(s) > 1})
        if duplicates:
            raise ValueError(f"page(s) created twice in one plan: {', '.join(duplicates)}")
        return self

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


def _describe(error: ValidationError) -> list[str]:
    out = []
    for item in error.errors(include_url=False):
        where = ".".join(str(part) for part in item["loc"]) or "plan"
        out.append(f"{where}: {item['msg']}")
    return out


def load_plan_json(raw: str | bytes) -> Any:
    """Decode plan text: at most MAX_PLAN_BYTES of UTF-8 JSON. Any failure (too large, not UTF-8,
    not JSON, nested too deeply to read) is a one-line :class:`PlanValidationError`."""
    size = len(raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw)
    if size > MAX_PLAN_BYTES:
        raise PlanValidationError(
            f"plan is {size} bytes; the limit is {MAX_PLAN_BYTES}. Split it into smaller plans."
        )
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            why = f"byte 0x{raw[exc.start]:02x} at offset {exc.start}"
            raise PlanValidationError(
                f"plan is not UTF-8 text ({why}). Save it as UTF-8 and retry.", [why]
            ) from exc
    try:
        return json.loads(raw)
    except RecursionError as exc:
        why = "arrays or objects nested too deeply"
        raise PlanValidationError(f"plan is not valid JSON: {why}.", [why]) from exc
    except ValueError as exc:
        raise PlanValidationError(f"plan is not valid JSON: {exc}", [str(exc)]) from exc


_PARSED: OrderedDict[str, Plan] = OrderedDict()
"""Plans by their canonical JSON, as :func:`remember_parsed` notes them (the latest few)."""


def remember_parsed(text: str, plan: Plan) -> None:
    """Note that ``text`` is ``plan``'s canonical JSON (``canonical_json(plan.to_json())``, as
    the inbox stores it): :func:`parse_plan` of that very text then returns ``plan`` instead of
    validating it again — what validating would give (a plan's JSON validates back to an equal
    plan), shared (a plan is never changed once made). A text too long to parse is not noted."""
    if len(text) > MAX_PLAN_BYTES // 4 and len(text.encode("utf-8", "surrogatepass")) > (
        MAX_PLAN_BYTES
    ):
        return
    _PARSED[text] = plan
    _PARSED.move_to_end(text)
    while len(_PARSED) > 64:
        _PARSED.popitem(last=False)


def parse_plan(raw: str | bytes | dict[str, Any]) -> Plan:
    """Parse a plan from JSON text or a decoded object; any deviation fails the whole plan."""
    if isinstance(raw, str):
        known = _PARSED.get(raw)
        if known is not None:
            return known
    if isinstance(raw, (str, bytes)):
        raw = load_plan_json(raw)
    if not isinstance(raw, dict):
        raise PlanValidationError(
            f"a plan must be a JSON object with 'nonce' and 'operations', not {type(raw).__name__}."
        )
    try:
        return Plan.model_validate(raw)
    except RecursionError as exc:
        why = "values nested too deeply"
        raise PlanValidationError(f"plan rejected by the schema: {why}", [why]) from exc
    except ValidationError as exc:
        errors = _describe(exc)
        shown = "; ".join(errors[:5]) + (f"; and {len(errors) - 5} more" if len(errors) > 5 else "")
        raise PlanValidationError(f"plan rejected by the schema: {shown}", errors) from exc


def plan_json_schema() -> dict[str, Any]:
    """The JSON Schema of a plan, for documentation and constrained decoding by providers."""
    schema = Plan.model_json_schema()
    schema["$id"] = "https://affidavit.invalid/schema/plan.json"
    schema["title"] = "Affidavit plan"
    return schema
