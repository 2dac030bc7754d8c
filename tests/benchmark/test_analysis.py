"""Analysis of stored results: baseline pairing, exclusions, prompt comparison, Spearman against scipy."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from xaimetrics.benchmark import ranking_frame, rankings_by
from xaimetrics.benchmark._analysis import parse_statistics, prompt_type_comparison, spearman_with_metrics
from xaimetrics.exceptions import InvalidParameterError


def rows(records):
    base = {"dataset": "d", "model": "m", "simulator": "s", "phase": "evaluation", "is_upper_bound": 0,
            "anonymized": 1, "n_samples": 4, "n_parsed": 4, "n_missing": 0, "n_invalid": 0}  # fmt: skip
    return pd.DataFrame([{**base, **r} for r in records])


RESULTS = rows([
    {"method": "NoExplanation", "interpretation": "", "prompt_type": "NE1", "seed": 0, "score": 0.50},
    {"method": "NoExplanation", "interpretation": "", "prompt_type": "NE2", "seed": 0, "score": 0.60},
    {"method": "NMF", "interpretation": "top_words", "prompt_type": "E1", "seed": 0, "score": 0.70},
    {"method": "NMF", "interpretation": "top_words", "prompt_type": "E2", "seed": 0, "score": 0.55},
    {"method": "NMF", "interpretation": "top_words", "prompt_type": "E3", "seed": 0, "score": 0.75},
    {"method": "NMF", "interpretation": "top_words", "prompt_type": "U1", "seed": 0, "score": 1.00,
     "is_upper_bound": 1},
    {"method": "NMF", "interpretation": "top_words", "prompt_type": "E2", "seed": 1000, "score": 0.10,
     "phase": "validation"},
    {"method": "PCA", "interpretation": "top_words", "prompt_type": "E2", "seed": 0, "score": None},
])  # fmt: skip


def test_ranking_frame_pairs_baselines_and_drops_u1_validation_and_missing():
    long = ranking_frame(RESULTS)
    got = {(r.method, r.prompt_type): r.score for r in long.itertuples()}
    assert got == {
        ("NMF", "E1"): 0.70, ("NMF", "E2"): 0.55, ("NMF", "E3"): 0.75,
        ("NoExplanation", "E1"): 0.50, ("NoExplanation", "E2"): 0.60, ("NoExplanation", "E3"): 0.60,
    }  # fmt: skip
    assert set(long["interpretation"]) == {"top_words"}
    ranking = rankings_by(long)[()]
    # one seed, one unit: NMF's mean (0.70 + 0.55 + 0.75) / 3 beats the baseline's (0.50 + 0.60 + 0.60) / 3
    assert ranking.loc["NMF", "win_share"] == pytest.approx(100.0)
    assert (
        ranking.loc["NMF", "mean_score"] == pytest.approx(2.0 / 3) and ranking.loc["NMF", "n_settings"] == 1
    )
    assert ranking["rank"].to_dict() == {"NMF": 1, "NoExplanation": 2}
    per_prompt = rankings_by(long, ["prompt_type"])
    assert per_prompt[("E2",)]["rank"].to_dict() == {"NoExplanation": 1, "NMF": 2}


def test_baseline_enters_every_interpretation():
    extra = rows(
        [{"method": "NMF", "interpretation": "llm_labels", "prompt_type": "E1", "seed": 0, "score": 0.4}]
    )
    long = ranking_frame(pd.concat([RESULTS, extra], ignore_index=True))
    baseline = long[(long["method"] == "NoExplanation") & (long["prompt_type"] == "E1")]
    assert sorted(baseline["interpretation"]) == ["llm_labels", "top_words"]


def test_ranking_frame_names_missing_columns():
    with pytest.raises(
        InvalidParameterError, match=r"'results' parameter of ranking_frame.*missing \['phase'\]"
    ):
        ranking_frame(RESULTS.drop(columns="phase"))


def test_prompt_type_comparison_gain_over_the_matching_baseline():
    table = prompt_type_comparison(RESULTS).set_index(["method", "prompt"])
    assert table.loc[("NMF", "E1-a"), "gain_vs_baseline"] == pytest.approx(0.20)
    assert table.loc[("NMF", "E2-a"), "gain_vs_baseline"] == pytest.approx(-0.05)
    assert table.loc[("NMF", "E3-a"), "gain_vs_baseline"] == pytest.approx(0.15)
    assert np.isnan(table.loc[("NMF", "U1-a"), "gain_vs_baseline"])
    assert table.loc[("NMF", "U1-a"), "mean"] == 1.0


def test_spearman_matches_scipy_on_asymmetric_values():
    ranking = pd.DataFrame(
        {"win_share": [90.0, 70.0, 40.0, 35.0, 10.0]}, index=["NMF", "SAE", "ICA", "PCA", "SVD"]
    )
    metrics = pd.DataFrame(
        {"l0": [4.0, 9.0, 3.0, 20.0, 25.0], "logits_kl": [0.01, 0.2, 0.05, 0.3, 0.1], "constant": 1.0},
        index=["SVD", "NMF", "ICA", "PCA", "SAE"],  # another order on purpose
    )
    table = spearman_with_metrics(ranking, metrics)
    aligned = metrics.loc[ranking.index]
    for column in ("l0", "logits_kl"):
        reference = stats.spearmanr(ranking["win_share"], aligned[column])
        assert table.loc[column, "rho"] == pytest.approx(reference.statistic)
        assert table.loc[column, "pvalue"] == pytest.approx(reference.pvalue)
    assert np.isnan(table.loc["constant", "rho"]) and table.loc["l0", "n_methods"] == 5
    p = table.loc[["l0", "logits_kl"], "pvalue"]  # Holm over the metrics with a p-value
    assert table.loc[p.idxmin(), "pvalue_adjusted"] == pytest.approx(min(1.0, 2 * p.min()))
    assert (table["significant"] == (table["pvalue_adjusted"] < 0.05)).all()


def test_parse_statistics_rate():
    frame = rows([
        {"method": "A", "interpretation": "", "prompt_type": "E1", "seed": 0, "score": 0.5, "n_parsed": 3,
         "n_missing": 1},
        {"method": "B", "interpretation": "", "prompt_type": "E1", "seed": 0, "score": 0.5, "n_parsed": 2,
         "n_invalid": 2},
    ])  # fmt: skip
    table = parse_statistics(frame)
    assert table.loc[0, "parse_rate"] == pytest.approx(5 / 8)
    assert table.loc[0, "n_missing"] == 1 and table.loc[0, "n_invalid"] == 2


# -- ranking any grid axis (issue #11, class 7) ----------------------------------------------------------------
def _grid_results(scores: dict, baseline: dict, axis_column: str | None = None) -> pd.DataFrame:
    """``scores[(method, value, prompt, seed)]`` for concept rows, ``baseline[(prompt, seed)]`` for NoExplanation.

    ``value`` is the interpretation, or the value of ``axis_column`` (then the interpretation is fixed)."""
    records = []
    for (method, value, prompt, seed), score in scores.items():
        record = {
            "method": method,
            "interpretation": value,
            "prompt_type": prompt,
            "seed": seed,
            "score": score,
        }
        if axis_column is not None:
            record.update(interpretation="top_words", **{axis_column: value})
        records.append(record)
    for (prompt, seed), score in baseline.items():
        record = {"method": "NoExplanation", "interpretation": "", "prompt_type": prompt, "seed": seed,
                  "score": score}  # fmt: skip
        if axis_column is not None:
            record[axis_column] = ""
        records.append(record)
    return rows(records)


def _by_hand(scores: dict, baseline: dict, values: list[str]) -> pd.DataFrame:
    """The paper's manual pivot (one row per (method, prompt, seed), one column per value + NoExplanation),
    averaged within each seed: the independent unit the statistics run on."""
    table = {}
    for method, value, prompt, seed in scores:
        base = baseline.get(({"E1": "NE1"}.get(prompt, "NE2"), seed))
        row = table.setdefault(
            (method, prompt, seed), {"seed": seed, **{v: np.nan for v in [*values, "NoExplanation"]}}
        )
        row[value] = scores[(method, value, prompt, seed)]
        row["NoExplanation"] = np.nan if base is None else base
    return pd.DataFrame(list(table.values())).groupby("seed").mean()


@settings(max_examples=40, deadline=None)
@given(
    data=st.data(),
    methods=st.lists(st.sampled_from(["NMF", "PCA", "ICA"]), min_size=1, max_size=3, unique=True),
    prompts=st.lists(st.sampled_from(["E1", "E2", "E3"]), min_size=1, max_size=3, unique=True),
    seeds=st.lists(st.integers(0, 9), min_size=1, max_size=3, unique=True),
    column=st.sampled_from(["interpretation", "importance"]),
)
def test_property_any_axis_ranks_like_the_manual_pivot(data, methods, prompts, seeds, column) -> None:
    from xaimetrics.benchmark import rank_methods
    from xaimetrics.benchmark._analysis import overall_statistics
    from xaimetrics.benchmark._ranking import win_matrix

    values = ["top_words", "llm_labels"] if column == "interpretation" else ["grad_x_input", "occlusion"]
    score = st.integers(0, 20).map(lambda k: k / 20)
    scores = {(m, v, p, s): data.draw(score) for m in methods for v in values for p in prompts for s in seeds}
    baseline = {(b, s): data.draw(score) for b in ("NE1", "NE2") for s in seeds}
    results = _grid_results(scores, baseline, None if column == "interpretation" else column)
    long = ranking_frame(results, axis=column)
    assert set(long[column]) == {*values, "NoExplanation"}
    ranking = rankings_by(long)[()]
    wide = _by_hand(scores, baseline, values)
    expected = rank_methods(wide)
    assert ranking["rank"].to_dict() == expected["rank"].to_dict()
    assert ranking["win_share"].to_dict() == pytest.approx(expected["win_share"].to_dict())
    wins, differences = overall_statistics(long)
    pd.testing.assert_frame_equal(wins, win_matrix(wide[list(wins.columns)]), check_names=False)
    assert set(differences.pvalue.columns) == {*values, "NoExplanation"}


def test_interpretation_axis_keeps_methods_apart_and_method_axis_is_unchanged() -> None:
    scores = {("NMF", "top_words", "E2", 0): 0.9, ("NMF", "llm_labels", "E2", 0): 0.5,
              ("PCA", "top_words", "E2", 0): 0.2, ("PCA", "llm_labels", "E2", 0): 0.4}  # fmt: skip
    results = _grid_results(scores, {("NE2", 0): 0.3})
    by_interpretation = ranking_frame(results, axis="interpretation")
    assert sorted(by_interpretation["method"].unique()) == ["NMF", "PCA"]
    # one unit: top_words (0.9 + 0.2) / 2 = 0.55 and llm_labels (0.5 + 0.4) / 2 = 0.45 both beat the baseline 0.3
    ranking = rankings_by(by_interpretation)[()]
    assert ranking.index.name == "interpretation"
    assert ranking.loc["top_words", "win_share"] == pytest.approx(100.0)
    assert ranking.loc["llm_labels", "win_share"] == pytest.approx(50.0)
    by_method = ranking_frame(results)
    assert list(by_method.columns) == ["dataset", "model", "simulator", "interpretation", "prompt_type",
                                       "anonymized", "seed", "method", "score"]  # fmt: skip


@pytest.mark.parametrize("axis", ["dataset", "score", "n_parsed", "nope", "seed"])
def test_unknown_axis_is_a_clear_error(axis: str) -> None:
    with pytest.raises(
        InvalidParameterError, match=r"'axis' parameter of ranking_frame must be a grid axis among"
    ):
        ranking_frame(RESULTS, axis=axis)


# -- like with like, and the unit is the draw (issue #34) -----------------------------------------------------
def test_unit_differences_match_within_each_setting_then_average_in_the_unit():
    from xaimetrics.benchmark._analysis import UNIT_KEYS, complete_blocks, unit_differences
    from xaimetrics.benchmark._simulation import simulate_results

    frame = simulate_results(
        n_seeds=4, methods=("NMF", "PCA"), controls=(), prompt_types=("E1", "E2", "E3"),
        simulators=("a", "b"), prompt_effects={"E1": -0.3, "NE1": -0.3},
        missing={("NMF", "E3"): [0, 1], ("PCA", "E1"): [2]}, random_state=11,
    )  # fmt: skip
    long = ranking_frame(frame)
    got = unit_differences(long)
    # the reference: merge every competitor row with the baseline row of the same setting, then average
    keys = ["dataset", "model", "simulator", "interpretation", "prompt_type", "anonymized", "seed"]
    base = long[long["method"] == "NoExplanation"]
    merged = long[long["method"] != "NoExplanation"].merge(base, on=keys, suffixes=("", "_base"))
    merged["d"] = merged["score"] - merged["score_base"]
    expected = merged.groupby([*UNIT_KEYS, "method"])["d"].mean().unstack("method")
    pd.testing.assert_frame_equal(got, expected, check_names=False)
    assert got.index.names == ["dataset", "seed"] and len(got) == 4  # two simulators: one unit per seed
    blocks = complete_blocks(long, ["NMF", "PCA", "NoExplanation"])
    assert set(blocks.loc[blocks["seed"] == 0, "prompt_type"]) == {"E1", "E2"}
    assert set(blocks.loc[blocks["seed"] == 3, "prompt_type"]) == {"E1", "E2", "E3"}
    with pytest.raises(
        InvalidParameterError, match=r"'baseline' parameter of unit_differences .* Got Nope\."
    ):
        unit_differences(long, baseline="Nope")


def test_a_missing_setting_no_longer_shifts_the_difference_with_the_baseline():
    """E1 (and NE1) are 0.3 harder than E2/E3 for every arm; NMF's E3 setting failed. Its seed mean over E1
    and E2 against the baseline's over E1, E2, E3 was off by 0.3 / 6 = 0.05; the matched difference is exact."""
    from xaimetrics.benchmark import assess
    from xaimetrics.benchmark._simulation import simulate_results

    frame = simulate_results(
        n_seeds=3, methods=("NMF", "PCA"), controls=(), prompt_types=("E1", "E2", "E3"),
        prompt_effects={"E1": -0.3, "NE1": -0.3}, missing={("NMF", "E3"): [0, 1, 2]},
        seed_sd=0.0, method_sd=0.0, setting_sd=0.0,
    )  # fmt: skip
    result = assess(frame)
    assert result.comparison.loc["NMF", "difference"] == pytest.approx(0.0, abs=1e-12)
    naive = result.units["NMF"] - result.units["NoExplanation"]
    assert naive.to_numpy() == pytest.approx([-0.05] * 3)  # what the unmatched means said
    assert (
        result.unmatched.loc["PCA", "outside_blocks"] == 3 and result.unmatched["without_baseline"].sum() == 0
    )
    assert "left out of the ranking (complete blocks)" in result.summary
