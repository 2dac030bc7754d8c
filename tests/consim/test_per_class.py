"""Per-class ConSim scores: recall and precision of the reader against f, per class of f's predictions."""

from __future__ import annotations

import json
import math

import pytest
from sklearn.metrics import precision_score, recall_score

from xaimetrics._class_counts import add_class_counts, read_class_counts
from xaimetrics.consim import per_class_scores, render_prompt, score_response
from xaimetrics.exceptions import InvalidParameterError

CLASSES = ["sport", "tech", "arts", "food"]
#: f's predictions on 7 EP samples: sport ×3, tech ×2, arts ×2 (food never)
F = [0, 0, 0, 1, 1, 2, 2]


def _result(answers: list[str]):
    prompt = render_prompt(
        "NE1", class_names=CLASSES, ep_samples=[f"t{i}" for i in range(7)], ep_predictions=F
    )
    text = "\n".join(f"Sample_{i}: {a}" for i, a in enumerate(answers) if a)
    return score_response(prompt, text)


def test_a_planted_reader_right_on_one_class_and_wrong_on_another() -> None:
    # right on sport, always "arts" for tech, arts answered as food once, one missing answer
    result = _result(["sport", "sport", "sport", "arts", "arts", "food", ""])
    scores = per_class_scores(result.class_counts)
    assert list(scores) == ["arts", "sport", "tech"]  # food: f never predicted it
    assert scores["sport"] == {"n": 3, "recall": 1.0, "precision": 1.0}
    assert scores["tech"]["recall"] == 0.0 and math.isnan(scores["tech"]["precision"])
    assert scores["arts"]["recall"] == 0.0 and scores["arts"]["precision"] == 0.0  # 2 answers, both wrong
    assert result.class_counts["food"] == {"n": 0, "hits": 0, "answered": 1}
    # the n-weighted recall is eq. 5's accuracy
    total = sum(s["recall"] * s["n"] for s in scores.values()) / len(F)
    assert total == pytest.approx(result.score)


def test_against_scikit_learn_on_the_answered_samples() -> None:
    answers = ["sport", "tech", "sport", "tech", "sport", "arts", "tech"]
    result = _result(answers)
    scores = per_class_scores(result.class_counts)
    truth = [CLASSES[c] for c in F]
    labels = ["arts", "sport", "tech"]
    recall = recall_score(truth, answers, labels=labels, average=None, zero_division=0)
    precision = precision_score(truth, answers, labels=labels, average=None, zero_division=0)
    assert [scores[c]["recall"] for c in labels] == pytest.approx(recall.tolist())
    assert [scores[c]["precision"] for c in labels] == pytest.approx(precision.tolist())


def test_counts_add_exactly_and_survive_json() -> None:
    a = _result(["sport", "sport", "sport", "arts", "arts", "food", ""]).class_counts
    b = _result(["tech"] * 7).class_counts
    total = add_class_counts([a, b])
    assert total["tech"] == {"n": 4, "hits": 2, "answered": 7}
    assert read_class_counts(json.dumps(total)) == total
    assert read_class_counts(None) == {} and read_class_counts("") == {}
    assert _result(["sport"] * 7).to_dict()["class_counts"]["sport"] == {"n": 3, "hits": 3, "answered": 7}


def test_no_answer_counts_every_sample_as_missed() -> None:
    prompt = render_prompt("NE1", class_names=CLASSES, ep_samples=["x", "y"], ep_predictions=[3, 3])
    counts = score_response(prompt, None).class_counts
    assert counts == {"food": {"n": 2, "hits": 0, "answered": 0}}


@pytest.mark.parametrize(
    ("counts", "message"),
    [
        ("not json", "a JSON object of per-class counts"),
        ("[1, 2]", "a JSON object of per-class counts"),
        ({"a": {"n": 2, "hits": -1, "answered": 0}}, "counts ≥ 0"),
        ({"a": {"n": 2}}, "Pass the class_counts of a ConSimResult"),
    ],
)
def test_bad_counts_are_refused(counts: object, message: str) -> None:
    with pytest.raises(InvalidParameterError, match=message):
        per_class_scores(counts)
