"""A concept space's complexity and faithfulness, ConSim's App. D (``xaimetrics.concepts``).

Add a metric as one more row below (see ``docs/metrics.md``).
"""

from __future__ import annotations

from math import inf

from xaimetrics._metric_registry import Entry, family_entries

__all__ = ["ENTRIES"]

# one metric a row: name, direction, range, data, category, reference, callables, description
# fmt: off
ENTRIES: tuple[Entry, ...] = family_entries("concepts", [
    ("concept_l0", "lower", (0, inf), ("activations", "concepts"), "complexity", "ConSim paper (App. D)",
     ("concept_l0",),
     "mean number of active concepts per sample"),
    ("concept_activation_ratio", "lower", (0, 1), ("activations", "concepts"), "complexity", "ConSim paper (App. D)",
     ("concept_activation_ratio",),
     "share of active concepts"),
    ("n_important_concepts", "lower", (0, inf), ("activations", "concepts"), "complexity", "ConSim paper (App. D)",
     ("n_important_concepts",),
     "number of concepts shown in prompts"),
    ("important_concept_ratio", "lower", (0, 1), ("activations", "concepts"), "complexity", "ConSim paper (App. D)",
     ("important_concept_ratio",),
     "share of concepts shown in prompts"),
    ("decoder_cosine_similarity", "lower", (-1, 1), ("activations", "concepts"), "complexity", "ConSim paper (App. D)",
     ("decoder_cosine_similarity",),
     "mean pairwise cosine of the decoder atoms"),
    ("decoder_covariance", "lower", (-inf, inf), ("activations", "concepts"), "complexity", "ConSim paper (App. D)",
     ("decoder_covariance",),
     "mean covariance between decoder atoms"),
    ("latent_l2", "lower", (0, inf), ("activations", "concepts"), "faithfulness", "ConSim paper (App. D)",
     ("latent_l2",),
     "reconstruction error of the activations"),
    ("logits_l2", "lower", (0, inf), ("activations", "concepts"), "faithfulness", "ConSim paper (App. D)",
     ("logits_l2",),
     "reconstruction error of the logits"),
    ("logits_kl", "lower", (0, inf), ("activations", "concepts"), "faithfulness", "ConSim paper (App. D)",
     ("logits_kl",),
     "KL(softmax f ‖ softmax f_c)"),
    ("completeness", "higher", (-inf, inf), ("activations", "concepts"), "completeness", "ConSim paper (App. D)",
     ("completeness",),
     "chance-corrected accuracy of f_c relative to f (1: as good)"),
    ("latent_wasserstein", "lower", (0, inf), ("activations",), "faithfulness", "interpreto",
     ("latent_wasserstein",),
     "per-feature 1-Wasserstein distance between activations and their reconstruction, averaged"),
])
# fmt: on
