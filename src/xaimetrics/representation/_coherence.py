"""Dim-Coherence@k: NPMI of the top-k words of each dimension over a reference corpus.

For each dimension, the ``k`` vocabulary words whose encoding has the largest absolute value (or the largest
/ smallest value for the positive / negative pole) are its top words; the dimension's coherence is the mean
NPMI over the pairs of its top words (Bouma 2009; Röder et al. 2015, boolean sliding windows of 10 tokens):

    NPMI(a, b) = log(p(a, b) / (p(a) p(b))) / -log p(a, b),   p(·) = windows containing · / all windows.

Zero-count policy (``mode="xaimetrics"``, the default):

- ``p(a, b) = 0`` while ``p(a), p(b) > 0``: NPMI = -1, the limit of the formula (never co-occur).
- ``p(a) = 0`` or ``p(b) = 0`` (a word absent from the corpus): the pair is undefined; it is left out of the
  mean and the word is listed in ``missing_words``; a dimension with no defined pair scores NaN.
- ``p(a, b) = 1`` (both words in every window): NPMI = 1, the limit (the formula is 0/0).

``mode="gensim"`` reproduces gensim 4's ``CoherenceModel(coherence="c_npmi", processes=1)``: its counting
(see :mod:`._cooccurrence`) and its ε = 1e-12 inside both logarithms, so a pair that never co-occurs
scores ``log(ε / (p(a) p(b))) / -log ε``, not -1.

Words absent from the corpus (``unknown_words="drop"``, the default, gensim's rule): they are dropped from
their topic before scoring; gensim raises only when no word of a topic is known, and so does ``mode="gensim"``
(the default mode scores such a topic NaN). ``unknown_words="raise"`` refuses any absent word.

:func:`topic_coherence` also computes gensim's other measures (``c_uci``, ``u_mass``, ``c_v``) on the same
corpus index, and :func:`confirmation_matrix` the direct confirmation measures (NPMI, PMI, log-conditional)
of every word pair; see :mod:`._confirmation`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

import numpy as np

from xaimetrics._validation import Interval, Kind, Options, caller, invalid, validate_params
from xaimetrics._words import POLES, Pole, encode_words, top_word_indices
from xaimetrics.representation._bands import DimensionScores, none_if_nan
from xaimetrics.representation._confirmation import (
    COHERENCE_MEASURES,
    DIRECT_MEASURES,
    UNKNOWN_WORDS,
    CoherenceMeasure,
    DirectMeasure,
    UnknownWords,
    check_window,
    direct_confirmation,
    topic_scores,
)
from xaimetrics.representation._cooccurrence import COUNTING_MODES, WindowCounts, count_windows
from xaimetrics.representation._corpus import ReferenceCorpus

if TYPE_CHECKING:
    import pandas as pd
    from numpy.typing import ArrayLike

    from xaimetrics.representation._cooccurrence import CountingMode

__all__ = [
    "CoherenceResult",
    "confirmation_matrix",
    "dim_coherence",
    "encode_words",
    "npmi_matrix",
    "top_words",
    "topic_coherence",
]


def _as_numpy_2d(values: object, name: str) -> np.ndarray:
    owner = caller()
    if hasattr(values, "detach"):
        values = values.detach().cpu().numpy()
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 2:
        raise invalid(name, owner, "a 2-D array", f"shape {array.shape}")
    return array


@validate_params({"k": Interval(int, 1), "pole": Options(POLES)})
def top_words(
    word_vectors: ArrayLike, vocabulary: Sequence[str], k: int = 20, *, pole: Pole = "abs"
) -> list[list[str]]:
    """The ``k`` words that most activate each dimension, strongest first (ties: vocabulary order); the
    ranking step of the library's one top-words pipeline (:mod:`xaimetrics._words`, shared with TopWords).

    Args:
        word_vectors: array of shape ``(n_words, n_dimensions)``, the encoding of each vocabulary word.
        vocabulary: the ``n_words`` words.
        k: words per dimension.
        pole: ``"abs"`` (largest absolute value, the document's rule), ``"positive"`` (largest values) or
            ``"negative"`` (smallest values).

    Returns:
        One list of ``k`` words per dimension.

    Example:
        >>> vectors = [[0.9, -0.1], [-0.8, 0.3], [0.1, 0.7], [0.2, -0.9]]
        >>> top_words(vectors, ["good", "bad", "car", "tree"], 2)
        [['good', 'bad'], ['tree', 'car']]
        >>> top_words(vectors, ["good", "bad", "car", "tree"], 2, pole="negative")
        [['bad', 'car'], ['tree', 'good']]
    """
    values = _as_numpy_2d(word_vectors, "word_vectors")
    vocabulary = list(vocabulary)
    if values.shape[0] != len(vocabulary):
        raise invalid(
            "vocabulary",
            "top_words",
            f"one word per row of word_vectors ({values.shape[0]})",
            len(vocabulary),
        )
    if k > len(vocabulary):
        raise invalid(
            "k",
            "top_words",
            f"≤ the vocabulary size ({len(vocabulary)})",
            k,
            "Use a smaller k or a larger vocabulary.",
        )
    if not np.isfinite(values).all():
        raise invalid("word_vectors", "top_words", "finite values", "NaN or infinite entries")
    order = top_word_indices(values, k, pole)
    return [[vocabulary[i] for i in order[:, d]] for d in range(values.shape[1])]


def _checked_counts(
    corpus: ReferenceCorpus,
    words: Sequence[str],
    window_size: int | None,
    mode: str,
    *,
    topics: Sequence[Sequence[str]] = (),
    unknown_words: str = "drop",
) -> WindowCounts:
    """The counts of ``words`` (corpus, mode and options already checked by the public caller's rules)."""
    owner = caller()
    counting = cast("CountingMode", mode)
    absent = {w for w, i in zip(words, corpus.ids(words), strict=True) if i < 0}
    if absent and unknown_words == "raise":
        raise invalid(
            "topics",
            owner,
            "words that all occur in the corpus with unknown_words='raise'",
            f"absent words {sorted(absent)[:10]}",
            "Use unknown_words='drop' (gensim's rule) to drop them from their topics.",
        )
    if counting == "gensim":
        for d, topic in enumerate(topics):
            if all(w in absent for w in topic):
                raise invalid(
                    "topics",
                    owner,
                    "topics with at least one word of the corpus in gensim mode",
                    f"no known word in topic {d} {list(topic)[:10]}",
                    "gensim drops unknown words and raises only on such a topic; remove it, or use "
                    "mode='xaimetrics', which scores it NaN.",
                )
    return count_windows(corpus, words, window_size=window_size, mode=counting)


#: Rules shared by the public functions of this module (scikit-learn's ``_parameter_constraints`` idea).
_CORPUS = Kind(
    ReferenceCorpus,
    "a ReferenceCorpus",
    fix="Build one with ReferenceCorpus.from_texts(texts) or ReferenceCorpus.from_dataset(name).",
)
_MODE = Options(COUNTING_MODES)
_WINDOW = Interval(int, 1)


@validate_params(
    {
        "corpus": _CORPUS,
        "measure": Options(DIRECT_MEASURES),
        "window_size": (Interval(int, 1, text="an integer ≥ 1 (or None: documents)"), None),
        "mode": _MODE,
    }
)
def confirmation_matrix(
    words: Sequence[str],
    corpus: ReferenceCorpus,
    *,
    measure: DirectMeasure = "npmi",
    window_size: int | None = 10,
    mode: str = "xaimetrics",
) -> np.ndarray:
    """Direct confirmation ``m(W', W*)`` of every pair of ``words`` over ``corpus`` (Röder et al. 2015).

    Args:
        words: distinct words; row ``i`` is ``W' = words[i]``, column ``j`` is ``W* = words[j]``.
        corpus: the reference corpus.
        measure: ``"npmi"`` (gensim's ``nlr``), ``"pmi"`` (``c_uci``'s log ratio,
            ``log((p(W', W*) + ε) / (p(W') p(W*)))``) or ``"log_conditional"`` (``u_mass``'s
            ``log((p(W', W*) + ε) / p(W*))``, not symmetric); ε = 1e-12.
        window_size: sliding-window size; ``None`` counts documents (``u_mass``'s estimate).
        mode: ``"xaimetrics"`` or ``"gensim"`` (counting and NPMI zero policy, see the module docstring).

    Returns:
        Array of shape ``(len(words), len(words))``; NaN on the rows and columns of words absent from the
        corpus in ``"xaimetrics"`` mode.

    Example:
        >>> corpus = ReferenceCorpus.from_tokens([["a", "b"], ["a", "c"], ["b", "d"]])
        >>> confirmation_matrix(["a", "b"], corpus, measure="log_conditional", window_size=None).round(3).tolist()
        [[0.0, -0.693], [-0.693, 0.0]]
    """
    words = list(words)
    counts = _checked_counts(corpus, words, window_size, mode)
    marginal = counts.marginals
    return direct_confirmation(
        counts.joint.toarray(), marginal[:, None], marginal[None, :], counts.n_windows, measure, mode
    )


@validate_params({"corpus": _CORPUS, "window_size": _WINDOW, "mode": _MODE})
def npmi_matrix(
    words: Sequence[str], corpus: ReferenceCorpus, *, window_size: int = 10, mode: str = "xaimetrics"
) -> np.ndarray:
    """NPMI of every pair of ``words`` over the sliding windows of ``corpus``.

    Returns:
        Array of shape ``(len(words), len(words))``; the diagonal is NPMI(w, w) (1 for a present word).

    Example:
        >>> corpus = ReferenceCorpus.from_tokens([["a", "b"], ["a", "c"], ["b", "d"]])
        >>> npmi_matrix(["a", "b", "c"], corpus, window_size=2).round(3).tolist()
        [[1.0, -0.262, 0.369], [-0.262, 1.0, -1.0], [0.369, -1.0, 1.0]]
    """
    counts = _checked_counts(corpus, list(words), window_size, mode)
    marginal = counts.marginals
    return direct_confirmation(
        counts.joint.toarray(), marginal[:, None], marginal[None, :], counts.n_windows, "npmi", mode
    )


def _validate_topics(topics: Sequence[Sequence[str]]) -> list[list[str]]:
    owner = caller()
    if isinstance(topics, str) or not len(topics):
        raise invalid("topics", owner, "a non-empty list of word lists", topics)
    checked = []
    for d, topic in enumerate(topics):
        if isinstance(topic, str):
            raise invalid("topics", owner, "a list of word lists", f"a string at position {d}")
        topic = list(topic)
        if len(topic) < 2:
            raise invalid(
                "topics",
                owner,
                "at least 2 words per topic (NPMI needs pairs)",
                f"{len(topic)} at position {d}",
            )
        if len(set(topic)) != len(topic):
            raise invalid("topics", owner, "distinct words inside each topic", f"duplicates at position {d}")
        checked.append(topic)
    return checked


@validate_params(
    {
        "corpus": _CORPUS,
        "measure": Options(COHERENCE_MEASURES),
        "mode": _MODE,
        "unknown_words": Options(UNKNOWN_WORDS),
        "gamma": Interval(float, 0, closed="neither"),
        "context_measure": Options(DIRECT_MEASURES),
    }
)
def topic_coherence(
    topics: Sequence[Sequence[str]],
    corpus: ReferenceCorpus,
    *,
    measure: CoherenceMeasure = "c_npmi",
    window_size: int | None = None,
    mode: str = "xaimetrics",
    unknown_words: UnknownWords = "drop",
    gamma: float = 1.0,
    context_measure: DirectMeasure = "npmi",
) -> np.ndarray:
    """Coherence of each word list (topic) over ``corpus``: gensim's ``c_npmi`` (default), ``c_uci``,
    ``u_mass`` or ``c_v`` (Röder et al. 2015; definitions in :mod:`._confirmation`).

    With ``mode="gensim"`` this equals gensim 4's ``CoherenceModel(topics=topics, texts=corpus.documents(),
    dictionary=Dictionary(corpus.documents()), coherence=measure, window_size=window_size, processes=1,
    topn=max topic length).get_coherence_per_topic()``, unknown words included (dropped from their topic).

    Args:
        topics: word lists, at least two distinct words each.
        corpus: the reference corpus.
        measure: ``"c_npmi"`` (mean NPMI of the word pairs, in [-1, 1]), ``"c_uci"`` (mean PMI),
            ``"u_mass"`` (mean log-conditional probability of each word given each earlier word, ≤ 0 up to
            ε), ``"c_v"`` (mean cosine of each word's NPMI context vector with the topic's, in [-1, 1]).
            Higher is more coherent for all four.
        window_size: sliding-window size; default the measure's gensim default (``c_npmi`` / ``c_uci`` 10,
            ``c_v`` 110); ``u_mass`` counts documents and takes no window.
        mode: ``"xaimetrics"`` or ``"gensim"`` (counting convention and NPMI's zero policy).
        unknown_words: ``"drop"`` (gensim's rule: words absent from the corpus leave their topic; a topic
            left with fewer than two words is NaN, or an error in gensim mode when none is known) or
            ``"raise"``.
        gamma: exponent of the context vectors' entries (``c_v`` only; gensim uses 1).
        context_measure: confirmation measure of the context vectors (``c_v`` only): ``"npmi"`` (gensim) or
            ``"pmi"``.

    Returns:
        Array of shape ``(len(topics),)``.

    Example:
        >>> corpus = ReferenceCorpus.from_tokens([["a", "b", "x"], ["a", "c"], ["b", "d", "c"]])
        >>> topic_coherence([["a", "b"], ["c", "d"]], corpus, window_size=2).round(4).tolist()
        [-0.1133, 0.1386]
        >>> topic_coherence([["a", "b", "zzz"], ["c", "d"]], corpus, measure="u_mass").round(4).tolist()
        [-0.6931, -0.6931]
    """
    owner = caller()
    topics = _validate_topics(topics)
    window = check_window(window_size, measure, owner)
    if context_measure == "log_conditional":
        raise invalid(
            "context_measure",
            owner,
            "a symmetric measure, 'npmi' or 'pmi'",
            context_measure,
            "Context vectors need a symmetric confirmation measure.",
        )
    words = list(dict.fromkeys(w for topic in topics for w in topic))
    counts = _checked_counts(corpus, words, window, mode, topics=topics, unknown_words=unknown_words)
    return topic_scores(topics, counts, measure, counts.mode, gamma=float(gamma), direct=context_measure)[0]


@dataclass
class CoherenceResult(DimensionScores):
    """Dim-Coherence@k of every dimension.

    Attributes:
        scores: array of shape ``(n_dimensions,)``, mean NPMI of the top words (by absolute value).
        top_words: per dimension, its ``k`` top words.
        n_pairs: array of shape ``(n_dimensions,)``, defined word pairs behind each score.
        missing_words: per dimension, top words absent from the reference corpus.
        pole_scores: ``{"positive": scores, "negative": scores}`` when poles were requested; NaN for a
            dimension with fewer than ``k`` words of that sign.
        pole_words: the top words of each pole.
    """

    scores: np.ndarray
    top_words: list[list[str]]
    n_pairs: np.ndarray
    missing_words: list[list[str]]
    k: int
    window_size: int
    mode: str
    n_windows: int
    corpus_name: str
    dimension_names: list[str]
    pole_scores: dict[str, np.ndarray] = field(default_factory=dict)
    pole_words: dict[str, list[list[str]]] = field(default_factory=dict)

    _band_metric = "coherence"

    def to_frame(self) -> pd.DataFrame:
        """A pandas DataFrame, one row per dimension."""
        import pandas as pd

        frame = pd.DataFrame(
            {
                "dimension": self.dimension_names,
                "coherence": self.scores,
                "band": self.bands,
                "n_pairs": self.n_pairs,
                "top_words": [" ".join(words) for words in self.top_words],
            }
        )
        for pole, scores in self.pole_scores.items():
            frame[f"coherence_{pole}"] = scores
        return frame

    def to_dict(self) -> dict[str, object]:
        """JSON-ready summary (NaN becomes ``None``)."""
        return {
            **self._score_summary(),
            "top_words": self.top_words,
            "n_pairs": self.n_pairs.tolist(),
            "missing_words": self.missing_words,
            "k": self.k,
            "window_size": self.window_size,
            "mode": self.mode,
            "n_windows": self.n_windows,
            "corpus": self.corpus_name,
            "dimension_names": self.dimension_names,
            "pole_scores": {p: [none_if_nan(s) for s in v] for p, v in self.pole_scores.items()},
            "pole_words": self.pole_words,
        }


@validate_params({"corpus": _CORPUS, "k": Interval(int, 2), "window_size": _WINDOW, "mode": _MODE})
def dim_coherence(
    word_vectors: ArrayLike,
    vocabulary: Sequence[str],
    corpus: ReferenceCorpus,
    *,
    k: int = 20,
    window_size: int = 10,
    poles: bool = False,
    mode: str = "xaimetrics",
    dimension_names: Sequence[str] | None = None,
) -> CoherenceResult:
    """Dim-Coherence@k of every dimension of an encoding of ``vocabulary``.

    Args:
        word_vectors: array of shape ``(n_words, n_dimensions)`` (e.g. :func:`encode_words` output, or the
            concept activations of each word).
        vocabulary: the ``n_words`` words (e.g. ``corpus.frequent_words()``).
        corpus: the reference corpus the NPMI is counted in.
        k: top words per dimension (the document's default is 20).
        window_size: sliding-window size (10).
        poles: also score the positive and negative poles separately (for signed dimensions).
        mode: ``"xaimetrics"`` or ``"gensim"`` (see the module docstring for the zero-count policy).
        dimension_names: labels for reports (default ``"0"``, ``"1"``, ...).

    Returns:
        :class:`CoherenceResult`.

    Example:
        >>> corpus = ReferenceCorpus.from_texts(["good great fun", "good fun", "bad awful", "awful bad boring"])
        >>> vectors = [[0.9, 0.0], [0.8, 0.1], [0.7, 0.0], [0.0, 0.9], [0.1, 0.8], [0.0, 0.7]]
        >>> words = ["good", "great", "fun", "bad", "awful", "boring"]
        >>> result = dim_coherence(vectors, words, corpus, k=3, window_size=3)
        >>> result.top_words, result.scores.round(3).tolist(), result.bands
        ([['good', 'great', 'fun'], ['bad', 'awful', 'boring']], [0.667, 0.667], ['Excellent', 'Excellent'])
    """
    values = _as_numpy_2d(word_vectors, "word_vectors")
    n_dimensions = values.shape[1]
    if dimension_names is None:
        dimension_names = [str(d) for d in range(n_dimensions)]
    elif len(dimension_names) != n_dimensions:
        raise invalid("dimension_names", caller(), f"{n_dimensions} names", len(dimension_names))
    topics = {"abs": top_words(values, vocabulary, k)}
    signed_ok: dict[str, np.ndarray] = {}
    if poles:
        for pole, sign in (("positive", 1.0), ("negative", -1.0)):
            topics[pole] = top_words(values, vocabulary, k, pole=pole)  # type: ignore[arg-type]
            signed_ok[pole] = ((sign * values) > 0).sum(axis=0) >= k
    all_words = list(dict.fromkeys(w for lists in topics.values() for topic in lists for w in topic))
    counts = _checked_counts(corpus, all_words, window_size, mode, topics=topics["abs"])
    scores, n_pairs = topic_scores(topics["abs"], counts, "c_npmi", mode)
    absent = {w for w, i in zip(all_words, corpus.ids(all_words), strict=True) if i < 0}
    pole_scores = {}
    for pole, ok in signed_ok.items():
        pole_scores[pole] = np.where(ok, topic_scores(topics[pole], counts, "c_npmi", mode)[0], np.nan)
    return CoherenceResult(
        scores=scores,
        top_words=topics["abs"],
        n_pairs=n_pairs,
        missing_words=[[w for w in topic if w in absent] for topic in topics["abs"]],
        k=k,
        window_size=window_size,
        mode=mode,
        n_windows=counts.n_windows,
        corpus_name=corpus.name,
        dimension_names=list(dimension_names),
        pole_scores=pole_scores,
        pole_words={p: topics[p] for p in signed_ok},
    )
