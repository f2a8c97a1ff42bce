"""Issue 23's list of hidden-text techniques that got through the rules (item 5), written
from its description, each as a fragment of a document with ``{s}`` where the hidden sentence
goes; the tests put a visible control sentence in the same document."""

from __future__ import annotations

HTML: dict[str, str] = {
    # modern colour syntax
    "rgb() space-separated white": '<p style="color:rgb(255 255 255)">{s}</p>',
    "hsl() white": '<p style="color:hsl(0 0% 100%)">{s}</p>',
    "rgb() with 5% alpha": '<p style="color:rgb(0 0 0 / 5%)">{s}</p>',
    "hwb() white": '<p style="color:hwb(0 100% 0%)">{s}</p>',
    "lab() white": '<p style="color:lab(100% 0 0)">{s}</p>',
    "oklch() white": '<p style="color:oklch(1 0 0)">{s}</p>',
    "color() white": '<p style="color:color(srgb 1 1 1)">{s}</p>',
    "color-mix() white": '<p style="color:color-mix(in srgb, white 100%, black)">{s}</p>',
    # sizes and places the rules did not work out
    "html 1px font and 1rem": "<style>html{font-size:1px}body{font-size:16px}.r{font-size:1rem}</style>"
    '<p class=r>{s}</p><p style="font-size:16px">{v}</p>',
    "translate: property": '<p style="translate:-9999px 0">{s}</p>',
    "margin shorthand": '<p style="margin:0 0 0 -9999px">{s}</p>',
    "inset shorthand": '<p style="position:absolute;inset:-9999px auto auto auto">{s}</p>',
    "rotate3d 90deg": '<p style="transform:rotate3d(1, 0, 0, 90deg)">{s}</p>',
    "perspective far away": (
        '<div style="perspective:10px"><p style="transform:translateZ(-5000px)">{s}</p></div>'
    ),
    "lh units": '<p style="font-size:0.1lh">{s}</p>',
    "::first-line white": "<style>.f::first-line{color:#fff}</style><p class=f>{s}</p>",
    "filter blur()": '<p style="filter:blur(12px)">{s}</p>',
    "filter brightness(0) invert(1)": '<p style="filter:brightness(0) invert(1)">{s}</p>',
    "clip-path path()": "<p style=\"clip-path:path('M0 0')\">{s}</p>",
    "negative letter-spacing": '<p style="letter-spacing:-1em">{s}</p>',
    "position fixed off-screen": '<p style="position:fixed;top:-300px;left:0">{s}</p>',
    "popover attribute": "<div popover>{s}</div>",
    "<title> in body": "<title>{s}</title>",
    "data: stylesheet": (
        '<link rel="stylesheet" href="data:text/css,.d%7Bdisplay:none%7D"><p class=d>{s}</p>'
    ),
    "clipped by overflow hidden": (
        '<div style="height:1.2em;overflow:hidden;line-height:1.2em">'
        "<span>Harbour.</span><br>{s}</div>"
    ),
    "fixed off the right edge": '<p style="position:fixed;left:100vw;top:0">{s}</p>',
    "white text-shadowless on white via -webkit-text-fill-color": (
        '<p style="-webkit-text-fill-color:#fff">{s}</p>'
    ),
}
"""The 27 HTML/CSS techniques (``{v}``, where used, is where the visible control goes)."""

MARKDOWN: dict[str, str] = {
    "processing instruction <?php ?>": "<?php {s} ?>",
    "CDATA section": "<![CDATA[{s}]]>",
    "DOCTYPE declaration": "<!DOCTYPE {s}>",
    "element declaration": "<!ELEMENT {s}>",
    "div popover": "<div popover>{s}</div>",
    "inline processing instruction": "The quay <?xml {s} ?> is busy.",
}
"""The markdown techniques (front matter is tested on its own: it must come first)."""

PDF = (
    "fill alpha /ca 0",
    "optional content layer off",
    "text rise off the page",
    "stroke-only white text",
    "form xobject at 1% scale",
    "soft mask",
    "horizontal scaling 1 Tz",
    "character spacing -7 Tc",
    "white rectangle over the text",
)
"""The nine PDF techniques (drawn by :data:`tests.pdf_tricks.TRICKS`)."""
