"""The simulator contract: chat messages, answer schemas and the BaseSimulator machinery (checks, batch,
concurrency, accounting)."""

from __future__ import annotations

import threading
import time

import pytest

from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.simulators import AnswerSchema, BaseSimulator, ChatMessage, SimulatorResponse
from xaimetrics.simulators._base import as_chat_messages


def test_chat_messages_accept_objects_and_mappings_and_name_the_bad_one() -> None:
    checked = as_chat_messages([{"role": "system", "content": "Be brief."}, ChatMessage("user", "Hi")])
    assert checked == (ChatMessage("system", "Be brief."), ChatMessage("user", "Hi"))
    with pytest.raises(InvalidParameterError, match=r"'messages' parameter of generate must be a list"):
        as_chat_messages("Hi")
    with pytest.raises(InvalidParameterError, match=r"role='robot', content of type str at position 1"):
        as_chat_messages([ChatMessage("user", "a"), {"role": "robot", "content": "b"}])
    with pytest.raises(InvalidParameterError, match=r"content of type int at position 0"):
        as_chat_messages([{"role": "user", "content": 3}], owner="X")


def test_answer_schema_normalises_integer_ids_and_refuses_what_breaks_the_format() -> None:
    schema = AnswerSchema((3, 1), ("not prime", "prime"))  # type: ignore[arg-type]
    assert schema.sample_ids == ("3", "1") and schema.line("1", "prime") == "Sample_1: prime"
    assert schema.as_dict() == {"sample_ids": ["3", "1"], "classes": ["not prime", "prime"]}
    assert AnswerSchema(("1",), ("a",), probabilities=True).as_dict()["probabilities"] is True
    for bad, match in [
        ((("1", "1"), ("a",)), "unique values"),
        ((("1",), ("a\nb",)), "non-empty one-line strings"),
        ((("a b",), ("a",)), "ids without spaces or ':'"),
        ((("1",), ()), "a non-empty tuple of strings"),
        ((("1",), "ab"), "a tuple of strings"),
    ]:
        with pytest.raises(InvalidParameterError, match=match):
            AnswerSchema(*bad)  # type: ignore[arg-type]


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


def test_usage_assignment_is_checked() -> None:
    with pytest.raises(InvalidParameterError, match="'usage' parameter of SlowEcho must be a UsageTracker"):
        SlowEcho().usage = {}  # type: ignore[assignment]
