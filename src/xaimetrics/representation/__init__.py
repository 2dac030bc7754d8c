"""Interpretability of representation dimensions, after the Atlas interpretability-metrics document.

Works on the dimensions of any text encoder: concept spaces (NMF, ICA, SAE concepts), sentence embeddings,
or a small semantic vector model.

- Dim-Coherence@k: :func:`dim_coherence` (NPMI of each dimension's top words over a :class:`ReferenceCorpus`,
  vectorised; :func:`topic_coherence` computes gensim's ``c_npmi``, ``c_uci``, ``u_mass`` and ``c_v``, equal to
  gensim with ``mode="gensim"``; :func:`confirmation_matrix` the NPMI / PMI / log-conditional of word pairs).
- Counterfactual consistency: :func:`counterfactual_consistency` (generic) and
  :func:`concept_counterfactual_consistency` (concept space, with the classifier head as scorer).
- Stability: :func:`clustering_stability`, :func:`representation_stability` (ARI / NMI) and
  :func:`dictionary_stability` (Hungarian-matched concept atoms against a random baseline).
- Purity: :func:`dimension_purity`. Human ratings: :func:`krippendorff_alpha`, :func:`analyze_ratings`.
- :func:`evaluate_interpretability` runs them all; :func:`composite_score`, :func:`check_regression`, :class:`InterpretabilityReport` (Markdown / HTML / JSON);
  its ``metrics()`` go to MLflow or W&B through :func:`xaimetrics.tracking.log_run`; bands and targets in
  :data:`BANDS`, :data:`DEFAULT_TARGETS`.

Example:
    >>> from xaimetrics.representation import ReferenceCorpus, topic_coherence
    >>> corpus = ReferenceCorpus.from_texts(["good fun film", "good fun", "dull plot", "dull slow plot"])
    >>> topic_coherence([["good", "fun"], ["good", "plot"]], corpus).round(3).tolist()
    [1.0, -1.0]
"""

from xaimetrics._words import WordTokenizer
from xaimetrics.representation._agreement import (
    AlphaResult,
    HumanEvaluation,
    analyze_ratings,
    krippendorff_alpha,
)
from xaimetrics.representation._bands import BANDS, DEFAULT_TARGETS, Target, TargetCheck, band, check_targets
from xaimetrics.representation._coherence import (
    CoherenceResult,
    confirmation_matrix,
    dim_coherence,
    encode_words,
    npmi_matrix,
    top_words,
    topic_coherence,
)
from xaimetrics.representation._composite import DEFAULT_WEIGHTS, CompositeScore, composite_score
from xaimetrics.representation._cooccurrence import WindowCounts, count_windows
from xaimetrics.representation._corpus import ReferenceCorpus, tokenize
from xaimetrics.representation._counterfactual import (
    ConsistencyResult,
    concept_counterfactual_consistency,
    counterfactual_consistency,
)
from xaimetrics.representation._evaluate import evaluate_interpretability
from xaimetrics.representation._purity import PurityResult, dimension_purity
from xaimetrics.representation._regression import (
    DEFAULT_DIRECTIONS,
    Regression,
    RegressionReport,
    check_regression,
    flatten_metrics,
    load_metrics,
)
from xaimetrics.representation._report import InterpretabilityReport
from xaimetrics.representation._stability import (
    ClusteringStability,
    DictionaryStability,
    clustering_stability,
    dictionary_stability,
    match_atoms,
    representation_stability,
)

__all__ = [
    "BANDS",
    "DEFAULT_DIRECTIONS",
    "DEFAULT_TARGETS",
    "DEFAULT_WEIGHTS",
    "AlphaResult",
    "ClusteringStability",
    "CoherenceResult",
    "CompositeScore",
    "ConsistencyResult",
    "DictionaryStability",
    "HumanEvaluation",
    "InterpretabilityReport",
    "PurityResult",
    "ReferenceCorpus",
    "Regression",
    "RegressionReport",
    "Target",
    "TargetCheck",
    "WindowCounts",
    "WordTokenizer",
    "analyze_ratings",
    "band",
    "check_regression",
    "check_targets",
    "clustering_stability",
    "composite_score",
    "concept_counterfactual_consistency",
    "confirmation_matrix",
    "count_windows",
    "counterfactual_consistency",
    "dictionary_stability",
    "dim_coherence",
    "dimension_purity",
    "encode_words",
    "evaluate_interpretability",
    "flatten_metrics",
    "krippendorff_alpha",
    "load_metrics",
    "match_atoms",
    "npmi_matrix",
    "representation_stability",
    "tokenize",
    "top_words",
    "topic_coherence",
]
