"""What the lint checks share within one run (:class:`CheckContext`), and small helpers."""

from __future__ import annotations

import difflib
import shlex
from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING

from ..doctor import FileProblem, QuoteProblem, SourceProblem, file_problems, quote_problems
from ..doctor import source_problems as doctor_source_problems
from ..errors import AffidavitError
from ..evidence import Verifier
from ..retrieval.embeddings import Embedder, load_embedder
from ..sources.store import SourceStore
from ..store.paths import read_inside
from ..store.render import GENERATED, expected_files
from ..vault import Vault

if TYPE_CHECKING:
    from .since import Scope

Progress = Callable[[str, int, int], None]
"""Called as ``progress(check, done, total)`` before each check starts (``done`` checks have
finished), and once more as ``(last check, total, total)`` when the last one has finished."""

INDEX, LOG, CONTEXT = (f"wiki/{name}" for name in GENERATED)
GENERATED_SLUGS = frozenset(name.removesuffix(".md") for name in GENERATED)
_DIFF_LINES = 8
_DIFF_WIDTH = 160
_DIFF_MAX_CHARS = 4_000_000  # beyond this, sizes are reported instead of a diff
EXAMPLES = 5


class CheckContext:
    """What the checks share within one run: the vault, its source store and verifier, and the
    re-derivations several checks need, each computed once on first use.

    ``embedder`` is the current embedding model for :func:`check_stale_embedding`; left out, the
    installed one is loaded only if the vault has vectors at all (None when the extra is missing).
    ``scope``: only what changed since the last run (:mod:`affidavit.lint.since`) is rendered,
    re-hashed and re-found; None: everything.
    """

    def __init__(
        self,
        vault: Vault,
        verifier: Verifier | None = None,
        embedder: Embedder | None = None,
        scope: Scope | None = None,
    ) -> None:
        self.vault = vault
        self.db = vault.db
        self.store = SourceStore(vault)
        self.verifier = verifier if verifier is not None else Verifier(self.store)
        self._embedder = embedder
        self.scope = scope

    @cached_property
    def root(self) -> str:
        """The vault's path, quoted for a shell command."""
        return shlex.quote(str(self.vault.root))

    restore_from = "from git"
    """Where a tampered source is restored from, in a fix hint."""
    moved = (
        "the source's text changed",
        "the quote is still in the source at other offsets; restore the source's text",
    )
    """A quote found whole but not at its recorded offsets: why, and the fix hint."""

    def tampered_source(self, source_id: str) -> tuple[int, str]:
        """How many active claims cite a tampered source, and how to restore it."""
        row = self.db.execute(
            "SELECT s.original_file, s.text_file, count(DISTINCT c.id) FROM sources s "
            "LEFT JOIN evidence e "
            "ON e.source_key = (SELECT key FROM source_keys WHERE source_id = s.id) "
            "LEFT JOIN claims c ON c.id = e.claim_id AND c.status = 'active' WHERE s.id = ?",
            (source_id,),
        ).fetchone()
        files = " ".join(shlex.quote(f) for f in (row[0], row[1]))
        hint = (
            f"restore it from git: `git -C {self.root} checkout -- {files}`, then `chmod a-w` them"
        )
        return int(row[2]), hint

    @cached_property
    def pages(self) -> set[str]:
        return {row[0] for row in self.db.execute("SELECT slug FROM pages")}

    @cached_property
    def links(self) -> list[tuple[str, str]]:
        return [
            (r[0], r[1]) for r in self.db.execute("SELECT src, dst FROM links ORDER BY src, dst")
        ]

    @cached_property
    def expected(self) -> dict[str, str]:
        """Every file under wiki/ as the database renders it (those of the scope's files the
        database renders, with a scope)."""
        if self.scope is None or self.scope.files is None:
            return expected_files(self.db)
        from .since import scoped_expected

        return scoped_expected(self.db, self.scope.files)

    @cached_property
    def files(self) -> list[FileProblem]:
        """Files under wiki/ that are missing, differ from their rendering, or are unknown (of
        the scope's files, with a scope)."""
        if self.scope is None or self.scope.files is None:
            return file_problems(self.vault, self.expected)
        from .since import scoped_file_problems

        return scoped_file_problems(self.vault, self.expected, self.scope.files)

    @cached_property
    def sources(self) -> list[SourceProblem]:
        if self.scope is None:
            return doctor_source_problems(self.vault, self.store)[1]
        from .since import scoped_source_problems

        return scoped_source_problems(self.vault, self.store, self.scope.sources)

    @property
    def checked_claims(self) -> list[str] | None:
        """The active claims whose quotes and support are checked (None: every one)."""
        if self.scope is None or self.scope.checked_claims is None:
            return None
        return sorted(self.scope.checked_claims)

    @cached_property
    def tampered(self) -> set[str]:
        """Ids of sources whose stored bytes are missing or no longer match their hashes."""
        return {p.source_id for p in self.sources if p.tampered}

    @cached_property
    def quotes(self) -> list[QuoteProblem]:
        only = self.checked_claims
        if only is None:
            return quote_problems(self.vault, self.verifier)[1]
        from .since import evidence_rows

        return quote_problems(self.vault, self.verifier, evidence_rows(self.db, only))[1]

    def embedder(self) -> Embedder | None:
        if self._embedder is None:
            self._embedder = load_embedder()
        return self._embedder

    def disk_text(self, relpath: str) -> str | None:
        """A file under the vault as text (None if missing or not a regular file, e.g. a symlink,
        which is never followed; undecodable bytes replaced)."""
        try:
            data = read_inside(self.vault.base, relpath)
        except (OSError, AffidavitError):
            return None
        return data.decode("utf-8", errors="replace")


def diff_excerpt(expected: str, actual: str, path: str, lines: int = _DIFF_LINES) -> str:
    """The first ``lines`` lines of a unified diff from the rendered ``expected`` to ``actual``."""
    if len(expected) + len(actual) > _DIFF_MAX_CHARS:
        return f"    ({len(expected):,} characters rendered, {len(actual):,} on disk)"
    diff = difflib.unified_diff(
        expected.splitlines(),
        actual.splitlines(),
        f"{path} (database)",
        f"{path} (on disk)",
        n=1,
        lineterm="",
    )
    out: list[str] = []
    for line in diff:
        if len(out) == lines + 2:  # the two header lines don't count
            out.append("…")
            break
        out.append(line if len(line) <= _DIFF_WIDTH else line[: _DIFF_WIDTH - 1] + "…")
    return "\n".join("    " + line for line in out)


def slug_of(relpath: str) -> str | None:
    """The page slug of ``wiki/<slug>.md`` (None for generated files and anything else)."""
    if not relpath.startswith("wiki/") or not relpath.endswith(".md") or relpath.count("/") != 1:
        return None
    slug = relpath[len("wiki/") : -len(".md")]
    return None if slug in GENERATED_SLUGS else slug


def examples(items: list[str]) -> str:
    shown = ", ".join(items[:EXAMPLES])
    return shown + (f" and {len(items) - EXAMPLES} more" if len(items) > EXAMPLES else "")
