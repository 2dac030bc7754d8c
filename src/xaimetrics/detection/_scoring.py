"""Scores of one concept's detection: AUROC of ``P(Yes)`` with an interval, or balanced accuracy of text answers.

- **AUROC** ``= P(p_active > p_inactive) + ½ P(tie)``, the Mann–Whitney ``U`` over ``n₁ n₀`` (Delphi's
  and SAEBench's detection score). 0.5 is chance, 1 perfect, < 0.5 a description read backwards.
- **Interval**: Hanley & McNeil's (1982) variance of the AUROC, on the logit scale, around the
  continuity-adjusted AUROC ``(U + ½)/(n₁n₀ + 1)`` (so that an AUROC of 1 still has a width), mapped back
  (it stays inside (0, 1)). Chosen by a coverage simulation (issue #34; activating ~ Φ(N(μ, 1)), others
  ~ Φ(N(0, 1)), 300 sets each, probabilities rounded to 0.1 for ties): at AUROC 0.90 / 0.95 with 10 + 10
  tied texts the stratified BCa bootstrap used before missed 11 % / 17 % (nominal 5 %), DeLong's variance on
  the logit scale 7.7 % / 6.3 %, this interval 2.0 % / 4.0 % (20 + 20: 1.3 % / 1.7 %; conservative). The
  bootstrap under-covers near 1 because its resamples cannot exceed the observed ranks.
- **p-value**: one-sided exact Mann–Whitney test of "activating texts get a higher P(Yes)"
  (``scipy.stats.mannwhitneyu``, ``alternative="greater"``; asymptotic with ties).
- **Balanced accuracy** ``= (TPR + TNR) / 2`` of the Yes/No answers, for simulators without
  log-probabilities; an unreadable answer counts as wrong.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from xaimetrics._validation import invalid

__all__ = ["DetectionScore", "auroc", "auroc_test", "balanced_accuracy", "parse_yes", "score"]

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


def _interval(pos: np.ndarray, neg: np.ndarray, confidence: float) -> tuple[float, float]:
    """Hanley–McNeil interval on the logit scale around the continuity-adjusted AUROC (module docstring)."""
    from scipy import stats

    n1, n0 = len(pos), len(neg)
    point = float(_auc(pos, neg))
    adjusted = (point * n1 * n0 + 0.5) / (n1 * n0 + 1)
    q1, q2 = adjusted / (2 - adjusted), 2 * adjusted**2 / (1 + adjusted)
    variance = (adjusted * (1 - adjusted) + (n1 - 1) * (q1 - adjusted**2) + (n0 - 1) * (q2 - adjusted**2)) / (
        n1 * n0
    )
    logit = math.log(adjusted / (1 - adjusted))
    half = (
        float(stats.norm.ppf(0.5 + confidence / 2))
        * math.sqrt(max(variance, 0.0))
        / (adjusted * (1 - adjusted))
    )
    low, high = 1 / (1 + math.exp(-(logit - half))), 1 / (1 + math.exp(-(logit + half)))
    return min(low, point), max(high, point)


def auroc_test(
    active: Sequence[int] | np.ndarray, values: Sequence[float] | np.ndarray, confidence: float, owner: str
) -> tuple[float, float, float, float]:
    """``(AUROC, low, high, one-sided Mann–Whitney p)`` of ``values`` separating ``active == 1`` from 0."""
    from scipy import stats

    pos, neg = _groups(active, values, owner)
    value = float(_auc(pos, neg))
    low, high = _interval(pos, neg, confidence)
    p = float(stats.mannwhitneyu(pos, neg, alternative="greater").pvalue) if np.ptp(np.r_[pos, neg]) else 1.0
    return value, low, high, p


def score(
    active: Sequence[int] | np.ndarray,
    p_yes: Sequence[float | None] | None = None,
    yes: Sequence[bool | None] | None = None,
    *,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> DetectionScore:
    """Score one concept: AUROC of ``p_yes`` (with an interval and a p-value) when every text has one,
    else balanced accuracy of the ``yes`` answers.

    Args:
        active: 1 for activating texts, 0 for non-activating ones.
        p_yes: ``P(Yes)`` per text (``None`` where it could not be read).
        yes: the text answers (``True`` Yes, ``False`` No, ``None`` unreadable); by default ``p_yes > 0.5``.
        confidence: the interval's level (Hanley–McNeil on the logit scale, see the module docstring).
        n_resamples, seed: unused since the interval is no longer a bootstrap (kept for callers).

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
        value, low, high, p = auroc_test(
            active, np.asarray(probabilities, dtype=np.float64), confidence, "score"
        )
        return DetectionScore("auroc", value, low, high, p, value, bacc, n_active, n_inactive, unanswered)
    nan = float("nan")
    return DetectionScore(
        "balanced_accuracy", bacc, nan, nan, nan, nan, bacc, n_active, n_inactive, unanswered
    )
