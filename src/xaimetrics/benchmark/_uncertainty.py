"""How sure is a simulatability claim? Tests, intervals, multiplicity, equivalence and power on independent units.

Every function here takes **one value per independent unit** — a seed of a (dataset, model, simulator): the
seed draws the learning and evaluation samples that every arm of that seed shares, so the settings of one seed
are not independent replicates (:func:`~xaimetrics.benchmark.unit_scores` averages them first). The rules
(docs/benchmark.md, "Statistics"):

- :func:`sign_flip_test` — the exact sign-flip permutation test of a mean difference (``scipy.stats.
  permutation_test``; every one of the ``2ⁿ`` sign patterns up to 13 units, 9,999 random ones beyond). It needs
  no normality, and it cannot go below :func:`minimum_pvalue` (``2/2ⁿ`` two-sided: 0.0625 at 5 seeds), which
  the report states; a Student t-test on 2–5 units can.
- :func:`t_interval` — Student-t confidence intervals on the unit values, which cover at their nominal level
  for normal unit means (a percentile bootstrap over 3–5 units covers 75–83 %).
- :func:`baseline_comparison` — every method against ``NoExplanation``: difference, interval, unadjusted and
  **Holm-adjusted** p-value over the family of methods (:func:`holm`, equal to statsmodels' ``multipletests``),
  ``significant`` from the adjusted one, the minimum detectable difference and the number of units.
- :func:`equivalence_test` — two one-sided sign-flip tests (TOST) against ``±margin``: the negative control
  *passes* only when it is shown to lie within the margin of the baseline.
- :func:`control_verdict` — pre-stated directions: positive control one-sided superiority, negative control
  equivalence; each ``"pass"``, ``"fail"`` or ``"undecided"``. ``detects`` only when both pass.
- :func:`pairwise_comparison` / :func:`best_method` — a "best method" only when it beats every other one in
  Holm-corrected pairwise tests.
- :func:`plan` — the minimum detectable difference at a grid's size and the seeds needed for a target
  difference, with the power of the exact sign-flip test itself (seeded Monte Carlo, ``benchmark._power``; exact
  tests are coarser than t); ``test="equivalence"`` plans the negative control's TOST.
- :func:`robust_pvalue` — the superiority tests' p: the sign-flip p and the skewness-corrected t-test's
  (:func:`skewness_corrected_pvalue`, Johnson 1978 / Hall 1992) must agree. Chosen by measurement
  (docs/benchmark.md, "Statistics"): it keeps the exact guarantee under symmetry, cuts the false passes of
  skewed null differences (rare large losses: 0.082 → 0.043 at 20 seeds where every sample holds losses; 0.090 →
  0.072 where 12 % hold none, which no test can tell from a gain) for 0.03–0.05 of power at 6–10 seeds; a
  bootstrap-t check did no better and is random.
- :func:`split_half_stability` — Kendall's τ between the method orders on disjoint halves of the seeds.
- :func:`conclusion` — the plain sentences the report and the demo print.

Nothing is hand-rolled that scipy or statsmodels does: the permutation test and the t quantiles come from them
(the exact test's power is simulated because neither gives it); Holm's step-down is three lines here (:func:`holm` says why) and is tested against
statsmodels.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from xaimetrics._validation import check_in_range, invalid
from xaimetrics.benchmark._grid import BASELINE_METHOD
from xaimetrics.stats import (
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

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


__all__ = [
    "DEFAULT_MARGIN",
    "EXACT_UNITS",
    "baseline_comparison",
    "best_method",
    "conclusion",
    "control_verdict",
    "equivalence_test",
    "minimum_detectable_difference",
    "minimum_pvalue",
    "pairwise_comparison",
    "plan",
    "robust_pvalue",
    "sign_flip_test",
    "skewness_corrected_pvalue",
    "split_half_stability",
    "t_interval",
]


def minimum_detectable_difference(
    differences: ArrayLike, *, alpha: float = 0.05, power: float = 0.8, alternative: Alternative = "two-sided"
) -> float:
    """The smallest true mean difference a test at ``alpha`` detects with probability ``power`` given the
    spread of the unit ``differences`` (:func:`plan` with their standard deviation); ``inf`` when the exact test
    cannot reach ``alpha`` at this many units, NaN with fewer than two.

    Example:
        >>> round(minimum_detectable_difference([0.1, -0.1, 0.05, 0.0, 0.02, -0.04]), 3)
        0.128
        >>> minimum_detectable_difference([0.1, 0.2, 0.1])
        inf
    """
    d = finite_values(differences)
    if d.size < 2:
        return math.nan
    return plan(float(d.std(ddof=1)), n_units=d.size, alpha=alpha, power=power, alternative=alternative)[
        "mdd"
    ]


def plan(
    sd: float,
    *,
    n_units: int | None = None,
    target: float | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    alternative: Alternative = "two-sided",
    n_comparisons: int = 1,
    max_units: int = 1000,
    test: Literal["difference", "equivalence"] = "difference",
    margin: float = DEFAULT_MARGIN,
) -> dict[str, Any]:
    """Plan a grid from the standard deviation ``sd`` of the unit differences (a pilot's, or a stated one).

    The level is ``alpha / n_comparisons`` (Holm's first step: the most any one comparison of a family gets).
    **Power is that of the exact sign-flip test the benchmark runs** (``p < level``), simulated for normal unit
    differences by :func:`~xaimetrics.benchmark._power.exact_power` (seeded Monte Carlo, cached; the t-test's
    beyond 30 units, where the two agree): exact tests are coarser than t (at the t planner's mdd the exact
    test had power 0.67 at 8 seeds, not 0.80). A size at which the exact test cannot reach the level at all
    (:func:`minimum_pvalue`) has no power, whatever the effect.

    ``test="equivalence"`` plans the negative control's TOST at ``alpha`` (each one-sided test at ``alpha``):
    ``target`` is then the true difference (default 0), ``units_needed`` the seeds the TOST needs to show
    equivalence within ``±margin`` with probability ``power``, and ``mdd`` the smallest margin it shows at
    ``n_units`` (``alternative`` and ``n_comparisons`` are ignored).

    Returns:
        ``{"alpha", "power", "level", "sd", "n_units", "min_pvalue", "reachable", "mdd", "target",
        "units_needed", "test", "margin"}``: ``mdd`` the minimum detectable difference at ``n_units`` (``inf``
        when not reachable; for the TOST, the smallest margin shown), ``units_needed`` the seeds for
        ``target`` (``None`` above ``max_units``, or when ``sd`` is not finite).

    Example:
        >>> p = plan(0.05, n_units=10, target=0.05)
        >>> round(p["mdd"], 3), p["units_needed"], plan(0.05, n_units=4)["reachable"]
        (0.051, 11, False)
        >>> plan(0.12, target=0.0, test="equivalence")["units_needed"]
        51
    """
    from xaimetrics.benchmark._power import equivalence_power, exact_power, solve_effect, solve_margin

    equivalence = test == "equivalence"
    side: Alternative = "greater" if equivalence else alternative
    level = alpha if equivalence else alpha / max(1, n_comparisons)
    smallest = next(n for n in range(1, 64) if minimum_pvalue(n, side) <= level)
    if equivalence and target is None:
        target = 0.0
    out: dict[str, Any] = {
        "alpha": alpha, "power": power, "level": level, "sd": float(sd), "n_units": n_units,
        "min_pvalue": math.nan, "reachable": None, "mdd": math.nan, "target": target, "units_needed": None,
        "test": test, "margin": margin if equivalence else None,
    }  # fmt: skip
    finite = math.isfinite(sd) and sd >= 0
    if n_units is not None:
        out["min_pvalue"] = minimum_pvalue(n_units, side)
        out["reachable"] = bool(out["min_pvalue"] <= level)
        if not out["reachable"]:
            out["mdd"] = math.inf
        elif n_units >= 2 and finite:
            if sd == 0:
                out["mdd"] = abs(target or 0.0) if equivalence else 0.0
            elif equivalence:
                out["mdd"] = float(solve_margin(n_units, level, power, abs(target or 0.0) / sd) * sd)
            else:
                out["mdd"] = float(solve_effect(n_units, level, power, alternative) * sd)
    if target is not None and finite:
        if sd == 0:
            reached = not equivalence or abs(target) < margin
            out["units_needed"] = max(2, smallest) if reached else None
        else:
            sign = -1.0 if alternative == "less" else 1.0

            def enough(n: int) -> bool:
                if equivalence:
                    return equivalence_power(abs(target) / sd, margin / sd, n, level) >= power
                return exact_power(sign * abs(target) / sd, n, level, alternative) >= power

            guess = None if equivalence else _t_size(abs(target) / sd, level, power, alternative)
            out["units_needed"] = _first_size(enough, max(2, smallest), max_units, guess=guess)
    return out


def _t_size(effect: float, level: float, power: float, alternative: Alternative) -> int | None:
    """The t-test's sample size for ``effect`` (standard deviations): where the exact test's search starts."""
    from statsmodels.stats.power import TTestPower

    side = {"two-sided": "two-sided", "greater": "larger", "less": "larger"}[alternative]
    try:
        size = float(TTestPower().solve_power(effect_size=effect, alpha=level, power=power, alternative=side))
    except (ValueError, RuntimeError, ArithmeticError):
        return None
    return math.ceil(size) if math.isfinite(size) and size > 0 else None


def _first_size(
    enough: Callable[[int], bool], low: int, high: int, *, guess: int | None = None
) -> int | None:
    """The smallest size in ``[low, high]`` where the (monotone) power condition holds; ``None`` if none.

    From a ``guess`` (the t-test's size, which the exact test's is close to) it walks down while the condition
    holds, or gallops up and bisects: two or three power evaluations instead of a bisection over ``[low, high]``.
    """
    if low > high:
        return None
    if guess is not None:
        n = min(max(guess, low), high)
        if enough(n):
            while n > low and enough(n - 1):
                n -= 1
            return n
        step, failed = 1, n
        while True:
            n = min(high, failed + step)
            if enough(n):
                low, high = failed + 1, n
                break
            if n == high:
                return None
            failed, step = n, step * 2
    elif not enough(high):
        return None
    while low < high:
        middle = (low + high) // 2
        if enough(middle):
            high = middle
        else:
            low = middle + 1
    return low


_COMPARISON_COLUMNS = [
    "difference", "ci_low", "ci_high", "pvalue", "pvalue_adjusted", "significant", "mdd", "n_units",
]  # fmt: skip


def baseline_comparison(
    scores: pd.DataFrame,
    baseline: str = BASELINE_METHOD,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    confidence: float = 0.95,
    family: Sequence[str] | None = None,
    alternative: Alternative = "two-sided",
) -> pd.DataFrame:
    """Every method against ``baseline`` on their shared units (rows of ``scores``: one per independent unit).

    Columns: ``difference`` (mean of method − baseline over units), ``ci_low``/``ci_high`` (:func:`t_interval`),
    ``pvalue`` (:func:`robust_pvalue`: the exact sign-flip test, and the skewness-corrected t-test must
    agree; unadjusted), ``pvalue_adjusted`` (Holm over ``family``; the other rows
    keep their own p), ``significant`` (adjusted ``p < alpha``), ``mdd`` (:func:`minimum_detectable_difference`
    at the family's Holm level) and ``n_units``.

    Args:
        scores: units × methods, one row per independent unit (:func:`~xaimetrics.benchmark.unit_scores`).
        baseline: the column every method is compared with.
        family: the methods corrected together (default: every column but the baseline).
        alternative: the direction tested.

    Example:
        >>> s = pd.DataFrame({"NoExplanation": [0.5, 0.6, 0.5, 0.55, 0.5, 0.6],
        ...                   "A": [0.7, 0.75, 0.68, 0.72, 0.7, 0.71], "B": [0.5, 0.62, 0.5, 0.56, 0.5, 0.6]})
        >>> table = baseline_comparison(s)
        >>> round(float(table.loc["A", "difference"]), 3), float(table.loc["A", "pvalue"]), bool(table.loc["A", "significant"])
        (0.168, 0.03125, False)
    """
    if baseline not in scores.columns:
        raise invalid(
            "baseline", "baseline_comparison", f"a column of scores {list(scores.columns)}", baseline
        )
    alpha = check_in_range(alpha, "alpha", "baseline_comparison", 0.0, 1.0)
    methods = [m for m in scores.columns if m != baseline]
    family = [m for m in (methods if family is None else family) if m in methods]
    base = scores[baseline].to_numpy(dtype=float)
    rows: dict[str, dict[str, Any]] = {}
    for method in methods:
        mine = scores[method].to_numpy(dtype=float)
        shared = np.isfinite(mine) & np.isfinite(base)
        d = mine[shared] - base[shared]
        mean, low, high = t_interval(d, confidence=confidence)
        rows[method] = {
            "difference": mean, "ci_low": low, "ci_high": high,
            "pvalue": robust_pvalue(d, alternative=alternative), "pvalue_adjusted": math.nan,
            "significant": False, "n_units": int(d.size),
            "mdd": minimum_detectable_difference(
                d, alpha=alpha / max(1, len(family)) if method in family else alpha, power=power,
                alternative=alternative,
            ),
        }  # fmt: skip
    table = pd.DataFrame.from_dict(rows, orient="index", columns=_COMPARISON_COLUMNS)
    table.index.name = "method"
    if len(table):
        table["pvalue_adjusted"] = table["pvalue"].astype(float)
        members = [m for m in family if m in table.index]
        if members:
            table.loc[members, "pvalue_adjusted"] = holm(table.loc[members, "pvalue"].tolist(), alpha=alpha)
        table["significant"] = (table["pvalue_adjusted"] < alpha).fillna(False).astype(bool)
        table["n_units"] = table["n_units"].astype(int)
    return table


_VERDICT_COLUMNS = [
    "role", "difference", "ci_low", "ci_high", "test", "verdict", "decided_by", "pvalue", "min_pvalue", "n_units",
    "pvalue_superiority", "pvalue_below_margin", "pvalue_equivalence", "pvalue_outside_margin",
]  # fmt: skip


def control_verdict(
    scores: pd.DataFrame,
    roles: Mapping[str, str],
    *,
    baseline: str = BASELINE_METHOD,
    alpha: float = 0.05,
    margin: float = DEFAULT_MARGIN,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """Did the instrument pass its controls? Each is tested alone, in the direction stated before the grid ran.

    - a **positive** control passes when it beats the baseline (one-sided :func:`robust_pvalue` ``< alpha``);
      it fails when it is shown to stay below ``+margin`` (one-sided sign-flip ``p < alpha`` that the
      difference is < margin); else it is undecided;
    - a **negative** control passes when it is shown equivalent to the baseline within ``±margin``
      (:func:`equivalence_test` ``p < alpha``); it fails only when it is shown **outside** the margin (the
      one-sided tests of ``d − margin > 0`` and ``d + margin < 0``, each at ``alpha/2``), so a true difference
      inside the margin fails at most ``alpha`` of the time; else it is undecided ("not significant" is not
      "no effect").

    Returns ``{"ran", "detects", "decided", "positive": {m: verdict}, "negative": {...}, "table", "margin",
    "sentence"}``; ``detects`` is true only when every positive control and every negative control passes,
    ``None`` when no positive control ran. ``table`` holds each control's difference, interval, verdict, the
    test that decided it (``decided_by``; for an undecided control the test that would pass it) and **that
    test's** ``pvalue``, and every test's p in its own column (``pvalue_superiority``,
    ``pvalue_below_margin`` for a positive control; ``pvalue_equivalence`` (TOST), ``pvalue_outside_margin``
    for a negative one).

    Example:
        >>> s = pd.DataFrame({"NoExplanation": [0.5, 0.6, 0.5, 0.55, 0.5, 0.6],
        ...                   "SurrogateWords": [0.7, 0.75, 0.68, 0.72, 0.7, 0.71],
        ...                   "RandomWords": [0.51, 0.59, 0.5, 0.56, 0.49, 0.6]})
        >>> v = control_verdict(s, {"SurrogateWords": "positive", "RandomWords": "negative"})
        >>> v["positive"], v["negative"], v["detects"]
        ({'SurrogateWords': 'pass'}, {'RandomWords': 'pass'}, True)
    """
    rows = {}
    base = scores[baseline].to_numpy(dtype=float) if baseline in scores.columns else None
    nan = math.nan
    for method, role in roles.items():
        if base is None or method not in scores.columns:
            continue
        mine = scores[method].to_numpy(dtype=float)
        shared = np.isfinite(mine) & np.isfinite(base)
        d = mine[shared] - base[shared]
        mean, low, high = t_interval(d, confidence=confidence)
        floor = minimum_pvalue(d.size, "greater")
        row: dict[str, Any] = {"role": role, "difference": mean, "ci_low": low, "ci_high": high,
                               "pvalue_superiority": nan, "pvalue_below_margin": nan,
                               "pvalue_equivalence": nan, "pvalue_outside_margin": nan}  # fmt: skip
        if role == "positive":
            test = "one-sided superiority"
            row["pvalue_superiority"] = superior = robust_pvalue(d, alternative="greater") if d.size else nan
            row["pvalue_below_margin"] = below = sign_flip_test(d - margin, alternative="less")
            if superior < alpha:
                verdict, decided_by, p = "pass", "superiority", superior
            elif below < alpha:
                verdict, decided_by, p = "fail", f"below +{margin:g}", below
            else:
                verdict, decided_by, p = "undecided", "superiority", superior
        else:
            test = f"equivalence within ±{margin:g} (TOST)"
            row["pvalue_equivalence"] = equivalent = equivalence_test(d, margin) if d.size else nan
            above = sign_flip_test(d - margin, alternative="greater")  # shown above +margin
            under = sign_flip_test(d + margin, alternative="less")  # shown below −margin
            row["pvalue_outside_margin"] = outside = min(above, under) if d.size else nan
            if equivalent < alpha:
                verdict, decided_by, p = "pass", "equivalence (TOST)", equivalent
            elif outside < alpha / 2:  # each one-sided test at α/2: together a two-sided level-α test
                side = f"above +{margin:g}" if above <= under else f"below −{margin:g}"
                verdict, decided_by, p = "fail", side, outside
            else:
                verdict, decided_by, p = "undecided", "equivalence (TOST)", equivalent
        row.update(test=test, decided_by=decided_by, pvalue=p, min_pvalue=floor, verdict=verdict,
                   n_units=int(d.size))  # fmt: skip
        rows[method] = row
    table = pd.DataFrame.from_dict(rows, orient="index", columns=_VERDICT_COLUMNS)
    table.index.name = "method"
    positive = {m: r["verdict"] for m, r in rows.items() if r["role"] == "positive"}
    negative = {m: r["verdict"] for m, r in rows.items() if r["role"] == "negative"}
    out: dict[str, Any] = {
        "ran": bool(rows), "positive": positive, "negative": negative, "table": table, "margin": margin,
        "alpha": alpha,
    }  # fmt: skip
    verdicts = [*positive.values(), *negative.values()]
    out["decided"] = bool(verdicts) and "undecided" not in verdicts
    if not positive:
        out["detects"] = None
        out["sentence"] = (
            "No positive control was run, so nothing shows that this grid can detect a helpful explanation; "
            "run it with controls (Grid(controls=True)) before reading the ranking as a finding."
        )
        return out
    out["detects"] = all(v == "pass" for v in verdicts)
    parts = [_describe(m, r) for m, r in rows.items()]
    n = int(table["n_units"].max()) if len(table) else 0
    if out["detects"]:
        out["sentence"] = (
            "The controls pass: " + "; ".join(parts) + ". This grid can tell an informative explanation from "
            "an uninformative one."
        )
    elif any(v == "fail" for v in positive.values()):
        out["sentence"] = (
            "The controls fail: " + "; ".join(parts) + ". This simulator and grid did not detect an "
            "informative explanation, so the ranking below is not evidence about the methods."
        )
    elif any(v == "fail" for v in negative.values()):
        out["sentence"] = (
            "The controls fail: "
            + "; ".join(parts)
            + ". An explanation that carries no information about the "
            "model differs from the baseline, so differences with the baseline may come from the prompt's "
            "form, not its content."
        )
    else:
        floor = minimum_pvalue(n, "greater")
        reach = (
            f" With {n} seed(s) the smallest possible one-sided p is {_p(floor)}, so no control can be decided "
            f"at α = {alpha:g}; run more seeds."
            if floor >= alpha
            else " Run more seeds to decide them."
        )
        out["sentence"] = (
            "The controls are undecided: " + "; ".join(parts) + "." + reach + " Until they pass, the ranking "
            "below is not evidence about the methods."
        )
    return out


def _describe(method: str, row: Mapping[str, Any]) -> str:
    """One control's clause; every number in it is a column of its row (tests/benchmark/test_sentences.py)."""
    what = {"pass": "passes", "fail": "fails", "undecided": "is undecided"}[row["verdict"]]
    question = (
        "beats NoExplanation?"
        if row["role"] == "positive"
        else f"within ±{_margin(row['test'])} of NoExplanation?"
    )
    n = row["n_units"]
    decided_by = row.get("decided_by", "")
    test = f"{decided_by} {p_phrase(row['pvalue'])}" if decided_by else p_phrase(row["pvalue"])
    if n >= 2 and math.isfinite(row["ci_low"]) and row["ci_low"] == row["ci_high"]:
        spread = f"all {n} seeds gave the same difference"
    elif math.isfinite(row["ci_low"]):
        spread = f"95% CI [{row['ci_low']:+.3f}, {row['ci_high']:+.3f}]"
    else:
        spread = "no interval from one seed"
    seeds = "1 seed" if n == 1 else f"{n} seeds"
    return f"{method} ({row['role']} control, {question}) {what}: {row['difference']:+.3f}, {spread}, {test}, {seeds}"


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


def pairwise_comparison(scores: pd.DataFrame, *, alpha: float = 0.05) -> pd.DataFrame:
    """Every pair of methods (columns of the units × methods ``scores``): the mean difference over shared
    units, its sign-flip p-value, and the Holm-adjusted p over all pairs.

    Example:
        >>> s = pd.DataFrame({"A": [0.9, 0.8, 0.7, 0.9, 0.8, 0.85], "B": [0.5, 0.6, 0.4, 0.5, 0.5, 0.6],
        ...                   "C": [0.5, 0.61, 0.41, 0.5, 0.49, 0.6]})
        >>> pairwise_comparison(s)[["first", "second", "pvalue", "pvalue_adjusted"]].values.tolist()[0]
        ['A', 'B', 0.03125, 0.09375]
    """
    rows = []
    for first, second in itertools.combinations(scores.columns, 2):
        a, b = scores[first].to_numpy(dtype=float), scores[second].to_numpy(dtype=float)
        shared = np.isfinite(a) & np.isfinite(b)
        d = a[shared] - b[shared]
        rows.append({"first": first, "second": second, "difference": float(d.mean()) if d.size else math.nan,
                     "pvalue": sign_flip_test(d), "n_units": int(d.size)})  # fmt: skip
    table = pd.DataFrame(rows, columns=["first", "second", "difference", "pvalue", "n_units"])
    table["pvalue_adjusted"] = holm(table["pvalue"].tolist(), alpha=alpha) if len(table) else []
    table["significant"] = (table["pvalue_adjusted"] < alpha).fillna(False).astype(bool)
    return table


def best_method(scores: pd.DataFrame, *, alpha: float = 0.05) -> dict[str, Any]:
    """The method with the highest mean over units, and whether it beats **every** other one in the
    Holm-corrected pairwise tests (:func:`pairwise_comparison`); only then may a report call it the best.

    Example:
        >>> s = pd.DataFrame({"A": [0.9, 0.8, 0.7, 0.9, 0.8, 0.85], "B": [0.5, 0.6, 0.4, 0.5, 0.5, 0.6]})
        >>> best_method(s)["method"], best_method(s)["established"]
        ('A', True)
    """
    if scores.shape[1] < 2:
        return {"method": None, "established": False, "pairs": pd.DataFrame()}
    top = str(scores.mean(axis=0).idxmax())
    pairs = pairwise_comparison(scores, alpha=alpha)
    mine = pairs[(pairs["first"] == top) | (pairs["second"] == top)]
    signs = np.where(mine["first"] == top, 1.0, -1.0) * mine["difference"].to_numpy(dtype=float)
    established = bool(len(mine) and mine["significant"].all() and (signs > 0).all())
    return {"method": top, "established": established, "pairs": pairs}


def split_half_stability(scores: pd.DataFrame, *, max_splits: int = 50, seed: int = 0) -> dict[str, Any]:
    """Kendall's τ between the method orders (by mean) on two disjoint halves of the units (rows of the
    units × methods ``scores``).

    Every split of the units into two halves when there are at most ``max_splits`` of them, else
    ``max_splits`` distinct random ones drawn directly (seeded; the splits are never listed: 28 units have
    20 million), gives one τ; returns their mean, min and max, the number of splits and of units
    (``n_seeds``). Fewer than two units: ``tau_mean`` is NaN.

    Example:
        >>> s = pd.DataFrame({"A": [0.9, 0.8, 0.7, 0.9], "B": [0.5, 0.6, 0.4, 0.5]})
        >>> split_half_stability(s)["tau_mean"]
        1.0
    """
    from scipy import stats

    n = len(scores)
    out: dict[str, Any] = {"tau_mean": math.nan, "tau_min": math.nan, "tau_max": math.nan,
                           "n_splits": 0, "n_seeds": n}  # fmt: skip
    if n < 2 or scores.shape[1] < 2:
        return out
    rows = list(range(n))
    splits = _half_splits(n, max_splits, seed)
    values = scores.to_numpy(dtype=float)
    taus = []
    for first in splits:
        mask = np.isin(rows, first)
        with np.errstate(all="ignore"):
            a = pd.Series(np.nanmean(values[mask], axis=0))
            b = pd.Series(np.nanmean(values[~mask], axis=0))
        ok = a.notna() & b.notna()
        if ok.sum() < 2:
            continue
        tau = stats.kendalltau(a[ok], b[ok]).statistic
        taus.append(0.0 if math.isnan(tau) else float(tau))
    if taus:
        out.update(tau_mean=float(np.mean(taus)), tau_min=float(np.min(taus)), tau_max=float(np.max(taus)),
                   n_splits=len(taus))  # fmt: skip
    return out


def _half_splits(n: int, max_splits: int, seed: int) -> list[tuple[int, ...]]:
    """Distinct splits of ``range(n)`` into a first half of ``n // 2`` units and the rest (with ``n`` even, a
    split and its mirror are one: the first half holds unit 0): all of them when there are at most
    ``max_splits``, else ``max_splits`` drawn at random without listing the others."""
    half = n // 2
    even = 2 * half == n
    total = math.comb(n, half) // (2 if even else 1)
    if total <= max_splits:
        return [c for c in itertools.combinations(range(n), half) if 0 in c or not even]
    rng = np.random.default_rng(seed)
    drawn: dict[tuple[int, ...], None] = {}
    while len(drawn) < max_splits:
        first = rng.permutation(n)[:half]
        if even and 0 not in first:
            first = np.setdiff1d(np.arange(n), first)
        drawn[tuple(sorted(int(i) for i in first))] = None
    return list(drawn)


def conclusion(
    comparison: pd.DataFrame,
    verdict: Mapping[str, Any],
    stability: Mapping[str, Any],
    *,
    metric: str,
    roles: Mapping[str, str],
    best: Mapping[str, Any] | None = None,
    alpha: float = 0.05,
) -> str:
    """The report's answer in plain sentences: the controls, what beat the baseline after Holm's correction,
    whether the grid could reach significance at all, the best method (only when established), stability.

    Example:
        >>> comparison = pd.DataFrame({"difference": [0.02], "ci_low": [-0.01], "ci_high": [0.05],
        ...     "pvalue": [0.3], "pvalue_adjusted": [0.3], "significant": [False], "mdd": [0.04], "n_units": [8]},
        ...     index=["NMF"])
        >>> verdict = {"sentence": "No positive control was run."}
        >>> print(conclusion(comparison, verdict, {"tau_mean": 0.5, "n_splits": 3}, metric="expected_accuracy",  # doctest: +NORMALIZE_WHITESPACE
        ...                  roles={}))
        No positive control was run. Score: expected_accuracy, averaged within each seed (8 independent units).
        No concept method beats NoExplanation significantly (sign-flip tests, Holm-corrected over 1 method(s),
        α = 0.05). NMF: +0.020 (p = 0.300). Ranking stability across halves of the seeds: Kendall's τ = 0.50
        (3 splits).
    """
    methods = comparison[~comparison.index.isin(list(roles))]  # a boolean mask, also with no rows
    n = int(comparison["n_units"].max()) if len(comparison) else 0
    sentences = [
        verdict.get("sentence", ""),
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
    if best and best.get("method") is not None:
        if best.get("established"):
            sentences.append(
                f"{best['method']} beats every other concept method in Holm-corrected pairwise tests: the best of "
                "the methods here"
                + ("." if len(winners) else " (though no method is shown to beat NoExplanation).")
            )
        else:
            sentences.append(
                f"No method is established as the best ({best['method']} has the highest mean, but does not beat "
                "every other one in Holm-corrected pairwise tests)."
            )
    tau = stability.get("tau_mean", math.nan)
    if isinstance(tau, float) and math.isfinite(tau):
        sentences.append(
            f"Ranking stability across halves of the seeds: Kendall's τ = {tau:.2f} ({stability.get('n_splits')} splits)."
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
