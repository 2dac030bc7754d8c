"""Detection prompts: one text each, the description first, the answer schema, parsing, the reader's rule."""

from __future__ import annotations

import math

import pytest

from xaimetrics.concepts import ConceptInterpretation
from xaimetrics.detection import WordOverlapReader
from xaimetrics.detection._prompts import (
    PROMPTS,
    build_detection_prompts,
    build_fuzzing_prompts,
    describe,
    read_detection_prompt,
)
from xaimetrics.exceptions import InvalidParameterError


def test_one_text_per_prompt_with_a_shared_prefix() -> None:
    texts = ["A late goal won the cup.", "A new chip.", "x " * 400]
    prompts = build_detection_prompts(ConceptInterpretation(aligned=("goal", "cup")), texts, max_chars=40)
    assert len(prompts) == 3 and all(len(p.messages) == 2 for p in prompts)
    assert len({p.messages[0] for p in prompts}) == 1  # the same system message: a reusable prefix
    assert [p.messages[1].content.count("Sample_0:") for p in prompts] == [1, 1, 1]
    assert prompts[2].messages[1].content.endswith(" …") and len(prompts[2].messages[1].content) <= 52
    assert prompts[0].schema.sample_ids == ("0",) and prompts[0].schema.classes == ("No", "Yes")
    assert prompts[0].schema.probabilities


def test_wordings_and_labels() -> None:
    topic = build_detection_prompts(["goal"], ["a goal"], prompt="topic")[0].messages[0].content
    assert topic.startswith(PROMPTS["topic"])
    labelled = build_detection_prompts(ConceptInterpretation(aligned=("goal",), label="football"), ["a"])[0]
    assert "Feature: football" in labelled.messages[0].content
    read = read_detection_prompt(labelled.messages)
    assert read.label == "football" and read.words == ("goal",) and not read.fuzzing


def test_words_with_quotes_survive_the_round_trip() -> None:
    prompt = build_detection_prompts(["don't", 'say "hi"'], ["text"])[0]
    assert read_detection_prompt(prompt.messages).words == ("don't", 'say "hi"')


def test_reader_rule_by_hand() -> None:
    reader = WordOverlapReader(temperature=0.5)
    two = build_detection_prompts(["goal", "cup"], ["the Cup and a goal"])[0]
    fuzz = build_fuzzing_prompts(["goal", "cup"], ["the <<Cup>> and <<a>> goal"])[0]
    sigmoid = lambda x: 1 / (1 + math.exp(-x))  # noqa: E731
    assert reader.p_yes(two.messages) == pytest.approx(sigmoid((2 - 0.5) / 0.5))
    assert reader.p_yes(fuzz.messages) == pytest.approx(sigmoid((0.5 - 0.5) / 0.5))
    response = reader.generate(two.messages, answer_schema=two.schema)
    assert response.text == "Sample_0: Yes" and sum(response.probabilities["0"]) == pytest.approx(1.0)
    assert reader.generate([{"role": "user", "content": "hello"}]).error.startswith("not a detection prompt")


def test_errors() -> None:
    with pytest.raises(InvalidParameterError, match="'prompt' parameter of build_detection_prompts"):
        build_detection_prompts(["a"], ["b"], prompt="poem")
    with pytest.raises(InvalidParameterError, match="no aligned word"):
        describe(ConceptInterpretation())
    with pytest.raises(InvalidParameterError, match="'texts' parameter"):
        build_detection_prompts(["a"], "one text")
    with pytest.raises(InvalidParameterError, match="'temperature' parameter of WordOverlapReader"):
        WordOverlapReader(temperature=0)
