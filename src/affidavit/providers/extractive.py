"""The extractive provider: the engine of :mod:`affidavit.extractive` behind the provider interface.

It answers ingest requests only (``request.task`` set), deterministically and without a network.
The reply is the plan as JSON text; when the chunk has nothing usable the reply is a plan object
with an empty ``operations`` list (:func:`affidavit.extractive.is_empty_plan`), which the plan
schema refuses: the ingest pipeline recognises it and skips the chunk.

A host may compute the chunk's half of the work ahead of time, in another process
(:func:`affidavit.extractive.analyse` on the task, whose ``pages``, ``pending_slugs`` and ``nonce``
it does not read), and hand it over with :meth:`ExtractiveProvider.complete_with`: the reply is
the same, byte for byte: an analysis of another chunk or source is not used.
"""

from __future__ import annotations

import json
from typing import ClassVar

from ..errors import ProviderError
from ..extractive import ENGINE, Analysis, AnalysisMismatch, analyse, plan_from
from .base import Completion, IngestTask, ModelRequest, Provider, Usage


class ExtractiveProvider(Provider):
    """Builds plans from the source's own sentences; no model, no network, no randomness."""

    name: ClassVar[str] = "extractive"
    supports_schema: ClassVar[bool] = True
    needs_network: ClassVar[bool] = False
    reads_prompt: ClassVar[bool] = False  # it reads the task; numbering sentences is wasted
    ahead: ClassVar[str] = "affidavit.extractive.analysis:analyse"  # the chunk's half

    def complete(self, request: ModelRequest) -> Completion:
        """Answer an ingest request with the engine's plan; refuse anything else."""
        task = _task(request)
        return _reply(plan_from(analyse(task), task))

    def complete_with(self, analysis: Analysis | None, request: ModelRequest) -> Completion:
        """:meth:`complete`, from ``analysis``: :func:`affidavit.extractive.analyse` of the
        request's task, computed ahead of time (None: computed here). An analysis of another
        chunk or source (its key: the source's id and name, the chunk's offsets, index, count,
        flags and fence, and the SHA-256 of its text) is not used: the task's own is computed,
        so the reply is always :meth:`complete`'s."""
        task = _task(request)
        try:
            plan = plan_from(analysis if analysis is not None else analyse(task), task)
        except AnalysisMismatch:
            plan = plan_from(analyse(task), task)
        return _reply(plan)


def _task(request: ModelRequest) -> IngestTask:
    if request.task is None:
        raise ProviderError(
            "the extractive engine only answers ingest requests (a request with a task); "
            "configure a language model provider to answer questions or run lint findings."
        )
    return request.task


def _reply(plan: dict[str, object]) -> Completion:
    text = json.dumps(plan, ensure_ascii=False, sort_keys=False)
    return Completion(text=text, finish_reason="stop", model=ENGINE, usage=Usage(0, 0))


__all__ = ["ExtractiveProvider"]
