"""Statistics on independent units, shared by every family that compares scores over seeds.

- :func:`sign_flip_test` — the exact sign-flip permutation test of a mean difference, and
  :func:`minimum_pvalue`, the floor it cannot go below with ``n`` units;
- :func:`skewness_corrected_pvalue` and :func:`robust_pvalue` — the superiority test that also holds for skewed
  differences;
- :func:`t_interval` — Student-t intervals over the units;
- :func:`holm` — Holm's step-down adjustment over a family of tests;
- :func:`equivalence_test` — two one-sided tests against ``±margin`` (:data:`DEFAULT_MARGIN`).

The benchmark's assessments (controls, method comparisons, plans) are built on these
(:mod:`xaimetrics.benchmark`), and so are detection's legibility tables (:mod:`xaimetrics.detection`).
"""

from xaimetrics.stats._exact import (
    DEFAULT_MARGIN,
    EXACT_UNITS,
    Alternative,
    equivalence_test,
    finite_values,
    holm,
    minimum_pvalue,
    robust_pvalue,
    sign_flip_test,
    skewness_corrected_pvalue,
    t_interval,
)

__all__ = [
    "DEFAULT_MARGIN",
    "EXACT_UNITS",
    "Alternative",
    "equivalence_test",
    "finite_values",
    "holm",
    "minimum_pvalue",
    "robust_pvalue",
    "sign_flip_test",
    "skewness_corrected_pvalue",
    "t_interval",
]
