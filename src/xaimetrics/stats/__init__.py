"""Statistics on independent units, shared by every family that compares scores over seeds.

Every function takes **one value per independent unit** (a seed of a grid: its settings share the seed's
samples and are averaged first) and returns numbers: floats, tables, or frozen dataclasses. The sentences that
state them belong to the reports (``xaimetrics.benchmark``, ``xaimetrics.detection``).

- :func:`sign_flip_test` — the exact sign-flip permutation test of a mean difference, and
  :func:`minimum_pvalue`, the floor it cannot go below with ``n`` units;
- :func:`skewness_corrected_pvalue` and :func:`robust_pvalue` — the superiority test that also holds for skewed
  differences;
- :func:`t_interval` — Student-t intervals over the units;
- :func:`holm` — Holm's step-down adjustment over a family of tests;
- :func:`equivalence_test` — two one-sided tests against ``±margin`` (:data:`DEFAULT_MARGIN`);
- :func:`baseline_comparison`, :func:`pairwise_comparison`, :func:`best_method` (:class:`BestMethod`) — columns
  against a baseline with Holm's correction, every pair, and a best column only when corrected tests say so;
- :func:`control_verdict` (:class:`ControlVerdict`) — controls tested in their pre-stated directions;
- :func:`plan` (:class:`Plan`) — the power of the exact test itself;
- :func:`split_half_stability` (:class:`SplitHalfStability`) — Kendall's τ between orders on halves of the units,
  and :func:`top_k_stability` (:class:`TopKStability`), how often the top-k set survives a draw of the units;
- :func:`sequential_sign_test` (:class:`SequentialTest`) — the exact group-sequential
  sign-flip test, the type-I error controlled over several looks.

Example:
    >>> from xaimetrics.stats import sign_flip_test
    >>> sign_flip_test([0.1, 0.2, 0.05, 0.3, 0.1], alternative="greater")
    0.03125
"""

from xaimetrics.stats._comparison import BestMethod, baseline_comparison, best_method, pairwise_comparison
from xaimetrics.stats._controls import ControlVerdict, control_verdict
from xaimetrics.stats._exact import (
    DEFAULT_MARGIN,
    equivalence_test,
    holm,
    minimum_pvalue,
    robust_pvalue,
    sign_flip_test,
    skewness_corrected_pvalue,
    t_interval,
)
from xaimetrics.stats._planning import Plan, plan
from xaimetrics.stats._sequential import SequentialTest, sequential_sign_test
from xaimetrics.stats._stability import (
    SplitHalfStability,
    TopKStability,
    split_half_stability,
    top_k_stability,
)

__all__ = [
    "DEFAULT_MARGIN",
    "BestMethod",
    "ControlVerdict",
    "Plan",
    "SequentialTest",
    "SplitHalfStability",
    "TopKStability",
    "baseline_comparison",
    "best_method",
    "control_verdict",
    "equivalence_test",
    "holm",
    "minimum_pvalue",
    "pairwise_comparison",
    "plan",
    "robust_pvalue",
    "sequential_sign_test",
    "sign_flip_test",
    "skewness_corrected_pvalue",
    "split_half_stability",
    "t_interval",
    "top_k_stability",
]
