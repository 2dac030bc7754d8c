"""Concept-based models, PyC's metrics (``xaimetrics.conceptmetrics``).

Add a metric as one more row below (see ``docs/metrics.md``).
"""

from __future__ import annotations

from math import inf

from xaimetrics._metric_registry import Entry, family_entries

__all__ = ["ENTRIES"]

# one metric a row: name, direction, range, data, category, reference, callables, description
# fmt: off
ENTRIES: tuple[Entry, ...] = family_entries("conceptmetrics", [
    ("concept_alignment_score", "higher", (0, 1), ("concepts",), "accuracy", "pytorch-concepts",
     ("ConceptAlignmentScore", "concept_alignment_score"),
     "mean over binary concepts of each concept's accuracy"),
    ("cace", "neither", (-1, 1), ("concepts",), "causality", "pytorch-concepts",
     ("cace_score", "CausalConceptEffect", "concept_effect"),
     "causal concept effect E[f | do(C=1)] − E[f | do(C=0)] per output (range for probabilities)"),
    ("residual_concept_causal_effect", "neither", (-inf, inf), ("concepts",), "causality", "pytorch-concepts",
     ("residual_concept_causal_effect",),
     "share of a concept's causal effect left after fixing a mediator (1: none mediated)"),
    ("intervention_score", "higher", (0, 1), ("concepts",), "causality", "pytorch-concepts",
     ("intervention_score", "intervention_curve"),
     "task score after replacing groups of predicted concepts by the truth, mean over groups (ROC AUC)"),
    ("tcav_score", "neither", (0, 1), ("activations", "concepts"), "causality", "pytorch-concepts",
     ("tcav_score",),
     "fraction of inputs whose target output rises along a concept vector (0.5: no influence)"),
    ("number_of_effective_concepts", "lower", (0, inf), ("concepts",), "complexity", "pytorch-concepts",
     ("number_of_effective_concepts",),
     "NEC: mean number of concepts with a non-zero weight per class"),
    ("number_of_contributing_concepts", "lower", (0, inf), ("concepts",), "complexity", "pytorch-concepts",
     ("number_of_contributing_concepts",),
     "NCC: concepts needed to cover a fraction of each decision's absolute contribution"),
    ("completeness_score", "higher", (0, inf), ("concepts",), "completeness", "pytorch-concepts",
     ("completeness_score",),
     "score of the concept model over the black box's (ROC AUC or F1 ratio; 1: as good)"),
])
# fmt: on
