"""What a browser would show: the visibility of HTML elements from their CSS and markup (W12).

:class:`Styler` takes a document tree (Beautiful Soup tags, built by the extractor so that it has
exactly the extractor's structure) and the text of its ``<style>`` elements, runs the cascade for
the few properties that can hide text, and says for each element whether text in it is hidden,
and why, and whether it is struck through.

Stylesheets are parsed with tinycss2 (so CSS escapes such as ``display:n\\one``, comments and
``!important`` mean what a browser takes them to mean), selectors are matched with soupsieve, and
the winner of each property is the browser's: ``!important`` first, then the ``style`` attribute,
then specificity, then order. Rules inside ``@media`` apply unless the query is only for print or
speech, so a page hiding text from a wide screen is still flagged. What hides text:

    display:none, content-visibility:hidden, visibility:hidden|collapse (a descendant may set
    visible again), opacity (and filter:opacity()) of 0.1 or less, counting ancestors, a computed
    font size of 2px or less (px, pt, em, rem, %, keywords, the ``font`` shorthand, ``zoom``), a
    text colour whose alpha is 0.1 or less or whose contrast with the background (the element's
    or the nearest ancestor's; white by default) is below 1.1, width or height of 1px or less with
    overflow hidden, clip:rect() or clip-path (inset, circle, ellipse, polygon) that leaves
    nothing, a transform or ``scale`` that shrinks the text to 2px or less or a singular matrix,
    a translation of 500px or more to the left or top, left/top/right/bottom, margins or
    text-indent of -500px or less, a text-indent of 500px (or 40%) or more with overflow hidden;
    custom properties are followed through ``var()``, and a ``<style media="print">`` sheet, like
    an ``@media print`` block, styles no screen;
    and in markup: the ``hidden`` and ``popover`` attributes, a ``<dialog>`` without ``open``,
    a ``<title>`` in the body, ``<noscript>``, text inside ``<svg>``, and the
    fallback content of ``<canvas>``, ``<iframe>``, ``<object>``, ``<video>``, ``<audio>``,
    ``<datalist>``, ``<rp>``. ``aria-hidden="true"`` hides text from screen readers only: a
    reader sees it, so it is not flagged. Nor is the content of a closed ``<details>``: its
    summary shows, and a reader opens it with a click (issue 24).

Struck through: ``<del>``, ``<s>``, ``<strike>`` and ``text-decoration: line-through``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import soupsieve
import tinycss2
import tinycss2.color3
from bs4 import Tag

from .css_values import (
    _FONT_KEYWORDS,
    _VIEWPORT,
    FAINT_OPACITY,
    MIN_CONTRAST,
    OFF_SCREEN_PX,
    ROOT_FONT_PX,
    TINY_FONT_PX,
    Color,
    _blend,
    _clips_everything,
    _color,
    _filter_opacity,
    _font_size_tokens,
    _hex,
    _idents,
    _is_image,
    _length,
    _mask_hides,
    _numbers,
    _opacity,
    _significant,
    _transform_hides,
    contrast,
)

HIDDEN_STYLING = "hidden_styling"
HIDDEN = "hidden"
STRUCK = "struck"

MAX_RULES = 5000
"""Rules with a property that can hide text and an element they may match, per document at most.
A page with more is not checked rule by rule: all its text is marked hidden, since a rule past
the limit could hide any of it (a page can't push its hiding rule out of reach with filler)."""

_WHITE = (1.0, 1.0, 1.0, 1.0)
_BLACK = (0.0, 0.0, 0.0, 1.0)
_PROPERTIES = frozenset(
    {
        "display", "content-visibility", "visibility", "opacity", "filter", "font-size", "font",
        "color", "-webkit-text-fill-color", "background-clip", "-webkit-background-clip",
        "background", "background-color", "background-image", "height", "max-height", "width",
        "max-width", "overflow", "overflow-x", "overflow-y", "clip", "clip-path", "transform",
        "scale", "position", "left", "top", "right", "bottom", "text-indent", "margin-left",
        "margin-top", "text-decoration", "text-decoration-line", "zoom", "mask", "mask-image",
        "mask-size", "mask-mode", "-webkit-mask", "-webkit-mask-image", "-webkit-mask-size",
    }
)  # fmt: skip
_FALLBACK = frozenset({"canvas", "iframe", "object", "video", "audio", "datalist", "rp"})
_STRUCK_TAGS = frozenset({"del", "s", "strike"})
_BGCOLOR = (("bgcolor", "background-color"),)
_PRESENTATIONAL = {
    "font": (("color", "color"), *_BGCOLOR),
    "body": (("text", "color"), *_BGCOLOR),
}
"""HTML attributes that set colours, below every CSS rule in the cascade."""
_STYLING_ATTRIBUTES = frozenset({"style", "hidden", "popover", "color", "bgcolor", "text"})
_SPECIAL = _FALLBACK | _STRUCK_TAGS | {"dialog", "noscript", "svg", "title"}
_SKIPPED_MEDIA = frozenset({"print", "speech"})
_DOCUMENT_ROOT = frozenset({":root", "html"})
"""Selectors of the document's root, whose custom properties every element inherits (a markdown
file's HTML is a fragment with no root element of its own: they still apply to all of it)."""


def _in_body(tag: Tag) -> bool:
    return any(isinstance(up, Tag) and up.name == "body" for up in tag.parents)


@dataclass(frozen=True)
class Hiding:
    """Why text is not seen (or is struck): the flag ``kind`` and a ``detail`` for a person."""

    kind: str
    detail: str


@dataclass(frozen=True)
class _Decl:
    name: str
    value: list[Any]
    key: tuple[int, int, tuple[int, int, int], int]  # important, inline, specificity, order
    origin: str

    @property
    def text(self) -> str:
        return f"{self.name}:{tinycss2.serialize(self.value).strip()}"


@dataclass
class _State:
    hidden: Hiding | None = None  # hides the element and everything in it
    invisible: Hiding | None = None  # visibility:hidden, inherited; visible undoes it
    struck: Hiding | None = None
    opacity: float = 1.0
    opacity_why: str = ""
    font_px: float = ROOT_FONT_PX
    font_why: str = ""
    color: Color = _BLACK
    color_why: str = ""
    background: Color | None = _WHITE  # None: an image, colour unknown
    background_why: str = "the default white page"
    clip_text: bool = False  # background-clip:text (gradient text): a transparent fill is shown
    text: Hiding | None = field(default=None)  # the verdict for text directly in the element
    custom: dict[str, list[Any]] = field(default_factory=dict)  # custom properties, inherited


def _styles(declaration: Any) -> bool:
    """A declaration the cascade follows: one that can hide text, or a custom property
    (``--h: none``) another one may take with ``var(--h)``."""
    return declaration.lower_name in _PROPERTIES or declaration.name.startswith("--")


def _name(declaration: Any) -> str:
    """A property's name as the cascade keys it (custom properties are case-sensitive)."""
    name: str = declaration.name if declaration.name.startswith("--") else declaration.lower_name
    return name


def _has_var(tokens: Iterable[Any]) -> bool:
    return any(
        t.type == "function" and (t.lower_name == "var" or _has_var(t.arguments)) for t in tokens
    )


_VAR_DEPTH = 16


def _substitute(tokens: list[Any], custom: dict[str, list[Any]], depth: int) -> list[Any] | None:
    """``tokens`` with each ``var(--name, fallback)`` replaced by the custom property's value
    (or the fallback); None when one is undefined with no fallback, or nests too deep."""
    out: list[Any] = []
    for token in tokens:
        if token.type != "function" or not _has_var([token]):
            out.append(token)
            continue
        if token.lower_name != "var":
            inner = _substitute(token.arguments, custom, depth)
            if inner is None:
                return None
            out.append(
                tinycss2.ast.FunctionBlock(
                    token.source_line, token.source_column, token.name, inner
                )
            )
            continue
        args = list(token.arguments)
        comma = next(
            (i for i, t in enumerate(args) if t.type == "literal" and t.value == ","), len(args)
        )
        names = _significant(args[:comma])
        value = custom.get(names[0].value) if names and names[0].type == "ident" else None
        if value is None:
            value = args[comma + 1 :] if comma < len(args) else None
        if value is None or depth >= _VAR_DEPTH:
            return None
        resolved = _substitute(value, custom, depth + 1) if _has_var(value) else value
        if resolved is None:
            return None
        out.extend(resolved)
    return out


def _specificity(tokens: list[Any]) -> tuple[int, int, int]:
    a = b = c = 0
    previous = None
    for token in tokens:
        kind = token.type
        if kind == "hash":
            a += 1
        elif kind == "[] block":
            b += 1
        elif kind == "ident" and previous is not None and previous.type == "literal":
            if previous.value in (".", ":"):
                b += 1
            else:
                c += 1
        elif kind == "ident":
            c += 1
        elif kind == "function" and token.lower_name != "where":
            inner = _specificity(token.arguments)
            a, b, c = a + inner[0], b + inner[1] + (token.lower_name != "is"), c + inner[2]
        previous = token
    return a, b, c


def _split_selectors(prelude: list[Any]) -> list[list[Any]]:
    parts: list[list[Any]] = [[]]
    for token in prelude:
        if token.type == "literal" and token.value == ",":
            parts.append([])
        else:
            parts[-1].append(token)
    return [p for p in parts if _significant(p)]


def _media_applies(prelude: list[Any]) -> bool:
    queries = [set(_idents(p)) for p in _split_selectors(prelude)] or [set()]
    return any(not (q & _SKIPPED_MEDIA) or "not" in q for q in queries)


def media_applies(media: str) -> bool:
    """Whether a ``media`` attribute (``<style media="print">``) lets its sheet style a screen."""
    return _media_applies(tinycss2.parse_component_value_list(media))


@dataclass(frozen=True)
class _Rule:
    selector: str
    specificity: tuple[int, int, int]
    declarations: list[Any]
    subject: tuple[str, str] | None  # ("class"|"id"|"tag", name) the matched element must have


_DYNAMIC = frozenset(
    {"hover", "focus", "active", "visited", "focus-within", "focus-visible", "target"}
)
"""Pseudo-classes that hold only while a reader interacts: such rules don't hide text on arrival."""
_COMBINATORS = frozenset({">", "+", "~"})


def _subject(tokens: list[Any]) -> tuple[str, str] | Literal[False] | None:
    """What the element a selector matches must have (its last compound's class, id or tag), for
    finding candidates fast; None when anything may match; False when the selector only applies
    on interaction (``:hover``...)."""
    compound: list[Any] = []
    previous = None
    while tokens and tokens[-1].type in ("whitespace", "comment"):
        tokens = tokens[:-1]
    for token in tokens:
        pseudo = previous is not None and previous.type == "literal" and previous.value == ":"
        if pseudo and token.type == "ident" and token.lower_value in _DYNAMIC:
            return False
        if token.type == "whitespace" or (token.type == "literal" and token.value in _COMBINATORS):
            compound = []
        else:
            compound.append(token)
        previous = token
    for i, token in enumerate(compound):
        if token.type == "hash":
            return ("id", token.value)
        after_dot = i and compound[i - 1].type == "literal" and compound[i - 1].value == "."
        if token.type == "ident" and after_dot:
            return ("class", token.value)
    first = compound[0] if compound else None
    if first is not None and first.type == "ident":
        return ("tag", first.lower_value)
    return None


def _rules(nodes: Iterable[Any], parent: str | None = None) -> Iterator[_Rule]:
    for node in nodes:
        if node.type == "at-rule" and node.content is not None:
            keyword = node.lower_at_keyword
            grouping = keyword in ("media", "supports", "layer", "container", "scope")
            if grouping and (keyword != "media" or _media_applies(node.prelude)):
                inner = tinycss2.parse_rule_list(node.content, True, True)
                yield from _rules(inner, parent)
        elif node.type == "qualified-rule":
            contents = tinycss2.parse_blocks_contents(node.content, True, True)
            declarations = [d for d in contents if d.type == "declaration"]
            nested = [d for d in contents if d.type in ("qualified-rule", "at-rule")]
            for tokens in _split_selectors(node.prelude):
                subject = _subject(tokens)
                if subject is False:
                    continue
                selector = tinycss2.serialize(tokens).strip()
                if parent is not None:
                    selector = (
                        selector.replace("&", f":is({parent})")
                        if "&" in selector
                        else f":is({parent}) {selector}"
                    )
                spec = _specificity(tokens)
                if any(_styles(d) for d in declarations):
                    yield _Rule(selector, spec, declarations, subject)
                if nested:
                    yield from _rules(nested, selector)


class Styler:
    """The computed visibility of every element of one document (see the module docstring).

    ``where(tag)`` names an element for a person ("<span> at line 4 of the HTML"); with
    ``unchecked`` (why the document can't be checked) all its text is hidden for that reason.
    """

    def __init__(
        self,
        root: Tag,
        sheets: list[str],
        where: Callable[[Tag], str],
        unchecked: str | None = None,
    ) -> None:
        self.where = where
        self._decls: dict[int, list[_Decl]] = {}
        self._states: dict[int, _State] = {}
        self._overflow = Hiding(HIDDEN_STYLING, unchecked) if unchecked else None
        root_custom: list[tuple[Any, str, list[Any]]] = []
        order = 0
        count = 0
        index: dict[tuple[str, str], list[Tag]] = {}
        every: list[Tag] = []
        if sheets:
            for tag in root.descendants:
                if not isinstance(tag, Tag):
                    continue
                every.append(tag)
                index.setdefault(("tag", tag.name), []).append(tag)
                ident = tag.get("id")
                if isinstance(ident, str):
                    index.setdefault(("id", ident), []).append(tag)
                classes = tag.get("class")
                for name in classes if isinstance(classes, list) else []:
                    index.setdefault(("class", name), []).append(tag)
        for sheet in sheets:
            if self._overflow is not None:
                break
            for rule in _rules(tinycss2.parse_stylesheet(sheet, True, True)):
                if rule.selector.lower() in _DOCUMENT_ROOT:  # also a fragment's (markdown's)
                    top = [d for d in rule.declarations if d.name.startswith("--")]
                    for declaration in top:
                        order += 1
                        key = (int(declaration.important), 0, rule.specificity, order)
                        root_custom.append((key, declaration.name, declaration.value))
                candidates = index.get(rule.subject, []) if rule.subject else every
                if not candidates:
                    continue
                count += 1
                if count > MAX_RULES:
                    self._overflow = Hiding(
                        HIDDEN_STYLING,
                        f"the page's <style> rules that may apply to it number more than "
                        f"{MAX_RULES}: which text they hide is not worked out, so none of it is "
                        "taken as seen",
                    )
                    break
                try:
                    compiled = soupsieve.compile(rule.selector)
                    matched = [tag for tag in candidates if compiled.match(tag)]
                except (soupsieve.SelectorSyntaxError, NotImplementedError, ValueError):
                    continue  # pseudo-elements, selectors soupsieve doesn't know: they show nothing
                origin = f"{rule.selector} in a <style> rule"
                for declaration in rule.declarations:
                    order += 1
                    if not _styles(declaration):
                        continue
                    key = (int(declaration.important), 0, rule.specificity, order)
                    decl = _Decl(_name(declaration), declaration.value, key, origin)
                    for tag in matched:
                        self._decls.setdefault(id(tag), []).append(decl)
        custom = {name: value for _, name, value in sorted(root_custom, key=lambda c: c[0])}
        self._compute(root, _State(custom=custom), order)

    def _compute(self, root: Tag, top: _State, order: int) -> None:
        stack: list[tuple[Tag, _State]] = [(root, top)]
        while stack:
            tag, parent = stack.pop()
            for child in reversed(tag.contents):
                if isinstance(child, Tag):
                    plain = (
                        id(child) not in self._decls
                        and not child.attrs.keys() & _STYLING_ATTRIBUTES
                        and child.name not in _SPECIAL
                    )
                    # nothing of its own: it shows (or hides) its text as its parent does
                    state = parent if plain else self._state(child, parent, order)
                    self._states[id(child)] = state
                    stack.append((child, state))

    def text_hiding(self, tag: Tag | None) -> Hiding | None:
        """Why text directly inside ``tag`` is not seen, or None if it is."""
        if self._overflow is not None:
            return self._overflow
        if tag is not None and tag.name == "title" and not _in_body(tag):
            return None  # the document's title: the window shows it, no page style reaches it
        state = self._states.get(id(tag)) if tag is not None else None
        return state.text if state is not None else None

    def struck(self, tag: Tag | None) -> Hiding | None:
        state = self._states.get(id(tag)) if tag is not None else None
        return state.struck if state is not None else None

    # --- one element --------------------------------------------------------------------------

    def _winners(self, tag: Tag, order: int) -> dict[str, _Decl]:
        decls = list(self._decls.get(id(tag), []))
        for attribute, name in _PRESENTATIONAL.get(tag.name, _BGCOLOR):
            value = tag.get(attribute)
            if isinstance(value, str) and value.strip():
                tokens = tinycss2.parse_component_value_list(value.strip())
                origin = f'the {attribute}="{value.strip()[:20]}" attribute'
                decls.append(_Decl(name, tokens, (0, 0, (0, 0, 0), -1), origin))
        style = tag.get("style")
        if isinstance(style, str) and style.strip():
            for declaration in tinycss2.parse_declaration_list(style, True, True):
                order += 1
                if declaration.type == "declaration" and _styles(declaration):
                    key = (int(declaration.important), 1, (0, 0, 0), order)
                    decls.append(
                        _Decl(_name(declaration), declaration.value, key, "the style attribute")
                    )
        winners: dict[str, _Decl] = {}
        for decl in sorted(decls, key=lambda d: d.key):
            winners[decl.name] = decl
        return winners

    def _state(self, tag: Tag, parent: _State, order: int) -> _State:
        where = self.where(tag)
        css = self._winners(tag, order)
        custom = parent.custom
        own = {name: decl.value for name, decl in css.items() if name.startswith("--")}
        if own:
            custom = {**custom, **own}
        for name, decl in list(css.items()):
            if name.startswith("--") or not _has_var(decl.value):
                continue
            value = _substitute(decl.value, custom, 0)
            if value is None:
                del css[name]  # invalid at computed-value time: as if it were not set
            else:
                css[name] = _Decl(name, value, decl.key, f"{decl.origin}, through var()")
        state = _State(
            hidden=parent.hidden,
            invisible=parent.invisible,
            struck=parent.struck,
            opacity=parent.opacity,
            opacity_why=parent.opacity_why,
            font_px=parent.font_px,
            font_why=parent.font_why,
            color=parent.color,
            color_why=parent.color_why,
            background=parent.background,
            background_why=parent.background_why,
            custom=custom,
        )
        self._font(css, state, parent)
        self._zoom(css, state)
        if state.hidden is None:
            reason = self._markup_hiding(tag, where) or self._css_hiding(tag, css, state, where)
            state.hidden = reason
        self._visibility(css, state, where)
        self._colors(css, state, parent)
        if state.struck is None:
            state.struck = self._struck(tag, css, where)
        state.text = state.hidden or state.invisible or self._faint(state, where)
        return state

    def _markup_hiding(self, tag: Tag, where: str) -> Hiding | None:
        name = tag.name
        if tag.get("hidden") is not None:
            return Hiding(HIDDEN_STYLING, f"text hidden by the hidden attribute of {where}")
        if tag.get("popover") is not None:
            return Hiding(HIDDEN, f"text of a popover (shown only when invoked): {where}")
        if name == "dialog" and tag.get("open") is None:
            return Hiding(HIDDEN, f"text inside a closed <dialog> (no open attribute): {where}")
        if name == "title" and any(isinstance(up, Tag) and up.name == "body" for up in tag.parents):
            return Hiding(HIDDEN, f"a <title> in the body (never displayed): {where}")
        if name == "noscript":
            return Hiding(HIDDEN, f"text inside <noscript> (not shown where scripts run): {where}")
        if name == "svg":
            return Hiding(HIDDEN, f"text drawn inside an <svg> image, not page text: {where}")
        if name in _FALLBACK:
            return Hiding(
                HIDDEN, f"fallback text of <{name}> (shown only if it can't load): {where}"
            )
        return None

    def _css_hiding(
        self, tag: Tag, css: dict[str, _Decl], state: _State, where: str
    ) -> Hiding | None:
        def hidden(decl: _Decl, what: str | None = None) -> Hiding:
            return Hiding(
                HIDDEN_STYLING,
                f"text hidden by CSS ({what or decl.text} via {decl.origin}) in {where}",
            )

        font = state.font_px
        display = css.get("display")
        if display and "none" in _idents(display.value):
            return hidden(display)
        content = css.get("content-visibility")
        if content and "hidden" in _idents(content.value):
            return hidden(content)
        for name in ("opacity", "filter"):
            decl = css.get(name)
            reader = _opacity if name == "opacity" else _filter_opacity
            opacity = reader(decl.value) if decl else None
            if decl and opacity is not None:
                state.opacity *= opacity
                state.opacity_why = state.opacity_why or f"{decl.text} via {decl.origin} in {where}"
                if state.opacity <= FAINT_OPACITY:
                    alone = math.isclose(state.opacity, opacity)
                    return hidden(
                        decl, None if alone else f"{decl.text}, {state.opacity:.2g} in all"
                    )
        clips = {
            i
            for name in ("overflow", "overflow-x", "overflow-y")
            if name in css
            for i in _idents(css[name].value)
        }
        if clips & {"hidden", "clip", "scroll", "auto"}:
            for name in ("height", "max-height", "width", "max-width"):
                decl = css.get(name)
                values = _significant(decl.value) if decl else []
                size = _length(values[0], font) if len(values) == 1 else None
                if decl and size is not None and size <= 1:
                    return hidden(decl, f"{decl.text} with overflow hidden")
        clip = css.get("clip")
        if clip:
            for token in _significant(clip.value):
                if token.type == "function" and token.lower_name == "rect":
                    top, right, bottom, left = ([*_numbers(token, font), None, None, None, None])[
                        :4
                    ]
                    if None not in (top, right, bottom, left) and (
                        right - left <= 1 or bottom - top <= 1  # type: ignore[operator]
                    ):
                        return hidden(clip)
        clip_path = css.get("clip-path")
        if clip_path and _clips_everything(clip_path.value, font):
            return hidden(clip_path)
        masked = self._masked(css, font)
        if masked is not None:
            return hidden(masked, f"{masked.text}: a mask that lets nothing through")
        transform = css.get("transform")
        if transform:
            why = _transform_hides(transform.value, font)
            if why:
                return hidden(transform, f"{transform.text}: {why}")
        scale = css.get("scale")
        if scale and any(
            t.type in ("number", "percentage")
            and abs(t.value / (100 if t.type == "percentage" else 1)) * font <= TINY_FONT_PX
            for t in _significant(scale.value)
        ):
            return hidden(scale)
        position = css.get("position")
        placed = set(_idents(position.value)) if position else set()
        far = _far_off(css, font, placed)
        if far is not None:
            return hidden(far, f"positioned off-screen by {far.text}")
        for name in ("text-indent", "margin-left", "margin-top", "left", "top", "right"):
            decl = css.get(name)
            values = _significant(decl.value) if decl else []
            offset = _length(values[0], font, _VIEWPORT[0]) if len(values) == 1 else None
            pushed = offset is not None and offset >= OFF_SCREEN_PX and name == "text-indent"
            if decl and pushed and clips & {"hidden", "clip", "scroll", "auto"}:
                return hidden(decl, f"pushed out of its box by {decl.text} with overflow hidden")
            moves = name in ("text-indent", "margin-left", "margin-top") or bool(
                placed & {"absolute", "fixed", "relative", "sticky"}
            )
            if decl and offset is not None and offset <= -OFF_SCREEN_PX and moves:
                return hidden(decl, f"positioned off-screen by {decl.text}")
        return None

    def _masked(self, css: dict[str, _Decl], font: float) -> _Decl | None:
        """The mask declaration that hides everything: an all-transparent gradient (or all-black
        under ``mask-mode: luminance``), or a mask sized to nothing."""
        mode = css.get("mask-mode")
        luminance = mode is not None and "luminance" in _idents(mode.value)
        for name in ("mask", "-webkit-mask", "mask-image", "-webkit-mask-image"):
            decl = css.get(name)
            if decl is None:
                continue
            here = luminance or "luminance" in _idents(decl.value)
            if _mask_hides(decl.value, here):
                return decl
        for name in ("mask-size", "-webkit-mask-size"):
            decl = css.get(name)
            sizes = [_length(t, font) for t in _significant(decl.value)] if decl else []
            if decl and any(size is not None and size <= 1 for size in sizes):
                return decl
        return None

    def _visibility(self, css: dict[str, _Decl], state: _State, where: str) -> None:
        decl = css.get("visibility")
        if decl is None:
            return
        values = _idents(decl.value)
        if "hidden" in values or "collapse" in values:
            state.invisible = Hiding(
                HIDDEN_STYLING, f"text hidden by CSS ({decl.text} via {decl.origin}) in {where}"
            )
        elif "visible" in values:
            state.invisible = None

    def _font(self, css: dict[str, _Decl], state: _State, parent: _State) -> None:
        decl = css.get("font-size")
        tokens = _significant(decl.value) if decl else []
        if decl is None and "font" in css:
            decl = css["font"]
            tokens = _font_size_tokens(decl.value)
        if decl is None or len(tokens) != 1:
            return
        token = tokens[0]
        size: float | None
        if token.type == "ident" and token.lower_value in _FONT_KEYWORDS:
            size = _FONT_KEYWORDS[token.lower_value]
        elif token.type == "ident" and token.lower_value in ("smaller", "larger"):
            size = parent.font_px * (1.2 if token.lower_value == "larger" else 1 / 1.2)
        else:
            size = _length(token, parent.font_px, parent.font_px)
        if size is not None:
            state.font_px = size
            state.font_why = f"{decl.text} via {decl.origin}"

    def _zoom(self, css: dict[str, _Decl], state: _State) -> None:
        decl = css.get("zoom")
        values = _significant(decl.value) if decl else []
        if decl is None or len(values) != 1 or values[0].type not in ("number", "percentage"):
            return
        factor = values[0].value / (100 if values[0].type == "percentage" else 1)
        if factor > 0:  # zoom:0 is "normal" (1)
            state.font_px *= factor
            state.font_why = f"{decl.text} via {decl.origin}"

    def _colors(self, css: dict[str, _Decl], state: _State, parent: _State) -> None:
        decl = css.get("color")
        color = _color(decl.value) if decl else None
        if decl is not None and isinstance(color, tuple):
            state.color, state.color_why = color, f"{decl.text} via {decl.origin}"
        fill = css.get("-webkit-text-fill-color")
        fill_color = _color(fill.value) if fill else None
        if fill is not None and isinstance(fill_color, tuple):
            state.color, state.color_why = fill_color, f"{fill.text} via {fill.origin}"
        for name in ("background-clip", "-webkit-background-clip"):
            if name in css and "text" in _idents(css[name].value):
                state.clip_text = True
        for name in ("background", "background-color", "background-image"):
            bg = css.get(name)
            if bg is None:
                continue
            values = _significant(bg.value)
            if any(t.type in ("url", "function") and _is_image(t) for t in values):
                state.background, state.background_why = None, f"{bg.text} via {bg.origin}"
                continue
            if name == "background-image":
                continue
            for token in values:
                parsed = _color([token])
                if isinstance(parsed, tuple) and parsed[3] > 0:
                    under = parent.background or _WHITE
                    state.background = _blend(parsed, under)
                    state.background_why = f"{bg.text} via {bg.origin}"

    def _faint(self, state: _State, where: str) -> Hiding | None:
        if state.font_px <= TINY_FONT_PX:
            return Hiding(
                HIDDEN_STYLING,
                f"text hidden by CSS (a font size of {state.font_px:.3g}px, {state.font_why}) "
                f"in {where}",
            )
        if state.clip_text:
            return None
        if state.color[3] <= FAINT_OPACITY:
            return Hiding(
                HIDDEN_STYLING,
                f"text hidden by CSS (transparent text colour, {state.color_why}) in {where}",
            )
        if state.background is None:
            return None
        seen = _blend(state.color, state.background)
        if contrast(seen, state.background) < MIN_CONTRAST:
            return Hiding(
                HIDDEN_STYLING,
                f"text hidden by CSS (text colour {_hex(seen)} on background "
                f"{_hex(state.background)}: {state.color_why or 'the default black'}, "
                f"{state.background_why}) in {where}",
            )
        return None

    def _struck(self, tag: Tag, css: dict[str, _Decl], where: str) -> Hiding | None:
        if tag.name in _STRUCK_TAGS:
            return Hiding(STRUCK, f"struck-through text (<{tag.name}>): {where}")
        for name in ("text-decoration", "text-decoration-line"):
            decl = css.get(name)
            if decl and "line-through" in _idents(decl.value):
                return Hiding(
                    STRUCK, f"struck-through text (CSS {decl.text} via {decl.origin}) in {where}"
                )
        return None


def _far_off(css: dict[str, _Decl], font: float, placed: set[str]) -> _Decl | None:
    """An offset that puts a box past the right edge of the viewport, or above its top (``left:
    200vw``, ``right: 200vw``, ``bottom: 200vh``, ``margin-left: 150vw``, ``text-indent:
    9999px``), where no one scrolls to it; with ``position: fixed``, past any edge. Percentages
    are of a containing block this does not know (a menu's ``left: 100%``): never counted."""
    positioned = bool(placed & {"absolute", "fixed", "relative", "sticky"})
    width, height = _VIEWPORT
    for name, limit, needs_position in (
        ("left", width, True),
        ("right", width, True),
        ("bottom", height, True),
        ("margin-left", width, False),
        ("text-indent", width, False),
    ):
        decl = css.get(name)
        values = _significant(decl.value) if decl else []
        offset = _length(values[0], font) if len(values) == 1 else None
        if decl and offset is not None and offset >= limit and (positioned or not needs_position):
            return decl
    if "fixed" in placed:  # fixed to the viewport: off it in any direction is never seen
        for name, limit in (("top", height), ("left", width)):
            decl = css.get(name)
            values = _significant(decl.value) if decl else []
            offset = _length(values[0], font) if len(values) == 1 else None
            if decl and offset is not None and offset >= limit:
                return decl
    return None


__all__ = ["HIDDEN", "HIDDEN_STYLING", "STRUCK", "Hiding", "Styler", "contrast", "media_applies"]
