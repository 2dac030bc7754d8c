"""Scores of one concept's detection: AUROC of ``P(Yes)`` with an interval, or balanced accuracy of text answers.

- **AUROC** ``= P(p_active > p_inactive) + ½ P(tie)``, the Mann–Whitney ``U`` over ``n₁ n₀`` (Delphi's
  and SAEBench's detection score). 0.5 is chance, 1 perfect, < 0.5 a description read backwards.
- **Interval**: BCa bootstrap (``scipy.stats.bootstrap``) resampling the activating and the non-activating
  texts *separately* (a stratified bootstrap: every resample keeps both groups and their sizes). With 10
  + 10 texts a percentile bootstrap under-covers; BCa corrects bias and skew, and degenerate resamples (all
  scores tied, e.g. an AUROC of 1) give the point value. DeLong's normal interval is the classical
  alternative; it leaves [0, 1] near the bounds with small groups, where BCa cannot.
- **p-value**: one-sided exact Mann–Whitney test of "activating texts get a higher P(Yes)"
  (``scipy.stats.mannwhitneyu``, ``alternative="greater"``; asymptotic with ties).
- **Balanced accuracy** ``= (TPR + TNR) / 2`` of the Yes/No answers, for simulators without
  log-probabilities; an unreadable answer counts as wrong.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from xaimetrics._validation import invalid

__all__ = ["DetectionScore", "auroc", "balanced_accuracy", "parse_yes", "score"]

_ANSWER = re.compile(r"Sample_0\s*:\s*\**\s*(yes|no)\b", re.IGNORECASE)
_BARE = re.compile(r"\b(yes|no)\b", re.IGNORECASE)


def _groups(active: Sequence[int] | np.ndarray, values: Sequence[float] | np.ndarray, owner: str):
    active = np.asarray(active)
    values = np.asarray(values, dtype=np.float64)
    if active.shape != values.shape or active.ndim != 1:
        raise invalid(
            "active", owner, f"a 1-d array of the length of the scores ({values.shape})", active.shape
        )
    if not np.isin(active, (0, 1)).all():
        raise invalid("active", owner, "0/1 labels", np.unique(active).tolist())
    pos, neg = values[active == 1], values[active == 0]
    if not len(pos) or not len(neg):
        raise invalid("active", owner, "both activating (1) and non-activating (0) texts", active.tolist())
    if not np.isfinite(values).all():
        raise invalid("p_yes", owner, "finite probabilities", values.tolist())
    return pos, neg


def _auc(pos: np.ndarray, neg: np.ndarray, axis: int = -1) -> np.ndarray:
    """Mann–Whitney AUROC along ``axis`` (vectorised for ``scipy.stats.bootstrap``)."""
    diff = pos[..., :, None] - neg[..., None, :]
    return (diff > 0).mean(axis=(-2, -1)) + 0.5 * (diff == 0).mean(axis=(-2, -1))


def auroc(active: Sequence[int] | np.ndarray, p_yes: Sequence[float] | np.ndarray) -> float:
    """AUROC of ``p_yes`` for separating activating (``active == 1``) from non-activating texts.

    Example:
        >>> auroc([1, 1, 0, 0], [0.9, 0.4, 0.4, 0.1])  # one tie between groups counts one half
        0.875
    """
    pos, neg = _groups(active, p_yes, "auroc")
    return float(_auc(pos, neg))


def parse_yes(text: str) -> bool | None:
    """The Yes/No of an answer text (``Sample_0: Yes``, or a bare first yes/no word); ``None``: neither.

    Example:
        >>> parse_yes("Sample_0: Yes"), parse_yes("no."), parse_yes("maybe")
        (True, False, None)
    """
    match = _ANSWER.search(text) or _BARE.search(text)
    return None if match is None else match.group(1).lower() == "yes"


def balanced_accuracy(active: Sequence[int] | np.ndarray, yes: Sequence[bool | None]) -> float:
    """``(TPR + TNR) / 2`` of Yes/No answers (``None``: unreadable, counted wrong).

    Example:
        >>> balanced_accuracy([1, 1, 0, 0], [True, None, False, True])
        0.5
    """
    active = np.asarray(active)
    if len(yes) != len(active):
        raise invalid("yes", "balanced_accuracy", f"{len(active)} answers", len(yes))
    right = np.array([y is not None and bool(y) == bool(a) for a, y in zip(active, yes, strict=True)])
    if not (active == 1).any() or not (active == 0).any():
        raise invalid(
            "active", "balanced_accuracy", "both activating and non-activating texts", active.tolist()
        )
    return float((right[active == 1].mean() + right[active == 0].mean()) / 2)


@dataclass(frozen=True)
class DetectionScore:
    """One concept's detection score over one set of texts.

    ``metric`` is ``"auroc"`` when ``P(Yes)`` was read for every text, else ``"balanced_accuracy"``;
    ``value`` is that metric, ``low``/``high`` its interval (NaN for balanced accuracy),
    ``p_value`` the one-sided Mann–Whitney p of "activating texts score higher".
    """

    metric: str
    value: float
    low: float
    high: float
    p_value: float
    auroc: float
    balanced_accuracy: float
    n_active: int
    n_inactive: int
    n_unanswered: int

    def as_dict(self) -> dict[str, float | int | str]:
        return asdict(self)


def _interval(
    pos: np.ndarray, neg: np.ndarray, confidence: float, n_resamples: int, seed: int
) -> tuple[float, float]:
    from scipy import stats

    point = float(_auc(pos, neg))
    if np.ptp(np.concatenate([pos, neg])) == 0 or len(pos) < 2 or len(neg) < 2:
        return point, point
    rng = np.random.default_rng(seed)
    for method in ("BCa", "percentile"):
        try:
            with warnings.catch_warnings():  # a degenerate bootstrap distribution gives NaN: handled below
                warnings.simplefilter("ignore")
                result = stats.bootstrap(
                    (pos, neg), _auc, vectorized=True, axis=-1, confidence_level=confidence,
                    n_resamples=n_resamples, method=method, rng=rng,
                )  # fmt: skip
        except (ValueError, FloatingPointError):  # pragma: no cover - scipy refuses a degenerate sample
            continue
        low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
        if math.isfinite(low) and math.isfinite(high):
            return min(low, point), max(high, point)
    return point, point


def score(
    active: Sequence[int] | np.ndarray,
    p_yes: Sequence[float | None] | None = None,
    yes: Sequence[bool | None] | None = None,
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> DetectionScore:
    """Score one concept: AUROC of ``p_yes`` (with a BCa interval and a p-value) when every text has one,
    else balanced accuracy of the ``yes`` answers.

    Args:
        active: 1 for activating texts, 0 for non-activating ones.
        p_yes: ``P(Yes)`` per text (``None`` where it could not be read).
        yes: the text answers (``True`` Yes, ``False`` No, ``None`` unreadable); by default ``p_yes > 0.5``.
        confidence, n_resamples, seed: the bootstrap interval's level, resamples and seed.

    Example:
        >>> s = score([1, 1, 1, 0, 0, 0], [0.9, 0.8, 0.3, 0.4, 0.2, 0.1])
        >>> s.metric, round(s.value, 4), round(s.balanced_accuracy, 4), round(s.p_value, 3)
        ('auroc', 0.8889, 0.8333, 0.1)
    """
    active = np.asarray(active)
    n = len(active)
    probabilities = None if p_yes is None else list(p_yes)
    if probabilities is not None and len(probabilities) != n:
        raise invalid("p_yes", "score", f"{n} values (one per text)", len(probabilities))
    if yes is None:
        if probabilities is None:
            raise invalid("p_yes", "score", "probabilities or text answers (yes)", None)
        yes = [None if p is None else p > 0.5 for p in probabilities]
    unanswered = sum(y is None for y in yes)
    bacc = balanced_accuracy(active, yes)
    n_active, n_inactive = int((active == 1).sum()), int((active == 0).sum())
    if probabilities is not None and all(p is not None for p in probabilities):
        from scipy import stats

        pos, neg = _groups(active, np.asarray(probabilities, dtype=np.float64), "score")
        value = float(_auc(pos, neg))
        low, high = _interval(pos, neg, confidence, n_resamples, seed)
        p = (
            float(stats.mannwhitneyu(pos, neg, alternative="greater").pvalue)
            if np.ptp(np.r_[pos, neg])
            else 1.0
        )
        return DetectionScore("auroc", value, low, high, p, value, bacc, n_active, n_inactive, unanswered)
    nan = float("nan")
    return DetectionScore(
        "balanced_accuracy", bacc, nan, nan, nan, nan, bacc, n_active, n_inactive, unanswered
    )
