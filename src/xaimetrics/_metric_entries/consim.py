"""Concept-based simulatability (``xaimetrics.consim``).

Add a metric as one more row below (see ``docs/metrics.md``).
"""

from __future__ import annotations

from math import inf

from xaimetrics._metric_registry import Entry, family_entries

__all__ = ["ENTRIES"]

# one metric a row: name, direction, range, data, category, reference, callables, description
# fmt: off
ENTRIES: tuple[Entry, ...] = family_entries("consim", [
    ("consim_accuracy", "higher", (0, 1), ("text", "concepts", "answers"), "simulatability", "interpreto",
     ("ConSim", "score_response", "evaluate_prompts"),
     "accuracy of the simulator's answers against f's predictions (eq. 5)"),
    ("consim_expected_accuracy", "higher", (0, 1), ("text", "concepts", "answers"), "simulatability", "interpreto",
     ("ConSim", "score_response", "evaluate_prompts"),
     "mean probability the simulator gives f's prediction"),
    ("consim_log_loss", "lower", (0, inf), ("text", "concepts", "answers"), "simulatability", "interpreto",
     ("ConSim", "score_response", "evaluate_prompts"),
     "mean −log probability the simulator gives f's prediction"),
    ("consim_brier", "lower", (0, 2), ("text", "concepts", "answers"), "simulatability", "interpreto",
     ("ConSim", "score_response", "evaluate_prompts"),
     "Brier score of the simulator's class probabilities against f's predictions"),
])
# fmt: on
