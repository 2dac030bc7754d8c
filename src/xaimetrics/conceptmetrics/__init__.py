"""Concept metrics for concept-based models (concept bottleneck models and the like), on torchmetrics.

- :class:`Annotations`: concept names, types (binary / categorical / continuous), cardinalities and the logit
  layout (one block per concept, in label order).
- :class:`ConceptMetrics`: torchmetrics metrics routed by concept type, with summary and per-concept results,
  an ``nn.Module`` usable in Lightning and under DDP (PyC-compatible API).
- :class:`ConceptAlignmentScore` / :func:`concept_alignment_score`: mean per-concept binary accuracy.
- PyC's model-level concept metrics: :func:`cace_score` / :class:`CausalConceptEffect` / :func:`concept_effect` and
  :func:`residual_concept_causal_effect`, :func:`intervention_curve` / :func:`intervention_score`,
  :func:`tcav_score`, :func:`number_of_effective_concepts`, :func:`number_of_contributing_concepts` and the
  scorer-based :func:`completeness_score`.

The definitions, result keys and the guide to writing a new concept metric are in ``docs/conceptmetrics.md``.

Example:
    >>> import torch
    >>> from xaimetrics.conceptmetrics import Annotations, ConceptAlignmentScore, ConceptMetrics
    >>> ann = Annotations(["has_wings", "is_red"])
    >>> metrics = ConceptMetrics(ann, binary={"cas": ConceptAlignmentScore})
    >>> metrics.update(torch.tensor([[1.2, -0.4], [-0.7, 0.3]]), torch.tensor([[1, 1], [0, 1]]))
    >>> metrics.compute()
    {'SUMMARY-binary_cas': tensor(0.7500)}
"""

from __future__ import annotations

from xaimetrics.conceptmetrics._alignment import ConceptAlignmentScore, concept_alignment_score
from xaimetrics.conceptmetrics._annotations import Annotations
from xaimetrics.conceptmetrics._causal import (
    CausalConceptEffect,
    cace_score,
    concept_effect,
    residual_concept_causal_effect,
)
from xaimetrics.conceptmetrics._completeness import completeness_score
from xaimetrics.conceptmetrics._concept_metrics import ConceptMetrics
from xaimetrics.conceptmetrics._intervention import intervention_curve, intervention_score
from xaimetrics.conceptmetrics._sparsity import number_of_contributing_concepts, number_of_effective_concepts
from xaimetrics.conceptmetrics._tcav import tcav_score

__all__ = [
    "Annotations",
    "CausalConceptEffect",
    "ConceptAlignmentScore",
    "ConceptMetrics",
    "cace_score",
    "completeness_score",
    "concept_alignment_score",
    "concept_effect",
    "intervention_curve",
    "intervention_score",
    "number_of_contributing_concepts",
    "number_of_effective_concepts",
    "residual_concept_causal_effect",
    "tcav_score",
]
