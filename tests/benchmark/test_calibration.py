"""Calibration of ``assess`` on simulated grids (issue #21, acceptance): under the null, the share of grids where
it calls something significant, the intervals' miss rate and the share where the controls pass; under a known
effect, the power against the planner's prediction. Seeded, so each number is fixed; benchmarks/
bench_calibration.py runs the same checks with many more grids."""

from __future__ import annotations

import math

import numpy as np
import pytest

from xaimetrics.benchmark import assess
from xaimetrics.benchmark._simulation import simulate_results
from xaimetrics.stats import plan

#: the simulation's unit-difference SD with one arm per method: √(2·0.03² + 2·0.04²)
UNIT_SD = math.sqrt(2 * 0.03**2 + 2 * 0.04**2)


def _null_grids(n_grids: int, n_seeds: int) -> dict[str, float]:
    misses = intervals = any_significant = controls_pass = 0
    for g in range(n_grids):
        result = assess(simulate_results(n_seeds=n_seeds, random_state=10_000 * n_seeds + g))
        comparison = result.comparison
        misses += int(((comparison["ci_low"] > 0) | (comparison["ci_high"] < 0)).sum())
        intervals += len(comparison)
        any_significant += bool(comparison.loc[comparison["role"] == "method", "significant"].any())
        controls_pass += bool(result.verdict.detects)
    return {
        "miss": misses / intervals,
        "fwer": any_significant / n_grids,
        "controls": controls_pass / n_grids,
    }


def test_null_grids_of_5_seeds_6_methods_and_2_controls() -> None:
    rates = _null_grids(150, 5)
    assert rates["miss"] <= 0.08 and rates["fwer"] <= 0.10 and rates["controls"] <= 0.08, rates


@pytest.mark.slow
def test_null_grids_of_10_seeds() -> None:
    """At 10 seeds Holm's level is reachable (2/2¹⁰ < 0.05/6), so the family-wise rate is tested, not implied."""
    rates = _null_grids(150, 10)
    assert rates["miss"] <= 0.08 and rates["fwer"] <= 0.10 and rates["controls"] <= 0.08, rates


@pytest.mark.slow
def test_power_of_the_positive_control_matches_the_planner() -> None:
    """An effect of exactly the planner's minimum detectable difference (10 seeds, one-sided α = 0.05, power 0.8)
    is detected in about 80 % of grids: 120 grids give a Monte-Carlo SD of 0.037; the sign-flip test is a
    little less powerful than the t-test the planner solves, so the band is 0.8 − 0.15 … 0.8 + 0.1."""
    mdd = plan(UNIT_SD, n_units=10, alternative="greater").mdd
    detected = 0
    n_grids = 120
    for g in range(n_grids):
        frame = simulate_results(
            n_seeds=10, methods=("NMF",), effects={"SurrogateWords": mdd}, random_state=g
        )
        detected += assess(frame).verdict.positive["SurrogateWords"] == "pass"
    assert 0.65 <= detected / n_grids <= 0.9, detected / n_grids


#: prompts without learning phase (E1, and the baseline's NE1) are 0.3 harder for every arm: a competitor that
#: misses a prompt type in a seed changes the mix behind its seed mean (issue #34, "like with like")
HARDER_E1 = {"E1": -0.3, "NE1": -0.3}


def _missing_arm_rate(n_grids: int, missing_seeds: list[int], first: int) -> float:
    """Null grids of 8 seeds, 3 methods × E1/E2/E3; NMF's E3 setting missing in ``missing_seeds``: the share
    of grids where NMF's unadjusted p against NoExplanation is below 0.05."""
    hits = 0
    for g in range(n_grids):
        frame = simulate_results(
            n_seeds=8, methods=("NMF", "PCA", "SAE"), controls=(), prompt_types=("E1", "E2", "E3"),
            prompt_effects=HARDER_E1, missing={("NMF", "E3"): missing_seeds}, random_state=first + g,
        )  # fmt: skip
        hits += bool(assess(frame).comparison.loc["NMF", "pvalue"] < 0.05)
    return hits / n_grids


def test_a_setting_missing_in_half_the_seeds_keeps_the_false_positive_rate() -> None:
    """Null effect, NMF's E3 missing in 4 of 8 seeds: p < 0.05 in ≤ 0.05 + 2 Monte-Carlo SDs (0.02 at 120
    grids) of the grids. Comparing unmatched seed means it was 0.14 (150 grids); matched: 0.05."""
    rate = _missing_arm_rate(120, [0, 1, 2, 3], 70_000)
    assert rate <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / 120), rate


@pytest.mark.slow
def test_a_setting_missing_in_every_seed_keeps_the_false_positive_rate() -> None:
    """The same with NMF's E3 missing in all 8 seeds: unmatched seed means gave p < 0.05 in 0.61 of 150 grids."""
    rate = _missing_arm_rate(300, list(range(8)), 71_000)
    assert rate <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / 300), rate


def _two_simulator_grids(n_grids: int, n_seeds: int) -> dict[str, float]:
    """Null grids read by two simulators that share each seed's draw (the draw's luck with a method, SD 0.05,
    is the same for both; each setting adds its own noise, SD 0.02)."""
    misses = intervals = any_significant = 0
    for g in range(n_grids):
        frame = simulate_results(
            n_seeds=n_seeds, simulators=("a", "b"), method_sd=0.05, setting_sd=0.02,
            random_state=80_000 + 1_000 * n_seeds + g,
        )  # fmt: skip
        comparison = assess(frame).comparison
        misses += int(((comparison["ci_low"] > 0) | (comparison["ci_high"] < 0)).sum())
        intervals += len(comparison)
        any_significant += bool(comparison.loc[comparison["role"] == "method", "significant"].any())
    return {"miss": misses / intervals, "fwer": any_significant / n_grids}


def test_two_simulators_sharing_a_draw_are_one_unit() -> None:
    """2 simulators × 5 seeds: counted as 10 units, the intervals missed 0 in 0.20 of cases and the family-wise
    error was 0.27 (150 grids); as 5 units, 0.05 and 0 (the Holm level is out of reach at 5 seeds)."""
    rates = _two_simulator_grids(80, 5)
    assert rates["miss"] <= 0.08 and rates["fwer"] <= 0.05, rates


@pytest.mark.slow
def test_two_simulators_over_8_seeds_keep_intervals_and_family_wise_error() -> None:
    """2 simulators × 8 seeds (Holm reachable): counted as 16 units, miss 0.19 and family-wise 0.25 (150 grids)."""
    rates = _two_simulator_grids(300, 8)
    assert rates["miss"] <= 0.08 and rates["fwer"] <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / 300), rates


def test_unit_sd_of_the_simulation_is_what_the_planner_is_given() -> None:
    frame = simulate_results(n_seeds=400, methods=("NMF",), controls=(), random_state=1)
    units = assess(frame).units
    assert np.std(units["NMF"] - units["NoExplanation"], ddof=1) == pytest.approx(UNIT_SD, rel=0.1)


def test_sequential_design_spends_exactly_alpha_and_names_its_errors() -> None:
    from xaimetrics.benchmark import SequentialDesign
    from xaimetrics.exceptions import InvalidParameterError

    design = SequentialDesign(max_seeds=16, start=6, step=3, rho=2.0)
    assert design.looks() == [6, 9, 12, 15, 16]
    assert sum(design.level(n) for n in design.looks()) == pytest.approx(0.05)
    with pytest.raises(InvalidParameterError, match="'start' parameter of SequentialDesign"):
        SequentialDesign(max_seeds=4, start=5)
    with pytest.raises(InvalidParameterError, match=r"'n_seeds' parameter of SequentialDesign\.level"):
        design.level(7)


def test_sequential_design_stops_on_the_token_budget_and_says_so() -> None:
    from xaimetrics.benchmark import SequentialDesign
    from xaimetrics.benchmark._sequential import until_decided

    # six null methods with a spread that no look can settle at 6–7 seeds: only the token budget stops the run
    frame = simulate_results(n_seeds=12, controls=(), random_state=3).assign(prompt_tokens=100)
    design = SequentialDesign(max_seeds=12, start=6, max_tokens=5_000)
    result = until_decided(lambda seeds: frame[frame["seed"].isin(seeds)], design, question="methods")
    assert result.stopped == "tokens" and result.looks[-1]["tokens"] >= 5_000
    assert [look["n_seeds"] for look in result.looks] == [6, 7, 8]  # 8 seeds × 7 rows × 100 tokens ≥ 5,000
    assert "the token budget was spent with every method not yet decided" in result.sentence


@pytest.mark.slow
def test_sequential_looks_keep_the_false_pass_rate_under_alpha() -> None:
    """Under the null, "controls pass" at any of the looks (6…16 seeds) stays ≤ 0.08 over 100 sequences."""
    from xaimetrics.benchmark import SequentialDesign
    from xaimetrics.benchmark._sequential import until_decided

    design = SequentialDesign(max_seeds=16, start=6, step=2)
    passed = 0
    for g in range(100):
        frame = simulate_results(n_seeds=16, methods=("NMF",), random_state=50_000 + g)
        result = until_decided(lambda seeds, f=frame: f[f["seed"].isin(seeds)], design)
        passed += any(
            len(look["verdicts"]) == 2 and set(look["verdicts"].values()) == {"pass"} for look in result.looks
        )
    assert passed / 100 <= 0.08


def _twin_null_grids(n_grids: int, first: int) -> dict[str, float]:
    """Null grids of 8 seeds where each of NMF, PCA and SVD scores like its two randomised twins (real = twin):
    the share of grids where :func:`twin_comparison` says some method beats some twin (Holm over the 6
    comparisons, the family-wise error) and where some unadjusted ``p_twin`` is below 0.05."""
    from xaimetrics.benchmark import ranking_frame
    from xaimetrics.benchmark._twin_comparison import twin_comparison
    from xaimetrics.benchmark._twins import twin_method

    methods = ("NMF", "PCA", "SVD")
    competitors = (*methods, *(twin_method(m, kind) for m in methods for kind in ("all", "top")))
    holm_hits = raw_hits = 0
    for g in range(n_grids):
        frame = simulate_results(n_seeds=8, methods=competitors, controls=(), random_state=first + g)
        table = twin_comparison(ranking_frame(frame))
        holm_hits += bool(table["beats_twin"].any())
        raw_hits += bool((table["p_twin"] < 0.05).any())
    return {"fwer": holm_hits / n_grids, "unadjusted": raw_hits / n_grids}


def test_beating_the_twin_keeps_the_family_wise_error_under_the_null() -> None:
    """3 methods × 2 twins, 8 seeds (Holm's first level 0.05/6 is reachable: 1/2⁸ < 0.0083): some method is
    said to beat a twin in ≤ 0.05 + 2 Monte-Carlo SDs (0.028 at 120 grids) of the null grids; without Holm
    some p_twin < 0.05 in about a fifth of them (0.195 of 200 grids), which this would catch."""
    rates = _twin_null_grids(120, 90_000)
    assert rates["fwer"] <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / 120), rates
    assert rates["unadjusted"] > 0.1, rates


@pytest.mark.slow
def test_beating_the_twin_keeps_the_family_wise_error_over_many_grids() -> None:
    """The same over 1,000 null grids (Monte-Carlo SD 0.007)."""
    rates = _twin_null_grids(1_000, 91_000)
    assert rates["fwer"] <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / 1_000), rates
