"""The statistics a reviewer would sign (issue #21): units, exact small-sample tests, multiplicity, equivalence,
no outcome-selected exclusion, planning — each through the public ``assess`` on synthetic frames."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import TTestPower

from xaimetrics.benchmark import assess
from xaimetrics.benchmark._analysis import unit_scores
from xaimetrics.benchmark._sentences import controls_sentence
from xaimetrics.benchmark._simulation import simulate_results
from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.stats import (
    baseline_comparison,
    control_verdict,
    equivalence_test,
    holm,
    minimum_pvalue,
    plan,
    robust_pvalue,
    sign_flip_test,
    skewness_corrected_pvalue,
    t_interval,
)

ROLES = {"SurrogateWords": "positive", "RandomWords": "negative"}


def _by_enumeration(d: np.ndarray, alternative: str) -> float:
    """The sign-flip p-value written out: the share of the 2ⁿ sign patterns at least as extreme."""
    observed = d.mean()
    means = np.array([np.mean(d * np.array(signs)) for signs in itertools.product((1, -1), repeat=d.size)])
    tol = 1e-12
    if alternative == "greater":
        return float(np.mean(means >= observed - tol))
    if alternative == "less":
        return float(np.mean(means <= observed + tol))
    return float(min(1.0, 2 * min(np.mean(means >= observed - tol), np.mean(means <= observed + tol))))


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_sign_flip_test_is_the_exact_enumeration(alternative: str) -> None:
    rng = np.random.default_rng(3)
    for n in (2, 3, 5, 8):
        d = rng.normal(0.02, 0.05, size=n)
        assert sign_flip_test(d, alternative=alternative) == pytest.approx(_by_enumeration(d, alternative))


def test_minimum_pvalue_is_reached_by_a_constant_difference_and_never_beaten() -> None:
    for n in (1, 2, 3, 5, 10):
        d = np.full(n, 0.1)
        assert sign_flip_test(d) == pytest.approx(minimum_pvalue(n)) == pytest.approx(min(1.0, 2 / 2**n))
        assert sign_flip_test(d, alternative="greater") == pytest.approx(1 / 2**n)
    assert sign_flip_test(np.zeros(4)) == 1.0 and math.isnan(sign_flip_test([]))


def test_holm_equals_statsmodels() -> None:
    rng = np.random.default_rng(0)
    for m in (1, 2, 6, 15):
        p = rng.uniform(0, 0.2, size=m)
        np.testing.assert_allclose(holm(p), multipletests(p, method="holm")[1])


def test_t_interval_equals_scipy() -> None:
    x = np.array([0.12, -0.03, 0.05, 0.08, 0.01])
    low, high = stats.t.interval(0.95, x.size - 1, loc=x.mean(), scale=stats.sem(x))
    assert t_interval(x)[1:] == pytest.approx((low, high))
    assert all(math.isnan(v) for v in t_interval([0.1])[1:])


def test_duplicating_rows_across_interpretations_and_prompt_types_leaves_p_unchanged() -> None:
    """W1: copies of a measurement (a control per interpretation, the baseline spread to E2 and E3) are one
    measurement of their seed."""
    frame = simulate_results(n_seeds=6, effects={"NMF": 0.05, "SurrogateWords": 0.1}, random_state=1)
    once = assess(frame)
    explanations = frame[frame["method"] != "NoExplanation"]
    copies = [frame]
    for interpretation, kind in (("llm_labels", "E2"), ("top_words", "E3"), ("llm_labels", "E3")):
        copies.append(explanations.assign(interpretation=interpretation, prompt_type=kind))
    duplicated = assess(pd.concat(copies, ignore_index=True))
    columns = ["difference", "ci_low", "ci_high", "pvalue", "pvalue_adjusted", "n_units"]
    pd.testing.assert_frame_equal(once.comparison[columns], duplicated.comparison[columns])
    assert once.verdict.detects == duplicated.verdict.detects
    assert (once.comparison["n_units"] == 6).all()


@settings(max_examples=60, deadline=None)
@given(
    effect=st.floats(-0.3, 0.3),
    noise=st.lists(st.floats(0.0, 0.05), min_size=16, max_size=16),
)
def test_property_two_seeds_never_give_p_below_005(effect: float, noise: list[float]) -> None:
    rows = simulate_results(n_seeds=2, effects=dict.fromkeys(["NMF", "PCA", "SurrogateWords", "RandomWords"], effect),
                            methods=("NMF", "PCA"), seed_sd=0.0, method_sd=0.0, setting_sd=0.0)  # fmt: skip
    rows["score"] = rows["score"] + np.resize(noise, len(rows))
    rows["expected_accuracy"] = rows["score"]
    result = assess(rows)
    assert (result.comparison["pvalue"] >= 0.05).all() and not result.comparison["significant"].any()
    assert (result.controls["pvalue"] >= 0.05).all() and result.verdict.detects is not True


def test_a_method_that_collapses_the_simulator_is_not_significant_in_the_primary_analysis() -> None:
    """W3: dropping a method's degenerate settings (decided from its own answers) selected on the outcome."""
    frame = simulate_results(n_seeds=10, effects={"NMF": 0.06}, degenerate={"NMF": [0, 3, 6, 8]},
                             methods=("NMF", "PCA"), method_sd=0.005, setting_sd=0.005, random_state=2)  # fmt: skip
    result = assess(frame)
    assert not result.comparison.loc["NMF", "significant"] and result.comparison.loc["NMF", "difference"] < 0
    assert result.comparison.loc["NMF", "n_units"] == 10
    assert result.sensitivity is not None and result.sensitivity.loc["NMF", "n_units"] == 6
    assert result.sensitivity.loc["NMF", "difference"] > 0.05
    assert "Sensitivity analysis (not the primary result)" in result.summary
    assert "kept in the analysis above" in result.summary


def _units(**columns: list[float]) -> pd.DataFrame:
    return pd.DataFrame(columns)


def test_detects_only_when_the_positive_control_passes_and_the_negative_control_is_shown_equivalent() -> None:
    base = [0.50, 0.60, 0.55, 0.45, 0.52, 0.58, 0.49, 0.61]
    helpful = [b + 0.1 + 0.005 * i for i, b in enumerate(base)]
    equivalent = [b + 0.004 * (-1) ** i for i, b in enumerate(base)]
    noisy = [b + 0.2 * (-1) ** i for i, b in enumerate(base)]  # mean ≈ 0, far too spread to show equivalence
    harmful = [b + 0.08 + 0.003 * i for i, b in enumerate(base)]
    cases = {
        (True, "pass"): _units(NoExplanation=base, SurrogateWords=helpful, RandomWords=equivalent),
        (False, "undecided"): _units(NoExplanation=base, SurrogateWords=helpful, RandomWords=noisy),
        (False, "fail"): _units(NoExplanation=base, SurrogateWords=helpful, RandomWords=harmful),
    }
    for (detects, negative), units in cases.items():
        verdict = control_verdict(units, ROLES, baseline="NoExplanation")
        assert verdict.detects is detects and verdict.negative["RandomWords"] == negative
        assert verdict.positive["SurrogateWords"] == "pass"
    useless = control_verdict(
        _units(NoExplanation=base, SurrogateWords=equivalent, RandomWords=equivalent),
        ROLES,
        baseline="NoExplanation",
    )
    assert useless.positive["SurrogateWords"] == "fail" and useless.detects is False
    assert "The controls fail" in controls_sentence(useless)
    few = control_verdict(
        _units(NoExplanation=base[:3], SurrogateWords=helpful[:3], RandomWords=equivalent[:3]),
        ROLES,
        baseline="NoExplanation",
    )
    assert few.positive["SurrogateWords"] == "undecided" and not few.decided
    assert "smallest possible one-sided p is 0.125" in controls_sentence(few)


def test_equivalence_test_against_the_margin() -> None:
    d = np.array([0.01, -0.02, 0.0, 0.01, -0.01, 0.005])
    assert equivalence_test(d, 0.05) == pytest.approx(1 / 64)
    assert equivalence_test(d + 0.1, 0.05) > 0.5  # outside the margin: not equivalent
    with pytest.raises(InvalidParameterError, match="'margin' parameter of equivalence_test"):
        equivalence_test(d, 0)


def test_comparison_columns_holm_and_significance_from_the_adjusted_p() -> None:
    frame = simulate_results(n_seeds=8, effects={"NMF": 0.08, "SurrogateWords": 0.15}, random_state=4)
    result = assess(frame)
    comparison = result.comparison
    for column in ("difference", "ci_low", "ci_high", "pvalue", "pvalue_adjusted", "significant", "n_units"):
        assert column in comparison.columns
    methods = comparison[comparison["role"] == "method"]
    np.testing.assert_allclose(methods["pvalue_adjusted"], multipletests(methods["pvalue"], method="holm")[1])
    assert (comparison["significant"] == (comparison["pvalue_adjusted"] < 0.05)).all()
    assert set(result.controls.index) == {"SurrogateWords", "RandomWords"}
    units = unit_scores(result.long)
    assert units.shape[0] == 8 and result.units.equals(units)


def test_best_method_needs_corrected_pairwise_wins() -> None:
    close = simulate_results(n_seeds=6, effects={"NMF": 0.03, "SAE": 0.02}, random_state=5)
    result = assess(close)
    assert not result.best.established and "No method is established as the best" in result.summary
    clear = simulate_results(n_seeds=12, methods=("NMF", "PCA"), effects={"NMF": 0.4}, random_state=5)
    result = assess(clear)
    assert result.best.method == "NMF" and result.best.established
    assert "NMF beats every other concept method in Holm-corrected pairwise tests" in result.summary


def test_the_summary_says_when_the_grid_cannot_reach_significance() -> None:
    result = assess(simulate_results(n_seeds=3, effects={"SurrogateWords": 0.3}))
    assert "With 3 seed(s) the smallest possible two-sided p is 0.250" in result.summary
    assert result.verdict.positive["SurrogateWords"] == "undecided"
    assert "p = < " not in result.summary
    assert result.planning.min_pvalue_one_sided == 0.125


def _realised_power(effect: float, n: int, level: float, alternative: str, grids: int, seed: int) -> float:
    """Share of simulated normal unit-difference vectors (SD 1) whose sign-flip test rejects at ``level``."""
    rng = np.random.default_rng(seed)
    samples = rng.normal(effect, 1.0, size=(grids, n))
    return float(np.mean([sign_flip_test(d, alternative=alternative) < level for d in samples]))  # type: ignore[arg-type]


def test_plan_gives_the_power_of_the_exact_test_it_plans_for() -> None:
    """Issue #34, item 3: at the t planner's mdd the exact test realised power 0.75 at 10 seeds (planned 0.80)."""
    p = plan(1.0, n_units=10, alpha=0.05, power=0.8)
    assert p.mdd > TTestPower().solve_power(nobs=10, alpha=0.05, power=0.8)  # the exact test is coarser
    realised = _realised_power(p.mdd, 10, 0.05, "two-sided", grids=400, seed=11)
    assert abs(realised - 0.8) <= 0.05, realised  # 400 grids: MC SE 0.02
    n = plan(1.0, target=p.mdd, alpha=0.05, power=0.8).units_needed
    assert n == 10 or plan(1.0, n_units=n - 1).mdd > p.mdd >= plan(1.0, n_units=n).mdd
    assert plan(0.08, n_units=5).mdd == math.inf  # 2/2⁵ > 0.05: unreachable at any effect
    assert plan(0.0001, target=0.05, n_comparisons=6).units_needed == 8  # 2/2⁸ ≤ 0.05/6 < 2/2⁷
    assert plan(0.05, n_units=6, target=0.05).mdd == pytest.approx(0.05 * plan(1.0, n_units=6).mdd)


@pytest.mark.slow
@pytest.mark.parametrize(("n", "alternative", "comparisons"), [(8, "two-sided", 1), (10, "two-sided", 6),
                                                              (10, "greater", 1), (20, "two-sided", 1)])  # fmt: skip
def test_realised_power_at_the_planned_mdd_is_the_planned_power(
    n: int, alternative: str, comparisons: int
) -> None:
    p = plan(1.0, n_units=n, alpha=0.05, power=0.8, alternative=alternative, n_comparisons=comparisons)  # type: ignore[arg-type]
    realised = _realised_power(p.mdd, n, p.level, alternative, grids=600, seed=n)
    assert abs(realised - 0.8) <= 0.05, realised  # 600 grids: MC SE 0.016


def test_plan_for_the_negative_control_equivalence() -> None:
    """The seeds the TOST needs to show a true difference of 0 within ±margin, and the power they give."""
    p = plan(0.05, target=0.0, test="equivalence", margin=0.05, power=0.8)
    n = p.units_needed
    assert p.test == "equivalence" and p.margin == 0.05 and 6 <= n <= 30
    rng = np.random.default_rng(5)
    shown = np.mean([equivalence_test(rng.normal(0.0, 0.05, n), 0.05) < 0.05 for _ in range(400)])
    assert abs(shown - 0.8) <= 0.06, shown  # MC SE 0.02 + the planner's 0.009
    assert plan(0.12, target=0.0, test="equivalence").units_needed > 40  # accuracy-scored grids need many
    assert plan(0.05, n_units=3, test="equivalence").mdd == math.inf  # 1/2³ > 0.05


def test_bad_levels_are_clear_errors() -> None:
    frame = simulate_results(n_seeds=3)
    with pytest.raises(InvalidParameterError, match="'alpha' parameter of assess"):
        assess(frame, alpha=2)
    with pytest.raises(InvalidParameterError, match="'margin' parameter of assess"):
        assess(frame, margin=0)


def test_baseline_comparison_on_units_by_hand() -> None:
    units = _units(NoExplanation=[0.5, 0.6, 0.55, 0.4, 0.52, 0.5], A=[0.6, 0.7, 0.6, 0.45, 0.5, 0.62])
    row = baseline_comparison(units, "NoExplanation").loc["A"]
    d = np.array(units["A"] - units["NoExplanation"])
    assert row["difference"] == pytest.approx(d.mean())
    assert row["pvalue"] == pytest.approx(max(_by_enumeration(d, "two-sided"), skewness_corrected_pvalue(d)))
    assert row["pvalue"] == robust_pvalue(d)
    assert row["pvalue_adjusted"] == row["pvalue"] and row["n_units"] == 6


def _negative_control_fails(d: np.ndarray) -> tuple[str, pd.Series]:
    units = _units(NoExplanation=[0.5] * d.size, RandomWords=list(0.5 + d))
    verdict = control_verdict(units, {"RandomWords": "negative"}, baseline="NoExplanation")
    return verdict.negative["RandomWords"], verdict.table.loc["RandomWords"]


@pytest.mark.parametrize("n", [10, 20])
def test_a_negative_control_inside_the_margin_rarely_fails(n: int) -> None:
    """Issue #34, item 1: at a true +0.025 (inside ±0.05) "differs from 0" failed it in 23 % / 29 % of grids."""
    rng = np.random.default_rng(n)
    verdicts = [_negative_control_fails(rng.normal(0.025, 0.05, n))[0] for _ in range(300)]
    assert verdicts.count("fail") / 300 <= 0.05 + 0.025  # 300 grids: MC SE 0.013


def test_a_negative_control_shown_outside_the_margin_fails_and_shows_that_tests_p() -> None:
    far = np.array([0.12, 0.15, 0.11, 0.14, 0.13, 0.16, 0.12, 0.15])
    verdict, row = _negative_control_fails(far)
    assert verdict == "fail" and row["decided_by"] == "above +0.05"
    assert row["pvalue"] == row["pvalue_outside_margin"] == sign_flip_test(far - 0.05, alternative="greater")
    assert row["pvalue_equivalence"] > 0.5  # the TOST p stays in its own column
    near = np.array([0.01, -0.02, 0.0, 0.01, -0.01, 0.005, 0.0, 0.01])
    verdict, row = _negative_control_fails(near)
    assert verdict == "pass" and row["pvalue"] == row["pvalue_equivalence"] < 0.05
    inside = np.array([0.04, 0.06, 0.05, 0.03, 0.07, 0.05, 0.04, 0.06])  # differs from 0, not shown outside
    verdict, row = _negative_control_fails(inside)
    assert verdict == "undecided" and sign_flip_test(inside) < 0.05
    assert row["decided_by"] == "equivalence (TOST)" and row["pvalue"] == row["pvalue_equivalence"]


def _skewed(rng: np.random.Generator, size: tuple[int, int]) -> np.ndarray:
    """Small gains, rare large losses, mean 0: +0.02 w.p. 0.8, −0.08 w.p. 0.2, plus N(0, 0.02)."""
    return np.where(rng.random(size) < 0.2, -0.08, 0.02) + rng.normal(0.0, 0.02, size)


def test_skewed_null_differences_do_not_pass_the_positive_control_too_often() -> None:
    """Issue #34, item 2: the sign-flip test assumes symmetry; with skewed differences of mean 0 it passed the
    positive control in 8 % of 20-seed grids. The skewness-corrected t-test must agree now."""
    rng = np.random.default_rng(34)
    grids = 400
    passes = 0
    for d in _skewed(rng, (grids, 20)):
        units = _units(NoExplanation=[0.5] * 20, SurrogateWords=list(0.5 + d))
        passes += (
            control_verdict(units, {"SurrogateWords": "positive"}, baseline="NoExplanation").positive[
                "SurrogateWords"
            ]
            == "pass"
        )
    assert passes / grids <= 0.05 + 0.02  # 400 grids: MC SE 0.011
    symmetric = rng.normal(0.0, 0.05, (grids, 10))
    assert np.mean([robust_pvalue(d, alternative="greater") < 0.05 for d in symmetric]) <= 0.05 + 0.02


def test_robust_pvalue_is_never_below_the_sign_flip_p_and_is_used_by_baseline_comparison() -> None:
    rng = np.random.default_rng(2)
    for d in [*_skewed(rng, (20, 10)), *rng.normal(0.02, 0.05, (20, 8))]:
        for alternative in ("two-sided", "greater", "less"):
            assert robust_pvalue(d, alternative=alternative) >= sign_flip_test(d, alternative=alternative)
    skewed = np.array([0.049, 0.04, 0.036, 0.043, 0.031, 0.036, 0.004, -0.05, 0.025, 0.06])
    assert (
        sign_flip_test(skewed, alternative="greater") < 0.05 <= robust_pvalue(skewed, alternative="greater")
    )
    units = _units(NoExplanation=[0.5] * 10, A=list(0.5 + skewed))
    row = baseline_comparison(units, "NoExplanation", alternative="greater").loc["A"]
    assert row["pvalue"] == pytest.approx(robust_pvalue(skewed, alternative="greater"))
