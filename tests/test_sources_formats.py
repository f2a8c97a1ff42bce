"""Extraction of the formats people keep: reStructuredText, man pages, and HTML's structure.

Each test feeds a real format's bytes and checks what a reader of the rendered document would
see: the document's own title first, headings as ATX lines, code out of prose, option names kept,
and a map from every offset back to a line of the original.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from affidavit.errors import SourceError
from affidavit.extractive.segment import segment
from affidavit.sources.extract import MAN, RST, detect_media_type, extract, location, locator
from affidavit.sources.sentences import number_sentences
from affidavit.sources.store import SourceStore
from affidavit.vault import init_vault

JSON_RST = """\
:mod:`json` --- JSON encoder and decoder
========================================

.. module:: json
   :synopsis: Encode and decode the JSON format.

.. sectionauthor:: Bob Ippolito <bob@redivi.com>

.. This comment says the decoder is unsafe; a reader never sees it.

:mod:`json` exposes an API familiar to users of the standard library
:mod:`marshal` and :func:`~pickle.dumps` modules, as |project| documents.

.. |project| replace:: the Python project

Encoding basic Python object hierarchies::

    >>> import json
    >>> json.dumps(['foo', {'bar': ('baz', None, 1.0, 2)}])
    '["foo", {"bar": ["baz", null, 1.0, 2]}]'

Infinite and NaN Number Values
^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^

The specification does not permit *infinite* or **NaN** number values.

.. function:: dumps(obj, *, skipkeys=False)

   Serialize *obj* to a JSON formatted :class:`str` using this
   :ref:`conversion table <py-to-json-table>`.

   .. versionchanged:: 3.6
      All optional parameters are now keyword-only.

.. code-block:: python

   ComplexEncoder().encode(2 + 1j)

>>> json.loads('1.1')
1.1

+----------+--------+
| JSON     | Python |
+==========+========+
| object   | dict   |
+----------+--------+
"""


def test_rst_renders_as_a_reader_sees_it() -> None:
    result = extract(JSON_RST.encode(), RST)
    text = result.text
    assert text.startswith("# json --- JSON encoder and decoder\n")
    assert "## Infinite and NaN Number Values\n" in text
    assert "^^^" not in text and ":mod:" not in text and ":func:" not in text
    assert (
        "json exposes an API familiar to users of the standard library\nmarshal and dumps" in text
    )
    assert "as the Python project documents." in text  # a substitution, resolved
    assert "does not permit infinite or NaN number values." in text  # emphasis gone, words kept
    assert "Serialize obj to a JSON formatted str using this\nconversion table." in text
    assert "Changed in version 3.6." in text and "keyword-only" in text
    for directive in ("synopsis", "sectionauthor", "Ippolito", "module::"):
        assert directive not in text


def test_rst_escaped_characters_are_the_characters_a_reader_sees() -> None:
    source = "Title\n=====\n\nIt produces floats and has a period of 2\\*\\*19937-1.\n"
    text = extract(source.encode(), RST).text
    assert "has a period of 2**19937-1." in text
    assert "\x00" not in text  # docutils' escape marker is not a character of the document


def test_rst_code_doctests_signatures_and_tables_are_fenced() -> None:
    text = extract(JSON_RST.encode(), RST).text
    fenced = text.split("```\n")[1::2]
    assert any(">>> import json" in b for b in fenced)
    assert any(b.startswith("dumps(obj, *, skipkeys=False)") for b in fenced)
    assert any("ComplexEncoder().encode(2 + 1j)" in b for b in fenced)
    assert any(">>> json.loads('1.1')" in b for b in fenced)
    assert any("object | dict" in b for b in fenced)
    # and so the segmenter never makes a sentence of them
    sentences = [text[s.start : s.end] for s in segment(text).sentences]
    assert not any(">>>" in s or "ComplexEncoder" in s or "skipkeys" in s for s in sentences)
    assert any(s.startswith("The specification does not permit") for s in sentences)


@pytest.mark.parametrize(
    ("expression", "shown"),
    [
        ("html", True),
        ("latex", False),
        ("not latex", True),
        ("html and latex", False),
        ("latex or format_html", True),
        ("not (latex or epub)", True),
        ("(html", False),  # can't be read: not shown
        ("html )", False),
    ],
)
def test_rst_only_blocks_are_what_an_html_reader_sees(expression: str, shown: bool) -> None:
    """Sphinx's ``only`` directive: a body for another builder (``latex``) is not on the page a
    reader opens, so it is no quotable text (an attacker's ``.. only:: latex`` block, W12)."""
    source = (
        "Title\n=====\n\nVisible words about the harbour.\n\n"
        f".. only:: {expression}\n\n   The builder's own words say the mill burned.\n\n"
        "Last words.\n"
    )
    text = extract(source.encode(), RST).text
    assert "Visible words about the harbour." in text and "Last words." in text
    assert ("the mill burned" in text) is shown


def test_rst_comment_is_dropped_and_flagged_where_it_was() -> None:
    result = extract(JSON_RST.encode(), RST)
    assert "unsafe" not in result.text
    (flag,) = [f for f in result.flags if "comment" in f.detail]
    assert flag.kind == "hidden" and flag.start == flag.end
    assert "line 9" in flag.detail and "decoder is unsafe" in flag.detail


def test_rst_offsets_map_to_the_lines_of_the_original() -> None:
    result = extract(JSON_RST.encode(), RST)
    text, text_map = result.text, result.text_map
    assert text_map["kind"] == "lines" and text_map["encoding"] == "utf-8"
    lines = JSON_RST.split("\n")
    for needle in ("exposes an API", "marshal and", "does not permit", "Serialize", "1.1"):
        where = location(text, text_map, text.index(needle))
        number = int(where.removeprefix("line "))
        assert needle.split()[0] in lines[number - 1], (needle, where)
    where = locator(text, text_map)
    assert [where(i) for i in range(0, len(text), 37)] == [
        location(text, text_map, i) for i in range(0, len(text), 37)
    ]


def test_rst_reads_no_other_file_and_passes_no_raw_html(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("The launch code is 0000.\n")
    doc = (
        f"Title\n=====\n\nVisible text here.\n\n.. include:: {secret}\n\n"
        f".. raw:: html\n\n   <p>Raw HTML text.</p>\n\n"
        f".. literalinclude:: {secret}\n"
    )
    text = extract(doc.encode(), RST).text
    assert "launch code" not in text and "Raw HTML" not in text
    assert "Visible text here." in text


def test_rst_without_a_title_and_broken_markup_still_extracts() -> None:
    doc = "Some *unclosed emphasis and :unknownrole:`thing` here.\n\nSection\n-------\n\nBody.\n"
    text = extract(doc.encode(), RST).text
    assert "thing here." in text and ":unknownrole:" not in text
    assert "# Section\n" in text
    with pytest.raises(SourceError, match="no text"):
        extract(b".. a comment only\n", RST)


LS_MAN = r""".\" DO NOT MODIFY THIS FILE!  It was generated by help2man 1.49.3.
.TH LS "1" "September 2022" "GNU coreutils 9.1" "User Commands"
.SH NAME
ls \- list directory contents
.SH SYNOPSIS
.B ls
[\fI\,OPTION\/\fR]... [\fI\,FILE\/\fR]...
.SH DESCRIPTION
.\" Add any additional description here
.PP
List information about the FILEs (the current directory by default).
Sort entries alphabetically if none of \fB\-cftuvSUX\fR nor \fB\-\-sort\fR is specified.
.TP
\fB\-a\fR, \fB\-\-all\fR
do not ignore entries starting with .
.TP
\fB\-D\fR, \fB\-\-dired\fR
generate output designed for Emacs' dired mode
.SS "Exit status:"
.TP
0
if OK,
.SH EXAMPLES
.nf
ls \-l /tmp
.fi
"""


def test_man_page_keeps_option_names_and_headings() -> None:
    result = extract(LS_MAN.encode(), MAN)
    text = result.text
    assert text.startswith("# ls - list directory contents\n")
    assert "## DESCRIPTION\n" in text and "### Exit status:\n" in text
    assert "-a, --all  do not ignore entries starting with .\n" in text
    assert "-D, --dired  generate output designed for Emacs' dired mode\n" in text
    assert "\\f" not in text and "\\-" not in text and "help2man" not in text
    assert "Sort entries alphabetically if none of -cftuvSUX nor --sort is specified." in text
    assert "```\nls -l /tmp\n```" in text
    sentences = [text[s.start : s.end] for s in segment(text).sentences]
    assert "-D, --dired  generate output designed for Emacs' dired mode" in sentences
    where = location(text, result.text_map, text.index("generate output"))
    assert (
        where
        == f"line {LS_MAN.split(chr(10)).index('generate output designed for Emacs' + chr(39) + ' dired mode') + 1}"
    )


_CONDITIONAL_PAGE = rb""".TH FOO 1
.SH DESCRIPTION
Foo copies files.
.if t \{\
Typeset only: foo deletes every file it reads.
.if n \{\
Nested in the typeset branch: foo is unsafe.
.\}
.\}
.if 0 \{ Never shown: foo was written in 1970. \}
.ie \n(.g \{\
An unknown register's branch: foo phones home.
.\}
.el \{\
Its other branch: foo is slow.
.\}
.if \n(.H>23 .if \n(.V>19 \
\{\
A continued condition: foo needs root.
.\}
.if n \{\
A terminal shows this: foo keeps the originals.
.\}
.ie t The typeset one-liner.
.el \{\
The terminal branch of the pair: foo follows links.
.\}
Foo exits with status 0.
"""


def test_man_page_conditional_blocks_show_what_a_terminal_shows() -> None:
    """``.if``/``.ie``/``.el`` blocks (``\\{ ... \\}``) that nroff in a terminal does not take,
    or that this reader cannot evaluate, are not text: an attacker's ``.if 0`` block can't be
    quoted as what the page says (W12)."""
    text = extract(_CONDITIONAL_PAGE, MAN).text
    for shown in (
        "Foo copies files.",
        "A terminal shows this: foo keeps the originals.",
        "The terminal branch of the pair: foo follows links.",
        "Foo exits with status 0.",
    ):
        assert shown in text, shown
    for unshown in (
        "deletes every file",
        "Nested in the typeset branch",
        "written in 1970",
        "phones home",
        "foo is slow",
        "needs root",
        "typeset one-liner",
    ):
        assert unshown not in text, unshown


def test_a_macro_ended_with_spaces_after_the_dot_ends_there() -> None:
    """``.  .`` ends a macro definition as ``..`` does (generated pages write it inside
    ``.am``): the rest of the page is text, not part of the macro."""
    page = (
        b".TH FOO 1\n.SH NAME\nfoo \\- do it\n.am URL\n.  ad l\n.  .\n.SH DESCRIPTION\nFoo runs.\n"
    )
    text = extract(page, MAN).text
    assert "Foo runs." in text and "ad l" not in text


def test_gzipped_man_page_is_read_and_a_bomb_is_refused() -> None:
    assert extract(gzip.compress(LS_MAN.encode()), MAN).text == extract(LS_MAN.encode(), MAN).text
    with pytest.raises(SourceError, match="expands past"):
        extract(gzip.compress(b".TH X 1\n" + b"a" * 60_000_000), MAN)
    with pytest.raises(SourceError, match="damaged"):
        extract(b"\x1f\x8b\x08\x00garbage", MAN)


@pytest.mark.parametrize(
    ("name", "expected"),
    [("ls.1", MAN), ("printf.3p", MAN), ("ls.1.gz", MAN), ("tar.8", MAN), ("notes.1x", MAN)],
)
def test_man_page_names_are_recognised(name: str, expected: str) -> None:
    assert detect_media_type(name, b".TH X 1\n") == expected


def test_a_gzipped_man_page_is_added_from_a_directory_but_other_gzip_is_not(
    tmp_path: Path,
) -> None:
    vault, _ = init_vault(tmp_path / "vault")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ls.1.gz").write_bytes(gzip.compress(LS_MAN.encode()))
    (docs / "data.txt").write_bytes(gzip.compress(b"not text"))
    store = SourceStore(vault)
    assert [p.name for p in store.discover(docs)] == ["data.txt", "ls.1.gz"]
    added = store.add_file(docs / "ls.1.gz")
    assert added.record.media_type == MAN and added.record.original_file.endswith(".man")
    assert "-D, --dired" in store.text(added.record.id)
    with pytest.raises(SourceError, match="gzip"):
        store.add_file(docs / "data.txt")
    vault.close()


def test_help_output_in_plain_text_keeps_each_option_whole() -> None:
    help_text = (
        "Usage: ls [OPTION]... [FILE]...\n\n"
        "  -a, --all                  do not ignore entries starting with .\n"
        "      --author               with -l, print the author of each file\n"
        "  -b, --escape               print C-style escapes for nongraphic characters\n"
        "-The awarding of prizes follows the rules.\n"
    )
    sentences = [help_text[s.start : s.end] for s in segment(help_text).sentences]
    assert "-a, --all                  do not ignore entries starting with ." in sentences
    assert "--author               with -l, print the author of each file" in sentences
    assert any(s.startswith("-b, --escape") for s in sentences)
    assert not any(s.startswith(("a, --all", "author", "b, --escape")) for s in sentences)


def test_sentence_numbers_of_stored_text_do_not_move_with_the_segmenter() -> None:
    """Pending and applied citations name sentences by number: numbering stays on the rules it
    was made with (version 1), whatever the engine's segmenter does now."""
    text = "Intro line here.\n\n  -a, --all   do not ignore\n  -b, --escape   print escapes\n"
    numbered = [text[s.start : s.end] for s in number_sentences(text)]
    assert numbered == [
        "Intro line here.",
        "a, --all   do not ignore\n  -b, --escape   print escapes",
    ]
    assert [text[s.start : s.end] for s in segment(text, 1).sentences] == numbered


def test_html_headings_are_atx_lines_and_code_is_fenced() -> None:
    page = (
        b"<html><head><title>bisect - docs</title></head><body>"
        b'<div role="navigation"><h3>Navigation</h3><a href="/">index</a></div>'
        b'<nav><a href="/next">next</a></nav>'
        b'<h1>bisect \xe2\x80\x94 Array bisection<a class="headerlink" href="#b">\xc2\xb6</a></h1>'
        b'<dl class="py function"><dt class="sig sig-object py">bisect.bisect_left(a, x)</dt>'
        b"<dd><p>Locate the insertion point for x in a.</p></dd></dl>"
        b'<h2>Examples</h2><div class="highlight"><pre>&gt;&gt;&gt; bisect(a, 3)\n2\n</pre></div>'
        b"</body></html>"
    )
    text = extract(page, "text/html").text
    assert text.startswith("# bisect - docs\n")  # the document's own title first
    assert "# bisect — Array bisection\n" in text and "¶" not in text
    assert "## Examples\n" in text
    assert "```\nbisect.bisect_left(a, x)\n```" in text
    assert "```\n>>> bisect(a, 3)\n2\n```" in text
    assert "Navigation" not in text and "index" not in text and "next" not in text


def test_etc_and_no_end_a_sentence_before_a_capital_in_version_2_only() -> None:
    text = "Use callbacks etc. If you want, call it. In general, no. There are many. See No. 5."
    assert [text[s.start : s.end] for s in segment(text).sentences] == [
        "Use callbacks etc.",
        "If you want, call it.",
        "In general, no.",
        "There are many.",
        "See No. 5.",
    ]
    assert len(number_sentences(text)) == 3  # numbering keeps version 1's sentences


def test_a_hidden_heading_names_no_section() -> None:
    """An ATX heading now comes out of HTML; hidden by CSS, it must not name a section (W12)."""
    page = (
        b"<style>.x{display:none}</style><h1>Port Elling</h1><h2 class=x>Secret Zorvath</h2>"
        b"<p>The harbour wall of Port Elling was rebuilt in 1904 after a great storm.</p>"
        b"<p class=x>SECRET ZORVATH NOTES. The vault holds the charts of the admiral.</p>"
    )
    result = extract(page, "text/html")
    hidden = tuple((f.start, f.end) for f in result.flags)
    seg = segment(result.text, hidden=hidden)
    assert [h.text for h in seg.headings] == ["Port Elling"]
    assert {s.section for s in seg.sentences} == {"Port Elling"}
    assert "Secret Zorvath" in [h.text for h in segment(result.text).headings]  # unflagged


def test_an_option_wrapped_onto_a_line_of_prose_stays_in_its_sentence() -> None:
    text = (
        "A second way of starting the interpreter is python -c command, analogous to the shell's\n"
        "-c option.  Since Python statements often contain spaces, quote the command.\n"
    )
    sentences = [text[s.start : s.end] for s in segment(text).sentences]
    assert sentences[0].endswith("analogous to the shell's\n-c option.")


def test_rst_file_metadata_before_the_title_is_not_text() -> None:
    doc = (
        ":tocdepth: 2\n\n==================\nGeneral Python FAQ\n==================\n\nBody text.\n"
    )
    assert extract(doc.encode(), RST).text == "# General Python FAQ\n\nBody text.\n"
