"""The extractive provider: the engine of :mod:`affidavit.extractive` behind the provider interface.

It answers ingest requests only (``request.task`` set), deterministically and without a network.
The reply is the plan as JSON text; when the chunk has nothing usable the reply is a plan object
with an empty ``operations`` list (:func:`affidavit.extractive.is_empty_plan`), which the plan
schema refuses: the ingest pipeline recognises it and skips the chunk.
"""

from __future__ import annotations

import json
from typing import ClassVar

from ..errors import ProviderError
from ..extractive import ENGINE, propose_plan
from .base import Completion, ModelRequest, Provider, Usage


class ExtractiveProvider(Provider):
    """Builds plans from the source's own sentences; no model, no network, no randomness."""

    name: ClassVar[str] = "extractive"
    supports_schema: ClassVar[bool] = True
    needs_network: ClassVar[bool] = False
    reads_prompt: ClassVar[bool] = False  # it reads the task; numbering sentences is wasted

    def complete(self, request: ModelRequest) -> Completion:
        """Answer an ingest request with the engine's plan; refuse anything else."""
        if request.task is None:
            raise ProviderError(
                "the extractive engine only answers ingest requests (a request with a task); "
                "configure a language model provider to answer questions or run lint findings."
            )
        plan = propose_plan(request.task)
        text = json.dumps(plan, ensure_ascii=False, sort_keys=False)
        return Completion(text=text, finish_reason="stop", model=ENGINE, usage=Usage(0, 0))


__all__ = ["ExtractiveProvider"]
