"""Regression detection: direction-aware, strict about the baseline file."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.representation._regression import check_regression, flatten_metrics, load_metrics


def test_direction_aware_detection():
    baseline = {"coherence.mean": 0.45, "stability.ari": 0.80, "human.pct_disagree": 0.20, "purity.mean": 0.6}
    current = {"coherence.mean": 0.34, "stability.ari": 0.95, "human.pct_disagree": 0.25, "purity.mean": 0.55}
    report = check_regression(current, baseline)
    assert report.lines() == ["coherence.mean: 0.450 → 0.340"]  # a 0.11 drop; the others are within 0.1
    worse_disagreement = check_regression({**current, "human.pct_disagree": 0.31}, baseline)
    assert "human.pct_disagree: 0.200 → 0.310" in worse_disagreement.lines()
    assert worse_disagreement.regressions[-1].direction == "lower"
    better = check_regression({"human.pct_disagree": 0.0}, baseline)  # lower is better: not a regression
    assert not better.detected and better.checked == ["human.pct_disagree"]


def test_custom_directions_thresholds_and_nan():
    report = check_regression(
        {"latency": 2.0, "score": 0.5, "alpha": math.nan},
        {"latency": 1.0, "score": 0.58, "alpha": 0.7},
        directions={"latency": "lower"},
        threshold={"score": 0.05, "*": 0.5},
    )
    assert [r.metric for r in report.regressions] == ["latency", "score", "alpha"]


def test_baseline_file_round_trip_and_errors(tmp_path):
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps({"metrics": {"coherence.mean": 0.4, "composite.score": 0.7}, "model": "m"}))
    assert load_metrics(path) == {"coherence.mean": 0.4, "composite.score": 0.7}
    assert not check_regression({"coherence.mean": 0.35, "composite.score": 0.7}, path).detected
    with pytest.raises(InvalidParameterError, match=r"1 metric\(s\) missing, e.g. \['stability.ari'\]"):
        check_regression({"coherence.mean": 0.4, "stability.ari": 0.9}, path)
    lenient = check_regression({"coherence.mean": 0.4, "stability.ari": 0.9}, path, missing="ignore")
    assert lenient.missing == ["stability.ari"] and not lenient.detected
    with pytest.raises(InvalidParameterError, match="must be an existing JSON file"):
        check_regression({"a": 1.0}, tmp_path / "nope.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(InvalidParameterError, match="is not valid JSON"):
        load_metrics(tmp_path / "bad.json")


def test_flatten_metrics_skips_text_and_keeps_undefined_values():
    flat = flatten_metrics(
        {"a": {"b": [1, 2]}, "c": "x", "d": [None, 0.5], "e": ["t"], "f": None, "g": False}
    )
    assert list(flat) == ["a.b.0", "a.b.1", "d.0", "d.1", "f"]
    assert flat["a.b.1"] == 2.0 and math.isnan(flat["d.0"]) and math.isnan(flat["f"])


def test_undefined_metrics_in_a_saved_baseline_are_kept_and_skipped(tmp_path):
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps({"metrics": {"agreement.alpha": None, "composite.score": 0.7}}))
    report = check_regression({"agreement.alpha": 0.2, "composite.score": 0.69}, path)
    assert not report.detected and report.checked == ["composite.score"]


# -- the regression gate cannot be disabled by a non-finite threshold (issue #11, class 13) ---------------------
BAD_THRESHOLDS = [float("nan"), float("inf"), -0.1, True, "0.1", None, {"coherence.*": float("nan")},
                  {"*": -1.0}, {"*": float("inf")}]  # fmt: skip


@pytest.mark.parametrize("threshold", BAD_THRESHOLDS, ids=repr)
def test_a_threshold_that_would_let_regressions_pass_is_rejected(threshold) -> None:
    with pytest.raises(
        InvalidParameterError, match=r"'threshold' parameter of check_regression must be a finite"
    ):
        check_regression({"coherence.mean": 0.1}, {"coherence.mean": 0.9}, threshold=threshold)


@settings(max_examples=100, deadline=None)
@given(
    before=st.floats(-10, 10),
    drop=st.floats(0, 10),
    threshold=st.floats(0, 10),
    direction=st.sampled_from(["higher", "lower"]),
)
def test_property_the_gate_fires_exactly_beyond_the_threshold(before, drop, threshold, direction) -> None:
    now = before - drop if direction == "higher" else before + drop
    report = check_regression({"m": now}, {"m": before}, threshold=threshold, directions={"m": direction})
    limit = before - threshold if direction == "higher" else before + threshold
    worse = now < limit if direction == "higher" else now > limit
    assert report.detected is worse


def test_interpretability_threshold_is_checked_before_any_work(capsys) -> None:
    from xaimetrics import cli

    for value in ("nan", "inf", "-1"):
        code = cli.main(["interpretability", "--dataset", "no_such_dataset", "--threshold", value])
        assert code == 1
        err = capsys.readouterr().err.strip().splitlines()
        expected = (
            "InvalidParameterError: The '--threshold' parameter of xaimetrics interpretability must be a finite "
            f"number ≥ 0, or {{pattern: number}}. Got {float(value)}. A NaN or infinite threshold would let every "
            "regression pass."
        )
        assert err == [expected]
