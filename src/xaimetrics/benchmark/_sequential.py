"""Add seeds until the answer is known, with the type-I error controlled over the looks.

A grid too small to decide should grow, but testing after every added seed at the full α inflates the
false-positive rate (a random walk crosses any fixed line eventually). This module tests **sequentially**:

- :class:`SequentialDesign` fixes the looks (``start``, ``start + step``, … ``max_seeds`` seeds) and the α spent
  by each: ``α(t) = α · t^ρ`` with ``t = seeds / max_seeds`` (Lan & DeMets 1983; ``ρ = 0.5`` spends early, like
  Pocock's boundary, ``ρ = 3`` resembles O'Brien–Fleming).
- :func:`~xaimetrics.stats.sequential_sign_test` (:mod:`xaimetrics.stats`) is the **exact group-sequential sign-flip test**. Under the null the signs of the
  seed-level differences are independent fair coins whatever their sizes (the exact test's assumption), so,
  given the sizes seen so far, every sign pattern is equally likely and the probability of any rejection region
  is a count. At each look the region is the most extreme patterns not rejected at an earlier look, as many as
  keep the probability of *rejecting at any look so far* within ``α(t)``. The joint probability is counted, not
  bounded: α that an earlier look could not use (the exact tests are discrete) and the overlap between looks (a
  pattern extreme at 9 seeds is usually extreme at 8) carry over to later looks — far more power than the union
  bound, with the error still ≤ α over all looks, exactly. Up to :data:`~xaimetrics.stats._sequential.EXACT_SEQUENTIAL_UNITS` units every
  pattern is enumerated; beyond, a fixed seeded set of random patterns plus the observed one (a Monte-Carlo
  permutation test, still exactly valid: the observed pattern is exchangeable with the random ones under the null).
- :func:`sequential_verdicts` asks the grid's questions with it: the **positive control** passes when it beats the
  baseline and fails when shown below ``+margin``; the **negative control** passes when shown within ``±margin``
  (two one-sided tests, TOST) and fails when shown outside it (each side at α/2); each **concept method** helps
  (beats the baseline), helps by less than the margin, or does not help by the margin (shown below ``+margin``).
  The methods' 2·m hypotheses are corrected together with Holm's step-down in Shaffer's form (at most one of a
  method's two hypotheses can be true, so the divisor is the number of methods not yet settled both ways),
  applied to the group-sequential tests as Maurer & Bretz (2013) show for graphical procedures: family-wise
  error ≤ α over every method and every look. A claim of benefit (a control passing, a method helping) must
  also be confirmed by the skewness-corrected t-test at its look, as the fixed-size tests do
  (:func:`~xaimetrics.stats.robust_pvalue`): rare large losses with small gains fool a sign-flip test.
- :func:`until_decided` grows a grid look by look until its question is decided or a budget (seeds, tokens,
  dollars) is spent, and says which.

``tests/benchmark/test_sequential.py`` checks each guarantee on simulated grids (false verdicts, power, seeds
spent); ``benchmarks/bench_sequential.py`` measures them with more grids.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from xaimetrics._validation import check_in_range, check_positive_int, invalid
from xaimetrics.stats._sequential import _Hypothesis, _oriented, _prepare, _Prepared, _superiority

__all__ = [
    "METHOD_VERDICTS",
    "SequentialDesign",
    "SequentialResult",
    "sequential_verdicts",
    "until_decided",
]

#: what a concept method's two hypotheses can conclude, in plain words
METHOD_VERDICTS: dict[str, str] = {
    "helps": "helps (beats NoExplanation)",
    "helps_little": "helps, by less than the margin",
    "no_help": "does not help by the margin",
    "undecided": "undecided",
}

Question = Literal["controls", "methods"]


@dataclass(frozen=True)
class SequentialDesign:
    """Looks at ``start``, ``start + step``, … seeds up to ``max_seeds``; α spent as ``α · (n / max_seeds)^ρ``.

    Args:
        max_seeds: the seed budget (the last look).
        start: seeds at the first look.
        step: seeds added between looks.
        alpha: the type-I error over all looks.
        rho: the spending function's exponent (> 0; small spends early).
        max_tokens, max_cost_usd: optional budgets on the results' tokens and cost, checked after each look.

    Example:
        >>> design = SequentialDesign(max_seeds=8, start=5)
        >>> design.looks(), [round(design.spent(n), 4) for n in design.looks()]
        ([5, 6, 7, 8], [0.0395, 0.0433, 0.0468, 0.05])
    """

    max_seeds: int
    start: int = 5
    step: int = 1
    alpha: float = 0.05
    rho: float = 0.5
    max_tokens: int | None = None
    max_cost_usd: float | None = None

    def __post_init__(self) -> None:
        check_positive_int(self.max_seeds, "max_seeds", "SequentialDesign", minimum=2)
        check_positive_int(self.start, "start", "SequentialDesign", minimum=1)
        check_positive_int(self.step, "step", "SequentialDesign")
        check_in_range(self.alpha, "alpha", "SequentialDesign", 0.0, 1.0)
        if self.start > self.max_seeds:
            raise invalid(
                "start", "SequentialDesign", f"at most max_seeds ({self.max_seeds})", self.start,
                "Start with fewer seeds or raise the budget.",
            )  # fmt: skip
        if not self.rho > 0:
            raise invalid("rho", "SequentialDesign", "a number > 0", self.rho)

    def looks(self) -> list[int]:
        """The seed counts at which the questions are tested."""
        out = list(range(self.start, self.max_seeds + 1, self.step))
        return out if out[-1] == self.max_seeds else [*out, self.max_seeds]

    def fraction(self, n_seeds: int) -> float:
        """``α(t) / α`` at ``n_seeds`` seeds: the share of α spent up to that look."""
        return min(1.0, n_seeds / self.max_seeds) ** self.rho

    def spent(self, n_seeds: int, alpha: float | None = None) -> float:
        """α spent up to and including the look at ``n_seeds`` (of ``alpha``, default the design's)."""
        return (self.alpha if alpha is None else alpha) * self.fraction(n_seeds)

    def level(self, n_seeds: int) -> float:
        """The α spent at the look at ``n_seeds`` alone (the spending function's increment)."""
        looks = self.looks()
        if n_seeds not in looks:
            raise invalid("n_seeds", "SequentialDesign.level", f"one of the looks {looks}", n_seeds)
        index = looks.index(n_seeds)
        return self.spent(n_seeds) - (self.spent(looks[index - 1]) if index else 0.0)

    def first_decisive_look(self, n_hypotheses: int = 1) -> int | None:
        """The first look at which an exact one-sided test at ``α / n_hypotheses`` can reject at all
        (``1/2ⁿ ≤ α(t)/n_hypotheses``), or ``None`` when no look can: a design to refuse or to widen.

        Example:
            >>> SequentialDesign(max_seeds=8, start=3).first_decisive_look(), SequentialDesign(16, 8).first_decisive_look(6)
            (5, 8)
        """
        for n in self.looks():
            if 2.0**-n <= self.spent(n) / max(1, n_hypotheses) * (1 + 1e-9):
                return n
        return None


# ---------------------------------------------------------------------------------------- the grid's questions


def _control_hypotheses(role: str, column: str, margin: float) -> dict[str, list[_Hypothesis]]:
    """The verdicts a control can reach, each the rejection of all (``pass`` of TOST) or any of its hypotheses."""
    if role == "positive":
        return {"pass": [_Hypothesis(column, 0.0, "greater")], "fail": [_Hypothesis(column, margin, "less")]}
    return {
        "pass": [_Hypothesis(column, -margin, "greater"), _Hypothesis(column, margin, "less")],
        "fail": [_Hypothesis(column, margin, "greater"), _Hypothesis(column, -margin, "less")],
    }


@dataclass
class _Tested:
    prepared: dict[_Hypothesis, _Prepared]
    fractions: list[float]
    with_pvalues: bool = True

    def rejects(self, hypothesis: _Hypothesis, alpha: float) -> bool:
        return self.prepared[hypothesis].first_rejection(self.fractions, alpha) is not None

    def pvalue(self, hypothesis: _Hypothesis) -> float:
        return self.prepared[hypothesis].pvalue(self.fractions) if self.with_pvalues else math.nan


def sequential_verdicts(
    differences: pd.DataFrame,
    roles: Mapping[str, str],
    design: SequentialDesign,
    *,
    seeds: Sequence[int],
    margin: float = 0.05,
    question: Question = "controls",
    pvalues: bool = True,
) -> pd.DataFrame:
    """Each control's or method's verdict from the units seen so far, tested group-sequentially.

    Args:
        differences: units × competitors, each competitor's difference with NoExplanation in each unit; its
            index must carry the unit's ``seed`` (a level named ``seed``, or the index itself).
        roles: ``{competitor: "positive" | "negative" | "method"}``; the others are ignored.
        design: the looks and the α spending.
        seeds: the seeds of the looks in order (the k-th look covers ``seeds[:design.looks()[k]]``).
        margin: the controls' and the methods' margin.
        question: ``"controls"`` (each control alone at α) or ``"methods"`` (Holm–Shaffer over the methods).
        pvalues: compute the sequential p-values (a bisection per test; ``False`` leaves NaN, for speed).

    Returns:
        One row per competitor: ``role``, ``verdict``, ``difference`` (mean over the units so far),
        ``n_units``, ``n_seeds``, ``pvalue`` (the sequential p of the test that decided it, or the smallest
        of its tests when undecided) and ``decided_by`` (that test, in words).
    """
    order = _seed_order(differences, seeds)
    looks = design.looks()
    seen = [n for n in looks if n <= len(seeds)]
    fractions = [design.fraction(n) for n in seen]
    chosen = {
        c: r
        for c, r in roles.items()
        if c in differences.columns and (r == "method") == (question == "methods")
    }
    rows: dict[str, dict[str, object]] = {}
    if question == "controls":
        for column, role in chosen.items():
            rows[column] = _control_row(order, column, role, seen, fractions, design.alpha, margin, pvalues)
    else:
        rows = _method_rows(order, list(chosen), seen, fractions, design.alpha, margin, pvalues)
    table = pd.DataFrame.from_dict(
        rows, orient="index",
        columns=["role", "verdict", "difference", "n_units", "n_seeds", "pvalue", "decided_by", "ci_low", "ci_high"],
    )  # fmt: skip
    table.index.name = "method"
    return table


def _seed_order(differences: pd.DataFrame, seeds: Sequence[int]) -> pd.DataFrame:
    index = differences.index
    seed_of = (
        np.asarray(index.get_level_values("seed")) if "seed" in (index.names or []) else np.asarray(index)
    )
    rank = {int(s): i for i, s in enumerate(seeds)}
    keep = np.array([int(s) in rank for s in seed_of], dtype=bool)
    frame = differences[keep].copy()
    frame["_look_rank"] = [rank[int(s)] for s in seed_of[keep]]
    return frame.sort_values("_look_rank", kind="stable")


def _unit_looks(frame: pd.DataFrame, seen: Sequence[int]) -> list[int]:
    """Units available at each look (the units of the first ``n`` seeds of the sequence)."""
    ranks = frame["_look_rank"].to_numpy()
    return [int((ranks < n).sum()) for n in seen]


def _control_row(
    order: pd.DataFrame, column: str, role: str, seen: Sequence[int], fractions: Sequence[float], alpha: float,
    margin: float, pvalues: bool,
) -> dict[str, object]:  # fmt: skip
    data = order[[column, "_look_rank"]].dropna()
    values = data[column].to_numpy(dtype=float)
    unit_looks = _unit_looks(data, seen)
    options = _control_hypotheses(role, column, margin)
    tested = _Tested({h: _prepare(_oriented(values, h), unit_looks, skew_check=_superiority(h)) for hs in options.values() for h in hs},
                     list(fractions), pvalues)  # fmt: skip
    # the negative control's "fail" is shown on either side of the margin: each side at α/2
    level = {"pass": alpha, "fail": alpha if role == "positive" else alpha / 2}
    verdict, decided_by, pvalue = "undecided", "", math.nan
    # "fail" first: a positive control shown to beat NoExplanation but also shown below +margin gains too little
    # for the instrument to detect a difference of the margin (it fails); only one of the two can be a true null,
    # so giving "fail" precedence keeps both claims' error within α
    for name in ("fail", "pass"):
        hypotheses = options[name]
        if name == "pass":
            ok = all(tested.rejects(h, level[name]) for h in hypotheses)
            p = max(tested.pvalue(h) for h in hypotheses)
        else:
            ok = any(tested.rejects(h, level[name]) for h in hypotheses)
            p = min(tested.pvalue(h) for h in hypotheses) * (alpha / level[name])
        if ok:
            verdict, decided_by, pvalue = name, _test_name(role, name, margin), min(1.0, p)
            break
        pvalue = min(1.0, p) if not math.isfinite(pvalue) else min(pvalue, p, 1.0)
    return {"role": role, "verdict": verdict, "difference": float(values.mean()) if values.size else math.nan,
            "n_units": int(values.size), "n_seeds": int(data["_look_rank"].nunique()), "pvalue": pvalue,
            "decided_by": decided_by, **_interval(values)}  # fmt: skip


def _interval(values: np.ndarray) -> dict[str, float]:
    """The 95 % t-interval of the mean difference over the units the verdict was tested on (at the last look: not
    widened for the looks, the verdicts are the tests)."""
    from xaimetrics.stats import t_interval

    _, low, high = t_interval(values)
    return {"ci_low": low, "ci_high": high}


def _test_name(role: str, verdict: str, margin: float) -> str:
    return {
        ("positive", "pass"): "beats NoExplanation (one-sided, sequential)",
        ("positive", "fail"): f"shown below +{margin:g} (one-sided, sequential)",
        ("negative", "pass"): f"shown within ±{margin:g} (TOST, sequential)",
        ("negative", "fail"): f"shown outside ±{margin:g} (one-sided each side at α/2, sequential)",
    }[(role, verdict)]


def _method_rows(
    order: pd.DataFrame, methods: list[str], seen: Sequence[int], fractions: Sequence[float], alpha: float,
    margin: float, pvalues: bool,
) -> dict[str, dict[str, object]]:  # fmt: skip
    data = order[[*methods, "_look_rank"]].dropna()  # complete blocks: every method on the same units
    unit_looks = _unit_looks(data, seen)
    helps = {m: _Hypothesis(m, 0.0, "greater") for m in methods}
    below = {m: _Hypothesis(m, margin, "less") for m in methods}
    tested = _Tested(
        {h: _prepare(_oriented(data[h.column].to_numpy(dtype=float), h), unit_looks, skew_check=_superiority(h))
         for h in (*helps.values(), *below.values())},
        list(fractions), pvalues,
    )  # fmt: skip
    rejected: set[_Hypothesis] = set()
    while True:  # Holm's step-down in Shaffer's form: divide by the methods not yet settled both ways
        open_methods = [m for m in methods if not (helps[m] in rejected and below[m] in rejected)]
        if not open_methods:
            break
        level = alpha / len(open_methods)
        new = {
            h
            for m in open_methods
            for h in (helps[m], below[m])
            if h not in rejected and tested.rejects(h, level)
        }
        if not new:
            break
        rejected |= new
    rows = {}
    for m in methods:
        up, down = helps[m] in rejected, below[m] in rejected
        verdict = "helps_little" if up and down else "helps" if up else "no_help" if down else "undecided"
        deciding = helps[m] if up else below[m] if down else None
        p = tested.pvalue(deciding) if deciding else min(tested.pvalue(helps[m]), tested.pvalue(below[m]))
        name = {"helps": "beats NoExplanation", "helps_little": f"beats NoExplanation, shown below +{margin:g}",
                "no_help": f"shown below +{margin:g}", "undecided": ""}[verdict]  # fmt: skip
        values = data[m].to_numpy(dtype=float)
        rows[m] = {"role": "method", "verdict": verdict, "difference": float(values.mean()) if values.size else math.nan,
                   "n_units": int(values.size), "n_seeds": int(data["_look_rank"].nunique()), "pvalue": p,
                   "decided_by": f"{name} (Holm–Shaffer over {len(methods)} methods, sequential)" if name else "",
                   **_interval(values)}  # fmt: skip
    return rows


# ------------------------------------------------------------------------------------------------ the driver


@dataclass
class SequentialResult:
    """What :func:`until_decided` did: each look's seeds and verdicts, why it stopped, the last verdicts (with
    their 95 % t-intervals) and rows, and a sentence."""

    question: str = "controls"
    looks: list[dict[str, Any]] = field(default_factory=list)
    stopped: str = ""
    verdicts: pd.DataFrame = field(default_factory=pd.DataFrame)
    results: pd.DataFrame | None = None
    seeds: tuple[int, ...] = ()

    @property
    def table(self) -> pd.DataFrame:
        """One row per look: its seeds, the α spent so far and each control's or method's verdict."""
        rows = [{"look": look["look"], "n_seeds": look["n_seeds"], "alpha_spent": look["spent"], **look["verdicts"]}
                for look in self.looks]  # fmt: skip
        return pd.DataFrame(rows).set_index("look") if rows else pd.DataFrame()

    @property
    def decided(self) -> bool:
        return self.stopped == "decided"

    @property
    def sentence(self) -> str:
        if not self.looks:
            return "No look was made."
        last = self.looks[-1]
        verdicts = ", ".join(f"{m} {v}" for m, v in last["verdicts"].items())
        what = "every control" if self.question == "controls" else "every method"
        why = {
            "decided": f"{what} was decided" if self.question == "methods" else "the controls were decided",
            "seeds": f"the seed budget ({last['n_seeds']}) was spent with {what} not yet decided",
            "tokens": f"the token budget was spent with {what} not yet decided",
            "cost": f"the cost budget was spent with {what} not yet decided",
        }[self.stopped]
        return (
            f"Sequential design ({self.question}): {len(self.looks)} look(s) up to {last['n_seeds']} seeds, stopped "
            f"because {why} ({verdicts}; α = {last['alpha']:g} over all looks, exact group-sequential sign-flip "
            "tests)."
        )


def _roles_in(columns: Sequence[str]) -> dict[str, str]:
    from xaimetrics.benchmark._grid import BASELINE_METHOD
    from xaimetrics.consim import CONTROL_ROLES

    return {c: CONTROL_ROLES.get(c, "method") for c in columns if c != BASELINE_METHOD}


def unit_difference_table(results: pd.DataFrame, metric: str = "auto") -> pd.DataFrame:
    """Units × competitors: each competitor's difference with NoExplanation, like with like within each unit
    (:func:`~xaimetrics.benchmark._analysis.unit_differences`), indexed by the unit's keys (``seed`` among them), from a
    results store's rows."""
    from xaimetrics.benchmark._analysis import choose_metric, ranking_frame, unit_differences
    from xaimetrics.benchmark._grid import BASELINE_METHOD

    metric = choose_metric(results, metric)
    long = ranking_frame(results, metric=metric)
    if BASELINE_METHOD not in set(long["method"]):
        raise invalid(
            "results", "until_decided", "rows of the NoExplanation baseline", "none",
            "Keep NoExplanation in the grid's methods: every verdict is a difference with it.",
        )  # fmt: skip
    return unit_differences(long)


def _sum_column(results: pd.DataFrame, column: str) -> float:
    return float(pd.to_numeric(results.get(column, pd.Series(dtype=float)), errors="coerce").fillna(0).sum())


def until_decided(
    run: Callable[[Sequence[int]], pd.DataFrame],
    design: SequentialDesign,
    *,
    question: Question = "controls",
    margin: float | None = None,
    metric: str = "auto",
    first_seed: int = 0,
    pvalues: bool = True,
) -> SequentialResult:
    """Grow a grid seed by seed until its question is decided or the budget is spent.

    ``run(seeds)`` returns the results of the grid on those seeds (e.g. by rerunning a resumable
    :func:`~xaimetrics.benchmark.run_grid` and reading its store); the seeds are ``first_seed, first_seed + 1, …``.
    ``question="controls"`` stops when the positive control fails, or when every control is decided;
    ``"methods"`` when every concept method is decided (:func:`sequential_verdicts`). The last look's verdicts
    carry sequential p-values unless ``pvalues=False`` (a bisection per test: simulations skip it).

    Example:
        >>> from xaimetrics.benchmark._simulation import simulate_results
        >>> frame = simulate_results(n_seeds=16, methods=("NMF",), effects={"SurrogateWords": 0.2},
        ...                          method_sd=0.01, setting_sd=0.01)
        >>> design = SequentialDesign(16, start=6, step=2)
        >>> result = until_decided(lambda seeds: frame[frame["seed"].isin(seeds)], design)
        >>> result.stopped, [look["n_seeds"] for look in result.looks], result.looks[-1]["verdicts"]
        ('decided', [6], {'RandomWords': 'pass', 'SurrogateWords': 'pass'})
    """
    from xaimetrics.stats import DEFAULT_MARGIN

    if question not in ("controls", "methods"):
        raise invalid("question", "until_decided", "'controls' or 'methods'", question)
    margin = DEFAULT_MARGIN if margin is None else margin
    out = SequentialResult(question=question)
    all_seeds = tuple(range(first_seed, first_seed + design.max_seeds))
    for look, n_seeds in enumerate(design.looks(), start=1):
        seeds = all_seeds[:n_seeds]
        results = run(seeds)
        differences = unit_difference_table(results, metric)
        roles = _roles_in(list(differences.columns))
        verdicts = sequential_verdicts(
            differences, roles, design, seeds=seeds, margin=margin, question=question, pvalues=False
        )
        tokens = int(_sum_column(results, "prompt_tokens") + _sum_column(results, "completion_tokens"))
        cost = _sum_column(results, "cost_usd")
        out.looks.append({"look": look, "n_seeds": n_seeds, "alpha": design.alpha,
                          "spent": design.spent(n_seeds), "verdicts": verdicts["verdict"].to_dict(),
                          "tokens": tokens, "cost_usd": cost})  # fmt: skip
        out.verdicts, out.results, out.seeds = verdicts, results, seeds
        stop = _is_decided(verdicts, question)
        if stop:
            out.stopped = "decided"
        elif design.max_tokens is not None and tokens >= design.max_tokens:
            out.stopped = "tokens"
        elif design.max_cost_usd is not None and cost >= design.max_cost_usd:
            out.stopped = "cost"
        elif n_seeds == design.looks()[-1]:
            out.stopped = "seeds"
        if out.stopped:  # the last look: its p-values too
            out.verdicts = sequential_verdicts(
                differences, roles, design, seeds=seeds, margin=margin, question=question, pvalues=pvalues
            )
            break
    return out


def _is_decided(verdicts: pd.DataFrame, question: str) -> bool:
    if verdicts.empty:
        return False
    if question == "methods":
        return bool((verdicts["verdict"] != "undecided").all())
    positive = verdicts[verdicts["role"] == "positive"]["verdict"]
    negative = verdicts[verdicts["role"] == "negative"]["verdict"]
    if (positive == "fail").any() or (negative == "fail").any():
        return True  # the instrument is out, whatever the other control says
    return bool(len(positive)) and bool((verdicts["verdict"] != "undecided").all())


def gate_outcome(verdicts: pd.DataFrame | None) -> str:
    """``"valid"`` (every control passes), ``"invalid"`` (a control fails) or ``"undecided"``.

    Example:
        >>> table = pd.DataFrame({"role": ["positive", "negative"], "verdict": ["fail", "undecided"]})
        >>> gate_outcome(table)
        'invalid'
    """
    if verdicts is None or verdicts.empty:
        return "undecided"
    if (verdicts["verdict"] == "fail").any():
        return "invalid"
    positive = verdicts["role"] == "positive"
    if positive.any() and (verdicts["verdict"] == "pass").all():
        return "valid"
    return "undecided"
