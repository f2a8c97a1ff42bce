"""CSS values as a browser computes them, for the styler (:mod:`affidavit.sources.css`, W12):
lengths in px (``em``, ``rem``, viewport units, ``calc()``), colours and their contrast, opacity,
and the shapes of a value that hide what they style (a clip path, a transform, a mask).

The viewport is taken as 1280×800 px and the root font as 16 px: a length in viewport units or
``rem`` is judged on that screen.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import tinycss2
import tinycss2.color3

from .css_calc import MATH_FUNCTIONS, evaluate

ROOT_FONT_PX = 16.0
TINY_FONT_PX = 2.0
FAINT_OPACITY = 0.1
MIN_CONTRAST = 1.1
OFF_SCREEN_PX = 500.0


_FONT_KEYWORDS = {
    "xx-small": 9.0, "x-small": 10.0, "small": 13.0, "medium": 16.0, "large": 18.0,
    "x-large": 24.0, "xx-large": 32.0, "xxx-large": 48.0,
}  # fmt: skip
_ABSOLUTE = {"px": 1.0, "pt": 4 / 3, "pc": 16.0, "in": 96.0, "cm": 96 / 2.54, "mm": 9.6 / 2.54}
_ABSOLUTE["q"] = _ABSOLUTE["mm"] / 4
_VIEWPORT = (1280.0, 800.0)


Color = tuple[float, float, float, float]


def _idents(tokens: Iterable[Any]) -> list[str]:
    return [t.lower_value for t in tokens if t.type == "ident"]


def _significant(tokens: Iterable[Any]) -> list[Any]:
    return [t for t in tokens if t.type not in ("whitespace", "comment")]


def _length(token: Any, font_px: float, percent_of: float | None = None) -> float | None:
    """A length token in px (em relative to ``font_px``), or None if it isn't one."""
    if token.type == "number" and token.value == 0:
        return 0.0
    if token.type == "percentage":
        return None if percent_of is None else token.value / 100 * percent_of
    if token.type == "function" and token.lower_name in MATH_FUNCTIONS:  # calc(), min()...
        return evaluate(token, lambda t: _length(t, font_px, percent_of))
    if token.type != "dimension":
        return None
    unit = token.lower_unit
    if unit in _ABSOLUTE:
        return float(token.value * _ABSOLUTE[unit])
    if unit == "em":
        return float(token.value * font_px)
    if unit in ("ex", "ch"):
        return float(token.value * font_px / 2)
    if unit == "rem":
        return float(token.value * ROOT_FONT_PX)
    if unit in ("vw", "vi"):
        return float(token.value * _VIEWPORT[0] / 100)
    if unit in ("vh", "vb"):
        return float(token.value * _VIEWPORT[1] / 100)
    if unit in ("vmin", "vmax"):
        return float(token.value * min(_VIEWPORT) / 100)
    return None


def _color(tokens: list[Any]) -> Color | str | None:
    """An RGBA colour, "currentcolor", or None when the value isn't a colour."""
    values = _significant(tokens)
    if len(values) != 1:
        return None
    parsed = tinycss2.color3.parse_color(values[0])
    if parsed is None:
        return None
    if isinstance(parsed, str):
        return "currentcolor"
    return (float(parsed.red), float(parsed.green), float(parsed.blue), float(parsed.alpha))


def _luminance(color: Color) -> float:
    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else float(((c + 0.055) / 1.055) ** 2.4)

    r, g, b, _ = color
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a: Color, b: Color) -> float:
    """The WCAG contrast ratio of two opaque colours (1 = identical, 21 = black on white)."""
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def _hex(color: Color) -> str:
    return "#" + "".join(f"{round(c * 255):02x}" for c in color[:3])


def _blend(color: Color, under: Color) -> Color:
    alpha = color[3]
    return (
        color[0] * alpha + under[0] * (1 - alpha),
        color[1] * alpha + under[1] * (1 - alpha),
        color[2] * alpha + under[2] * (1 - alpha),
        1.0,
    )


def _numbers(function: Any, font_px: float, percent_of: float | None = None) -> list[float | None]:
    return [
        _length(t, font_px, percent_of) if t.type != "number" else float(t.value)
        for t in _significant(function.arguments)
        if not (t.type == "literal" and t.value in (",", "/"))
    ]


def _opacity(tokens: list[Any]) -> float | None:
    values = _significant(tokens)
    if len(values) != 1:
        return None
    token = values[0]
    if token.type == "number":
        return max(0.0, min(1.0, float(token.value)))
    if token.type == "percentage":
        return max(0.0, min(1.0, float(token.value) / 100))
    if token.type == "function" and token.lower_name == "opacity":
        return _opacity(token.arguments)
    return None


def _filter_opacity(tokens: list[Any]) -> float | None:
    """The opacity a ``filter`` list leaves (``blur(1px) opacity(0)``: 0): the product of its
    ``opacity()`` functions, None when it has none."""
    found = [
        _opacity(t.arguments)
        for t in _significant(tokens)
        if t.type == "function" and t.lower_name == "opacity"
    ]
    known = [f for f in found if f is not None]
    return math.prod(known) if known else None


_GRADIENTS = frozenset(
    {f"{r}{k}-gradient" for r in ("", "repeating-") for k in ("linear", "radial", "conic")}
)


def _mask_hides(tokens: list[Any], luminance: bool) -> bool:
    """Whether a mask image lets nothing through: a gradient every colour stop of which is
    transparent (or, in ``luminance`` mode, also black). An image from a URL is not known."""
    gradients = [
        t
        for t in _significant(tokens)
        if t.type == "function" and t.lower_name.removeprefix("-webkit-") in _GRADIENTS
    ]
    if not gradients:
        return False
    for gradient in gradients:
        stops = [c for t in gradient.arguments if isinstance(c := _color([t]), tuple)]
        if not stops:
            return False
        for red, green, blue, alpha in stops:
            shown = alpha * (_luminance((red, green, blue, 1.0)) if luminance else 1.0)
            if shown > FAINT_OPACITY:
                return False
    return True


def _font_size_tokens(tokens: list[Any]) -> list[Any]:
    """The size in a ``font`` shorthand ("italic bold 0/0 a" -> [0])."""
    for token in _significant(tokens):
        if token.type in ("dimension", "percentage") or (
            token.type == "number" and token.value == 0
        ):
            return [token]
        if token.type == "function" and token.lower_name in MATH_FUNCTIONS:
            return [token]
        if token.type == "ident" and token.lower_value in _FONT_KEYWORDS:
            return [token]
        if token.type == "string" or (token.type == "literal" and token.value == ","):
            break
    return []


def _is_image(token: Any) -> bool:
    if token.type == "url":
        return True
    name: str = token.lower_name
    return name == "url" or name.endswith("gradient") or name in ("image", "image-set", "element")


def _clips_everything(tokens: list[Any], font: float) -> bool:
    for token in _significant(tokens):
        if token.type != "function":
            continue
        args = [
            t
            for t in _significant(token.arguments)
            if not (t.type == "literal" and t.value in (",", "/"))
        ]
        if token.lower_name == "inset":
            inset = [(t.value if t.type == "percentage" else None) for t in args[:4]]
            if any(v is not None and v >= 50 for v in inset):
                return True
        elif token.lower_name in ("circle", "ellipse"):
            radius = _length(args[0], font, 100.0) if args else None
            if radius is not None and radius <= 0:
                return True
        elif token.lower_name == "polygon":
            points = [_length(t, font, 100.0) for t in args if t.type != "ident"]
            if points and (len(set(points[0::2])) <= 1 or len(set(points[1::2])) <= 1):
                return True
    return False


def _transform_hides(tokens: list[Any], font: float) -> str:
    for token in _significant(tokens):
        if token.type != "function":
            continue
        name = token.lower_name
        args = _numbers(token, font, 0.0)
        if name in ("scale", "scalex", "scaley", "scale3d", "scalez"):
            factors = [a for a in args if a is not None]
            if name == "scale3d":
                factors = factors[:2]
            if any(abs(f) * font <= TINY_FONT_PX for f in factors):
                return "scaled to nothing"
        elif name in ("matrix", "matrix3d") and len(args) >= 4 and None not in args[:6]:
            a, b = args[0], args[1]
            c, d = (args[2], args[3]) if name == "matrix" else (args[4], args[5])
            known = a is not None and b is not None and c is not None and d is not None
            if known and abs(a * d - b * c) < 1e-9:  # type: ignore[operator]
                return "a matrix that flattens it to nothing"
        elif name in ("translate", "translatex", "translatey", "translate3d"):
            shifts = [a for a in args[:2] if a is not None]
            if any(s <= -OFF_SCREEN_PX for s in shifts):
                return "moved off-screen"
            across = args[0] if name in ("translate", "translatex", "translate3d") else None
            if across is not None and across >= _VIEWPORT[0]:
                return "moved past the right edge of the screen"
        elif name in ("rotatex", "rotatey"):
            angle = token.arguments and _significant(token.arguments)[0]
            degrees = angle and angle.type == "dimension" and angle.lower_unit == "deg"
            if degrees and math.isclose(abs(angle.value) % 180, 90):
                return "turned edge-on"
    return ""
