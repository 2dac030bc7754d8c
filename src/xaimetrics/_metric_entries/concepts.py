"""A concept space's complexity and faithfulness, ConSim's App. D (``xaimetrics.concepts``).

Add a metric as one more ``Entry`` below (see ``docs/metrics.md``).
"""

from __future__ import annotations

from math import inf

from xaimetrics._metric_registry import Entry, MetricInfo

__all__ = ["ENTRIES"]

ENTRIES: tuple[Entry, ...] = (
    Entry(
        "concept_l0",
        MetricInfo(
            family="concepts",
            direction="lower",
            range=(0, inf),
            data=("activations", "concepts"),
            category="complexity",
            reference="ConSim paper (App. D)",
            callables=("xaimetrics.concepts.concept_l0",),
        ),
        description="mean number of active concepts per sample",
    ),
    Entry(
        "concept_activation_ratio",
        MetricInfo(
            family="concepts",
            direction="lower",
            range=(0, 1),
            data=("activations", "concepts"),
            category="complexity",
            reference="ConSim paper (App. D)",
            callables=("xaimetrics.concepts.concept_activation_ratio",),
        ),
        description="share of active concepts",
    ),
    Entry(
        "n_important_concepts",
        MetricInfo(
            family="concepts",
            direction="lower",
            range=(0, inf),
            data=("activations", "concepts"),
            category="complexity",
            reference="ConSim paper (App. D)",
            callables=("xaimetrics.concepts.n_important_concepts",),
        ),
        description="number of concepts shown in prompts",
    ),
    Entry(
        "important_concept_ratio",
        MetricInfo(
            family="concepts",
            direction="lower",
            range=(0, 1),
            data=("activations", "concepts"),
            category="complexity",
            reference="ConSim paper (App. D)",
            callables=("xaimetrics.concepts.important_concept_ratio",),
        ),
        description="share of concepts shown in prompts",
    ),
    Entry(
        "decoder_cosine_similarity",
        MetricInfo(
            family="concepts",
            direction="lower",
            range=(-1, 1),
            data=("activations", "concepts"),
            category="complexity",
            reference="ConSim paper (App. D)",
            callables=("xaimetrics.concepts.decoder_cosine_similarity",),
        ),
        description="mean pairwise cosine of the decoder atoms",
    ),
    Entry(
        "decoder_covariance",
        MetricInfo(
            family="concepts",
            direction="lower",
            range=(-inf, inf),
            data=("activations", "concepts"),
            category="complexity",
            reference="ConSim paper (App. D)",
            callables=("xaimetrics.concepts.decoder_covariance",),
        ),
        description="mean covariance between decoder atoms",
    ),
    Entry(
        "latent_l2",
        MetricInfo(
            family="concepts",
            direction="lower",
            range=(0, inf),
            data=("activations", "concepts"),
            category="faithfulness",
            reference="ConSim paper (App. D)",
            callables=("xaimetrics.concepts.latent_l2",),
        ),
        description="reconstruction error of the activations",
    ),
    Entry(
        "logits_l2",
        MetricInfo(
            family="concepts",
            direction="lower",
            range=(0, inf),
            data=("activations", "concepts"),
            category="faithfulness",
            reference="ConSim paper (App. D)",
            callables=("xaimetrics.concepts.logits_l2",),
        ),
        description="reconstruction error of the logits",
    ),
    Entry(
        "logits_kl",
        MetricInfo(
            family="concepts",
            direction="lower",
            range=(0, inf),
            data=("activations", "concepts"),
            category="faithfulness",
            reference="ConSim paper (App. D)",
            callables=("xaimetrics.concepts.logits_kl",),
        ),
        description="KL(softmax f ‖ softmax f_c)",
    ),
    Entry(
        "completeness",
        MetricInfo(
            family="concepts",
            direction="higher",
            range=(-inf, inf),
            data=("activations", "concepts"),
            category="completeness",
            reference="ConSim paper (App. D)",
            callables=("xaimetrics.concepts.completeness",),
        ),
        description="chance-corrected accuracy of f_c relative to f (1: as good)",
    ),
    Entry(
        "latent_wasserstein",
        MetricInfo(
            family="concepts",
            direction="lower",
            range=(0, inf),
            data=("activations",),
            category="faithfulness",
            reference="interpreto",
            callables=("xaimetrics.concepts.latent_wasserstein",),
        ),
        description="per-feature 1-Wasserstein distance between activations and their reconstruction, averaged",
    ),
)
