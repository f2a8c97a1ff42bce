"""Record a run's outputs (one line each) with one version of the code and compare another's with
them: what ``engine_same.py`` and ``support_same.py`` share."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path


def save_or_compare(
    lines: Sequence[str],
    save: Path | None,
    compare: Path | None,
    describe: Callable[[int], str],
    same: str,
) -> int:
    """Write ``lines`` to ``save``, or compare them with ``compare``'s: 0 when every line is
    equal (printing ``same``), else 1 naming the first difference (``describe(n)``: line n)."""
    if save is not None:
        save.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return 0
    assert compare is not None
    before = compare.read_text(encoding="utf-8").splitlines()
    if len(before) != len(lines):
        print(f"{len(before)} recorded, {len(lines)} now", file=sys.stderr)
        return 1
    for n, (old, new) in enumerate(zip(before, lines, strict=True)):
        if old != new:
            print(f"{describe(n)} differs:\n{old[:400]}\n{new[:400]}", file=sys.stderr)
            return 1
    print(same)
    return 0
