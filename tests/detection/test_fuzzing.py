"""Fuzzing: marks at the words where the concept fires against the same number of random marks."""

from __future__ import annotations

import numpy as np

from xaimetrics.detection import WordOverlapReader, fuzz_concept
from xaimetrics.detection._fuzzing import mark_words
from xaimetrics.detection._sampling import sample_texts


def test_marks_keep_the_text_and_the_count() -> None:
    text = "The Cup final: a late goal, then another goal!"
    right, n = mark_words(text, {"goal": 2.0, "cup": 1.0}, 3)  # every position of a word is marked
    assert n == 3 and right == "The <<Cup>> final: a late <<goal>>, then another <<goal>>!"
    wrong, m = mark_words(text, {"goal": 2.0, "cup": 1.0}, 3, correct=False, rng=np.random.default_rng(0))
    assert m == 3 and wrong.replace("<<", "").replace(">>", "") == text
    assert "<<goal>>" not in wrong and "<<Cup>>" not in wrong


def test_word_reader_tells_right_marks_from_random_ones(synthetic: dict) -> None:
    scores = []
    for concept in range(len(synthetic["groups"])):
        sample = sample_texts(synthetic["U"], concept, n_top=10, n_quantile=10, n_random=1, n_hard=0)
        texts = [synthetic["texts"][i] for i in sample.indices[sample.active == 1]]
        row, records = fuzz_concept(
            WordOverlapReader(), concept, synthetic["interpretations"][concept], texts,
            synthetic["word_scores"][concept], n_marks=2,
        )  # fmt: skip
        assert row is not None and row["n_active"] == row["n_inactive"] == 20 and len(records) == 40
        scores.append(row["auroc"])
    assert min(scores) >= 0.95


def test_shuffled_description_cannot_tell_the_marks_apart(synthetic: dict) -> None:
    # Another concept's words never match the right marks but sometimes match a random mark (a text can hold
    # words of both groups), so a literal reader falls slightly *below* 0.5 — never above it.
    values = []
    for seed in range(6):
        for concept in range(len(synthetic["groups"])):
            other = (concept + 1) % len(synthetic["groups"])
            sample = sample_texts(synthetic["U"], concept, n_random=1, n_hard=0, seed=seed)
            texts = [synthetic["texts"][i] for i in sample.indices[sample.active == 1]]
            row, _ = fuzz_concept(
                WordOverlapReader(), concept, synthetic["interpretations"][other], texts,
                synthetic["word_scores"][concept], seed=seed,
            )  # fmt: skip
            values.append(row["auroc"])
    values = np.array(values)
    assert 0.4 < values.mean() < 0.5 + 3 * values.std(ddof=1) / np.sqrt(len(values))


def test_no_markable_text_gives_no_row() -> None:
    assert fuzz_concept(WordOverlapReader(), 0, ["cup"], ["nothing here"], {"cup": 1.0}) == (None, [])
