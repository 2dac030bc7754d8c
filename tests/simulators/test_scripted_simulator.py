"""ScriptedSimulator, HumanSimulator and the BaseSimulator machinery (checks, batch, async, accounting)."""

from __future__ import annotations

import io
import threading
import time

import pytest

from xaimetrics._usage import UsageTracker
from xaimetrics.exceptions import InvalidParameterError, SimulatorError
from xaimetrics.simulators import (
    AnswerSchema,
    BaseSimulator,
    ChatMessage,
    ScriptedSimulator,
    Simulator,
    SimulatorResponse,
)
from xaimetrics.simulators._scripted import HumanSimulator


def test_list_script_in_order_then_exhausted() -> None:
    sim = ScriptedSimulator(["first answer", "second"])
    assert sim.generate([ChatMessage("user", "one two three")]).text == "first answer"
    response = sim.generate([{"role": "user", "content": "x"}])
    assert response.text == "second" and response.prompt_tokens == 1 and response.completion_tokens == 1
    with pytest.raises(SimulatorError, match="ran out of answers after 2 calls"):
        sim.generate([ChatMessage("user", "x")])
    assert sim.calls[0] == (ChatMessage("user", "one two three"),)


def test_function_script_sees_messages_and_schema_is_recorded() -> None:
    schema = AnswerSchema(("4",), ("a", "b"))
    sim = ScriptedSimulator(lambda messages: f"{len(messages)} messages")
    assert (
        sim.generate([ChatMessage("system", "s"), ChatMessage("user", "u")], answer_schema=schema).text
        == "2 messages"
    )
    assert sim.answer_schemas == [schema] and sim.remaining is None
    custom = ScriptedSimulator(lambda messages: SimulatorResponse("", error="boom", attempts=3))
    assert custom.generate([ChatMessage("user", "u")]).error == "boom"
    assert custom.usage.summary().failed_calls == 1


def test_is_a_simulator() -> None:
    assert isinstance(ScriptedSimulator(["x"]), Simulator)
    assert isinstance(HumanSimulator(), Simulator)


def test_human_simulator_prints_the_prompt_and_reads_until_an_empty_line() -> None:
    out = io.StringIO()
    sim = HumanSimulator(stdin=io.StringIO("Sample_3: positive\nSample_1: negative\n\nignored\n"), stdout=out)
    schema = AnswerSchema(("3", "1"), ("negative", "positive"))
    response = sim.generate(
        [ChatMessage("system", "Task <b>"), ChatMessage("user", "Sample_3: ok")], answer_schema=schema
    )
    assert response.text == "Sample_3: positive\nSample_1: negative"
    printed = out.getvalue()
    assert "===== system =====\nTask <b>\n" in printed and "e.g. 'Sample_3: negative'" in printed
    assert (
        HumanSimulator(stdin=io.StringIO(""), stdout=io.StringIO()).generate([ChatMessage("user", "x")]).text
        == ""
    )


class SlowEcho(BaseSimulator):
    """Sleeps, tracks concurrency, echoes: exercises BaseSimulator's default async/batch path."""

    def __init__(self) -> None:
        self.max_concurrency = 2
        self.in_flight = 0
        self.peak = 0
        self.lock = threading.Lock()

    def _generate(
        self, messages: tuple[ChatMessage, ...], answer_schema: AnswerSchema | None
    ) -> SimulatorResponse:
        with self.lock:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        time.sleep(0.05)
        with self.lock:
            self.in_flight -= 1
        suffix = "" if answer_schema is None else f"|{','.join(answer_schema.sample_ids)}"
        return SimulatorResponse(messages[-1].content + suffix, prompt_tokens=2, completion_tokens=1)


def test_batch_order_concurrency_and_schemas() -> None:
    sim = SlowEcho()
    conversations = [[ChatMessage("user", f"m{i}")] for i in range(6)]
    schemas = [AnswerSchema((str(i),), ("a",)) if i % 2 else None for i in range(6)]
    responses = sim.generate_batch(conversations, answer_schemas=schemas)
    assert [r.text for r in responses] == ["m0", "m1|1", "m2", "m3|3", "m4", "m5|5"]
    assert sim.peak == 2
    sim.peak = 0
    sim.generate_batch(conversations, max_concurrency=4)
    assert sim.peak == 4
    summary = sim.usage.summary()
    assert (summary.calls, summary.prompt_tokens, summary.completion_tokens) == (12, 24, 12)


def test_batch_argument_checks() -> None:
    sim = SlowEcho()
    with pytest.raises(
        InvalidParameterError, match=r"'answer_schemas' .* one schema \(or None\) per conversation \(2\)"
    ):
        sim.generate_batch([[ChatMessage("user", "a")]] * 2, answer_schemas=[None])
    with pytest.raises(InvalidParameterError, match=r"'max_concurrency' .* an integer ≥ 1 or None"):
        sim.generate_batch([[ChatMessage("user", "a")]], max_concurrency=0)
    with pytest.raises(
        InvalidParameterError, match="'answer_schema' parameter of SlowEcho must be an AnswerSchema"
    ):
        sim.generate([ChatMessage("user", "a")], answer_schema=("1",))  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="a non-empty list of chat messages"):
        sim.generate([])


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


def test_usage_assignment_is_checked() -> None:
    with pytest.raises(InvalidParameterError, match="'usage' parameter of SlowEcho must be a UsageTracker"):
        SlowEcho().usage = {}  # type: ignore[assignment]
