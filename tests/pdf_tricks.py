"""Hand-written PDFs for the hidden-text tests: one page, Helvetica, a content stream the test
writes operator by operator, and whatever resources a trick needs (graphics states with fill
alpha or soft masks, optional-content groups switched off, Form XObjects).

Each technique of issue 23's list is a function of the hidden sentence giving the content-stream
lines that draw it (and the resources it needs); :func:`page` puts a visible control sentence
above and below it, drawn plainly, so a test can check that the control stays clean.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


@dataclass
class Trick:
    """Content-stream lines that draw ``{s}`` (the hidden sentence) and the resources they use:
    extra objects (``name -> body``, referenced as ``{ref:name}``), /ExtGState, /XObject and
    /Properties entries, and whether the document's optional content is switched off."""

    lines: list[str]
    objects: dict[str, str] = field(default_factory=dict)
    ext_gstate: dict[str, str] = field(default_factory=dict)
    xobjects: dict[str, str] = field(default_factory=dict)
    properties: dict[str, str] = field(default_factory=dict)
    ocg_off: list[str] = field(default_factory=list)


def text_line(x: float, y: float, text: str, size: float = 12) -> str:
    return f"BT /F1 {size:g} Tf {x:g} {y:g} Td ({_escape(text)}) Tj ET"


TRICKS: dict[str, Callable[[str], Trick]] = {
    # issue 23, item 5: the nine PDF techniques that got through
    "fill alpha /ca 0": lambda s: Trick(
        ["q /GS0 gs", text_line(72, 600, s), "Q"], ext_gstate={"GS0": "<< /ca 0 /CA 0 >>"}
    ),
    "optional content layer off": lambda s: Trick(
        ["/OC /L0 BDC", text_line(72, 600, s), "EMC"],
        objects={"ocg": "<< /Type /OCG /Name (Secret) >>"},
        properties={"L0": "{ref:ocg}"},
        ocg_off=["ocg"],
    ),
    "text rise off the page": lambda s: Trick(
        [f"BT /F1 12 Tf 72 600 Td 2000 Ts ({_escape(s)}) Tj ET"]
    ),
    "stroke-only white text": lambda s: Trick(
        [f"BT /F1 12 Tf 1 Tr 1 1 1 RG 0 0 1 rg 72 600 Td ({_escape(s)}) Tj ET"]
    ),
    "form xobject at 1% scale": lambda s: Trick(
        ["q 0.01 0 0 0.01 72 600 cm /Fm0 Do Q"],
        objects={
            "form": "<< /Type /XObject /Subtype /Form /BBox [0 0 5000 100] "
            "/Resources << /Font << /F1 {ref:font} >> >> /Length {len} >>\nstream\n"
            + text_line(0, 10, s)
            + "\nendstream"
        },
        xobjects={"Fm0": "{ref:form}"},
    ),
    "soft mask": lambda s: Trick(
        ["q /GS1 gs", text_line(72, 600, s), "Q"],
        objects={
            "mask": "<< /Type /XObject /Subtype /Form /BBox [0 0 612 792] /Group << /S "
            "/Transparency /CS /DeviceGray >> /Length {len} >>\nstream\n0 g 0 0 612 792 re f"
            "\nendstream"
        },
        ext_gstate={"GS1": "<< /SMask << /S /Luminosity /G {ref:mask} >> >>"},
    ),
    "horizontal scaling 1 Tz": lambda s: Trick(
        [f"BT /F1 12 Tf 1 Tz 72 600 Td ({_escape(s)}) Tj ET"]
    ),
    "character spacing -7 Tc": lambda s: Trick(
        [f"BT /F1 12 Tf -7 Tc 72 600 Td ({_escape(s)}) Tj ET"]
    ),
    "white rectangle over the text": lambda s: Trick(
        [text_line(72, 600, s), "q 1 g 60 590 500 30 re f Q"]
    ),
    # and more of the same families, which no rule names
    "text under a later text's opaque box": lambda s: Trick(
        [text_line(72, 600, s), "q 0.9 0.9 1 rg 60 590 500 30 re f Q"]
    ),
    "fill alpha /ca 0.02 with a dark fill": lambda s: Trick(
        ["q /GS0 gs 0 g", text_line(72, 600, s), "Q"], ext_gstate={"GS0": "<< /ca 0.02 >>"}
    ),
    "text matrix squashed flat": lambda s: Trick(
        [f"BT /F1 12 Tf 1 0 0 0.005 72 600 Tm ({_escape(s)}) Tj ET"]
    ),
    "blue text on a blue box": lambda s: Trick(
        ["q 0 0 1 rg 60 590 500 30 re f Q", f"BT /F1 12 Tf 0 0 1 rg 72 600 Td ({_escape(s)}) Tj ET"]
    ),
    "clipped by a later-restored clip": lambda s: Trick(
        ["q 0 0 1 1 re W n", text_line(72, 600, s), "Q"]
    ),
    "render mode 7 (clip only)": lambda s: Trick(
        [f"BT /F1 12 Tf 7 Tr 72 600 Td ({_escape(s)}) Tj ET"]
    ),
}
"""Each technique: the hidden sentence ``s`` drawn at (72, 600), where nothing else is."""


def page(trick: Trick, above: str, below: str) -> bytes:
    """A one-page US-letter PDF: ``above`` at the top, the trick's lines, ``below`` at the bottom."""
    content = "\n".join(
        [text_line(72, 720, above), "q", *trick.lines, "Q", text_line(72, 300, below)]
    )
    return build(content, trick)


def build(content: str, trick: Trick | None = None) -> bytes:
    """A PDF of one page drawing ``content`` with Helvetica as /F1 and ``trick``'s resources."""
    trick = trick or Trick([])
    names = ["catalog", "pages", "page", "font", "content", *trick.objects]
    ref = {name: f"{i + 1} 0 R" for i, name in enumerate(names)}

    def fill(body: str) -> str:
        for name, r in ref.items():
            body = body.replace("{ref:" + name + "}", r)
        if "{len}" in body:
            start = body.index("stream\n") + len("stream\n")
            stop = body.rindex("\nendstream")
            body = body.replace("{len}", str(len(body[start:stop].encode("latin-1"))), 1)
        return body

    def resources(kind: str, entries: dict[str, str]) -> str:
        if not entries:
            return ""
        inner = " ".join(f"/{k} {fill(v)}" for k, v in entries.items())
        return f" /{kind} << {inner} >>"

    oc = ""
    if trick.ocg_off:
        groups = " ".join(ref[n] for n in trick.objects if "OCG" in trick.objects[n])
        off = " ".join(ref[n] for n in trick.ocg_off)
        oc = f" /OCProperties << /OCGs [{groups}] /D << /OFF [{off}] >> >>"
    bodies = {
        "catalog": f"<< /Type /Catalog /Pages {ref['pages']}{oc} >>",
        "pages": f"<< /Type /Pages /Kids [{ref['page']}] /Count 1 >>",
        "page": (
            f"<< /Type /Page /Parent {ref['pages']} /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 {ref['font']} >>"
            + resources("ExtGState", trick.ext_gstate)
            + resources("XObject", trick.xobjects)
            + resources("Properties", trick.properties)
            + f" >> /Contents {ref['content']} >>"
        ),
        "font": "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        "content": "<< /Length {len} >>\nstream\n" + content + "\nendstream",
        **trick.objects,
    }
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for i, name in enumerate(names):
        offsets.append(len(out))
        out += f"{i + 1} 0 obj\n{fill(bodies[name])}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(names) + 1}\n0000000000 65535 f \n".encode()
    for offset in offsets:
        out += f"{offset:010d} 00000 n \n".encode()
    out += f"trailer\n<< /Size {len(names) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


__all__ = ["TRICKS", "Trick", "build", "page", "text_line"]
