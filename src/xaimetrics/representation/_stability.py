"""Stability across runs: agreement of clusterings (ARI / NMI) and of learned dictionaries.

- :func:`clustering_stability`: mean pairwise adjusted Rand index and normalised mutual information
  (scikit-learn, arithmetic-mean normalisation) of several labelings of the same texts, the document's
  "Stability (ARI/NMI)"; :func:`representation_stability` first clusters each run's representation with
  k-means (the document's ``KMeans(n_clusters=5, random_state=42)``).
- :func:`dictionary_stability`: how well the concept atoms (decoder rows) learned with different seeds
  match one to one. Each pair of runs is matched with the Hungarian algorithm on cosine similarity
  (``scipy.optimize.linear_sum_assignment``), sign-aware: by default an atom and its negation are the same
  direction (ICA, PCA, SVD fix signs arbitrarily), so the absolute cosine is matched; with
  ``sign_invariant=False`` (NMF, SAE: signs mean something) the signed cosine is. The score is reported
  beside the same statistic for random dictionaries of the same shape (the chance level of matching), and
  as the share of the gap between chance and 1 that the runs close.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
from scipy.optimize import linear_sum_assignment

from xaimetrics._validation import check_choice, check_positive_int, invalid
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
    """

    ari: float
    nmi: float
    ari_pairs: np.ndarray
    nmi_pairs: np.ndarray

    @property
    def bands(self) -> dict[str, str]:
        return {"ari": band("stability", self.ari), "nmi": band("stability", self.nmi)}

    def to_dict(self) -> dict[str, object]:
        return {"ari": self.ari, "nmi": self.nmi, "bands": self.bands, "n_runs": len(self.ari_pairs)}


def clustering_stability(labelings: Sequence[ArrayLike]) -> ClusteringStability:
    """Mean pairwise ARI and NMI of ``labelings`` (each an array of shape ``(n_samples,)``).

    Example:
        >>> result = clustering_stability([[0, 0, 1, 1, 2], [1, 1, 0, 0, 2], [0, 0, 1, 2, 2]])
        >>> round(result.ari, 4), round(result.nmi, 4)
        (0.5833, 0.8248)
    """
    from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

    runs = [_to_numpy(labels).ravel() for labels in labelings]
    if len(runs) < 2:
        raise invalid("labelings", "clustering_stability", "at least two runs", len(runs))
    if any(len(r) != len(runs[0]) for r in runs):
        raise invalid(
            "labelings",
            "clustering_stability",
            "runs labelling the same samples (same length)",
            [len(r) for r in runs],
        )
    if len(runs[0]) < 2:
        raise invalid("labelings", "clustering_stability", "at least two samples", len(runs[0]))
    n = len(runs)
    ari, nmi = np.eye(n), np.eye(n)
    for i, j in itertools.combinations(range(n), 2):
        ari[i, j] = ari[j, i] = adjusted_rand_score(runs[i], runs[j])
        nmi[i, j] = nmi[j, i] = normalized_mutual_info_score(runs[i], runs[j])
    upper = np.triu_indices(n, 1)
    return ClusteringStability(float(ari[upper].mean()), float(nmi[upper].mean()), ari, nmi)


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

    n_clusters = check_positive_int(n_clusters, "n_clusters", "representation_stability", minimum=2)
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


def _unit_rows(atoms: np.ndarray, owner: str) -> np.ndarray:
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


def match_atoms(
    first: ArrayLike, second: ArrayLike, *, sign_invariant: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """Match the atoms (rows) of two dictionaries one to one, maximising the total cosine similarity.

    Args:
        first, second: arrays of shape ``(n_atoms, n_features)`` (``n_atoms`` may differ: the smaller
            dictionary's atoms are all matched).
        sign_invariant: compare absolute cosines (an atom equals its negation).

    Returns:
        ``(pairs, similarity)``: array of shape ``(n_matched, 2)`` of matched row indices, and the cosine of
        each matched pair (absolute when ``sign_invariant``).

    Example:
        >>> a = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 1.0]])
        >>> b = np.array([[0.0, -2.0, -2.0], [3.0, 0.3, 0.0]])
        >>> pairs, similarity = match_atoms(a, b)
        >>> pairs.tolist(), similarity.round(3).tolist()
        ([[0, 1], [1, 0]], [0.995, 1.0])
    """
    a = _unit_rows(_to_numpy(first).astype(np.float64), "match_atoms")
    b = _unit_rows(_to_numpy(second).astype(np.float64), "match_atoms")
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


def dictionary_stability(
    dictionaries: Sequence[ArrayLike],
    *,
    sign_invariant: bool = True,
    baseline: Baseline = "permutation",
    n_baseline: int = 5,
    random_state: int = 0,
) -> DictionaryStability:
    """Sign-aware Hungarian matching of concept atoms across runs, against a random-initialisation baseline.

    Args:
        dictionaries: per run (seed), the decoder atoms, array of shape ``(n_atoms, n_features)`` (e.g. a
            fitted extractor's ``components_``).
        sign_invariant: match absolute cosines (default; right for ICA / PCA / SVD), or signed ones.
        baseline: random dictionaries for the chance level: ``"permutation"`` shuffles the entries of each
            atom (keeps each atom's values, so non-negative sparse atoms stay so) or ``"gaussian"`` draws
            isotropic normal atoms (the usual random initialisation).
        n_baseline: random pairs averaged for the baseline.
        random_state: seed of the baseline.

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
    baseline = check_choice(baseline, "baseline", "dictionary_stability", ("permutation", "gaussian"))
    n_baseline = check_positive_int(n_baseline, "n_baseline", "dictionary_stability")
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
        pairs, similarity = match_atoms(runs[i], runs[j], sign_invariant=sign_invariant)
        pair_scores[i, j] = pair_scores[j, i] = similarity.mean()
        matched.append(similarity)
        if i == 0:
            for (atom, _), value in zip(pairs, similarity, strict=True):
                per_atom[atom].append(value)
    rng = np.random.default_rng(random_state)
    chance = []
    for _ in range(n_baseline):
        a, b = (_random_like(runs[idx], baseline, rng) for idx in (0, 1))
        chance.append(match_atoms(a, b, sign_invariant=sign_invariant)[1].mean())
    atom_scores = np.array([np.mean(v) if v else np.nan for v in per_atom])
    return DictionaryStability(
        float(np.concatenate(matched).mean()),
        float(np.mean(chance)),
        pair_scores,
        atom_scores,
        sign_invariant,
        baseline,
    )
