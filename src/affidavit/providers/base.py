"""The provider interface (SPEC §5): text in, text out, nothing else (W10).

A provider turns one :class:`ModelRequest` — messages, plus the JSON Schema the reply must satisfy —
into one :class:`Completion` — text, token usage, finish reason, duration. Providers have no file,
shell or network tools to offer a model; HTTP providers only talk to the base URL they were
configured with. Capabilities are class attributes; options are a pydantic model that forbids
unknown keys.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True)
class Message:
    role: Role
    content: str


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
        )


@dataclass(frozen=True)
class PageBrief:
    """One existing page as a proposer sees it: slug, title and one-line summary."""

    slug: str
    title: str
    summary: str


@dataclass(frozen=True)
class IngestTask:
    """The structured form of an ingest request, for engines that don't read prose prompts.

    The same content is in the request's messages (fenced in the nonce) for language models.
    """

    nonce: str
    source_id: str
    source_name: str
    chunk: str  # the chunk's text, exactly as in the source's extracted text
    chunk_start: int  # offset of the chunk in the source's extracted text
    chunk_index: int
    chunk_count: int
    pages: tuple[PageBrief, ...] = ()  # existing pages most related to the chunk
    pending_slugs: tuple[
        str, ...
    ] = ()  # other slugs that exist or are reserved: extend, never create
    # spans of the chunk (offsets into it) under the source's sanitizer flags: text a reader of
    # the original does not see (hidden, struck) or that was planted; nothing may quote them
    flagged: tuple[tuple[int, int], ...] = ()
    # the chunk begins inside a code fence an earlier chunk opened (its marker, e.g. "```"):
    # its first lines are code up to the closing fence; "" when it begins outside any fence
    open_fence: str = ""
    # the last heading before the chunk, when an earlier chunk holds it: the section the chunk's
    # first sentences are under ("" when none)
    open_section: str = ""
    # a new version's changed stretches read together (a sparse chunk): ``chunk`` is blanked
    # between them (offsets hold) and this is what a reader is shown, the stretches with "[…]"
    # between them; "" when the whole chunk is read
    shown: str = ""
    # a new version's chunk: the page the source's earlier version is on (its claims, carried,
    # cite this version now), which the chunk's sentences extend; "" for a first version
    source_page: str = ""


@dataclass(frozen=True)
class ModelRequest:
    messages: tuple[Message, ...]
    schema: dict[str, Any] | None = None  # the JSON Schema the reply must satisfy
    schema_name: str = "reply"
    task: IngestTask | None = None
    max_tokens: int = 2048
    temperature: float = 0.0


@dataclass(frozen=True)
class Completion:
    text: str
    usage: Usage = field(default_factory=Usage)
    finish_reason: str = "stop"  # "stop" when the model ended the reply itself
    model: str = ""
    duration_s: float = 0.0


class ProviderOptions(BaseModel):
    """Base of every provider's options: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Provider(ABC):
    """A model. Subclasses set the class attributes and implement :meth:`complete`."""

    name: ClassVar[str]
    supports_schema: ClassVar[bool] = False  # can constrain its output to a JSON Schema
    needs_network: ClassVar[bool] = False
    reads_prompt: ClassVar[bool] = True  # False: plans come from the task, not the messages
    context_length: int = 8192  # tokens of prompt + reply the model accepts
    ahead: ClassVar[str] = ""
    """``"affidavit.module:function"`` of the part of answering an ingest task that reads the
    chunk alone (never the wiki's pages, the pending slugs or the nonce): an ingest computes it
    for the next chunks in a worker process (:mod:`affidavit.ingest.ahead`) and hands the result
    to :meth:`complete_with`. "" when there is no such part."""

    @abstractmethod
    def complete(self, request: ModelRequest) -> Completion:
        """Answer one request. Raise :class:`affidavit.errors.ProviderError` on failure."""

    def complete_with(self, prepared: Any, request: ModelRequest) -> Completion:
        """:meth:`complete`, given what :attr:`ahead` returned for ``request.task`` (with the
        task's wiki state and nonce left out). The result must be the same as :meth:`complete`'s."""
        return self.complete(request)

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources (HTTP clients, loaded weights)."""
