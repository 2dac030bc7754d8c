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
- :func:`evaluate_interpretability` runs them all into an :class:`InterpretabilityReport` (Markdown / HTML /
  JSON, bands and targets); :func:`composite_score` weighs them into one
  number, :func:`check_regression` compares with a baseline; the report's ``metrics()`` go to MLflow or W&B through
  :func:`xaimetrics.tracking.log_run`.

Example:
    >>> from xaimetrics.representation import ReferenceCorpus, topic_coherence
    >>> corpus = ReferenceCorpus.from_texts(["good fun film", "good fun", "dull plot", "dull slow plot"])
    >>> topic_coherence([["good", "fun"], ["good", "plot"]], corpus).round(3).tolist()
    [1.0, -1.0]
"""

from xaimetrics.representation._agreement import AlphaResult, analyze_ratings, krippendorff_alpha
from xaimetrics.representation._coherence import (
    confirmation_matrix,
    dim_coherence,
    encode_words,
    npmi_matrix,
    topic_coherence,
)
from xaimetrics.representation._composite import composite_score
from xaimetrics.representation._corpus import ReferenceCorpus
from xaimetrics.representation._counterfactual import (
    concept_counterfactual_consistency,
    counterfactual_consistency,
)
from xaimetrics.representation._evaluate import evaluate_interpretability
from xaimetrics.representation._purity import dimension_purity
from xaimetrics.representation._regression import check_regression
from xaimetrics.representation._report import InterpretabilityReport
from xaimetrics.representation._stability import (
    clustering_stability,
    dictionary_stability,
    representation_stability,
)

__all__ = [
    "AlphaResult",
    "InterpretabilityReport",
    "ReferenceCorpus",
    "analyze_ratings",
    "check_regression",
    "clustering_stability",
    "composite_score",
    "concept_counterfactual_consistency",
    "confirmation_matrix",
    "counterfactual_consistency",
    "dictionary_stability",
    "dim_coherence",
    "dimension_purity",
    "encode_words",
    "evaluate_interpretability",
    "krippendorff_alpha",
    "npmi_matrix",
    "representation_stability",
    "topic_coherence",
]
