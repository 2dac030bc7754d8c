"""Fidelity: attributions of a model's inputs (``xaimetrics.fidelity``).

Add a metric as one more row below (see ``docs/metrics.md``).
"""

from __future__ import annotations

from math import inf

from xaimetrics._metric_registry import Entry, family_entries

__all__ = ["ENTRIES"]

# one metric a row: name, direction, range, data, category, reference, callables, description
# fmt: off
ENTRIES: tuple[Entry, ...] = family_entries("fidelity", [
    ("deletion", "lower", (0, 1), ("text", "tensor", "image"), "faithfulness", "xplique",
     ("Deletion",),
     "area under the target score as the most important features are removed (probabilities)"),
    ("insertion", "higher", (0, 1), ("text", "tensor", "image"), "faithfulness", "xplique",
     ("Insertion",),
     "area under the target score as the most important features are put back (probabilities)"),
    ("aopc_comprehensiveness", "higher", (-1, 1), ("text", "tensor", "image"), "faithfulness", "ferret (DeYoung et al. 2020)",
     ("AOPCComprehensiveness",),
     "mean score drop when the top t% features are removed"),
    ("aopc_sufficiency", "lower", (-1, 1), ("text", "tensor", "image"), "faithfulness", "ferret (DeYoung et al. 2020)",
     ("AOPCSufficiency",),
     "mean score drop when only the top t% features are kept"),
    ("mufidelity", "higher", (-1, 1), ("text", "tensor", "image"), "faithfulness", "xplique",
     ("MuFidelity",),
     "correlation between the attribution of random subsets and the output drop they cause"),
    ("infidelity", "lower", (0, inf), ("text", "tensor", "image"), "faithfulness", "captum",
     ("Infidelity",),
     "expected squared error between the attribution-weighted perturbation and the output change it causes"),
    ("sensitivity_max", "lower", (0, inf), ("tensor", "image", "text"), "robustness", "captum",
     ("sensitivity_max",),
     "largest change of the explanation under small input perturbations, relative to its norm"),
    ("average_drop", "lower", (0, 1), ("text", "tensor", "image"), "faithfulness", "xplique",
     ("AverageDrop",),
     "mean relative drop of the target score when the input is scaled by its explanation"),
    ("average_increase", "higher", (0, 1), ("text", "tensor", "image"), "faithfulness", "xplique",
     ("AverageIncrease",),
     "share of inputs whose target score rises when scaled by their explanation"),
    ("average_gain", "higher", (0, 1), ("text", "tensor", "image"), "faithfulness", "xplique",
     ("AverageGain",),
     "mean relative gain of the target score when the input is scaled by its explanation"),
    ("complexity", "lower", (0, inf), ("text", "tensor", "image", "concepts"), "complexity", "xplique",
     ("Complexity", "complexity"),
     "entropy of the normalised absolute attribution (at most log of the number of features)"),
    ("sparseness", "higher", (0, 1), ("text", "tensor", "image", "concepts"), "complexity", "xplique",
     ("Sparseness", "sparseness"),
     "Gini index of the absolute attribution"),
    ("model_randomization", "lower", (-1, 1), ("text", "tensor", "image", "concepts"), "randomisation", "xplique",
     ("ModelRandomization", "randomizable_layers"),
     "Spearman between the explanations of the model and of a copy with re-initialised layers"),
    ("random_logit", "lower", (-1, 1), ("text", "tensor", "image", "concepts"), "randomisation", "xplique",
     ("RandomLogit",),
     "Spearman between the explanation of the target class and of a random other class"),
    ("cascading_randomization", "lower", (-1, 1), ("text", "tensor", "image", "concepts"), "randomisation", "xplique (Adebayo et al. 2018)",
     ("CascadingRandomization",),
     "Spearman between the explanations before and after randomising layers from the top down, per step"),
    ("correlation_pearson", "higher", (-1, 1), ("tensor", "text", "concepts"), "similarity", "quantus",
     ("correlation_pearson",),
     "Pearson correlation of two explanations, per row"),
    ("correlation_spearman", "higher", (-1, 1), ("tensor", "text", "concepts"), "similarity", "quantus",
     ("correlation_spearman",),
     "Spearman correlation of two explanations, per row"),
    ("correlation_kendall_tau", "higher", (-1, 1), ("tensor", "text", "concepts"), "similarity", "quantus",
     ("correlation_kendall_tau",),
     "Kendall's tau of two explanations, per row"),
    ("distance_euclidean", "lower", (0, inf), ("tensor", "text", "concepts"), "similarity", "quantus",
     ("distance_euclidean",),
     "Euclidean distance between two explanations, per row"),
    ("distance_manhattan", "lower", (0, inf), ("tensor", "text", "concepts"), "similarity", "quantus",
     ("distance_manhattan",),
     "Manhattan distance between two explanations, per row"),
    ("distance_chebyshev", "lower", (0, inf), ("tensor", "text", "concepts"), "similarity", "quantus",
     ("distance_chebyshev",),
     "Chebyshev distance between two explanations, per row"),
    ("mse", "lower", (0, inf), ("tensor", "text", "concepts"), "similarity", "quantus",
     ("mse",),
     "mean squared difference between two explanations, per row"),
    ("ssim", "higher", (-1, 1), ("image",), "similarity", "quantus (scikit-image)",
     ("ssim",),
     "structural similarity of two image explanations"),
    ("lipschitz_constant", "lower", (0, inf), ("tensor", "text", "concepts"), "robustness", "quantus",
     ("lipschitz_constant",),
     "ratio of the explanations' L1 distance to the inputs' L2 distance"),
])
# fmt: on
