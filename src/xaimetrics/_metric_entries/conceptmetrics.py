"""Concept-based models, PyC's metrics (``xaimetrics.conceptmetrics``).

Add a metric as one more ``Entry`` below (see ``docs/metrics.md``).
"""

from __future__ import annotations

from math import inf

from xaimetrics._metric_registry import Entry, MetricInfo

__all__ = ["ENTRIES"]

ENTRIES: tuple[Entry, ...] = (
    Entry(
        "concept_alignment_score",
        MetricInfo(
            family="conceptmetrics",
            direction="higher",
            range=(0, 1),
            data=("concepts",),
            category="accuracy",
            reference="pytorch-concepts",
            callables=(
                "xaimetrics.conceptmetrics.ConceptAlignmentScore",
                "xaimetrics.conceptmetrics.concept_alignment_score",
            ),
        ),
        description="mean over binary concepts of each concept's accuracy",
    ),
    Entry(
        "cace",
        MetricInfo(
            family="conceptmetrics",
            direction="neither",
            range=(-1, 1),
            data=("concepts",),
            category="causality",
            reference="pytorch-concepts",
            callables=(
                "xaimetrics.conceptmetrics.cace_score",
                "xaimetrics.conceptmetrics.CausalConceptEffect",
                "xaimetrics.conceptmetrics.concept_effect",
            ),
        ),
        description="causal concept effect E[f | do(C=1)] − E[f | do(C=0)] per output (range for probabilities)",
    ),
    Entry(
        "residual_concept_causal_effect",
        MetricInfo(
            family="conceptmetrics",
            direction="neither",
            range=(-inf, inf),
            data=("concepts",),
            category="causality",
            reference="pytorch-concepts",
            callables=("xaimetrics.conceptmetrics.residual_concept_causal_effect",),
        ),
        description="share of a concept's causal effect left after fixing a mediator (1: none mediated)",
    ),
    Entry(
        "intervention_score",
        MetricInfo(
            family="conceptmetrics",
            direction="higher",
            range=(0, 1),
            data=("concepts",),
            category="causality",
            reference="pytorch-concepts",
            callables=(
                "xaimetrics.conceptmetrics.intervention_score",
                "xaimetrics.conceptmetrics.intervention_curve",
            ),
        ),
        description="task score after replacing groups of predicted concepts by the truth, mean over groups (ROC AUC)",
    ),
    Entry(
        "tcav_score",
        MetricInfo(
            family="conceptmetrics",
            direction="neither",
            range=(0, 1),
            data=("activations", "concepts"),
            category="causality",
            reference="pytorch-concepts",
            callables=("xaimetrics.conceptmetrics.tcav_score",),
        ),
        description="fraction of inputs whose target output rises along a concept vector (0.5: no influence)",
    ),
    Entry(
        "number_of_effective_concepts",
        MetricInfo(
            family="conceptmetrics",
            direction="lower",
            range=(0, inf),
            data=("concepts",),
            category="complexity",
            reference="pytorch-concepts",
            callables=("xaimetrics.conceptmetrics.number_of_effective_concepts",),
        ),
        description="NEC: mean number of concepts with a non-zero weight per class",
    ),
    Entry(
        "number_of_contributing_concepts",
        MetricInfo(
            family="conceptmetrics",
            direction="lower",
            range=(0, inf),
            data=("concepts",),
            category="complexity",
            reference="pytorch-concepts",
            callables=("xaimetrics.conceptmetrics.number_of_contributing_concepts",),
        ),
        description="NCC: concepts needed to cover a fraction of each decision's absolute contribution",
    ),
    Entry(
        "completeness_score",
        MetricInfo(
            family="conceptmetrics",
            direction="higher",
            range=(0, inf),
            data=("concepts",),
            category="completeness",
            reference="pytorch-concepts",
            callables=("xaimetrics.conceptmetrics.completeness_score",),
        ),
        description="score of the concept model over the black box's (ROC AUC or F1 ratio; 1: as good)",
    ),
)
