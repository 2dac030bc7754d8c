"""Vectorised window counts against a literal window-by-window count (both conventions)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.representation import ReferenceCorpus, count_windows


def literal_windows(documents: list[list[str]], window_size: int, mode: str) -> list[set[str]]:
    """Every window as a set of words, built one window at a time."""
    windows: list[set[str]] = []
    for doc in documents:
        if len(doc) <= window_size:
            if doc or mode == "gensim":  # gensim counts an empty document as one (empty) window
                windows.append(set(doc))
            continue
        if mode == "xaimetrics":
            windows.extend(set(doc[s : s + window_size]) for s in range(len(doc) - window_size + 1))
        else:  # gensim's WordOccurrenceAccumulator: drop the left-edge token, add the new right token
            present = set(doc[:window_size])
            windows.append(set(present))
            for s in range(1, len(doc) - window_size + 1):
                present.discard(doc[s - 1])
                present.add(doc[s + window_size - 1])
                windows.append(set(present))
    return windows


def literal_counts(documents, words, window_size, mode):
    windows = literal_windows(documents, window_size, mode)
    joint = np.array([[sum(a in w and b in w for w in windows) for b in words] for a in words])
    return joint, len(windows)


def random_documents(rng: np.random.Generator, n_docs: int, vocab: int, max_len: int) -> list[list[str]]:
    words = [f"w{i}" for i in range(vocab)]
    return [list(rng.choice(words, size=rng.integers(0, max_len + 1))) for _ in range(n_docs)]


@pytest.mark.parametrize("mode", ["xaimetrics", "gensim"])
@pytest.mark.parametrize("window_size", [1, 2, 3, 5])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_counts_equal_literal_window_count(mode, window_size, seed):
    rng = np.random.default_rng(seed)
    documents = random_documents(rng, 12, 6, 14)  # a 6-word vocabulary: many repeats inside windows
    documents.append(["w0"] * 5)  # only repeats
    documents.insert(3, [])  # an empty document
    documents.append(["lonely"])
    corpus = ReferenceCorpus.from_tokens(documents)
    words = ["w0", "w3", "w1", "w5", "lonely", "absent"]
    counts = count_windows(corpus, words, window_size=window_size, mode=mode)
    expected, n_windows = literal_counts(documents, words, window_size, mode)
    assert counts.n_windows == n_windows
    np.testing.assert_array_equal(counts.joint.toarray(), expected)
    np.testing.assert_array_equal(counts.marginals, np.diag(expected))


def test_gensim_mode_differs_on_a_repeated_word_that_leaves_the_window():
    corpus = ReferenceCorpus.from_tokens([["a", "x", "a", "y"]])
    ours = count_windows(corpus, ["a", "y"], window_size=3)
    gensim_like = count_windows(corpus, ["a", "y"], window_size=3, mode="gensim")
    assert ours.marginals.tolist() == [2, 1]  # "a" is in both windows [a x a] and [x a y]
    assert gensim_like.marginals.tolist() == [1, 1]  # gensim drops "a" when the first one leaves
    assert ours.joint[0, 1] == 1 and gensim_like.joint[0, 1] == 0


def test_chunked_counting_equals_one_shot():
    rng = np.random.default_rng(5)
    corpus = ReferenceCorpus.from_tokens(random_documents(rng, 60, 9, 30))
    words = [f"w{i}" for i in range(9)]
    for mode in ("xaimetrics", "gensim"):
        one_shot = count_windows(corpus, words, window_size=4, mode=mode)
        chunked = count_windows(corpus, words, window_size=4, mode=mode, max_entries=40)
        np.testing.assert_array_equal(one_shot.joint.toarray(), chunked.joint.toarray())


def test_pair_counts_reads_the_requested_pairs():
    corpus = ReferenceCorpus.from_tokens([["a", "b", "c"], ["a", "c"]])
    counts = count_windows(corpus, ["a", "b", "c"], window_size=2)
    joint = counts.joint.toarray()
    rows, cols = np.array(list(itertools.product(range(3), repeat=2))).T
    np.testing.assert_array_equal(counts.pair_counts(rows, cols), joint[rows, cols])


def test_count_windows_rejects_bad_arguments():
    corpus = ReferenceCorpus.from_tokens([["a", "b"]])
    with pytest.raises(InvalidParameterError, match="'words' parameter of count_windows must be distinct"):
        count_windows(corpus, ["a", "a"])
    with pytest.raises(InvalidParameterError, match="'window_size' parameter"):
        count_windows(corpus, ["a"], window_size=0)
    with pytest.raises(InvalidParameterError, match="'mode' parameter"):
        count_windows(corpus, ["a"], mode="fast")
