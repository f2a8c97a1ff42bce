"""Questions about what someone said: "What did Monroe say about France?" (issue 24 item 4).

A wiki built from speeches, papers or letters names their authors in its pages' titles ("State of
the Union, 1823: James Monroe"), while the claims under those titles are the author's own
sentences and never hold the name. Such a question asks about one page's claims: :func:`speakers`
finds the names the question makes the speaker (the subject of a verb of saying, "according
to …", "… 's speech") that a page title holds, and :func:`on_pages` keeps the answer's hits to
those pages. Without it the name counted as one the wiki never mentions (an abstention although
the page is there), or matched another thing of that name ("Fort Washington" for "What did
Washington say about the militia?").
"""

from __future__ import annotations

import re
from typing import Protocol

from ..retrieval.search import Hit
from .context import question_names

_SAYING = (
    r"say|says|said|write|writes|wrote|written|think|thinks|thought|argue[sd]?|"
    r"propose[sd]?|claim(?:s|ed)?|mention(?:s|ed)?|tell|tells|told|promise[sd]?|"
    r"recommend(?:s|ed)?|describe[sd]?|report(?:s|ed)?|announce[sd]?|believe[sd]?|"
    r"warn(?:s|ed)?|note[sd]?|state[sd]?|suggest(?:s|ed)?|urge[sd]?|predict(?:s|ed)?|"
    r"explain(?:s|ed)?|discuss(?:es|ed)?|criticized?|praised?|feel|feels|felt|"
    r"ask(?:s|ed)? for|call(?:s|ed)? for"
)
_WORKS = (
    r"speech|speeches|address|addresses|message|messages|words|remarks|views?|papers?|"
    r"articles?|books?|letters?|report|statement|arguments?|position|opinion|proposals?|"
    r"essay|talk|lecture|notes"
)
_NAME_PART = r"[A-Z][\w.'’-]*"
"""Another word of a full name ("Franklin D. Roosevelt")."""


_OBJECTS = frozenset(
    [
        "with",
        "of",
        "to",
        "by",
        "from",
        "for",
        "about",
        "against",
        "on",
        "at",
        "in",
        "into",
        "than",
        "between",
        "among",
    ]
)
"""Words after which a name is an object, not the one who says ("the treaty with Monroe")."""


def _says(question: str, name: str) -> bool:
    """``question`` makes ``name`` the one who says, writes or thinks something."""
    n = re.escape(name)
    subject = re.compile(
        rf"(?<![\w-])(?:{_NAME_PART}\s+)*{n}(?:\s+{_NAME_PART})*\s+(?:\w+ly\s+)?(?:{_SAYING})\b"
    )
    for match in subject.finditer(question):
        before = question[: match.start()].split()
        if not before or before[-1].casefold() not in _OBJECTS:
            return True
    others = [
        rf"\b(?i:according) to\s+(?:{_NAME_PART}\s+)*{n}\b",
        rf"\b{n}(?:'s|’s|'|’)\s+(?:\w+\s+){{0,2}}?(?:{_WORKS})\b",
        rf"\b(?:{_WORKS}) (?:of|by) (?:{_NAME_PART}\s+)*{n}\b",
    ]
    return any(re.search(p, question) for p in others)


class TitledPages(Protocol):
    """What :func:`speakers` reads of a wiki (both backends' ``AskWiki``)."""

    def titled_pages(self, terms: list[str], limit: int) -> list[tuple[str, str]]:
        """(slug, title) of the pages whose title holds any of ``terms``, best first."""

    def page_sources(self, slug: str) -> int:
        """How many sources the active claims of page ``slug`` quote."""


PAGES = 6
"""At most this many pages whose title names a speaker are searched."""


def full_name(question: str, name: str) -> str:
    """The run of capitalised words ``name`` stands in ("Franklin D. Roosevelt")."""
    n = re.escape(name)
    found = re.search(rf"(?<![\w-])(?:{_NAME_PART}\s+)*{n}(?:\s+{_NAME_PART})*", question)
    run = found.group() if found else name
    words = run.split()
    while len(words) > 1 and words[0].casefold() in _LEADING:
        words = words[1:]  # "What", "According", "In Monroe's": not the name
    return " ".join(w.rstrip("'’").removesuffix("'s").removesuffix("’s") for w in words)


_LEADING = frozenset(
    [
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "did",
        "does",
        "do",
        "according",
        "in",
        "to",
        "the",
        "a",
        "an",
    ]
)


def speakers(wiki: TitledPages, question: str) -> dict[str, list[str]]:
    """The names ``question`` makes the speaker, each with the slugs of the pages whose title
    holds its whole name as words, spelled the same, beside other words, and whose claims quote
    one source: the speech, paper or letter itself ("State of the Union, 1801: Thomas
    Jefferson"), not a page about the name ("Jefferson") nor a topic page gathered from many
    (at most :data:`PAGES`). A name no such title holds is left out (it is the claims' business:
    :func:`~.context.unknown_names`)."""
    out: dict[str, list[str]] = {}
    for name in question_names(question):
        if not _says(question, name):
            continue
        whole = full_name(question, name)
        words = r"\s+".join(re.escape(w) for w in whole.split())
        held = re.compile(rf"(?<![\w-]){words}(?![\w-])")
        found = re.search(rf"{words}(?:'s|’s)?\s+(\w+)", question)
        after = found.group(1) if found else ""  # "United states": the title's own name
        longer = re.compile(rf"{words}\s+{re.escape(after)}\b", re.IGNORECASE)
        slugs = [
            slug
            for slug, title in wiki.titled_pages([name], 20)
            if held.search(title)
            and held.sub("", title).strip(" ,.:;-–—()") != ""  # "Jefferson": a page about him
            and not (after and longer.search(title))
            and wiki.page_sources(slug) == 1
        ]
        if slugs:
            out[name] = slugs[:PAGES]
    return out


POOL = 200
"""How many hits are retrieved for a question kept to a speaker's pages, before keeping them."""


def unsaid(query: str) -> str:
    """``query`` without its verbs of saying: "say" in "What did Roosevelt say about France?" is
    how the question names the speaker, not a word the answer holds ("I am sorry to say")."""
    return re.sub(rf"\b(?:{_SAYING})\b", " ", query, flags=re.IGNORECASE)


def on_pages(hits: list[Hit], pages: set[str]) -> list[Hit]:
    """``hits`` on ``pages`` only, in their order."""
    return [h for h in hits if h.page in pages]


def titled_only(wiki: TitledPages, names: list[str]) -> dict[str, list[tuple[str, str]]]:
    """Of ``names`` (those no claim holds: :func:`~.context.unknown_names`), each that a page
    title holds as a word, spelled the same, with those pages (slug, title; at most
    :data:`PAGES`): "Who was Monroe?" of a wiki whose only "Monroe" is the title "State of the
    Union, 1823: James Monroe". The wiki names it, so "never mentions" would be false; it says
    nothing about it either, so the question is still not answered from the title's claims."""
    out: dict[str, list[tuple[str, str]]] = {}
    for name in names:
        held = re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])")
        pages = [
            (slug, title) for slug, title in wiki.titled_pages([name], 20) if held.search(title)
        ]
        if pages:
            out[name] = pages[:PAGES]
    return out
