"""Attribution fidelity: Insertion, Deletion, AOPC comprehensiveness/sufficiency and MuFidelity.

Also the attribution metrics of Captum (``Infidelity``, ``sensitivity_max``), Xplique (Average Drop / Increase /
Gain, ``Complexity``, ``Sparseness``, the randomisation sanity checks) and Quantus' similarity functions.

One perturbation engine serves tensors (images, tabular rows, time series) and texts (Hugging Face
classifiers or ``xaimetrics.models.SplitClassifier``). ``attribute`` produces Captum attributions to compare,
and ``plot_curves`` draws insertion/deletion curves.

Example:
    >>> import torch
    >>> from xaimetrics.fidelity import Deletion
    >>> model = torch.nn.Linear(3, 1, bias=False)
    >>> _ = model.weight.data.copy_(torch.tensor([[3.0, 2.0, 1.0]]))
    >>> round(Deletion(model, torch.ones(1, 3), steps=-1).evaluate(torch.tensor([[3.0, 2.0, 1.0]])), 4)
    2.3333
"""

from __future__ import annotations

from xaimetrics.fidelity._aopc import AOPCComprehensiveness, AOPCSufficiency
from xaimetrics.fidelity._average import AverageDrop, AverageGain, AverageIncrease
from xaimetrics.fidelity._captum import attribute
from xaimetrics.fidelity._complexity import Complexity, Sparseness, complexity, sparseness
from xaimetrics.fidelity._infidelity import Infidelity
from xaimetrics.fidelity._insertion_deletion import Deletion, Insertion
from xaimetrics.fidelity._mufidelity import MuFidelity
from xaimetrics.fidelity._plot import plot_curves
from xaimetrics.fidelity._randomization import (
    CascadingRandomization,
    ModelRandomization,
    RandomLogit,
    randomizable_layers,
)
from xaimetrics.fidelity._sensitivity import sensitivity_max
from xaimetrics.fidelity._similarity import (
    correlation_kendall_tau,
    correlation_pearson,
    correlation_spearman,
    distance_chebyshev,
    distance_euclidean,
    distance_manhattan,
    lipschitz_constant,
    mse,
    ssim,
)

__all__ = [
    "AOPCComprehensiveness",
    "AOPCSufficiency",
    "AverageDrop",
    "AverageGain",
    "AverageIncrease",
    "CascadingRandomization",
    "Complexity",
    "Deletion",
    "Infidelity",
    "Insertion",
    "ModelRandomization",
    "MuFidelity",
    "RandomLogit",
    "Sparseness",
    "attribute",
    "complexity",
    "correlation_kendall_tau",
    "correlation_pearson",
    "correlation_spearman",
    "distance_chebyshev",
    "distance_euclidean",
    "distance_manhattan",
    "lipschitz_constant",
    "mse",
    "plot_curves",
    "randomizable_layers",
    "sensitivity_max",
    "sparseness",
    "ssim",
]
