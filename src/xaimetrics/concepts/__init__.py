"""Concept extractors, interpretation, importance and metrics (ConSim paper, §3 and App. A).

Extractors learn a concept space from activations ``A`` of shape ``(n_samples, n_features)``: ``fit(A)``,
``encode(A) -> U`` of shape ``(n_samples, n_concepts)`` and ``decode(U) = U @ components_ + bias_``.
They accept numpy arrays or torch tensors and return the kind they were given.
"""

from __future__ import annotations

from xaimetrics._words import WordTokenizer
from xaimetrics.concepts._base import ConceptExtractor
from xaimetrics.concepts._complexity import (
    concept_activation_ratio,
    concept_l0,
    decoder_cosine_similarity,
    decoder_covariance,
    important_concept_ratio,
    n_important_concepts,
)
from xaimetrics.concepts._faithfulness import (
    completeness,
    latent_l2,
    latent_wasserstein,
    logits_kl,
    logits_l2,
)
from xaimetrics.concepts._ica import ICA
from xaimetrics.concepts._importance import (
    global_importance,
    importance_bucket,
    local_importance,
    normalize_importance,
)
from xaimetrics.concepts._interpretation import ConceptInterpretation, TopWords
from xaimetrics.concepts._metrics import concept_metrics
from xaimetrics.concepts._nmf import NMF
from xaimetrics.concepts._no_projection import NoProjection
from xaimetrics.concepts._pca import PCA
from xaimetrics.concepts._registry import EXTRACTORS, ExtractorKind, make_extractor
from xaimetrics.concepts._sae import SAE
from xaimetrics.concepts._svd import SVD

__all__ = [
    "EXTRACTORS",
    "ICA",
    "NMF",
    "PCA",
    "SAE",
    "SVD",
    "ConceptExtractor",
    "ConceptInterpretation",
    "ExtractorKind",
    "NoProjection",
    "TopWords",
    "WordTokenizer",
    "completeness",
    "concept_activation_ratio",
    "concept_l0",
    "concept_metrics",
    "decoder_cosine_similarity",
    "decoder_covariance",
    "global_importance",
    "importance_bucket",
    "important_concept_ratio",
    "latent_l2",
    "latent_wasserstein",
    "local_importance",
    "logits_kl",
    "logits_l2",
    "make_extractor",
    "n_important_concepts",
    "normalize_importance",
]
