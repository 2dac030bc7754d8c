"""Prompt rendering (paper App. E): golden prompts per type, concept ids, thresholds, no leak at EP."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from xaimetrics.concepts import ConceptInterpretation
from xaimetrics.consim import PROMPT_TYPES, PromptSetting, render_prompt
from xaimetrics.exceptions import InvalidParameterError

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("XAIMETRICS_UPDATE_GOLDEN") == "1"  # regenerate with XAIMETRICS_UPDATE_GOLDEN=1

CLASSES = ["not prime", "prime", "Sci/Tech"]
CONCEPT_IDS = [2, 5, 11, 17, 40]
INTERPRETATION = {
    2: ConceptInterpretation(aligned=("even", "pair", "double"), opposed=("odd",)),
    5: ConceptInterpretation(aligned=("seven", "eleven")),
    11: ConceptInterpretation(aligned=("laptop", "chip"), opposed=("poem", "song")),
    17: ConceptInterpretation(label="divisible by three"),
    40: ConceptInterpretation(aligned=("never", "shown")),
}
# rows: classes; columns: CONCEPT_IDS. Row sums of |.| are 1, 2 and 0.5 (normalisation is tested too)
GLOBAL = np.array(
    [
        [0.40, -0.31, 0.04, 0.25, 0.00],  # not prime: ++, --, hidden, +
        [-0.20, 1.20, 0.06, -0.50, 0.04],  # prime (÷2): -, ++, hidden (0.03), -, hidden
        [0.01, 0.00, 0.48, 0.00, 0.01],  # Sci/Tech (÷0.5): hidden (0.02), ++, hidden (0.02)
    ]
)
LP_SAMPLES = ["Four is\n  two times two.", "Seven", "A new laptop chip", "Nine = 3 x 3"]
LP_PREDICTIONS = [0, 1, 2, 1]
LP_LOCAL = np.array(
    [
        [0.9, 0.0, 0.0, 0.1, 0.0],
        [-0.1, 0.8, 0.02, 0.0, 0.08],
        [0.0, 0.0, 1.0, 0.0, 0.0],
        [0.3, 0.3, 0.0, -0.4, 0.0],
    ]
)
EP_SAMPLES = ["Eleven", "Fifteen", "Quantum computers"]
EP_PREDICTIONS = [1, 1, 2]  # differs from the LP predictions on purpose
EP_LOCAL = np.array([[0.0, 1.0, 0.0, 0.0, 0.0], [0.2, 0.0, 0.0, -0.6, 0.2], [0.0, 0.0, 0.0, 0.0, 0.0]])


def _render(prompt_type, **overrides):
    kwargs = dict(
        class_names=CLASSES,
        lp_samples=LP_SAMPLES,
        lp_predictions=LP_PREDICTIONS,
        ep_samples=EP_SAMPLES,
        ep_predictions=EP_PREDICTIONS,
        interpretation=INTERPRETATION,
        global_importances=GLOBAL,
        lp_local_importances=LP_LOCAL,
        ep_local_importances=EP_LOCAL,
        concept_ids=CONCEPT_IDS,
    )
    kwargs.update(overrides)
    return render_prompt(prompt_type, **kwargs)


SETTINGS = [PromptSetting(p, a).label for p in PROMPT_TYPES.values() for a in (False, True)]


@pytest.mark.parametrize("label", SETTINGS)
def test_golden_prompt(label: str) -> None:
    text = _render(label).text + "\n"
    path = GOLDEN / f"{label}.txt"
    if UPDATE or not path.exists():
        path.write_text(text, encoding="utf-8")
        if not UPDATE:
            pytest.fail(f"wrote missing golden file {path.name}; review it and re-run")
    assert text == path.read_text(encoding="utf-8"), f"{label} changed; XAIMETRICS_UPDATE_GOLDEN=1 to accept"


def test_golden_e3_content_by_hand() -> None:
    system = _render("E3").messages[0].content
    assert "concept_2: aligned: ['even', 'pair', 'double'], opposed: ['odd']" in system
    assert "concept_17: label: 'divisible by three'" in system
    assert "not prime: 'concept_2': '++', 'concept_5': '--', 'concept_17': '+'" in system
    assert "prime: 'concept_2': '-', 'concept_5': '++', 'concept_17': '-'" in system
    assert "Sci/Tech: 'concept_11': '++'" in system
    assert "concept_40" not in system  # below the threshold for every class
    assert "Concepts contributions for Sample_1: 'concept_2': '-', 'concept_5': '++'" in system
    assert "Sample_0: Four is two times two." in system


def test_ids_and_references() -> None:
    prompt = _render("E3")
    assert prompt.lp_sample_ids == ("0", "1", "2", "3")
    assert prompt.sample_ids == ("4", "5", "6")  # LP then EP, as in App. E
    assert prompt.references == (1, 1, 2)
    assert prompt.concept_ids == (2, 5, 11, 17)
    assert prompt.answer_schema.sample_ids == ("4", "5", "6")
    assert prompt.answer_schema.classes == tuple(CLASSES)
    assert prompt.reference_answer == "Sample_4: prime\nSample_5: prime\nSample_6: Sci/Tech"
    # baseline prompt types keep the same ids, so settings are comparable
    assert _render("NE1").sample_ids == ("4", "5", "6")


def test_no_explanation_at_ep_except_u1() -> None:
    for prompt_type in PROMPT_TYPES.values():
        for anonymized in (False, True):
            prompt = _render(prompt_type, anonymize_classes=anonymized)
            user = prompt.messages[1].content
            assert ("concept" in user) == prompt_type.is_upper_bound
            for line in prompt.reference_answer.splitlines():  # f's EP predictions never appear in the prompt
                assert line not in prompt.text


def test_parts_follow_the_prompt_type() -> None:
    for prompt_type in PROMPT_TYPES.values():
        content = prompt_type.content
        system = _render(prompt_type).messages[0].content
        assert ("aligned and opposed words" in system) == content.global_explanations
        assert ("Here are examples of samples" in system) == content.lp_samples
        assert ("Concepts contributions" in system) == content.lp_local
        assert ("Sample_0: Four" in system) == content.lp_samples
        assert "'Sample_{i}: {predicted_class}'" in system


def test_anonymised_prompt_hides_class_names() -> None:
    prompt = _render("E3-a")
    assert prompt.shown_classes == ("Class_0", "Class_1", "Class_2")
    assert "The classes are: [Class_0, Class_1, Class_2]" in prompt.text
    for name in CLASSES:
        assert name not in prompt.text.replace("not prime:", "")
    assert "Sample_2: Class_2" in prompt.text
    assert prompt.answer_schema.classes == ("Class_0", "Class_1", "Class_2")


def test_concepts_are_filtered_by_id_not_position() -> None:
    # Interpreto 0.5 filtered concepts by dict position: use sparse ids given as mappings
    global_map = {"not prime": {7: 0.9, 3: 0.1, 12: 0.0}, "prime": {7: -0.5, 3: 0.0, 12: 0.5}, "Sci/Tech": {}}
    interpretation = {3: ("three",), 7: ("seven",), 12: ("twelve",)}
    local = [{7: 1.0}, {3: 1.0, 12: 0.2}, {12: 1.0}, {}]
    prompt = _render(
        "E3",
        global_importances=global_map,
        interpretation=interpretation,
        lp_local_importances=local,
        concept_ids=None,
    )
    system = prompt.messages[0].content
    assert prompt.concept_ids == (3, 7, 12)
    assert "concept_7: aligned: ['seven']" in system and "concept_12: aligned: ['twelve']" in system
    assert "not prime: 'concept_3': '+', 'concept_7': '++'" in system
    assert "prime: 'concept_7': '--', 'concept_12': '++'" in system
    assert "Concepts contributions for Sample_1: 'concept_3': '++', 'concept_12': '+'" in system


def test_interpretation_keyed_by_position_is_rejected() -> None:
    with pytest.raises(InvalidParameterError, match="Key the interpretation by concept id"):
        _render("E1", interpretation={0: ("a",), 1: ("b",)})


def test_threshold() -> None:
    # threshold 0: every non-zero concept is shown, and the loop always ends
    assert _render("E1", importance_threshold=0.0).concept_ids == (2, 5, 11, 17, 40)
    # a low threshold shows weak values with the weakest sign
    system = _render("E1", importance_threshold=0.01).messages[0].content
    assert "not prime: 'concept_2': '++', 'concept_5': '--', 'concept_11': '+', 'concept_17': '+'" in system
    # exactly at the threshold is hidden (|x| > τ)
    exact = np.array([[0.05, 0.95], [0.0, 1.0], [1.0, 0.0]])
    assert (
        _render("E1", global_importances=exact, concept_ids=[2, 5]).messages[0].content.count("'concept_2'")
        == 1
    )
    # a high threshold can hide everything: the prompt says so instead of failing
    nothing = _render("E1", importance_threshold=0.99)
    assert nothing.concept_ids == () and "No concept passes the importance threshold" in nothing.text
    with pytest.raises(InvalidParameterError, match="importance_threshold"):
        _render("E1", importance_threshold=1.0)


def test_normalisation_makes_scale_irrelevant() -> None:
    assert (
        _render("E3", global_importances=GLOBAL * 7.5, lp_local_importances=LP_LOCAL * 0.01).text
        == _render("E3").text
    )


def test_torch_inputs() -> None:
    torch = pytest.importorskip("torch")
    prompt = _render(
        "U1",
        global_importances=torch.tensor(GLOBAL),
        lp_local_importances=torch.tensor(LP_LOCAL),
        ep_local_importances=torch.tensor(EP_LOCAL),
        ep_predictions=torch.tensor(EP_PREDICTIONS),
    )
    assert prompt.text == _render("U1").text


def test_word_scores_and_plain_lists_are_accepted() -> None:
    interpretation = {
        2: {"even": 2.0, "odd": -1.0, "pair": 1.0},
        5: ["seven"],
        11: "tech",
        17: {"label": "threes"},
    }
    system = _render("E1", interpretation=interpretation).messages[0].content
    assert "concept_2: aligned: ['even', 'pair'], opposed: ['odd']" in system
    assert "concept_11: label: 'tech'" in system and "concept_17: label: 'threes'" in system


def test_sample_cleanup_and_truncation() -> None:
    prompt = _render("NE2", max_sample_chars=8)
    assert "Sample_0: Four..." in prompt.text and "Sample_2: A new..." in prompt.text


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"interpretation": None}, "'interpretation' parameter of render_prompt must be given for the E2"),
        ({"global_importances": None}, "'global_importances'"),
        ({"lp_samples": []}, "'lp_samples'"),
        ({"lp_predictions": [0, 1]}, "'lp_predictions'"),
        ({"ep_predictions": [0, 1, 3]}, r"class ids in \[0, 3\)"),
        ({"class_names": ["a", "A", "b"]}, "differ in their letters or digits"),
        ({"class_names": ["Sci/Tech", "sci-tech", "b"]}, "differ in their letters or digits"),
        ({"class_names": ["+", "-", "b"]}, "containing letters or digits"),
        ({"global_importances": np.ones((2, 5))}, r"shape \(3, n_concepts\)"),
        ({"concept_ids": [1, 1, 2, 3, 4]}, "distinct ids"),
        ({"global_importances": np.full((3, 5), np.nan)}, "finite"),
    ],
)
def test_errors(overrides: dict, message: str) -> None:
    with pytest.raises(InvalidParameterError, match=message):
        _render("E2", **overrides)


def test_missing_local_importances() -> None:
    with pytest.raises(InvalidParameterError, match="local concept importances"):
        _render("E3", lp_local_importances=None)
    with pytest.raises(InvalidParameterError, match="'ep_local_importances'"):
        _render("U1", ep_local_importances=None)
    assert _render("E2", lp_local_importances=None, ep_local_importances=None).setting.label == "E2"
