"""Scoring (paper eq. 5): accuracy against f's predictions on the EP samples; failures counted, not fatal."""

from __future__ import annotations

import json
import math

from xaimetrics.consim import render_prompt, score_response
from xaimetrics.simulators import SimulatorResponse

CLASSES = ["World", "Sports", "Business", "Sci/Tech"]
LP = ["lp one", "lp two", "lp three", "lp four"]
LP_PRED = [0, 0, 1, 1]
EP = ["ep one", "ep two", "ep three", "ep four"]
EP_PRED = [3, 2, 3, 2]  # never equal to the LP predictions at the same position


def _prompt(prompt_type="NE2", **kwargs):
    return render_prompt(
        prompt_type,
        class_names=CLASSES,
        lp_samples=LP,
        lp_predictions=LP_PRED,
        ep_samples=EP,
        ep_predictions=EP_PRED,
        **kwargs,
    )


def test_perfect_answer_scores_one_against_ep_predictions() -> None:
    prompt = _prompt()
    result = score_response(prompt, prompt.reference_answer)
    assert result.score == 1.0 and result.n_correct == 4 and result.parse_rate == 1.0
    assert result.references == {"4": "Sci/Tech", "5": "Business", "6": "Sci/Tech", "7": "Business"}
    assert result.answers == result.references


def test_answering_the_lp_predictions_scores_zero() -> None:
    # Interpreto 0.5 scored EP answers against the LP half: this answer would have got 1.0 there
    prompt = _prompt()
    lp_like = "\n".join(f"Sample_{i}: {CLASSES[c]}" for i, c in zip(prompt.sample_ids, LP_PRED, strict=True))
    assert score_response(prompt, lp_like).score == 0.0


def test_partial_answers_count_missing_and_invalid_as_wrong() -> None:
    result = score_response(
        _prompt(), "Sample_4: Sci/Tech\nSample_5: Politics\nSample_6: sci tech\nSample_9: World"
    )
    assert result.score == 0.5
    assert (result.n_correct, result.n_parsed, result.n_missing, result.n_invalid) == (2, 2, 1, 1)
    assert result.statuses == {"4": "ok", "5": "invalid", "6": "ok", "7": "missing"}
    assert result.unexpected_ids == ("9",)
    assert result.answers["5"] is None and result.raw_answers["5"] == "Politics"


def test_anonymised_answers_map_back_to_real_names() -> None:
    prompt = _prompt("NE2-a")
    result = score_response(
        prompt, "Sample_4: Class_3\nSample_5: class_2\nSample_6: Class_0\nSample_7: Class_2"
    )
    assert result.score == 0.75
    assert result.answers == {"4": "Sci/Tech", "5": "Business", "6": "World", "7": "Business"}
    assert result.label == "NE2-a" and result.setting.anonymized
    # real names are not valid answers to an anonymised prompt
    assert score_response(prompt, "Sample_4: Sci/Tech").statuses["4"] == "invalid"


def test_upper_bound_is_never_a_score() -> None:
    prompt = _prompt(
        "U1",
        interpretation={0: ["x"]},
        global_importances=[[1.0], [1.0], [1.0], [1.0]],
        lp_local_importances=[[1.0]] * 4,
        ep_local_importances=[[1.0]] * 4,
    )
    result = score_response(prompt, prompt.reference_answer)
    assert (
        result.is_upper_bound
        and result.score is None
        and result.upper_bound == 1.0
        and result.accuracy == 1.0
    )


def test_simulator_response_accounting() -> None:
    prompt = _prompt()
    response = SimulatorResponse(
        text=prompt.reference_answer,
        model="m",
        prompt_tokens=120,
        completion_tokens=16,
        latency_s=0.25,
        cost_usd=0.001,
        cached=True,
        attempts=3,
    )
    result = score_response(prompt, response, seed=4)
    assert result.score == 1.0 and result.answered
    assert (result.model, result.prompt_tokens, result.completion_tokens, result.attempts, result.cached) == (
        "m",
        120,
        16,
        3,
        True,
    )
    assert (
        result.seed == 4
        and result.messages == prompt.messages
        and result.raw_answer == prompt.reference_answer
    )
    record = json.loads(json.dumps(result.to_dict()))
    assert record["score"] == 1.0 and record["messages"][0]["role"] == "system" and record["label"] == "NE2"


def test_failed_call_has_no_score_and_counts_every_sample_missing() -> None:
    result = score_response(
        _prompt(), SimulatorResponse(text="", error="RateLimitError after 4 attempts", attempts=4)
    )
    assert result.score is None and not result.answered and result.error.startswith("RateLimitError")
    assert result.n_missing == 4 and math.isnan(result.parse_rate)


def test_dry_run_keeps_prompt_and_references() -> None:
    prompt = _prompt()
    result = score_response(prompt, None)
    assert result.score is None and result.raw_answer is None and result.references["4"] == "Sci/Tech"
    assert prompt.score(prompt.reference_answer).score == 1.0
