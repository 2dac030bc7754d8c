"""Planning with the test that runs: the minimum detectable difference at a size, and the units a target needs.

Power is that of the exact sign-flip test (:mod:`xaimetrics.stats._power`, seeded Monte Carlo; exact tests are
coarser than t), and the equivalence plan is the TOST's. The answer is a :class:`Plan` of numbers; the sentences
that state it are the report's (``xaimetrics.benchmark``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from xaimetrics.stats._exact import DEFAULT_MARGIN, Alternative, finite_values, minimum_pvalue

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

PlannedTest = Literal["difference", "equivalence"]


@dataclass(frozen=True)
class Plan:
    """What a size can detect and what a target needs (:func:`plan`).

    Attributes:
        alpha: the family's level; ``level`` the one comparison's (``alpha / n_comparisons``, Holm's first step).
        power: the power every size is computed for.
        sd: the standard deviation of the unit differences planned from.
        n_units: the size asked about (``None`` when only a target was given).
        min_pvalue: the exact test's floor at ``n_units`` (NaN without ``n_units``).
        reachable: whether that floor is below ``level`` (``None`` without ``n_units``).
        mdd: the minimum detectable difference at ``n_units`` (``inf`` when not reachable; for the TOST, the
            smallest margin it shows; NaN when unknown).
        target: the difference planned for (the true difference, for the TOST).
        units_needed: the units ``target`` needs (``None`` above the search's range or when ``sd`` is not finite).
        test: ``"difference"`` or ``"equivalence"``; ``margin`` the TOST's margin (``None`` for a difference).
    """

    alpha: float
    power: float
    level: float
    sd: float
    n_units: int | None
    min_pvalue: float
    reachable: bool | None
    mdd: float
    target: float | None
    units_needed: int | None
    test: PlannedTest
    margin: float | None


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
    return plan(float(d.std(ddof=1)), n_units=d.size, alpha=alpha, power=power, alternative=alternative).mdd


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
    test: PlannedTest = "difference",
    margin: float = DEFAULT_MARGIN,
) -> Plan:
    """Plan a grid from the standard deviation ``sd`` of the unit differences (a pilot's, or a stated one).

    The level is ``alpha / n_comparisons`` (Holm's first step: the most any one comparison of a family gets).
    **Power is that of the exact sign-flip test** (``p < level``), simulated for normal unit differences
    (seeded Monte Carlo, cached; the t-test's beyond 30 units, where the two agree): exact tests are coarser than
    t (at the t planner's mdd the exact test had power 0.67 at 8 seeds, not 0.80). A size at which the exact test
    cannot reach the level at all (:func:`minimum_pvalue`) has no power, whatever the effect.

    ``test="equivalence"`` plans the negative control's TOST at ``alpha`` (each one-sided test at ``alpha``):
    ``target`` is then the true difference (default 0), ``units_needed`` the units the TOST needs to show
    equivalence within ``±margin`` with probability ``power``, and ``mdd`` the smallest margin it shows at
    ``n_units`` (``alternative`` and ``n_comparisons`` are ignored).

    Example:
        >>> p = plan(0.05, n_units=10, target=0.05)
        >>> round(p.mdd, 3), p.units_needed, plan(0.05, n_units=4).reachable
        (0.051, 11, False)
        >>> plan(0.12, target=0.0, test="equivalence").units_needed
        51
    """
    from xaimetrics.stats._power import equivalence_power, exact_power, solve_effect, solve_margin

    equivalence = test == "equivalence"
    side: Alternative = "greater" if equivalence else alternative
    level = alpha if equivalence else alpha / max(1, n_comparisons)
    smallest = next(n for n in range(1, 64) if minimum_pvalue(n, side) <= level)
    if equivalence and target is None:
        target = 0.0
    floor, reachable, mdd = math.nan, None, math.nan
    finite = math.isfinite(sd) and sd >= 0
    if n_units is not None:
        floor = minimum_pvalue(n_units, side)
        reachable = bool(floor <= level)
        if not reachable:
            mdd = math.inf
        elif n_units >= 2 and finite:
            if sd == 0:
                mdd = abs(target or 0.0) if equivalence else 0.0
            elif equivalence:
                mdd = float(solve_margin(n_units, level, power, abs(target or 0.0) / sd) * sd)
            else:
                mdd = float(solve_effect(n_units, level, power, alternative) * sd)
    needed = None
    if target is not None and finite:
        goal = target
        if sd == 0:
            reached = not equivalence or abs(goal) < margin
            needed = max(2, smallest) if reached else None
        else:
            sign = -1.0 if alternative == "less" else 1.0

            def enough(n: int) -> bool:
                if equivalence:
                    return equivalence_power(abs(goal) / sd, margin / sd, n, level) >= power
                return exact_power(sign * abs(goal) / sd, n, level, alternative) >= power

            guess = None if equivalence else _t_size(abs(goal) / sd, level, power, alternative)
            needed = _first_size(enough, max(2, smallest), max_units, guess=guess)
    return Plan(
        alpha=alpha, power=power, level=level, sd=float(sd), n_units=n_units, min_pvalue=floor,
        reachable=reachable, mdd=mdd, target=target, units_needed=needed, test=test,
        margin=margin if equivalence else None,
    )  # fmt: skip


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


@dataclass(frozen=True)
class Planning:
    """What a grid of ``n_units`` units can show, planned from the spread of its own unit differences.

    Attributes:
        n_units, alpha, power: the size, the level and the power planned for.
        target: the difference the plans aim at (the equivalence margin, for a grid's controls).
        min_pvalue_two_sided, min_pvalue_one_sided: the exact tests' floors at ``n_units``.
        sd: the pooled standard deviation of the unit differences (NaN with fewer than two units).
        methods, positive, negative: the :class:`Plan` of a method against the baseline at Holm's level, of
            the positive control, and of the negative control's TOST (``None`` where not planned).
    """

    n_units: int
    alpha: float
    power: float
    target: float
    min_pvalue_two_sided: float
    min_pvalue_one_sided: float
    sd: float = math.nan
    methods: Plan | None = None
    positive: Plan | None = None
    negative: Plan | None = None
