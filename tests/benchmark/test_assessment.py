"""Controls, probability scoring and the report's statements of certainty, on the toy grid."""

from __future__ import annotations

import math
import zlib
from typing import ClassVar

import numpy as np
import pandas as pd
import pytest
from toy_grid import PROVIDER_KWARGS

from xaimetrics.benchmark import Grid, Providers, ResultsStore, run_grid, write_report
from xaimetrics.benchmark._assessment import assess
from xaimetrics.benchmark._store import setting_key
from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.simulators import SimulatorResponse
from xaimetrics.stats import baseline_comparison, split_half_stability
from xaimetrics.stats._planning import minimum_detectable_difference


class ProbabilityOracle:
    """Gives f's class the probability ``BASE[method]`` (± a per-sample jitter), the rest spread evenly."""

    BASE: ClassVar[dict[str, float]] = {
        "SurrogateWords": 0.85,
        "NMF": 0.7,
        "PCA": 0.55,
        "RandomWords": 0.5,
        "NoExplanation": 0.5,
    }
    name = "probability_oracle"
    supports_probabilities = True

    def __init__(self) -> None:
        self._plans: dict[str, tuple] = {}

    def register(self, setting, prompt) -> None:
        self._plans["\n\n".join(m.content for m in prompt.messages)] = (setting, prompt)

    def generate(self, messages, *, answer_schema=None):
        setting, prompt = self._plans["\n\n".join(m.content for m in messages)]
        rng = np.random.default_rng(
            zlib.crc32(f"{setting.method}/{setting.seed}/{setting.prompt.name}".encode())
        )
        n = len(prompt.shown_classes)
        probabilities, lines = {}, []
        for sample_id, reference in zip(prompt.sample_ids, prompt.references, strict=True):
            p = float(np.clip(self.BASE[setting.method] + rng.normal(0, 0.08), 0.05, 0.95))
            row = [(1 - p) / (n - 1)] * n
            row[reference] = p
            probabilities[sample_id] = tuple(row)
            lines.append(f"Sample_{sample_id}: {prompt.shown_classes[int(np.argmax(row))]}")
        return SimulatorResponse("\n".join(lines), model=self.name, probabilities=probabilities)


def _grid(**changes):
    options = {"datasets": ("toy",), "models": ("toy",), "n_concepts": 3, "default_n_concepts": 3, "n_lp": 9,
               "n_ep": 9, "n_fit": 200, "concurrency": 4,"methods": ("NMF", "PCA", "NoExplanation"), "controls": True, "scoring": "probability",
               "simulators": ("probability_oracle",), "prompt_types": ("NE2", "E2", "E3"), "seeds": (0, 1, 2, 3, 4, 5)}  # fmt: skip
    options.update(changes)
    return Grid(**options, **_providers().grid_extras())


def _providers(oracle=ProbabilityOracle):
    kwargs = {
        **PROVIDER_KWARGS,
        "simulators": {**PROVIDER_KWARGS["simulators"], "probability_oracle": oracle},
    }
    return Providers(**kwargs)


def test_grid_with_controls_and_probabilities(tmp_path) -> None:
    grid = _grid()
    methods = {s.method for s in grid.settings()}
    assert methods == {"NMF", "PCA", "NoExplanation", "SurrogateWords", "RandomWords"}
    summary = run_grid(grid, tmp_path / "r.sqlite", providers=_providers(), progress=False)
    assert summary.failed == 0
    with ResultsStore(tmp_path / "r.sqlite") as store:
        frame = store.to_frame()
    assert frame["expected_accuracy"].notna().all() and set(frame["scoring"]) == {"probability"}
    result = assess(frame)
    assert result.metric == "expected_accuracy"
    assert result.verdict.detects is True
    assert result.controls.loc["SurrogateWords", "verdict"] == "pass"
    assert result.controls.loc["RandomWords", "verdict"] == "pass"  # shown within ±0.05 of the baseline
    assert "The controls pass" in result.summary and "NMF" in result.summary
    assert "SurrogateWords" not in result.ranking.index and result.ranking.index[0] == "NMF"
    assert (
        result.ranking.loc["NMF", "ci_low"]
        < result.ranking.loc["NMF", "mean_score"]
        < result.ranking.loc["NMF", "ci_high"]
    )
    paths = write_report(frame, tmp_path / "report", grid=grid.to_dict())
    markdown = paths["report_md"].read_text()
    assert "## What this grid can conclude" in markdown and "The controls pass" in markdown
    assert (
        "expected accuracies" in markdown and (tmp_path / "report" / "vs_baseline.png").stat().st_size > 5_000
    )


class UselessOracle(ProbabilityOracle):
    BASE = dict.fromkeys(ProbabilityOracle.BASE, 0.5)


def test_a_failing_positive_control_is_said_in_words(tmp_path) -> None:
    run_grid(_grid(), tmp_path / "r.sqlite", providers=_providers(UselessOracle), progress=False)
    with ResultsStore(tmp_path / "r.sqlite") as store:
        result = assess(store.to_frame())
    assert result.verdict.detects is False
    assert "did not detect an informative explanation" in result.summary


def test_accuracy_keys_are_unchanged_and_probability_keys_differ() -> None:
    grid = _grid(scoring="accuracy")
    setting = grid.settings()[0]
    old = {k: v for k, v in setting.params().items()}
    assert "scoring" not in old and setting.key == setting_key(old)
    assert _grid().settings()[0].key != setting.key


def test_grid_validation_of_the_new_options() -> None:
    with pytest.raises(InvalidParameterError, match="'scoring' parameter of Grid"):
        Grid(scoring="logits", simulators=("perfect",))
    with pytest.raises(InvalidParameterError, match="'controls' parameter of Grid"):
        Grid(controls="yes", simulators=("perfect",))
    with pytest.raises(InvalidParameterError, match="'simulators' parameter of Grid must be among"):
        Grid(simulators=("local:gpt-9",))
    assert Grid(simulators=("local:qwen2.5-coder-1.5b-instruct-q4_k_m",)).simulators[0].endswith("q4_k_m")


def test_minimum_detectable_difference_is_the_exact_tests_and_above_the_t_tests() -> None:
    from statsmodels.stats.power import TTestPower

    from xaimetrics.stats._power import solve_effect

    d = np.array([0.12, -0.03, 0.05, 0.08, 0.01, 0.02, -0.01])
    t_based = TTestPower().solve_power(nobs=7, alpha=0.05, power=0.8) * d.std(ddof=1)
    assert minimum_detectable_difference(d) == pytest.approx(solve_effect(7, 0.05, 0.8) * d.std(ddof=1))
    assert minimum_detectable_difference(d) > t_based  # the exact test is coarser (issue #34)
    assert math.isnan(minimum_detectable_difference([0.1]))
    assert minimum_detectable_difference(d[:5]) == math.inf  # 5 units: p ≥ 0.0625, nothing is detectable


def test_baseline_comparison_keeps_constant_wins_at_their_exact_p() -> None:
    scores = pd.DataFrame({"NoExplanation": [0.5, 0.6, 0.55, 0.4, 0.52], "A": [0.6, 0.7, 0.6, 0.45, 0.5],
                           "B": [0.55, 0.65, 0.6, 0.45, 0.57]})  # fmt: skip
    table = baseline_comparison(scores, "NoExplanation")
    assert table.loc["B", "difference"] == pytest.approx(0.05)
    assert table.loc["B", "pvalue"] == pytest.approx(0.0625)  # 5 equal wins: the smallest p there is, not 0
    assert not table.loc["B", "significant"]
    assert table.loc["A", "ci_low"] < table.loc["A", "difference"] < table.loc["A", "ci_high"]


def test_split_half_stability_detects_unstable_orders() -> None:
    rows = []
    for seed in range(6):
        flip = seed % 2  # the order of A and B alternates with the seed: unstable across halves
        rows.append({"A": 0.6 + 0.1 * flip, "B": 0.7 - 0.1 * flip, "C": 0.1})
    result = split_half_stability(pd.DataFrame(rows))
    assert result.n_seeds == 6 and result.n_splits == 10
    assert result.tau_mean == pytest.approx(1 / 3)  # A and B swap in every split, C stays last
    stable = pd.DataFrame(rows).assign(A=lambda f: f["A"] + 1.0)
    assert split_half_stability(stable).tau_min == 1.0
    assert math.isnan(split_half_stability(pd.DataFrame(rows[:1])).tau_mean)


def test_degenerate_settings_are_kept_flagged_and_counted() -> None:
    base = {"dataset": "d", "model": "m", "simulator": "s", "interpretation": "top_words", "phase": "evaluation",
            "is_upper_bound": 0, "anonymized": 1, "n_concepts_shown": 3}  # fmt: skip
    rows = []
    for seed in range(4):
        rows.append(
            {
                **base,
                "seed": seed,
                "method": "NoExplanation",
                "prompt_type": "NE2",
                "score": 0.5,
                "degenerate": 0,
            }
        )
        rows.append({**base, "seed": seed, "method": "NMF", "prompt_type": "E2", "score": 0.6 + 0.01 * seed,
                     "degenerate": int(seed == 0)})  # fmt: skip
        rows.append({**base, "seed": seed, "method": "PCA", "prompt_type": "E2", "score": 0.5, "degenerate": 0,
                     "n_concepts_shown": 0})  # fmt: skip
    result = assess(pd.DataFrame(rows))
    assert result.comparison.loc["NMF", "n_units"] == 4  # the primary analysis keeps every setting
    assert (
        int(result.degenerate["degenerate"].sum()) == 1
        and "1 of 12 settings had degenerate" in result.summary
    )
    assert result.sensitivity.loc["NMF", "n_units"] == 3  # seed 0 dropped for every method
    assert result.empty.set_index("method").loc["PCA", "share"] == 1.0 and "(PCA)" in result.summary


def test_all_degenerate_settings_are_kept_and_said() -> None:
    base = {"dataset": "d", "model": "m", "simulator": "s", "interpretation": "top_words", "phase": "evaluation",
            "is_upper_bound": 0, "anonymized": 1, "n_concepts_shown": 3, "degenerate": 1}  # fmt: skip
    rows = [{**base, "seed": s, "method": m, "prompt_type": k, "score": 0.5 + 0.01 * s * (m == "NMF")}
            for s in range(3) for m, k in (("NoExplanation", "NE2"), ("NMF", "E2"))]  # fmt: skip
    result = assess(pd.DataFrame(rows))
    assert result.summary.startswith("Nearly every setting is degenerate")
    assert result.comparison.loc["NMF", "n_units"] == 3


# -- assess on any subset of a grid (issue #34) ----------------------------------------------------------------
def _subset(frame: pd.DataFrame, *, baseline: bool = True) -> pd.DataFrame:
    return frame if baseline else frame[frame["method"] != "NoExplanation"]


def test_the_gate_grid_of_baseline_and_controls_gives_control_verdicts() -> None:
    """The lead's first grid: NoExplanation and the controls only (before, a KeyError 'significant')."""
    from xaimetrics.benchmark._simulation import simulate_results

    frame = simulate_results(n_seeds=8, methods=(), effects={"SurrogateWords": 0.2}, random_state=4)
    result = assess(frame)
    assert result.verdict.positive == {"SurrogateWords": "pass"}
    assert set(result.comparison["role"]) == {"positive control", "negative control"}
    assert result.ranking.empty and result.best.method is None
    assert result.planning.methods is None and result.planning.positive.n_units == 8
    assert "8 independent units" in result.summary and "Ranking stability" not in result.summary
    assert "a method against NoExplanation" not in result.summary


def test_methods_without_a_baseline_are_ranked_and_say_that_nothing_is_compared_with_it() -> None:
    from xaimetrics.benchmark._simulation import simulate_results

    frame = _subset(simulate_results(n_seeds=5, effects={"NMF": 0.3}, random_state=5), baseline=False)
    result = assess(frame)
    assert result.comparison.empty and result.differences.empty
    assert result.ranking.index[0] == "NMF" and "SurrogateWords" not in result.ranking.index
    assert result.summary.startswith("The results hold no NoExplanation rows")
    assert "The controls cannot be tested" in result.summary
    assert result.verdict.detects is None


def test_controls_without_a_baseline_or_methods_are_a_clear_error() -> None:
    from xaimetrics.benchmark._simulation import simulate_results

    frame = _subset(simulate_results(n_seeds=5, methods=("NMF",)), baseline=False)
    with pytest.raises(
        InvalidParameterError,
        match=r"'results' parameter of assess must be NoExplanation rows .* Got NMF, RandomWords, "
        r"SurrogateWords without NoExplanation\. Add the baseline's settings",
    ):
        assess(frame)
    only_baseline = simulate_results(n_seeds=3, methods=(), controls=())
    with pytest.raises(
        InvalidParameterError, match=r"at least two methods in shared settings\. Got 0 method"
    ):
        assess(only_baseline)


def test_one_seed_gives_undecided_verdicts_and_no_intervals() -> None:
    from xaimetrics.benchmark._simulation import simulate_results

    result = assess(simulate_results(n_seeds=1, random_state=2))
    assert set(result.controls["verdict"]) == {"undecided"} and result.verdict.decided is False
    assert result.comparison["ci_low"].isna().all() and (result.comparison["n_units"] == 1).all()
    assert (
        math.isnan(result.stability.tau_mean)
        and "Ranking stability needs two or more seeds (1 here)" in result.summary
    )


def test_one_method_and_the_baseline_without_controls() -> None:
    from xaimetrics.benchmark._simulation import simulate_results

    result = assess(simulate_results(n_seeds=6, methods=("NMF",), controls=(), effects={"NMF": 0.3}))
    assert list(result.comparison.index) == ["NMF"] and result.comparison.loc["NMF", "pvalue"] == 2 / 2**6
    assert list(result.ranking.index) == ["NMF", "NoExplanation"] and result.best.method is None
    assert result.verdict.detects is None and "No positive control was run" in result.summary
    assert (
        "Ranking stability needs two or more concept methods (1 here)" in result.summary
    )  # nothing to order


def test_methods_and_baseline_without_controls() -> None:
    from xaimetrics.benchmark._simulation import simulate_results

    result = assess(simulate_results(n_seeds=6, controls=(), random_state=8))
    assert set(result.comparison["role"]) == {"method"} and len(result.ranking) == 7
    assert result.controls.empty and result.verdict.ran is False


# -- split-half stability draws its splits, never lists them (issue #34) --------------------------------------
@pytest.mark.timeout(120)  # a hang guard, not a timed assertion: listing C(60, 30) splits never ends
def test_split_half_stability_on_60_units_draws_max_splits_distinct_balanced_splits() -> None:
    from xaimetrics.stats._stability import half_splits

    rng = np.random.default_rng(0)
    scores = pd.DataFrame(rng.normal(size=(60, 4)) + np.arange(4) / 2, columns=list("ABCD"))
    result = split_half_stability(scores, max_splits=40)
    assert result.n_splits == 40 and result.n_seeds == 60 and result.tau_mean > 0.5
    splits = half_splits(60, 40, seed=0)
    assert len(set(splits)) == 40 and all(len(s) == 30 and 0 in s for s in splits)
    assert splits == half_splits(60, 40, seed=0) != half_splits(60, 40, seed=1)  # seeded
    assert len(half_splits(7, 50, seed=0)) == 35  # C(7, 3) = 35 ≤ 50: every split, listed


@pytest.mark.timeout(300)
def test_assess_on_40_seeds_generates_at_most_max_splits() -> None:
    from xaimetrics.benchmark._simulation import simulate_results

    result = assess(simulate_results(n_seeds=40, random_state=6))
    assert result.stability.n_seeds == 40 and result.stability.n_splits == 50
