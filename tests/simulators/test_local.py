"""LocalModelSimulator: one call at a time on the in-process model, the right method per request, timed here."""

from __future__ import annotations

import threading
import time

from xaimetrics.simulators import AnswerSchema, ChatMessage, SimulatorResponse
from xaimetrics.simulators._local import LocalModelSimulator


class Recorder(LocalModelSimulator):
    """Records how many calls overlap and which method answered."""

    name = "recorder"

    def __init__(self) -> None:
        self.now = self.peak = 0
        self.count_lock = threading.Lock()
        self.methods: list[str] = []

    def cache_identity(self) -> dict[str, object]:
        return {"simulator": "recorder"}

    def _enter(self, method: str) -> None:
        with self.count_lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
            self.methods.append(method)
        time.sleep(0.03)
        with self.count_lock:
            self.now -= 1

    def _complete(
        self, messages: tuple[ChatMessage, ...], answer_schema: AnswerSchema | None
    ) -> SimulatorResponse:
        self._enter("complete")
        return SimulatorResponse("Sample_1: a", latency_s=99.0)

    def _class_probabilities(
        self, messages: tuple[ChatMessage, ...], schema: AnswerSchema
    ) -> SimulatorResponse:
        self._enter("probabilities")
        return SimulatorResponse("Sample_1: b", probabilities={"1": (0.25, 0.75)}, latency_s=99.0)


def test_calls_are_serialised_even_when_a_batch_asks_for_more() -> None:
    sim = Recorder()
    conversations = [[ChatMessage("user", f"m{i}")] for i in range(4)]
    responses = sim.generate_batch(conversations, max_concurrency=4)
    assert sim.peak == 1 and [r.text for r in responses] == ["Sample_1: a"] * 4


def test_probability_requests_go_to_the_probability_method_and_latency_is_measured_here() -> None:
    sim = Recorder()
    text = sim.generate([ChatMessage("user", "x")], answer_schema=AnswerSchema(("1",), ("a", "b")))
    scored = sim.generate(
        [ChatMessage("user", "x")], answer_schema=AnswerSchema(("1",), ("a", "b"), probabilities=True)
    )
    assert sim.methods == ["complete", "probabilities"]
    assert text.text == "Sample_1: a" and scored.probabilities == {"1": (0.25, 0.75)}
    assert 0.02 < scored.latency_s < 5.0  # the call's own time, not the 99 s the backend wrote
