"""ConSimResult: the derived numbers of one evaluation (interval, parse rate, degeneracy) and its record."""

from __future__ import annotations

import json
import math

import pytest
from scipy.stats import binomtest

from xaimetrics.consim import render_prompt, score_response
from xaimetrics.simulators import SimulatorResponse

CLASSES = ["negative", "positive"]
EP = ["a", "b", "c", "d", "e", "f"]


def _prompt(predictions: list[int]):
    return render_prompt("NE1", class_names=CLASSES, ep_samples=EP, ep_predictions=predictions)


def _answer(labels: list[str]) -> SimulatorResponse:
    return SimulatorResponse("\n".join(f"Sample_{i}: {label}" for i, label in enumerate(labels)))


def test_the_score_interval_is_wilsons_over_the_ep_samples_and_the_parse_rate_counts_valid_answers() -> None:
    answer = _answer(["positive", "negative", "positive", "maybe", "positive", "negative"])
    result = score_response(_prompt([1, 0, 0, 1, 1, 1]), answer)
    assert (result.n_correct, result.n_parsed, result.n_invalid) == (3, 5, 1)
    assert result.score == 0.5 and result.accuracy == 0.5 and result.parse_rate == pytest.approx(5 / 6)
    wilson = binomtest(3, 6).proportion_ci(confidence_level=0.9, method="wilson")
    assert result.score_interval(0.9) == pytest.approx((wilson.low, wilson.high))
    assert result.expected_accuracy_interval() is None  # no probabilities


def test_a_dry_run_has_no_score_interval_and_no_parse_rate() -> None:
    result = score_response(_prompt([1, 0, 0, 1, 1, 1]), None)
    assert not result.answered and result.score_interval() is None and math.isnan(result.parse_rate)


def test_one_answer_for_every_sample_is_degenerate_unless_f_does_the_same() -> None:
    all_positive = _answer(["positive"] * 6)
    varied = score_response(_prompt([1, 0, 0, 1, 1, 1]), all_positive)
    assert varied.majority_share == 1.0 and varied.degenerate
    constant_f = score_response(_prompt([1] * 6), all_positive)
    assert constant_f.score == 1.0 and not constant_f.degenerate  # answering f's only class is right
    mixed = score_response(_prompt([1, 0, 0, 1, 1, 1]), _answer(["positive", "negative"] * 3))
    assert not mixed.degenerate


def test_the_record_is_json_and_holds_the_per_sample_answers() -> None:
    result = score_response(
        _prompt([1, 0, 0, 1, 1, 1]), _answer(["positive", "negative", "positive"]), seed=7
    )
    record = json.loads(json.dumps(result.to_dict()))
    assert record["label"] == result.label and record["seed"] == 7 and record["n_missing"] == 3
    assert record["answers"]["2"] == "positive" and record["answers"]["5"] is None
    assert record["statuses"]["5"] == "missing" and record["references"]["1"] == "negative"
    assert record["degenerate"] is False and record["messages"][0]["role"] in ("system", "user")
