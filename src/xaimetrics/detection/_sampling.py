"""Which texts a detection reader sees for one concept: activating texts and two kinds of non-activating ones.

For concept ``c`` with activations ``u = U[:, c]`` over a pool of texts:

- **activating** texts have ``u`` above its ``active_quantile`` quantile (and above 0, so a sparse concept's
  zeros never count as active): the ``n_top`` highest, then ``n_quantile`` drawn evenly from ``n_strata``
  equal-count strata of the remaining activating texts (Delphi samples activating examples from deciles of
  the activation, so that a description is judged on the whole range of the concept, not only its peak);
- **random negatives**: ``n_random`` texts drawn uniformly among those with ``u`` at or below its
  ``inactive_quantile`` quantile;
- **hard negatives**: ``n_hard`` non-activating texts closest (cosine) to the activating texts in an
  embedding space (by default the classifier's activations ``A``), one nearest unused neighbour per
  activating text in turn. They share topic and style with the activating texts, so only a description of
  what *distinguishes* them can separate the two (Delphi reports ~10 % lower scores against such negatives).

Texts between the two quantiles are never shown: they are neither clearly active nor clearly inactive.
Every draw is seeded; the counts actually drawn are stored, and a pool too small for a request raises an
error with the counts.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, TypedDict

import numpy as np

from xaimetrics._validation import check_in_range, check_positive_int, check_seed, invalid

__all__ = ["DetectionSample", "sample_texts"]

_OWNER = "sample_texts"


@dataclass(frozen=True)
class DetectionSample:
    """The texts drawn for one concept: pool indices, whether each is activating, and how it was drawn.

    Attributes:
        concept: the concept id.
        indices: row of each drawn text in the pool, shape ``(n,)``.
        active: 1 for activating texts, 0 for non-activating ones, shape ``(n,)``.
        kinds: per text, ``"top"``, ``"quantile"``, ``"random"`` or ``"hard"``.
        activations: the concept's activation of each drawn text, shape ``(n,)``.
        thresholds: ``(active above, inactive at or below)`` activation values.

    Example:
        >>> s = sample_texts(np.array([[0.0], [3.0], [0.0], [2.0], [0.0], [1.0]]), 0, n_top=1, n_quantile=1,
        ...                  n_random=2, n_hard=0, active_quantile=0.4, inactive_quantile=0.4)
        >>> s.kinds, s.active.tolist(), s.activations.tolist()[:2]
        (('top', 'quantile', 'random', 'random'), [1, 1, 0, 0], [3.0, 2.0])
    """

    concept: int
    indices: np.ndarray
    active: np.ndarray
    kinds: tuple[str, ...]
    activations: np.ndarray
    thresholds: tuple[float, float] = field(default=(0.0, 0.0))

    def counts(self) -> dict[str, int]:
        """How many texts of each kind were drawn."""
        return {kind: self.kinds.count(kind) for kind in ("top", "quantile", "random", "hard")}


def _cosine_nearest(
    queries: np.ndarray, candidates: np.ndarray, n: int, rng: np.random.Generator
) -> list[int]:
    """Indices (into ``candidates``) of ``n`` distinct nearest neighbours, one per query in turn."""
    q = queries / np.maximum(np.linalg.norm(queries, axis=1, keepdims=True), 1e-12)
    c = candidates / np.maximum(np.linalg.norm(candidates, axis=1, keepdims=True), 1e-12)
    order = np.argsort(-(q @ c.T), axis=1, kind="stable")  # (n_queries, n_candidates), most similar first
    chosen: list[int] = []
    taken: set[int] = set()
    cursor = np.zeros(len(q), dtype=np.int64)
    turn = rng.permutation(len(q))
    while len(chosen) < n:
        for row in turn:
            while cursor[row] < order.shape[1] and int(order[row, cursor[row]]) in taken:
                cursor[row] += 1
            if cursor[row] < order.shape[1]:
                index = int(order[row, cursor[row]])
                taken.add(index)
                chosen.append(index)
                if len(chosen) == n:
                    break
    return chosen


class SamplingOptions(TypedDict, total=False):
    """The keyword arguments of :func:`sample_texts` that :class:`~xaimetrics.detection.Detection` passes on."""

    active_quantile: float
    inactive_quantile: float
    n_strata: int


def sample_texts(
    concepts: np.ndarray,
    concept: int,
    *,
    n_top: int = 10,
    n_quantile: int = 10,
    n_random: int = 10,
    n_hard: int = 10,
    embeddings: np.ndarray | None = None,
    active_quantile: float = 0.8,
    inactive_quantile: float = 0.5,
    n_strata: int = 5,
    seed: int = 0,
) -> DetectionSample:
    """Draw activating and non-activating texts for one concept (see the module docstring for the rule).

    Args:
        concepts: concept activations ``U`` of the pool, shape ``(n_texts, n_concepts)``.
        concept: the column of ``U`` to sample for.
        n_top, n_quantile: activating texts: the highest ones, then drawn across ``n_strata`` strata.
        n_random, n_hard: non-activating texts: uniform, then nearest neighbours of the activating ones.
        embeddings: the space of the hard negatives, shape ``(n_texts, d)`` (the classifier's activations
            ``A``); required when ``n_hard > 0``.
        active_quantile, inactive_quantile: activating above the first quantile of ``U[:, concept]`` (and
            above 0), non-activating at or below the second.
        n_strata: strata of the quantile draw.
        seed: seeds every draw.

    Raises:
        InvalidParameterError: bad arguments, or fewer activating / non-activating texts than requested.
    """
    U = np.asarray(concepts, dtype=np.float64)
    if U.ndim != 2 or not U.size or not np.isfinite(U).all():
        raise invalid("concepts", _OWNER, "a finite 2-D array (n_texts, n_concepts)", f"shape {U.shape}")
    if (
        isinstance(concept, bool)
        or not isinstance(concept, int | np.integer)
        or not 0 <= concept < U.shape[1]
    ):
        raise invalid("concept", _OWNER, f"a column index in [0, {U.shape[1] - 1}]", concept)
    counts = {
        name: check_positive_int(value, name, _OWNER, minimum=0)
        for name, value in (
            ("n_top", n_top),
            ("n_quantile", n_quantile),
            ("n_random", n_random),
            ("n_hard", n_hard),
        )
    }
    if counts["n_top"] + counts["n_quantile"] == 0 or counts["n_random"] + counts["n_hard"] == 0:
        raise invalid(
            "n_top", _OWNER, "counts giving at least one activating and one non-activating text", counts
        )
    check_in_range(active_quantile, "active_quantile", _OWNER, 0.0, 1.0)
    check_in_range(inactive_quantile, "inactive_quantile", _OWNER, 0.0, 1.0)
    if inactive_quantile > active_quantile:
        raise invalid(
            "inactive_quantile", _OWNER, f"≤ active_quantile ({active_quantile})", inactive_quantile
        )
    n_strata = check_positive_int(n_strata, "n_strata", _OWNER)
    rng = np.random.default_rng(check_seed(seed, "seed", _OWNER))
    u = U[:, int(concept)]
    high = max(float(np.quantile(u, active_quantile)), 0.0)
    low = float(np.quantile(u, inactive_quantile))
    active_pool = np.flatnonzero(u > high)
    active_pool = active_pool[np.argsort(-u[active_pool], kind="stable")]  # strongest first
    inactive_pool = np.flatnonzero(u <= low)
    n_active = counts["n_top"] + counts["n_quantile"]
    if len(active_pool) < n_active:
        raise invalid(
            "n_top",
            _OWNER,
            f"with n_quantile at most the {len(active_pool)} activating texts of concept {concept} "
            f"(activation > {high:.4g})",
            f"n_top={counts['n_top']}, n_quantile={counts['n_quantile']}",
            "Lower the counts or active_quantile, or pass a larger pool of texts.",
        )
    if len(inactive_pool) < counts["n_random"] + counts["n_hard"]:
        raise invalid(
            "n_random",
            _OWNER,
            f"with n_hard at most the {len(inactive_pool)} non-activating texts of concept {concept} "
            f"(activation ≤ {low:.4g})",
            f"n_random={counts['n_random']}, n_hard={counts['n_hard']}",
            "Lower the counts or raise inactive_quantile, or pass a larger pool of texts.",
        )
    top = active_pool[: counts["n_top"]]
    rest = active_pool[counts["n_top"] :]
    quantile: list[int] = []
    if counts["n_quantile"]:
        strata = [s for s in np.array_split(rest, min(n_strata, len(rest))) if len(s)]
        per = np.full(len(strata), counts["n_quantile"] // len(strata))
        per[rng.permutation(len(strata))[: counts["n_quantile"] % len(strata)]] += 1
        spill = 0
        for stratum, want in zip(strata, per, strict=True):
            take = min(int(want) + spill, len(stratum))
            spill = int(want) + spill - take
            quantile.extend(int(i) for i in rng.choice(stratum, size=take, replace=False))
        if spill:  # strata smaller than their share: fill from what is left
            left = np.setdiff1d(rest, quantile)
            quantile.extend(int(i) for i in rng.choice(left, size=spill, replace=False))
    activating = np.concatenate([top, np.asarray(quantile, dtype=np.int64)]).astype(np.int64)
    random = rng.choice(inactive_pool, size=counts["n_random"], replace=False).astype(np.int64)
    hard = np.zeros(0, dtype=np.int64)
    if counts["n_hard"]:
        if embeddings is None:
            raise invalid(
                "embeddings", _OWNER, "an array (n_texts, d) when n_hard > 0", None, "Pass A or n_hard=0."
            )
        E = np.asarray(embeddings, dtype=np.float64)
        if E.ndim != 2 or E.shape[0] != U.shape[0] or not np.isfinite(E).all():
            raise invalid("embeddings", _OWNER, f"a finite array with {U.shape[0]} rows", f"shape {E.shape}")
        candidates = np.setdiff1d(inactive_pool, random)
        hard = candidates[_cosine_nearest(E[activating], E[candidates], counts["n_hard"], rng)]
    indices = np.concatenate([activating, random, hard]).astype(np.int64)
    kinds = (
        ("top",) * len(top)
        + ("quantile",) * len(quantile)
        + ("random",) * len(random)
        + ("hard",) * len(hard)
    )
    active = np.array([1] * len(activating) + [0] * (len(random) + len(hard)), dtype=np.int64)
    return DetectionSample(int(concept), indices, active, kinds, u[indices], (high, low))


def sample_concepts(
    concepts: object,
    n_texts: int,
    concept_ids: Iterable[int],
    *,
    owner: str,
    embeddings: object | None = None,
    seed: int = 0,
    **options: Any,
) -> tuple[dict[int, DetectionSample], dict[int, str]]:
    """:func:`sample_texts` for each concept of ``concept_ids``: ``(samples, skipped with the reason)``.

    ``concepts`` is ``U`` (``(n_texts, n_concepts)``, array or tensor), checked here once for every scorer.
    """
    from xaimetrics._arrays import to_numpy

    U = np.asarray(to_numpy(concepts), dtype=np.float64)
    if U.ndim != 2 or U.shape[0] != n_texts:
        raise invalid("concepts", owner, f"an array with {n_texts} rows (one per input)", U.shape)
    E = None if embeddings is None else np.asarray(to_numpy(embeddings), dtype=np.float64)
    samples: dict[int, DetectionSample] = {}
    skipped: dict[int, str] = {}
    for concept in concept_ids:
        if not 0 <= int(concept) < U.shape[1]:
            skipped[int(concept)] = f"no column {concept} in concepts ({U.shape[1]} columns)"
            continue
        try:
            samples[int(concept)] = sample_texts(U, int(concept), embeddings=E, seed=seed, **options)
        except ValueError as error:
            skipped[int(concept)] = str(error)
    return samples, skipped
