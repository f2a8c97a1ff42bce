"""The attribute ruler as an index (:mod:`affidavit.support.attributes`) sets what spaCy's ruler
sets: the same matches on random token sequences drawn from every pattern's own values, the same
part of speech, morphology and lemma on real text, and the pipeline's ruler kept for patterns the
index does not read."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import spacy
from spacy.pipeline import AttributeRuler
from spacy.tokens import Doc

from affidavit.support import parse
from affidavit.support.attributes import AttributeIndex, index_of

FIXTURE = Path(__file__).parent / "data" / "support_verdicts.jsonl"
SPECIAL = [
    "They ain't gonna stop, and we gotta go; let's see.",
    "Nothin' came of it, y'all, and I'd say it isn't over.",
    "She doesn't know whether he's right, since they're late.",
    "The 2 men  and\n\nthe dogs ran; what's it to you?",
    "I am here, you are there, and it was done by them.",
    "Do it!  Don't.  He has had enough, hasn't he?",
    "That which is, is; this one and those ones were not.",
]


def _ruler() -> Any:
    return parse._nlp().get_pipe("attribute_ruler")


def _values(ruler: Any) -> dict[str, list[Any]]:
    """Every value a pattern of ``ruler`` names, per attribute, plus some no pattern names."""
    out: dict[str, list[Any]] = {"TAG": ["NN", "XX", ""], "LOWER": ["zebra", ""], "DEP": ["", "x"]}
    for entry in ruler.patterns:
        for pattern in entry["patterns"]:
            for spec in pattern:
                for attr, value in spec.items():
                    if attr == "IS_SPACE":
                        continue
                    if isinstance(value, str):
                        out[attr].append(value)
                    elif "IN" in value or "NOT_IN" in value:
                        out[attr] += value.get("IN", value.get("NOT_IN"))
    out["LOWER"] += ["n't", "nt", "nothin'", "nuthin'", "y'", "y", "ai"]
    return {k: sorted(set(v)) for k, v in out.items()}


def test_the_index_finds_the_rulers_matches_on_random_tokens() -> None:
    ruler = _ruler()
    index = AttributeIndex(ruler)
    values = _values(ruler)
    rng = random.Random(22)
    vocab = parse._nlp().vocab
    compared = matched = 0
    for _ in range(3000):
        n = rng.randint(1, 5)
        words = [rng.choice(values["LOWER"]) or "word" for _ in range(n)]
        words = [w.upper() if rng.random() < 0.1 else w for w in words]
        words = [" " if rng.random() < 0.05 else w for w in words]
        tags = [rng.choice(values["TAG"]) or "NN" for _ in range(n)]
        deps = [rng.choice(values["DEP"]) or "dep" for _ in range(n)]
        doc = Doc(vocab, words=words, tags=tags, deps=deps)
        theirs = sorted({(int(vocab.strings[m]), s, e) for _, m, s, e in ruler.match(doc)})
        mine = index.matches([(t.tag_, t.lower_, t.dep_, t.is_space) for t in doc])
        assert mine == theirs, (words, tags, deps)
        compared += 1
        matched += len({m for m, _, _ in mine})
    assert compared == 3000 and matched > 3000


def _texts() -> list[str]:
    rows = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]
    texts = [t for r in rows[::3] for t in (r["text"], *r["quotes"])]
    return list(dict.fromkeys(parse._clean(t) for t in [*SPECIAL, *texts]))


def _attrs(doc: Any) -> list[tuple[str, ...]]:
    return [(t.text, t.tag_, t.pos_, str(t.morph), t.lemma_, t.dep_) for t in doc]


def test_real_text_gets_the_rulers_part_of_speech_morphology_and_lemmas() -> None:
    nlp = parse._nlp()
    texts = _texts()
    assert len(texts) > 300
    theirs = [_attrs(d) for d in nlp.pipe(texts)]  # the pipeline with its own ruler
    after = [step for _, step in parse._AFTER]
    assert [name for name, _ in parse._AFTER] == ["attribute_ruler", "lemmatizer"]
    mine = []
    for doc in nlp.pipe(texts, disable=[name for name, _ in parse._AFTER]):
        for step in after:
            doc = step(doc)
        mine.append(_attrs(doc))
    differ = [(t, a, b) for t, a, b in zip(texts, theirs, mine, strict=True) if a != b]
    assert not differ, f"{len(differ)} texts differ, first: {differ[0]}"
    lemmas = {(t[0].lower(), t[4]) for d in mine for t in d}
    assert {("ai", "be"), ("gon", "go"), ("na", "to"), ("'s", "us")} <= lemmas  # two-token rules


def test_parse_many_gives_the_full_pipelines_tokens() -> None:
    nlp = parse._nlp()
    texts = [*SPECIAL, "The bridge was opened in 1932 by the mayor, who wasn't there."]
    parse._CACHE.clear()
    assert parse.parse_many(texts) == [parse._tokens(d) for d in nlp.pipe(texts)]


def test_a_ruler_with_patterns_the_index_does_not_read_is_kept() -> None:
    nlp = spacy.blank("en")
    for pattern in (
        [{"LEMMA": "be"}],  # an attribute it does not read
        [{"LOWER": "a", "OP": "+"}],  # an operator
        [{"LOWER": {"FUZZY": "colour"}}],
        [{"TAG": {"IN": ["NN", 3]}}],
    ):
        ruler = AttributeRuler(nlp.vocab)
        ruler.add([[{"TAG": "NN"}]], {"POS": "NOUN"})
        ruler.add([pattern], {"POS": "X"})
        assert index_of(ruler) is None, pattern
    ruler = AttributeRuler(nlp.vocab)
    ruler.add([[{"TAG": "NN"}, {"LOWER": "b"}]], {"POS": "X"}, index=2)  # outside its span
    assert index_of(ruler) is None
    ruler = AttributeRuler(nlp.vocab)
    ruler.add([[{"TAG": "NN"}]], {"POS": "NOUN"})
    ruler.add([[{"LOWER": "fish", "TAG": "NN"}]], {"POS": "VERB"})  # the later pattern wins
    index = index_of(ruler)
    assert index is not None
    doc = index(Doc(nlp.vocab, words=["fish", "cod"], tags=["NN", "NN"]))
    assert [t.pos_ for t in doc] == ["VERB", "NOUN"]


def test_any_ruler_of_the_kinds_it_reads_sets_what_spacys_sets() -> None:
    """Patterns the model doesn't have but the index claims to read: a negative index, a
    pattern anchored on its last token or on none, overlapping patterns that set the same
    attribute (the later wins), NOT_IN on an unset tag."""
    nlp = spacy.blank("en")
    ruler = AttributeRuler(nlp.vocab)
    ruler.add([[{"TAG": "NN"}]], {"POS": "NOUN", "MORPH": "Number=Sing"})
    ruler.add([[{"LOWER": {"IN": ["a", "b"]}}, {"TAG": "NN"}]], {"POS": "DET"}, index=-2)
    ruler.add([[{"TAG": {"NOT_IN": ["", "NN"]}}, {"LOWER": "c"}]], {"LEMMA": "see"}, index=-1)
    ruler.add([[{"LOWER": {"REGEX": "^[ab]$"}}, {"DEP": {"IN": ["obj"]}}]], {"POS": "X"}, index=1)
    ruler.add([[{"IS_SPACE": True}]], {"POS": "SPACE"})
    ruler.add([[{"LOWER": "c", "DEP": "obj"}]], {"POS": "VERB", "MORPH": "Tense=Past"})
    index = index_of(ruler)
    assert index is not None
    rng = random.Random(7)
    for _ in range(2000):
        n = rng.randint(1, 5)
        words = [rng.choice(["a", "b", "c", "C", "d", " "]) for _ in range(n)]
        tags = [rng.choice(["NN", "VB", "", "JJ"]) for _ in range(n)]
        deps = [rng.choice(["obj", "nsubj", "dep"]) for _ in range(n)]
        theirs = Doc(nlp.vocab, words=words, tags=tags or None, deps=deps)
        mine = Doc(nlp.vocab, words=words, tags=tags or None, deps=deps)
        ruler(theirs)
        index(mine)
        assert [(t.pos_, str(t.morph), t.lemma_) for t in mine] == [
            (t.pos_, str(t.morph), t.lemma_) for t in theirs
        ], (words, tags, deps)
