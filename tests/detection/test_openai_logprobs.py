"""P(Yes) read from top_logprobs over real HTTP (the fake OpenAI server), against hand computations."""

from __future__ import annotations

import math
from typing import Any

import pytest

from fake_openai_server import FakeOpenAIServer, _token_entry
from xaimetrics.detection import Detection
from xaimetrics.detection._detection import ask
from xaimetrics.detection._prompts import build_detection_prompts
from xaimetrics.simulators import CachedSimulator, OpenAICompatibleSimulator

#: per text: the generated answer token and its alternatives (probabilities)
SCRIPT: dict[str, tuple[str, dict[str, float]]] = {
    "a cup final": (" Yes", {" Yes": 0.6, " No": 0.3, " Maybe": 0.1}),
    "a new chip": (" No", {" No": 0.7, " Yes": 0.2, "\n": 0.1}),
    "a late goal": (" yes", {" yes": 0.5, " Yes": 0.2, " no": 0.2, " No": 0.1}),  # case does not matter
    "the weather": (" Maybe", {" Maybe": 0.9, " Perhaps": 0.1}),  # no Yes/No at all: unreadable
}


def _text(messages: list[dict[str, Any]]) -> str:
    return messages[-1]["content"].removeprefix("Sample_0: ")


def respond(messages: list[dict[str, Any]]) -> str:
    return "Sample_0:" + SCRIPT[_text(messages)][0]


def logprobs(messages: list[dict[str, Any]], text: str) -> list[dict[str, Any]]:
    token, alternatives = SCRIPT[_text(messages)]
    head = [_token_entry(t, {t: 1.0}) for t in ("Sample", "_", "0", ":")]
    return [*head, _token_entry(token, alternatives)]


def make(server: FakeOpenAIServer) -> OpenAICompatibleSimulator:
    return OpenAICompatibleSimulator("fake", base_url=server.base_url, api_key="sk-x", max_retries=1)


def test_p_yes_by_hand() -> None:
    prompts = build_detection_prompts(["cup", "goal"], list(SCRIPT))
    with FakeOpenAIServer(respond, logprobs=logprobs) as server:
        answers = ask(make(server), prompts)
        body = server.chat_requests[0].body
    assert body["logprobs"] is True and body["top_logprobs"] >= 2
    assert answers[0].p_yes == pytest.approx(0.6 / 0.9) and answers[0].yes is True
    assert answers[1].p_yes == pytest.approx(0.2 / 0.9) and answers[1].yes is False
    assert answers[2].p_yes == pytest.approx(0.7 / 1.0) and answers[2].yes is True
    # the reader said "Maybe": no Yes/No among the alternatives, so P(Yes) is unknown, not 0.5
    assert answers[3].p_yes is None and answers[3].yes is None


def test_auroc_through_detection_by_hand(tmp_path: Any) -> None:
    import numpy as np

    texts = ["a cup final", "a late goal", "a new chip"]
    U = np.array([[2.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    with FakeOpenAIServer(respond, logprobs=logprobs) as server:
        simulator = CachedSimulator(make(server), tmp_path / "cache.sqlite")
        detection = Detection(simulator, n_top=2, n_quantile=0, n_random=1, n_hard=0, shuffled=False,
                              active_quantile=0.34, inactive_quantile=0.34)  # fmt: skip
        first = detection.evaluate(U, texts, {0: ["cup", "goal"], 1: ["chip"]}, concept_ids=[0])
        calls = server.chat_request_count
        again = detection.evaluate(U, texts, {0: ["cup", "goal"], 1: ["chip"]}, concept_ids=[0])
        assert server.chat_request_count == calls  # the second run is read from the response cache
    row = first.rows[0]
    # P(Yes): 2/3 and 0.7 for the activating texts, 2/9 for the inactive one: both above it
    assert row["metric"] == "auroc" and row["auroc"] == 1.0 and row["balanced_accuracy"] == 1.0
    assert [a["p_yes"] for a in first.answers] == pytest.approx([0.6 / 0.9, 0.7, 0.2 / 0.9])
    assert again.rows == first.rows
    assert math.isclose(first.answers[1]["p_yes"], 0.7)
