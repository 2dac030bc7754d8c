"""The sentences of ``assess``'s summary, generated from the numbers they state (:mod:`xaimetrics.stats` computes
the numbers; this module only writes them).

Each clause prints a number of the result it describes and nothing else (tests/benchmark/test_sentences.py
checks each one against the table): a zero or unknown spread is said as such, never as "detects 0.000" beside
"needs more than 1000 seeds".
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from xaimetrics.stats import BestMethod, ControlVerdict, Plan, SplitHalfStability, minimum_pvalue
from xaimetrics.stats._planning import Planning

__all__ = [
    "Forecast",
    "conclusion",
    "controls_sentence",
    "forecast_sentence",
    "p_phrase",
    "planning_sentence",
]


@dataclass(frozen=True)
class Forecast:
    """The planner's forecast before a gated run's methods ran: the gate's unit SD, the target difference, the
    fresh seeds it needs (``None`` above the planner's range or without a spread), over ``n_methods`` methods
    within a ``budget`` of seeds; then the seeds the methods used and whether they were all decided."""

    sd: float
    target: float
    seeds: int | None
    n_methods: int
    budget: int
    seeds_used: int | None = None
    decided: bool | None = None


def forecast_sentence(forecast: Forecast) -> str:
    """The forecast in one sentence, and what happened once the methods ran.

    Example:
        >>> print(forecast_sentence(Forecast(0.05, 0.05, 9, 6, 16, seeds_used=11, decided=True)))  # doctest: +NORMALIZE_WHITESPACE
        Forecast before the methods ran (planner, exact test at Holm's first level over 6 methods, unit SD 0.050
        from the gate's controls): a method that helps by 0.05 needs about 9 fresh seeds (budget 16). What
        happened: every method was decided after 11 fresh seeds.
    """
    if forecast.seeds is None:
        what = (
            "more than the planner's range"
            if math.isfinite(forecast.sd)
            else "unknown (no spread measured in the gate)"
        )
    else:
        what = f"about {forecast.seeds}"
    sentence = (
        f"Forecast before the methods ran (planner, exact test at Holm's first level over {forecast.n_methods} "
        f"methods, unit SD {forecast.sd:.3f} from the gate's controls): a method that helps by {forecast.target:g} "
        f"needs {what} fresh seeds (budget {forecast.budget})."
    )
    if forecast.seeds_used is None:
        return sentence
    outcome = "every method was decided" if forecast.decided else "the budget ran out"
    return f"{sentence} What happened: {outcome} after {forecast.seeds_used} fresh seeds."


def _plan_clause(name: str, p: Plan) -> str:
    sd, n = p.sd, p.n_units
    level = f"α = {p.level:.3g}, power {p.power:.0%}"
    if p.mdd == math.inf:
        return f"For {name} ({level}), {n} seeds cannot reach the level at all, whatever the effect."
    if not math.isfinite(sd):
        return f"For {name}, the spread of the seed differences is unknown, so no size can be planned."
    if p.test == "equivalence":
        shown = f"it shows equivalence within ±{p.mdd:.3f}" if math.isfinite(p.mdd) else ""
        needed = p.units_needed
        seeds = f"{needed} seeds" if needed is not None else "more seeds than planned for"
        goal = f"equivalence within ±{p.margin:g} for a true difference of {p.target:+.3f} needs {seeds}"
        return (
            f"For {name} ({level}): " + ("; ".join(x for x in (shown, goal) if x)) + f" (unit SD {sd:.3f})."
        )
    if sd == 0:
        return (
            f"For {name} ({level}): every seed gave the same difference (unit SD 0), so any non-zero difference "
            f"is detected once the exact test can reach the level ({p.units_needed} seeds)."
        )
    detects = f"it detects a difference of {p.mdd:.3f}" if math.isfinite(p.mdd) else ""
    needed = p.units_needed
    seeds = f"{needed} seeds" if needed is not None else "more seeds than planned for"
    goal = f"a difference of {p.target:.3f} needs {seeds}" if p.target is not None else ""
    body = "; ".join(x for x in (detects, goal) if x)
    return f"For {name} ({level}): {body} (unit SD {sd:.3f})." if body else ""


def planning_sentence(planning: Planning) -> str:
    """What this grid's size can show: the exact tests' floors, then one clause per planned test (the methods
    at Holm's level, the positive control, and the negative control's TOST when ``planning`` holds it).

    Example:
        >>> from xaimetrics.stats import plan
        >>> from xaimetrics.stats._planning import Planning
        >>> print(planning_sentence(Planning(n_units=6, alpha=0.05, power=0.8, target=0.05,
        ...     min_pvalue_two_sided=0.03125, min_pvalue_one_sided=0.015625,
        ...     positive=plan(0.0, n_units=6, target=0.05, alternative="greater"))))  # doctest: +NORMALIZE_WHITESPACE
        At 6 seed(s) the exact tests cannot go below p = 0.03125 two-sided (0.01562 one-sided). For the positive
        control (α = 0.05, power 80%): every seed gave the same difference (unit SD 0), so any non-zero difference
        is detected once the exact test can reach the level (5 seeds).
    """
    n = planning.n_units
    floors = (
        f"At {n} seed(s) the exact tests cannot go below p = {planning.min_pvalue_two_sided:.4g} two-sided "
        f"({planning.min_pvalue_one_sided:.4g} one-sided)."
    )
    parts = [floors]
    names = (
        (planning.methods, "a method against NoExplanation (Holm level)"),
        (planning.positive, "the positive control"),
        (planning.negative, "the negative control (TOST)"),
    )
    for p, name in names:
        if p is not None:
            parts.append(_plan_clause(name, p))
    return " ".join(x for x in parts if x)


def controls_sentence(verdict: ControlVerdict) -> str:
    """What the controls say, one clause per control (:func:`xaimetrics.stats.control_verdict`'s table), then
    what it means for the ranking.

    Example:
        >>> from xaimetrics.stats import control_verdict
        >>> s = pd.DataFrame({"NoExplanation": [0.5, 0.6, 0.5], "SurrogateWords": [0.7, 0.75, 0.68]})
        >>> print(controls_sentence(control_verdict(s, {"SurrogateWords": "positive"}, baseline="NoExplanation")))  # doctest: +NORMALIZE_WHITESPACE
        The controls are undecided: SurrogateWords (positive control, beats NoExplanation?) is undecided: +0.177,
        95% CI [+0.114, +0.239], superiority p = 0.125, 3 seeds. With 3 seed(s) the smallest possible one-sided p
        is 0.125, so no control can be decided at α = 0.05; run more seeds. Until they pass, the ranking below is
        not evidence about the methods.
    """
    if not verdict.positive:
        return (
            "No positive control was run, so nothing shows that this grid can detect a helpful explanation; "
            "run it with controls (Grid(controls=True)) before reading the ranking as a finding."
        )
    parts = "; ".join(_describe(str(m), row) for m, row in verdict.table.to_dict("index").items())
    if verdict.detects:
        return f"The controls pass: {parts}. This grid can tell an informative explanation from an uninformative one."
    if "fail" in verdict.positive.values():
        return (
            f"The controls fail: {parts}. This simulator and grid did not detect an informative explanation, so "
            "the ranking below is not evidence about the methods."
        )
    if "fail" in verdict.negative.values():
        return (
            f"The controls fail: {parts}. An explanation that carries no information about the model differs "
            "from the baseline, so differences with the baseline may come from the prompt's form, not its content."
        )
    n = verdict.n_units
    floor = minimum_pvalue(n, "greater")
    reach = (
        f" With {n} seed(s) the smallest possible one-sided p is {_p(floor)}, so no control can be decided "
        f"at α = {verdict.alpha:g}; run more seeds."
        if floor >= verdict.alpha
        else " Run more seeds to decide them."
    )
    return (
        f"The controls are undecided: {parts}.{reach} Until they pass, the ranking below is not evidence about the "
        "methods."
    )


def _describe(method: str, row: Mapping[str, object]) -> str:
    """One control's clause; every number in it is a column of its row (tests/benchmark/test_sentences.py)."""
    what = {"pass": "passes", "fail": "fails", "undecided": "is undecided"}[str(row["verdict"])]
    question = (
        "beats NoExplanation?"
        if row["role"] == "positive"
        else f"within ±{_margin(str(row['test']))} of NoExplanation?"
    )
    n = int(str(row["n_units"]))
    low, high, pvalue = _number(row["ci_low"]), _number(row["ci_high"]), _number(row["pvalue"])
    decided_by = row.get("decided_by", "")
    test = f"{decided_by} {p_phrase(pvalue)}" if decided_by else p_phrase(pvalue)
    if n >= 2 and math.isfinite(low) and low == high:
        spread = f"all {n} seeds gave the same difference"
    elif math.isfinite(low):
        spread = f"95% CI [{low:+.3f}, {high:+.3f}]"
    else:
        spread = "no interval from one seed"
    seeds = "1 seed" if n == 1 else f"{n} seeds"
    difference = _number(row["difference"])
    return (
        f"{method} ({row['role']} control, {question}) {what}: {difference:+.3f}, {spread}, {test}, {seeds}"
    )


def _number(value: object) -> float:
    """A table cell as a float (NaN when it holds none)."""
    return float(value) if isinstance(value, (int, float)) else math.nan


def _margin(test: str) -> str:
    return test.split("±", 1)[1].split(" ", 1)[0] if "±" in test else "?"


def _p(value: float) -> str:
    """``"0.031"``, ``"< 0.001"`` or ``"n/a"``, to follow ``"p = "`` or ``"p "`` as a phrase.

    Example:
        >>> _p(0.0312), _p(0.0004), _p(float("nan"))
        ('0.031', '< 0.001', 'n/a')
    """
    if not math.isfinite(value):
        return "n/a"
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


def p_phrase(value: float) -> str:
    """``"p = 0.031"`` or ``"p < 0.001"`` (never ``"p = < 0.001"``).

    Example:
        >>> p_phrase(0.0004), p_phrase(0.5)
        ('p < 0.001', 'p = 0.500')
    """
    text = _p(value)
    return f"p {text}" if text.startswith("<") else f"p = {text}"


def conclusion(
    comparison: pd.DataFrame,
    controls: str,
    stability: SplitHalfStability,
    *,
    metric: str,
    roles: Mapping[str, str],
    best: BestMethod | None = None,
    alpha: float = 0.05,
) -> str:
    """The report's answer in plain sentences: the controls, what beat the baseline after Holm's correction,
    whether the grid could reach significance at all, the best method (only when established), stability.

    Example:
        >>> comparison = pd.DataFrame({"difference": [0.02], "ci_low": [-0.01], "ci_high": [0.05],
        ...     "pvalue": [0.3], "pvalue_adjusted": [0.3], "significant": [False], "mdd": [0.04], "n_units": [8]},
        ...     index=["NMF"])
        >>> from xaimetrics.stats import SplitHalfStability
        >>> stability = SplitHalfStability(tau_mean=0.5, tau_min=0.0, tau_max=1.0, n_splits=3, n_seeds=8)
        >>> print(conclusion(comparison, "No positive control was run.", stability,  # doctest: +NORMALIZE_WHITESPACE
        ...                  metric="expected_accuracy", roles={}))
        No positive control was run. Score: expected_accuracy, averaged within each seed (8 independent units).
        No concept method beats NoExplanation significantly (sign-flip tests, Holm-corrected over 1 method(s),
        α = 0.05). NMF: +0.020 (p = 0.300). Ranking stability across halves of the seeds: Kendall's τ = 0.50
        (3 splits).
    """
    methods = comparison[~comparison.index.isin(list(roles))]  # a boolean mask, also with no rows
    n = int(comparison["n_units"].max()) if len(comparison) else 0
    sentences = [
        controls,
        f"Score: {metric}, averaged within each seed ({n} independent units).",
    ]
    family = len(methods)
    floor = minimum_pvalue(n)
    if family and floor >= alpha / family:
        enough = next(k for k in range(n + 1, 64) if minimum_pvalue(k) < alpha / family)
        fewer = next((m for m in range(family - 1, 0, -1) if floor < alpha / m), None)
        instead = f"; with {fewer} method(s) it could" if fewer else ""
        sentences.append(
            f"With {n} seed(s) the smallest possible two-sided p is {_p(floor)} (exact sign-flip test), not below "
            f"Holm's first level α/{family} = {alpha / family:.4f}: none of these {family} methods can be shown to "
            f"beat NoExplanation with {n} seeds, whatever the data ({enough} seeds could{instead})."
        )
    winners = methods[methods["significant"] & (methods["difference"] > 0)]
    losers = methods[methods["significant"] & (methods["difference"] < 0)]
    if len(winners):
        listed = ", ".join(
            f"{m} ({r['difference']:+.3f}, Holm-adjusted {p_phrase(r['pvalue_adjusted'])})"
            for m, r in winners.iterrows()
        )
        sentences.append(
            f"Beating NoExplanation significantly (Holm-corrected over {family} methods): {listed}."
        )
    elif not family:
        sentences.append("No concept method was run, so none is compared with NoExplanation.")
    else:
        sentences.append(
            f"No concept method beats NoExplanation significantly (sign-flip tests, Holm-corrected over {family} "
            f"method(s), α = {alpha:g})."
        )
    if len(losers):
        sentences.append(
            "Significantly below NoExplanation: "
            + ", ".join(
                f"{m} ({r['difference']:+.3f}, Holm-adjusted {p_phrase(r['pvalue_adjusted'])})"
                for m, r in losers.iterrows()
            )
            + "."
        )
    rest = methods.drop(index=[*winners.index, *losers.index])
    if len(rest) and len(winners):
        sentences.append("Not distinguishable from NoExplanation: " + ", ".join(rest.index) + ".")
    elif len(rest):
        sentences.append(
            " ".join(f"{m}: {r['difference']:+.3f} ({p_phrase(r['pvalue'])})." for m, r in rest.iterrows())
        )
    if best is not None and best.method is not None:
        if best.established:
            sentences.append(
                f"{best.method} beats every other concept method in Holm-corrected pairwise tests: the best of "
                "the methods here"
                + ("." if len(winners) else " (though no method is shown to beat NoExplanation).")
            )
        else:
            sentences.append(
                f"No method is established as the best ({best.method} has the highest mean, but does not beat "
                "every other one in Holm-corrected pairwise tests)."
            )
    tau = stability.tau_mean
    if math.isfinite(tau):
        sentences.append(
            f"Ranking stability across halves of the seeds: Kendall's τ = {tau:.2f} ({stability.n_splits} splits)."
        )
    elif family == 0:
        pass  # no concept method ran (a gate's grid): nothing to rank
    elif family < 2:
        sentences.append(f"Ranking stability needs two or more concept methods ({family} here).")
    elif n < 2:
        sentences.append(f"Ranking stability needs two or more seeds ({n} here).")
    else:
        sentences.append(
            f"Ranking stability not measurable: no split of the {n} seeds left two methods with scores."
        )
    return " ".join(s for s in sentences if s)
