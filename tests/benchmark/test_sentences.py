"""Every sentence of ``assess(...).summary`` states only numbers its tables hold (issue #34, item 4)."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pandas as pd
import pytest

from xaimetrics.benchmark import assess
from xaimetrics.benchmark._sentences import controls_sentence
from xaimetrics.benchmark._simulation import simulate_results
from xaimetrics.stats import control_verdict


def _summary(n_seeds: int, methods: tuple[str, ...], controls: bool, sd: float, seed: int = 0):
    frame = simulate_results(
        n_seeds=n_seeds, methods=methods, controls=("SurrogateWords", "RandomWords") if controls else (),
        effects={"SurrogateWords": 0.1}, seed_sd=sd, method_sd=sd, setting_sd=sd, random_state=seed,
    )  # fmt: skip
    return assess(frame)


SHAPES = [
    (n, methods, controls, sd)
    for n, methods, controls, sd in itertools.product(
        (1, 2, 3, 6, 12),
        ((), ("NMF",), ("NMF", "SAE", "ICA", "PCA", "SVD", "NoProjection")),
        (True, False),
        (0.0, 0.04),
    )
    if methods or controls
]


@pytest.mark.parametrize(("n", "methods", "controls", "sd"), SHAPES)
def test_no_sentence_contradicts_the_tables(
    n: int, methods: tuple[str, ...], controls: bool, sd: float
) -> None:
    result = _summary(n, methods, controls, sd)
    text = result.summary
    # (a) the stability sentence gives its true reason
    if n >= 2:
        assert "fewer than two seeds" not in text and "needs two or more seeds" not in text
    if len(methods) < 2:
        assert "Kendall" not in text
    # (b) never "detects 0.000" nor "more than 1000 seeds" beside a zero or unknown spread
    assert "difference of 0.000" not in text and "more than 1000" not in text
    # (c) no zero-width interval printed as if certain
    for low, high in re.findall(r"\[([+-]\d\.\d{3}), ([+-]\d\.\d{3})\]", text):
        assert low != high, text
    # (d) a control's verdict sits beside the p of the test that decided it
    for method, row in result.controls.iterrows():
        if row["verdict"] in ("pass", "fail"):
            assert row["pvalue"] < 0.05 or (row["verdict"] == "fail" and row["pvalue"] < 0.025)
        clause = f"{row['decided_by']} p"
        assert clause in text, (method, text)
    # (e) one detectable difference for the methods, from the planner
    assert "detects differences of about" not in text
    # (f) "whatever the data" only when the Holm level is unreachable, and with the seeds that would reach it
    if "whatever the data" in text:
        assert methods and 2 / 2**n >= 0.05 / len(methods)


def test_zero_spread_says_so() -> None:
    result = _summary(6, ("NMF",), True, 0.0)
    assert "all 6 seeds gave the same difference" in result.summary
    assert "unit SD 0" in result.summary


def test_stability_with_one_method_names_the_reason() -> None:
    result = _summary(6, ("NMF",), True, 0.04)
    assert "Ranking stability needs two or more concept methods (1 here)." in result.summary


def test_the_size_sentence_says_what_would_reach_significance() -> None:
    result = _summary(7, ("NMF", "SAE", "ICA", "PCA", "SVD", "NoProjection"), False, 0.04)
    assert "With 7 seed(s) the smallest possible two-sided p is 0.016" in result.summary
    assert "(8 seeds could; with 3 method(s) it could)" in result.summary


def test_a_failing_negative_control_shows_the_test_that_failed_it() -> None:
    base = np.linspace(0.5, 0.6, 8)
    units = pd.DataFrame({"NoExplanation": base, "SurrogateWords": base + 0.2, "RandomWords": base + 0.15})
    verdict = control_verdict(
        units, {"SurrogateWords": "positive", "RandomWords": "negative"}, baseline="NoExplanation"
    )
    row = verdict.table.loc["RandomWords"]
    assert row["verdict"] == "fail" and row["decided_by"] == "above +0.05"
    assert "fails: +0.150, all 8 seeds gave the same difference, above +0.05 p = 0.004" in controls_sentence(
        verdict
    )
