"""A suffix array over one normalised source text: every occurrence of a needle in O(log n).

Built with ``pydivsufsort`` (libdivsufsort, a wheel on PyPI for CPython on manylinux x86-64 and
aarch64, macOS and Windows) over the UTF-8 bytes of the normalised text. UTF-8 keeps code-point
order and no character's encoding starts inside another's, so the occurrences of a needle's bytes
are exactly the occurrences of the needle, at character boundaries; byte offsets are turned back
into character offsets with a sampled count of UTF-8 continuation bytes (nothing to do for ASCII
text). Lone surrogates are encoded as themselves (``surrogatepass``) on both sides.

Many needles against one text (:meth:`SuffixIndex.occurrences`) are looked up in one C call: beside
the array, a text of up to :data:`_KEYED_MAX_BYTES` keeps ``keys``, the first 16 bytes of every
suffix in array order as one fixed-width byte string (zero-padded past the end of the text).
Padding with the smallest byte keeps them in the array's order, so ``numpy.searchsorted`` finds,
for all needles at once, the run of suffixes that share a needle's first 16 bytes: exactly its
occurrences when it has at most 16 bytes and no NUL (which the padding could imitate); for a
longer one, a run holding all of them (in prose, nearly always one suffix: 16 bytes from the
start of a word rarely repeat in a text, where 8 bytes do in most), whose candidates are checked
one by one (or searched with ``sa_search`` when the run is long).

This module only says *where* a needle occurs. Which occurrence counts (the first one that cuts
no word, W3) is :mod:`affidavit.evidence.verify`'s business, exactly as for ``str.find``.

Without ``pydivsufsort`` (:data:`AVAILABLE` false) the verifier keeps its pure-Python scans.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Sequence
from itertools import repeat
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
#: Texts up to this many bytes keep the 16-byte key of every suffix (16 bytes each, beside the
#: array's 4: at most 256 MiB of keys, as 8-byte keys up to 32 MiB were); larger ones are
#: searched one needle at a time.
_KEYED_MAX_BYTES = 1 << 24
#: Bytes of a suffix in its key.
_KEY = 16
#: A needle longer than its key whose run of key-sharing suffixes is at most this long has each
#: candidate checked; a longer run is searched with ``sa_search``.
_CHECK_MAX = 24
#: Needles are sorted before ``searchsorted`` when at least this many go to a text this large:
#: neighbouring searches then share the cache lines of the keys they read.
_SORT_MIN_NEEDLES = 16
_SORT_MIN_BYTES = 1 << 20
_PAD = b"\0" * _KEY
#: Fewer patterns than this are looked up one ``sa_search`` each (3 µs) rather than in one
#: ``searchsorted`` (15 µs fixed, 1 µs a pattern).
_BATCH_MIN = 8
#: What fills the unused end of a short pattern's upper bound: 0xFF, a byte UTF-8 never holds
#: (``_FILL[len]``), so every suffix that starts with the pattern sorts below it.
_FILL = [b"\xff" * (_KEY - n) for n in range(_KEY + 1)]
_KEY_DTYPE = f"S{_KEY}"


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
        self._address = int(self._array.ctypes.data)
        self._size32 = ctypes.c_int32(self._size) if self._direct else None
        self._checkpoints: Any = None
        if len(self._data) != len(text):
            flags = np.frombuffer(self._data, dtype=np.uint8) & 0xC0 == 0x80
            padded = np.zeros(-(-len(flags) // _BLOCK) * _BLOCK, dtype=np.int64)
            padded[: len(flags)] = flags
            per_block = padded.reshape(-1, _BLOCK).sum(axis=1)
            self._checkpoints = np.concatenate(([0], np.cumsum(per_block))).tolist()
        # Plain ints out of the array, fast (numpy exports "<i", which memoryview cannot index).
        self._order = memoryview(self._array).cast("B").cast(self._array.dtype.char)
        # The keys are built at the first batch that uses them (a random gather, ~110 ns a
        # byte): a text only ever checked a quote at a time never pays for them.
        self._keys: Any = None
        self._keyed = 0 < self._size <= _KEYED_MAX_BYTES
        self._keys_lock = threading.Lock()

    @property
    def nbytes(self) -> int:
        """Memory held: the suffix array, the keys and the encoded text."""
        keys = 0 if self._keys is None else int(self._keys.nbytes)
        return int(self._array.nbytes) + keys + len(self._data)

    def count(self, needle: str) -> tuple[int, int]:
        """``(count, first)``: how often ``needle`` occurs and where its run starts in the array."""
        return self._count(needle.encode("utf-8", "surrogatepass"))

    def _count(self, pattern: bytes, start: int = 0, stop: int = -1) -> tuple[int, int]:
        """``(count, first)`` of ``pattern``, looked for only in ``array[start:stop]`` (the whole
        array by default), which must hold all its occurrences."""
        if not pattern or not self._size:
            return 0, 0
        if self._direct:
            stop = self._size if stop < 0 else stop
            left = ctypes.c_int32()  # one per call: ctypes releases the GIL while it runs
            found = _SEARCH(
                self._data,
                self._size32,
                pattern,
                ctypes.c_int32(len(pattern)),
                ctypes.c_void_p(self._address + 4 * start),
                ctypes.c_int32(stop - start),
                ctypes.byref(left),
            )
            if found < 0:
                raise RuntimeError(f"libdivsufsort sa_search failed ({found})")
            return int(found), start + int(left.value)
        found, first = sa_search(self._data, self._array, pattern)
        return int(found), int(first or 0)

    @property
    def data(self) -> bytes:
        """The UTF-8 bytes of the text (what array entries index)."""
        return self._data

    @property
    def ascii(self) -> bool:
        """True if byte offsets are character offsets (the text is ASCII)."""
        return self._checkpoints is None

    def occurrences(self, needles: Sequence[str], limit: int) -> list[list[int] | None]:
        """For each needle, the sorted character offsets of all its occurrences, or None when it
        occurs more than ``limit`` times."""
        patterns = [needle.encode("utf-8", "surrogatepass") for needle in needles]
        starts, stops, _ = self.runs(patterns)
        return list(map(self.run_positions, patterns, starts, stops, repeat(limit)))

    def runs(self, patterns: list[bytes]) -> tuple[list[int], list[int], list[int]]:
        """``(starts, stops, firsts)``: for each pattern, a run ``array[start:stop]`` that holds
        every suffix starting with it, and the byte offset of the run's first suffix (0 when the
        run is empty). A run of one suffix holds the pattern iff the text has it there
        (``data.startswith(pattern, first)``); any run goes to :meth:`run_positions`.

        Keyed, all patterns are looked up in one ``searchsorted``: the run of suffixes whose key
        starts with the pattern's first 16 bytes (bounded below by the pattern padded with NULs,
        above by it padded with 0xFF bytes), exactly its occurrences when it fits its key and has
        no NUL. Otherwise (or for fewer than :data:`_BATCH_MIN` patterns, where numpy's fixed
        cost is more than a few calls), one ``sa_search`` a pattern: exactly its occurrences."""
        if not self._keyed or len(patterns) < _BATCH_MIN:
            counted = [self._count(pattern) for pattern in patterns]
            starts = [first for _, first in counted]
            stops = [first + count for count, first in counted]
            firsts = [self._order[first] if count else 0 for count, first in counted]
            return starts, stops, firsts
        # Fixed-width byte strings compare as their bytes, NUL-padded (numpy truncates longer
        # patterns to their first 16 bytes).
        low = np.array(patterns, dtype=_KEY_DTYPE)
        fill = _FILL
        high = np.array(
            [p + fill[len(p)] if len(p) < _KEY else p for p in patterns], dtype=_KEY_DTYPE
        )
        keys = self._keys if self._keys is not None else self._build_keys()
        if len(patterns) >= _SORT_MIN_NEEDLES and self._size >= _SORT_MIN_BYTES:
            ranked = np.argsort(low, kind="stable")
            begin = np.empty(len(patterns), dtype=np.intp)
            end = np.empty(len(patterns), dtype=np.intp)
            begin[ranked] = np.searchsorted(keys, low[ranked], "left")
            end[ranked] = np.searchsorted(keys, high[ranked], "right")
        else:
            begin = np.searchsorted(keys, low, "left")
            end = np.searchsorted(keys, high, "right")
        # Clamped: an empty run may start past the end of the array.
        firsts = self._array[np.minimum(begin, self._size - 1)].tolist()
        return begin.tolist(), end.tolist(), firsts

    def _build_keys(self) -> Any:
        with self._keys_lock:
            if self._keys is None:
                ended = self._data + _PAD
                # Every position's next 16 bytes (overlapping views of one buffer).
                window = np.ndarray((self._size,), dtype=_KEY_DTYPE, buffer=ended, strides=(1,))
                self._keys = window[self._array]
            return self._keys

    def run_positions(self, pattern: bytes, start: int, stop: int, limit: int) -> list[int] | None:
        """The sorted character offsets of the occurrences of ``pattern``, given its run from
        :meth:`runs`; None when there are more than ``limit``."""
        count = stop - start
        if count and self._keys is not None and (len(pattern) > _KEY or b"\0" in pattern):
            # The run holds every occurrence but maybe other suffixes too.
            if count <= _CHECK_MAX:
                data = self._data
                run = self._order[start:stop].tolist()
                found = [at for at in run if data.startswith(pattern, at)]
                if len(found) > limit:
                    return None
                found.sort()
                return found if self._checkpoints is None else list(map(self._char_offset, found))
            count, start = self._count(pattern, start, stop)
        return None if count > limit else self.positions(start, count)

    def char_offset(self, offset: int) -> int:
        """The character offset of byte ``offset`` (at a character boundary)."""
        return offset if self._checkpoints is None else self._char_offset(offset)

    def positions(self, first: int, count: int) -> list[int]:
        """The character offsets of occurrences ``first .. first + count`` of the array, sorted."""
        if count == 1:
            offsets = [self._order[first]]
        else:
            offsets = sorted(self._order[first : first + count].tolist())
        if self._checkpoints is None:
            return offsets
        return list(map(self._char_offset, offsets))

    def _char_offset(self, offset: int) -> int:
        block = offset // _BLOCK
        tail = self._data[block * _BLOCK : offset].translate(None, _NOT_CONTINUATION)
        return int(offset - self._checkpoints[block] - len(tail))
