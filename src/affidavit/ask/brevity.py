"""How many sentences an extractive answer shows (issue 24 item 4: at most two, fewer when one
says it all).

A second sentence earns its place when the first may be the wrong one. It doesn't when the short
answer comes from a claim that holds every word of the question (:data:`SURE_SUPPORT`): "The
default setting for SQLITE_MAX_COLUMN is 2000." says all that "How many columns ...?" asks; nor
when it scored far below the first (:data:`FAR`), which it reached only by filling an unsure
answer to two sentences; nor after an instruction that names the command a how-do-I question's
short answer gives ("To convert to WAL mode, use the following pragma: ...").

Tuned on SQuADShifts articles 0–11 and the SQLite and git manual sets (every answer's sentences
and scores were dumped and the rules scored offline); not on SQuADShifts 24–35 or the valgrind
set (docs/benchmarks.md, section ans24).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from ..retrieval.search import Hit
from .manuals import OPENS_INSTRUCTION, USES_COMMAND, asks_how

BRIEF = True
"""Show one sentence when the second adds nothing (:func:`enough`)."""
SURE_SUPPORT = 0.999
"""Support at or above which a claim holds every content word of the question."""
FAR = 0.5
"""How far below the first sentence's score a second one is left out."""


def enough(
    sentences: list[dict[str, Any]],
    short: dict[str, Any] | None,
    scored: list[tuple[float, float, int, Hit]],
    followers: Collection[str] = (),
    question: str = "",
) -> list[dict[str, Any]]:
    """``sentences`` (the answer's, best first, the short answer's own first) cut to the first
    when the short answer comes from a claim that holds every word of the question, or when the
    second scored :data:`FAR` or more below the first (a claim that was not scored: the
    retrieval's fill of an unsure answer, counted as far). A claim among ``followers`` (taken
    for what it follows: an FAQ's answer under its question) is never sure on its own: it
    stands at its leader's score, and the next one may be the rest of the answer. For a
    how-do-I ``question``, an instruction that names the short answer (it opens "To <verb>
    ...", or tells to use or run it: "To enable foreign key constraint enforcement, run PRAGMA
    foreign_keys=ON ...") says it all too."""
    if not BRIEF or len(sentences) < 2:
        return sentences
    score = {hit.claim_id: (s, support) for s, support, _, hit in scored}
    first = [score[c] for c in sentences[0]["claims"] if c in score]
    second = [score[c][0] for c in sentences[1]["claims"] if c in score]
    if not first:
        return sentences
    top, support = max(first)
    own = short is not None and short["claims"][0] in sentences[0]["claims"]
    own = own and not set(sentences[0]["claims"]) & set(followers)
    if own and support >= SURE_SUPPORT:
        return sentences[:1]
    if own and short is not None and _instruction(question, sentences[0]["text"], short["text"]):
        return sentences[:1]
    if not second or top - max(second) >= FAR:
        return sentences[:1]
    return sentences


def _instruction(question: str, text: str, short: str) -> bool:
    """``text`` instructs how to do what ``question`` asks how to do, naming ``short``."""
    if not question or not asks_how(question) or short not in text:
        return False
    return (
        OPENS_INSTRUCTION.match(text.strip()) is not None or USES_COMMAND.search(text) is not None
    )
