"""The reference corpus: tokenisation, storage, frequent words, empty input."""

from __future__ import annotations

import numpy as np
import pytest

from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.representation import ReferenceCorpus
from xaimetrics.representation._corpus import tokenize


def test_tokenize_lowercases_and_keeps_inner_apostrophes():
    assert tokenize("Don't STOP -- it's 2 good_ones!") == ["don't", "stop", "it's", "2", "good", "ones"]


def test_corpus_round_trips_documents():
    texts = ["The cat sat.", "", "A dog; a CAT!"]
    corpus = ReferenceCorpus.from_texts(texts)
    assert list(corpus.documents()) == [tokenize(t) for t in texts]
    assert corpus.lengths.tolist() == [3, 0, 4]
    assert corpus.ids(["cat", "nope"]).tolist() == [corpus.vocabulary.index("cat"), -1]
    assert corpus.counts[corpus.token_to_id["a"]] == 2


def test_frequent_words_filters_and_orders():
    corpus = ReferenceCorpus.from_texts(["the film film plot 10", "film plot the the x", "plot"])
    assert corpus.frequent_words(min_count=2) == ["film", "plot"]
    assert corpus.frequent_words(min_count=1, stop_words=None, min_length=1)[:3] == ["film", "plot", "the"]
    assert corpus.frequent_words(min_count=1, stop_words={"film"}, max_words=1) == ["plot"]


def test_from_dataset_uses_the_offline_loader():
    corpus = ReferenceCorpus.from_dataset("bbc_news", "test", max_documents=20)
    assert corpus.n_documents == 20 and corpus.name == "bbc_news/test" and corpus.n_tokens > 1000


def test_empty_corpus_is_rejected():
    with pytest.raises(
        InvalidParameterError, match=r"'texts' parameter of ReferenceCorpus\.from_texts must be a non-empty"
    ):
        ReferenceCorpus.from_texts([])
    with pytest.raises(InvalidParameterError, match="a non-empty corpus"):
        ReferenceCorpus.from_tokens([])
    with pytest.raises(InvalidParameterError, match="at least one token"):
        ReferenceCorpus.from_texts(["", "?!"])
    with pytest.raises(InvalidParameterError, match=r"Use ReferenceCorpus\.from_texts for raw texts"):
        ReferenceCorpus.from_tokens(["a text"])


def test_token_ids_are_compact_integers():
    corpus = ReferenceCorpus.from_tokens([["b", "a"], ["a"]])
    assert corpus.token_ids.dtype == np.int32 and corpus.offsets.tolist() == [0, 2, 3]
