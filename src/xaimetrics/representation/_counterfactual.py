"""Counterfactual consistency: does moving one dimension change the output the way it should?

Generic form (the document's ``counterfactual_consistency``): for every input, encode it (``z``), decode
``z`` and ``z + δ·e_d`` (clipped to the representation's bounds) for each δ in ``deltas``, measure the change
of every semantic property with its scorer (``score(modified) - score(original)``), and take the cosine
between that change and the expected shift of dimension ``d`` for δ. The consistency of ``d`` is the mean
cosine over deltas and inputs. Cosines lie in [-1, 1]: the document's [0, 1] range assumes that effects
are never opposite to the expectation; we keep negative values (an anti-consistent dimension is worse than
a random one). Policy for degenerate cases: no measured change (a zero vector) gives a cosine of 0 (an
unpredictable, here absent, effect); an expected shift of zero has no direction, so that (dimension, δ)
is NaN and left out of the mean (a dimension with no expectation at all scores NaN).

Concept-space form (:func:`concept_counterfactual_consistency`), needing no text decoder: shift one concept
of a sample, decode to activations with the extractor, run the classifier head ``g`` and compare the change
in class scores with the sign of the concept's global importance for each class (ConSim eq. 3-4:
``Φ_c = mean over samples predicted c of u ⊙ ∇_u g(t⁻¹(u))_c``): raising a concept that supports class c
should raise c's score.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TypeVar

import numpy as np

from xaimetrics._validation import Options, caller, invalid, validate_params
from xaimetrics.representation._bands import DimensionScores

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from xaimetrics._protocols import ConceptCodec, HeadLike
    from xaimetrics._typing import Array

_Input = TypeVar("_Input")
_Output = TypeVar("_Output")

__all__ = ["ConsistencyResult", "concept_counterfactual_consistency", "counterfactual_consistency"]

DEFAULT_DELTAS: tuple[float, ...] = (-0.5, -0.25, 0.25, 0.5)


def _numpy(values: object) -> np.ndarray:
    if hasattr(values, "detach"):
        values = values.detach().cpu().numpy()
    return np.asarray(values, dtype=np.float64)


@dataclass
class ConsistencyResult(DimensionScores):
    """Counterfactual consistency per dimension.

    Attributes:
        scores: array of shape ``(n_dimensions,)``, mean cosine (NaN where undefined).
        per_delta: array of shape ``(n_dimensions, n_deltas)``, mean cosine per δ.
        per_sample: array of shape ``(n_dimensions, n_samples)``, mean cosine per input (the document's
            ``consistency_scores``).
        deltas: the shifts used (in the units of the representation; see ``scales``).
        dimensions: the evaluated dimension indices; dimension_names: their labels.
        scales: per dimension, the factor the deltas were multiplied by (1 unless scaled).
        undefined: ``{dimension index: reason}``.
    """

    scores: np.ndarray
    per_delta: np.ndarray
    per_sample: np.ndarray
    deltas: tuple[float, ...]
    dimensions: list[int]
    dimension_names: list[str]
    scales: np.ndarray
    undefined: dict[int, str] = field(default_factory=dict)

    _band_metric = "consistency"

    def to_dict(self) -> dict[str, object]:
        """JSON-ready summary (NaN becomes ``None``)."""
        return {
            **self._score_summary(),
            "deltas": list(self.deltas),
            "dimensions": self.dimensions,
            "dimension_names": self.dimension_names,
            "scales": self.scales.tolist(),
            "undefined": {str(k): v for k, v in self.undefined.items()},
        }


def _row_cosine(actual: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Cosine of each row of ``actual`` (n, P) with ``expected`` (P,): 0 for a zero row, NaN if expected is 0."""
    expected_norm = np.linalg.norm(expected)
    if expected_norm == 0:
        return np.full(actual.shape[0], np.nan)
    norms = np.linalg.norm(actual, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        cosine = actual @ expected / (norms * expected_norm)
    return np.where(norms == 0, 0.0, np.clip(cosine, -1.0, 1.0))


def _nanmean(values: np.ndarray, axis: int | None = None) -> np.ndarray:
    """``np.nanmean`` without the warning for all-NaN slices (they are NaN on purpose); 0-d for ``axis=None``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(np.nanmean(values, axis=axis))


@validate_params({})
def counterfactual_consistency(
    inputs: Sequence[_Input],
    *,
    encoder: Callable[[list[_Input]], ArrayLike],
    decoder: Callable[[np.ndarray], _Output],
    scorers: Mapping[str, Callable[[_Output], ArrayLike]],
    expected_shift: Callable[[int, float], Mapping[str, float]],
    dimensions: int | Sequence[int] | None = None,
    deltas: Sequence[float] = DEFAULT_DELTAS,
    clip: tuple[float | None, float | None] | None = (-1.0, 1.0),
    dimension_names: Sequence[str] | None = None,
) -> ConsistencyResult:
    """The document's counterfactual consistency of one or several dimensions.

    Args:
        inputs: the test inputs (e.g. texts).
        encoder: ``inputs → z``, array of shape ``(n, n_dimensions)``.
        decoder: ``z → outputs`` (e.g. texts), called on the original and on each modified ``z``.
        scorers: ``{property: outputs → array (n,)}``, e.g. a sentiment classifier; the measured shift of a
            property is ``scorer(modified) - scorer(original)``.
        expected_shift: ``(dimension, δ) → {property: expected change}``; properties left out expect 0.
        dimensions: which dimensions to vary (default all).
        deltas: the shifts (the document's ``-0.5, -0.25, 0.25, 0.5``).
        clip: ``(low, high)`` bounds applied to the whole modified ``z`` (the document's ``(-1, 1)``; either
            bound may be ``None``); ``None`` for no clipping.
        dimension_names: labels (default the indices).

    Returns:
        :class:`ConsistencyResult`.

    Example:
        >>> texts = ["ok", "good film", "bad"]
        >>> encode = lambda xs: [[0.1 * len(x), 0.0] for x in xs]  # dimension 0 = "sentiment"
        >>> decode = lambda z: z  # the "text" is its code; the scorers read it
        >>> scorers = {"sentiment": lambda z: z[:, 0], "length": lambda z: 0.2 * z[:, 1]}
        >>> expected = lambda dim, delta: {"sentiment": delta} if dim == 0 else {"length": abs(delta)}
        >>> result = counterfactual_consistency(
        ...     texts, encoder=encode, decoder=decode, scorers=scorers, expected_shift=expected
        ... )
        >>> result.scores.round(3).tolist()  # dimension 1 moves "length" with δ, but |δ| was expected
        [1.0, 0.0]
    """
    if isinstance(inputs, str) or not len(inputs):
        raise invalid("inputs", caller(), "a non-empty sequence of inputs", inputs)
    if not scorers:
        raise invalid("scorers", caller(), "at least one property scorer", scorers)
    names = list(scorers)
    deltas = tuple(float(d) for d in deltas)
    if not deltas or any(d == 0 for d in deltas):
        raise invalid("deltas", caller(), "non-zero shifts", deltas)
    z = _numpy(encoder(list(inputs)))
    if z.ndim != 2 or z.shape[0] != len(inputs):
        raise invalid(
            "encoder",
            caller(),
            f"an array of shape ({len(inputs)}, n_dimensions)",
            f"shape {z.shape}",
        )
    dims = _dimensions(dimensions, z.shape[1])
    if dimension_names is None:
        dimension_names = [str(d) for d in dims]
    elif len(dimension_names) != len(dims):
        raise invalid("dimension_names", caller(), f"{len(dims)} names", len(dimension_names))
    return _evaluate(
        z,
        dims,
        list(dimension_names),
        decoder,
        scorers,
        names,
        expected_shift,
        deltas,
        np.ones(len(dims)),
        clip,
    )


def _dimensions(dimensions: int | Sequence[int] | None, n: int) -> list[int]:
    owner = caller()
    if dimensions is None:
        return list(range(n))
    dims = [dimensions] if isinstance(dimensions, int | np.integer) else list(dimensions)
    for d in dims:
        if not 0 <= int(d) < n:
            raise invalid("dimensions", owner, f"indices in [0, {n})", d)
    return [int(d) for d in dims]


def _evaluate(
    z: np.ndarray,
    dims: list[int],
    dimension_names: list[str],
    decoder: Callable[[np.ndarray], _Output],
    scorers: Mapping[str, Callable[[_Output], ArrayLike]],
    names: list[str],
    expected_shift: Callable[[int, float], Mapping[str, float]],
    deltas: tuple[float, ...],
    scales: np.ndarray,
    clip: tuple[float | None, float | None] | None,
) -> ConsistencyResult:
    original = decoder(z)
    base = [_numpy(scorers[p](original)).ravel() for p in names]
    per_delta = np.full((len(dims), len(deltas)), np.nan)
    per_sample = np.full((len(dims), z.shape[0]), np.nan)
    undefined: dict[int, str] = {}
    for row, (dim, scale) in enumerate(zip(dims, scales, strict=True)):
        cosines = np.full((z.shape[0], len(deltas)), np.nan)
        for col, delta in enumerate(deltas):
            expected_map = dict(expected_shift(dim, delta))
            unknown = set(expected_map) - set(names)
            if unknown:
                raise invalid(
                    "expected_shift",
                    "counterfactual_consistency",
                    f"properties among the scorers {names}",
                    sorted(unknown),
                )
            expected = np.array([float(expected_map.get(p, 0.0)) for p in names])
            modified = z.copy()
            modified[:, dim] += delta * scale
            if clip is not None:
                modified = np.clip(modified, clip[0], clip[1])
            outputs = decoder(modified)
            actual = np.stack(
                [_numpy(scorers[p](outputs)).ravel() - b for p, b in zip(names, base, strict=True)], axis=1
            )
            cosines[:, col] = _row_cosine(actual, expected)
        per_delta[row] = _nanmean(cosines, axis=0)
        per_sample[row] = _nanmean(cosines, axis=1)
        if np.isnan(cosines).all():
            undefined[dim] = "the expected shift is zero for every delta (no direction to compare with)"
    scores = np.array([_nanmean(per_sample[r]) for r in range(len(dims))])
    return ConsistencyResult(scores, per_delta, per_sample, deltas, dims, dimension_names, scales, undefined)


@validate_params({"delta_scale": Options(("std", "absolute")), "expected": Options(("sign", "importance"))})
def concept_counterfactual_consistency(
    model: HeadLike,
    extractor: ConceptCodec,
    activations: Array,
    *,
    importance: ArrayLike | None = None,
    concepts: int | Sequence[int] | None = None,
    deltas: Sequence[float] = DEFAULT_DELTAS,
    delta_scale: Literal["std", "absolute"] = "std",
    expected: Literal["sign", "importance"] = "sign",
    clip: tuple[float | None, float | None] | None = None,
    class_names: Sequence[str] | None = None,
) -> ConsistencyResult:
    """Counterfactual consistency of concepts, with the classifier head as the property scorer.

    For each sample ``u = t(a)`` and concept ``j``: ``Δ = g(t⁻¹(u + δ·s_j·e_j)) - g(t⁻¹(u))`` (class logits),
    compared by cosine with the expected shift ``sign(δ) · sign(Φ[:, j])`` (or ``sign(δ) · Φ[:, j]``).

    Args:
        model: the split classifier (``logits_from_activations`` is ``g``) or a callable ``g``.
        extractor: a fitted concept extractor (``encode``, ``decode``).
        activations: array of shape ``(n_samples, n_features)``, activations ``h(x)`` of the test texts.
        importance: global importance ``Φ`` of shape ``(n_classes, n_concepts)``; default computed from
            these samples by gradient × input through ``g∘t⁻¹`` (:func:`xaimetrics.concepts.local_importance`
            then :func:`~xaimetrics.concepts.global_importance`).
        concepts: which concepts to evaluate (default all).
        deltas: the shifts; multiplied by each concept's standard deviation over the samples when
            ``delta_scale="std"`` (default: concept units are arbitrary), used as is with ``"absolute"``.
        expected: ``"sign"`` (the sign of Φ per class) or ``"importance"`` (Φ itself, magnitudes included).
        clip: bounds for the shifted concepts (e.g. ``(0, None)`` to keep NMF concepts non-negative).
        class_names: labels of the classes (default ``model.class_names`` or indices).

    Returns:
        :class:`ConsistencyResult` over concepts; a concept whose importance is zero for every class is NaN.

    Example:
        >>> import numpy as np
        >>> class Linear:  # t(a) = a @ P.T, t⁻¹(u) = u @ P (an orthogonal projection)
        ...     components_ = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
        ...     def encode(self, A): return A @ self.components_.T
        ...     def decode(self, U): return U @ self.components_
        >>> head = lambda A: A @ np.array([[2.0, -2.0], [0.0, 0.0], [1.0, 1.0]])  # concept 1 is inert
        >>> A = np.array([[1.0, 0.5, 0.0], [-1.0, 2.0, 1.0], [0.5, -1.0, 2.0]])
        >>> Phi = np.array([[1.0, 0.0], [-1.0, 0.0]])
        >>> result = concept_counterfactual_consistency(head, Linear(), A, importance=Phi)
        >>> result.scores.tolist(), result.undefined
        ([1.0, nan], {1: 'the expected shift is zero for every delta (no direction to compare with)'})
    """
    owner = caller()
    g = model.logits_from_activations if hasattr(model, "logits_from_activations") else model
    if not callable(g):
        raise invalid("model", owner, "a split classifier (logits_from_activations) or a callable g", model)
    u = _numpy(extractor.encode(activations))
    if u.ndim != 2 or u.shape[0] < 1:
        raise invalid(
            "activations", owner, "a 2-D array (n_samples, n_features)", f"concepts of shape {u.shape}"
        )
    if importance is None:
        n_classes = _numpy(g(extractor.decode(u[:1]))).shape[-1]
        importance = _global_importance(model, extractor, u, n_classes)
    phi = _numpy(importance)
    if phi.ndim != 2 or phi.shape[1] != u.shape[1]:
        raise invalid(
            "importance",
            owner,
            f"an array of shape (n_classes, n_concepts={u.shape[1]})",
            f"shape {phi.shape}",
        )
    n_classes = phi.shape[0]
    if class_names is None:
        class_names = list(getattr(model, "class_names", None) or [str(c) for c in range(n_classes)])
    if len(class_names) != n_classes:
        raise invalid("class_names", owner, f"{n_classes} names (rows of importance)", len(class_names))
    dims = _dimensions(concepts, u.shape[1])
    direction = np.sign(phi) if expected == "sign" else phi
    deltas = tuple(float(d) for d in deltas)
    scales = u[:, dims].std(axis=0) if delta_scale == "std" else np.ones(len(dims))

    def decode_and_score(codes: np.ndarray) -> np.ndarray:
        logits = _numpy(g(extractor.decode(codes)))
        if logits.ndim != 2 or logits.shape[1] != n_classes:
            raise invalid("model", owner, f"logits of shape (n, {n_classes})", f"shape {logits.shape}")
        return logits

    scorers = {name: (lambda logits, c=c: logits[:, c]) for c, name in enumerate(class_names)}
    names = list(class_names)

    def expected_shift(dim: int, delta: float) -> dict[str, float]:
        return {name: float(np.sign(delta) * direction[c, dim]) for c, name in enumerate(names)}

    result = _evaluate(
        u,
        dims,
        [str(d) for d in dims],
        decode_and_score,
        scorers,
        names,
        expected_shift,
        deltas,
        scales,
        clip,
    )
    for row, dim in enumerate(dims):
        if scales[row] == 0 and dim not in result.undefined:
            result.undefined[dim] = "the concept is constant over the samples (no spread to scale the deltas)"
    return result


def _global_importance(
    model: HeadLike, extractor: ConceptCodec, concepts: np.ndarray, n_classes: int
) -> np.ndarray:
    """Φ (n_classes, n_concepts) by gradient × input through g∘t⁻¹ (the concepts family, ConSim eq. 3-4)."""
    from xaimetrics.concepts import global_importance, local_importance

    phi, predictions = local_importance(model, concepts, extractor=extractor, return_predictions=True)
    return _numpy(global_importance(phi, predictions, n_classes=n_classes))
