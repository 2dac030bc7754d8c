"""Build studies from a model's outputs: explanations computed as ConSim computes them, Likert items from
concept values. The functional core of ``xaimetrics study create`` (which adds the grid's artefacts).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from xaimetrics._validation import check_positive_int, check_seed, check_texts, invalid
from xaimetrics.concepts import ConceptInterpretation
from xaimetrics.studies._likert import Dimension, LikertOptions, LikertStudy, RatingItem
from xaimetrics.studies._simulatability import MethodExplanation, SampleSet, StudySample, as_interpretation

if TYPE_CHECKING:
    from numpy.typing import ArrayLike
    from typing_extensions import Unpack

    from xaimetrics._protocols import SplitModel
    from xaimetrics._typing import Array
    from xaimetrics.concepts import ConceptExtractor

__all__ = ["choose_examples", "explain_method", "likert_study_from_concepts"]


def _numpy(values: Array | ArrayLike) -> np.ndarray:
    detach = getattr(values, "detach", None)  # a torch tensor
    return np.asarray(values if detach is None else detach().cpu().numpy())


def explain_method(
    model: SplitModel,
    extractor: ConceptExtractor,
    interpretation: Mapping[int, object],
    activations: Array,
    samples: SampleSet,
    *,
    method: str,
    n_concepts: int = 0,
    interpretation_kind: str = "top_words",
    lp_local: bool = True,
    ep_local: bool = False,
    batch_size: int = 256,
) -> MethodExplanation:
    """One method's explanation of ``samples``, computed exactly as :class:`~xaimetrics.consim.ConSim` does.

    ``Φ`` (eq. 4) is the mean gradient×input ``φ`` over the concept-fit ``activations`` per class ``f_co``
    predicts; the local ``φ`` of the LP (``lp_local``, for E3) and EP (``ep_local``, for U1) samples explain
    the class f predicted, through the real ``g∘t⁻¹``
    (:func:`~xaimetrics.concepts.local_importance`, :func:`~xaimetrics.concepts.global_importance`).

    Args:
        model: the split classifier ``f = g∘h``.
        extractor: the fitted concept extractor.
        interpretation: ``{concept id: description}`` (e.g. ``TopWords(...).fit(texts).interpret()``).
        activations: the concept-fit activations ``A``, shape ``(n, p)``.
        samples: the :class:`SampleSet` explained.
        method, n_concepts, interpretation_kind: recorded in the explanation (the benchmark's setting).
        lp_local, ep_local: compute the local importances of the LP / EP samples.
        batch_size: samples per gradient pass.
    """
    from xaimetrics.concepts import global_importance, local_importance

    n_classes = _n_classes(model)
    concepts = extractor.encode(activations)
    phi, f_co = local_importance(
        model, concepts, extractor=extractor, batch_size=batch_size, return_predictions=True
    )
    global_phi = _numpy(global_importance(phi, f_co, n_classes=n_classes))

    def local(part: tuple[StudySample, ...]) -> np.ndarray:
        texts = [s.text for s in part]
        encoded = extractor.encode(model.activations(texts))
        targets = np.array([s.prediction for s in part], dtype=np.int64)
        return _numpy(local_importance(model, encoded, targets, extractor=extractor, batch_size=batch_size))

    return MethodExplanation(
        method=method,
        seed=samples.seed,
        n_concepts=n_concepts,
        interpretation=interpretation_kind,
        concepts={int(k): as_interpretation(v) for k, v in interpretation.items()},
        global_importances=global_phi,
        lp_local=local(samples.lp) if lp_local and samples.lp else None,
        ep_local=local(samples.ep) if ep_local else None,
    )


def _n_classes(model: SplitModel) -> int:
    names = getattr(model, "class_names", None)
    if names is None:
        raise invalid("model", "explain_method", "a split classifier with class_names", type(model).__name__)
    return len(names)


def choose_examples(
    n_texts: int, n_examples: int, labels: Sequence[int] | None = None, *, seed: int = 0
) -> np.ndarray:
    """Indices of ``n_examples`` diverse texts: classes taken in turn (round robin), seeded, sorted.

    Example:
        >>> choose_examples(6, 4, [0, 0, 0, 1, 1, 2], seed=0).tolist()
        [0, 1, 3, 5]
    """
    owner = "choose_examples"
    n_examples = check_positive_int(n_examples, "n_examples", owner)
    seed = check_seed(seed, "seed", owner)
    if n_examples > n_texts:
        raise invalid("n_examples", owner, f"at most the number of texts ({n_texts})", n_examples)
    rng = np.random.default_rng(seed)
    groups = np.zeros(n_texts, dtype=np.int64) if labels is None else np.asarray(labels, dtype=np.int64)
    queues = [list(rng.permutation(np.flatnonzero(groups == g))) for g in np.unique(groups)]
    chosen: list[int] = []
    while len(chosen) < n_examples:
        for queue in queues:
            if queue and len(chosen) < n_examples:
                chosen.append(int(queue.pop()))
    return np.sort(np.array(chosen, dtype=np.int64))


def _dimension_of(concept_id: int, description: ConceptInterpretation) -> Dimension:
    words = ", ".join(description.aligned[:5])
    if description.label:
        prop = description.label
    elif words:
        prop = f"the theme of the words “{words}”"
    else:
        prop = "a recognisable theme"
    parts = []
    if words:
        parts.append(f"Texts with these words score high: {words}.")
    if description.opposed:
        parts.append(f"Texts with these words score low: {', '.join(description.opposed[:5])}.")
    return Dimension(
        name=f"Concept {concept_id}" + (f" ({description.label})" if description.label else ""),
        property=prop,
        description=" ".join(parts),
        low=", ".join(description.opposed[:2]),
        high=", ".join(description.aligned[:2]),
    )


def likert_study_from_concepts(
    inputs: Sequence[str],
    concepts: Array | ArrayLike,
    interpretation: Mapping[int, object],
    *,
    n_examples: int = 50,
    labels: Sequence[int] | None = None,
    concept_ids: Sequence[int] | None = None,
    seed: int = 0,
    **options: Unpack[LikertOptions],
) -> LikertStudy:
    """A Likert study rating concepts as dimensions: ``n_examples`` texts and each concept's value on them.

    Each concept becomes a :class:`Dimension` whose property is its label (o1CA) or "the theme of" its top
    words (CMAW), with the aligned and opposed words as description and poles.

    Args:
        inputs: candidate texts.
        concepts: their concept activations ``U``, shape ``(n_texts, n_concepts)``.
        interpretation: ``{concept id: ConceptInterpretation}`` (``TopWords(...).interpret()``).
        n_examples: texts to rate (the protocol uses 50), chosen by :func:`choose_examples`.
        labels: the texts' classes, so that every class is represented.
        concept_ids: the concepts to rate (default: every column of ``concepts``).
        seed: seeds the choice of texts.
        options: passed to :class:`LikertStudy` (``title``, ``n_annotators``, ``question``…).

    Example:
        >>> from xaimetrics.concepts import ConceptInterpretation
        >>> study = likert_study_from_concepts(
        ...     ["late goal", "new chip", "coach quits"], [[0.9, 0.0], [0.0, 0.8], [0.5, 0.1]],
        ...     {0: ConceptInterpretation(("goal", "coach")), 1: ConceptInterpretation(("chip",))}, n_examples=2)
        >>> [d.property for d in study.dimensions], [i.text for i in study.items]
        (['the theme of the words “goal, coach”', 'the theme of the words “chip”'], ['late goal', 'new chip'])
    """
    owner = "likert_study_from_concepts"
    texts = check_texts(inputs, "inputs", owner)
    values = _numpy(concepts).astype(np.float64)
    if values.ndim != 2 or values.shape[0] != len(texts):
        raise invalid("concepts", owner, f"an array of shape ({len(texts)}, n_concepts)", values.shape)
    ids = list(range(values.shape[1])) if concept_ids is None else [int(i) for i in concept_ids]
    if not ids or any(not 0 <= i < values.shape[1] for i in ids):
        raise invalid("concept_ids", owner, f"concept ids in [0, {values.shape[1]})", concept_ids)
    described = {int(k): v for k, v in interpretation.items()}
    missing = [i for i in ids if i not in described]
    if missing:
        raise invalid("interpretation", owner, "a description of every rated concept", f"missing {missing}")
    chosen = choose_examples(len(texts), n_examples, labels, seed=seed)
    dimensions = [_dimension_of(i, as_interpretation(described[i])) for i in ids]
    items = [RatingItem(str(int(r)), texts[r], tuple(float(values[r, i]) for i in ids)) for r in chosen]
    return LikertStudy(tuple(dimensions), tuple(items), **options)
