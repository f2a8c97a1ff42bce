"""CSS math functions (``calc()``, ``min()``, ``max()``, ``clamp()``) evaluated to a length (W12).

A page can size or place its text with arithmetic as well as with a plain length
(``font-size: calc(1px + 0.5px)``, ``left: calc(-100vw - 50%)``, ``font-size: min(1px, 3em)``), so
the styler evaluates them like any length: :func:`evaluate` turns a math function into px, given
how a single length token (``px``, ``em``, ``vw``, ``%``...) converts. Anything it does not follow
(an unknown unit or function, ``var()`` left unresolved, a length times a length, division by
zero) is None: "not known", never a guess.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

MATH_FUNCTIONS = frozenset({"calc", "min", "max", "clamp", "-webkit-calc", "-moz-calc"})
_DEPTH = 32

Value = tuple[float, bool]
"""A value and whether it is a length (px) rather than a plain number."""


class _Unknown(Exception):
    pass


def evaluate(token: Any, length: Callable[[Any], float | None]) -> float | None:
    """The px a math-function token stands for, or None when it can't be told."""
    try:
        value, is_length = _function(token, length, 0)
    except _Unknown:
        return None
    if is_length or value == 0:
        return value
    return None  # a plain number is not a length (but 0)


def _function(token: Any, length: Callable[[Any], float | None], depth: int) -> Value:
    if depth > _DEPTH or token.lower_name not in MATH_FUNCTIONS:
        raise _Unknown
    args = _split(token.arguments)
    if token.lower_name in ("calc", "-webkit-calc", "-moz-calc"):
        if len(args) != 1:
            raise _Unknown
        return _sum(args[0], length, depth)
    values = [_sum(arg, length, depth) for arg in args]
    if not values or len({is_length for _, is_length in values}) > 1:
        raise _Unknown
    kind = values[0][1]
    numbers = [v for v, _ in values]
    if token.lower_name == "min":
        return min(numbers), kind
    if token.lower_name == "max":
        return max(numbers), kind
    if len(numbers) != 3:
        raise _Unknown
    low, middle, high = numbers
    return max(low, min(middle, high)), kind


def _split(tokens: list[Any]) -> list[list[Any]]:
    """Comma-separated arguments, whitespace and comments dropped."""
    parts: list[list[Any]] = [[]]
    for token in tokens:
        if token.type in ("whitespace", "comment"):
            continue
        if token.type == "literal" and token.value == ",":
            parts.append([])
        else:
            parts[-1].append(token)
    return parts


def _sum(tokens: list[Any], length: Callable[[Any], float | None], depth: int) -> Value:
    terms: list[tuple[str, list[Any]]] = [("+", [])]
    for token in tokens:
        if token.type == "literal" and token.value in ("+", "-") and terms[-1][1]:
            terms.append((token.value, []))
        else:
            terms[-1][1].append(token)
    total: Value | None = None
    for sign, factors in terms:
        value, is_length = _product(factors, length, depth)
        value = -value if sign == "-" else value
        if total is None:
            total = (value, is_length)
        elif total[1] != is_length and not (value == 0 or total[0] == 0):
            raise _Unknown  # a length plus a number
        else:
            total = (total[0] + value, total[1] or is_length)
    if total is None:
        raise _Unknown
    return total


def _product(tokens: list[Any], length: Callable[[Any], float | None], depth: int) -> Value:
    if not tokens:
        raise _Unknown
    value, is_length = _factor(tokens[0], length, depth)
    rest = tokens[1:]
    while rest:
        if len(rest) < 2 or rest[0].type != "literal" or rest[0].value not in ("*", "/"):
            raise _Unknown
        other, other_length = _factor(rest[1], length, depth)
        if rest[0].value == "*":
            if is_length and other_length:
                raise _Unknown
            value, is_length = value * other, is_length or other_length
        else:
            if other_length or other == 0:
                raise _Unknown
            value /= other
        rest = rest[2:]
    return value, is_length


def _factor(token: Any, length: Callable[[Any], float | None], depth: int) -> Value:
    if token.type == "number":
        return float(token.value), False
    if token.type == "() block":
        parts = _split(token.content)
        if len(parts) != 1:
            raise _Unknown
        return _sum(parts[0], length, depth + 1)
    if token.type == "function":
        return _function(token, length, depth + 1)
    px = length(token)
    if px is None:
        raise _Unknown
    return px, True


__all__ = ["MATH_FUNCTIONS", "evaluate"]
