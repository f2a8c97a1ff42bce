"""How questions and manuals phrase what they ask and tell, for the extractive answerer
(:mod:`affidavit.ask.extractive`): the term a "what is X?" question asks about and the sentence
that defines it, the instruction a "how do I ...?" question asks for ("To create ..., run ..."),
the commands, options and identifiers a manual names (``VACUUM``, ``--amend``,
``journal_mode=WAL``), a manual page's NAME line, and whether a text states something or is a
heading or a question.
"""

from __future__ import annotations

import itertools
import re
import unicodedata

from ..words import stem


def fold(text: str) -> str:
    """``text`` without diacritics ("Gökçen" → "Gokcen"): a question may spell a name plainly."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


_DEFINITION = re.compile(
    r"^\s*what\s+(?:is|are|was|were)\s+(?:an?\s+|the\s+)?(.+?)\s*(?:\bin \w+\s*)?\?*\s*$",
    re.IGNORECASE,
)


_DOES = re.compile(
    r"^\s*what\s+(?:does|do|did)\s+(?:an?\s+|the\s+)?(.+?)\s+(?:do|provide|offer|return|mean|"
    r"contain|support|allow|make|create)\b",
    re.IGNORECASE,
)


def defined_term(question: str) -> str:
    """The term a "what is X?" or "what does X do?" question asks about ("set" for "What is a
    set in Python?", "shutil.rmtree" for "What does shutil.rmtree do?")."""
    match = _DEFINITION.match(question) or _DOES.match(question)
    if not match or len(match.group(1).split()) > 4:
        return ""
    return match.group(1).strip()


_ASIDE = r"(?:\s*\([^()]{1,80}\))?"
"""A parenthetical after a word of the term: "CSV (Comma Separated Values) format"."""


def _term_pattern(term: str) -> str:
    """``term`` as a regex: its words in order, each may be followed by a parenthetical."""
    return r"\s+".join(re.escape(w) + _ASIDE for w in term.split())


def defines(term: str, text: str, title: str = "") -> bool:
    """True if ``text`` opens by defining or describing ``term``: "A set is an unordered
    collection...", "The so-called CSV (Comma Separated Values) format is...", a manual's
    "sed - stream editor for...", "rmtree(path, ...): Delete an entire directory tree" for
    "shutil.rmtree", "This module provides..." on the page of the module asked about."""
    text = text.strip()
    named = _term_pattern(term)
    pattern = (
        rf"^(?:an?\s+|the\s+)?(?:so-called\s+)?{named}(?:e?s)?\s+"
        r"(?:is|are|was|were|refers|means)\b"
    )
    if re.match(pattern, text, re.IGNORECASE):
        return True
    if re.match(rf"^{named}(?:,\s*[\w.+-]+)*\s+[-–—]+\s+\w", text, re.IGNORECASE):
        return True  # a manual's NAME line: "grep, egrep - print lines that match patterns"
    name = re.sub(r"\s+module$", "", term, flags=re.IGNORECASE).strip()
    name = re.sub(r"\s*\(\s*\)$", "", name)  # "json_extract()" names json_extract
    last = name.rsplit(".", 1)[-1]
    if re.fullmatch(r"[A-Za-z_]\w*", last) and re.match(
        rf"^(?:the\s+)?(?:class\s+)?(?:[\w.]+\.)?{re.escape(last)}\s*\(", text, re.IGNORECASE
    ):
        return True  # the signature of the function asked about, then its description
    if re.match(rf"^the\s+{re.escape(name)}\s+module\b", text, re.IGNORECASE):
        return True
    return bool(name) and text.startswith("This module") and title.lower().startswith(name.lower())


_HOW_TO = re.compile(
    r"^\s*how\s+(?:do|can|should|would|could|may|might)\s+(?:i|you|we|one)\s+([a-z]+)\b",
    re.IGNORECASE,
)
OPENS_INSTRUCTION = re.compile(r"^(?:first,?\s+)?to\s+([a-z]+)\b", re.IGNORECASE)
_IF_YOU_WANT_TO = re.compile(
    r"^if\s+you\s+(?:only\s+|just\s+)?(?:want|wish|need|would\s+like)\s+to\s+([a-z]+)\b",
    re.IGNORECASE,
)
"""The conditional a manual writes for an instruction as often as "To <verb> ...": "If you want
to <verb> ..., (use|see|run) ...". It counts for the question whose verb it holds only: for any
other how-do-I question it is a condition on something else (no :data:`OTHER_VERB`)."""


def instructs(question: str, text: str) -> bool:
    """True if ``text`` is the instruction a "how do I <verb> ...?" question asks for: it opens
    "To <verb> ..." ("To create a virtual environment, ... run the venv module ...") or "If you
    want to <verb> ..." ("If you want to throw away all uncommitted changes ..., you should see
    git-reset(1), particularly the --hard option")."""
    asked = _HOW_TO.match(question)
    said = OPENS_INSTRUCTION.match(text.strip()) or _IF_YOU_WANT_TO.match(text.strip())
    if asked is None or said is None:
        return False
    return stem(asked.group(1).lower()) == stem(said.group(1).lower())


_LIGHT_VERBS = frozenset(
    stem(w)
    for w in [
        "get",
        "make",
        "see",
        "do",
        "have",
        "use",
        "set",
        "go",
        "let",
        "find",
        "put",
        "take",
        "keep",
        "give",
        "try",
        "check",
        "turn",
    ]
)
"""Verbs too common in a manual to tell its instructions apart ("how do I get / make / see")."""
_HOW_VERB = re.compile(
    r"^\s*(?:.*[;,]\s*)?how\s+(?:do|can|should|would|could|may|might)\s+(?:i|you|we|one)\s+"
    r"(?:[a-z]+ly\s+)?([a-z]+)\b",
    re.IGNORECASE,
)


def action(question: str) -> str:
    """The stem of the verb a "how do I <verb> ...?" question asks how to do ("renam" for "How do
    I rename a file?", "unstag" for "How do I unstage a file?"; an adverb before it skipped),
    "" for a light verb ("get", "make", "see") or another question."""
    match = _HOW_VERB.match(question)
    if match is None:
        return ""
    verb = stem(match.group(1).lower())
    return "" if verb in _LIGHT_VERBS else verb


ACTION = 0.15
"""What holding the asked action's verb adds for a how-do-I question: "git-mv - Move or rename a
file" for "How do I rename a file in the repository?", over an option's description that holds
"file" and "repository" but renames nothing."""


def compounds_of(question: str) -> set[str]:
    """The question's adjacent words written as one ("one line" → "oneline", "dry run" →
    "dryrun"): how a manual names an option or setting after them (``--oneline``)."""
    found = re.findall(r"[a-z]+", fold(question).casefold())
    return {a + b for a, b in itertools.pairwise(found) if len(a) >= 2 and len(b) >= 3}


def names_compound(compounds: set[str], text: str) -> bool:
    """``text`` names an option or identifier that is one of ``compounds`` (``--oneline``)."""
    return any(
        name.lstrip("-.").replace("-", "").casefold() in compounds
        for name in re.findall(r"(?:--?|\.)[A-Za-z][\w-]*", text)
    )


_COMMAND = re.compile(
    r"(?:^|(?<=[\s(\"'“]))(?:[A-Z][A-Z_]{2,}(?:\s+(?:[A-Z][A-Z_]{1,}|[a-z]+_\w+(?:\s?=\s?\w+)?))+|"
    r"\.[a-z][\w-]+|--?[a-z][\w-]+|[a-z]\w*_\w+(?:\s?=\s?\w+)?|\w+\(\)|\w+\s?=\s?\w+|"
    r"(?<=[\"“])[\w.-]*[:/][\w.:/-]*\w[\w.:/-]*(?=[\"”])|"
    r"[A-Z][A-Z_]{2,}(?=\s+(?:command|pragma|statement|keyword|clause|option|mode)\b)|"
    r"(?<=\bthe\s)[A-Z][A-Z_]{2,})(?=$|[\s).,;:\"'”])"
)
"""What a manual names an instruction by: a keyword or constant in capitals (``VACUUM``,
``PRAGMA foreign_keys``), a dot-command (``.import``), an option (``--amend``), an identifier
(``json_extract``), a call (``typeof()``), a setting (``journal_mode=WAL``) or a special name
in quotes (``":memory:"``, ``"file:data.db"``)."""
_HOW_DO = re.compile(
    r"^\s*(?:.*[;,]\s*)?how\s+(?:do|can|should|would|could|may|might)\s+(?:i|you|we|one)\b|"
    r"^\s*(?:which|what)\s+(?:option|command|flag|pragma|setting|keyword|function)\b",
    re.IGNORECASE,
)


USES_COMMAND = re.compile(
    r"\b(?:use|using|run|running|type|enter|invoke|invoking|execute|executing|issue|add|adding|"
    r"set|setting|specify|specifying|pass|passing)\s+(?:the\s+|a\s+|an\s+)?"
    r"(?:(?:following|special|new)\s+)?(?:\w+\s+){0,2}?(?:[\"'“.-]*[A-Z][A-Z_]{2,}|[\"'“]?[.-]{1,2}[a-z]"
    r"|\w+_\w+|\w+\(\)|(?:command|pragma|option|keyword|clause|statement|filename)\b)",
)
"""An instruction's verb before what it names: "use the following pragma", "run the VACUUM
command", "using the PRAGMA foreign_keys command", "add the --dryrun option"."""
INSTRUMENT = 0.2
COMPOUND = 0.2
"""What naming an option after two of the question's words adds ("one line": ``--oneline``)."""
"""What an instruction's verb before the command adds for a how-do-I question."""
OTHER_VERB = 0.15
"""What "To <another verb> ..." adds for a how-do-I question ("To enable X" for "turn on X")."""


NAME_LINE_PATTERN = re.compile(
    r"^[a-z][\w.+:-]*(?:\(\d\w*\))?(?:,\s*[a-z][\w.+:-]*)*\s+[-\u2013\u2014]\s+[A-Z]"
)
"""A manual page's NAME line, "git-blame - Show what revision and author last modified each
line of a file": the page's own one-line statement of what the command is for."""
NAME_LINE = 0.2
"""What a NAME line adds for a how-do-I question: the command whose purpose it states."""


def named(term: str, text: str) -> bool:
    """``text`` is the NAME line of the page of ``term``'s command or file ("gitignore -
    Specifies ..." for "What is a gitignore file for?")."""
    if not term or not NAME_LINE_PATTERN.match(text):
        return False
    name = re.split(r"[\s(,]", text, maxsplit=1)[0].casefold()
    return name in {w.casefold() for w in term.split()}


SHORT_OPTION = re.compile(r"(?:^|(?<=[\s(\"'“]))-[A-Za-z](?=$|[\s),;:.])")
"""A one-letter option ("see the -C and -M options")."""


def asks_how(question: str) -> bool:
    """A question a command or option answers: "how do I ...?", "which option ...?"."""
    return _HOW_DO.match(question) is not None


def commands(question: str, text: str) -> list[str]:
    """The commands, options and identifiers ``text`` names that ``question`` doesn't."""
    asked = {w.casefold() for w in re.findall(r"[\w.=-]+", question)}
    found = []
    for match in _COMMAND.finditer(text):
        name = match.group(0).strip(" (\"'“")
        if name.casefold() not in asked and not all(w.casefold() in asked for w in name.split()):
            found.append(name)
    return found


def statement(text: str) -> bool:
    """``text`` states something: not a heading ("Maximum length of a string or BLOB") or a
    question (an FAQ's "How do I list all tables?"), which are context for what follows."""
    text = text.strip()
    if text.endswith("?"):
        return False
    if re.search(r"[.!:;)\"'”]`$|:\s*`[^`]+`$", text):
        return True  # "To convert to WAL mode, use the following pragma: `PRAGMA ...;`"
    return bool(re.search(r"[.!:;)\"'”]$", text)) or len(text.split()) > 25
