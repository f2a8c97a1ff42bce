"""The parser's matrix products on numpy's OpenBLAS, one thread (issue 22's cost per claim).

spaCy's English pipeline runs its layers (tok2vec, the tagger, the parser's precomputed layer)
through thinc's ``NumpyOps.gemm``, which calls BLIS. On the project's machines (AMD EPYC, AVX2)
the BLIS that ships with thinc multiplies a parse's shapes (a plan's ~240 tokens by 288 or 576
inputs, 288 outputs) at ~18 GFLOP/s; the OpenBLAS inside numpy's wheel does them at ~65 on one
thread — tok2vec, two thirds of a parse, costs half as much. :func:`use_openblas` points every
layer of a loaded pipeline at thinc's own numpy ``Ops.gemm`` (``NumpyOps(use_blis=False)``) when
the OpenBLAS numpy loaded lets a thread set its own thread count (``openblas_set_num_threads_local``,
OpenBLAS 0.3.27 and later); :func:`one_thread` holds that count at one while a batch is parsed.
One thread, because OpenBLAS's own threads wait by spinning: on a shared two-core machine a
product on two threads used ten times the CPU of the same product on one.

The products differ from BLIS's in the last bits of a float; the parse read from them (every
token's tag, part of speech, lemma, head, dependency and sentence) was the same for all 158,239
tokens of 5,984 texts (the verdict inputs of ``bench/support_same.py``) and is checked in
tests/test_support_blas.py. Where numpy has no such OpenBLAS (another BLAS, an older OpenBLAS),
the pipeline runs on BLIS as before. Which of the two runs follows from the installed files,
which :func:`affidavit.support.parse.pipeline_version` hashes (numpy's ``RECORD`` names its
OpenBLAS library by its hash), so a kept parse is read only by the pipeline that made it.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = ["active", "one_thread", "use_openblas"]

_SYMBOL = "openblas_set_num_threads_local"
_ACTIVE: list[bool] = []


def _candidates() -> Iterator[Path]:
    """OpenBLAS libraries this process has loaded (Linux: its memory map), then those numpy's
    wheel carries beside it."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                path = line.rstrip("\n").partition("/")[2]
                if path and "openblas" in Path("/" + path).name.lower():
                    yield Path("/" + path)
    except OSError:
        pass
    numpy = sys.modules.get("numpy")
    where = getattr(numpy, "__file__", None)
    if where:
        here = Path(where).resolve().parent
        for folder in (here.parent / "numpy.libs", here / ".dylibs", here.parent / "numpy"):
            if folder.is_dir():
                yield from sorted(folder.glob("*openblas*"))


@lru_cache(maxsize=1)
def _local_threads() -> Callable[[int], int] | None:
    """OpenBLAS's ``openblas_set_num_threads_local`` (sets the calling thread's count, returns
    the one before), from the library numpy loaded; None when there is none."""
    import numpy  # noqa: F401  (loads its BLAS)

    for path in dict.fromkeys(_candidates()):
        try:
            library = ctypes.CDLL(str(path))
            setter = getattr(library, _SYMBOL)
        except (OSError, AttributeError):
            continue
        setter.argtypes = [ctypes.c_int]
        setter.restype = ctypes.c_int
        return setter  # type: ignore[no-any-return]
    return None


def use_openblas(nlp: Any) -> bool:
    """Point every layer of ``nlp``'s components at numpy's ``Ops.gemm`` when :func:`one_thread`
    can hold OpenBLAS at one thread; whether it did (else the pipeline is left on BLIS)."""
    if _local_threads() is None:
        return False
    from thinc.api import NumpyOps

    ops = NumpyOps(use_blis=False)
    for _, component in nlp.pipeline:
        model = getattr(component, "model", None)
        if model is None or not hasattr(model, "walk"):
            continue
        for node in model.walk():
            node.ops = ops
    _ACTIVE[:] = [True]
    return True


def active() -> bool:
    """Whether a loaded pipeline multiplies on OpenBLAS (:func:`use_openblas` succeeded)."""
    return bool(_ACTIVE)


@contextmanager
def one_thread() -> Iterator[None]:
    """Within it, OpenBLAS runs the calling thread's products on that thread alone (the count
    before is restored after); nothing when the pipeline runs on BLIS."""
    setter = _local_threads() if _ACTIVE else None
    if setter is None:
        yield
        return
    before = setter(1)
    try:
        yield
    finally:
        setter(before)
