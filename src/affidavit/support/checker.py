"""The support check with its optional entailment-model layer: the deterministic verdict of
:func:`affidavit.support.rules.check`, and an uncertain one settled by the model when there is one
and the rules found nothing changed — only a paraphrase they could not confirm."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .model import EntailmentModel
from .rules import (
    CLAIM_SHARE,
    ENTAILED,
    REFUTED,
    SUPPORTED,
    UNCERTAIN,
    UNSUPPORTED,
    Support,
    check,
)


class SupportChecker:
    """The support check with its optional model layer (``model`` None: deterministic only)."""

    def __init__(self, model: EntailmentModel | None = None) -> None:
        self.model = model

    def check(
        self,
        text: str,
        quotes: Sequence[str],
        *,
        share: float = CLAIM_SHARE,
        allowed: Iterable[str] = (),
        context: Sequence[str] = (),
    ) -> Support:
        """Deterministic verdict; an uncertain one goes to the model layer when there is one —
        only when the rules found no change of fact, role or scope
        (:attr:`Support.model_may_settle`): a text a rule caught changing a number, a role, a
        quantifier, a hedge, a comparative, a negation or a link stays uncertain (a person
        decides), whatever the model says."""
        verdict = check(text, quotes, share=share, allowed=allowed, context=context)
        if not verdict.model_may_settle or self.model is None or not quotes:
            return verdict
        score = float(self.model.entailment(" ".join(q.strip() for q in quotes), text))
        if score >= ENTAILED:
            return Support(
                SUPPORTED, (), f"the entailment model judged it supported ({score:.2f})", score
            )  # changes is empty: model_may_settle said so
        if score <= REFUTED:
            return Support(
                UNSUPPORTED,
                verdict.missing,
                f"{verdict.reason}; the entailment model judged it unsupported ({score:.2f})",
                score,
            )
        return Support(
            UNCERTAIN,
            verdict.missing,
            f"{verdict.reason}; the entailment model was unsure ({score:.2f})",
            score,
        )
