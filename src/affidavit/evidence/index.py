"""A suffix array over one normalised source text: every occurrence of a needle in O(log n).

Built with ``pydivsufsort`` (libdivsufsort, a wheel on PyPI for CPython on manylinux x86-64 and
aarch64, macOS and Windows) over the UTF-8 bytes of the normalised text. UTF-8 keeps code-point
order and no character's encoding starts inside another's, so the occurrences of a needle's bytes
are exactly the occurrences of the needle, at character boundaries; byte offsets are turned back
into character offsets with a sampled count of UTF-8 continuation bytes (nothing to do for ASCII
text). Lone surrogates are encoded as themselves (``surrogatepass``) on both sides.

This module only says *where* a needle occurs. Which occurrence counts (the first one that cuts
no word, W3) is :mod:`affidavit.evidence.verify`'s business, exactly as for ``str.find``.

Without ``pydivsufsort`` (:data:`AVAILABLE` false) the verifier keeps its pure-Python scans.
"""

from __future__ import annotations

import ctypes
from typing import Any

try:  # pragma: no branch - one of the two, per install
    import numpy as np
    from pydivsufsort import divsufsort, sa_search
except ImportError:  # a plain install without the wheel: the pure-Python path
    AVAILABLE = False
else:
    AVAILABLE = True

__all__ = ["AVAILABLE", "SuffixIndex"]

#: Continuation bytes are counted from a checkpoint every this many bytes.
_BLOCK = 1 << 8
#: ``bytes.translate`` deletes these to leave only the continuation bytes (0x80-0xBF).
_NOT_CONTINUATION = bytes(b for b in range(256) if not 0x80 <= b < 0xC0)


def _direct_search() -> Any:
    """libdivsufsort's 32-bit ``sa_search`` through ctypes, or None.

    pydivsufsort's own ``sa_search`` wraps the suffix array anew on every call (most of its
    cost); the library function it calls is the same. The library is opened through a handle of
    our own, so that pydivsufsort's function objects keep their settings.
    """
    try:
        from pydivsufsort.dll import libdivsufsort

        function = ctypes.CDLL(libdivsufsort._name).sa_search
    except (ImportError, AttributeError, OSError):
        return None
    function.restype = ctypes.c_int32
    return function


_SEARCH: Any = _direct_search() if AVAILABLE else None


class SuffixIndex:
    """The suffix array of one normalised text. Immutable once built; safe to share."""

    def __init__(self, text: str) -> None:
        if not AVAILABLE:
            raise RuntimeError("SuffixIndex needs pydivsufsort: pip install pydivsufsort")
        self.text = text
        self._data = text.encode("utf-8", "surrogatepass")
        self._array = divsufsort(self._data)
        self._size = len(self._data)
        self._direct = _SEARCH is not None and self._array.dtype == np.int32
        self._pointer = ctypes.c_void_p(self._array.ctypes.data)
        self._size32 = ctypes.c_int32(self._size) if self._direct else None
        self._checkpoints: Any = None
        if len(self._data) != len(text):
            flags = np.frombuffer(self._data, dtype=np.uint8) & 0xC0 == 0x80
            padded = np.zeros(-(-len(flags) // _BLOCK) * _BLOCK, dtype=np.int64)
            padded[: len(flags)] = flags
            per_block = padded.reshape(-1, _BLOCK).sum(axis=1)
            self._checkpoints = np.concatenate(([0], np.cumsum(per_block))).tolist()

    @property
    def nbytes(self) -> int:
        """Memory held: the suffix array and the encoded text."""
        return int(self._array.nbytes) + len(self._data)

    def count(self, needle: str) -> tuple[int, int]:
        """``(count, first)``: how often ``needle`` occurs and where its run starts in the array."""
        pattern = needle.encode("utf-8", "surrogatepass")
        if not pattern or not self._size:
            return 0, 0
        if self._direct:
            left = ctypes.c_int32()  # one per call: ctypes releases the GIL while it runs
            found = _SEARCH(
                self._data,
                self._size32,
                pattern,
                ctypes.c_int32(len(pattern)),
                self._pointer,
                self._size32,
                ctypes.byref(left),
            )
            if found < 0:
                raise RuntimeError(f"libdivsufsort sa_search failed ({found})")
            return int(found), int(left.value)
        found, first = sa_search(self._data, self._array, pattern)
        return int(found), int(first or 0)

    def positions(self, first: int, count: int) -> list[int]:
        """The character offsets of occurrences ``first .. first + count`` of the array, sorted."""
        if count == 1:
            offsets = [int(self._array[first])]
        else:
            offsets = np.sort(self._array[first : first + count]).tolist()
        if self._checkpoints is None:
            return offsets
        return [self._char_offset(offset) for offset in offsets]

    def _char_offset(self, offset: int) -> int:
        block = offset // _BLOCK
        tail = self._data[block * _BLOCK : offset].translate(None, _NOT_CONTINUATION)
        return int(offset - self._checkpoints[block] - len(tail))
