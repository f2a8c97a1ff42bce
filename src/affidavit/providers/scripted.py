"""A provider that replays canned replies, for tests and demonstrations (SPEC §5).

Replies are given in order — strings, :class:`Completion` objects, exceptions to raise, or
functions that make the reply from the request (to echo its fresh nonce, say) — or read from a
JSON file holding a list of strings. Every request is recorded in :attr:`requests`, so a
test can check exactly what a model would have been sent.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import ClassVar

from pydantic import Field

from ..errors import ProviderError
from .base import Completion, ModelRequest, Provider, ProviderOptions

Reply = str | Completion | Exception | Callable[[ModelRequest], str | Completion]


class ScriptedOptions(ProviderOptions):
    """Options of the ``scripted`` provider: a JSON file holding a list of reply strings."""

    path: Path | None = Field(default=None, description="JSON file: a list of reply strings")
    replies: tuple[str, ...] = Field(default=(), description="Reply strings, used before the file")


def _load(path: Path) -> list[str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ProviderError(f"scripted replies file {path} does not exist") from None
    except (OSError, ValueError) as exc:
        raise ProviderError(f"could not read scripted replies from {path}: {exc}") from None
    if not isinstance(data, list) or not all(isinstance(item, str) for item in data):
        raise ProviderError(f"{path} must hold a JSON list of strings, one reply each")
    return data


class ScriptedProvider(Provider):
    """Replays ``replies`` in order and records every request; raises when it runs out."""

    name: ClassVar[str] = "scripted"
    supports_schema: ClassVar[bool] = True

    def __init__(
        self,
        replies: Sequence[Reply] | ScriptedOptions | None = None,
        path: Path | None = None,
    ) -> None:
        if isinstance(replies, ScriptedOptions):
            path = path or replies.path
            replies = replies.replies
        self._replies: list[Reply] = list(replies or [])
        if path is not None:
            self._replies.extend(_load(path))
        self.requests: list[ModelRequest] = []

    def __repr__(self) -> str:
        return f"ScriptedProvider(left={self.remaining}, calls={len(self.requests)})"

    @property
    def remaining(self) -> int:
        """How many replies are left."""
        return max(0, len(self._replies) - len(self.requests))

    def complete(self, request: ModelRequest) -> Completion:
        """Record ``request`` and return (or raise) the next reply."""
        self.requests.append(request)
        call = len(self.requests)
        if call > len(self._replies):
            raise ProviderError(f"scripted provider has no reply left for call {call}")
        reply = self._replies[call - 1]
        if isinstance(reply, Exception):
            raise reply
        if callable(reply):
            reply = reply(request)
        if isinstance(reply, Completion):
            return reply
        return Completion(text=reply, model="scripted")


__all__ = ["ScriptedOptions", "ScriptedProvider"]
