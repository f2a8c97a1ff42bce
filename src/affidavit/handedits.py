"""Hand edits of ``wiki/`` become plans (SPEC §1, §3 W4): ``affidavit doctor --propose``.

Every file under ``wiki/`` is compared with what the database renders. A drifted page, a drifted
``context.md`` or an unknown ``wiki/<slug>.md`` is read by a small line-based markdown reader
(tolerant of Obsidian edits: CRLF, trailing spaces, extra blank lines, ``*``/``_`` emphasis,
wikilinks; the frontmatter as YAML; every backslash escape the renderer adds undone, so a rendered
page reads back as the same claims) and what it can express becomes operations of the closed set:

* a new paragraph whose footnotes carry a quote in “…” or "…" and a source id (12–64 hex) becomes
  ``add_claims`` in its ``## Section`` (``update_context`` in ``context.md``);
* a paragraph carrying the footnote of an existing claim (its ``c-…`` id) with new text becomes
  ``supersede_claim``;
* a new ``- [Title](slug.md)`` or ``[[slug]]`` line under "See also" or "Linked from" becomes
  ``link_pages``;
* an unknown page file becomes ``create_page`` (and ``add_claims`` for its further sections).

Each file's operations go, at most 20 per plan, through :func:`affidavit.inbox.propose` with a
fresh nonce: the same gate as every other plan. Nothing is written here; the files stay as they
are until a plan is approved (apply re-renders the pages it touches). What no operation can
express (a paragraph without a quote, a deleted claim, a removed link, a title edit) is reported
with its file and line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import unquote

import yaml
from pydantic import TypeAdapter, ValidationError

from .errors import AffidavitError
from .evidence import normalize_quote
from .inbox import Proposal, propose
from .plan.nonce import issue_nonce
from .plan.schema import MAX_OPERATIONS, RESERVED_SLUGS, SLUG_PATTERN, ClaimDraft, Operation
from .store.paths import inside
from .store.render import expected_files
from .vault import Vault

__all__ = [
    "AUTHOR",
    "REASONS",
    "HandEditProposal",
    "Unconverted",
    "parse_markdown",
    "propose_hand_edits",
]

AUTHOR = "doctor (hand edit)"
LINK_SECTIONS = ("see also", "linked from")
HISTORY_SECTIONS = ("superseded", "retracted")
"""Generated lists of past claims (see :mod:`affidavit.store.render`): never operations."""
_MAX_CLAIMS = 30  # claims per create_page / add_claims / update_context (schema limit)
_OPERATION: TypeAdapter[Any] = TypeAdapter(Operation)
_GIT = "restore the file with `git -C VAULT checkout -- {file}`"
REASONS = {
    "no-quote": "needs a quote: add a footnote with “quote” and the source id",
    "code": "code blocks can't become claims",
    "twice": "footnote [^{label}] is defined twice; the first definition counts",
    "schema": "{what} can't be proposed: {error}",
    "not-links": "only links belong under '{heading}'",
    "bad-link": "link target '{target}' {problem}; links need existing pages",
    "title": "title and summary edits aren't plan operations yet; " + _GIT,
    "summary": "summary edits aren't plan operations yet; " + _GIT,
    "superseded": "the Superseded list is generated; edits to it can't become operations",
    "retracted": "the Retracted list is generated; edits to it can't become operations "
    "(`affidavit sources retract` or a retract_claim plan retracts claims)",
    "moved": "moving claim {id} to another section isn't a plan operation yet; " + _GIT,
    "citations": "the citations of claim {id} were edited; change its text too to supersede it",
    "repeat": "repeats claim {id}",
    "deleted": "claim {id} was deleted; deletions aren't plan operations yet "
    "(reject the deletion: " + _GIT + ")",
    "unlinked": "the link to '{slug}' under '{heading}' was removed; removing links isn't a "
    "plan operation yet; " + _GIT,
    "new-superseded": "a new page has no superseded or retracted claims; the line is ignored",
    "no-claims": "a new page needs at least one paragraph with a quoted footnote",
    "too-many": "{count} operation(s) past the first 20 wait: approve this plan, then run "
    "`affidavit doctor --propose` again",
    "generated": "generated file: hand edits can't become operations; " + _GIT,
    "subfolder": "pages live directly in wiki/; move the file there to propose it",
    "bad-slug": "'{name}' is not a usable page slug (lowercase letters, digits, hyphens; not "
    "index, log or context); rename the file",
    "formatting": "the file differs from the rendered page only in what the wiki doesn't keep "
    "(formatting, case, emphasis, block ids); " + _GIT,
    "missing": "the file is missing; deleting a page isn't a plan operation; " + _GIT,
    "not-utf8": "not UTF-8 text; save it as UTF-8 and run doctor again",
    "symlink": "a symbolic link: doctor doesn't read through links; replace it with the file",
}
"""Why an edit could not become an operation, by key (``Unconverted.reason`` is the text)."""

_REF = re.compile(r"\[\^([^\]\s]+)\]")
_DEF = re.compile(r"^ {0,3}\[\^([^\]\s]+)\]:[ \t]*(.*)$")
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?$")
_ITEM = re.compile(r"^ {0,3}(?:[-*+]|\d{1,9}[.)])[ \t]+(.*)$")
_RULE = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")
_PROTECTED = re.compile("[\ue000-\ue07f]")
_BLOCK_ID = re.compile(r"\s\^[A-Za-z0-9-]+\s*$")  # Obsidian's "text ^block-id"
_WIKILINK = re.compile(r"\[\[([^\[\]|]+?)(?:\|([^\[\]]*))?\]\]")
_MDLINK = re.compile(r"!?\[([^\[\]]*)\]\(\s*<?([^()<>\s]*)>?(?:\s+\"[^\"]*\")?\s*\)")
_EMPHASIS = re.compile(r"(\*\*|\*|~~)(\S(?:.*?\S)?)\1|(?<!\w)(__|_)(\S(?:.*?\S)?)\3(?!\w)")
_QUOTES = (re.compile(r"“(.+)”\s*[—–]"), re.compile(r"“(.+?)”"), re.compile(r'"(.+?)"'))
_SOURCE_REFS = (
    re.compile(r"source\s*`([0-9a-fA-F]{12,64})`"),
    re.compile(r"sources/([0-9a-fA-F]{12,64})[.)]"),
    re.compile(r"(?<![0-9A-Za-z-])([0-9a-fA-F]{12,64})(?![0-9A-Za-z])"),
)
_CLAIM_ID = re.compile(r"(?<![0-9A-Za-z-])(c-[0-9a-f]{16})(?![0-9A-Za-z])")


@dataclass(frozen=True)
class Unconverted:
    """Something in a hand-edited file no operation can express (``line`` None: the whole file)."""

    file: str
    line: int | None
    reason: str
    text: str = ""


@dataclass
class HandEditProposal:
    """One plan proposed for one hand-edited file, or the report of a file that gave no plan.

    ``status`` is the plan's (``pending``, ``applied``, ``rejected``), or ``failed`` when the gate
    refused the whole plan (``error`` says why), ``already-proposed`` when the same operations wait
    in a pending doctor plan (``plan_id``), or ``nothing`` when the file gave no operation.
    """

    file: str
    status: str
    operations: list[dict[str, Any]] = field(default_factory=list)
    unconverted: list[Unconverted] = field(default_factory=list)
    plan_id: str | None = None
    error: str = ""
    proposal: Proposal | None = None

    @property
    def message(self) -> str:
        """What happened, for people: the plan's fate, then one line per unconverted edit."""
        kinds = ", ".join(str(op["op"]) for op in self.operations)
        head = {
            "failed": f"plan refused [{kinds}]: {self.error}",
            "already-proposed": f"already in the inbox as plan {str(self.plan_id)[:12]} [{kinds}]",
            "nothing": "no operation could be made from the hand edit",
        }.get(self.status, f"{self.proposal.message if self.proposal else ''} [{kinds}]")
        lines = [f"{self.file}: {head}"]
        for u in self.unconverted:
            lines.append(
                f"  ✗ {u.file}:{u.line}: {u.reason}" if u.line else f"  ✗ {u.file}: {u.reason}"
            )
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "status": self.status,
            "plan_id": self.plan_id,
            "message": self.message,
            "error": self.error,
            "operations": self.operations,
            "unconverted": [asdict(u) for u in self.unconverted],
            "admission": self.proposal.admission.to_json() if self.proposal else None,
        }


# --- reading markdown ---------------------------------------------------------------------------


@dataclass
class Block:
    """A paragraph, list item or fenced code block, with the section it sits in."""

    kind: str  # para | item | code
    line: int
    section: str | None  # None: before the first section heading
    text: str


@dataclass
class Note:
    """A footnote definition (continuation lines joined)."""

    line: int
    text: str


@dataclass
class Doc:
    """What :func:`parse_markdown` reads from a page."""

    meta: dict[str, str] = field(default_factory=dict)
    title: str | None = None
    title_line: int = 0
    blocks: list[Block] = field(default_factory=list)
    notes: dict[str, Note] = field(default_factory=dict)
    twice: list[tuple[str, int]] = field(default_factory=list)  # footnotes defined again


def _meta_value(raw: str) -> str:
    raw = raw.strip()
    if raw.startswith('"'):
        try:
            return str(json.loads(raw))
        except ValueError:
            return raw.strip('"')
    if len(raw) > 1 and raw[0] == raw[-1] == "'":
        return raw[1:-1].replace("''", "'")
    return raw


def _frontmatter(lines: list[str]) -> dict[str, str]:
    """The frontmatter's scalar values as text, read as YAML (as it is written: PyYAML); a block
    that is not valid YAML after a hand edit is read line by line instead."""
    try:
        data = yaml.safe_load("\n".join(lines))
    except (yaml.YAMLError, RecursionError):  # nested past the parser's stack: not frontmatter
        data = None
    if isinstance(data, dict):
        return {
            str(k): str(v)
            for k, v in data.items()
            if isinstance(v, (str, int, float)) or hasattr(v, "isoformat")
        }
    meta: dict[str, str] = {}
    for ln in lines:
        key, sep, value = ln.partition(":")
        if sep and key.strip() and not key[0].isspace():
            meta[key.strip()] = _meta_value(value)
    return meta


def parse_markdown(text: str) -> Doc:
    """Read frontmatter, the ``#`` title, blocks by ``##`` section, and footnote definitions."""
    text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    lines = [ln.rstrip() for ln in text.split("\n")]
    doc, start = Doc(), 0
    if lines and lines[0] == "---":
        end = next((j for j in range(1, len(lines)) if lines[j] in ("---", "...")), None)
        if end is not None:
            doc.meta = _frontmatter(lines[1:end])
            start = end + 1
    section: str | None = None
    block: Block | None = None
    note: Note | None = None
    fence = False
    for lineno, line in enumerate(lines[start:], start + 1):
        if fence and block is not None:
            block.text += "\n" + line
            fence = not _FENCE.match(line)
            continue
        if not line.strip():
            block = None
            continue
        if note is not None and block is None and line.startswith(("    ", "\t")):
            note.text += " " + line.strip()
            continue
        note = None
        if heading := _HEADING.match(line):
            block = None
            if len(heading.group(1)) == 1 and doc.title is None:
                doc.title, doc.title_line = _plain(heading.group(2)), lineno
            else:
                section = _plain(heading.group(2))
        elif definition := _DEF.match(line):
            block, note = None, Note(lineno, definition.group(2))
            if definition.group(1) in doc.notes:
                doc.twice.append((definition.group(1), lineno))
            else:
                doc.notes[definition.group(1)] = note
        elif _RULE.match(line):
            block = None
        elif block is not None and not _FENCE.match(line) and not _ITEM.match(line):
            block.text += " " + line.lstrip(" >").strip()
        else:
            item, fence = _ITEM.match(line), bool(_FENCE.match(line))
            kind = "code" if fence else "item" if item else "para"
            text = line if fence else item.group(1) if item else line.lstrip(" >").strip()
            block = Block(kind, lineno, section, text)
            doc.blocks.append(block)
    return doc


def _protect(text: str) -> str:
    """Replace backslash-escaped punctuation by private-use stand-ins, so no pattern sees it."""
    return _ESCAPED.sub(lambda m: chr(0xE000 + ord(m.group(1))), text)


def _restore(text: str) -> str:
    return _PROTECTED.sub(lambda m: chr(ord(m.group()) - 0xE000), text)


def _plain(markdown: str) -> str:
    """The visible text of inline markdown: footnote refs dropped, links reduced to their text,
    paired emphasis markers removed, backslash escapes resolved, whitespace collapsed."""
    text = _BLOCK_ID.sub("", _REF.sub("", _protect(markdown)))
    text = _WIKILINK.sub(lambda m: m.group(2) or m.group(1), text)
    text = _MDLINK.sub(r"\1", text)
    for _ in range(3):  # ***both*** takes two passes
        text = _EMPHASIS.sub(lambda m: m.group(2) or m.group(4), text)
    return " ".join(_restore(text).split())


def _key(text: str | None) -> str:
    """What two texts share when they state the same thing (the gate's duplicate test)."""
    return normalize_quote(text or "")


def link_targets(markdown: str) -> list[str]:
    targets = [m.group(1) for m in _WIKILINK.finditer(markdown)]
    targets += [unquote(m.group(2)) for m in _MDLINK.finditer(_protect(markdown))]
    return [t.split("#", 1)[0].strip().removeprefix("./").removesuffix(".md") for t in targets]


@dataclass(frozen=True)
class _Cited:
    """What the footnotes of one paragraph say: the evidence, claim ids and what is wrong."""

    evidence: list[dict[str, str]]
    claim_ids: list[str]
    problems: list[str]


def _cited(doc: Doc, markdown: str) -> _Cited:
    evidence: list[dict[str, str]] = []
    ids: list[str] = []
    problems: list[str] = []
    for label in dict.fromkeys(_REF.findall(markdown)):
        note = doc.notes.get(label)
        if note is None:
            problems.append(f"footnote [^{label}] has no definition")
            continue
        text = _protect(note.text)
        quote = next((m for p in _QUOTES if (m := p.search(text))), None)
        rest = text if quote is None else text[: quote.start()] + " " + text[quote.end() :]
        source = next((m.group(1) for p in _SOURCE_REFS if (m := p.search(rest))), None)
        ids += _CLAIM_ID.findall(rest)
        where = f"footnote [^{label}] (line {note.line})"
        if quote is None:
            problems.append(f"{where} has no quote in “…”")
        if source is None:
            problems.append(f"{where} names no source id (12–64 hex characters)")
        if quote is not None and source is not None:
            words = " ".join(_restore(quote.group(1)).split())
            evidence.append({"source": source.lower(), "quote": words})
    return _Cited(evidence, ids, problems)


# --- turning a file into operations -------------------------------------------------------------


@dataclass(frozen=True)
class _DbClaim:
    id: str
    section: str
    text: str
    quotes: frozenset[str]


def _first_error(exc: ValidationError) -> str:
    first = exc.errors(include_url=False)[0]
    return ".".join(str(p) for p in first["loc"]) + ": " + str(first["msg"])


class _Converter:
    """Collects the operations and the unconverted edits of one file."""

    def __init__(self, vault: Vault, relpath: str, doc: Doc) -> None:
        self.vault, self.relpath, self.doc = vault, relpath, doc
        rows = vault.db.execute("SELECT slug, title FROM pages").fetchall()
        self.pages = {str(r["slug"]): str(r["title"]) for r in rows}
        self.ops: list[dict[str, Any]] = []
        self.claims: dict[str, list[dict[str, Any]]] = {}  # section -> drafts, in file order
        self.sections: dict[str, str] = {}  # key of a heading -> the section name it stands for
        self.unconverted: list[Unconverted] = []
        for label, line in doc.twice:
            self.skip(line, "twice", label=label)

    def skip(self, line: int | None, why: str, text: str = "", **fields: object) -> None:
        """Report that something at ``line`` can't become an operation: ``REASONS[why]``."""
        reason = REASONS[why].format(file=self.relpath, **fields) if why in REASONS else why
        self.unconverted.append(Unconverted(self.relpath, line, reason, text))

    def add_op(self, op: dict[str, Any], line: int | None) -> None:
        """Add ``op`` once, in the schema's canonical form, or report why the schema refuses it."""
        try:
            valid = _OPERATION.validate_python(op).model_dump(mode="json")
        except ValidationError as exc:
            self.skip(line, "schema", what=op["op"], error=_first_error(exc))
            return
        if valid not in self.ops:
            self.ops.append(valid)

    def draft(self, block: Block, evidence: list[dict[str, str]]) -> dict[str, Any] | None:
        """The claim a paragraph states, or None (reported) when the schema would refuse it."""
        text = _plain(block.text)
        try:
            return ClaimDraft.model_validate({"text": text, "evidence": evidence}).model_dump()
        except ValidationError as exc:
            self.skip(block.line, "schema", text, what="the claim", error=_first_error(exc))
            return None

    def new_claim(self, block: Block, cited: _Cited, default_section: str) -> None:
        text = _plain(block.text)
        if block.kind == "code":
            self.skip(block.line, "code", block.text)
        elif not cited.evidence and not cited.problems:
            self.skip(block.line, "no-quote", text)
        elif cited.problems:
            for problem in cited.problems:
                self.skip(block.line, problem, text)
        elif (draft := self.draft(block, cited.evidence)) is not None:
            section = block.section or default_section
            section = self.sections.setdefault(_key(section), section)
            self.claims.setdefault(section, []).append(draft)

    def links(self, block: Block, slug: str, heading: str, known: set[str]) -> set[str]:
        """Propose the new links of a "See also" / "Linked from" line; return the pages it names."""
        named: set[str] = set()
        targets = link_targets(block.text)
        if not targets:
            self.skip(block.line, "not-links", _plain(block.text), heading=heading)
        by_title = {t.casefold(): s for s, t in self.pages.items()}
        for target in targets:
            other = target if target in self.pages else by_title.get(target.casefold())
            if other is None or other == slug:
                why = "is this page" if other == slug else "is not a page in the database"
                self.skip(block.line, "bad-link", target=target, problem=why)
                continue
            named.add(other)
            if other not in known:
                page, to = (slug, other) if heading == "see also" else (other, slug)
                self.add_op({"op": "link_pages", "page": page, "to": to}, block.line)
        return named

    def claim_ops(self, make: Callable[[str, list[dict[str, Any]]], dict[str, Any]]) -> None:
        for section, drafts in self.claims.items():
            for i in range(0, len(drafts), _MAX_CLAIMS):
                self.add_op(make(section, drafts[i : i + _MAX_CLAIMS]), None)
        self.claims = {}


def _active_claims(vault: Vault, slug: str) -> list[_DbClaim]:
    rows = vault.db.execute(
        "SELECT id, section, text FROM claims WHERE page_slug = ? AND status = 'active' "
        "ORDER BY position, id",
        (slug,),
    ).fetchall()
    out = []
    for row in rows:
        quotes = vault.db.execute("SELECT quote FROM evidence WHERE claim_id = ?", (row["id"],))
        out.append(
            _DbClaim(row["id"], row["section"], row["text"], frozenset(_key(q[0]) for q in quotes))
        )
    return out


def _links(vault: Vault, slug: str) -> dict[str, set[str]]:
    """The pages ``slug`` links to ("see also") and the pages linking to it ("linked from")."""
    out = vault.db.execute("SELECT dst FROM links WHERE src = ?", (slug,)).fetchall()
    inc = vault.db.execute("SELECT src FROM links WHERE dst = ?", (slug,)).fetchall()
    return {"see also": {r[0] for r in out}, "linked from": {r[0] for r in inc}}


def _check_title(conv: _Converter, expected: Doc) -> None:
    doc = conv.doc
    pairs = [(doc.title, expected.title)]
    pairs += [(doc.meta[k], expected.meta.get(k)) for k in ("title", "summary") if k in doc.meta]
    if any(_key(got) != _key(want) for got, want in pairs):
        conv.skip(doc.title_line or None, "title")


def _match_claims(
    doc: Doc, by_key: dict[str, _DbClaim], summary: Block | None, context: bool
) -> dict[int, _DbClaim]:
    """Which block still states which active claim: a block stating a claim's text in the
    claim's own section first, only then one elsewhere (a moved claim). The page's summary line
    is never a claim, even when it says the same words as one (the extractive engine's first
    claim often is the summary), so an edit elsewhere doesn't make it a "moved" claim."""
    matched: dict[int, _DbClaim] = {}
    for own_section in (True, False):
        for index, block in enumerate(doc.blocks):
            claim = by_key.get(_key(_plain(block.text)))
            if index in matched or block is summary or claim is None:
                continue
            in_place = context or _key(block.section) == _key(claim.section)
            if in_place == own_section and claim not in matched.values():
                matched[index] = claim
    return matched


def _existing_page(conv: _Converter, slug: str, expected: Doc) -> None:
    """Compare an edited page (``slug`` "" for context.md) with its claims in the database."""
    doc, context = conv.doc, slug == ""
    claims = _active_claims(conv.vault, slug)
    by_key = {_key(c.text): c for c in claims}
    by_id = {c.id: c for c in claims}
    conv.sections = {_key(c.section): c.section for c in claims}
    boiler = {_key(_plain(b.text)) for b in expected.blocks} - set(by_key)
    history = {
        _key(_plain(b.text))
        for b in expected.blocks
        if (b.section or "").casefold() in HISTORY_SECTIONS
    }
    summary = None if context else next((b for b in doc.blocks if b.section is None), None)
    if not context:
        _check_title(conv, expected)
    was_summary = next((_key(_plain(b.text)) for b in expected.blocks if b.section is None), None)
    matched = _match_claims(doc, by_key, summary, context)
    seen = {c.id for c in matched.values()}
    known = {} if context else _links(conv.vault, slug)
    named: dict[str, set[str]] = {heading: set() for heading in known}
    for index, block in enumerate(doc.blocks):
        heading, key = (block.section or "").casefold(), _key(_plain(block.text))
        cited = _cited(doc, block.text)
        ids = [i for i in cited.claim_ids if i in by_id and i not in seen]
        if not key:
            continue
        if heading in known:
            named[heading] |= conv.links(block, slug, heading, known[heading])
        elif heading in HISTORY_SECTIONS and not context:
            if key not in history:
                conv.skip(block.line, heading, _plain(block.text))
        elif (claim := matched.get(index)) is not None:
            quotes = frozenset(_key(e["quote"]) for e in cited.evidence)
            if not context and _key(block.section) != _key(claim.section):
                conv.skip(block.line, "moved", id=claim.id)
            elif quotes != claim.quotes:
                conv.skip(block.line, "citations", id=claim.id)
        elif block is summary and not _REF.search(block.text):
            if key != was_summary:  # the summary may say what a claim says: it is no claim
                conv.skip(block.line, "summary", _plain(block.text))
        elif key in by_key:
            conv.skip(block.line, "repeat", _plain(block.text), id=by_key[key].id)
        elif key in boiler:
            continue
        elif ids and cited.evidence and not cited.problems:
            seen.add(ids[0])
            if (draft := conv.draft(block, cited.evidence)) is not None:
                reason = f"hand edit of {conv.relpath}, line {block.line}"
                op = {"op": "supersede_claim", "claim": ids[0], "by": draft, "reason": reason}
                conv.add_op(op, block.line)
        else:
            conv.new_claim(block, cited, "Context" if context else "Notes")
    for claim in claims:
        if claim.id not in seen:
            conv.skip(None, "deleted", claim.text, id=claim.id)
    for heading, slugs in known.items():
        for other in sorted(slugs - named[heading]):
            conv.skip(None, "unlinked", slug=other, heading=heading)
    if context:
        conv.claim_ops(lambda _s, d: {"op": "update_context", "mode": "append", "entries": d})
    else:
        conv.claim_ops(lambda s, d: {"op": "add_claims", "page": slug, "section": s, "claims": d})


def _new_page(conv: _Converter, slug: str) -> None:
    """Turn an unknown ``wiki/<slug>.md`` into ``create_page`` and what follows it."""
    doc = conv.doc
    title = doc.meta.get("title") or doc.title or slug.replace("-", " ").capitalize()
    summary = doc.meta.get("summary", "")
    named: dict[str, set[str]] = {"see also": set(), "linked from": set()}
    for block in doc.blocks:
        heading = (block.section or "").casefold()
        if heading in LINK_SECTIONS:
            named[heading] |= conv.links(block, slug, heading, set())
        elif heading in HISTORY_SECTIONS:
            conv.skip(block.line, "new-superseded", _plain(block.text))
        elif not summary and block.section is None and not _REF.search(block.text):
            summary = _plain(block.text)
        else:
            conv.new_claim(block, _cited(doc, block.text), "Overview")
    links, conv.ops = conv.ops, []
    if not conv.claims:
        conv.skip(None, "no-claims")
        return
    first = next(iter(conv.claims))
    drafts = conv.claims.pop(first)
    category = doc.meta.get("category", "general")
    create = {
        "op": "create_page",
        "slug": slug,
        "title": title,
        "summary": summary or title,
        "category": category if re.match(SLUG_PATTERN, category) else "general",
        "section": first,
        "claims": drafts[:_MAX_CLAIMS],
    }
    conv.add_op(create, doc.title_line or None)
    if not conv.ops:
        return
    if drafts[_MAX_CLAIMS:]:
        conv.claims = {first: drafts[_MAX_CLAIMS:], **conv.claims}
    conv.claim_ops(lambda s, d: {"op": "add_claims", "page": slug, "section": s, "claims": d})
    conv.ops += links
    if len(conv.ops) > MAX_OPERATIONS:
        conv.skip(None, "too-many", count=len(conv.ops) - MAX_OPERATIONS)
        del conv.ops[MAX_OPERATIONS:]


def _convert(vault: Vault, relpath: str, text: str, expected: str | None) -> _Converter:
    conv = _Converter(vault, relpath, parse_markdown(text))
    name = relpath.removeprefix("wiki/").removesuffix(".md")
    if relpath in ("wiki/index.md", "wiki/log.md"):
        conv.skip(None, "generated")
    elif expected is not None:
        _existing_page(conv, "" if name == "context" else name, parse_markdown(expected))
    elif "/" in name:
        conv.skip(None, "subfolder")
    elif not re.match(SLUG_PATTERN, name) or name in RESERVED_SLUGS:
        conv.skip(None, "bad-slug", name=name)
    else:
        _new_page(conv, name)
    if not conv.ops and not conv.unconverted:
        conv.skip(None, "formatting")
    return conv


# --- proposing ----------------------------------------------------------------------------------


def _pending_duplicate(vault: Vault, relpath: str, ops: list[dict[str, Any]]) -> str | None:
    rows = vault.db.execute(
        "SELECT id, plan_json FROM plans WHERE origin = ? AND status = 'pending'",
        (f"doctor:{relpath}",),
    )
    return next(
        (str(r["id"]) for r in rows if json.loads(r["plan_json"])["operations"] == ops), None
    )


def _propose_file(vault: Vault, conv: _Converter) -> list[HandEditProposal]:
    """Propose the file's operations, at most 20 per plan; a refused plan is recorded, not raised."""
    out: list[HandEditProposal] = []
    for i in range(0, len(conv.ops), MAX_OPERATIONS):
        ops = conv.ops[i : i + MAX_OPERATIONS]
        result = HandEditProposal(conv.relpath, "failed", ops)
        out.append(result)
        result.plan_id = _pending_duplicate(vault, conv.relpath, ops)
        if result.plan_id is not None:
            result.status = "already-proposed"
            continue
        summary = f"Hand edits of {conv.relpath}, found by affidavit doctor"[:300]
        try:
            plan = {
                "nonce": issue_nonce(vault.db, vault.clock, "doctor"),
                "summary": summary,
                "operations": ops,
            }
            proposal = propose(vault, plan, author=AUTHOR, origin=f"doctor:{conv.relpath}")
        except AffidavitError as exc:
            result.error = str(exc)
            continue
        result.status, result.plan_id, result.proposal = proposal.status, proposal.plan_id, proposal
    if not out:
        out.append(HandEditProposal(conv.relpath, "nothing"))
    out[0].unconverted = conv.unconverted
    return out


def propose_hand_edits(vault: Vault) -> list[HandEditProposal]:
    """Turn every hand edit under ``wiki/`` into plans waiting at the gate; report the rest.

    Returns one result per plan proposed (a file gives several when it holds more than 20
    operations) and one result with status ``nothing`` per edited file that gave no operation;
    each file's unconverted edits ride on its first result. No file is written.
    """
    expected = expected_files(vault.db)
    paths = {str(p.relative_to(vault.root)) for p in vault.wiki_dir.rglob("*.md")}
    results: list[HandEditProposal] = []
    for relpath in sorted(paths | set(expected)):
        path, want = inside(vault.root, relpath, final_symlink_ok=True), expected.get(relpath)
        conv = _Converter(vault, relpath, Doc())
        if path.is_symlink():
            conv.skip(None, "symlink")
        elif not path.is_file():
            conv.skip(None, "missing")
        else:
            data = path.read_bytes()
            if want is not None and data == want.encode():
                continue
            try:
                conv = _convert(vault, relpath, data.decode("utf-8"), want)
            except UnicodeDecodeError:
                conv.skip(None, "not-utf8")
        done = _propose_file(vault, conv)
        if any(r.status == "applied" for r in done):  # the policy applied it: files changed
            expected = expected_files(vault.db)
        results += done
    return results
