"""xaimetrics.stats returns numbers only: frozen result objects whose fields are the tables' and tests' values."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest

from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.stats import (
    BestMethod,
    ControlVerdict,
    Plan,
    SequentialTest,
    SplitHalfStability,
    TopKStability,
    baseline_comparison,
    best_method,
    control_verdict,
    equivalence_test,
    plan,
    robust_pvalue,
    sequential_sign_test,
    sign_flip_test,
    split_half_stability,
    top_k_stability,
)
from xaimetrics.stats._planning import minimum_detectable_difference

BASE = np.array([0.50, 0.61, 0.55, 0.42, 0.52, 0.58, 0.47, 0.60])
SCORES = pd.DataFrame(
    {
        "NoExplanation": BASE,
        "SurrogateWords": BASE + np.array([0.21, 0.18, 0.25, 0.2, 0.22, 0.19, 0.3, 0.17]),
        "RandomWords": BASE + np.array([0.01, -0.02, 0.0, 0.01, -0.01, 0.02, 0.0, -0.01]),
        "NMF": BASE + np.array([0.05, 0.12, -0.02, 0.08, 0.1, 0.04, 0.07, 0.09]),
        "PCA": BASE + np.array([0.0, 0.03, -0.04, 0.02, 0.01, -0.01, 0.02, 0.0]),
    }
)
ROLES = {"SurrogateWords": "positive", "RandomWords": "negative"}


def test_results_are_frozen_dataclasses_of_numbers() -> None:
    results = [
        control_verdict(SCORES, ROLES, baseline="NoExplanation"),
        best_method(SCORES[["NMF", "PCA"]]),
        plan(0.05, n_units=8, target=0.05),
        split_half_stability(SCORES[["NMF", "PCA"]]),
        top_k_stability(SCORES[["NMF", "PCA", "RandomWords"]], k=1),
        sequential_sign_test([0.1, 0.2, 0.05, 0.3, 0.1], looks=[5], fractions=[1.0]),
    ]
    kinds = (ControlVerdict, BestMethod, Plan, SplitHalfStability, TopKStability, SequentialTest)
    for result, kind in zip(results, kinds, strict=True):
        assert isinstance(result, kind) and dataclasses.is_dataclass(result)
        assert not any("sentence" in f.name for f in dataclasses.fields(result))
        with pytest.raises(dataclasses.FrozenInstanceError):
            result.__setattr__(dataclasses.fields(result)[0].name, None)


def test_control_verdict_fields_are_its_tests() -> None:
    verdict = control_verdict(SCORES, ROLES, baseline="NoExplanation", margin=0.05)
    positive = (SCORES["SurrogateWords"] - SCORES["NoExplanation"]).to_numpy()
    negative = (SCORES["RandomWords"] - SCORES["NoExplanation"]).to_numpy()
    assert verdict.table.loc["SurrogateWords", "pvalue"] == robust_pvalue(positive, alternative="greater")
    assert verdict.table.loc["RandomWords", "pvalue"] == equivalence_test(negative, 0.05)
    assert verdict.positive == {"SurrogateWords": "pass"} and verdict.negative == {"RandomWords": "pass"}
    assert verdict.detects is True and verdict.decided and verdict.ran and verdict.n_units == 8
    # a positive control the baseline matches: shown below +margin, so it fails; no positive control: detects None
    flat = SCORES.assign(SurrogateWords=SCORES["NoExplanation"])
    assert control_verdict(flat, ROLES, baseline="NoExplanation").positive == {"SurrogateWords": "fail"}
    alone = control_verdict(SCORES, {"RandomWords": "negative"}, baseline="NoExplanation")
    assert alone.detects is None and alone.negative == {"RandomWords": "pass"}
    missing = control_verdict(SCORES.drop(columns="NoExplanation"), ROLES, baseline="NoExplanation")
    assert not missing.ran and missing.table.empty and missing.n_units == 0


def test_baseline_comparison_names_its_baseline() -> None:
    table = baseline_comparison(SCORES, "NoExplanation", family=["NMF", "PCA"])
    d = (SCORES["NMF"] - SCORES["NoExplanation"]).to_numpy()
    assert table.loc["NMF", "pvalue"] == robust_pvalue(d)
    assert table.loc["NMF", "mdd"] == minimum_detectable_difference(d, alpha=0.025)  # Holm over 2 methods
    assert (
        table.loc["SurrogateWords", "pvalue_adjusted"] == table.loc["SurrogateWords", "pvalue"]
    )  # not in family
    with pytest.raises(InvalidParameterError, match="'baseline' parameter of baseline_comparison"):
        baseline_comparison(SCORES, "Baseline")


def test_plan_fields_agree_with_the_exact_test() -> None:
    p = plan(0.05, n_units=8, target=0.05, n_comparisons=2)
    assert p.level == 0.025 and p.reachable and p.min_pvalue == 2 / 2**8
    units = np.array([0.1, -0.05, 0.02, 0.08, -0.01, 0.04, 0.0, 0.06])
    sd = float(units.std(ddof=1))
    assert minimum_detectable_difference(units, alpha=0.025) == plan(sd, n_units=8, alpha=0.025).mdd
    assert plan(0.05, n_units=4).mdd == math.inf and plan(0.05, n_units=4).reachable is False
    assert plan(0.05, target=0.0, test="equivalence").margin == 0.05 and p.margin is None


def test_best_method_and_stability_on_a_clear_order() -> None:
    best = best_method(SCORES[["NMF", "PCA"]])
    assert best.method == "NMF" and best.established == bool(best.pairs["significant"].all())
    alone = best_method(SCORES[["NMF"]])
    assert alone.method is None and not alone.established and alone.pairs.empty
    stability = split_half_stability(SCORES[["SurrogateWords", "NMF", "NoExplanation"]])
    assert stability.n_seeds == 8 and stability.n_splits == 35 and stability.tau_min <= stability.tau_mean
    assert math.isnan(split_half_stability(SCORES.iloc[:1]).tau_mean)


def test_sequential_test_at_one_look_is_the_sign_flip_test() -> None:
    d = [0.1, 0.2, -0.05, 0.3, 0.1, 0.2, 0.15]
    out = sequential_sign_test(d, looks=[7], fractions=[1.0])
    assert out.pvalue == pytest.approx(sign_flip_test(d, alternative="greater"))
    assert out.rejected == (out.pvalue <= 0.05) and (out.look == 0) == out.rejected
