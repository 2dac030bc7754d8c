"""Interpretability of representations, the Atlas design (``xaimetrics.representation``).

Add a metric as one more row below (see ``docs/metrics.md``).
"""

from __future__ import annotations

from math import inf

from xaimetrics._metric_registry import Entry, family_entries

__all__ = ["ENTRIES"]

# one metric a row: name, direction, range, data, category, reference, callables, description
# fmt: off
ENTRIES: tuple[Entry, ...] = family_entries("representation", [
    ("topic_coherence", "higher", (-1, 1), ("words", "text"), "coherence", "gensim",
     ("topic_coherence",),
     "mean pairwise NPMI of each topic's words over a reference corpus"),
    ("npmi", "higher", (-1, 1), ("words", "text"), "coherence", "gensim",
     ("npmi_matrix",),
     "normalised pointwise mutual information of every pair of words"),
    ("dim_coherence", "higher", (-1, 1), ("activations", "words"), "coherence", "gensim",
     ("dim_coherence",),
     "NPMI coherence of the top-k words of each dimension"),
    ("clustering_stability", "higher", (-1, 1), ("labelings",), "stability", "scikit-learn",
     ("clustering_stability",),
     "mean pairwise ARI and NMI of clusterings of the same samples"),
    ("representation_stability", "higher", (-1, 1), ("activations",), "stability", "scikit-learn",
     ("representation_stability",),
     "clustering stability of k-means on each run's representation"),
    ("dictionary_stability", "higher", (0, 1), ("concepts",), "stability", "interpreto",
     ("dictionary_stability",),
     "Hungarian-matched cosine of concept atoms across runs, beside a random baseline"),
    ("dimension_purity", "higher", (0, 1), ("activations",), "purity", "",
     ("dimension_purity",),
     "share of a dimension's correlation with labelled factors taken by its main factor"),
    ("counterfactual_consistency", "higher", (-1, 1), ("activations", "text"), "causality", "",
     ("counterfactual_consistency", "concept_counterfactual_consistency"),
     "cosine between the measured and the expected change when one dimension is shifted"),
    ("krippendorff_alpha", "higher", (-1, 1), ("ratings",), "agreement", "krippendorff",
     ("krippendorff_alpha",),
     "inter-rater reliability of human ratings"),
    ("composite_score", "higher", (0, 1), ("activations",), "composite", "",
     ("composite_score",),
     "weighted combination of coherence, consistency, stability, purity and α"),
    ("confirmation_matrix", "higher", (-inf, 1), ("words", "text"), "coherence", "gensim",
     ("confirmation_matrix",),
     "NPMI, PMI or log-conditional confirmation of every pair of a topic's words over a reference corpus"),
])
# fmt: on
