"""One call that runs every metric the inputs allow and returns the :class:`InterpretabilityReport`."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from xaimetrics._validation import check_texts, invalid
from xaimetrics.representation._agreement import analyze_ratings
from xaimetrics.representation._bands import Target
from xaimetrics.representation._coherence import dim_coherence, encode_words
from xaimetrics.representation._corpus import ReferenceCorpus
from xaimetrics.representation._counterfactual import ConsistencyResult
from xaimetrics.representation._purity import dimension_purity
from xaimetrics.representation._regression import check_regression, check_threshold
from xaimetrics.representation._report import InterpretabilityReport
from xaimetrics.representation._stability import dictionary_stability, representation_stability

if TYPE_CHECKING:
    import pandas as pd
    from numpy.typing import ArrayLike

__all__ = ["evaluate_interpretability"]


def _numpy(values: object) -> np.ndarray:
    if hasattr(values, "detach"):
        values = values.detach().cpu().numpy()
    return np.asarray(values, dtype=np.float64)


def evaluate_interpretability(
    encoder: Callable[[list[str]], ArrayLike],
    inputs: Sequence[str],
    corpus: ReferenceCorpus,
    *,
    targets: ArrayLike | None = None,
    vocabulary: Sequence[str] | None = None,
    k: int = 20,
    window_size: int = 10,
    coherence_mode: str = "xaimetrics",
    poles: bool = False,
    other_runs: Sequence[Callable[[list[str]], ArrayLike] | ArrayLike] = (),
    n_clusters: int = 5,
    dictionaries: Sequence[ArrayLike] = (),
    sign_invariant: bool = True,
    consistency: ConsistencyResult | None = None,
    ratings: ArrayLike | pd.DataFrame | None = None,
    level: str = "ordinal",
    baseline: Mapping[str, object] | str | os.PathLike[str] | None = None,
    threshold: float = 0.1,
    target_version: str = "v0.2",
    version_targets: Mapping[str, Sequence[Target]] | None = None,
    dimension_names: Sequence[str] | None = None,
    batch_size: int = 256,
    model: str = "model",
    version: str = "unversioned",
    dataset: str = "n/a",
) -> InterpretabilityReport:
    """Evaluate the dimensions of ``encoder`` with every metric its inputs allow.

    Args:
        encoder: texts → array ``(n, n_dimensions)``; encodes the evaluation texts and, one word per text,
            the vocabulary (Dim-Coherence@k).
        inputs: evaluation texts.
        corpus: reference corpus for NPMI.
        targets: labels of ``inputs`` (class ids, at least 3 classes, or an ``(n, n_factors)`` array of
            factors) for dimension purity.
        vocabulary: candidate top words (default ``corpus.frequent_words()``).
        k, window_size, coherence_mode, poles: Dim-Coherence@k settings (:func:`dim_coherence`).
        other_runs: encoders from other seeds / training runs, or their representations of ``inputs``
            (arrays ``(n, d)``): clustering stability (ARI / NMI).
        n_clusters: k-means clusters for the stability.
        dictionaries: decoder atoms from several seeds: dictionary stability.
        sign_invariant: compare atoms up to sign (:func:`dictionary_stability`).
        consistency: a counterfactual consistency result to include.
        ratings: human ratings for :func:`analyze_ratings`; level: their level of measurement.
        baseline: baseline metrics or file for :func:`check_regression`; threshold: tolerated drop.
        target_version, version_targets: targets for the report.
        dimension_names: labels of the dimensions.
        batch_size: words per encoder call for the vocabulary.
        model, version, dataset: report metadata.

    Returns:
        :class:`InterpretabilityReport` (its ``regression`` is set when ``baseline`` was given).

    Example:
        >>> corpus = ReferenceCorpus.from_texts(["good fun film", "good fun", "dull slow plot", "dull plot"])
        >>> def encoder(texts):  # dimension 0 counts praise, dimension 1 counts complaints
        ...     return [[sum(w in t for w in ("good", "fun")), sum(w in t for w in ("dull", "slow"))] for t in texts]
        >>> report = evaluate_interpretability(
        ...     encoder, ["good fun", "dull plot", "fun", "so slow"], corpus, targets=[1, 0, 1, 0],
        ...     vocabulary=corpus.frequent_words(min_count=1), k=2, window_size=3,
        ... )
        >>> report.coherence.top_words, report.coherence.scores.tolist(), report.composite.score
        ([['fun', 'good'], ['dull', 'slow']], [1.0, 0.5], 0.875)
        >>> report.purity is None  # two classes make a single factor: purity would be 1 by definition
        True
    """
    owner = "evaluate_interpretability"
    texts = check_texts(inputs, "inputs", owner)
    check_threshold(threshold, "threshold", owner)  # before the work: NaN would disable the regression gate
    if vocabulary is None:
        vocabulary = corpus.frequent_words()
    if len(vocabulary) < k:
        raise invalid(
            "vocabulary",
            owner,
            f"at least k={k} words",
            len(vocabulary),
            "Lower min_count or k, or use a larger reference corpus.",
        )
    representation = _numpy(encoder(texts))
    if representation.ndim != 2 or representation.shape[0] != len(texts):
        raise invalid(
            "encoder",
            owner,
            f"an array of shape ({len(texts)}, n_dimensions)",
            f"shape {representation.shape}",
        )
    word_vectors = encode_words(encoder, vocabulary, batch_size=batch_size)
    coherence = dim_coherence(
        word_vectors,
        vocabulary,
        corpus,
        k=k,
        window_size=window_size,
        poles=poles,
        mode=coherence_mode,
        dimension_names=dimension_names,
    )
    stability = None
    if other_runs:
        runs = [representation] + [_numpy(run(texts) if callable(run) else run) for run in other_runs]
        stability = representation_stability(runs, n_clusters=n_clusters)
    dictionary = (
        dictionary_stability(dictionaries, sign_invariant=sign_invariant) if len(dictionaries) > 1 else None
    )
    purity, notes = None, []
    if targets is not None and np.ndim(targets) == 1 and np.unique(np.asarray(targets)).size < 3:
        notes.append(
            "Purity was not measured: it needs several labelled factors, and fewer than three classes give "
            "one (purity would be 1 by definition)"
        )
    elif targets is not None:
        purity = dimension_purity(
            representation, targets, dimension_names=dimension_names, constant_factors="drop"
        )
    human = analyze_ratings(ratings, level=level) if ratings is not None else None  # type: ignore[arg-type]
    report = InterpretabilityReport(
        model=model,
        version=version,
        dataset=dataset,
        target_version=target_version,
        targets=version_targets,
        coherence=coherence,
        consistency=consistency,
        stability=stability,
        dictionary=dictionary,
        purity=purity,
        human=human,
        notes=notes,
    )
    if baseline is not None:
        report.regression = check_regression(report.metrics(), baseline, threshold=threshold)
    return report
