"""The support check's verdicts are unchanged by work on its cost (issue 22): a committed fixture of
real inputs — every 40th VitaminC input of ``bench/support_same.py`` and every 4th claim, title and
summary of the public writer set — with the verdict, missing words and reason main gave them
(recorded at 392a082 with ``bench/support_same.py --fixture tests/data/support_verdicts.jsonl
--writer``). A change that is meant to change verdicts re-records it and says so."""

from __future__ import annotations

import json
from pathlib import Path

from affidavit.support import check, rules, structure

FIXTURE = Path(__file__).parent / "data" / "support_verdicts.jsonl"


def test_verdicts_match_the_recorded_ones() -> None:
    rows = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]
    assert len(rows) > 700
    rules._check.cache_clear()
    structure._read.cache_clear()
    differ = []
    for row in rows:
        found = check(
            row["text"], tuple(row["quotes"]), share=row["share"], context=tuple(row["context"])
        )
        if [found.verdict, list(found.missing), found.reason] != row["found"]:
            differ.append((row["text"], row["found"], found))
    assert not differ, f"{len(differ)} verdicts changed, first: {differ[0]}"
