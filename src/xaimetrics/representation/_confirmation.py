"""Confirmation measures of word pairs and topics (Röder, Both & Hinneburg 2015), gensim's coherence family.

A coherence measure is a segmentation of a topic's words, a probability estimate from a reference corpus, a
confirmation measure per segment and a mean (Röder et al. 2015). The four measures of gensim 4's
``CoherenceModel``:

=========  =================  ======================  ================================  ==========
measure    segmentation       probabilities           confirmation                      window
=========  =================  ======================  ================================  ==========
c_npmi     every ordered pair  sliding windows          NPMI (normalised log ratio)       10
c_uci      every ordered pair  sliding windows          PMI (log ratio)                   10
u_mass     each word w_i with  documents                log P(w_i | w_j), j before i      documents
           the words before
c_v        each word with the  sliding windows          cosine of NPMI context vectors    110
           whole topic
=========  =================  ======================  ================================  ==========

Direct confirmation of a pair ``(W', W*)`` from window (or document) probabilities, with ε = 1e-12 as in
Röder et al. and gensim:

    PMI  = log((p(W', W*) + ε) / (p(W') p(W*)))          log-conditional = log((p(W', W*) + ε) / p(W*))
    NPMI = PMI / -log(p(W', W*) + ε)   (gensim mode; the default mode uses the limits, see :mod:`._coherence`)

Indirect confirmation (``c_v``): each word ``w`` has the context vector ``v(w)_j = m(w, w_j)^γ`` over the topic's
words ``w_j``, the topic the sum ``v(W) = Σ_i v(w_i)``; the segment's score is ``cos(v(w), v(W))``.

Everything is vectorised over topics: the topics are padded to a common length, the pair counts of every
topic are gathered from the corpus index at once (:func:`count_windows`), and each measure is a masked
reduction over the ``(n_topics, k, k)`` array.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np

from xaimetrics._validation import check_positive_int, invalid

if TYPE_CHECKING:
    from xaimetrics.representation._cooccurrence import WindowCounts

__all__ = ["COHERENCE_MEASURES", "DEFAULT_WINDOWS", "DIRECT_MEASURES"]

CoherenceMeasure = Literal["c_npmi", "c_uci", "u_mass", "c_v"]
DirectMeasure = Literal["npmi", "pmi", "log_conditional"]
UnknownWords = Literal["drop", "raise"]
COHERENCE_MEASURES: tuple[CoherenceMeasure, ...] = ("c_npmi", "c_uci", "u_mass", "c_v")
DIRECT_MEASURES: tuple[DirectMeasure, ...] = ("npmi", "pmi", "log_conditional")
UNKNOWN_WORDS: tuple[UnknownWords, ...] = ("drop", "raise")
DEFAULT_WINDOWS: dict[str, int | None] = {"c_npmi": 10, "c_uci": 10, "u_mass": None, "c_v": 110}
EPSILON = 1e-12


def direct_confirmation(
    joint: np.ndarray, first: np.ndarray, second: np.ndarray, n_windows: int, measure: str, mode: str
) -> np.ndarray:
    """Elementwise confirmation of ``(W', W*)`` from window counts: ``first`` counts W', ``second`` W*.

    A pair with an absent word (zero marginal) is NaN in ``"xaimetrics"`` mode."""
    joint, first, second = (np.asarray(x, dtype=np.float64) for x in (joint, first, second))
    n = float(n_windows)
    with np.errstate(divide="ignore", invalid="ignore"):
        if measure == "npmi":
            if mode == "gensim":  # the same operations, in the same order, as gensim's log_ratio_measure
                ratio = np.log(((joint / n) + EPSILON) / ((first / n) * (second / n)))
                return ratio / (-np.log((joint / n) + EPSILON))
            p_joint = joint / n
            score = np.log(p_joint / ((first / n) * (second / n))) / -np.log(p_joint)
            score = np.where(joint == 0, -1.0, score)
            score = np.where(joint == n, 1.0, score)
        elif measure == "pmi":
            score = np.log(((joint / n) + EPSILON) / ((first / n) * (second / n)))
        else:  # log_conditional, gensim's log_conditional_probability
            score = np.log(((joint / n) + EPSILON) / (second / n))
    if mode == "gensim":
        return score
    return np.where((first == 0) | (second == 0), np.nan, score)


def check_window(window_size: object, measure: str, owner: str) -> int | None:
    """The window of ``measure`` (its gensim default when ``window_size`` is None; ``u_mass``: documents)."""
    if measure == "u_mass":
        if window_size is not None:
            raise invalid(
                "window_size",
                owner,
                "None for u_mass (it counts documents, not windows)",
                window_size,
                "Leave window_size out, or use c_uci / c_npmi for windowed counts.",
            )
        return None
    if window_size is None:
        return DEFAULT_WINDOWS[measure]
    return check_positive_int(window_size, "window_size", owner)


def _padded(topics: Sequence[Sequence[str]], counts: WindowCounts) -> tuple[np.ndarray, np.ndarray]:
    """Indices into ``counts.words`` of each topic's known words (in topic order), padded with 0, and the
    mask of real entries: arrays of shape ``(n_topics, k_max)``."""
    index = {w: i for i, w in enumerate(counts.words)}
    marginal = counts.marginals
    kept = [[index[w] for w in topic if marginal[index[w]] > 0] for topic in topics]
    k_max = max(max((len(t) for t in kept), default=0), 1)
    ids = np.zeros((len(kept), k_max), dtype=np.int64)
    mask = np.zeros((len(kept), k_max), dtype=bool)
    for row, t in enumerate(kept):
        ids[row, : len(t)] = t
        mask[row, : len(t)] = True
    return ids, mask


def _masked_mean(values: np.ndarray, mask: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    total = np.where(mask, values, 0.0).sum(axis=axes)
    count = mask.sum(axis=axes)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def topic_scores(
    topics: Sequence[Sequence[str]],
    counts: WindowCounts,
    measure: str,
    mode: str,
    *,
    gamma: float = 1.0,
    direct: str = "npmi",
) -> tuple[np.ndarray, np.ndarray]:
    """Coherence of each topic under ``measure`` and the number of word pairs behind it.

    Words absent from the corpus are dropped from their topic first (gensim's rule); in ``"xaimetrics"``
    mode a topic with fewer than two known words scores NaN. For ``c_v`` ``direct`` and ``gamma`` choose the
    context vectors' confirmation measure and exponent (gensim: NPMI, 1)."""
    ids, mask = _padded(topics, counts)
    n_topics, k = ids.shape
    marginal = counts.marginals
    rows = np.broadcast_to(ids[:, :, None], (n_topics, k, k))
    cols = np.broadcast_to(ids[:, None, :], (n_topics, k, k))
    joint = counts.pair_counts(rows.ravel(), cols.ravel()).reshape(n_topics, k, k)
    pairs = mask[:, :, None] & mask[:, None, :]
    n_known = mask.sum(axis=1)
    n_pairs = n_known * (n_known - 1) // 2
    if measure == "c_v":
        context = direct_confirmation(joint, marginal[rows], marginal[cols], counts.n_windows, direct, mode)
        context = np.where(pairs, np.power(context, gamma), 0.0)  # v(w_i)_j, zero outside the topic
        whole = context.sum(axis=1)  # v(W)_j = Σ_i v(w_i)_j
        with np.errstate(divide="ignore", invalid="ignore"):
            cosine = (context @ whole[:, :, None])[:, :, 0] / (
                np.linalg.norm(context, axis=2) * np.linalg.norm(whole, axis=1)[:, None]
            )
        scores = _masked_mean(cosine, mask, (1,))
    else:
        kind = {"c_npmi": "npmi", "c_uci": "pmi", "u_mass": "log_conditional"}[measure]
        values = direct_confirmation(joint, marginal[rows], marginal[cols], counts.n_windows, kind, mode)
        i, j = np.indices((k, k))
        segments = (j < i) if measure == "u_mass" else (i != j)  # s_one_pre / s_one_one
        scores = _masked_mean(values, pairs & segments, (1, 2))
    if mode != "gensim":
        scores = np.where(n_known >= 2, scores, np.nan)
    return scores, n_pairs
