"""A plan's support checks with their parses done in one batch (W11; issue 22's cost).

spaCy parses a batch of texts for much less per text than one at a time, but which texts a check
parses (the text and its quotes that share words with it, and only when the cheaper rules have
not decided) is the rules' own decision. :func:`prepare` asks the rules themselves: it runs each
check inside :func:`.parse.collecting`, where a parse of texts not cached records them and stops
the check (nothing of a stopped check is cached), then parses every recorded text in one batch.
The checks run again afterwards find their parses cached, and a check that needed no parse has
its verdict cached already: the verdicts are those of the checks run one by one
(tests/test_support_batch.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import suppress

from .parse import CACHE, Deferred, ParserUnavailable, collecting, parse_many
from .rules import CLAIM_SHARE, check

__all__ = ["Item", "claim_item", "prepare"]

Item = tuple[str, Sequence[str], float, Iterable[str], Sequence[str]]
"""One check: text, quotes, share, allowed, context (the arguments of :func:`.rules.check`)."""


def prepare(items: Iterable[Item]) -> int:
    """Parse, in one batch, every text the checks of ``items`` will parse; the number parsed.

    Costs the rules before the parse once more per item (their readings are cached); a text the
    parser can't be loaded for raises when its check runs, as it would have."""
    wanted: list[str] = []
    with collecting() as asked:
        for text, quotes, share, allowed, context in items:
            with suppress(Deferred):
                check(text, quotes, share=share, allowed=allowed, context=context)
        wanted = list(dict.fromkeys(asked))[: CACHE // 2]  # the rest: parsed when checked
    if wanted:
        try:
            parse_many(wanted)
        except ParserUnavailable:
            return 0  # each check raises it in its turn, as it would have
    return len(wanted)


def claim_item(text: str, quotes: Sequence[str], context: Sequence[str] = ()) -> Item:
    """The item of a claim's check (``share`` and ``allowed`` as :func:`.rules.check`'s
    defaults)."""
    return (text, tuple(quotes), CLAIM_SHARE, (), tuple(context))
