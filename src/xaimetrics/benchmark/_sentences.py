"""The planning sentence of ``assess``'s summary, generated from the numbers it states.

Each clause prints a number of ``assess(...).planning`` and nothing else (tests/benchmark/test_sentences.py
checks each one against the table): a zero or unknown spread is said as such, never as "detects 0.000" beside
"needs more than 1000 seeds".
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["planning_sentence"]


def _plan_clause(name: str, p: dict[str, Any]) -> str:
    sd, n = p["sd"], p["n_units"]
    level = f"α = {p['level']:.3g}, power {p['power']:.0%}"
    if p["mdd"] == math.inf:
        return f"For {name} ({level}), {n} seeds cannot reach the level at all, whatever the effect."
    if not math.isfinite(sd):
        return f"For {name}, the spread of the seed differences is unknown, so no size can be planned."
    if p.get("test") == "equivalence":
        shown = f"it shows equivalence within ±{p['mdd']:.3f}" if math.isfinite(p["mdd"]) else ""
        needed = p["units_needed"]
        seeds = f"{needed} seeds" if needed is not None else "more seeds than planned for"
        goal = (
            f"equivalence within ±{p['margin']:g} for a true difference of {p['target']:+.3f} needs {seeds}"
        )
        return (
            f"For {name} ({level}): " + ("; ".join(x for x in (shown, goal) if x)) + f" (unit SD {sd:.3f})."
        )
    if sd == 0:
        return (
            f"For {name} ({level}): every seed gave the same difference (unit SD 0), so any non-zero difference "
            f"is detected once the exact test can reach the level ({p['units_needed']} seeds)."
        )
    detects = f"it detects a difference of {p['mdd']:.3f}" if math.isfinite(p["mdd"]) else ""
    needed = p["units_needed"]
    seeds = f"{needed} seeds" if needed is not None else "more seeds than planned for"
    goal = f"a difference of {p['target']:.3f} needs {seeds}" if p.get("target") is not None else ""
    body = "; ".join(x for x in (detects, goal) if x)
    return f"For {name} ({level}): {body} (unit SD {sd:.3f})." if body else ""


def planning_sentence(planning: dict[str, Any]) -> str:
    """What this grid's size can show: the exact tests' floors, then one clause per planned test (the methods
    at Holm's level, the positive control, and the negative control's TOST when ``planning`` holds it).

    Example:
        >>> from xaimetrics.benchmark import plan
        >>> print(planning_sentence({"n_units": 6, "min_pvalue_two_sided": 0.03125, "min_pvalue_one_sided": 0.015625,
        ...     "positive": plan(0.0, n_units=6, target=0.05, alternative="greater")}))  # doctest: +NORMALIZE_WHITESPACE
        At 6 seed(s) the exact tests cannot go below p = 0.03125 two-sided (0.01562 one-sided). For the positive
        control (α = 0.05, power 80%): every seed gave the same difference (unit SD 0), so any non-zero difference
        is detected once the exact test can reach the level (5 seeds).
    """
    n = planning["n_units"]
    floors = (
        f"At {n} seed(s) the exact tests cannot go below p = {planning['min_pvalue_two_sided']:.4g} two-sided "
        f"({planning['min_pvalue_one_sided']:.4g} one-sided)."
    )
    parts = [floors]
    names = (
        ("methods", "a method against NoExplanation (Holm level)"),
        ("positive", "the positive control"),
        ("negative", "the negative control (TOST)"),
    )
    for key, name in names:
        p = planning.get(key)
        if p is not None:
            parts.append(_plan_clause(name, p))
    return " ".join(x for x in parts if x)
