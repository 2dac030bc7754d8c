"""One usage record: built per call, carried by responses and results, summed with one function."""

from __future__ import annotations

import dataclasses

import pytest

from xaimetrics._usage import UsageTracker
from xaimetrics.consim import render_prompt, score_response
from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.simulators import SimulatorResponse, Usage


def test_usage_adds_field_by_field_and_sums_from_zero() -> None:
    a = Usage.of_call(prompt_tokens=10, completion_tokens=2, cost_usd=0.25, latency_s=1.0, attempts=3)
    b = Usage.of_call(prompt_tokens=7, completion_tokens=1, cost_usd=0.5, latency_s=0.5, failed=True)
    c = Usage.of_call(prompt_tokens=4, cost_usd=9.0, cached=True, attempts=0)
    total = a + b + c
    assert (total.calls, total.cached_calls, total.failed_calls, total.attempts) == (3, 1, 1, 4)
    assert (total.prompt_tokens, total.completion_tokens, total.total_tokens) == (21, 3, 24)
    assert total.cost_usd == pytest.approx(0.75)  # the cached call costs nothing
    assert total.mean_latency_s == pytest.approx(0.5) and not total.cached and c.cached
    assert sum([a, b, c]) == sum([a, b, c], Usage()) == total
    assert Usage() + a == a and Usage().mean_latency_s == 0.0 and not Usage().cached
    with pytest.raises(TypeError):
        _ = a + 1  # type: ignore[operator]


def test_a_response_carries_the_usage_of_its_call() -> None:
    response = SimulatorResponse("Sample_0: a", "m", 12, 3, 0.5, 0.01, False, 2)  # the old positional order
    assert response.usage == Usage.of_call(
        prompt_tokens=12, completion_tokens=3, latency_s=0.5, cost_usd=0.01, attempts=2
    )
    assert (response.prompt_tokens, response.completion_tokens, response.total_tokens) == (12, 3, 15)
    assert (response.latency_s, response.cost_usd, response.cached, response.attempts) == (
        0.5,
        0.01,
        False,
        2,
    )
    # dataclasses.replace keeps the accounting, and an error makes it a failed call
    failed = dataclasses.replace(response, text="", error="content filter")
    assert failed.usage == dataclasses.replace(response.usage, failed_calls=1)
    assert dataclasses.replace(response, attempts=5).attempts == 5
    # a given usage, with keywords overriding its fields
    given = SimulatorResponse("x", usage=Usage.of_call(prompt_tokens=4, attempts=2), completion_tokens=6)
    assert (given.prompt_tokens, given.completion_tokens, given.attempts, given.usage.calls) == (4, 6, 2, 1)
    assert SimulatorResponse("x", cached=True, cost_usd=0.3).cost_usd == 0.0
    with pytest.raises(InvalidParameterError, match="'usage' parameter of SimulatorResponse must be a Usage"):
        SimulatorResponse("x", usage={"calls": 1})  # type: ignore[arg-type]


def test_a_result_carries_its_response_usage() -> None:
    prompt = render_prompt("NE1", class_names=["no", "yes"], ep_samples=["a"], ep_predictions=[1])
    response = SimulatorResponse("Sample_0: yes", prompt_tokens=9, completion_tokens=2, attempts=3)
    result = score_response(prompt, response)
    assert result.usage is response.usage
    assert (result.prompt_tokens, result.completion_tokens, result.attempts, result.cached) == (
        9,
        2,
        3,
        False,
    )
    record = result.to_dict()
    assert (record["prompt_tokens"], record["attempts"], record["cached"], record["cost_usd"]) == (
        9,
        3,
        False,
        0.0,
    )
    # a bare answer text is one call; no answer (a dry run) is no call at all
    assert score_response(prompt, "Sample_0: yes").usage == Usage.of_call()
    assert score_response(prompt, None).usage == Usage() and score_response(prompt, None).attempts == 0


def test_the_tracker_sums_usage_records() -> None:
    tracker = UsageTracker()
    tracker.record(SimulatorResponse("a", prompt_tokens=3, attempts=2))
    tracker.record(Usage.of_call(completion_tokens=4, failed=True))
    assert tracker.summary() == Usage.of_call(prompt_tokens=3, attempts=2) + Usage.of_call(
        completion_tokens=4, failed=True
    )
    with pytest.raises(InvalidParameterError, match=r"'response' parameter of UsageTracker\.record"):
        tracker.record("Sample_0: a")  # type: ignore[arg-type]


def test_usage_tracker_reset_and_cached_accounting() -> None:
    tracker = UsageTracker()
    tracker.record(
        SimulatorResponse("a", prompt_tokens=10, completion_tokens=2, cost_usd=0.3, latency_s=1.0, attempts=2)
    )
    tracker.record(
        SimulatorResponse("a", prompt_tokens=10, completion_tokens=2, cost_usd=0.3, cached=True, attempts=0)
    )
    summary = tracker.summary()
    assert (summary.calls, summary.cached_calls, summary.attempts, summary.total_tokens) == (2, 1, 2, 24)
    assert summary.cost_usd == pytest.approx(0.3) and summary.mean_latency_s == pytest.approx(0.5)
    assert summary.as_dict()["total_tokens"] == 24
    tracker.reset()
    assert tracker.summary().calls == 0
