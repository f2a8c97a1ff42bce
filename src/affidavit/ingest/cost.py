"""What an ingest sends a model, counted: the tokens of a request, a budget that stops an ingest
before a chunk would overrun it, and the price of tokens where ``[providers]`` prices are set.

Tokens are counted with cl100k (:mod:`affidavit.retrieval.tokens`) over everything a request
carries to the model: every message, and the JSON Schema when the provider constrains its reply
by one (an OpenAI-compatible server receives it as ``response_format``). A provider that reports
its own usage is believed; one that reports none (the scripted provider, some local servers) is
counted here. A completion can't be known before it is written: the estimate is
:data:`COMPLETION_RATIO` of the chunk's tokens, capped at ``model.max_output_tokens``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..config import Config
from ..providers.base import Completion, ModelRequest, Provider
from ..retrieval.tokens import count_tokens

COMPLETION_RATIO = 0.5
"""Expected completion tokens per chunk token: a plan restates about half its chunk as claims
and their citations (sentence numbers, not retyped quotes). A guess, documented as one; the
ceiling is ``model.max_output_tokens`` per call."""


def request_tokens(request: ModelRequest, provider: Provider) -> int:
    """Prompt tokens of ``request`` as ``provider`` would send it (0 for an engine that reads
    the task in-process and sends nothing anywhere)."""
    if not provider.reads_prompt:
        return 0
    total = sum(count_tokens(m.content) + 4 for m in request.messages)  # + role framing
    if provider.supports_schema and request.schema is not None:
        total += count_tokens(json.dumps(request.schema, separators=(",", ":")))
    return total


def expected_completion(request: ModelRequest, provider: Provider) -> int:
    """Completion tokens expected for ``request``: see :data:`COMPLETION_RATIO`."""
    if not provider.reads_prompt or request.task is None:
        return 0
    return min(request.max_tokens, round(COMPLETION_RATIO * count_tokens(request.task.chunk)))


@dataclass(frozen=True)
class Prices:
    """``[providers]`` prices per 1,000 tokens (0: not configured)."""

    prompt_per_1k: float = 0.0
    completion_per_1k: float = 0.0
    currency: str = "USD"

    @classmethod
    def of(cls, config: Config) -> Prices:
        return cls(
            float(config.get("providers.prompt_price_per_1k")),
            float(config.get("providers.completion_price_per_1k")),
            str(config.get("providers.currency")),
        )

    @property
    def configured(self) -> bool:
        return self.prompt_per_1k > 0 or self.completion_per_1k > 0

    def cost(self, prompt: int, completion: int) -> float | None:
        """The price of these tokens, or None when no price is configured."""
        if not self.configured:
            return None
        return round(
            prompt / 1000 * self.prompt_per_1k + completion / 1000 * self.completion_per_1k, 6
        )


class BudgetSpent(Exception):  # a stop, not an error: never an AffidavitError
    """Raised before a chunk whose request would take an ingest past its token budget; the
    ingest stops there cleanly (every chunk before it is recorded, so a rerun resumes)."""

    def __init__(self, detail: dict[str, Any]) -> None:
        super().__init__(detail["message"])
        self.detail = detail


@dataclass
class Budget:
    """A token budget (prompt + completion) for one ingest run."""

    limit: int
    provider: Provider
    spent_prompt: int = 0
    spent_completion: int = 0
    calls: int = 0

    @property
    def spent(self) -> int:
        return self.spent_prompt + self.spent_completion

    def before_chunk(self, request: ModelRequest) -> None:
        """Raise :class:`BudgetSpent` when the chunk's first call (its prompt and the expected
        completion) would take the run past the budget."""
        need = request_tokens(request, self.provider) + expected_completion(request, self.provider)
        if self.spent + need <= self.limit:
            return
        task = request.task
        where = f"{task.source_name} chunk {task.chunk_index + 1}" if task else "the next chunk"
        raise BudgetSpent(
            {
                "reason": "budget",
                "budget": self.limit,
                "spent": self.spent,
                "next_chunk_tokens": need,
                "message": (
                    f"stopped before {where}: it needs about {need} tokens and "
                    f"{self.spent} of the budget of {self.limit} are spent. Run the same ingest "
                    "again (with a new --budget, or none) to go on: chunks done are skipped."
                ),
            }
        )

    def spend(self, request: ModelRequest, completion: Completion | None) -> None:
        """Count one call: the provider's reported usage, else the request and reply counted."""
        self.calls += 1
        usage = completion.usage if completion is not None else None
        if usage is not None and usage.prompt_tokens:
            self.spent_prompt += usage.prompt_tokens
        else:
            self.spent_prompt += request_tokens(request, self.provider)
        if usage is not None and usage.completion_tokens:
            self.spent_completion += usage.completion_tokens
        elif completion is not None and self.provider.reads_prompt:
            self.spent_completion += count_tokens(completion.text)


__all__ = [
    "COMPLETION_RATIO",
    "Budget",
    "BudgetSpent",
    "Prices",
    "expected_completion",
    "request_tokens",
]
