"""Answering without a language model: pick and order the best-supported retrieved claims, and for
short factual questions the shortest supported span of the best one.

The reply has the same shape as a model's and goes through the same citation check.
"""

from __future__ import annotations

import re
from typing import Any

from ..retrieval.search import Hit
from ..words import content_words, stem

_YEAR = re.compile(r"\b(?:1[0-9]{3}|20[0-9]{2})s?\b")
_DATE = re.compile(
    r"\b(?:\d{1,2} )?(?:January|February|March|April|May|June|July|August|September|October|"
    r"November|December)(?: \d{1,2})?,? \d{4}\b|\b(?:1[0-9]{3}|20[0-9]{2})s?\b"
)
_NUMBER = re.compile(
    r"(?:[$£€]\s?)?\b\d[\d,]*(?:\.\d+)?(?:\s?(?:%|percent|per cent|million|billion|thousand|"
    r"hundred|km|kilometres|kilometers|miles|metres|meters|feet|ft|m|kg|tonnes|tons|years|"
    r"people|square \w+))?"
)
_NAME = re.compile(
    r"\b(?:[A-Z][\w'’.-]*(?:\s+(?:of|the|de|von|van|and|for|la|le|du)?\s*[A-Z][\w'’.-]*)*)"
)
MIN_OVERLAP = 0.34
"""Share of the question's content words a claim must contain to count as support."""


def _stems(text: str) -> set[str]:
    return {stem(w) for w in content_words(text)}


def _span(question: str, text: str) -> str | None:
    """The shortest span of ``text`` that answers a short factual ``question``, if any."""
    q = question.strip().lower()
    asked = _stems(question)
    candidates: list[str] = []
    if q.startswith(("when", "what year", "in what year", "which year", "what date")):
        candidates = _DATE.findall(text)
    elif q.startswith(
        (
            "how many",
            "how much",
            "how long",
            "how far",
            "how tall",
            "how old",
            "how high",
            "what percentage",
            "what percent",
        )
    ):
        candidates = [m.group(0).strip() for m in _NUMBER.finditer(text) if m.group(0).strip()]
    elif q.startswith(("who", "whom", "whose", "where", "which")):
        candidates = [m.group(0).strip() for m in _NAME.finditer(text) if m.start() > 0]
    candidates = [c for c in candidates if c and not (_stems(c) and _stems(c) <= asked)]
    return candidates[0] if candidates else None


def extractive_answer(question: str, hits: list[Hit], nonce: str) -> dict[str, Any]:
    """A reply in the answer schema built only from ``hits`` (claims retrieved for the question)."""
    asked = _stems(question)
    scored: list[tuple[float, int, Hit]] = []
    for rank, hit in enumerate(hits):
        have = (
            _stems(hit.text)
            | _stems(hit.page_title)
            | {s for e in hit.evidence for s in _stems(e.quote)}
        )
        overlap = len(asked & have) / len(asked) if asked else 0.0
        if overlap >= MIN_OVERLAP:
            scored.append((overlap, -rank, hit))
    if not scored:
        return {"nonce": nonce, "not_in_wiki": True, "sentences": [], "short_answer": None}
    scored.sort(key=lambda item: (-item[0], -item[1]))
    best = scored[0][0]
    chosen: list[Hit] = []
    by_text: dict[str, dict[str, Any]] = {}
    sentences: list[dict[str, Any]] = []
    for overlap, _, hit in scored:
        if overlap < best - 0.2 or len(sentences) == 3:
            break
        key = " ".join(hit.text.split()).casefold()
        if key in by_text:  # the same sentence on two pages: one sentence, both citations
            by_text[key]["claims"].append(hit.claim_id)
            continue
        by_text[key] = {"text": hit.text, "claims": [hit.claim_id]}
        sentences.append(by_text[key])
        chosen.append(hit)
    short = _span(question, chosen[0].text)
    return {
        "nonce": nonce,
        "not_in_wiki": False,
        "sentences": sentences,
        "short_answer": (
            {"text": short, "claims": [chosen[0].claim_id]} if short is not None else None
        ),
    }
