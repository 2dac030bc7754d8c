"""o1CA (paper eq. 2): LLM-proposed labels, parsed robustly, aligned to the concepts that they activate most."""

from __future__ import annotations

import json

import numpy as np
import pytest

from xaimetrics.concepts import NMF
from xaimetrics.consim import ConSim, Explanation, LLMLabels
from xaimetrics.consim._llm_labels import o1ca, parse_label_proposals
from xaimetrics.exceptions import InvalidParameterError, NotFittedError, SimulatorError
from xaimetrics.simulators import ScriptedSimulator, SimulatorResponse

PROPOSALS = {
    "politics and diplomacy": ["the minister signed the treaty", "the embassy praised the election"],
    "football": ["the coach celebrated the goal", "a league match"],
    "computing": ["a new laptop chip", "software for the robot"],
}


def test_o1ca_matches_eq_2_by_hand() -> None:
    activations = np.array(
        [[3.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 4.0, 2.0], [0.5, 0.0, 9.0]]
    )
    texts = ["a", "b", "c", "d", "e"]
    encode = lambda batch: activations[[texts.index(t) for t in batch]]  # noqa: E731
    labels, scores = o1ca({"first": ["a", "b"], "second": ["c", "d"], "third": ["e"]}, encode)
    np.testing.assert_allclose(scores, [[2.0, 0.0, 0.5], [0.0, 3.0, 1.0], [0.5, 0.0, 9.0]])
    assert labels == {0: "first", 1: "second", 2: "third"}
    # argmax ties go to the first label; labels can be shared by several concepts
    labels, _ = o1ca({"x": ["a"], "y": ["a"]}, encode)
    assert labels == {0: "x", 1: "x", 2: "x"}


@pytest.mark.parametrize(
    "answer",
    [
        json.dumps([{"label": k, "sentences": v} for k, v in PROPOSALS.items()]),
        "Here you go:\n```json\n"
        + json.dumps({"concepts": [{"name": k, "examples": v} for k, v in PROPOSALS.items()]})
        + "\n```",
        "<think>hmm [not json</think>" + json.dumps(PROPOSALS),
        "\n".join(
            f"{i + 1}. **{k}**\n" + "\n".join(f'   - "{s}"' for s in v)
            for i, (k, v) in enumerate(PROPOSALS.items())
        ),
        "\n".join(
            f"Label: {k}\nSentences:\n" + "\n".join(f"* {s}" for s in v) + "\n" for k, v in PROPOSALS.items()
        ),
    ],
)
def test_parse_label_proposals_formats(answer: str) -> None:
    assert parse_label_proposals(answer) == {k: tuple(v) for k, v in PROPOSALS.items()}


def test_parse_label_proposals_never_raises() -> None:
    for text in (None, "", "no labels here", "[{]", '[{"label": 3}]', "{" * 5000, "1.\n2.\n-"):
        assert isinstance(parse_label_proposals(text), dict)
    # duplicates (any case) and labels without sentences are dropped
    text = json.dumps(
        [
            {"label": "A", "sentences": ["x"]},
            {"label": "a", "sentences": ["y"]},
            {"label": "B", "sentences": []},
        ]
    )
    assert parse_label_proposals(text) == {"A": ("x",)}


def test_llm_labels_end_to_end(lexicon, toy) -> None:
    answer = json.dumps([{"label": k, "sentences": v} for k, v in PROPOSALS.items()])
    simulator = ScriptedSimulator(lambda messages: answer)
    activations = lexicon.activations(toy[0])
    extractor = NMF(n_concepts=3, random_state=0).fit(activations)
    labels = LLMLabels(
        simulator, lexicon, extractor, n_labels=3, n_sentences=2, n_examples=4, random_state=1
    ).fit(toy[0])
    system, user = simulator.calls[0]
    assert (
        "The classes are: [World, Sports, Sci/Tech]" in system.content
        and "Propose 3 distinct concepts" in system.content
    )
    assert user.content.count("\n- ") == 4
    # eq. 2 by hand
    for concept, label in labels.concept_labels_.items():
        means = {k: extractor.encode(lexicon.activations(v))[:, concept].mean() for k, v in PROPOSALS.items()}
        assert label == max(means, key=means.get)
    # the three NMF concepts of three topics get three different topic labels
    assert sorted(labels.concept_labels_.values()) == sorted(PROPOSALS)
    interpretation = labels.interpret()
    assert {i.label for i in interpretation.values()} == set(PROPOSALS)
    # usable by ConSim: the prompt describes concepts by their labels
    samples = ConSim(lexicon).select_examples(toy[2], toy[3], n_lp=6, n_ep=6, seed=0)
    explanation = Explanation(extractor=extractor, interpretation=labels, activations=activations)
    prompt = ConSim(lexicon, explanation=explanation).build_prompt(samples, prompt_type="E1")
    assert "For each concept, its label is:" in prompt.text and "'football'" in prompt.text


def test_random_state_draws_the_examples_and_class_names_are_shown(lexicon, toy) -> None:
    extractor = NMF(n_concepts=2, random_state=0).fit(lexicon.activations(toy[0]))
    four = LLMLabels(None, lexicon, extractor, random_state=4)
    assert four.messages(toy[0]) == LLMLabels(None, lexicon, extractor, random_state=4).messages(toy[0])
    assert four.messages(toy[0]) != LLMLabels(None, lexicon, extractor, random_state=5).messages(toy[0])
    named = LLMLabels(None, lexicon, extractor, class_names=["a", "b", "c"])
    assert "The classes are: [a, b, c]" in named.messages(toy[0])[0].content
    with pytest.raises(TypeError, match="unexpected keyword argument 'seed'"):
        LLMLabels(None, lexicon, extractor, seed=4)  # type: ignore[call-arg]
    with pytest.raises(InvalidParameterError, match=r"'class_names' parameter of LLMLabels must be given"):
        LLMLabels(None, lambda texts: lexicon.activations(texts), extractor).messages(toy[0])


def test_llm_labels_errors(lexicon, toy) -> None:
    extractor = NMF(n_concepts=2, random_state=0).fit(lexicon.activations(toy[0]))
    with pytest.raises(NotFittedError, match="not fitted"):
        LLMLabels(ScriptedSimulator(["x"]), lexicon, extractor).interpret()
    with pytest.raises(SimulatorError, match="could not read any label"):
        LLMLabels(ScriptedSimulator(["I cannot do that."]), lexicon, extractor).fit(toy[0])
    failing = ScriptedSimulator(lambda messages: SimulatorResponse(text="", error="HTTP 500"))
    with pytest.raises(SimulatorError, match="HTTP 500"):
        LLMLabels(failing, lexicon, extractor).fit(toy[0])
    # labels can also be given without any LLM call
    fitted = LLMLabels(None, lexicon, extractor).fit(toy[0], proposals=PROPOSALS)
    assert set(fitted.concept_labels_.values()) <= set(PROPOSALS)
