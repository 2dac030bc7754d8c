"""evaluate_prompts: one answer per prompt, scored in order; dry runs; simulator errors raised or recorded."""

from __future__ import annotations

import pytest

from xaimetrics.consim import render_prompt
from xaimetrics.consim._asking import evaluate_prompts
from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.simulators import AnswerSchema, ChatMessage, ScriptedSimulator, SimulatorResponse

CLASSES = ["negative", "positive", "mixed"]


def _prompts() -> list:
    return [
        render_prompt(
            "NE1", class_names=CLASSES, ep_samples=["fun", "dull", "so-so"], ep_predictions=[1, 0, 2]
        ),
        render_prompt("NE1", class_names=CLASSES, ep_samples=["great", "bad"], ep_predictions=[1, 1]),
    ]


class Failing:
    """A simulator whose service is down."""

    def generate(
        self, messages: list[ChatMessage], *, answer_schema: AnswerSchema | None = None
    ) -> SimulatorResponse:
        raise ConnectionError("service down")


def test_each_prompt_is_asked_and_scored_in_order() -> None:
    answers = [
        "Sample_0: positive\nSample_1: negative\nSample_2: positive",
        "Sample_0: positive\nSample_1: mixed",
    ]
    results = evaluate_prompts(_prompts(), ScriptedSimulator(answers), seed=4)
    assert [r.score for r in results] == [pytest.approx(2 / 3), 0.5]
    assert [r.seed for r in results] == [4, 4]


def test_a_dry_run_scores_nothing_and_keeps_the_references() -> None:
    results = evaluate_prompts(_prompts(), None)
    assert [r.score for r in results] == [None, None]
    assert results[1].references == {"0": "positive", "1": "positive"}


def test_simulator_errors_are_raised_or_recorded_as_failed_calls() -> None:
    with pytest.raises(ConnectionError, match="service down"):
        evaluate_prompts(_prompts(), Failing())
    results = evaluate_prompts(_prompts(), Failing(), errors="record")
    assert [r.score for r in results] == [None, None]
    assert all(r.error == "ConnectionError: service down" for r in results)


def test_bad_arguments_are_named() -> None:
    with pytest.raises(
        InvalidParameterError, match="'errors' parameter of evaluate_prompts must be 'raise' or 'record'"
    ):
        evaluate_prompts(_prompts(), None, errors="ignore")  # type: ignore[arg-type]
    with pytest.raises(
        InvalidParameterError, match="'prompts' parameter of evaluate_prompts must be ConSimPrompt"
    ):
        evaluate_prompts(["Sample_0: x"], None)  # type: ignore[list-item]
    with pytest.raises(InvalidParameterError, match="'simulator' parameter of evaluate_prompts"):
        evaluate_prompts(_prompts(), object())  # type: ignore[arg-type]
