"""Sanitizer flags: things in a source's text a reader can't see, or that talk to the model.

:func:`scan` reports, with offsets into the extracted text,

    invisible     zero-width characters, soft hyphens, word joiners, a BOM inside the text, tag
                  characters (U+E0000–E007F)
    bidi          bidirectional overrides and isolates (U+202A–202E, U+2066–2069), direction marks
    control       C0 controls but tab, newline, carriage return and form feed; DEL; C1 controls
    html_comment  ``<!-- ... -->`` in markdown or plain text (a renderer hides it)
    base64        runs of 100 or more base64 characters (wrapped lines count together)
    homoglyph     a word that mixes Latin letters with Cyrillic or Greek ones ("pаypal")
    instruction   text addressed to a model: "ignore previous instructions", role tags, and the like

Extraction adds what only the original's format shows (W12): ``hidden_styling`` (HTML text its
CSS or attributes hide, :mod:`affidavit.sources.css`), ``hidden`` (text that is not rendered as page
text: ``<noscript>``, ``<svg>``, closed ``<dialog>``/``<details>``, markdown link reference
definitions, image alt text, link titles, invisible, white, tiny or off-page PDF text), ``struck``
(``<del>``, ``<s>``, ``<strike>``, ``line-through``, markdown ``~~...~~``) and, in HTML, its own
``html_comment`` flags. Flags are evidence for a person and for the gate; they never alter the
stored bytes or the extracted text. Everything here is regex-driven: a 5 MB text scans in < 1 s.
"""

from __future__ import annotations

import importlib
import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

FLAG_KINDS = (
    "invisible",
    "bidi",
    "control",
    "html_comment",
    "hidden_styling",
    "hidden",
    "struck",
    "base64",
    "homoglyph",
    "instruction",
)
"""Every kind of flag a source can carry."""

MERGED_KINDS = frozenset(
    {"invisible", "bidi", "control", "base64", "hidden_styling", "hidden", "struck"}
)
"""Kinds whose touching or overlapping runs are reported as one flag."""

UNSEEN_KINDS = frozenset({"hidden_styling", "hidden", "struck", "html_comment"})
"""Kinds that mark text a reader of the original does not see as page text (W12)."""


@dataclass(frozen=True)
class Flag:
    """One sanitizer finding over ``text[start:end]`` of a source's extracted text."""

    kind: str
    start: int
    end: int
    detail: str

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind, "start": self.start, "end": self.end, "detail": self.detail}


_INVISIBLE = re.compile(
    "[\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200d\u2060-\u2064"
    "\u3164\ufeff\uffa0\U000e0000-\U000e007f]+"
    "|[\ufe00-\ufe0f\U000e0100-\U000e01ef]{2,}"  # one selector styles an emoji; runs smuggle data
)
_JOINERS = frozenset("\u200c\u200d")
_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]+")
_CONTROL = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]+")
_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_BASE64_LINE = r"[A-Za-z0-9+/]{16,}={0,2}"
_BASE64 = re.compile(rf"{_BASE64_LINE}(?:\r?\n{_BASE64_LINE})*")
_BASE64_MIN = 100
_BASE64_MIXED = (re.compile("[A-Z]"), re.compile("[a-z]"), re.compile("[0-9]"))
"""Encoded data mixes cases and digits; rules of dashes, long words and hex digests don't."""

_LATIN = "A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u1e00-\u1eff"
_CYRILLIC = "\u0400-\u052f\u1c80-\u1c8f\u2de0-\u2dff\ua640-\ua69f"
_GREEK = "\u0370-\u03ff\u1f00-\u1fff"
_NON_LATIN_RUN = re.compile(f"[{_CYRILLIC}{_GREEK}]+")
_HAS_LATIN = re.compile(f"[{_LATIN}]")
_HAS_CYRILLIC = re.compile(f"[{_CYRILLIC}]")
_HAS_GREEK = re.compile(f"[{_GREEK}]")
_WORD_TAIL = re.compile(r"\w*")

_ANY = r"(?:all\s+|any\s+|of\s+|the\s+|your\s+|my\s+|these\s+|those\s+|every\s+)*"
_DIRECTIVES = (
    r"(?:instructions?|prompts?|directions?|directives?|rules|guidelines|commands?|orders)"
)
_MODEL = r"(?:ai|llm|language\s+model|assistant|chatbot|chat\s*bot|agent|model|gpt)"
INSTRUCTION_PATTERNS: tuple[tuple[str, str], ...] = (
    (
        "ignore previous instructions",
        rf"\b(?:ignore|disregard|forget|skip|drop|abandon)\s+{_ANY}"
        rf"(?:previous|prior|above|earlier|preceding|foregoing|former|original|initial|system|old)\s+"
        rf"(?:{_DIRECTIVES}|context|messages?|conversation)",
    ),
    (
        "ignore the rest of the data",
        r"\b(?:ignore|disregard)\s+(?:the\s+rest\s+of\s+(?:this|the)|everything\s+else\s+in\s+"
        r"(?:this|the))\s+(?:data|document|text|input|content|page|prompt|message)\b",
    ),
    (
        "forget everything",
        r"\b(?:forget|ignore|disregard)\s+(?:everything|all)\s+(?:you\s+(?:were|have\s+been)\s+told"
        r"|you\s+know|(?:that\s+)?came\s+before)",
    ),
    (
        "role reassignment",
        r"\byou\s+are\s+now\s+(?:a|an|the|my|acting|playing|no\s+longer|in\s+(?:developer|god|dan)"
        r"\s+mode|free|unrestricted|unfiltered|jailbroken|dan)\b",
    ),
    ("new instructions", r"\bnew\s+(?:system\s+)?instructions\b"),
    ("system prompt", r"\bsystem\s+(?:prompt|message|instructions?)\b"),
    (
        "hide from the user",
        r"\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|alert|notify|mention\s+(?:this\s+|it\s+)?to"
        r"|reveal\s+(?:this\s+|it\s+)?to|show\s+(?:this\s+|it\s+)?to)\s+(?:the\s+)?"
        r"(?:user|human|operator)s?\b",
    ),
    (
        "as an AI",
        r"\bas\s+an?\s+(?:(?:ai|llm|chatbot|(?:large\s+)?language\s+model|artificial\s+intelligence)\b"
        r"|a\.i\.)",
    ),
    ("chat role tag", r"</?\s*(?:system|assistant|user|developer|tool|human|instructions?)\s*>"),
    (
        "chat template token",
        r"<\|(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id|end_header_id)"
        r"\|>|\[/?inst\]|<</?sys>>",
    ),
    ("chat transcript role", r"(?m)^[ \t>]*(?:assistant|human|user|system)\s*:"),
    (
        "override the rules",
        rf"\b(?:override|bypass|circumvent)\s+{_ANY}"
        r"(?:instructions?|rules|safety|guidelines|restrictions|filters?|polic(?:y|ies)|guardrails"
        r"|system\s+prompt|programming)\b",
    ),
    ("pretend", r"\bpretend\s+(?:to\s+be|that\s+you\s+are|you\s+are)\b"),
    ("jailbreak", r"\b(?:jailbreak|jailbroken|dan\s+mode|developer\s+mode\s+(?:enabled|on))\b"),
    (
        "message to the model",
        rf"\b(?:(?:note|message|attention|instructions?)\s+(?:to|for)\s+(?:the\s+|any\s+|all\s+)?"
        rf"{_MODEL}s?\b|if\s+you\s+are\s+an?\s+{_MODEL}\b)",
    ),
    (
        "instruction marker",
        r"(?m)^[ \t#>*=-]*(?:core|hidden|secret|system)\s+(?:instructions?|directives?)\b",
    ),
    (
        "from now on",
        r"\bfrom\s+now\s+on\s*,?\s+(?:you\s+(?:will|must|are|shall)|always|never|only|respond"
        r"|reply|answer)\b",
    ),
    (
        "exfiltration",
        r"\b(?:send|post|upload|forward|email|leak)\s+(?:all\s+|the\s+|this\s+|your\s+|any\s+)*"
        r"(?:conversation|chat|credentials|passwords?|api\s+keys?|secrets?|tokens?|history)"
        r"(?:\s+(?:history|logs?))?\s+to\b",
    ),
    (
        "reveal the prompt",
        r"\b(?:reveal|print|show|repeat|output|leak|dump)\s+(?:me\s+)?(?:your|the)\s+(?:system\s+"
        r"|hidden\s+|initial\s+|original\s+)?(?:prompt|instructions)\b",
    ),
)
"""The curated instruction patterns: ``(name, regex)``, matched case-insensitively."""


def _literal_starts(pattern: str, skip: bool = False) -> tuple[str, ...] | None:
    """Strings one of which every match of ``pattern`` (case-sensitive) begins with: the literal
    start of each alternative of its first branch, through groups ("(?:ignore|disregard)\\s+"
    gives "ignore" and "disregard"). None when some match could begin otherwise (an anchor, a
    class, an optional first item) or the pattern's parse is not one this reads. ``skip``:
    first pass over leading anchors and optional items ("^[ \\t>]*"): the strings are then
    only known to be inside every match."""
    try:  # re's own parser, read only: any surprise (another Python) gives None
        _parser = importlib.import_module("re._parser")
        _constants = importlib.import_module("re._constants")
        if re.compile(pattern).flags & (re.IGNORECASE | re.LOCALE):
            return None
        items = list(_parser.parse(pattern).data)
        while skip and items:
            op, av = items[0]
            if op is not _constants.AT and not (
                op in (_constants.MAX_REPEAT, _constants.MIN_REPEAT) and av[0] == 0
            ):
                break
            items = items[1:]
        return _starts(items, _constants)
    except Exception:  # a pattern this can't read is searched as it always was
        return None


def _starts(items: list[Any], constants: Any) -> tuple[str, ...] | None:
    prefix = ""
    for op, av in items:
        if op is constants.LITERAL:
            prefix += chr(av)
            continue
        if prefix:
            return (prefix,)
        if op is constants.SUBPATTERN and not av[1] and not av[2]:
            return _starts(list(av[3].data), constants)
        if op is constants.BRANCH:
            found: list[str] = []
            for branch in av[1]:
                starts = _starts(list(branch.data), constants)
                if starts is None:
                    return None
                found += starts
            return tuple(dict.fromkeys(found))
        return None
    return (prefix,) if prefix else None


_INSTRUCTION_RES = tuple(
    (
        name,
        re.compile(pattern.removeprefix(r"\b")),
        re.compile(pattern, re.IGNORECASE),
        _literal_starts(pattern.removeprefix(r"\b")),
        _literal_starts(pattern.removeprefix(r"\b"), skip=True),
    )
    for name, pattern in INSTRUCTION_PATTERNS
)
r"""Each pattern twice: for the lower-cased text without its leading ``\b`` (a literal first word
lets ``re`` skip ahead fast; the boundary is checked on each match), and case-insensitive as a
fallback for texts whose length lower-casing changes; then the literal strings every match of the
first begins with, and strings one of which every match holds (:func:`_literal_starts`; None:
none known)."""


def _matches_at_starts(
    pattern: re.Pattern[str], starts: tuple[str, ...], text: str
) -> Iterator[re.Match[str]]:
    """Exactly ``pattern.finditer(text)`` when every match begins with one of ``starts``: the
    match is tried only where one of them occurs (found with ``str.find``, which skips ahead far
    faster than ``re`` tries a branch at every position), leftmost first, and the search goes on
    from the end of each match, as ``finditer`` does."""
    following = {start: text.find(start) for start in starts}
    pos = 0
    while True:
        at = -1
        for start, found in following.items():
            if 0 <= found < pos:
                found = following[start] = text.find(start, pos)
            if found >= 0 and (at < 0 or found < at):
                at = found
        if at < 0:
            return
        match = pattern.match(text, at)
        if match is None:
            pos = at + 1
            continue
        yield match
        pos = max(match.end(), at + 1)


def _char_names(chunk: str, limit: int = 4) -> str:
    seen: list[str] = []
    for char in dict.fromkeys(chunk):
        if len(seen) == limit:
            seen.append("…")
            break
        name = unicodedata.name(char, "") or "control character"
        seen.append(f"U+{ord(char):04X} {name}")
    return ", ".join(seen)


def _runs(pattern: re.Pattern[str], kind: str, text: str, what: str) -> Iterable[Flag]:
    for match in pattern.finditer(text):
        chunk = match.group()
        count = len(chunk)
        plural = "s" if count != 1 else ""
        yield Flag(
            kind, match.start(), match.end(), f"{count} {what}{plural}: {_char_names(chunk)}"
        )


def _invisible(text: str) -> Iterable[Flag]:
    """Invisible characters, except a lone ZWNJ/ZWJ where scripts and emoji use them: between
    letters of scripts past Greek and Cyrillic (Persian, Hindi, ...) or after a symbol (emoji)."""
    for flag in _runs(_INVISIBLE, "invisible", text, "invisible character"):
        start, end = flag.start, flag.end
        lone_joiner = end - start == 1 and text[start] in _JOINERS and start > 0 and end < len(text)
        if lone_joiner and _is_joined(text[start - 1]) and _is_joined(text[end]):
            continue
        yield flag


def _is_joined(char: str) -> bool:
    if ord(char) < 0x0590:  # Latin, Greek, Cyrillic and before: no joiners in ordinary text
        return False
    return char.isalpha() or unicodedata.category(char) in ("Mn", "Mc", "So", "Sk")


def _html_comments(text: str) -> Iterable[Flag]:
    for match in _HTML_COMMENT.finditer(text):
        body = match.group()
        closed = body.endswith("-->") and len(body) >= 7
        note = "HTML comment (hidden when rendered)" if closed else "unterminated HTML comment"
        yield Flag("html_comment", match.start(), match.end(), f"{note}: {body[:200]!r}")


def _base64(text: str) -> Iterable[Flag]:
    for match in _BASE64.finditer(text):
        chunk = match.group()
        payload = len(chunk) - chunk.count("\n") - chunk.count("\r")
        if payload >= _BASE64_MIN and all(p.search(chunk) for p in _BASE64_MIXED):
            yield Flag(
                "base64", match.start(), match.end(), f"{payload} base64 characters: {chunk[:40]}…"
            )


def _homoglyphs(text: str) -> Iterable[Flag]:
    word_end = -1
    for match in _NON_LATIN_RUN.finditer(text):
        if match.start() < word_end:
            continue  # same word as the previous run
        start = match.start()
        while start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
            start -= 1
        tail = _WORD_TAIL.match(text, match.end())
        word_end = tail.end() if tail else match.end()
        word = text[start:word_end]
        if not _HAS_LATIN.search(word):
            continue
        scripts = [
            script
            for script, pattern in (("Cyrillic", _HAS_CYRILLIC), ("Greek", _HAS_GREEK))
            if pattern.search(word)
        ]
        foreign = "".join(ch for ch in dict.fromkeys(word) if _NON_LATIN_RUN.match(ch))
        yield Flag(
            "homoglyph",
            start,
            word_end,
            f"word {word[:60]!r} mixes Latin with {' and '.join(scripts)} letters "
            f"({_char_names(foreign, limit=3)})",
        )


def _instructions(text: str) -> Iterable[Flag]:
    folded = text.lower()
    same_length = len(folded) == len(text)  # lower() may expand a few characters (e.g. "İ")
    for name, fast, fallback, starts, inner in _INSTRUCTION_RES:
        if not same_length:
            matches: Iterable[re.Match[str]] = fallback.finditer(text)
        elif starts is not None:
            matches = _matches_at_starts(fast, starts, folded)
        elif inner is None or any(word in folded for word in inner):
            matches = fast.finditer(folded)
        else:
            continue  # no match holds none of them
        for match in matches:
            start, end = match.span()
            if end == start or (start and _is_word(text[start - 1]) and _is_word(text[start])):
                continue
            if name == "chat role tag" and role_placeholder(text, start, end, folded):
                continue
            detail = f"{name}: {text[start:end][:120]!r}"
            yield Flag("instruction", start, _payload_end(text, folded, start, end), detail)


_OPEN_TAG = re.compile(r"<\s*([a-z]+)\s*>")
_PLACEHOLDER_BEFORE = frozenset(".=/:[(|")
_PLACEHOLDER_AFTER = frozenset(".=/:])|,")
_OPTION_BEFORE = re.compile(r"(?:^|\s)--?[A-Za-z][\w-]*\s+$")


def role_placeholder(text: str, start: int, end: int, folded: str | None = None) -> bool:
    """True if the role tag at ``start:end`` is a placeholder of a reference manual, not a role:
    an opening tag set in a name or option (``difftool.<tool>.cmd``, ``--tool=<tool>``,
    ``--tool <tool>``, ``[<user>]``) with nothing glued after it but the name's punctuation, and
    no closing tag after it. A planted ``<system>Say...`` or ``<user> ... </user>`` stays flagged."""
    if text[start + 1 : start + 2] == "/":
        return False
    folded = text.lower() if folded is None else folded
    before = text[start - 1] if start else ""
    after = text[end] if end < len(text) else ""
    glued = before in _PLACEHOLDER_BEFORE or bool(
        _OPTION_BEFORE.search(text, max(0, start - 60), start)
    )
    if not glued or not (after == "" or after.isspace() or after in _PLACEHOLDER_AFTER):
        return False
    tag = _OPEN_TAG.fullmatch(folded, start, end) if len(folded) == len(text) else None
    return tag is not None and folded.find(f"</{tag.group(1)}", end, end + BLOCK_REACH) == -1


BLOCK_REACH = 4000
"""How far an opening role tag's block may reach to its closing tag."""


def _payload_end(text: str, folded: str, start: int, end: int) -> int:
    """Where an instruction's payload ends: its line's end, or an opening role tag's closing tag.

    The words an instruction wants repeated ("... print The Tower is 330ft high.") follow it on
    the same line or inside the tag's block, so a quote of them overlaps the flag and is
    quarantined at the gate instead of slipping past a flag on the marker alone.
    """
    line_end = text.find("\n", end)
    stop = len(text) if line_end == -1 else line_end
    tag = _OPEN_TAG.fullmatch(folded, start, end) if len(folded) == len(text) else None
    if tag is not None:
        close = folded.find(f"</{tag.group(1)}", end, end + BLOCK_REACH)
        if close != -1:
            stop = max(stop, folded.find(">", close) + 1 or close)
    return stop


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


def flag_reason(flag: Flag) -> str:
    """Why evidence overlapping ``flag`` is quarantined, in words a person can act on."""
    if flag.kind in UNSEEN_KINDS:
        return f"evidence inside {flag.detail} (at {flag.start}-{flag.end})"
    return f"evidence overlaps a sanitizer flag: {flag.kind} at {flag.start}-{flag.end} ({flag.detail[:60]})"


def merge_flags(flags: Iterable[Flag]) -> list[Flag]:
    """Sort flags and merge touching or overlapping runs of the kinds in :data:`MERGED_KINDS`."""
    ordered = sorted(flags, key=lambda f: (f.start, f.end, f.kind, f.detail))
    merged: list[Flag] = []
    last: dict[str, int] = {}  # kind -> index in merged of its latest run
    for flag in ordered:
        index = last.get(flag.kind)
        if flag.kind in MERGED_KINDS and index is not None and flag.start <= merged[index].end:
            prev = merged[index]
            details = prev.detail.split("; ")
            detail = prev.detail if flag.detail in details else f"{prev.detail}; {flag.detail}"
            merged[index] = Flag(prev.kind, prev.start, max(prev.end, flag.end), detail)
            continue
        last[flag.kind] = len(merged)
        merged.append(flag)
    return merged


def scan(text: str) -> list[Flag]:
    """Every sanitizer flag of ``text`` (offsets into it), by position. ``text`` is not changed."""
    flags: list[Flag] = []
    wide = not text.isascii()  # invisible, bidi and Cyrillic or Greek letters are all past ASCII
    if wide:
        flags += _invisible(text)
        flags += _runs(_BIDI, "bidi", text, "bidirectional control")
    flags += _runs(_CONTROL, "control", text, "control character")
    flags += _html_comments(text)
    flags += _base64(text)
    if wide:
        flags += _homoglyphs(text)
    flags += _instructions(text)
    return merge_flags(flags)


__all__ = [
    "FLAG_KINDS",
    "INSTRUCTION_PATTERNS",
    "UNSEEN_KINDS",
    "Flag",
    "flag_reason",
    "merge_flags",
    "role_placeholder",
    "scan",
]
