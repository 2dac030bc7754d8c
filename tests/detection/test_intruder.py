"""Intruder detection: hand computations on fixed trials, and the word reader on the planted concepts."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from xaimetrics.detection import Intruder, WordOverlapReader, intruder_score, legibility_table
from xaimetrics.detection._intruder import build_intruder_prompts, intruder_trials, read_intruder_prompt
from xaimetrics.detection._sampling import sample_texts
from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.simulators import ScriptedSimulator


def test_score_by_hand_with_probabilities_text_picks_and_unreadable_answers() -> None:
    intruders = [0, 2, 1, 3, 1, 0]
    probabilities = [[0.7, 0.1, 0.1, 0.1], [0.1, 0.1, 0.6, 0.2], [0.4, 0.3, 0.2, 0.1], None, None,
                     [0.1, 0.2, 0.3, 0.4]]  # fmt: skip
    picks = [None, None, None, 3, None, None]  # trial 4: unreadable -> wrong
    s = intruder_score(intruders, probabilities, picks, n_shown=4)
    # right: trials 0, 1, 3 -> 3 of 6
    assert s.value == 0.5 and s.n_trials == 6 and s.n_unanswered == 1 and s.chance == 0.25
    assert s.p_value == pytest.approx(stats.binom.sf(2, 6, 0.25))
    low, high = proportion_confint(3, 6, alpha=0.05, method="wilson")
    assert (s.low, s.high) == pytest.approx((low, high))
    assert np.isnan(s.expected_accuracy)  # two trials had no probabilities
    full = intruder_score([0, 2, 1], probabilities[:3], n_shown=4)
    assert full.expected_accuracy == pytest.approx((0.7 + 0.6 + 0.3) / 3) and full.value == pytest.approx(
        2 / 3
    )


def test_ties_are_broken_by_a_seeded_draw_not_the_first_position() -> None:
    flat = [[0.25] * 4] * 400
    intruders = np.random.default_rng(0).integers(4, size=400)
    s = intruder_score(intruders, flat, n_shown=4, seed=3)
    assert abs(s.value - 0.25) < 3 * np.sqrt(0.25 * 0.75 / 400)
    assert s.expected_accuracy == 0.25 and s.p_value > 0.05
    assert s == intruder_score(intruders, flat, n_shown=4, seed=3)
    first = intruder_score(np.zeros(400, dtype=int), flat, n_shown=4, seed=3)
    assert first.value < 0.35  # a first-position rule would score 1.0 here


def test_trials_hold_one_non_activating_text_each() -> None:
    U = np.array([[5.0], [4.0], [3.0], [2.0], [0.0], [0.0], [0.0], [0.0]])
    s = sample_texts(U, 0, n_top=2, n_quantile=2, n_random=3, n_hard=0,
                     active_quantile=0.4, inactive_quantile=0.4)  # fmt: skip
    trials = intruder_trials(s, 3, seed=1)
    assert len(trials) == 3
    for shown, position, kind in trials:
        assert len(shown) == 3 and len(set(shown.tolist())) == 3 and kind == "random"
        assert U[shown[position], 0] == 0 and (np.delete(U[shown, 0], position) > 0).all()
    assert [t[1] for t in trials] == [t[1] for t in intruder_trials(s, 3, seed=1)]
    with pytest.raises(InvalidParameterError, match="'n_shown' parameter of intruder_trials"):
        intruder_trials(s, 6)


def test_prompt_round_trip_and_word_reader_by_hand() -> None:
    prompts = build_intruder_prompts([["goal cup", "cup final", "new chip"]], ["cup"])
    read = read_intruder_prompt(prompts[0].messages)
    assert read is not None and read.words == ("cup",) and read.texts == ("goal cup", "cup final", "new chip")
    reader = WordOverlapReader()
    p = reader.intruder_probabilities(prompts[0].messages)
    # evidence = description words per text: 1, 1, 0 -> softmax(-1, -1, 0)
    expected = np.exp([-1.0, -1.0, 0.0]) / np.exp([-1.0, -1.0, 0.0]).sum()
    assert p == pytest.approx(expected)
    response = reader.generate(prompts[0].messages, answer_schema=prompts[0].schema)
    assert response.text == "Sample_0: 2" and response.probabilities["0"] == pytest.approx(tuple(expected))
    # without a description: mean shared content words with the others; "the" is a stop word
    bare = build_intruder_prompts([["the goal cup", "the cup final goal", "the new chip"]])[0]
    e = np.array([(2 + 0) / 2, (2 + 0) / 2, 0.0])
    assert reader.intruder_probabilities(bare.messages) == pytest.approx(np.exp(-e) / np.exp(-e).sum())


def test_word_reader_finds_the_intruder_of_planted_concepts(synthetic: dict) -> None:
    own = Intruder(WordOverlapReader(), describe=True, seed=0).evaluate(
        synthetic["U"], synthetic["texts"], synthetic["interpretations"], embeddings=synthetic["A"]
    ).to_frame()  # fmt: skip
    mine = own[own.description == "own"]
    assert len(mine) == 2 * len(synthetic["groups"]) and (mine.n_trials == 10).all()
    assert mine.value.mean() >= 0.9 and (mine.p_value < 0.001).all()
    assert (mine.expected_accuracy >= 0.6).all()
    shuffled = own[own.description == "shuffled"]
    assert shuffled.value.mean() < 0.5  # another concept's words do not find this concept's intruder
    bare = (
        Intruder(WordOverlapReader(), n_hard=0, seed=0)
        .evaluate(synthetic["U"], synthetic["texts"])
        .to_frame()
    )
    # without a description the reader only compares the texts: planted words are 1-3 of ~18 words, so
    # word overlap finds the intruder 0.66 of the time here (chance 0.2)
    assert set(bare.description) == {"none"} and bare.value.mean() >= 0.5
    pooled = stats.binomtest(round((bare.value * bare.n_trials).sum()), int(bare.n_trials.sum()), 0.2,
                             alternative="greater")  # fmt: skip
    assert pooled.pvalue < 1e-6
    table = legibility_table(mine, synthetic["interpretations"], groups=["negatives"])
    assert table.legible.all() and (table.metric == "accuracy").all() and len(table) == 10


def test_a_text_only_reader_and_its_unreadable_answers() -> None:
    texts = ["goal cup", "cup goal", "goal final", "chip laptop", "laptop", "chip"]
    U = np.array([[3.0], [2.0], [1.0], [0.0], [0.0], [0.0]])

    def pick_the_text_without_goal(messages: list) -> str:
        lines = messages[-1].content.splitlines()
        return "Sample_0: " + str(next(i for i, line in enumerate(lines) if "goal" not in line))

    intruder = Intruder(ScriptedSimulator(pick_the_text_without_goal), n_shown=3, n_top=3, n_quantile=0,
                        n_random=3, n_hard=0, active_quantile=0.4, inactive_quantile=0.4)  # fmt: skip
    row = intruder.evaluate(U, texts).rows[0]
    assert row["value"] == 1.0 and np.isnan(row["expected_accuracy"]) and row["n_trials"] == 3
    silent = Intruder(ScriptedSimulator(lambda m: "the second one"), n_shown=3, n_top=3, n_quantile=0,
                      n_random=3, n_hard=0, active_quantile=0.4, inactive_quantile=0.4)  # fmt: skip
    result = silent.evaluate(U, texts)  # no answer could be read: failed with the reason, never a score of 0
    assert result.rows == [] and "none of the 3 answers could be read" in result.failed[0]


def test_intruder_checks_its_arguments() -> None:
    with pytest.raises(InvalidParameterError, match="'simulator' parameter of Intruder"):
        Intruder(object())
    with pytest.raises(InvalidParameterError, match="'n_shown' parameter of Intruder"):
        Intruder(WordOverlapReader(), n_shown=1)
    with pytest.raises(InvalidParameterError, match=r"'interpretations' parameter of Intruder\.evaluate"):
        Intruder(WordOverlapReader(), describe=True).evaluate(np.zeros((2, 1)), ["a", "b"])
    with pytest.raises(InvalidParameterError, match="'intruders' parameter of intruder_score"):
        intruder_score([4], n_shown=4)
    with pytest.raises(InvalidParameterError, match="'probabilities' parameter of intruder_score"):
        intruder_score([0], [[0.5, 0.5]], n_shown=3)
    with pytest.raises(InvalidParameterError, match="'trials' parameter of build_intruder_prompts"):
        build_intruder_prompts([["only one"]])


def test_detection_and_intruder_rows_share_the_holm_table(synthetic: dict) -> None:
    from xaimetrics.detection import Detection

    detection = Detection(WordOverlapReader(), n_hard=0, shuffled=False).evaluate(
        synthetic["U"], synthetic["texts"], synthetic["interpretations"]
    )
    intruder = Intruder(WordOverlapReader(), n_hard=0).evaluate(synthetic["U"], synthetic["texts"])
    table = legibility_table([*detection.rows, *intruder.rows], groups=["scorer"])
    # detection rows carry no scorer column: they keep a group of their own rather than being dropped
    assert len(table) == 2 * len(synthetic["groups"])
    assert sorted(table.metric.unique()) == ["accuracy", "auroc"]
    assert table[table.metric == "auroc"].legible.all()
    # word overlap without a description: 10 trials per concept at chance 0.2, Holm over the 5 concepts
    intruders = table[table.metric == "accuracy"]
    assert (intruders.legible == (intruders.auroc >= 0.8)).all() and intruders.legible.sum() >= 3
