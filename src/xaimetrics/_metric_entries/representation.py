"""Interpretability of representations, the Atlas design (``xaimetrics.representation``).

Add a metric as one more ``Entry`` below (see ``docs/metrics.md``).
"""

from __future__ import annotations

from math import inf

from xaimetrics._metric_registry import Entry, MetricInfo

__all__ = ["ENTRIES"]

ENTRIES: tuple[Entry, ...] = (
    Entry(
        "topic_coherence",
        MetricInfo(
            family="representation",
            direction="higher",
            range=(-1, 1),
            data=("words", "text"),
            category="coherence",
            reference="gensim",
            callables=("xaimetrics.representation.topic_coherence",),
        ),
        description="mean pairwise NPMI of each topic's words over a reference corpus",
    ),
    Entry(
        "npmi",
        MetricInfo(
            family="representation",
            direction="higher",
            range=(-1, 1),
            data=("words", "text"),
            category="coherence",
            reference="gensim",
            callables=("xaimetrics.representation.npmi_matrix",),
        ),
        description="normalised pointwise mutual information of every pair of words",
    ),
    Entry(
        "dim_coherence",
        MetricInfo(
            family="representation",
            direction="higher",
            range=(-1, 1),
            data=("activations", "words"),
            category="coherence",
            reference="gensim",
            callables=("xaimetrics.representation.dim_coherence",),
        ),
        description="NPMI coherence of the top-k words of each dimension",
    ),
    Entry(
        "clustering_stability",
        MetricInfo(
            family="representation",
            direction="higher",
            range=(-1, 1),
            data=("labelings",),
            category="stability",
            reference="scikit-learn",
            callables=("xaimetrics.representation.clustering_stability",),
        ),
        description="mean pairwise ARI and NMI of clusterings of the same samples",
    ),
    Entry(
        "representation_stability",
        MetricInfo(
            family="representation",
            direction="higher",
            range=(-1, 1),
            data=("activations",),
            category="stability",
            reference="scikit-learn",
            callables=("xaimetrics.representation.representation_stability",),
        ),
        description="clustering stability of k-means on each run's representation",
    ),
    Entry(
        "dictionary_stability",
        MetricInfo(
            family="representation",
            direction="higher",
            range=(0, 1),
            data=("concepts",),
            category="stability",
            reference="interpreto",
            callables=("xaimetrics.representation.dictionary_stability",),
        ),
        description="Hungarian-matched cosine of concept atoms across runs, beside a random baseline",
    ),
    Entry(
        "dimension_purity",
        MetricInfo(
            family="representation",
            direction="higher",
            range=(0, 1),
            data=("activations",),
            category="purity",
            reference="",
            callables=("xaimetrics.representation.dimension_purity",),
        ),
        description="share of a dimension's correlation with labelled factors taken by its main factor",
    ),
    Entry(
        "counterfactual_consistency",
        MetricInfo(
            family="representation",
            direction="higher",
            range=(-1, 1),
            data=("activations", "text"),
            category="causality",
            reference="",
            callables=(
                "xaimetrics.representation.counterfactual_consistency",
                "xaimetrics.representation.concept_counterfactual_consistency",
            ),
        ),
        description="cosine between the measured and the expected change when one dimension is shifted",
    ),
    Entry(
        "krippendorff_alpha",
        MetricInfo(
            family="representation",
            direction="higher",
            range=(-1, 1),
            data=("ratings",),
            category="agreement",
            reference="krippendorff",
            callables=("xaimetrics.representation.krippendorff_alpha",),
        ),
        description="inter-rater reliability of human ratings",
    ),
    Entry(
        "composite_score",
        MetricInfo(
            family="representation",
            direction="higher",
            range=(0, 1),
            data=("activations",),
            category="composite",
            reference="",
            callables=("xaimetrics.representation.composite_score",),
        ),
        description="weighted combination of coherence, consistency, stability, purity and α",
    ),
    Entry(
        "confirmation_matrix",
        MetricInfo(
            family="representation",
            direction="higher",
            range=(-inf, 1),
            data=("words", "text"),
            category="coherence",
            reference="gensim",
            callables=("xaimetrics.representation.confirmation_matrix",),
        ),
        description="NPMI, PMI or log-conditional confirmation of every pair of a topic's words over a reference corpus",
    ),
)
