"""What a concept-based method puts in a ConSim prompt, and how ConSim computes it from the model.

- Global importances ``Φ`` (eq. 4): gradient×input ``φ`` (eq. 3) of every concept-fit sample for the class
  ``f_co`` predicts, averaged per predicted class (:func:`xaimetrics.concepts.global_importance`).
- Local importances of the LP samples (E3, U1) and of the EP samples (U1 only): ``φ`` for the class **f
  predicted** — the one the prompt shows — through the real ``g∘t⁻¹`` (Interpreto 0.5 crashed on this path).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, cast

import numpy as np
from numpy.typing import ArrayLike

from xaimetrics._typing import Array, Texts
from xaimetrics._validation import invalid
from xaimetrics.consim._rendering import Description, Importances

if TYPE_CHECKING:
    from xaimetrics._protocols import SplitModel
    from xaimetrics.concepts import ConceptExtractor

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "Explanation",
    "Interpreter",
    "global_importances_of",
    "local_importances_of",
]

_OWNER = "ConSim"


class Interpreter(Protocol):
    """A fitted interpretation (:class:`~xaimetrics.concepts.TopWords`, :class:`~xaimetrics.consim.LLMLabels`)."""

    def interpret(self) -> Mapping[int, Description]: ...


class _NetworkSplit(Protocol):
    """A model split inside the network (``needs_inputs``): ``g`` re-runs it on the texts."""

    def concept_importance(
        self, extractor: ConceptExtractor, inputs: Texts, targets: ArrayLike | None = None
    ) -> tuple[np.ndarray, np.ndarray]: ...


#: the batch size of the importance computations (ConSim's ``batch_size`` default)
DEFAULT_BATCH_SIZE = 256


@dataclass(frozen=True)
class Explanation:
    """One method's explanation, as ConSim shows it: what it gives, and what ConSim computes from the model.

    Give the parts you have. Missing importances are computed by :class:`ConSim` from the model:
    ``global_importances`` from ``extractor`` and ``activations`` (eq. 4), the local ones from ``extractor``
    (eq. 3, for the class f predicted). A baseline (NE1, NE2) needs none of it: ``Explanation()``.

    Attributes:
        extractor: a fitted concept extractor (``encode``/``decode``).
        interpretation: ``{concept_id: description}`` or a fitted object with ``interpret()``
            (:class:`~xaimetrics.concepts.TopWords`, :class:`~xaimetrics.consim.LLMLabels`).
        activations: the concept-fit activations ``A`` of shape ``(n, p)``, on which ``Φ`` (eq. 4) is computed;
            for a model split inside the network (``model.needs_inputs``: g re-runs the network on the texts),
            the concept-fit **texts** instead.
        global_importances: ``Φ``, array of shape ``(n_classes, n_concepts)`` or Interpreto's
            ``{class: {concept_id: value}}`` (raw or normalised).
        lp_local_importances: ``φ`` of the LP samples (E3, U1), shape ``(n_lp, n_concepts)``; like
            ``ep_local_importances`` (U1 only), they belong to the samples they were computed for.
        concept_ids: the concept id of each importance column (default ``0 … n_concepts-1``).

    Example:
        >>> explanation = Explanation(interpretation={3: ["great", "superb"]}, global_importances=[[-0.4], [0.6]],
        ...                           concept_ids=[3])
        >>> explanation.interpretation_mapping()
        {3: ['great', 'superb']}
    """

    extractor: ConceptExtractor | None = None
    interpretation: Mapping[int, Description] | Interpreter | None = None
    activations: Array | Sequence[str] | None = None
    global_importances: Importances | None = None
    lp_local_importances: Importances | None = None
    ep_local_importances: Importances | None = None
    concept_ids: Sequence[int] | None = None

    def __post_init__(self) -> None:
        value = self.interpretation
        if not (value is None or isinstance(value, Mapping) or callable(getattr(value, "interpret", None))):
            raise invalid(
                "interpretation",
                _OWNER,
                "a mapping {concept_id: description} or a fitted TopWords/LLMLabels",
                type(value).__name__,
            )

    def interpretation_mapping(self) -> Mapping[int, Description] | None:
        """The interpretation as ``{concept_id: description}`` (calls ``interpret()`` on fitted objects)."""
        if self.interpretation is None or isinstance(self.interpretation, Mapping):
            return self.interpretation
        return self.interpretation.interpret()


def _encodable(extractor: ConceptExtractor | None, what: str) -> ConceptExtractor:
    if extractor is None or not callable(getattr(extractor, "encode", None)):
        raise invalid(
            "extractor",
            _OWNER,
            f"given to compute the {what}",
            None if extractor is None else type(extractor).__name__,
            f"Pass Explanation(extractor=<fitted concept extractor>) or the {what} in the Explanation.",
        )
    return extractor


def _model(model: SplitModel | None, what: str) -> SplitModel:
    if model is None:
        raise invalid("model", _OWNER, f"given to compute the {what}", None, f"Pass the model or the {what}.")
    return model


def global_importances_of(
    model: SplitModel | None,
    extractor: ConceptExtractor | None,
    activations: Array | Sequence[str] | None,
    n_classes: int,
    batch_size: int = DEFAULT_BATCH_SIZE,
) -> Array:
    """``Φ`` of shape ``(n_classes, n_concepts)`` on the concept-fit ``activations`` (eq. 3–4)."""
    from xaimetrics.concepts import global_importance, local_importance

    what = "global importances"
    if activations is None:
        raise invalid(
            "activations",
            _OWNER,
            "given to compute the global importances (eq. 4 averages over them)",
            None,
            "Pass Explanation(activations=<the activations the extractor was fitted on>), or its "
            "global_importances.",
        )
    if getattr(model, "needs_inputs", False):  # g is the rest of the network: it needs the texts
        if isinstance(activations, str) or not all(isinstance(t, str) for t in activations):
            raise invalid(
                "activations", _OWNER, "the texts the extractor was fitted on, for a split inside the network",
                type(activations).__name__, "Pass activations=<list of texts>: g needs them to re-run the model.",
            )  # fmt: skip
        texts = cast("list[str]", list(activations))
        phi, f_co_predictions = cast(_NetworkSplit, model).concept_importance(
            _encodable(extractor, what), texts
        )
        return global_importance(phi, f_co_predictions, n_classes=n_classes)
    fitted = _encodable(extractor, what)
    concepts = fitted.encode(cast("Array", activations))
    local, predictions = local_importance(
        _model(model, what), concepts, extractor=fitted, batch_size=batch_size, return_predictions=True
    )
    return global_importance(local, predictions, n_classes=n_classes)


def local_importances_of(
    model: SplitModel | None,
    extractor: ConceptExtractor | None,
    texts: Sequence[str],
    targets: ArrayLike,
    batch_size: int,
    phase: str,
) -> Array | np.ndarray:
    """``φ`` of shape ``(n_texts, n_concepts)`` for the classes ``targets`` (f's predictions) (eq. 3)."""
    from xaimetrics.concepts import local_importance

    what = f"{phase} local importances"
    if not texts:
        raise invalid("samples", _OWNER, f"{phase} samples to explain", "none")
    fitted = _encodable(extractor, what)
    if getattr(model, "needs_inputs", False):  # g is the rest of the network: it needs the texts
        split = cast(_NetworkSplit, model)
        return split.concept_importance(fitted, list(texts), np.asarray(targets, dtype=np.int64))[0]
    split_model = _model(model, what)
    activations = split_model.activations(list(texts))
    return local_importance(
        split_model, fitted.encode(activations), np.asarray(targets, dtype=np.int64), extractor=fitted,
        batch_size=batch_size,
    )  # fmt: skip
