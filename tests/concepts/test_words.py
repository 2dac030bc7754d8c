"""The one tokenizer and top-words pipeline shared by TopWords (concepts) and Dim-Coherence (representation)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xaimetrics import concepts, representation
from xaimetrics._words import WordTokenizer
from xaimetrics.concepts import NoProjection, TopWords
from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.representation import ReferenceCorpus, encode_words
from xaimetrics.representation._coherence import top_words
from xaimetrics.representation._corpus import tokenize

# The tokenizers each side used before they shared WordTokenizer, written out as the reference definitions.
TOP_WORDS_WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")
PAPER_TOKEN = re.compile(TOP_WORDS_WORD.pattern + r"|[^\w\s]|_")
CORPUS_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")

TEXT = st.text(alphabet=st.sampled_from([*"aZé9_ '’-—.,!?\t\n", "ß", "İ", "٣", "²"]), max_size=40)


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_each_configuration_keeps_the_tokenizer_it_replaces(text: str) -> None:
    lower = text.lower()
    assert WordTokenizer()(text) == [w for w in TOP_WORDS_WORD.findall(lower) if not w.isdigit()]
    assert WordTokenizer(lowercase=False)(text) == [
        w for w in TOP_WORDS_WORD.findall(text) if not w.isdigit()
    ]
    assert WordTokenizer(keep_punctuation=True)(text) == [
        w for w in PAPER_TOKEN.findall(lower) if not w.isdigit()
    ]
    assert WordTokenizer(joiners="'", keep_numbers=True)(text) == CORPUS_WORD.findall(lower)
    assert tokenize(text) == CORPUS_WORD.findall(lower)
    assert TopWords(None, None).tokenize(text) == WordTokenizer()(text)
    assert TopWords(None, None, variant="paper").tokenize(text) == WordTokenizer(keep_punctuation=True)(text)


def test_options_and_custom_pattern() -> None:
    text = "Rock-n-roll, 2 x 3D_art!"
    assert WordTokenizer(joiners="")(text) == ["rock", "n", "roll", "x", "3d", "art"]
    assert WordTokenizer(keep_numbers=True)(text) == ["rock-n-roll", "2", "x", "3d", "art"]
    assert WordTokenizer(pattern=r"\S+", keep_numbers=True)(text) == ["rock-n-roll,", "2", "x", "3d_art!"]
    assert WordTokenizer(pattern=r"[a-z]+", keep_punctuation=True)(text)[:4] == ["rock", "-", "n", "-"]
    assert WordTokenizer() == WordTokenizer() and WordTokenizer() != WordTokenizer(joiners="'")


def test_tokenizer_errors() -> None:
    with pytest.raises(
        InvalidParameterError, match=r"'lowercase' parameter of WordTokenizer must be True or False"
    ):
        WordTokenizer(lowercase="yes")  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match=r"'joiners' .* a string"):
        WordTokenizer(joiners=["-"])  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match=r"'pattern' .* a valid regular expression"):
        WordTokenizer(pattern="[a-")


def test_one_family_exports_the_tokenizer_the_other_accepts() -> None:
    assert concepts.WordTokenizer is WordTokenizer and not hasattr(representation, "WordTokenizer")
    corpus = ReferenceCorpus.from_texts(["Well-made, well made."], tokenizer=WordTokenizer())
    assert corpus.document(0) == ["well-made", "well", "made"]


def test_top_words_and_reference_corpus_share_the_pipeline() -> None:
    """TopWords' vocabulary and ranking equal the representation functions on the same texts and scores."""
    texts = ["good plot, good actors", "bad plot", "great actors and a good plot", "bad bad acting 10"]
    lexicon = {"good": (1.0, 0.2), "great": (2.0, -0.1), "bad": (-1.0, 0.4), "plot": (0.0, -1.0)}

    def h(words: list[str]) -> np.ndarray:
        return np.array([lexicon.get(w, (0.0, 0.0)) for w in words])

    extractor = NoProjection().fit(np.array(list(lexicon.values())))
    top = TopWords(h, extractor, n_words=2, min_frequency=2, variant="paper").fit(texts)
    corpus = ReferenceCorpus.from_texts(texts, tokenizer=WordTokenizer())
    assert top.vocabulary_ == corpus.frequent_words(min_count=2, stop_words=None, min_length=1)
    np.testing.assert_array_equal(
        top.scores_, encode_words(lambda w: extractor.encode(h(w)), top.vocabulary_)
    )
    for pole, side in (("positive", "aligned"), ("negative", "opposed")):
        ranked = top_words(top.scores_, top.vocabulary_, 2, pole=pole)
        assert [list(getattr(top.interpret()[d], side)) for d in range(2)] == ranked


def test_top_words_takes_any_tokenizer() -> None:
    extractor = NoProjection().fit(np.eye(2))
    texts = ["good GOOD good", "Plot plot Plot"]
    words = TopWords(lambda w: np.ones((len(w), 2)), extractor, min_frequency=2, tokenizer=str.split).fit(
        texts
    )
    assert words.vocabulary_ == ["Plot", "good"]  # case kept: 'GOOD' and 'plot' once each, below 2
    with pytest.raises(InvalidParameterError, match=r"'tokenizer' parameter of TopWords"):
        TopWords(lambda w: np.ones((len(w), 2)), extractor, tokenizer="split").fit(texts)  # type: ignore[arg-type]


def test_encode_words_in_one_call_when_batch_size_is_none() -> None:
    calls: list[int] = []

    def encoder(batch: list[str]) -> np.ndarray:
        calls.append(len(batch))
        return np.ones((len(batch), 3))

    assert encode_words(encoder, ["a", "b", "c"], batch_size=None).shape == (3, 3) and calls == [3]
    with pytest.raises(
        InvalidParameterError, match=r"'encoder' parameter of encode_words .* \(2, n_dimensions\)"
    ):
        encode_words(lambda batch: np.ones(2), ["a", "b"])
