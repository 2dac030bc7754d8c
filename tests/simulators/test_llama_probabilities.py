"""Class probabilities from the local GGUF model: valid, order-independent, identical with and without reuse."""

from __future__ import annotations

import pytest

from xaimetrics.simulators import AnswerSchema, ChatMessage
from xaimetrics.simulators._probabilities import ClassContinuations, class_continuations

SYSTEM = (
    "You are a classifier. For each sample, you have to predict the class. You will have examples of samples and "
    "labels as references for the task. Each sample class prediction should be in the format: "
    "'Sample_{i}: {predicted_class}'. Answer with one such line for every sample to classify, and nothing else.\n\n"
    "The classes are: [Class_0, Class_1]\n\nHere are examples of samples:\nSample_0: a dull, boring mess\n"
    "Sample_1: a wonderful, moving film\n\nThe classes predicted for these examples are:\nSample_0: Class_0\n"
    "Sample_1: Class_1"
)
MESSAGES = [
    ChatMessage("system", SYSTEM),
    ChatMessage("user", "Sample_2: an awful waste of time\nSample_3: a delight"),
]


def test_continuations_share_a_stem_and_split_prefixes() -> None:
    words = {"Sample_1:": 1, " Class": 2, "_": 3, "1": 4, "0": 5, "\n": 6}

    def tokenize(text: str) -> list[int]:
        out, rest = [], text
        while rest:
            piece = next(p for p in sorted(words, key=len, reverse=True) if rest.startswith(p))
            out.append(words[piece])
            rest = rest[len(piece) :]
        return out

    plain = class_continuations(tokenize, "1", ["Class_0", "Class_1"])
    assert plain.stem == (1, 2, 3) and plain.tails == ((5,), (4,))
    ten = class_continuations(tokenize, "1", ["Class_1", "Class_10"])  # a prefix: the lines end with "\n"
    assert ten.stem == (1, 2, 3, 4) and ten.tails == ((6,), (5, 6))
    calls = []

    def next_log_probs(prefix):
        calls.append(prefix)
        return {(): [0.0] * 7, (5,): [-1.0] * 7}[prefix]

    assert ten.log_probabilities(next_log_probs) == [0.0, -1.0] and calls == [(), (5,)]
    with pytest.raises(ValueError, match="none of which is a prefix"):
        ClassContinuations([[1, 2], [1, 2, 3]])


@pytest.mark.slow
def test_local_model_probabilities_are_valid_and_reuse_changes_nothing() -> None:
    from xaimetrics.simulators import default_simulator

    schema = AnswerSchema(("2", "3"), ("Class_0", "Class_1"), probabilities=True)
    reuse = default_simulator(n_threads=2)
    first = reuse.generate(MESSAGES, answer_schema=schema)
    assert first.ok and set(first.probabilities) == {"2", "3"}
    for values in first.probabilities.values():
        assert len(values) == 2 and abs(sum(values) - 1.0) < 1e-9 and min(values) > 0
    # the answer text is the most probable class of each sample
    lines = dict(line.split(": ") for line in first.text.splitlines())
    for sample_id, values in first.probabilities.items():
        assert lines[f"Sample_{sample_id}"] == schema.classes[values.index(max(values))]
    # a sample's probabilities do not depend on the other samples asked (no answer sees another answer),
    # nor on what the model read before (the prompt is always read in one pass)
    alone = reuse.generate(MESSAGES, answer_schema=AnswerSchema(("3",), schema.classes, probabilities=True))
    assert alone.probabilities["3"] == first.probabilities["3"]
    again = reuse.generate(MESSAGES, answer_schema=schema)
    assert again.probabilities == first.probabilities
    # without reuse: the same numbers, at the price of reading the prompt once per sample
    fresh = default_simulator(n_threads=2, prefix_reuse=False).generate(MESSAGES, answer_schema=schema)
    assert fresh.probabilities == first.probabilities
    assert fresh.prompt_tokens > 1.8 * first.prompt_tokens
    assert fresh.metadata["prompt_tokens_total"] == first.metadata["prompt_tokens_total"]
