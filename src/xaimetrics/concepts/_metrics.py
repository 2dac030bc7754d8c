"""All App. D metrics of a concept space in one call: :func:`concept_metrics` → :class:`ConceptSpaceMetrics`.

One pass does everything: the activations ``A = h(X)`` (one forward of ``h`` when texts are given), the
model's logits ``f(X) = g(A)``, the concepts ``U = t(A)``, and one forward/backward of ``f_co = g∘t⁻¹`` that
gives both the concept model's logits ``f_c(X)`` and the local importances used for "nb important".
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import numpy as np

from xaimetrics._arrays import is_tensor, to_numpy
from xaimetrics._validation import Interval, caller, check_texts, invalid, validate_params
from xaimetrics.concepts import _complexity as complexity
from xaimetrics.concepts._concept_model import (
    ConceptModel,
    _GAsModel,
    _model_dtype,
    check_matrix,
    g_of,
)
from xaimetrics.concepts._faithfulness import completeness, latent_l2, logits_kl, logits_l2
from xaimetrics.concepts._importance import (
    IMPORTANCE_THRESHOLD,
    global_importance,
    gradient_x_input,
    normalize_importance,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from numpy.typing import ArrayLike

    from xaimetrics._protocols import DictionaryCodec, HeadLike, SplitClassifierLike
    from xaimetrics._typing import Array

__all__ = ["ConceptSpaceMetrics", "concept_metrics"]


@dataclass(frozen=True)
class ConceptSpaceMetrics:
    """The complexity (App. D.1) and faithfulness (App. D.2) metrics of one concept space.

    Attributes:
        n_concepts: ``k``, the number of concepts ("nb concepts").
        l0: mean number of non-zero concepts per sample ("nb activated", :func:`concept_l0`).
        activation_ratio: ``l0 / k`` ("ratio of activated").
        cosine_similarity: mean cosine similarity of the decoder atoms, diagonal included.
        covariance: mean of the covariance matrix between decoder atoms.
        n_important: concepts with ``|Φ̂_c| > τ`` for some class ("nb important").
        important_ratio: ``n_important / k`` ("ratio of important").
        latent_l2: ``mean_x ‖h(x) − t⁻¹(t(h(x)))‖²`` ("latents L2").
        latent_relative_l2: ``‖A − Â‖²_F / ‖A‖²_F``.
        logits_l2: ``mean_x ‖f(x) − f_c(x)‖²`` ("logits L2").
        logits_kl: ``mean_x KL(softmax f(x) ‖ softmax f_c(x))`` ("logits KL").
        completeness: Yeh et al.'s completeness of ``f_c`` (against labels when given, else against ``f``).
    """

    n_concepts: int
    l0: float
    activation_ratio: float
    cosine_similarity: float
    covariance: float
    n_important: int
    important_ratio: float
    latent_l2: float
    latent_relative_l2: float
    logits_l2: float
    logits_kl: float
    completeness: float

    def to_dict(self) -> dict[str, float]:
        """The metrics as a ``{name: value}`` dict, in the order of the attributes."""
        return {name: float(value) for name, value in asdict(self).items()}


@validate_params({"batch_size": Interval(int, 1)})
def concept_metrics(
    model: SplitClassifierLike | HeadLike,
    extractor: DictionaryCodec,
    inputs: Sequence[str] | Array,
    *,
    labels: ArrayLike | None = None,
    threshold: float = IMPORTANCE_THRESHOLD,
    atol: float = 0.0,
    batch_size: int = 256,
) -> ConceptSpaceMetrics:
    """Compute every App. D metric of a fitted concept extractor on a set of samples.

    Args:
        model: the split classifier ``f = g∘h`` (:class:`xaimetrics.models.SplitClassifier`: ``activations``
            and ``logits_from_activations``); with precomputed activations, a callable ``g`` is enough.
        extractor: a fitted concept extractor (``encode``, ``decode``, ``components_``).
        inputs: a list of texts, or their activations ``A = h(X)`` of shape ``(n_samples, n_features)``.
        labels: true classes of the samples (for completeness), integers of shape ``(n_samples,)``, or
            ``None`` to measure completeness against the model's predictions.
        threshold: ``τ`` for "nb important" (0.05 in the paper).
        atol: zero tolerance of L0 (see :func:`concept_l0`).
        batch_size: samples per forward/backward pass of the head.

    Returns:
        A :class:`ConceptSpaceMetrics` (``.to_dict()`` for a table row).

    Example:
        >>> import torch
        >>> W = torch.tensor([[1.0, -1.0], [0.5, 0.0], [0.0, 2.0]])
        >>> class Keep2:  # keeps the first two activation dimensions as concepts
        ...     components_ = torch.eye(3)[:2].numpy()
        ...     def encode(self, A):
        ...         return A[:, :2]
        ...     def decode(self, U):
        ...         return U @ torch.eye(3)[:2]
        >>> A = torch.tensor([[1.0, 2.0, 0.0], [0.0, 1.0, 1.0], [2.0, 0.0, 0.5]])
        >>> m = concept_metrics(lambda a: a @ W, Keep2(), A)
        >>> m.n_concepts, m.l0, m.cosine_similarity, m.latent_l2
        (2, 1.3333333333333333, 0.5, 0.4166666666666667)
    """
    import torch

    owner = caller()
    logits = None
    if isinstance(inputs, str) or (not is_tensor(inputs) and not isinstance(inputs, np.ndarray)):
        texts = check_texts(inputs, "inputs", owner)
        if hasattr(model, "activations_and_logits"):  # h and f from one forward pass
            activations, logits = model.activations_and_logits(texts)
        elif hasattr(model, "activations"):
            activations = model.activations(texts)
        else:
            raise invalid(
                "model",
                owner,
                "a split classifier with activations(texts) when 'inputs' are texts",
                type(model).__name__,
                "Pass activations as 'inputs' instead.",
            )
    else:
        activations = inputs
    activations = check_matrix(activations, "inputs", what="(n_samples, n_features)")
    if not is_tensor(activations):
        activations = torch.from_numpy(np.ascontiguousarray(activations))
    activations = activations.to(_model_dtype(model, default=activations.dtype))
    n_samples = activations.shape[0]
    if labels is not None and len(to_numpy(labels)) != n_samples:
        raise invalid(
            "labels", owner, f"one label per sample ({n_samples})", f"{len(to_numpy(labels))} labels"
        )

    g = g_of(model)
    with torch.no_grad():
        if logits is None:
            logits = torch.cat(
                [torch.as_tensor(g(activations[i : i + batch_size])) for i in range(0, n_samples, batch_size)]
            )
        concepts = extractor.encode(activations)
        reconstructed = extractor.decode(concepts)
    logits = torch.as_tensor(logits).detach().cpu()
    f_co = ConceptModel(_GAsModel(model), extractor)
    phi, concept_logits = gradient_x_input(f_co, concepts, None, batch_size, owner)

    n_classes = int(logits.shape[1])
    predictions = logits.argmax(dim=1).numpy()
    concept_predictions = concept_logits.argmax(dim=1).numpy()
    importance = normalize_importance(global_importance(phi.double(), concept_predictions, n_classes))
    return ConceptSpaceMetrics(
        n_concepts=int(concepts.shape[1]),
        l0=complexity.concept_l0(concepts, atol),
        activation_ratio=complexity.concept_activation_ratio(concepts, atol),
        cosine_similarity=complexity.decoder_cosine_similarity(extractor.components_),
        covariance=complexity.decoder_covariance(extractor.components_),
        n_important=complexity.n_important_concepts(importance, threshold),
        important_ratio=complexity.important_concept_ratio(importance, threshold),
        latent_l2=latent_l2(activations, reconstructed),
        latent_relative_l2=latent_l2(activations, reconstructed, relative=True),
        logits_l2=logits_l2(logits, concept_logits),
        logits_kl=logits_kl(logits, concept_logits),
        completeness=completeness(predictions, concept_predictions, labels, n_classes=n_classes),
    )
