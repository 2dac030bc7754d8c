"""Probabilistic simulatability: expected accuracy, log-loss and Brier against hand computation; no leaks."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from xaimetrics.consim import PROMPT_TYPES, ConSim, render_prompt, score_response
from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.simulators import AnswerSchema, ScriptedSimulator, SimulatorResponse
from xaimetrics.simulators._probabilities import answer_text

CLASSES = ["negative", "neutral", "positive"]
EP_PREDICTIONS = [2, 0, 1, 2]  # f's predictions on the four EP samples


def _prompt(kind: str = "NE2-a"):
    return render_prompt(
        kind, class_names=CLASSES, lp_samples=["dull", "fine", "great"], lp_predictions=[0, 1, 2],
        ep_samples=["superb", "awful", "okay", "lovely"], ep_predictions=EP_PREDICTIONS,
    )  # fmt: skip


# asymmetric probabilities per EP id ("3"…"6"), in class order
PROBABILITIES = {
    "3": (0.1, 0.2, 0.7),
    "4": (0.5, 0.3, 0.2),
    "5": (0.25, 0.25, 0.5),  # argmax is wrong for this one (f said neutral)
    "6": (0.0, 0.4, 0.6),
}


def _by_hand() -> tuple[float, float, float, float]:
    given = [PROBABILITIES[i][c] for i, c in zip(("3", "4", "5", "6"), EP_PREDICTIONS, strict=True)]
    expected = sum(given) / 4
    log_loss = -sum(math.log(p) for p in given) / 4
    brier = 0.0
    for i, c in zip(("3", "4", "5", "6"), EP_PREDICTIONS, strict=True):
        brier += sum((p - (k == c)) ** 2 for k, p in enumerate(PROBABILITIES[i]))
    argmax_right = sum(
        int(np.argmax(PROBABILITIES[i]) == c)
        for i, c in zip(("3", "4", "5", "6"), EP_PREDICTIONS, strict=True)
    )
    return expected, log_loss, brier / 4, argmax_right / 4


def _respond(messages, schema=None):
    lines = "\n".join(f"Sample_{i}: Class_{int(np.argmax(p))}" for i, p in PROBABILITIES.items())
    return SimulatorResponse(lines, probabilities=PROBABILITIES)


def test_scores_match_hand_computation() -> None:
    prompt = _prompt()
    result = score_response(prompt, _respond(prompt.messages))
    expected, log_loss, brier, accuracy = _by_hand()
    assert result.expected_accuracy == pytest.approx(expected)
    assert result.log_loss == pytest.approx(log_loss)
    assert result.brier == pytest.approx(brier)
    assert result.score == pytest.approx(accuracy) == 0.75
    assert result.probabilities["5"] == (0.25, 0.25, 0.5)
    # the dict keeps everything a report needs
    record = result.to_dict()
    assert record["expected_accuracy"] == pytest.approx(expected) and record["degenerate"] is False


def test_consim_asks_for_probabilities_and_scores_them() -> None:
    simulator = ScriptedSimulator(lambda messages: _respond(messages))
    consim = ConSim(None, simulator, class_names=CLASSES, scoring="probability")
    result = consim.evaluate(
        ["dull", "fine", "great", "superb", "awful", "okay", "lovely"], [0, 1, 2, *EP_PREDICTIONS],
        prompt_type="NE2-a", n_lp=3,
    )  # fmt: skip
    assert simulator.answer_schemas[0].probabilities is True
    assert result.expected_accuracy == pytest.approx(_by_hand()[0])
    # accuracy mode sends the plain schema (the cache keys of text answers never change)
    plain = ScriptedSimulator(lambda messages: _respond(messages))
    ConSim(None, plain, class_names=CLASSES).evaluate(
        ["dull", "fine", "great", "superb", "awful", "okay", "lovely"], [0, 1, 2, *EP_PREDICTIONS],
        prompt_type="NE2-a", n_lp=3,
    )  # fmt: skip
    assert plain.answer_schemas[0].probabilities is False
    assert "probabilities" not in plain.answer_schemas[0].as_dict()


def test_probability_scoring_needs_a_capable_simulator() -> None:
    class TextOnly:
        def generate(self, messages, *, answer_schema=None):  # pragma: no cover - never called
            return SimulatorResponse("")

    with pytest.raises(
        InvalidParameterError, match="'scoring' parameter of ConSim must be 'accuracy' for a simulator"
    ):
        ConSim(None, TextOnly(), class_names=CLASSES, scoring="probability")
    with pytest.raises(InvalidParameterError, match="'scoring' parameter of ConSim"):
        ConSim(None, None, class_names=CLASSES, scoring="logits")


@pytest.mark.parametrize(
    "bad",
    [{"3": (0.5, 0.5)}, {"3": (0.5, 0.6, -0.1)}, {"3": (0.2, 0.2, 0.2)}, {"3": (math.nan, 0.5, 0.5)}],
    ids=["wrong-length", "negative", "not-normalised", "nan"],
)
def test_invalid_probabilities_are_refused(bad) -> None:
    prompt = _prompt()
    probabilities = {**PROBABILITIES, **bad}
    with pytest.raises(InvalidParameterError, match="'probabilities' parameter of score_response"):
        score_response(prompt, SimulatorResponse("Sample_3: Class_2", probabilities=probabilities))


def test_without_probabilities_the_probabilistic_scores_are_none() -> None:
    result = score_response(_prompt(), "Sample_3: Class_2\nSample_4: Class_0")
    assert result.expected_accuracy is None and result.log_loss is None and result.brier is None
    assert result.score == 0.5


def test_degenerate_answers_are_flagged() -> None:
    prompt = _prompt()
    same = "\n".join(f"Sample_{i}: Class_2" for i in prompt.sample_ids)
    result = score_response(prompt, same)
    assert result.majority_share == 1.0 and result.reference_majority_share == 0.5 and result.degenerate
    varied = score_response(prompt, prompt.reference_answer)
    assert varied.majority_share == 0.5 and not varied.degenerate
    # answering one class is not degenerate when f itself predicts one class for every sample
    uniform = render_prompt("NE1", class_names=CLASSES, ep_samples=["a", "b"], ep_predictions=[1, 1])
    assert not score_response(uniform, "Sample_0: neutral\nSample_1: neutral").degenerate
    # with probabilities: the same distribution for every sample is degenerate, whatever its argmax does
    flat = {i: (0.33, 0.33, 0.34) if int(i) % 2 else (0.34, 0.33, 0.33) for i in prompt.sample_ids}
    response = SimulatorResponse(answer_text(prompt.answer_schema, flat), probabilities=flat)
    result = score_response(prompt, response)
    assert result.probability_spread == pytest.approx(0.01) and result.degenerate
    assert result.majority_share == 0.5  # the argmax alternates, so the answer-based rule alone would miss it
    assert not score_response(prompt, _respond(prompt.messages)).degenerate


def test_empty_explanations_are_flagged() -> None:
    # 30 concepts of equal weight: each normalised importance is 1/30 < 0.05, so none is shown (NoProjection's
    # case on a 384-wide layer)
    phi = np.ones((3, 30))
    prompt = render_prompt(
        "E2", class_names=CLASSES, lp_samples=["a"], lp_predictions=[0], ep_samples=["b"], ep_predictions=[1],
        interpretation={j: [f"w{j}"] for j in range(30)}, global_importances=phi,
    )  # fmt: skip
    assert score_response(prompt, "Sample_1: neutral").empty_explanation
    assert not score_response(_prompt(), "Sample_3: neutral").empty_explanation  # a baseline is not "empty"


@pytest.mark.parametrize("kind", [k.name for k in PROMPT_TYPES.values() if not k.is_upper_bound])
def test_no_prompt_leaks_f_predictions_on_ep_samples(kind) -> None:
    """Apart from U1, nothing in the prompt states f's prediction of an EP sample: each EP continuation is
    conditioned on the prompt alone (no teacher forcing of the references)."""
    rng = np.random.default_rng(0)
    phi = rng.normal(size=(3, 4))
    for anonymized in (False, True):
        prompt = render_prompt(
            kind, class_names=CLASSES, lp_samples=["dull", "fine", "great"], lp_predictions=[0, 1, 2],
            ep_samples=["superb", "awful", "okay", "lovely"], ep_predictions=EP_PREDICTIONS,
            interpretation={j: [f"w{j}"] for j in range(4)}, global_importances=phi,
            lp_local_importances=rng.normal(size=(3, 4)), ep_local_importances=rng.normal(size=(4, 4)),
            anonymize_classes=anonymized,
        )  # fmt: skip
        text = prompt.text
        for sample_id in prompt.sample_ids:
            for name in prompt.shown_classes:
                assert not re.search(rf"Sample_{sample_id}: {re.escape(name)}\b", text)


def test_answer_schema_probability_flag_is_checked() -> None:
    with pytest.raises(InvalidParameterError, match="'probabilities' parameter of AnswerSchema"):
        AnswerSchema(("1",), ("a", "b"), probabilities="yes")
