"""The support check's optional model layer: an offline entailment (NLI) model (SPEC §3 W11).

The deterministic layer (:mod:`affidavit.support.rules`) settles most texts; the ones it calls
*uncertain* may be put to an entailment model, which returns the probability that the premise
(the quotes, joined) entails the hypothesis (the text). The setting ``support.model`` names the
model: ``"none"`` (the default) uses no model, and uncertain texts wait for a person;
``"auto"`` uses the project's trained cross-encoder (:mod:`affidavit.support.cross`) when the
``[embeddings]`` extra is installed and no model (rules only, no error) when it is not. Any other
value names an entry point in the group ``affidavit.entailment`` that a separately installed,
offline package registers::

    [project.entry-points."affidavit.entailment"]
    my-nli = "my_package:load"   # load() -> an object with entailment(premise, hypothesis)

The model runs in-process, on text only (W10): no file, network or tool access is given to it,
and Affidavit never downloads one. Tests and embedders pass a model object directly to
:class:`~affidavit.support.checker.SupportChecker`.
"""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Protocol, runtime_checkable

from ..config import Config
from ..errors import ConfigError

ENTRY_POINT_GROUP = "affidavit.entailment"
NO_MODEL = "none"
AUTO = "auto"
"""``support.model`` value: the shipped cross-encoder when its extra is installed, else none."""


@runtime_checkable
class EntailmentModel(Protocol):
    """What the support check needs from an entailment model."""

    def entailment(self, premise: str, hypothesis: str) -> float:
        """The probability (0 to 1) that ``premise`` entails ``hypothesis``."""
        ...


def available() -> list[str]:
    """Names of the entailment models installed packages register."""
    return sorted(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP))


def load_model(config: Config) -> EntailmentModel | None:
    """The model ``support.model`` names, or None for ``"none"`` (and for ``"auto"`` without the
    ``[embeddings]`` extra).

    Raises :class:`ConfigError` (saying what is installed) when no package registers that name,
    or when what it registers is not an entailment model.
    """
    name = str(config.get("support.model")).strip()
    if name in ("", NO_MODEL):
        return None
    if name == AUTO:
        from . import cross

        return cross.load() if cross.available() else None
    found = [ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name == name]
    if not found:
        installed = ", ".join(available()) or "none is installed"
        raise ConfigError(
            f"support.model is {name!r}, but no installed package registers an entailment model "
            f"by that name (entry point group {ENTRY_POINT_GROUP!r}; {installed}). Install the "
            'package, or set support.model = "none" in affidavit.toml.'
        )
    model = found[0].load()()
    if not isinstance(model, EntailmentModel):
        raise ConfigError(
            f"the entry point {name!r} of group {ENTRY_POINT_GROUP!r} did not return an object "
            "with entailment(premise, hypothesis) -> float; fix or remove that package."
        )
    return model
