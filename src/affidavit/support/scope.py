"""Scope words: negation, quantifiers and hedges, read where they attach (W11 structure rules).

- :func:`polarity` — whether a predicate is negated: by ``not``/``n't``/``never``, by ``no`` or
  ``neither … nor`` on its subject or object, by a verb of refusal over it ("refused to host"), or
  by a word it stands under — ``without``, ``unlike``, ``instead of``, ``rather than``, ``except``.
  :func:`negation_changes` compares the polarity of each predicate the text restates with the
  quote's (a word with a negating prefix that WordNet lists as the antonym — "undefined" for
  "defined" — counts as a negation), and :func:`negations_agree` tells the bag-of-words negation
  rule when the parse shows the two agree after all ("neither FAS 113 nor SAP 62 defines" /
  "both leave … undefined").
- :func:`quantifier_changes` — "all" where the quote says "a few"; "only" where it restricts
  nothing; "many observers" turned into "observers".
- :func:`hedge_changes` — a hedge the quote puts on what the text restates ("may", "perhaps",
  "it is suspected that", "a few studies have suggested that", "is proposing to") that the text
  drops; :func:`scare_quote_changes` — what the quote only names in quotation marks that the
  text asserts.
- :func:`contrast_changes` — a word the quote sets apart ("*Unlike* confirmation") that the text
  makes its statement's subject, object or predicate.

The rules live by what they read — negation and contrast in :mod:`.negation`, quantifiers in
:mod:`.quantifying`, hedges and scare quotes in :mod:`.hedging` — and are found here.
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
