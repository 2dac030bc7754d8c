"""Dim-Coherence@k: hand-computed NPMI, the zero policy, gensim equality, top words and errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.representation import (
    ReferenceCorpus,
    dim_coherence,
    encode_words,
    npmi_matrix,
    topic_coherence,
)
from xaimetrics.representation._coherence import top_words

# Window 3. Windows: [a b a] (a repeated: counted once), [b a c], [c d] (short document), [d b].
TINY = [["a", "b", "a", "c"], ["c", "d"], ["d", "b"]]


def hand_npmi(n_ab: int, n_a: int, n_b: int, n: int) -> float:
    p_ab, p_a, p_b = n_ab / n, n_a / n, n_b / n
    return math.log(p_ab / (p_a * p_b)) / -math.log(p_ab)


def test_npmi_matches_a_hand_computation_with_repeats_and_zero_cooccurrence():
    corpus = ReferenceCorpus.from_tokens(TINY)
    matrix = npmi_matrix(["a", "b", "c", "d"], corpus, window_size=3)
    # counts over 4 windows: a 2, b 3, c 2, d 2; ab 2, ac 1, bc 1, bd 1, cd 1, ad 0
    assert matrix[0, 1] == pytest.approx(hand_npmi(2, 2, 3, 4), abs=1e-12)  # log(4/3) / log 2
    assert matrix[0, 1] == pytest.approx(math.log(4 / 3) / math.log(2), abs=1e-12)
    assert matrix[0, 2] == pytest.approx(hand_npmi(1, 2, 2, 4), abs=1e-12)  # = 0: independent
    assert matrix[1, 3] == pytest.approx(hand_npmi(1, 3, 2, 4), abs=1e-12)
    assert matrix[0, 3] == -1.0  # never in the same window
    np.testing.assert_allclose(matrix, matrix.T)
    expected_topic = np.mean([hand_npmi(2, 2, 3, 4), hand_npmi(1, 2, 2, 4), hand_npmi(1, 3, 2, 4)])
    assert topic_coherence([["a", "b", "c"]], corpus, window_size=3)[0] == pytest.approx(expected_topic)


def test_gensim_mode_matches_a_hand_computation_of_gensims_formula():
    corpus = ReferenceCorpus.from_tokens(TINY)
    # gensim drops "a" when the first "a" leaves the window: windows {a,b}, {b,c}, {c,d}, {d,b}
    eps, n = 1e-12, 4

    def gensim_npmi(n_ab, n_a, n_b):
        return math.log((n_ab / n + eps) / ((n_a / n) * (n_b / n))) / -math.log(n_ab / n + eps)

    matrix = npmi_matrix(["a", "b", "c", "d"], corpus, window_size=3, mode="gensim")
    assert matrix[0, 1] == pytest.approx(gensim_npmi(1, 1, 3), abs=1e-12)
    assert matrix[0, 2] == pytest.approx(gensim_npmi(0, 1, 2), abs=1e-12)  # not -1: ε in the log
    assert -1.0 < matrix[0, 2] < -0.9


def test_absent_word_pairs_are_left_out_and_reported():
    corpus = ReferenceCorpus.from_tokens(TINY)
    vectors = np.array([[1.0], [0.9], [0.8]])
    result = dim_coherence(vectors, ["a", "b", "zzz"], corpus, k=3, window_size=3)
    assert result.missing_words == [["zzz"]]
    assert result.n_pairs.tolist() == [1]
    assert result.scores[0] == pytest.approx(hand_npmi(2, 2, 3, 4))
    only_absent = dim_coherence(np.array([[1.0], [0.9]]), ["yyy", "zzz"], corpus, k=2)
    assert math.isnan(only_absent.scores[0]) and math.isnan(only_absent.mean)
    # gensim's rule: an unknown word leaves its topic; only a topic without a known word is an error
    dropped = topic_coherence([["a", "zzz", "b"]], corpus, window_size=3, mode="gensim")
    assert dropped[0] == topic_coherence([["a", "b"]], corpus, window_size=3, mode="gensim")[0]
    with pytest.raises(InvalidParameterError, match="at least one word of the corpus in gensim mode"):
        topic_coherence([["a", "b"], ["yyy", "zzz"]], corpus, mode="gensim")
    with pytest.raises(
        InvalidParameterError, match=r"with unknown_words='raise'. Got absent words \['zzz'\]"
    ):
        topic_coherence([["a", "zzz"]], corpus, unknown_words="raise")


def test_words_in_every_window_score_one():
    corpus = ReferenceCorpus.from_tokens([["a", "b"], ["b", "a"]])
    assert topic_coherence([["a", "b"]], corpus, window_size=2)[0] == 1.0


@pytest.fixture(scope="module")
def rotten_corpus():
    return ReferenceCorpus.from_dataset("rotten_tomatoes", "train", max_documents=1500)


def test_gensim_mode_equals_gensim_c_npmi_on_a_real_corpus(rotten_corpus):
    gensim = pytest.importorskip("gensim")
    from gensim.corpora import Dictionary
    from gensim.models.coherencemodel import CoherenceModel

    assert gensim.__version__.startswith("4.")
    words = rotten_corpus.frequent_words(min_count=3, max_words=800, stop_words=None)
    rng = np.random.default_rng(0)
    topics = [words[:12]] + [
        list(rng.choice(words, 12, replace=False)) for _ in range(7)
    ]  # frequent words repeat
    documents = list(rotten_corpus.documents())
    reference = CoherenceModel(
        topics=topics,
        texts=documents,
        dictionary=Dictionary(documents),
        coherence="c_npmi",
        window_size=10,
        processes=1,
    ).get_coherence_per_topic()
    ours = topic_coherence(topics, rotten_corpus, window_size=10, mode="gensim")
    np.testing.assert_allclose(ours, reference, rtol=0, atol=1e-9)
    default = topic_coherence(topics, rotten_corpus, window_size=10)
    assert not np.allclose(default, reference, atol=1e-3)  # the documented policy differs from gensim's


def test_gensim_mode_equals_gensim_on_the_tiny_corpus():
    pytest.importorskip("gensim")
    from gensim.corpora import Dictionary
    from gensim.models.coherencemodel import CoherenceModel

    documents = [*TINY, [], ["b", "b", "a", "d", "b", "a", "c"]]
    topics = [["a", "b", "c"], ["d", "a"]]
    reference = CoherenceModel(
        topics=topics,
        texts=documents,
        dictionary=Dictionary(documents),
        coherence="c_npmi",
        window_size=3,
        processes=1,
    ).get_coherence_per_topic()
    ours = topic_coherence(topics, ReferenceCorpus.from_tokens(documents), window_size=3, mode="gensim")
    np.testing.assert_allclose(ours, reference, rtol=0, atol=1e-12)


def test_top_words_by_absolute_value_and_by_pole():
    vectors = np.array([[0.2, -0.9], [-0.7, 0.1], [0.5, 0.4], [0.1, -0.3]])
    words = ["w0", "w1", "w2", "w3"]
    assert top_words(vectors, words, 2) == [["w1", "w2"], ["w0", "w2"]]
    assert top_words(vectors, words, 2, pole="positive") == [["w2", "w0"], ["w2", "w1"]]
    assert top_words(vectors, words, 2, pole="negative") == [["w1", "w3"], ["w0", "w3"]]


def test_dim_coherence_scores_each_dimension_and_pole():
    corpus = ReferenceCorpus.from_texts(
        ["good great fun", "good fun", "bad awful", "awful bad boring", "great fun"], name="toy"
    )
    words = ["good", "great", "fun", "bad", "awful", "boring"]
    vectors = np.array([[0.9, 1], [0.8, 1], [0.7, 1], [-0.9, 0], [-0.8, 0], [-0.7, 0]], dtype=float)
    result = dim_coherence(vectors, words, corpus, k=3, window_size=3, poles=True, dimension_names=["s", "c"])
    expected_pos = topic_coherence([["good", "great", "fun"]], corpus, window_size=3)[0]
    expected_neg = topic_coherence([["bad", "awful", "boring"]], corpus, window_size=3)[0]
    assert result.pole_scores["positive"][0] == pytest.approx(expected_pos)
    assert result.pole_scores["negative"][0] == pytest.approx(expected_neg)
    assert math.isnan(result.pole_scores["negative"][1])  # dimension 1 has no negative word
    frame = result.to_frame()
    assert list(frame["dimension"]) == ["s", "c"] and "coherence_positive" in frame
    payload = result.to_dict()
    assert payload["corpus"] == "toy" and payload["pole_scores"]["negative"][1] is None


def test_encode_words_batches_and_checks_rows():
    calls = []

    def encoder(batch):
        calls.append(len(batch))
        return np.array([[len(w), 1.0] for w in batch])

    out = encode_words(encoder, ["a", "bb", "ccc"], batch_size=2)
    assert calls == [2, 1] and out[:, 0].tolist() == [1, 2, 3]
    with pytest.raises(InvalidParameterError, match="one row per word"):
        encode_words(lambda batch: np.ones((1, 2)), ["a", "b"])


def test_bad_inputs_get_clear_errors():
    corpus = ReferenceCorpus.from_tokens(TINY)
    with pytest.raises(
        InvalidParameterError, match=r"'k' parameter of top_words must be ≤ the vocabulary size \(3\)"
    ):
        dim_coherence(np.ones((3, 2)), ["a", "b", "c"], corpus, k=4)
    with pytest.raises(InvalidParameterError, match="'k' parameter of dim_coherence must be an integer ≥ 2"):
        dim_coherence(np.ones((3, 2)), ["a", "b", "c"], corpus, k=1)
    with pytest.raises(InvalidParameterError, match="one word per row of word_vectors"):
        top_words(np.ones((3, 2)), ["a", "b"], 2)
    with pytest.raises(InvalidParameterError, match="at least 2 words per topic"):
        topic_coherence([["a"]], corpus)
    with pytest.raises(InvalidParameterError, match="distinct words inside each topic"):
        topic_coherence([["a", "a"]], corpus)
    with pytest.raises(InvalidParameterError, match="must be a ReferenceCorpus"):
        topic_coherence([["a", "b"]], [["a", "b"]])
    with pytest.raises(InvalidParameterError, match="finite values"):
        top_words(np.array([[np.nan], [1.0]]), ["a", "b"], 1)
