"""Variance components of a grid (against statsmodels' ANOVA and known simulated components) and top-k stability."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from xaimetrics.benchmark._simulation import simulate_results
from xaimetrics.benchmark._variance import variance_components
from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.stats import top_k_stability

EFFECTS = {"NMF": 0.08, "SAE": 0.04, "PCA": -0.02, "ICA": 0.0}
PROMPTS = {"E2": 0.03, "E3": -0.03}
SIMULATORS = {"a": 0.05, "b": -0.05}
INTERPRETATIONS = {"x": 0.02, "y": -0.02}
SD = {"seed_sd": 0.06, "method_sd": 0.03, "setting_sd": 0.04}


def _grid(n_seeds: int, random_state: int) -> pd.DataFrame:
    return simulate_results(
        n_seeds=n_seeds, methods=tuple(EFFECTS), controls=(), effects=EFFECTS, prompt_types=tuple(PROMPTS),
        interpretations=tuple(INTERPRETATIONS), simulators=tuple(SIMULATORS), prompt_effects=PROMPTS,
        simulator_effects=SIMULATORS, interpretation_effects=INTERPRETATIONS, random_state=random_state, **SD,
    )  # fmt: skip


def test_mean_squares_match_statsmodels_anova() -> None:
    smf = pytest.importorskip("statsmodels.formula.api")
    from statsmodels.stats.anova import anova_lm

    rows = _grid(6, random_state=5)
    rows = rows[rows.method != "NoExplanation"]
    table = variance_components(rows, n_boot=0)
    fit = smf.ols(
        "score ~ C(seed) + C(interpretation) + C(prompt_type) + C(simulator) + C(method) + C(seed):C(method)",
        data=rows,
    ).fit()
    anova = anova_lm(fit, typ=2)
    ms = anova["sum_sq"] / anova["df"]
    n = len(rows)
    residual = ms["Residual"]
    interaction = ms["C(seed):C(method)"]
    expected = {
        "residual": residual,
        "seed × method": (interaction - residual) / (n / 24),
        "seed": (ms["C(seed)"] - interaction) / (n / 6),
        "method": (ms["C(method)"] - interaction) / (n / 4),
        "simulator": (ms["C(simulator)"] - residual) / (n / 2),
        "prompt_type": (ms["C(prompt_type)"] - residual) / (n / 2),
        "interpretation": (ms["C(interpretation)"] - residual) / (n / 2),
    }
    for name, value in expected.items():
        assert table.loc[name, "variance"] == pytest.approx(max(value, 0.0), rel=1e-8, abs=1e-12), name
    assert table.loc["residual", "df"] == anova.loc["Residual", "df"]
    assert table["share"].sum() == pytest.approx(1.0)


def test_recovers_known_components_within_monte_carlo_error() -> None:
    truth = {
        "seed": SD["seed_sd"] ** 2,
        "interpretation": np.var(list(INTERPRETATIONS.values()), ddof=1),
        "prompt_type": np.var(list(PROMPTS.values()), ddof=1),
        "simulator": np.var(list(SIMULATORS.values()), ddof=1),
        "method": np.var(list(EFFECTS.values()), ddof=1),
        "seed × method": SD["method_sd"] ** 2,
        "residual": SD["setting_sd"] ** 2,
    }
    estimates = np.array([
        variance_components(_grid(12, random_state=100 + r), n_boot=0)["variance"].reindex(list(truth)).to_numpy()
        for r in range(30)
    ])  # fmt: skip
    mean = estimates.mean(axis=0)
    se = estimates.std(axis=0, ddof=1) / math.sqrt(len(estimates))
    for name, true, m, s in zip(truth, truth.values(), mean, se, strict=True):
        assert abs(m - true) < 3.5 * s, (name, true, m, s)


def test_shares_have_bootstrap_intervals_over_seeds_and_absent_factors_have_no_row() -> None:
    rows = simulate_results(n_seeds=8, methods=("NMF", "PCA"), controls=(), simulators=("a", "b"),
                            effects={"NMF": 0.1}, random_state=2)  # fmt: skip
    table = variance_components(rows, n_boot=100, seed=1)
    assert table.index.tolist() == ["seed", "simulator", "method", "seed × method", "residual"]
    assert ((table.share_low <= table.share) & (table.share <= table.share_high)).all()
    assert table.equals(variance_components(rows, n_boot=100, seed=1))
    # the baseline's prompt type and empty interpretation are aliased with its method: no share of their own
    both = variance_components(
        simulate_results(n_seeds=6, methods=("NMF",), controls=(), interpretations=("x", "y"), random_state=0),
        include_baseline=True, n_boot=0,
    )  # fmt: skip
    assert both.loc["interpretation", "df"] == 1 and math.isnan(both.loc["prompt_type", "variance"])


def test_variance_components_checks_its_arguments() -> None:
    rows = simulate_results(n_seeds=4, methods=("NMF", "PCA"), controls=())
    with pytest.raises(InvalidParameterError, match="'factors' parameter of variance_components"):
        variance_components(rows, factors=["method"])
    with pytest.raises(InvalidParameterError, match="names among"):
        variance_components(rows, factors=["seed", "colour"])
    with pytest.raises(InvalidParameterError, match="at least two seeds"):
        variance_components(rows[rows.seed == 0])


def test_top_k_stability_by_hand() -> None:
    # four units; the halves holding unit 0 with 1, 2 or 3. B's half means: .65|.65, .8|.5, .65|.65 against
    # C's .6, so the top-2 sets are {A,B}|{A,B}, {A,B}|{A,C}, {A,B}|{A,B}
    s = pd.DataFrame({"A": [0.9, 0.9, 0.9, 0.9], "B": [0.8, 0.5, 0.8, 0.5], "C": [0.6, 0.6, 0.6, 0.6]})
    out = top_k_stability(s, k=2)
    assert out.n_draws == 3 and out.same_top_k == pytest.approx(2 / 3)
    assert out.top_k == ["A", "B"]
    assert out.table["top_k_share"].tolist() == pytest.approx([1.0, 5 / 6, 1 / 6])
    assert out.table["mean"].tolist() == pytest.approx([0.9, 0.65, 0.6])
    # bootstrap: B stays above C when at least two of the four resampled units are its 0.8 ones: 11/16
    boot = top_k_stability(s, k=2, scheme="bootstrap", n_draws=400, seed=0)
    assert abs(boot.same_top_k - 11 / 16) < 0.08
    assert boot.same_top_k == top_k_stability(s, k=2, scheme="bootstrap", n_draws=400, seed=0).same_top_k


def test_top_k_is_stable_for_separated_methods_and_not_for_equal_ones() -> None:
    rng = np.random.default_rng(0)
    separated = pd.DataFrame(
        {m: mu + rng.normal(0, 0.02, 20) for m, mu in zip("ABCDE", (0.9, 0.8, 0.6, 0.5, 0.4), strict=True)}
    )
    equal = pd.DataFrame({m: 0.6 + rng.normal(0, 0.05, 20) for m in "ABCDE"})
    assert top_k_stability(separated, k=2).same_top_k == 1.0
    assert top_k_stability(equal, k=2).same_top_k < 0.5
    with pytest.raises(InvalidParameterError, match="'k' parameter of top_k_stability"):
        top_k_stability(equal, k=5)
    with pytest.raises(InvalidParameterError, match="'scheme' parameter of top_k_stability"):
        top_k_stability(equal, scheme="jackknife")


def test_report_sections_say_when_the_grid_cannot_be_decomposed() -> None:
    from xaimetrics.benchmark._report import pipeline_sections

    rows = simulate_results(n_seeds=6, methods=("NMF", "PCA", "SAE"), controls=(), simulators=("a", "b"),
                            effects={"NMF": 0.1}, random_state=4)  # fmt: skip
    units = rows.groupby(["seed", "method"])["score"].mean().unstack().drop(columns="NoExplanation")
    full = pipeline_sections(rows, units, n_boot=20)
    assert "seed × method" in full[0]["md"] and "## Is the top 2 stable across seeds?" in full[1]["md"]
    one = pipeline_sections(rows[rows.seed == 0], units.iloc[:1], n_boot=20)
    assert len(one) == 1 and "Not computed: The 'results' parameter of variance_components" in one[0]["md"]


def test_report_sections_of_a_perfect_reader_say_there_is_no_variance() -> None:
    """A perfect reader scores every setting 1.0: the shares are undefined, and `benchmark run` crashed writing
    its report (ValueError: Encountered all NA values)."""
    from xaimetrics.benchmark._report import pipeline_sections

    rows = simulate_results(n_seeds=4, methods=("NMF", "PCA"), controls=(), random_state=0)
    rows = rows.assign(**{c: 1.0 for c in ("score", "expected_accuracy") if c in rows.columns})
    units = rows.groupby(["seed", "method"])["score"].mean().unstack().drop(columns="NoExplanation")
    (section, *_) = pipeline_sections(rows, units, n_boot=20)
    assert "scores do not vary" in section["md"]


def test_report_top_k_leaves_out_seeds_where_no_method_ran() -> None:
    """A gated run's gate seeds hold controls only: they are no draw of the methods (the demo's report counted
    its 8 gate seeds among the 21 it split into halves)."""
    from xaimetrics.benchmark._report import pipeline_sections

    rows = simulate_results(n_seeds=6, methods=("NMF", "PCA", "SAE"), controls=(), effects={"NMF": 0.1},
                            random_state=4)  # fmt: skip
    units = rows.groupby(["seed", "method"])["score"].mean().unstack().drop(columns="NoExplanation")
    gate = pd.DataFrame(np.nan, index=[100, 101, 102], columns=units.columns)
    plain = pipeline_sections(rows, units, n_boot=20)
    padded = pipeline_sections(rows, pd.concat([units, gate]), n_boot=20)
    assert "splits of the 6 seeds" in padded[1]["md"] and padded[1]["md"] == plain[1]["md"]
