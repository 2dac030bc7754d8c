"""ScriptedSimulator and HumanSimulator (the BaseSimulator machinery: test_base.py)."""

from __future__ import annotations

import io

import pytest

from xaimetrics.exceptions import SimulatorError
from xaimetrics.simulators import (
    AnswerSchema,
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
