"""The frontmatter fields written without PyYAML's emitter are written exactly as it writes them."""

from __future__ import annotations

import random

import yaml

from affidavit.store import render


def _yaml(key: str, value: object) -> tuple[str, ...]:
    return render._dumped(key, type(value).__qualname__, value)


def test_ints_and_timestamps_match_pyyaml() -> None:
    rng = random.Random(7)
    values: list[object] = [
        0,
        1,
        -1,
        7,
        10**12,
        -(10**30),
        *[rng.randint(-9999, 10**9) for _ in range(300)],
    ]
    for _ in range(300):
        values.append(
            f"{rng.randint(1, 9999):04d}-{rng.randint(0, 99):02d}-{rng.randint(0, 99):02d}T"
            f"{rng.randint(0, 99):02d}:{rng.randint(0, 99):02d}:{rng.randint(0, 99):02d}Z"
        )
    for key in ("claims", "created", "updated"):
        for value in values:
            fast = render._field(key, type(value).__qualname__, value)
            assert fast == _yaml(key, value), (key, value)
            assert yaml.safe_load("\n".join(fast)) == {key: value}


def test_other_values_go_through_pyyaml() -> None:
    """Near misses of the two shapes (a bool, a timestamp with a fraction or an offset, a key
    YAML must quote) are left to PyYAML, which decides how to write them."""
    for key, value in [
        ("claims", True),
        ("updated", "2026-12-01T22:21:32.5Z"),
        ("updated", "2026-12-01T22:21:32+01:00"),
        ("updated", "2026-12-01 22:21:32"),
        ("updated", "2026-12-01T22:21:32Z\n"),
        ("Claims", 3),
        ("null", 3),
        ("yes", 3),
        ("a b", 3),
        ("slug", "2026-12-01T22:21:32Z"),
    ]:
        kind = type(value).__qualname__
        assert render._field(key, kind, value) == _yaml(key, value)
        assert yaml.safe_load("\n".join(render._field(key, kind, value))) == {key: value}
