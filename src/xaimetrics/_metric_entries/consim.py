"""Concept-based simulatability (``xaimetrics.consim``).

Add a metric as one more ``Entry`` below (see ``docs/metrics.md``).
"""

from __future__ import annotations

from math import inf

from xaimetrics._metric_registry import Entry, MetricInfo

__all__ = ["ENTRIES"]

ENTRIES: tuple[Entry, ...] = (
    Entry(
        "consim_accuracy",
        MetricInfo(
            family="consim",
            direction="higher",
            range=(0, 1),
            data=("text", "concepts", "answers"),
            category="simulatability",
            reference="interpreto",
            callables=(
                "xaimetrics.consim.ConSim",
                "xaimetrics.consim.score_response",
                "xaimetrics.consim.evaluate_prompts",
            ),
        ),
        description="accuracy of the simulator's answers against f's predictions (eq. 5)",
    ),
    Entry(
        "consim_expected_accuracy",
        MetricInfo(
            family="consim",
            direction="higher",
            range=(0, 1),
            data=("text", "concepts", "answers"),
            category="simulatability",
            reference="interpreto",
            callables=(
                "xaimetrics.consim.ConSim",
                "xaimetrics.consim.score_response",
                "xaimetrics.consim.evaluate_prompts",
            ),
        ),
        description="mean probability the simulator gives f's prediction",
    ),
    Entry(
        "consim_log_loss",
        MetricInfo(
            family="consim",
            direction="lower",
            range=(0, inf),
            data=("text", "concepts", "answers"),
            category="simulatability",
            reference="interpreto",
            callables=(
                "xaimetrics.consim.ConSim",
                "xaimetrics.consim.score_response",
                "xaimetrics.consim.evaluate_prompts",
            ),
        ),
        description="mean −log probability the simulator gives f's prediction",
    ),
    Entry(
        "consim_brier",
        MetricInfo(
            family="consim",
            direction="lower",
            range=(0, 2),
            data=("text", "concepts", "answers"),
            category="simulatability",
            reference="interpreto",
            callables=(
                "xaimetrics.consim.ConSim",
                "xaimetrics.consim.score_response",
                "xaimetrics.consim.evaluate_prompts",
            ),
        ),
        description="Brier score of the simulator's class probabilities against f's predictions",
    ),
)
