"""PerfectSimulator: an oracle that answers only the prompts it was shown, with their reference answers."""

from __future__ import annotations

from types import SimpleNamespace

from xaimetrics.simulators import AnswerSchema, ChatMessage
from xaimetrics.simulators._perfect import PerfectSimulator


def _prompt(text: str, answer: str) -> SimpleNamespace:
    return SimpleNamespace(
        messages=(ChatMessage("system", "Task"), ChatMessage("user", text)), reference_answer=answer
    )


def test_registered_prompts_get_their_reference_answers_and_others_an_error() -> None:
    first = _prompt("Sample_2: dull\nSample_5: superb", "Sample_2: bad movie\nSample_5: good")
    second = _prompt("Sample_9: meh", "Sample_9: good")
    sim = PerfectSimulator([first])
    sim.register(setting=None, prompt=second)  # the grid runner's hook
    assert sim.generate(list(first.messages)).text == first.reference_answer
    assert sim.generate(list(second.messages)).text == "Sample_9: good"
    unknown = sim.generate([ChatMessage("user", "Sample_1: ?")])
    assert unknown.text == "" and "not registered" in (unknown.error or "")


def test_probabilities_put_all_mass_on_the_reference_class_multi_word_included() -> None:
    prompt = _prompt("Sample_2: dull\nSample_5: superb", "Sample_2: bad movie\nSample_5: good")
    schema = AnswerSchema(("2", "5"), ("good", "bad movie", "neutral"), probabilities=True)
    response = PerfectSimulator([prompt]).generate(list(prompt.messages), answer_schema=schema)
    assert response.probabilities == {"2": (0.0, 1.0, 0.0), "5": (1.0, 0.0, 0.0)}
    assert (response.prompt_tokens, response.completion_tokens) == (5, 5)  # whitespace words
