"""spaCy's attribute ruler, its patterns looked up by token instead of matched one by one.

The English pipeline's ``attribute_ruler`` maps each token's Penn tag (and, for some words, its
form and dependency) to its universal part of speech, morphology and a few lemmas: 179 patterns,
all of one or two tokens with exact values or ``IN``/``NOT_IN``/``REGEX`` on ``TAG``, ``LOWER``,
``DEP`` and ``IS_SPACE``. spaCy's general matcher tries every pattern at every token, which was a
seventh of a parse's time (docs/benchmarks.md, "supcost2"). :class:`AttributeIndex` finds the same
matches by looking the token's tag and form up in an index of the patterns, then sets the same
attributes in the ruler's own order (by pattern, then position: a later pattern wins), through
spaCy's own :func:`set_token_attrs` — so every part of speech, morphology and lemma is the one the
ruler sets (tests/test_support_attributes.py compares them token by token).

:func:`index_of` returns None for a ruler with a pattern this index does not read (another
operator, attribute or value type): the pipeline then keeps its ruler.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["AttributeIndex", "index_of"]

Features = tuple[str, str, str, bool]
"""A token as the patterns read it: tag, lower-case form, dependency label, whether a space."""
Test = Callable[[Features], bool]
_FIELD = {"TAG": 0, "LOWER": 1, "DEP": 2, "IS_SPACE": 3}
CACHE = 1 << 16
"""Tokens (tag, form, dependency) whose matching patterns are kept; the cache empties when full."""


class Unsupported(ValueError):
    """A pattern this index does not read."""


def _test(attr: str, value: Any) -> tuple[int, Test, str | None]:
    """(field, test, the exact string it needs or None) of one attribute of a token pattern."""
    if attr not in _FIELD:
        raise Unsupported(attr)
    field = _FIELD[attr]
    if attr == "IS_SPACE":
        if not isinstance(value, bool):
            raise Unsupported(f"{attr}: {value!r}")
        flag = value
        return field, lambda f: f[3] is flag, None
    if isinstance(value, str):
        exact = value
        return field, lambda f: f[field] == exact, exact
    if isinstance(value, dict) and len(value) == 1:
        (op, arg), *_ = value.items()
        if (
            op in ("IN", "NOT_IN")
            and isinstance(arg, list)
            and all(isinstance(a, str) for a in arg)
        ):
            members = frozenset(arg)
            if op == "IN":
                return field, lambda f: f[field] in members, None
            return field, lambda f: f[field] not in members, None
        if op == "REGEX" and isinstance(arg, str):
            found = re.compile(arg).search
            return field, lambda f: found(f[field]) is not None, None
    raise Unsupported(f"{attr}: {value!r}")


def _token_test(spec: dict[str, Any]) -> tuple[Test, list[tuple[int, str]]]:
    """(test, the (field, value) pairs it needs exactly) of one token of a pattern."""
    if not isinstance(spec, dict) or not spec:
        raise Unsupported(repr(spec))
    tests: list[Test] = []
    exact: list[tuple[int, str]] = []
    for attr, value in spec.items():
        field, test, needed = _test(attr, value)
        tests.append(test)
        if needed is not None:
            exact.append((field, needed))
    if len(tests) == 1:
        return tests[0], exact
    return (lambda f: all(t(f) for t in tests)), exact


_PREFERRED = (1, 0, 2)
"""The field a pattern is indexed by when it fixes several: form, then tag, then dependency."""


def _anchor(tokens: list[tuple[Test, list[tuple[int, str]]]]) -> tuple[int, tuple[int, str]] | None:
    """(position, (field, value)) of the pattern's most selective exact value, if any."""
    for field in _PREFERRED:
        for k, (_, exact) in enumerate(tokens):
            for pair in exact:
                if pair[0] == field:
                    return k, pair
    return None


class AttributeIndex:
    """Sets on a parsed ``Doc`` what the attribute ruler it was built from sets (see the module)."""

    def __init__(self, ruler: Any) -> None:
        from spacy.tokens._retokenize import set_token_attrs

        self._set = set_token_attrs
        self._attrs: list[dict[int, Any]] = list(ruler.attrs)
        self._indices: list[int] = list(ruler.indices)
        self._single: dict[tuple[int, str], list[tuple[int, Test]]] = {}
        self._single_always: list[tuple[int, Test]] = []
        self._longer: dict[tuple[int, str], list[tuple[int, int, list[Test]]]] = {}
        self._longer_always: list[tuple[int, int, list[Test]]] = []
        self._cache: dict[Features, tuple[int, ...]] = {}
        self._merges: dict[tuple[int, ...], dict[int, Any]] = {}
        for n, entry in enumerate(ruler.patterns):
            for pattern in entry["patterns"]:
                if not isinstance(pattern, list) or not pattern:
                    raise Unsupported(repr(pattern))
                tokens = [_token_test(spec) for spec in pattern]
                anchor = _anchor(tokens)
                if len(tokens) == 1:
                    if anchor is None:
                        self._single_always.append((n, tokens[0][0]))
                    else:
                        self._single.setdefault(anchor[1], []).append((n, tokens[0][0]))
                    continue
                tests = [t for t, _ in tokens]
                if anchor is None:
                    self._longer_always.append((n, 0, tests))
                else:
                    self._longer.setdefault(anchor[1], []).append((n, anchor[0], tests))
        for n, index in enumerate(self._indices):
            width = {len(p) for p in ruler.patterns[n]["patterns"]}
            if any(not -w <= index < w for w in width):
                raise Unsupported(f"pattern {n}: index {index} outside its {width} tokens")

    def _one(self, f: Features) -> tuple[int, ...]:
        """The one-token patterns ``f`` matches, in order (a token's own: cached)."""
        found = self._cache.get(f)
        if found is None:
            candidates = [
                *self._single.get((0, f[0]), ()),
                *self._single.get((1, f[1]), ()),
                *self._single.get((2, f[2]), ()),
                *self._single_always,
            ]
            found = tuple(sorted({n for n, test in candidates if test(f)}))
            if len(self._cache) >= CACHE:
                self._cache.clear()
            self._cache[f] = found
        return found

    def matches(self, features: Sequence[Features]) -> list[tuple[int, int, int]]:
        """(pattern, start, end) of every match, in the ruler's order of application."""
        found: set[tuple[int, int, int]] = set()
        size = len(features)

        def add(n: int, start: int, tests: list[Test]) -> None:
            end = start + len(tests)
            if (
                start >= 0
                and end <= size
                and all(t(features[start + j]) for j, t in enumerate(tests))
            ):
                found.add((n, start, end))

        for at, f in enumerate(features):
            found.update((n, at, at + 1) for n in self._one(f))
            for key in ((1, f[1]), (0, f[0]), (2, f[2])):
                for n, k, tests in self._longer.get(key, ()):
                    add(n, at - k, tests)
        for n, _, tests in self._longer_always:
            for start in range(size):
                add(n, start, tests)
        return sorted(found)

    def _merged(self, patterns: tuple[int, ...]) -> dict[int, Any]:
        """The attributes ``patterns`` set on one token, applied in order (cached)."""
        merged = self._merges.get(patterns)
        if merged is None:
            merged = {}
            for n in patterns:
                merged.update(self._attrs[n])
            if len(self._merges) >= CACHE:
                self._merges.clear()
            self._merges[patterns] = merged
        return merged

    def __call__(self, doc: Any) -> Any:
        features = [(t.tag_, t.lower_, t.dep_, t.is_space) for t in doc]
        on: list[list[int]] = [[] for _ in features]
        for n, start, end in self.matches(features):
            index = self._indices[n]
            on[start + index if index >= 0 else end + index].append(n)
        for i, patterns in enumerate(on):
            if patterns:
                self._set(doc[i], self._merged(tuple(patterns)))
        return doc


def index_of(ruler: Any) -> AttributeIndex | None:
    """The index of ``ruler``'s patterns, or None when one of them is not of the kinds it reads."""
    try:
        return AttributeIndex(ruler)
    except Unsupported:
        return None
