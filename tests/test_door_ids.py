"""A claim's id is the SHA-256 of its canonical JSON: the door's encoder made once gives the
same text as :func:`~affidavit.hashing.canonical_json` for every body a claim can have."""

from __future__ import annotations

import random

from affidavit.hashing import canonical_json
from affidavit.store.writer import _CANONICAL

ODD = ["", "plain", "é “curly” ☃", "\x00\x1f\u2028", '"quoted" \\ back', "😀", "\ud7ff"]


def test_the_claim_id_encoder_is_canonical_json() -> None:
    rng = random.Random(9)
    for _ in range(3000):
        evidence = [
            [rng.choice(ODD) + f"{rng.getrandbits(64):x}", rng.choice(ODD)]
            + [rng.randint(-5, 10**6) for _ in range(rng.randint(0, 3))]
            for _ in range(rng.randint(0, 5))
        ]
        body = [rng.choice(ODD), rng.choice(ODD) * rng.randint(1, 3), evidence, rng.choice(ODD)]
        assert _CANONICAL.encode(body) == canonical_json(body)
