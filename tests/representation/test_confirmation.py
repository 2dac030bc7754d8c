"""gensim's coherence family (c_uci, u_mass, c_v, c_npmi) and the direct confirmation measures: equal to
gensim 4's CoherenceModel on a real corpus with unknown words, hand-computed on a tiny one, and errors."""

from __future__ import annotations

import math
from contextlib import nullcontext

import numpy as np
import pytest

from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.representation import ReferenceCorpus, confirmation_matrix, topic_coherence
from xaimetrics.representation._cooccurrence import count_windows

DOCUMENTS = [["a", "b", "a", "c"], ["c", "d"], ["d", "b"], [], ["b", "b", "a", "d", "b", "a", "c"]]
MEASURES = ["c_npmi", "c_uci", "u_mass", "c_v"]


@pytest.fixture(scope="module")
def real_corpus_and_topics():
    corpus = ReferenceCorpus.from_dataset("rotten_tomatoes", "train", max_documents=1500)
    documents = [*corpus.documents(), []]  # an empty document: gensim counts it as a window / a document
    corpus = ReferenceCorpus.from_tokens(documents)
    words = corpus.frequent_words(min_count=3, max_words=800, stop_words=None)
    rng = np.random.default_rng(1)
    topics = [words[:12]] + [list(rng.choice(words, 12, replace=False)) for _ in range(6)]
    topics += [
        ["film", "zzzq", "movie", "qqqz", "story"],
        ["film", "zzzq"],
    ]  # unknown words, gensim drops them
    return corpus, documents, topics


def gensim_values(measure, topics, documents, window_size=None):
    from gensim.corpora import Dictionary
    from gensim.models.coherencemodel import CoherenceModel

    model = CoherenceModel(
        topics=topics, texts=documents, dictionary=Dictionary(documents), coherence=measure,
        window_size=window_size, processes=1, topn=max(len(t) for t in topics),
    )  # fmt: skip
    return np.asarray(model.get_coherence_per_topic(), dtype=np.float64)


@pytest.mark.parametrize("measure", MEASURES)
def test_gensim_mode_equals_gensim_on_a_real_corpus_with_unknown_words(measure, real_corpus_and_topics):
    pytest.importorskip("gensim")
    corpus, documents, topics = real_corpus_and_topics
    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning) if measure != "c_v" else nullcontext():
        reference = gensim_values(measure, topics, documents)  # the one-known-word topic: mean of nothing
    ours = topic_coherence(topics, corpus, measure=measure, mode="gensim")
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(reference))
    np.testing.assert_allclose(ours, reference, rtol=0, atol=1e-9, equal_nan=True)
    assert np.isnan(ours[-1]) == (measure != "c_v")  # one known word: no pair; c_v compares it with itself
    default = topic_coherence(topics, corpus, measure=measure)
    assert np.isnan(default[-1])  # our mode: fewer than two known words is undefined
    if measure in ("c_npmi", "c_v"):  # NPMI's zero policy differs; PMI / log-conditional differ by counting
        assert not np.allclose(default[:-1], reference[:-1], atol=1e-3)


@pytest.mark.parametrize("measure", MEASURES)
def test_gensim_mode_equals_gensim_on_a_tiny_corpus_with_other_windows(measure):
    pytest.importorskip("gensim")
    corpus = ReferenceCorpus.from_tokens(DOCUMENTS)
    topics = [["a", "b", "c"], ["d", "a", "c", "b"], ["c", "b"]]
    window = None if measure == "u_mass" else 3
    reference = gensim_values(measure, topics, DOCUMENTS, window)
    ours = topic_coherence(topics, corpus, measure=measure, window_size=window, mode="gensim")
    np.testing.assert_allclose(ours, reference, rtol=0, atol=1e-12)


def test_u_mass_by_hand_on_documents():
    # documents (ours: the empty one is not counted; 4 documents): a in 0, 4; b in 0, 2, 4; c in 0, 1, 4
    corpus = ReferenceCorpus.from_tokens(DOCUMENTS)
    eps = 1e-12
    # segments of [b, a, c]: (a | b), (c | b), (c | a)
    expected = np.mean([math.log(2 / 4 + eps) - math.log(3 / 4), math.log(2 / 4 + eps) - math.log(3 / 4),
                        math.log(2 / 4 + eps) - math.log(2 / 4)])  # fmt: skip
    assert topic_coherence([["b", "a", "c"]], corpus, measure="u_mass")[0] == pytest.approx(
        expected, abs=1e-12
    )
    # asymmetric: the order of the topic matters
    assert topic_coherence([["a", "b", "c"]], corpus, measure="u_mass")[0] != pytest.approx(expected)
    matrix = confirmation_matrix(["a", "b", "c"], corpus, measure="log_conditional", window_size=None)
    assert matrix[0, 1] == pytest.approx(math.log(2 / 4 + eps) - math.log(3 / 4), abs=1e-12)  # log P(a | b)
    assert matrix[1, 0] == pytest.approx(math.log(2 / 4 + eps) - math.log(2 / 4), abs=1e-12)  # log P(b | a)


def test_c_uci_and_c_v_by_hand_with_a_zero_cooccurrence():
    # window 2 over [a b] [a c] [b d]: windows {a,b} {a,c} {b,d}; a: 2, b: 2, c: 1, d: 1; a-d never co-occur
    corpus = ReferenceCorpus.from_tokens([["a", "b"], ["a", "c"], ["b", "d"]])
    eps, n = 1e-12, 3

    def pmi(j, x, y):
        return math.log((j / n + eps) / ((x / n) * (y / n)))

    uci = topic_coherence([["a", "b", "d"]], corpus, measure="c_uci", window_size=2)[0]
    assert uci == pytest.approx((pmi(1, 2, 2) + pmi(0, 2, 1) + pmi(1, 2, 1)) / 3, abs=1e-12)

    def npmi(j, x, y):  # our policy: the limits
        if j == 0:
            return -1.0
        return math.log((j / n) / ((x / n) * (y / n))) / -math.log(j / n)

    counts = {("a", "a"): (2, 2, 2), ("b", "b"): (2, 2, 2), ("d", "d"): (1, 1, 1), ("a", "b"): (1, 2, 2),
              ("a", "d"): (0, 2, 1), ("b", "d"): (1, 2, 1)}  # fmt: skip
    words = ["a", "b", "d"]

    def m(x, y):
        return npmi(*counts.get((x, y), counts.get((y, x))))

    vectors = np.array([[m(x, y) for y in words] for x in words])
    whole = vectors.sum(axis=0)
    cosines = vectors @ whole / (np.linalg.norm(vectors, axis=1) * np.linalg.norm(whole))
    cv = topic_coherence([words], corpus, measure="c_v", window_size=2)[0]
    assert cv == pytest.approx(cosines.mean(), abs=1e-12)
    squared = topic_coherence([words], corpus, measure="c_v", window_size=2, gamma=2)[0]
    v2 = vectors**2
    w2 = v2.sum(axis=0)
    assert squared == pytest.approx(np.mean(v2 @ w2 / (np.linalg.norm(v2, axis=1) * np.linalg.norm(w2))))


def test_confirmation_matrix_measures_and_absent_words():
    corpus = ReferenceCorpus.from_tokens(DOCUMENTS)
    npmi = confirmation_matrix(["a", "b", "zzz"], corpus, window_size=3)
    assert np.isnan(npmi[2]).all() and np.isnan(npmi[:, 2]).all()
    counts = count_windows(corpus, ["a", "b"], window_size=3)
    n, (na, nb), nab = counts.n_windows, counts.marginals, counts.joint[0, 1]
    pmi = confirmation_matrix(["a", "b"], corpus, measure="pmi", window_size=3)
    assert pmi[0, 1] == pmi[1, 0] == pytest.approx(math.log((nab / n + 1e-12) / (na / n * nb / n)))
    gensim = confirmation_matrix(["a", "b", "zzz"], corpus, window_size=3, mode="gensim")
    assert np.isfinite(gensim[:2, :2]).all()


def test_bad_measure_window_and_gamma_get_clear_errors():
    corpus = ReferenceCorpus.from_tokens(DOCUMENTS)
    with pytest.raises(InvalidParameterError, match="'measure' parameter of topic_coherence"):
        topic_coherence([["a", "b"]], corpus, measure="c_w2v")
    with pytest.raises(InvalidParameterError, match="None for u_mass"):
        topic_coherence([["a", "b"]], corpus, measure="u_mass", window_size=10)
    with pytest.raises(InvalidParameterError, match="'gamma' parameter of topic_coherence"):
        topic_coherence([["a", "b"]], corpus, measure="c_v", gamma=0)
    with pytest.raises(InvalidParameterError, match="a symmetric measure"):
        topic_coherence([["a", "b"]], corpus, measure="c_v", context_measure="log_conditional")
    with pytest.raises(InvalidParameterError, match="'measure' parameter of confirmation_matrix"):
        confirmation_matrix(["a", "b"], corpus, measure="c_v")
    with pytest.raises(InvalidParameterError, match="'unknown_words' parameter of topic_coherence"):
        topic_coherence([["a", "b"]], corpus, unknown_words="ignore")


def test_gensims_published_direct_confirmation_examples():
    # gensim's docstring / test_direct_confirmation_measure case: 5 documents, "test" in 3, "doc" in 2, both
    # in 1: log-conditional ≈ ln(1/2), PMI ≈ ln((1/5) / ((3/5)(2/5))) = -0.182321557, NPMI ≈ -0.113282753
    corpus = ReferenceCorpus.from_tokens([["x"], ["test"], ["test", "doc"], ["test"], ["doc"]])
    words = ["test", "doc"]
    for measure, expected in (
        ("log_conditional", -0.693147181),
        ("pmi", -0.182321557),
        ("npmi", -0.113282753),
    ):
        matrix = confirmation_matrix(words, corpus, measure=measure, window_size=None, mode="gensim")
        assert matrix[0, 1] == pytest.approx(expected, abs=1e-9), measure
