"""A parse as a tree, and the change the structure rules report (W11).

:class:`Tree` adds children, subtrees and clause boundaries to a :data:`~.parse.Parse`;
:class:`Change` is what a structure rule found the text changing against its quotes: its kind
(a number's noun, roles, a quantifier, a hedge, a comparative, a negation, a link, a merge), whether
the change is clear (the text is then *unsupported*) or only likely (*uncertain*), the text's
words to mark, and the reason a reviewer reads.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

from .parse import Parse, Token

__all__ = ["CLAUSE", "KINDS", "Change", "Tree"]

KINDS = (
    "number", "role", "quantifier", "hedge", "comparative", "negation", "link", "merge",
    "opposite", "unit",
)  # fmt: skip
"""The kinds of change: each is a changed fact, role or scope that the model layer may never
turn into *supported*."""

CLAUSE = frozenset(
    ["relcl", "acl", "advcl", "ccomp", "xcomp", "csubj", "csubjpass", "parataxis", "pcomp"]
)
"""Dependency labels that open a clause of its own under their head."""


@dataclass(frozen=True)
class Change:
    """A change of meaning the text makes against its quotes."""

    kind: str
    clear: bool
    words: tuple[str, ...]
    reason: str


class Tree:
    """A parse with its children lists (one per text; built once per check)."""

    def __init__(self, parse: Parse) -> None:
        self.tokens = parse
        self.children: list[list[int]] = [[] for _ in parse]
        for t in parse:
            if t.head != t.i:
                self.children[t.head].append(t.i)

    def __getitem__(self, i: int) -> Token:
        return self.tokens[i]

    def __len__(self) -> int:
        return len(self.tokens)

    def __iter__(self) -> Iterator[Token]:
        return iter(self.tokens)

    def kids(self, i: int, *deps: str) -> list[int]:
        """Children of ``i`` (with one of ``deps``, if any are given)."""
        return [c for c in self.children[i] if not deps or self.tokens[c].dep in deps]

    def ancestors(self, i: int) -> Iterator[int]:
        """``i``'s head, its head's head, … up to the root."""
        seen = {i}
        while True:
            head = self.tokens[i].head
            if head in seen:
                return
            seen.add(head)
            yield head
            i = head

    def subtree(self, i: int) -> list[int]:
        out, todo = [], [i]
        while todo:
            n = todo.pop()
            out.append(n)
            todo.extend(self.children[n])
        return sorted(out)

    def clause_of(self, i: int) -> int:
        """The head of the clause ``i`` stands in: the nearest ancestor (or itself) that is a
        verb, or the root, or a token that opens a clause."""
        n = i
        while True:
            t = self.tokens[n]
            if t.pos in ("VERB", "AUX") and t.dep not in ("aux", "auxpass"):
                return n
            if t.head == n or t.dep in CLAUSE:
                return n
            n = t.head

    def passive(self, i: int) -> bool:
        """``i`` is a verb in the passive voice (or a past participle modifying a noun)."""
        t = self.tokens[i]
        if any(
            self.tokens[c].dep in ("auxpass", "nsubjpass", "csubjpass") for c in self.children[i]
        ):
            return True
        if t.tag == "VBN" and t.dep == "conj" and t.head != i:
            return self.passive(t.head)  # "was produced and distributed by"
        return t.tag == "VBN" and t.dep in ("acl", "amod")

    @cached_property
    def roots(self) -> list[int]:
        return [t.i for t in self.tokens if t.head == t.i]

    def phrase(self, i: int, limit: int = 4) -> str:
        """``i`` with the compound and adjective words before it ("Extended support")."""
        words = [
            c for c in self.children[i]
            if c < i and self.tokens[c].dep in ("compound", "amod", "nmod", "poss")
        ]  # fmt: skip
        picked = [*words[-(limit - 1) :], i] if limit > 1 else [i]
        return " ".join(self.tokens[n].text for n in sorted(picked))
