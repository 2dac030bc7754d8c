"""Stability across runs: agreement of clusterings (ARI / NMI) and of learned dictionaries.

- :func:`clustering_stability`: mean pairwise adjusted Rand index and normalised mutual information
  (scikit-learn, arithmetic-mean normalisation by default) of several labelings of the same texts, the
  document's "Stability (ARI/NMI)", and beside them scikit-learn's other pair-counting and information
  scores (AMI, MI, homogeneity, completeness, V-measure, Fowlkes–Mallows), all called from scikit-learn;
  :func:`representation_stability` first clusters each run's representation with k-means (the document's
  ``KMeans(n_clusters=5, random_state=42)``).
- :func:`dictionary_stability`: how well the concept atoms (decoder rows) learned with different seeds
  match one to one. Each pair of runs is matched with the Hungarian algorithm on cosine similarity
  (``scipy.optimize.linear_sum_assignment``), sign-aware: by default an atom and its negation are the same
  direction (ICA, PCA, SVD fix signs arbitrarily), so the absolute cosine is matched; with
  ``sign_invariant=False`` (NMF, SAE: signs mean something) the signed cosine is. The score is reported
  beside the same statistic for random dictionaries of the same shape (the chance level of matching), and
  as the share of the gap between chance and 1 that the runs close. ``matching="max_cosine"`` replaces the
  one-to-one matching by Interpreto's ``COSINE_MAXIMUM``: each atom of the first run takes its most similar
  atom of the second (several atoms may pick the same one), as in Interpreto's ``Stability``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Literal

import numpy as np
from scipy.optimize import linear_sum_assignment

from xaimetrics._validation import Interval, Options, caller, invalid, validate_params
from xaimetrics.representation._bands import band

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = [
    "ClusteringStability",
    "DictionaryStability",
    "clustering_stability",
    "dictionary_stability",
    "match_atoms",
    "representation_stability",
]

Baseline = Literal["permutation", "gaussian"]
Matching = Literal["hungarian", "max_cosine"]
AverageMethod = Literal["arithmetic", "geometric", "min", "max"]
MATCHINGS: tuple[Matching, ...] = ("hungarian", "max_cosine")
AVERAGE_METHODS: tuple[AverageMethod, ...] = ("arithmetic", "geometric", "min", "max")
CLUSTERING_SCORES = (
    "ari",
    "nmi",
    "ami",
    "mi",
    "homogeneity",
    "completeness",
    "v_measure",
    "fowlkes_mallows",
)


def _to_numpy(values: object) -> np.ndarray:
    if hasattr(values, "detach"):
        values = values.detach().cpu().numpy()
    return np.asarray(values)


@dataclass(frozen=True)
class ClusteringStability:
    """Pairwise agreement of labelings.

    Attributes:
        ari: mean adjusted Rand index over the pairs of runs.
        nmi: mean normalised mutual information.
        ari_pairs, nmi_pairs: arrays of shape ``(n_runs, n_runs)``, 1 on the diagonal.
        scores: every score's mean over the pairs of runs (ordered pairs for the asymmetric homogeneity and
            completeness), keyed ``ari``, ``nmi``, ``ami``, ``mi``, ``homogeneity``, ``completeness``,
            ``v_measure``, ``fowlkes_mallows``.
        pairs: each score's array of shape ``(n_runs, n_runs)``; entry ``[i, j]`` scores run ``j`` against run
            ``i`` as the reference (``labels_true``); the diagonal is run ``i`` against itself (1, except MI:
            the entropy of run ``i`` in nats).
        average_method: the normalisation of NMI and AMI.
    """

    ari: float
    nmi: float
    ari_pairs: np.ndarray
    nmi_pairs: np.ndarray
    scores: dict[str, float] = field(default_factory=dict)
    pairs: dict[str, np.ndarray] = field(default_factory=dict)
    average_method: str = "arithmetic"

    @property
    def bands(self) -> dict[str, str]:
        return {"ari": band("stability", self.ari), "nmi": band("stability", self.nmi)}

    def to_dict(self) -> dict[str, object]:
        return {
            "ari": self.ari,
            "nmi": self.nmi,
            "bands": self.bands,
            "n_runs": len(self.ari_pairs),
            "scores": dict(self.scores),
            "average_method": self.average_method,
        }


def _scorers(average_method: str) -> dict[str, Callable[[np.ndarray, np.ndarray], float]]:
    """scikit-learn's scorers, called as ``scorer(labels_true, labels_pred)``."""
    from sklearn import metrics

    return {
        "ari": metrics.adjusted_rand_score,
        "nmi": partial(metrics.normalized_mutual_info_score, average_method=average_method),
        "ami": partial(metrics.adjusted_mutual_info_score, average_method=average_method),
        "mi": metrics.mutual_info_score,
        "homogeneity": metrics.homogeneity_score,
        "completeness": metrics.completeness_score,
        "v_measure": metrics.v_measure_score,
        "fowlkes_mallows": metrics.fowlkes_mallows_score,
    }


@validate_params({"average_method": Options(AVERAGE_METHODS)})
def clustering_stability(
    labelings: Sequence[ArrayLike], *, average_method: AverageMethod = "arithmetic"
) -> ClusteringStability:
    """Mean pairwise agreement of ``labelings`` (each an array of shape ``(n_samples,)``): ARI and NMI (the
    headline), and AMI, mutual information, homogeneity, completeness, V-measure and Fowlkes–Mallows, each
    computed by scikit-learn over every pair of runs.

    Args:
        labelings: one 1-D array of cluster labels per run, all labelling the same samples.
        average_method: normalisation of NMI and AMI (scikit-learn's ``average_method``): ``"arithmetic"``
            (default), ``"geometric"``, ``"min"`` or ``"max"``.

    Returns:
        :class:`ClusteringStability`. Higher is more stable for every score; MI is in nats, in
        ``[0, min entropy]``, ARI and AMI in ``[-1, 1]`` (0: chance), the others in ``[0, 1]``.

    Example:
        >>> result = clustering_stability([[0, 0, 1, 1, 2], [1, 1, 0, 0, 2], [0, 0, 1, 2, 2]])
        >>> round(result.ari, 4), round(result.nmi, 4), round(result.scores["fowlkes_mallows"], 4)
        (0.5833, 0.8248, 0.6667)
    """
    owner = caller()
    runs = [_to_numpy(labels) for labels in labelings]
    if len(runs) < 2:
        raise invalid("labelings", owner, "at least two runs", len(runs))
    for index, run in enumerate(runs):
        if run.ndim != 1:
            raise invalid(
                "labelings",
                owner,
                "one 1-D array of labels per run (one label per sample)",
                f"run {index} of shape {run.shape}",
                "Pass a list of label arrays; for soft assignments take argmax(axis=1) of each run first.",
            )
    if any(len(r) != len(runs[0]) for r in runs):
        raise invalid(
            "labelings",
            owner,
            "runs labelling the same samples (same length)",
            [len(r) for r in runs],
        )
    if len(runs[0]) < 2:
        raise invalid("labelings", owner, "at least two samples", len(runs[0]))
    n = len(runs)
    pairs: dict[str, np.ndarray] = {}
    scores: dict[str, float] = {}
    off_diagonal = ~np.eye(n, dtype=bool)
    for name, scorer in _scorers(average_method).items():
        values = np.empty((n, n))
        for i, j in itertools.product(range(n), repeat=2):
            if name in ("homogeneity", "completeness", "mi") or i <= j:
                values[i, j] = scorer(runs[i], runs[j])
            else:  # symmetric scores: computed once per pair
                values[i, j] = values[j, i]
        pairs[name] = values
        scores[name] = float(values[off_diagonal].mean())
    return ClusteringStability(
        scores["ari"], scores["nmi"], pairs["ari"], pairs["nmi"], scores, pairs, average_method
    )


@validate_params({"n_clusters": Interval(int, 2)})
def representation_stability(
    representations: Sequence[ArrayLike], *, n_clusters: int = 5, random_state: int = 42
) -> ClusteringStability:
    """Cluster each run's representation of the same texts with k-means, then :func:`clustering_stability`.

    Args:
        representations: per run, an array of shape ``(n_samples, n_dimensions)`` (dimensions may differ).
        n_clusters: clusters (the document uses 5).
        random_state: k-means seed (the document uses 42), the same for every run.

    Example:
        >>> rng = np.random.default_rng(0)
        >>> blobs = np.repeat(np.eye(3) * 10, 4, axis=0) + rng.normal(size=(12, 3))
        >>> representation_stability([blobs, -2 * blobs], n_clusters=3).ari
        1.0
    """
    from sklearn.cluster import KMeans

    labelings = []
    for run in representations:
        array = _to_numpy(run).astype(np.float64)
        if array.ndim != 2 or array.shape[0] < n_clusters:
            raise invalid(
                "representations",
                "representation_stability",
                f"2-D arrays with at least n_clusters={n_clusters} rows",
                f"shape {array.shape}",
            )
        labelings.append(
            KMeans(n_clusters=n_clusters, random_state=random_state, n_init=10).fit_predict(array)
        )
    return clustering_stability(labelings)


def _unit_rows(atoms: np.ndarray) -> np.ndarray:
    owner = caller()
    norms = np.linalg.norm(atoms, axis=1, keepdims=True)
    if (norms == 0).any():
        raise invalid(
            "dictionaries",
            owner,
            "atoms (rows) that are not all zero",
            f"{int((norms == 0).sum())} zero atom(s)",
            "Drop dead concepts before comparing.",
        )
    return atoms / norms


@validate_params({"matching": Options(MATCHINGS)})
def match_atoms(
    first: ArrayLike, second: ArrayLike, *, sign_invariant: bool = True, matching: Matching = "hungarian"
) -> tuple[np.ndarray, np.ndarray]:
    """Match the atoms (rows) of two dictionaries one to one, maximising the total cosine similarity
    (``matching="hungarian"``), or each atom of ``first`` with its most similar atom of ``second``
    (``matching="max_cosine"``, Interpreto's ``COSINE_MAXIMUM``; not one to one).

    Args:
        first, second: arrays of shape ``(n_atoms, n_features)`` (``n_atoms`` may differ: with the Hungarian
            matching the smaller dictionary's atoms are all matched; with the maximum every atom of ``first``).
        sign_invariant: compare absolute cosines (an atom equals its negation).
        matching: ``"hungarian"`` or ``"max_cosine"``.

    Returns:
        ``(pairs, similarity)``: array of shape ``(n_matched, 2)`` of matched row indices, and the cosine of
        each matched pair (absolute when ``sign_invariant``).

    Example:
        >>> a = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 1.0]])
        >>> b = np.array([[0.0, -2.0, -2.0], [3.0, 0.3, 0.0]])
        >>> pairs, similarity = match_atoms(a, b)
        >>> pairs.tolist(), similarity.round(3).tolist()
        ([[0, 1], [1, 0]], [0.995, 1.0])
        >>> c = np.array([[1.0, 1.0, 1.0], [0.0, 0.0, 1.0]])  # both atoms of a are closest to c[0]
        >>> pairs, similarity = match_atoms(a, c, matching="max_cosine")
        >>> pairs.tolist(), similarity.round(3).tolist()
        ([[0, 0], [1, 0]], [0.577, 0.816])
    """
    a = _unit_rows(_to_numpy(first).astype(np.float64))
    b = _unit_rows(_to_numpy(second).astype(np.float64))
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1]:
        raise invalid(
            "dictionaries",
            "match_atoms",
            "2-D arrays with the same number of features",
            f"shapes {a.shape} and {b.shape}",
        )
    cosine = a @ b.T
    if sign_invariant:
        cosine = np.abs(cosine)
    if matching == "max_cosine":
        rows, cols = np.arange(len(a)), cosine.argmax(axis=1)
    else:
        rows, cols = linear_sum_assignment(cosine, maximize=True)
    return np.stack([rows, cols], axis=1), cosine[rows, cols]


@dataclass(frozen=True)
class DictionaryStability:
    """Stability of learned dictionaries across seeds.

    Attributes:
        score: mean matched cosine over all pairs of runs and all matched atoms.
        baseline: the same statistic for random dictionaries of the same shapes (chance level).
        pair_scores: array of shape ``(n_runs, n_runs)``, mean matched cosine of each pair (1 on the diagonal).
        atom_scores: array of shape ``(n_atoms,)``: for each atom of the first run, its mean matched cosine
            in the other runs (which concepts are reproducible).
        sign_invariant: whether absolute cosines were matched.
        baseline_kind: how random dictionaries were drawn.
    """

    score: float
    baseline: float
    pair_scores: np.ndarray
    atom_scores: np.ndarray
    sign_invariant: bool
    baseline_kind: str

    @property
    def excess(self) -> float:
        """``(score - baseline) / (1 - baseline)``: the share of the gap between chance and identical
        dictionaries that the runs close (0: no better than random, 1: identical up to order)."""
        return float((self.score - self.baseline) / (1.0 - self.baseline)) if self.baseline < 1 else math.nan

    def to_dict(self) -> dict[str, object]:
        return {
            "score": self.score,
            "baseline": self.baseline,
            "excess": self.excess,
            "atom_scores": self.atom_scores.tolist(),
            "sign_invariant": self.sign_invariant,
            "baseline_kind": self.baseline_kind,
            "n_runs": len(self.pair_scores),
        }


def _random_like(atoms: np.ndarray, kind: str, rng: np.random.Generator) -> np.ndarray:
    if kind == "gaussian":
        return rng.standard_normal(atoms.shape)
    return rng.permuted(atoms, axis=1)  # each atom's own values in a random order (keeps sign and sparsity)


@validate_params(
    {
        "baseline": Options(("permutation", "gaussian")),
        "matching": Options(MATCHINGS),
        "n_baseline": Interval(int, 1),
    }
)
def dictionary_stability(
    dictionaries: Sequence[ArrayLike],
    *,
    sign_invariant: bool = True,
    baseline: Baseline = "permutation",
    n_baseline: int = 5,
    random_state: int = 0,
    matching: Matching = "hungarian",
) -> DictionaryStability:
    """Sign-aware Hungarian matching of concept atoms across runs, against a random-initialisation baseline.

    With ``sign_invariant=False`` the score equals Interpreto's ``Stability`` (Fel et al. 2023) with
    ``COSINE_HUNGARIAN`` (``matching="hungarian"``) or ``COSINE_MAXIMUM`` (``matching="max_cosine"``), for
    two or more dictionaries.

    Args:
        dictionaries: per run (seed), the decoder atoms, array of shape ``(n_atoms, n_features)`` (e.g. a
            fitted extractor's ``components_``).
        sign_invariant: match absolute cosines (default; right for ICA / PCA / SVD), or signed ones.
        baseline: random dictionaries for the chance level: ``"permutation"`` shuffles the entries of each
            atom (keeps each atom's values, so non-negative sparse atoms stay so) or ``"gaussian"`` draws
            isotropic normal atoms (the usual random initialisation).
        n_baseline: random pairs averaged for the baseline.
        random_state: seed of the baseline.
        matching: ``"hungarian"`` (one to one, default) or ``"max_cosine"`` (each atom of the earlier run
            with its most similar atom of the later one; higher than the Hungarian score, as atoms may share
            a match).

    Returns:
        :class:`DictionaryStability`.

    Example:
        >>> rng = np.random.default_rng(0)
        >>> atoms = rng.normal(size=(4, 30))
        >>> runs = [atoms, -atoms[[2, 0, 3, 1]] + 0.05 * rng.normal(size=(4, 30))]
        >>> result = dictionary_stability(runs)
        >>> round(result.score, 3), result.baseline < 0.5, result.excess > 0.99
        (0.998, True, True)
    """
    runs = [_to_numpy(d).astype(np.float64) for d in dictionaries]
    if len(runs) < 2:
        raise invalid("dictionaries", "dictionary_stability", "at least two runs", len(runs))
    for run in runs:
        if run.ndim != 2 or run.shape[1] != runs[0].shape[1]:
            raise invalid(
                "dictionaries",
                "dictionary_stability",
                "2-D arrays (n_atoms, n_features) with the same n_features",
                f"shape {run.shape}",
            )
    n = len(runs)
    pair_scores = np.eye(n)
    per_atom: list[list[float]] = [[] for _ in range(runs[0].shape[0])]
    matched = []
    for i, j in itertools.combinations(range(n), 2):
        pairs, similarity = match_atoms(runs[i], runs[j], sign_invariant=sign_invariant, matching=matching)
        pair_scores[i, j] = pair_scores[j, i] = similarity.mean()
        matched.append(similarity)
        if i == 0:
            for (atom, _), value in zip(pairs, similarity, strict=True):
                per_atom[atom].append(value)
    rng = np.random.default_rng(random_state)
    chance = []
    for _ in range(n_baseline):
        a, b = (_random_like(runs[idx], baseline, rng) for idx in (0, 1))
        chance.append(match_atoms(a, b, sign_invariant=sign_invariant, matching=matching)[1].mean())
    atom_scores = np.array([np.mean(v) if v else np.nan for v in per_atom])
    return DictionaryStability(
        float(np.concatenate(matched).mean()),
        float(np.mean(chance)),
        pair_scores,
        atom_scores,
        sign_invariant,
        baseline,
    )
