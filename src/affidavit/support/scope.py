"""Scope words read where they attach (W11 structure rules): one place the structure layer
imports them from.

Negation and contrast live in :mod:`.negation`, quantifiers in :mod:`.quantifying`, hedges and
scare quotes in :mod:`.hedging`; each module's docstring says what its rules read.
"""

from __future__ import annotations

from .hedging import ATTRIBUTION as ATTRIBUTION
from .hedging import EVIDENTIAL as EVIDENTIAL
from .hedging import HEDGE_ADJ as HEDGE_ADJ
from .hedging import HEDGE_ADV as HEDGE_ADV
from .hedging import HEDGE_AUX as HEDGE_AUX
from .hedging import HEDGE_VERBS as HEDGE_VERBS
from .hedging import RESEARCH as RESEARCH
from .hedging import TEXT_HEDGE_AUX as TEXT_HEDGE_AUX
from .hedging import hedge_changes
from .hedging import hedges as hedges
from .hedging import scare_quote_changes as scare_quote_changes
from .negation import CLAUSE_STOP as CLAUSE_STOP
from .negation import CONTRAST as CONTRAST
from .negation import FACTIVE as FACTIVE
from .negation import NEGATING_VERBS as NEGATING_VERBS
from .negation import NEGATORS as NEGATORS
from .negation import contrast_changes as contrast_changes
from .negation import negation_changes, negations_agree, polarity
from .negation import set_apart as set_apart
from .quantifying import ALL as ALL
from .quantifying import FEW as FEW
from .quantifying import MANY as MANY
from .quantifying import MOST as MOST
from .quantifying import ONLY as ONLY
from .quantifying import QUANTIFIERS as QUANTIFIERS
from .quantifying import RANK as RANK
from .quantifying import SOME as SOME
from .quantifying import quantifier_changes
from .quantifying import quantifiers as quantifiers

__all__ = [
    "hedge_changes",
    "negation_changes",
    "negations_agree",
    "polarity",
    "quantifier_changes",
]
