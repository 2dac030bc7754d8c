"""Vectorised window counts against a literal window-by-window count (both conventions)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.representation import ReferenceCorpus
from xaimetrics.representation._cooccurrence import count_windows


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


def previous_count_windows(corpus, words, window_size, mode):
    """The counting path before the memory rework (int64 over every token, one sparse sum per chunk).

    Kept verbatim in substance as the reference for the rewrite: the new path must give the same counts.
    """
    m = len(words)
    lengths = corpus.lengths
    windows_per_doc = np.maximum(lengths - window_size + 1, 1)
    if mode == "xaimetrics":
        windows_per_doc[lengths == 0] = 0
    window_offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(windows_per_doc, out=window_offsets[1:])
    ids = corpus.ids(words)
    lookup = np.full(len(corpus.vocabulary), -1, dtype=np.int64)
    known = ids >= 0
    lookup[ids[known]] = np.flatnonzero(known)
    columns = lookup[corpus.token_ids]
    positions = np.flatnonzero(columns >= 0)
    columns = columns[positions]
    docs = np.searchsorted(corpus.offsets, positions, side="right") - 1
    positions = positions - corpus.offsets[docs]
    order = np.argsort(columns * (int(docs.max()) + 1) + docs, kind="stable")
    docs, positions, columns = docs[order], positions[order], columns[order]
    new_group = np.ones(len(docs), dtype=bool)
    new_group[1:] = (docs[1:] != docs[:-1]) | (columns[1:] != columns[:-1])
    last_window = windows_per_doc[docs] - 1
    start = np.maximum(positions - window_size + 1, 0)
    if mode == "gensim":
        stride = int(lengths.max()) + 1
        rank = np.cumsum(new_group) - 1
        key = rank * stride + positions
        end = np.minimum(positions[np.searchsorted(key, rank * stride + start, side="left")], last_window)
    else:
        end = np.minimum(positions, last_window)
    previous_end = np.empty_like(end)
    previous_end[0] = -1
    previous_end[1:] = end[:-1]
    previous_end[new_group] = -1
    start = np.maximum(start, previous_end + 1)
    keep = end >= start
    first = window_offsets[docs[keep]] + start[keep]
    last = window_offsets[docs[keep]] + end[keep]
    columns = columns[keep]
    joint = np.zeros((m, m), dtype=np.int64)
    np.add.at(joint, (columns, columns), last - first + 1)
    order = np.argsort(first, kind="stable")
    first, last, columns = first[order], last[order], columns[order]
    stop = np.searchsorted(first, last, side="right")
    n_partners = stop - np.arange(1, len(first) + 1)
    total = int(n_partners.sum())
    left = np.repeat(np.arange(len(first)), n_partners)
    right = left + 1 + (np.arange(total) - np.repeat(np.cumsum(n_partners) - n_partners, n_partners))
    overlap = np.minimum(last[left], last[right]) - first[right] + 1
    np.add.at(joint, (columns[left], columns[right]), overlap)
    np.add.at(joint, (columns[right], columns[left]), overlap)
    return joint, int(window_offsets[-1])


@pytest.mark.parametrize("mode", ["xaimetrics", "gensim"])
@pytest.mark.parametrize(("n_words", "window_size"), [(300, 10), (2_100, 5)])  # dense and sparse paths
def test_int32_blocked_counting_equals_the_previous_path_on_real_reviews(mode, n_words, window_size):
    corpus = ReferenceCorpus.from_dataset("rotten_tomatoes", "train", max_documents=1200)
    # the most frequent words (stop words: many repeats and overlaps inside windows) and rarer ones
    words = corpus.frequent_words(min_count=1, max_words=n_words, stop_words=None, min_length=1)[::-1]
    expected, n_windows = previous_count_windows(corpus, words, window_size, mode)
    assert expected.sum() > 100_000  # a non-trivial count
    for max_entries in (4_000_000, 3_000):  # one chunk and one pair block, then many of each
        counts = count_windows(corpus, words, window_size=window_size, mode=mode, max_entries=max_entries)
        assert counts.n_windows == n_windows
        np.testing.assert_array_equal(counts.joint.toarray(), expected)
