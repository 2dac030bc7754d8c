"""WordOverlapReader against hand computations of its rule on detection and intruder prompts."""

from __future__ import annotations

import math

import numpy as np
import pytest

from xaimetrics.detection._intruder import build_intruder_prompts
from xaimetrics.detection._prompts import build_detection_prompts
from xaimetrics.detection._reader import WordOverlapReader
from xaimetrics.simulators import ChatMessage


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


@pytest.mark.parametrize("temperature", [1.0, 0.25])
def test_p_yes_is_the_logistic_of_the_count_of_description_words(temperature: float) -> None:
    prompts = build_detection_prompts(
        ["goal", "cup", "final"], ["The goal in the cup final.", "A goal.", "A new chip."]
    )
    reader = WordOverlapReader(temperature=temperature)
    expected = [_sigmoid((n - 0.5) / temperature) for n in (3, 1, 0)]
    assert [reader.p_yes(p.messages) for p in prompts] == pytest.approx(expected)
    answer = reader.generate(prompts[0].messages, answer_schema=prompts[0].schema)
    assert answer.probabilities is not None
    assert answer.probabilities["0"] == pytest.approx((1 - expected[0], expected[0]))


def test_the_intruder_is_the_text_with_fewest_description_words() -> None:
    prompt = build_intruder_prompts([["goal cup final", "cup goal", "new chip"]], ["goal", "cup"])[0]
    evidence = np.array([2.0, 2.0, 0.0])  # description words in each shown text
    expected = np.exp(-evidence) / np.exp(-evidence).sum()
    got = WordOverlapReader().intruder_probabilities(prompt.messages)
    assert got is not None and np.allclose(got, expected)
    answer = WordOverlapReader().generate(prompt.messages, answer_schema=prompt.schema)
    assert answer.text.endswith(": 2")


def test_a_prompt_of_another_kind_is_a_failed_answer() -> None:
    response = WordOverlapReader().generate([ChatMessage("user", "Sample_0: what?")])
    assert response.text == "" and "not a detection prompt" in (response.error or "")
    assert WordOverlapReader().p_yes([ChatMessage("user", "hello")]) is None
