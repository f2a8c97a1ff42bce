"""Man pages (roff with the ``man`` macros) as ``man`` shows them, by the extraction convention.

- the title comes first: the ``NAME`` line (``ls - list directory contents``) as ``# ...``, else
  the ``.TH`` name and section (``# LS(1)``);
- ``.SH`` headings become ``## ...`` lines, ``.SS`` headings ``### ...``;
- ``.TP``, ``.IP`` and ``.TQ`` option lists keep their tags with the text:
  ``-D, --dired  generate output designed for Emacs' dired mode``, one item per block;
- ``.nf``/``.fi``, ``.EX``/``.EE`` and ``tbl`` tables (``.TS``/``.TE``) go inside ````` fences;
- font escapes (``\\fB``, ``\\fI``, ``\\f(CW``...), ``\\&``, ``\\c`` and size changes are removed,
  character escapes (``\\-``, ``\\(em``, ``\\(aq``, ``\\e``...) become their characters, font
  macros (``.B``, ``.BR``, ``.IR``...) their words; comments (``.\\"``, ``\\"``), macro
  definitions and requests that print nothing are dropped;
- conditional blocks (``.if``/``.ie``/``.el`` with ``\\{ ... \\}``) are kept only when a
  terminal's ``man`` (nroff) takes them (``n``, ``!t``, a positive number, equal strings); a
  branch it skips, or whose condition can't be evaluated here (registers, escapes, page parity),
  is dropped with everything inside it, so no hidden block becomes quotable text (W12).

A gzipped page (``ls.1.gz``) is decompressed first. Every line of the text maps to the line of the
page it came from (``segments``).
"""

from __future__ import annotations

import re
import zlib

from ..errors import SourceError

__all__ = ["GZIP_MAGIC", "extract_roff", "gunzip"]

GZIP_MAGIC = b"\x1f\x8b"
MAX_UNZIPPED = 50_000_000
"""A gzipped man page may expand to at most this many bytes (a bomb is refused)."""

_CHARS = {
    "em": "—", "en": "–", "hy": "-", "mi": "-", "aq": "'", "dq": '"', "lq": "“", "rq": "”",
    "oq": "‘", "cq": "’", "bu": "•", "co": "©", "rg": "®", "tm": "™", "de": "°", "ti": "~",
    "ha": "^", "rs": "\\", "sl": "/", "ba": "|", "or": "|", "lh": "☜", "rh": "☞", "fm": "′",
    "sq": "□", "Fo": "«", "Fc": "»", "fo": "‹", "fc": "›", "mu": "×", "di": "÷", "+-": "±",
    "<=": "≤", ">=": "≥", "!=": "≠", "->": "→", "<-": "←", "ua": "↑", "da": "↓", "dg": "†",
    "at": "@", "sh": "#", "Do": "$", "ct": "¢", "Eu": "€", "Po": "£", "ss": "ß", "12": "½",
    "14": "¼", "34": "¾", "ga": "`", "aa": "´", "ul": "_", "rn": "‾", "pl": "+", "eq": "=",
}  # fmt: skip
_ESCAPE = re.compile(
    r"""\\(?:
        f(?:\[[^\]\n]*\]|\(..|.)          # font change
      | s[-+]?(?:\d|\(\d\d|\[\d+\])       # size change
      | \((?P<two>..)                     # \(xx special character
      | \[(?P<name>[^\]\n]*)\]            # \[name] special character
      | \*(?:\[[^\]\n]*\]|\(..|.)         # string interpolation (unknown here: dropped)
      | [kmnMgz](?:\[[^\]\n]*\]|\(..|.)   # registers, colours, zero-width drawing
      | [hvwlLoDbxXNRSAZ]'[^'\n]*'        # motions and drawing
      | (?P<char>.)
    )""",
    re.X,
)
_SIMPLE = {"-": "-", "e": "\\", "\\": "\\", " ": " ", "~": " ", "0": " ", "|": "", "^": "",
           "&": "", ")": "", "c": "", "%": "", "/": "", ",": "", "t": "\t", "'": "´",
           "`": "`", ".": ".", "!": "", "{": "", "}": "", "p": "", "d": "", "u": "", "r": ""}  # fmt: skip
_SPACES = re.compile(r" {3,}")  # a run of 3+ spaces is one; the two after a tag stay
_TAG_END = "\x00"  # marks an option tag: two spaces, not one, join it to its text
_FONT_MACROS = {"B", "I", "SM", "SB"}
_ALTERNATING = {"BR", "RB", "BI", "IB", "IR", "RI"}
_QUIET = {
    "ad", "na", "hy", "nh", "ne", "ft", "ps", "vs", "in", "ti", "ta", "ll", "lt", "nr", "ds",
    "so", "mso", "pc", "ev", "tr", "bp", "ns", "rs", "cs", "ss", "ul", "cu", "PD", "DT", "UC",
    "AT", "hw", "lf", "rm", "rn", "am", "als", "do", "cc", "c2", "ec", "eo", "fam", "fcolor",
    "gcolor", "char", "fchar", "ie", "el", "if", "wh", "ch", "dt", "it", "itc", "tm", "ab",
    "ex", "pl", "po", "ce", "ls", "ig", "OP", "Dd", "Os", "Dt", "sy", "pso", "fp", "cp",
}  # fmt: skip
_PARAGRAPH = {"PP", "P", "LP", "sp", "HP", "RS", "RE", "br", "UE", "ME", "YS"}
_CONDITIONS = {"if", "ie", "el"}
_OPEN, _CLOSE = re.compile(r"\\\{"), re.compile(r"\\\}")


def _condition(rest: str) -> tuple[bool | None, str]:
    """Whether a terminal's ``man`` (nroff) takes the ``.if``/``.ie`` branch — True, False, or
    None when it can't be told here (registers, strings, page parity) — and the text after the
    condition."""
    rest = rest.lstrip()
    negate = False
    while rest.startswith("!"):
        negate, rest = not negate, rest[1:]
    value: bool | None
    if rest[:1] in ("n", "t", "v") and (len(rest) == 1 or not rest[1].isalnum()):
        value, rest = rest[0] == "n", rest[1:]
    elif rest[:1] in ("o", "e") and (len(rest) == 1 or not rest[1].isalnum()):
        value, rest = None, rest[1:]  # odd or even page
    elif rest[:1] in ("d", "r", "c", "m", "F", "S") and rest[1:2] in (" ", "\t"):
        words = rest.split(None, 2)  # a test of a name: whether it is defined
        value, rest = None, words[2] if len(words) > 2 else ""
    elif rest[:1] in ("'", '"'):
        quote = rest[0]
        parts = rest[1:].split(quote, 2)
        if len(parts) < 3:
            return None, ""
        left, right, rest = parts
        value = None if "\\" in left + right else left == right
    else:
        match = re.match(r"[-+]?\d+(?:\.\d+)?(?=\s|\\\{|$)", rest)
        if match is None:  # a register or expression this reader doesn't evaluate
            return None, rest.split(None, 1)[1] if len(rest.split(None, 1)) > 1 else ""
        value, rest = float(match.group()) > 0, rest[match.end() :]
    if value is not None and negate:
        value = not value
    return value, rest.lstrip()


_TAGGED = {"TP", "TQ"}


def gunzip(data: bytes) -> bytes:
    """``data`` decompressed if it is gzip, else itself; a bomb or a damaged file is refused."""
    if not data.startswith(GZIP_MAGIC):
        return data
    try:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        out = inflater.decompress(data, MAX_UNZIPPED + 1)
    except zlib.error as exc:
        raise SourceError(
            f"The gzipped man page is damaged ({exc}); decompress it and add that."
        ) from exc
    if len(out) <= MAX_UNZIPPED and not inflater.eof:
        raise SourceError(
            "The gzipped man page is damaged (it ends early); decompress it and add that."
        )
    if len(out) > MAX_UNZIPPED:
        raise SourceError(
            f"The gzipped man page expands past {MAX_UNZIPPED:,} bytes; decompress it yourself "
            f"and add the result if it really is a man page."
        )
    return out


def _text(raw: str) -> str:
    """A roff text line with its escapes rendered."""
    comment = re.search(r'\\"', raw)
    if comment:
        raw = raw[: comment.start()]

    def one(match: re.Match[str]) -> str:
        if match.group("two"):
            return _CHARS.get(match.group("two"), "")
        if match.group("name") is not None:
            name = match.group("name")
            if name.startswith("u") and re.fullmatch(r"u[0-9A-Fa-f]{4,6}", name):
                return chr(int(name[1:], 16))
            return _CHARS.get(name, "")
        char = match.group("char")
        if char is not None:
            return _SIMPLE.get(char, char)
        return ""

    return _ESCAPE.sub(one, raw).rstrip("\\")


def _arguments(rest: str) -> list[str]:
    """Macro arguments: whitespace-separated, double quotes group ("" is a quote)."""
    out: list[str] = []
    for match in re.finditer(r'"((?:[^"]|"")*)"?|(\S+)', rest):
        out.append(match.group(1).replace('""', '"') if match.group(2) is None else match.group(2))
    return out


class _Page:
    def __init__(self) -> None:
        self.blocks: list[tuple[str, list[tuple[str, int]]]] = []  # kind, [(line text, line)]
        self.open: list[tuple[str, int]] = []
        self.kind = "p"
        self.title = ""
        self.name_lines: list[str] = []
        self.section = ""
        self.tag_pending = 0  # .TP: the next text line is the tag
        self.tag: list[tuple[str, int]] = []
        self.heading_next = ""  # ".SH" alone: the next text line is the heading

    def flush(self) -> None:
        if self.open:
            kind = "synopsis" if self.kind == "p" and self.section == "SYNOPSIS" else self.kind
            self.blocks.append((kind, self.open))
        self.open = []
        if self.kind != "code":
            self.kind = "p"

    def add(self, text: str, line: int) -> None:
        if self.tag_pending:
            self.tag.append((text, line))
            self.tag_pending -= 1
            if not self.tag_pending:
                self.flush()
                self.kind = "p"
            return
        if self.tag:
            tag = ", ".join(t for t, _ in self.tag)
            self.open = [(f"{tag}{_TAG_END}", self.tag[0][1]), (text.lstrip(), line)]
            self.tag = []
            return
        if self.section == "NAME" and self.kind == "p":
            self.name_lines.append(text)
        self.open.append((text, line))

    def end_tag(self) -> None:
        """A tag with no text after it (the next item or heading came first): a block alone."""
        if self.tag:
            self.blocks.append(("p", list(self.tag)))
            self.tag = []


def extract_roff(data: bytes) -> tuple[str, list[list[int]], str]:
    """The text of the man page ``data`` (gzipped or not), its ``[text_offset, line]`` segments
    and the encoding it was decoded with."""
    from .extract import _decode  # the one decoding rule (import here: extract imports us)

    source, encoding = _decode(gunzip(data))
    page = _Page()
    skipping = ""  # a .de macro definition or .ig block: until its terminator
    unshown = 0  # the depth of \{ ... \} in a conditional block nroff does not show
    taken: bool | None = None  # the last .ie's branch, for its .el
    source_lines = source.split("\n")
    for number, raw in enumerate(source_lines, 1):
        raw = raw.rstrip("\r")
        if skipping:
            # the terminator may have spaces after its control character (".  ." ends an .am)
            if raw[:1] in (".", "'") and "." + raw[1:].strip() == skipping:
                skipping = ""
            continue
        if unshown:
            unshown += len(_OPEN.findall(raw)) - len(_CLOSE.findall(raw))
            unshown = max(unshown, 0)
            continue
        if raw[:1] in (".", "'"):
            request = raw[1:].lstrip()
            if request.startswith(('\\"', "\\#")) or not request:
                continue
            name, _, rest = request.partition(" ")
            rest = rest.strip()
            if name in _CONDITIONS:
                follow = number
                while (
                    rest.endswith("\\") and not rest.endswith("\\\\") and follow < len(source_lines)
                ):
                    rest = rest[:-1] + source_lines[follow].rstrip("\r")  # a continued request line
                    source_lines[follow] = '.\\" (continued above)'
                    follow += 1
                if name == "el":
                    shown = None if taken is None else not taken
                    body = rest
                else:
                    shown, body = _condition(rest)
                    if name == "ie":
                        taken = shown
                depth = len(_OPEN.findall(body)) - len(_CLOSE.findall(body))
                if depth > 0 and shown is not True:
                    unshown = depth  # the block's lines: not what a terminal shows
                words = _CLOSE.sub("", _OPEN.sub("", body)).strip()
                if shown is True and words and words[0] not in ".'":
                    page.add(_text(words), number)  # the branch's own text, shown
                # a branch that is a request (usually .ds or .ad) prints nothing here
                continue
            args = _arguments(rest)
            if name in ("de", "de1", "am", "ig"):
                skipping = "." + (args[1] if len(args) > 1 else ".") if name != "ig" else ".."
                continue
            if name == "TH":
                page.flush()
                if args:
                    page.title = f"{_text(args[0])}({_text(args[1])})" if len(args) > 1 else args[0]
            elif name in ("SH", "SS"):
                page.end_tag()
                page.flush()
                page.kind = "p"
                heading = " ".join(_text(a) for a in args).strip()
                page.section = heading.upper() if name == "SH" else page.section
                if heading:
                    page.blocks.append(("h2" if name == "SH" else "h3", [(heading, number)]))
                else:
                    page.heading_next = "h2" if name == "SH" else "h3"
            elif name in _TAGGED:
                page.end_tag()
                if page.kind != "code":
                    page.flush()
                if name == "TQ" and page.blocks and page.blocks[-1][0] == "p":
                    kind, lines = page.blocks.pop()
                    page.tag = [lines[0]] if len(lines) == 1 else []
                    if not page.tag:
                        page.blocks.append((kind, lines))
                page.tag_pending = 1
            elif name == "IP":
                page.end_tag()
                page.flush()
                if args and args[0] not in ("\\(bu", "\\[bu]", "*", "-", "\\-", "o"):
                    page.tag = [(_text(args[0]), number)]
                elif args:
                    page.open = []
            elif name in ("nf", "EX", "TS"):
                page.end_tag()
                page.flush()
                page.kind = "code"
            elif name in ("fi", "EE", "TE"):
                page.flush()
                page.kind = "p"
            elif name in _PARAGRAPH:
                if name == "br" and page.kind == "code":
                    continue
                if name != "br" or page.section != "NAME":
                    page.end_tag()
                    if page.kind != "code":
                        page.flush()
            elif name in _FONT_MACROS:
                words = " ".join(_text(a) for a in args)
                if words:
                    page.add(words, number)
            elif name in _ALTERNATING:
                page.add("".join(_text(a) for a in args), number)
            elif name in ("UR", "MT"):
                continue
            elif name in ("SY",):
                page.flush()
                page.open = [(" ".join(_text(a) for a in args), number)]
            elif name in _QUIET or name.startswith(("T{", "T}")):
                continue
            # an unknown request prints nothing
            continue
        if page.kind == "code" and raw.startswith(("T{", "T}")):
            raw = raw[2:]
        text = _text(raw) if page.kind != "code" else _text(raw).replace("\t", "  ")
        if page.kind != "code" and not text.strip():
            page.end_tag()
            page.flush()
            continue
        if page.heading_next:
            heading = " ".join(text.split())
            page.section = heading.upper() if page.heading_next == "h2" else page.section
            page.blocks.append((page.heading_next, [(heading, number)]))
            page.heading_next = ""
            continue
        page.add(text, number)
    page.end_tag()
    page.flush()
    text, segments = _render(page)
    return text, segments, encoding


def _render(page: _Page) -> tuple[str, list[list[int]]]:
    parts: list[str] = []
    segments: list[list[int]] = []
    length = 0

    def write(text: str, line: int) -> None:
        nonlocal length
        if not segments or segments[-1][1] != line:
            segments.append([length, line])
        parts.append(text)
        length += len(text)

    name = " ".join(" ".join(page.name_lines).split())
    title = name or page.title
    first_line = page.blocks[0][1][0][1] if page.blocks else 1
    if title:
        write(f"# {title}\n", first_line)
    for kind, lines in page.blocks:
        if kind == "code":
            body = [(t, n) for t, n in lines]
            while body and not body[-1][0].strip():
                body.pop()
            while body and not body[0][0].strip():
                body.pop(0)
            if not body:
                continue
            write("\n```\n", body[0][1])
            for text, line in body:
                write(re.sub(r"^(\s*)(```|~~~)", r"\1 \2", text) + "\n", line)
            write("```\n", body[-1][1])
            continue
        texts = [
            (_SPACES.sub("  ", t.replace("\t", "  ")).strip(), n) for t, n in lines if t.strip()
        ]
        if not texts:
            continue
        if kind in ("h2", "h3"):
            heading = texts[0][0]
            write("\n" + ("## " if kind == "h2" else "### ") + heading + "\n", texts[0][1])
            continue
        if kind == "synopsis":
            write("\n```\n", texts[0][1])
        else:
            write("\n", texts[0][1])
        joint = ""
        for text, line in texts:  # filled, as man shows a paragraph
            write(joint + text.rstrip(_TAG_END), line)
            joint = "  " if text.endswith(_TAG_END) else " "
        write("\n```\n" if kind == "synopsis" else "\n", texts[-1][1])
    return "".join(parts), segments
