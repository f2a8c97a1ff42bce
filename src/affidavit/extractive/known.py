"""The known pages of a wiki as the engine looks them up: name keys, indexed, kept across chunks.

A topic continues a known page when its key names it (:func:`.topics.known_slug`: the same key, a
known key inside it, or the only known key one word longer around it). Scanning every known key
for every topic made the engine's cost grow with the wiki; here each lookup is a handful of dict
probes, whatever the wiki's size:

- ``inside``: the known keys of two words or more inside ``key`` are among its runs of two or more
  words (``key.split(" ")``, joined back), at most a few dozen probes;
- ``around``: the known keys one word longer around ``key`` are indexed by their two sub-keys
  (all words but the last, all but the first).

The keys of every known slug change only when pages are added, so :func:`known_keys` keeps them
from one chunk to the next (per thread) and only reads the slugs that are new; the titles of the
pages shown with a chunk lie over them for that chunk alone. Answers are exactly those of
:func:`.topics.known_slug` over the dictionary the engine builds (``tests/test_extractive_known.py``
checks both over random and real keys).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..providers.base import PageBrief
from .topics import name_key


def _runs(key: str) -> list[str]:
    """Every run of two or more of ``key``'s space-separated parts, joined back by spaces: the
    strings ``k`` with ``f" {k} " in f" {key} "`` and a space in ``k``."""
    parts = key.split(" ")
    n = len(parts)
    return [" ".join(parts[i:j]) for i in range(n) for j in range(i + 2, n + 1)]


def _subkeys(key: str) -> tuple[str, ...]:
    """The keys one part shorter that ``key`` is one word longer around (none under 3 parts)."""
    parts = key.split(" ")
    if len(parts) < 3:
        return ()
    head, tail = " ".join(parts[:-1]), " ".join(parts[1:])
    return (head,) if head == tail else (head, tail)


@dataclass
class _Index:
    """Name keys to slugs, with the two indexes :func:`lookup` needs."""

    slugs: dict[str, str] = field(default_factory=dict)  # key -> slug
    around: dict[str, set[str]] = field(default_factory=dict)  # sub-key -> keys around it

    def add(self, key: str, slug: str) -> None:
        if key not in self.slugs:
            for sub in _subkeys(key):
                self.around.setdefault(sub, set()).add(key)
        self.slugs[key] = slug

    def remove(self, key: str) -> None:
        del self.slugs[key]
        for sub in _subkeys(key):
            keys = self.around[sub]
            keys.discard(key)
            if not keys:
                del self.around[sub]


class KnownKeys:
    """The name keys of the known pages for one chunk: every known slug's key (the
    alphabetically first slug of a key wins), the shown pages' title keys over them."""

    def __init__(self, base: _Index, overlay: _Index) -> None:
        self._base = base
        self._overlay = overlay

    def get(self, key: str) -> str | None:
        """The slug ``key`` names exactly, or None."""
        slug = self._overlay.slugs.get(key)
        return slug if slug is not None else self._base.slugs.get(key)

    def __contains__(self, key: str) -> bool:
        return key in self._overlay.slugs or key in self._base.slugs

    def as_dict(self) -> dict[str, str]:
        """The keys as one dictionary (what the engine built before this index; for tests)."""
        return self._base.slugs | self._overlay.slugs

    def slug_for(self, key: str) -> str | None:
        """Exactly :func:`.topics.known_slug` ``(key, self.as_dict())``, without the scan."""
        if " " not in key or key in self:
            return self.get(key)
        inside = [k for k in _runs(key) if k in self]
        if inside:
            return self.get(max(inside, key=lambda k: (len(k), k)))
        around = self._base.around.get(key, set()) | self._overlay.around.get(key, set())
        return self.get(next(iter(around))) if len(around) == 1 else None


@dataclass
class _Cache:
    """One thread's keys of every known slug, kept between chunks."""

    slugs: frozenset[str] = frozenset()
    groups: dict[str, set[str]] = field(default_factory=dict)  # key -> slugs with that key
    index: _Index = field(default_factory=_Index)
    keys: dict[str, str] = field(default_factory=dict)  # slug -> its key

    def update(self, slugs: frozenset[str]) -> None:
        if slugs == self.slugs:
            return
        for slug in self.slugs - slugs:
            key = self.keys.pop(slug)
            group = self.groups[key]
            group.discard(slug)
            if group:
                self.index.add(key, min(group))
            else:
                del self.groups[key]
                self.index.remove(key)
        for slug in slugs - self.slugs:
            key = slug_key(slug)
            self.keys[slug] = key
            group = self.groups.setdefault(key, set())
            group.add(slug)
            if len(group) == 1 or slug < self.index.slugs[key]:
                self.index.add(key, slug)
        self.slugs = slugs


_LOCAL = threading.local()


def slug_key(slug: str) -> str:
    """The name key of a slug read as words ("new-york" → "new york")."""
    return name_key(slug.replace("-", " "))


def known_keys(slugs: Iterable[str], pages: Iterable[PageBrief]) -> KnownKeys:
    """The keys of the known ``slugs`` (kept from the last call on this thread: only new slugs
    are read) with the title keys of the shown ``pages`` over them, in order (the last wins).
    The result shares this thread's keys: use it before the thread's next call."""
    cache: _Cache | None = getattr(_LOCAL, "cache", None)
    if cache is None:
        cache = _LOCAL.cache = _Cache()
    cache.update(frozenset(slugs))
    overlay = _Index()
    for page in pages:
        overlay.add(name_key(page.title), page.slug)
    return KnownKeys(cache.index, overlay)


__all__ = ["KnownKeys", "known_keys", "slug_key"]
