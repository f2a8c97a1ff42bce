"""Checking model replies before they reach the gate: one JSON object that echoes the nonce (W2).

Accepted formats, all checked the same way: a bare JSON object, or one JSON object inside a single
markdown code fence. Anything else — prose, JSON lines, a bare array, two objects, a reply cut off
by the token limit — is invalid and may be re-asked.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..errors import ProviderError
from ..providers.base import Completion

_FENCE = re.compile(r"^```(?:json|JSON)?\s*\n(.*)\n```\s*$", re.S)


class InvalidReply(ProviderError):
    """A model reply that can't be used; the message says why (and is fed back on a re-ask)."""


def parse_reply(completion: Completion, nonce: str) -> dict[str, Any]:
    """The reply's JSON object, or :class:`InvalidReply` saying what is wrong with it."""
    if completion.finish_reason == "length":
        raise InvalidReply("the reply was cut off by the token limit; write a shorter plan")
    text = completion.text.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidReply(
            f"the reply is not one JSON object ({exc.msg} at char {exc.pos})"
        ) from exc
    except RecursionError:
        raise InvalidReply(
            "the reply nests arrays or objects too deeply; write a flat plan"
        ) from None
    if not isinstance(value, dict):
        raise InvalidReply(f"the reply must be a JSON object, not a {type(value).__name__}")
    if value.get("nonce") != nonce:
        raise InvalidReply("the reply does not echo the nonce it was given in its 'nonce' field")
    return value
