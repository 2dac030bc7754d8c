"""The functional core (consim/_pipeline.py): the functions and the ConSim class are one path, importances are
computed once, the shared defaults hold, errors name the argument."""

from __future__ import annotations

import json

import numpy as np
import pytest

from xaimetrics.concepts import NMF, TopWords
from xaimetrics.consim import (
    ConSim,
    ConSimSamples,
    Explanation,
    LLMLabels,
    PromptSetting,
    build_prompts,
    interpret_concepts,
    select_examples,
)
from xaimetrics.consim._pipeline import DEFAULT_MIN_FREQUENCY, DEFAULT_STOP_WORDS, complete_explanation
from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.simulators import ScriptedSimulator


@pytest.fixture
def fitted(lexicon, toy):
    activations = lexicon.activations(toy[0])
    extractor = NMF(n_concepts=4, random_state=0).fit(activations)
    return extractor, activations


@pytest.fixture
def samples(lexicon, toy) -> ConSimSamples:
    return select_examples(toy[2], toy[3], lexicon.predict(toy[2]), n_lp=8, n_ep=8, seed=0,
                           class_names=lexicon.class_names)  # fmt: skip


def test_the_functions_and_the_class_select_and_render_the_same(lexicon, toy, samples, fitted) -> None:
    extractor, activations = fitted
    by_class = ConSim(lexicon).select_examples(toy[2], toy[3], n_lp=8, n_ep=8, seed=0)
    assert by_class.lp_texts == samples.lp_texts and by_class.ep_texts == samples.ep_texts
    np.testing.assert_array_equal(by_class.predictions, samples.predictions)
    np.testing.assert_array_equal(by_class.labels, samples.labels)
    words = interpret_concepts("top_words", toy[0], model=lexicon, extractor=extractor, min_frequency=3)
    explanation = Explanation(extractor=extractor, interpretation=words, activations=activations)
    kinds = ["NE1", "E1", "NE2-a", "E2", "E3", "U1"]
    functions = build_prompts(samples, explanation, kinds, model=lexicon)
    method = ConSim(lexicon, explanation=explanation).build_prompts(samples, prompt_types=kinds)
    assert [p.text for p in functions] == [p.text for p in method]
    assert [p.label for p in functions] == kinds


def test_each_importance_is_computed_once_for_all_prompt_types(lexicon, samples, fitted, monkeypatch) -> None:
    extractor, activations = fitted
    calls: list[int] = []
    encode = extractor.encode
    monkeypatch.setattr(extractor, "encode", lambda a: calls.append(len(a)) or encode(a))
    explanation = Explanation(extractor=extractor, interpretation={0: ["war"]}, activations=activations)
    build_prompts(samples, explanation, ["E1", "E2", "E3", "E3-a", "U1"], model=lexicon)
    assert calls == [len(activations), samples.n_lp, samples.n_ep]  # Φ, LP φ, EP φ


def test_complete_explanation_keeps_what_is_given_and_never_changes_it(lexicon, samples, fitted) -> None:
    extractor, activations = fitted
    given = Explanation(extractor=extractor, activations=activations, global_importances=np.ones((3, 4)))
    settings = [PromptSetting.parse("E3")]
    full = complete_explanation(given, samples, settings, model=lexicon, n_classes=3)
    assert full.global_importances is given.global_importances  # given: not recomputed
    assert np.shape(full.lp_local_importances) == (samples.n_lp, 4) and full.ep_local_importances is None
    assert given.lp_local_importances is None  # frozen: a new Explanation
    baseline = complete_explanation(
        Explanation(), samples, [PromptSetting.parse("NE2")], model=None, n_classes=3
    )
    assert baseline == Explanation()  # a baseline needs nothing, not even a model


def test_interpret_concepts_uses_the_defaults_the_benchmark_and_the_cli_share(lexicon, toy, fitted) -> None:
    extractor, _ = fitted
    words = interpret_concepts("top_words", toy[0], model=lexicon, extractor=extractor)
    top = TopWords(lexicon, extractor, min_frequency=DEFAULT_MIN_FREQUENCY, stop_words=DEFAULT_STOP_WORDS)
    assert words == top.fit(toy[0]).interpret()
    paper = interpret_concepts("top_words", toy[0], model=lexicon, extractor=extractor, variant="paper")
    assert (
        paper == TopWords(lexicon, extractor, stop_words="english", variant="paper").fit(toy[0]).interpret()
    )
    assert paper != words
    answer = json.dumps(
        [{"label": "war", "sentences": ["troops attack"]}, {"label": "cup", "sentences": ["goal"]}]
    )
    labels = interpret_concepts(
        "llm_labels", toy[0], model=lexicon, extractor=extractor, simulator=ScriptedSimulator(lambda m: answer),
        class_names=lexicon.class_names, seed=3,
    )  # fmt: skip
    expected = LLMLabels(ScriptedSimulator(lambda m: answer), lexicon, extractor, class_names=lexicon.class_names,
                         random_state=3).fit(toy[0]).interpret()  # fmt: skip
    assert labels == expected
    with pytest.raises(
        InvalidParameterError, match="'interpretation' parameter of interpret_concepts must be one of"
    ):
        interpret_concepts("words", toy[0], model=lexicon, extractor=extractor)


def test_build_prompts_errors(samples, fitted) -> None:
    with pytest.raises(
        InvalidParameterError, match="'samples' parameter of build_prompts must be a ConSimSamples"
    ):
        build_prompts(["a", "b"], class_names=["x", "y"])  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="'class_names' parameter of ConSim must be given"):
        build_prompts(samples, prompt_types=["NE1"])
    with pytest.raises(
        InvalidParameterError, match="'prompt_types' parameter of build_prompts must be a non-empty"
    ):
        build_prompts(samples, prompt_types="NE1", class_names=["a", "b", "c"])
    with pytest.raises(
        InvalidParameterError, match="'model' parameter of ConSim must be given to compute the LP"
    ):
        explanation = Explanation(extractor=fitted[0], global_importances=np.ones((3, 4)))
        build_prompts(samples, explanation, ["E3"], class_names=["a", "b", "c"])
