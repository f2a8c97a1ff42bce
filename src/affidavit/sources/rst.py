"""reStructuredText as a reader of the rendered document sees it (docutils).

The source is parsed into a doctree by docutils, with Sphinx's roles and directives (which
Python's own documentation uses throughout) understood generically, and rendered as text by the
extraction convention every structured format follows:

- headings become ATX lines (``# Title``, ``## Section``, ...), the document's own title first;
- roles (``:mod:`json```, ``:func:`~json.dumps```) become their text (``json``, ``dumps``), and
  emphasis, strong and inline literals lose their markers, keeping the words;
- literal blocks, doctest sessions, ``code-block`` and other code directives, the signatures of
  ``function``/``class``/... descriptions, and tables go inside ````` fences;
- comments, substitution definitions, targets, ``index``/``toctree``/``module`` and other
  directives that render nothing are dropped; a comment leaves a zero-width ``hidden`` flag where
  it was (a reader of the rendered page never sees it);
- substitutions are resolved by docutils where the document defines them.

Nothing is read from other files (``include`` and ``raw`` are disabled), and docutils' messages go
nowhere. Every piece of text carries the line of the original it came from:
:func:`extract_rst` returns ``segments`` (``[text_offset, line]``) for the text map.
"""

from __future__ import annotations

import io
import re
from typing import Any, ClassVar

from docutils import nodes
from docutils.core import publish_doctree
from docutils.parsers.rst import Directive, directives, roles
from docutils.statemachine import StringList
from docutils.utils import SystemMessage

from ..errors import SourceError
from .css import HIDDEN
from .sanitizer import Flag

__all__ = ["extract_rst", "role_text"]


class _AnyOptions(dict[str, Any]):
    """An option spec accepting every option (Sphinx directives have many we don't need)."""

    def __missing__(self, key: str) -> Any:
        return directives.unchanged


def role_text(text: str) -> str:
    """What a Sphinx cross-reference role shows: ``Title <target>`` → ``Title``,
    ``~json.dumps`` → ``dumps``, ``!name`` → ``name``."""
    text = text.strip()
    titled = re.fullmatch(r"(.*?)\s*<([^<>]*)>", text, re.S)
    if titled and titled.group(1):
        return titled.group(1)
    if titled:
        text = titled.group(2)
    text = text.lstrip("!")
    if text.startswith("~"):
        text = text[1:].rsplit(".", 1)[-1]
    return text


def _generic_role(
    name: str,
    rawtext: str,
    text: str,
    lineno: int,
    inliner: Any,
    options: dict[str, Any] | None = None,
    content: list[str] | None = None,
) -> tuple[list[nodes.Node], list[nodes.system_message]]:
    return [nodes.literal(rawtext, role_text(text))], []


class _Code(Directive):
    """A code directive (``code-block``, ``doctest``, ``productionlist``, ...): its body, fenced."""

    has_content = True
    optional_arguments = 1
    final_argument_whitespace = True
    option_spec: ClassVar[dict[str, Any]] = _AnyOptions()

    def run(self) -> list[nodes.Node]:
        body = "\n".join(self.content)
        if self.name == "productionlist" and self.arguments:
            body = "\n".join([self.arguments[0], body]).strip("\n")
        if not body.strip():
            return []
        node = nodes.literal_block(body, body)
        node.line = self.content_offset + 1
        return [node]


class _Nothing(Directive):
    """A directive that renders nothing a reader reads (``index``, ``toctree``, ``module``...)."""

    has_content = True
    optional_arguments = 1
    final_argument_whitespace = True
    option_spec: ClassVar[dict[str, Any]] = _AnyOptions()

    def run(self) -> list[nodes.Node]:
        return []


_HTML_TAGS = {"html", "format_html", "builder_html", "dirhtml", "builder_dirhtml", "singlehtml"}
_TAG = re.compile(r"\s*(\(|\)|[A-Za-z_][\w-]*)")


def _html_reader_sees(expression: str) -> bool:
    """Whether Sphinx's ``only`` expression holds for an HTML build (the page a reader opens):
    tags ``html``/``format_html``/``builder_html`` are set, every other tag is not; ``and``,
    ``or``, ``not`` and brackets as Sphinx reads them. An expression that can't be read is
    taken as false: its body is not shown."""
    tokens: list[str] = []
    at = 0
    while at < len(expression.rstrip()):
        match = _TAG.match(expression, at)
        if match is None:
            return False
        tokens.append(match.group(1))
        at = match.end()

    def either(i: int) -> tuple[bool, int]:
        value, i = both(i)
        while i < len(tokens) and tokens[i] == "or":
            other, i = both(i + 1)
            value = value or other
        return value, i

    def both(i: int) -> tuple[bool, int]:
        value, i = single(i)
        while i < len(tokens) and tokens[i] == "and":
            other, i = single(i + 1)
            value = value and other
        return value, i

    def single(i: int) -> tuple[bool, int]:
        if i >= len(tokens):
            raise ValueError("an expression ends too early")
        if tokens[i] == "not":
            value, i = single(i + 1)
            return not value, i
        if tokens[i] == "(":
            value, i = either(i + 1)
            if i >= len(tokens) or tokens[i] != ")":
                raise ValueError("an unclosed bracket")
            return value, i + 1
        if tokens[i] in ("and", "or", ")"):
            raise ValueError(f"unexpected {tokens[i]!r}")
        return tokens[i] in _HTML_TAGS, i + 1

    try:
        value, end = either(0)
    except ValueError:
        return False
    return value and end == len(tokens)


class _Body(Directive):
    """A directive whose body is ordinary text (``only``, ``glossary``, ``impl-detail``...)."""

    has_content = True
    optional_arguments = 1
    final_argument_whitespace = True
    option_spec: ClassVar[dict[str, Any]] = _AnyOptions()
    LABELS: ClassVar[dict[str, str]] = {
        "versionadded": "New in version {}.",
        "versionchanged": "Changed in version {}.",
        "deprecated": "Deprecated since version {}.",
        "deprecated-removed": "Deprecated since version {}.",
        "availability": "Availability: {}.",
    }

    def run(self) -> list[nodes.Node]:
        if self.name == "only" and not _html_reader_sees(" ".join(self.arguments)):
            return []  # another builder's text (``.. only:: latex``): not on the HTML page
        container = nodes.container()
        label = self.LABELS.get(self.name)
        if label and self.arguments:
            first, _, rest = self.arguments[0].partition("\n")
            words = first.split(None, 1) if self.name != "availability" else [first]
            text = label.format(words[0].rstrip("."))
            paragraph = nodes.paragraph(text, text)
            paragraph.line = self.lineno
            container += paragraph
            more = " ".join([*words[1:], rest]).strip()
            if more:
                self.state.nested_parse(StringList([more]), self.content_offset, container)
        elif self.arguments and self.name in ("rubric", "centered"):
            heading = nodes.paragraph(self.arguments[0], self.arguments[0])
            heading.line = self.lineno
            container += heading
        if self.content:
            self.state.nested_parse(self.content, self.content_offset, container)
        return [container]


class _Description(Directive):
    """A Sphinx object description (``function``, ``class``, ``method``, ``cmdoption``...): its
    signature fenced as code, its body as text."""

    has_content = True
    optional_arguments = 1
    final_argument_whitespace = True
    option_spec: ClassVar[dict[str, Any]] = _AnyOptions()

    def run(self) -> list[nodes.Node]:
        container = nodes.container()
        if self.arguments:
            signature = "\n".join(
                line.strip().rstrip("\\").strip() for line in self.arguments[0].splitlines()
            )
            block = nodes.literal_block(signature, signature)
            block.line = self.lineno
            container += block
        if self.content:
            self.state.nested_parse(self.content, self.content_offset, container)
        return [container]


_ROLES = " ".join(
    [
        "mod func class meth attr data exc obj const ref doc term keyword option envvar program file ",
        "samp kbd menuselection guilabel abbr dfn mailheader mimetype newsgroup command makevar regexp ",
        "token source issue gh pdbcmd opcode manpage any numref download math ",
        "py:mod py:func py:class py:meth py:attr py:data py:exc py:obj py:const ",
        "c:func c:macro c:type c:data c:member c:var c:expr cpp:func std:ref std:term",
    ]
).split()
_CODE = "code-block sourcecode doctest testcode testoutput testsetup testcleanup productionlist"
_NOTHING = (
    "index toctree module currentmodule moduleauthor sectionauthor codeauthor highlight "
    "tabularcolumns literalinclude audit-event audit-event-table opcode-table program "
    "py:module py:currentmodule limited-api-list"
)
_BODY = (
    "versionadded versionchanged deprecated deprecated-removed availability impl-detail seealso "
    "only glossary hlist centered rubric tab tabs"
)
_DESCRIPTIONS = (
    "function method class data attribute exception decorator decoratormethod classmethod "
    "staticmethod abstractmethod coroutinefunction coroutinemethod awaitablefunction "
    "awaitablemethod describe object cmdoption option envvar opcode pdbcommand 2to3fixer "
    "py:function py:method py:class py:data py:attribute py:exception py:decorator "
    "c:function c:macro c:type c:member c:var"
)


def _register() -> None:
    for name in _ROLES:
        roles.register_local_role(name, _generic_role)  # type: ignore[arg-type]
    for names, cls in (
        (_CODE, _Code),
        (_NOTHING, _Nothing),
        (_BODY, _Body),
        (_DESCRIPTIONS, _Description),
    ):
        for name in names.split():
            directives.register_directive(name, cls)


_register()

_SETTINGS = {
    "report_level": 5,
    "halt_level": 5,
    "file_insertion_enabled": False,
    "raw_enabled": False,
    "_disable_config": True,
    "doctitle_xform": True,
    "sectsubtitle_xform": False,
    "syntax_highlight": "none",
    "input_encoding": "unicode",
    "character_level_inline_markup": False,
}
_ROLE = re.compile(r":(?:[\w.+-]+:)+`((?:[^`\\]|\\.)*)`|`((?:[^`\\]|\\.)*)`:(?:[\w.+-]+:)+")
_SKIP = (
    nodes.substitution_definition,
    nodes.target,
    nodes.footnote_reference,
    nodes.citation_reference,
    nodes.image,
    nodes.raw,
    nodes.pending,
    nodes.decoration,
    nodes.meta if hasattr(nodes, "meta") else nodes.decoration,
)


class _Writer:
    """Renders a doctree as text with a line for every piece."""

    def __init__(self, source: str) -> None:
        self.parts: list[str] = []
        self.length = 0
        self.segments: list[list[int]] = []
        self.flags: list[Flag] = []
        self.lines = source.split("\n")
        self.line = 1

    # -- output --------------------------------------------------------------------------------
    def _write(self, text: str, line: int | None) -> None:
        if not text:
            return
        if line is not None and line >= 1:
            self.line = line
        if not self.segments or self.segments[-1][1] != self.line:
            self.segments.append([self.length, self.line])
        self.parts.append(text)
        self.length += len(text)

    def block(self, text: str, line: int | None, prefix: str = "") -> None:
        """One block: a blank line before it; each of its lines mapped to successive lines."""
        text = text.strip("\n")
        if not text.strip():
            return
        if self.length:
            self._write("\n", None)
        first = self._find(text, line)
        for index, piece in enumerate(text.split("\n")):
            self._write((prefix if index == 0 else "") + piece + "\n", first + index)

    def fence(self, text: str, line: int | None) -> None:
        body = text.strip("\n")
        if not body.strip():
            return
        body = re.sub(r"^(\s*)(```|~~~)", r"\1 \2", body, flags=re.M)  # no fence inside a fence
        if self.length:
            self._write("\n", None)
        first = self._find(body, line)
        self._write("```\n", first - 1 if first > 1 else first)
        for index, piece in enumerate(body.split("\n")):
            self._write(piece + "\n", first + index)
        self._write("```\n", None)

    def _find(self, text: str, line: int | None) -> int:
        """The source line where ``text`` starts: its first words searched near ``line`` (docutils
        gives some nodes the line after them, some none), else ``line``, else the last line."""
        probe = next((p.strip() for p in text.split("\n") if p.strip()), "")[:24]
        start = max(0, (line or self.line) - 4)
        if probe:
            word = probe.split()[0]
            for number in range(start, min(len(self.lines), start + 60)):
                if probe in self.lines[number] or (len(word) > 3 and word in self.lines[number]):
                    return number + 1
        return line or self.line

    def text(self) -> str:
        return "".join(self.parts)

    # -- walking -------------------------------------------------------------------------------
    def inline(self, node: nodes.Node) -> str:
        if isinstance(node, nodes.Text):
            return node.astext()  # str(node) keeps docutils' NUL before each escaped character
        if isinstance(node, (*_SKIP, nodes.system_message)):
            return ""
        if isinstance(node, nodes.problematic):
            return _ROLE.sub(lambda m: role_text(m.group(1) or m.group(2) or ""), node.astext())
        if isinstance(node, nodes.substitution_reference):
            return node.astext()
        return "".join(self.inline(child) for child in node.children)

    def walk(self, node: nodes.Node, level: int) -> None:
        for child in node.children:
            self.visit(child, level)

    def visit(self, node: nodes.Node, level: int) -> None:
        line = node.line if isinstance(node, nodes.Element) else None
        if isinstance(node, nodes.comment):
            self._comment(node)
        elif isinstance(node, (*_SKIP, nodes.transition)):
            return
        elif isinstance(node, nodes.system_message):
            return  # docutils' complaint, holding the markup it could not read (an unknown
            # directive, a disabled include or raw block): not part of the rendered page
        elif isinstance(node, nodes.section):
            self.walk(node, level + 1)
        elif isinstance(node, (nodes.title, nodes.subtitle, nodes.rubric)):
            heading = " ".join(self.inline(node).split())
            depth = max(1, min(6, level + (1 if isinstance(node, nodes.subtitle) else 0)))
            if isinstance(node, nodes.rubric) or isinstance(node.parent, (nodes.topic,)):
                self.block(heading, line)
            elif not isinstance(node.parent, (nodes.table, nodes.Admonition, nodes.sidebar)):
                self.block(heading, line, "#" * depth + " ")
        elif isinstance(node, (nodes.literal_block, nodes.doctest_block)):
            self.fence(node.astext(), line)
        elif isinstance(node, nodes.table):
            self._table(node)
        elif isinstance(node, nodes.paragraph):
            self.block(self.inline(node), line)
        elif isinstance(node, nodes.bullet_list | nodes.enumerated_list):
            for number, item in enumerate(node.children, 1):
                mark = "- " if isinstance(node, nodes.bullet_list) else f"{number}. "
                self._item(item, level, mark)
        elif isinstance(node, nodes.definition_list):
            for item in node.children:
                for part in item.children:
                    if isinstance(part, nodes.term):
                        self.block(" ".join(self.inline(part).split()), part.line)
                    elif isinstance(part, nodes.definition):
                        self.walk(part, level)
        elif isinstance(node, nodes.field_list):
            for field in node.children:
                name = " ".join(self.inline(field.children[0]).split())
                self._item(field.children[1], level, f"{name}: ")
        elif isinstance(node, nodes.option_list):
            for item in node.children:
                group = ", ".join(self.inline(o).strip() for o in item.children[0].children)
                self._item(item.children[1], level, f"{group}  ")
        elif isinstance(node, nodes.line_block):
            lines = [self.inline(child) for child in node.findall(nodes.line)]
            self.block("\n".join(lines), line)
        elif isinstance(node, nodes.attribution):
            self.block("— " + self.inline(node), line)
        elif isinstance(node, nodes.topic) and "contents" in node.get("classes", []):
            return
        elif isinstance(node, nodes.Element):
            self.walk(node, level)

    def _item(self, item: nodes.Node, level: int, mark: str) -> None:
        """A list item: its first paragraph after ``mark``, the rest as blocks."""
        children = list(item.children)
        if children and isinstance(children[0], nodes.paragraph):
            self.block(self.inline(children[0]), children[0].line, mark)
            children = children[1:]
        elif mark.strip() and not mark.startswith(("-", "1")):
            self.block(mark.strip(), item.line if isinstance(item, nodes.Element) else None)
        for child in children:
            self.visit(child, level)

    def _table(self, table: nodes.Node) -> None:
        rows = []
        for row in table.findall(nodes.row):
            cells = [" ".join(self.inline(entry).split()) for entry in row.children]
            rows.append(" | ".join(cells))
        line = next((r.line for r in table.findall(nodes.Element) if r.line), None)
        self.fence("\n".join(rows), line)

    def _comment(self, node: nodes.comment) -> None:
        body = node.astext().strip()
        if not body:
            return
        line = self._find(body, node.line)
        self.flags.append(
            Flag(
                HIDDEN,
                self.length,
                self.length,
                f"a reStructuredText comment at line {line}, not shown when rendered: "
                f"{body[:200]!r}",
            )
        )


def extract_rst(source: str) -> tuple[str, list[list[int]], list[Flag]]:
    """The rendered text of the reStructuredText ``source``, its ``[text_offset, line]`` segments
    and its flags (one zero-width ``hidden`` flag per comment)."""
    settings = {**_SETTINGS, "warning_stream": io.StringIO()}
    try:
        doctree = publish_doctree(source, settings_overrides=settings)
    except (SystemMessage, ValueError, AssertionError, IndexError) as exc:
        raise SourceError(
            f"The reStructuredText could not be parsed ({exc}). Save it as plain text (.txt) and "
            f"add that."
        ) from exc
    writer = _Writer(source)
    for child in list(doctree.children):  # file-wide metadata (":tocdepth: 2", ":orphan:"),
        if isinstance(child, (nodes.field_list, nodes.docinfo)):  # which Sphinx doesn't show
            doctree.remove(child)
        elif not isinstance(child, (nodes.comment, nodes.target, nodes.substitution_definition)):
            break
    titled = bool(doctree.children) and isinstance(doctree.children[0], nodes.title)
    writer.walk(doctree, 1 if titled else 0)
    return writer.text(), writer.segments, writer.flags
