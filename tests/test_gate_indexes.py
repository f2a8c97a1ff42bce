"""The gate's indexes give exactly what the scans they replace gave (differential tests).

Each index exists for speed only: a quote's headings found by binary search in a text's heading
lines, not by scanning back through the text above it.
"""

from __future__ import annotations

import random

import pytest

from affidavit.gate import support_context
from affidavit.gate.support_context import _scan_above, headings_above

_PIECES = [
    "# Title\n",
    "## Part two\n",
    "#hashtag line\n",
    "###### deep #\n",
    "#   \n",
    "# \r\n",
    "# Heading with trailing hashes ##\n",
    "#" + "x" * 320 + "\n",
    "# " + "y" * 300 + "\n",
    "Some prose. She is here.\n",
    "\n",
    "More prose without a break ",
    "#",
    "\n#",
    "text # not a heading\n",
    "####### seven\n",
    "\t# tabbed\n",
]


def _text(rng: random.Random) -> str:
    return "".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 30)))


@pytest.mark.parametrize("window", [support_context.WINDOW, 7, 40, 200])
def test_headings_found_by_index_equal_those_found_by_scanning(
    window: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(support_context, "WINDOW", window)
    rng = random.Random(window)
    for _ in range(300):
        text = _text(rng)
        for start in range(-1, len(text) + 2):
            assert headings_above(text, start) == _scan_above(text, start), (text, start)


def test_headings_of_a_real_source_equal_those_found_by_scanning() -> None:
    rng = random.Random(5)
    body = " ".join(f"Sentence {n} of the address." for n in range(6000))
    text = "# State of the Union, 1790: George Washington\n\n" + body + "\n## Later\n" + body
    for start in rng.sample(range(len(text)), 3000):
        assert headings_above(text, start) == _scan_above(text, start)
