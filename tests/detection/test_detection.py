"""Detection on a synthetic model where the truth is known, with the word-overlap reader and scripted readers."""

from __future__ import annotations

import numpy as np
import pytest

from xaimetrics.detection import Detection, WordOverlapReader, legibility_table
from xaimetrics.detection._detection import ask, shuffled_concept
from xaimetrics.detection._prompts import build_detection_prompts
from xaimetrics.detection._statistics import compare_groups, summarise
from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.simulators import ScriptedSimulator


def test_top_words_recover_the_groups(synthetic: dict) -> None:
    for j, group in enumerate(synthetic["groups"]):
        assert set(synthetic["interpretations"][j].aligned) == set(group)


def test_a_reader_using_the_words_scores_at_least_095(synthetic: dict) -> None:
    result = Detection(WordOverlapReader(), seed=0).evaluate(
        synthetic["U"], synthetic["texts"], synthetic["interpretations"], embeddings=synthetic["A"]
    )
    frame = result.to_frame()
    own = frame[frame.description == "own"]
    assert set(own.negatives) == {"random", "hard"} and len(own) == 2 * len(synthetic["groups"])
    assert (own.metric == "auroc").all() and (own.n_active == 20).all() and (own.n_inactive == 10).all()
    assert own.value.min() >= 0.95
    assert (own.p_value < 0.001).all()
    assert not result.skipped


def test_shuffled_interpretations_score_one_half_within_monte_carlo_error(synthetic: dict) -> None:
    values = []
    for seed in range(12):
        frame = (
            Detection(WordOverlapReader(), n_hard=0, seed=seed)
            .evaluate(synthetic["U"], synthetic["texts"], synthetic["interpretations"])
            .to_frame()
        )
        shuffled = frame[frame.description == "shuffled"]
        assert (shuffled.described_by != shuffled.concept).all()
        values += list(shuffled.value)
    values = np.array(values)
    se = values.std(ddof=1) / np.sqrt(len(values))
    assert abs(values.mean() - 0.5) < 3 * se + 0.01, (values.mean(), se)
    assert se < 0.02  # the test has the power to see a departure of a few points


def test_legibility_table_and_comparisons(synthetic: dict) -> None:
    rows = []
    for seed in (0, 1, 2):
        result = Detection(WordOverlapReader(), n_hard=5, seed=seed).evaluate(
            synthetic["U"], synthetic["texts"], synthetic["interpretations"], embeddings=synthetic["A"]
        )
        rows += [{**row, "seed": seed} for row in result.rows]
    table = legibility_table([r for r in rows if r["seed"] == 0], synthetic["interpretations"])
    assert list(table.concept) == list(range(len(synthetic["groups"])))
    assert table.legible.all() and (table.p_holm >= table.p_value).all()
    assert table.words[0].split(", ")[0] in synthetic["groups"][0]
    summary = summarise(rows)
    own = summary[(summary.description == "own") & (summary.negatives == "random")].iloc[0]
    assert own["n_units"] == 3 and own["units"] == "seed" and own["mean"] >= 0.95
    comparison = compare_groups(rows, "description", baseline="shuffled", where={"negatives": "random"})
    line = comparison.iloc[0]
    assert line["level"] == "own" and line["n_units"] == 3 and line["difference"] > 0.3
    assert line["significant"]


def test_duplicated_rows_do_not_change_the_comparison(synthetic: dict) -> None:
    rows = []
    for seed in (0, 1, 2):
        result = Detection(WordOverlapReader(), n_hard=0, seed=seed).evaluate(
            synthetic["U"], synthetic["texts"], synthetic["interpretations"]
        )
        rows += [{**row, "seed": seed} for row in result.rows]
    once = compare_groups(rows, "description", baseline="shuffled")
    twice = compare_groups(rows + rows, "description", baseline="shuffled")
    assert once.p_value.tolist() == pytest.approx(twice.p_value.tolist())


def test_text_only_reader_is_scored_by_balanced_accuracy(synthetic: dict) -> None:
    # a text-only reader that says Yes exactly when a described word occurs
    def answer(messages: list) -> str:
        words = (
            messages[0].content.splitlines()[-1].removeprefix("Feature words: ").replace("'", "").split(", ")
        )
        return "Sample_0: " + ("Yes" if set(words) & set(messages[-1].content.split()) else "No")

    frame = (
        Detection(ScriptedSimulator(answer), n_hard=0, shuffled=False)
        .evaluate(synthetic["U"], synthetic["texts"], synthetic["interpretations"])
        .to_frame()
    )
    assert (frame.metric == "balanced_accuracy").all() and (frame.value == 1.0).all()
    assert frame.low.isna().all()


def test_unreadable_answers_count_as_wrong() -> None:
    prompts = build_detection_prompts(["cup"], ["a cup", "a chip"])
    answers = ask(ScriptedSimulator(["I cannot say", "Sample_0: No"]), prompts)
    assert [a.yes for a in answers] == [None, False] and all(a.p_yes is None for a in answers)


def test_concepts_without_words_or_activating_texts_are_skipped() -> None:
    U = np.array([[1.0, 0.0], [0.0, 0.0], [2.0, 0.0], [0.0, 0.0]])
    with pytest.raises(InvalidParameterError, match="two or more concepts with words"):
        Detection(WordOverlapReader()).evaluate(np.zeros((4, 2)), ["a"] * 4, {0: ["cup"], 1: []})
    detection = Detection(WordOverlapReader(), n_top=1, n_quantile=0, n_random=1, n_hard=0, shuffled=False)
    result = detection.evaluate(U, ["cup", "a", "cup cup", "b"], {0: ["cup"], 1: []}, concept_ids=[0, 1])
    assert 1 in result.skipped and "no interpretation" in result.skipped[1]


def test_shuffled_concept_is_another_concept_and_seeded() -> None:
    draws = {shuffled_concept(2, range(6), seed) for seed in range(40)}
    assert 2 not in draws and draws == {0, 1, 3, 4, 5}
    assert shuffled_concept(2, range(6), 7) == shuffled_concept(2, range(6), 7)
    with pytest.raises(InvalidParameterError, match="at least two concepts"):
        shuffled_concept(0, [0], 0)


def test_detection_checks_its_arguments() -> None:
    with pytest.raises(InvalidParameterError, match="'prompt' parameter of Detection"):
        Detection(WordOverlapReader(), prompt="poem")
    with pytest.raises(InvalidParameterError, match="'simulator' parameter of Detection"):
        Detection(object())
    with pytest.raises(InvalidParameterError, match="one per input"):
        Detection(WordOverlapReader()).evaluate(np.zeros((3, 2)), ["a", "b"], {0: ["a"]})
