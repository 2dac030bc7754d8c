"""Fidelity: attributions of a model's inputs (``xaimetrics.fidelity``).

Add a metric as one more ``Entry`` below (see ``docs/metrics.md``).
"""

from __future__ import annotations

from xaimetrics._metric_registry import Entry, MetricInfo

__all__ = ["ENTRIES"]

ENTRIES: tuple[Entry, ...] = (
    Entry(
        "deletion",
        MetricInfo(
            family="fidelity",
            direction="lower",
            range=(0, 1),
            data=("text", "tensor", "image"),
            category="faithfulness",
            reference="xplique",
            callables=("xaimetrics.fidelity.Deletion",),
        ),
        description="area under the target score as the most important features are removed (probabilities)",
    ),
    Entry(
        "insertion",
        MetricInfo(
            family="fidelity",
            direction="higher",
            range=(0, 1),
            data=("text", "tensor", "image"),
            category="faithfulness",
            reference="xplique",
            callables=("xaimetrics.fidelity.Insertion",),
        ),
        description="area under the target score as the most important features are put back (probabilities)",
    ),
    Entry(
        "aopc_comprehensiveness",
        MetricInfo(
            family="fidelity",
            direction="higher",
            range=(-1, 1),
            data=("text", "tensor", "image"),
            category="faithfulness",
            reference="ferret (DeYoung et al. 2020)",
            callables=("xaimetrics.fidelity.AOPCComprehensiveness",),
        ),
        description="mean score drop when the top t% features are removed",
    ),
    Entry(
        "aopc_sufficiency",
        MetricInfo(
            family="fidelity",
            direction="lower",
            range=(-1, 1),
            data=("text", "tensor", "image"),
            category="faithfulness",
            reference="ferret (DeYoung et al. 2020)",
            callables=("xaimetrics.fidelity.AOPCSufficiency",),
        ),
        description="mean score drop when only the top t% features are kept",
    ),
    Entry(
        "mufidelity",
        MetricInfo(
            family="fidelity",
            direction="higher",
            range=(-1, 1),
            data=("text", "tensor", "image"),
            category="faithfulness",
            reference="xplique",
            callables=("xaimetrics.fidelity.MuFidelity",),
        ),
        description="correlation between the attribution of random subsets and the output drop they cause",
    ),
)
