"""Property (issue 23): random combinations of CSS colour, opacity, size, transform and clipping,
rendered by chromium; where the combination is clearly readable the text is never flagged, and
where it clearly is not (transparent, the background's colour, a speck, thrown off the page,
clipped away) it always is. The oracle is plain arithmetic on the styles, not the renderer's
own rules; combinations in between (faint, small, half-transparent) assert nothing.

Each example is one document of several paragraphs, so the browser lays out a few documents.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from affidavit.sources.extract import extract
from affidavit.sources.render_html import available
from tests.test_hidden_text import covered, untouched

pytestmark = pytest.mark.skipif(available() != "", reason="no renderer for HTML")

COLOURS: dict[str, tuple[float, float, float, float]] = {
    "#000": (0, 0, 0, 1),
    "#fff": (1, 1, 1, 1),
    "#777": (0.467, 0.467, 0.467, 1),
    "rgb(255 255 255)": (1, 1, 1, 1),
    "hsl(0 0% 100%)": (1, 1, 1, 1),
    "oklch(1 0 0)": (1, 1, 1, 1),
    "#123456": (0.071, 0.204, 0.337, 1),
    "rgb(0 0 0 / 3%)": (0, 0, 0, 0.03),
    "color-mix(in srgb, white 50%, black)": (0.5, 0.5, 0.5, 1),
    "transparent": (0, 0, 0, 0),
}
BACKGROUNDS: dict[str, tuple[float, float, float]] = {
    "#fff": (1, 1, 1),
    "#000": (0, 0, 0),
    "#123456": (0.071, 0.204, 0.337),
    "hwb(0 100% 0%)": (1, 1, 1),
}
OPACITY = [1.0, 0.7, 0.3, 0.04, 0.0]
SIZES = [18, 12, 5, 1]  # px
TRANSFORMS = {  # how much the text is scaled (0 when it leaves the page)
    "none": 1.0,
    "rotate(4deg)": 1.0,
    "scale(0.6)": 0.6,
    "scale(0.04)": 0.04,
    "translateX(-4000px)": 0.0,
    "translate(0, -5000px)": 0.0,
    "scaleX(0.02)": 0.02,
    "rotate3d(1, 0, 0, 90deg)": 0.0,
}
CLIPS = {"none": False, "inset(0)": False, "inset(50%)": True, "circle(0)": True}


@dataclass(frozen=True)
class Style:
    colour: str
    background: str
    opacity: float
    size: int
    transform: str
    clip: str

    def css(self) -> str:
        return (
            f"color:{self.colour};opacity:{self.opacity};font-size:{self.size}px;"
            f"transform:{self.transform};clip-path:{self.clip};margin:0"
        )

    def _contrast(self) -> float:
        r, g, b, a = COLOURS[self.colour]
        alpha = a * self.opacity
        back = BACKGROUNDS[self.background]
        shown = tuple(alpha * c + (1 - alpha) * k for c, k in zip((r, g, b), back, strict=True))
        lighter, darker = sorted((_luminance(shown), _luminance(back)), reverse=True)
        return (lighter + 0.05) / (darker + 0.05)

    def clearly_visible(self) -> bool:
        scale = TRANSFORMS[self.transform]
        return (
            self._contrast() >= 3
            and COLOURS[self.colour][3] * self.opacity >= 0.6
            and self.size * scale >= 10
            and not CLIPS[self.clip]
        )

    def clearly_hidden(self) -> bool:
        scale = TRANSFORMS[self.transform]
        return (
            self._contrast() < 1.05
            or COLOURS[self.colour][3] * self.opacity <= 0.05
            or self.size * scale <= 1.5
            or scale == 0.0
            or CLIPS[self.clip]
        )


def _luminance(rgb: tuple[float, ...]) -> float:
    def linear(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


styles = st.builds(
    Style,
    colour=st.sampled_from(sorted(COLOURS)),
    background=st.sampled_from(sorted(BACKGROUNDS)),
    opacity=st.sampled_from(OPACITY),
    size=st.sampled_from(SIZES),
    transform=st.sampled_from(sorted(TRANSFORMS)),
    clip=st.sampled_from(sorted(CLIPS)),
)
WORDS = ["harbour", "quay", "ferry", "lantern", "anchor", "beacon", "tide", "gull", "pier"]


def _sentence(index: int) -> str:
    name = "".join(chr(ord("A") + int(d)) for d in f"{index:03d}")
    return f"The {WORDS[index % len(WORDS)]} of Port {name} was mapped in {1800 + index}."


@settings(
    max_examples=15,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.lists(styles, min_size=6, max_size=6))
def test_the_flag_agrees_with_what_a_reader_can_see(combos: list[Style]) -> None:
    paragraphs = "".join(
        f'<div style="background:{style.background};padding:12px 8px">'
        f'<p style="{style.css()}">{_sentence(i)}</p></div>'
        for i, style in enumerate(combos)
    )
    result = extract(f"<html><body>{paragraphs}</body></html>".encode(), "text/html")
    for i, style in enumerate(combos):
        sentence = _sentence(i)
        if style.clearly_visible():
            assert untouched(result, sentence), (style, [f.detail for f in result.flags])
        elif style.clearly_hidden():
            assert covered(result, sentence), (style, [f.detail for f in result.flags])
