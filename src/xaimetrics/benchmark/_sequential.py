"""Add seeds until the controls are decided, with the type-I error controlled over the looks: :func:`until_decided`.

A grid too small to decide its controls (``"undecided"``, :func:`~xaimetrics.benchmark.control_verdict`) should
grow, but testing after every added seed at the full α inflates the false-positive rate (a random walk crosses
any fixed line eventually). :class:`SequentialDesign` spends α over the planned looks with a power-family
spending function ``α(t) = α · t^ρ``, ``t = seeds / max_seeds`` (Lan & DeMets 1983; ``ρ = 1`` spends evenly,
``ρ = 3`` resembles O'Brien–Fleming, saving α for the last looks). The exact tests are discrete: a look whose
level is below the smallest p its seeds allow (:func:`~xaimetrics.benchmark.minimum_pvalue`, ``1/2ⁿ`` one-sided)
cannot decide anything, so start where ``α · start / max_seeds ≥ 1/2^start`` (6 seeds of 16 at α = 0.05). Look ``k`` tests each control at the
increment ``α(t_k) − α(t_{k−1})``; by the union bound the probability of any false decision over all looks is at
most ``α``, whatever the dependence between looks and with the exact (discrete) sign-flip tests — conservative,
never anti-conservative. The run stops when every control is decided (pass or fail) or when the budget (seeds,
tokens or dollars) is spent, and says which.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from xaimetrics._validation import check_in_range, check_positive_int, invalid

if TYPE_CHECKING:
    from xaimetrics.benchmark._assessment import Assessment

__all__ = ["SequentialDesign", "SequentialResult", "until_decided"]


@dataclass(frozen=True)
class SequentialDesign:
    """Looks at ``start``, ``start + step``, … seeds up to ``max_seeds``; α spent as ``α · (n / max_seeds)^ρ``.

    Args:
        max_seeds: the seed budget (the last look).
        start: seeds at the first look.
        step: seeds added between looks.
        alpha: the type-I error over all looks.
        rho: the spending function's exponent (> 0).
        max_tokens, max_cost_usd: optional budgets on the results' tokens and cost, checked after each look.

    Example:
        >>> design = SequentialDesign(max_seeds=8, start=5)
        >>> design.looks(), [round(design.level(n), 4) for n in design.looks()]
        ([5, 6, 7, 8], [0.0312, 0.0063, 0.0062, 0.0062])
    """

    max_seeds: int
    start: int = 3
    step: int = 1
    alpha: float = 0.05
    rho: float = 1.0
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
        """The seed counts at which the controls are tested."""
        out = list(range(self.start, self.max_seeds + 1, self.step))
        return out if out[-1] == self.max_seeds else [*out, self.max_seeds]

    def spent(self, n_seeds: int) -> float:
        """α spent up to and including the look at ``n_seeds``."""
        return self.alpha * min(1.0, n_seeds / self.max_seeds) ** self.rho

    def level(self, n_seeds: int) -> float:
        """The level of the look at ``n_seeds``: the α spent since the previous look."""
        looks = self.looks()
        if n_seeds not in looks:
            raise invalid("n_seeds", "SequentialDesign.level", f"one of the looks {looks}", n_seeds)
        index = looks.index(n_seeds)
        return self.spent(n_seeds) - (self.spent(looks[index - 1]) if index else 0.0)


@dataclass
class SequentialResult:
    """What :func:`until_decided` did: each look's seeds, level and verdicts, why it stopped, the last
    assessment, and a sentence."""

    looks: list[dict[str, Any]] = field(default_factory=list)
    stopped: str = ""
    assessment: Assessment | None = None
    results: pd.DataFrame | None = None

    @property
    def table(self) -> pd.DataFrame:
        return pd.DataFrame(self.looks).set_index("look") if self.looks else pd.DataFrame()

    @property
    def sentence(self) -> str:
        if not self.looks:
            return "No look was made."
        last = self.looks[-1]
        verdicts = ", ".join(f"{m} {v}" for m, v in last["verdicts"].items())
        why = {
            "decided": "every control was decided",
            "seeds": "the seed budget was spent with a control still undecided",
            "tokens": "the token budget was spent with a control still undecided",
            "cost": "the cost budget was spent with a control still undecided",
        }[self.stopped]
        return (
            f"Sequential design: {len(self.looks)} look(s) up to {last['n_seeds']} seeds, stopped because {why} "
            f"({verdicts}; this look's level {last['level']:.4g}, α = {last['alpha']:g} spent over the looks, "
            "so the chance of a false verdict over all looks stays below α)."
        )


def until_decided(
    run: Callable[[Sequence[int]], pd.DataFrame],
    design: SequentialDesign,
    *,
    margin: float | None = None,
    metric: str = "auto",
) -> SequentialResult:
    """Grow a grid seed by seed (``run(seeds)`` returns the results of the grid on those seeds, e.g. by
    rerunning a resumable :func:`~xaimetrics.benchmark.run_grid` and reading its store) until its controls are
    decided or the budget is spent.

    Example:
        >>> from xaimetrics.benchmark._simulation import simulate_results
        >>> frame = simulate_results(n_seeds=16, methods=("NMF",), effects={"SurrogateWords": 0.2},
        ...                          method_sd=0.01, setting_sd=0.01)
        >>> design = SequentialDesign(16, start=6, step=2)
        >>> result = until_decided(lambda seeds: frame[frame["seed"].isin(seeds)], design)
        >>> result.stopped, [look["n_seeds"] for look in result.looks], result.looks[-1]["verdicts"]
        ('decided', [6], {'SurrogateWords': 'pass', 'RandomWords': 'pass'})
    """
    from xaimetrics.benchmark._assessment import assess
    from xaimetrics.benchmark._uncertainty import DEFAULT_MARGIN

    out = SequentialResult()
    for look, n_seeds in enumerate(design.looks(), start=1):
        results = run(tuple(range(n_seeds)))
        level = design.level(n_seeds)
        assessment = assess(results, metric=metric, alpha=level, margin=margin or DEFAULT_MARGIN)
        verdict = assessment.verdict
        verdicts = {**verdict.get("positive", {}), **verdict.get("negative", {})}
        tokens = int(
            pd.to_numeric(results.get("prompt_tokens", pd.Series(dtype=float)), errors="coerce")
            .fillna(0)
            .sum()
        )
        tokens += int(
            pd.to_numeric(results.get("completion_tokens", pd.Series(dtype=float)), errors="coerce")
            .fillna(0)
            .sum()
        )
        cost = float(
            pd.to_numeric(results.get("cost_usd", pd.Series(dtype=float)), errors="coerce").fillna(0).sum()
        )
        out.looks.append({"look": look, "n_seeds": n_seeds, "level": level, "alpha": design.alpha,
                          "verdicts": verdicts, "detects": verdict.get("detects"), "tokens": tokens, "cost_usd": cost})  # fmt: skip
        out.assessment, out.results = assessment, results
        if verdict.get("decided"):
            out.stopped = "decided"
            break
        if design.max_tokens is not None and tokens >= design.max_tokens:
            out.stopped = "tokens"
            break
        if design.max_cost_usd is not None and cost >= design.max_cost_usd:
            out.stopped = "cost"
            break
    else:
        out.stopped = "seeds"
    return out
