"""Concept interpretation: TopWords (CMAW, paper eq. 1) and top activating examples."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from xaimetrics.concepts import ConceptInterpretation, NoProjection, TopWords
from xaimetrics.concepts._interpretation import top_activating_examples
from xaimetrics.exceptions import InvalidParameterError, NotFittedError

# Each known word activates three "neurons" in a known way; any other text (several words, unknown words)
# gives zeros. With NoProjection the concepts are these neurons, so the answer is known.
LEXICON = {
    "superb": (3.0, 0.0, 0.5),
    "great": (2.0, 0.0, 0.4),
    "good": (1.0, 0.0, 0.3),
    "fine": (0.5, 0.0, 0.2),
    "bad": (-1.0, 0.0, 0.1),
    "awful": (-2.5, 0.0, 0.6),
    "plot": (0.0, 1.5, 0.7),
    "actors": (0.0, 1.0, 0.8),
    "brilliant": (9.0, 0.0, 9.0),  # the strongest word, but rare in the texts below
}


class Lexicon:
    """A stand-in ``h`` that records the texts it sees."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def activations(self, texts: list[str]) -> torch.Tensor:
        self.seen.extend(texts)
        return torch.tensor([LEXICON.get(text, (0.0, 0.0, 0.0)) for text in texts])


TEXTS = [
    "Superb plot, great actors.",
    "The plot was GOOD; the actors were fine.",
    "Bad plot and awful actors... bad, bad!",
    "Great, great fun. Fine plot.",
    "A superb, good film with good actors and an awful ending.",
    "Brilliant. 2 stars for the plot.",
    "superb great good fine awful the the the",
]


@pytest.fixture
def fitted() -> TopWords:
    model = Lexicon()
    extractor = NoProjection().fit(np.array(list(LEXICON.values())))
    return TopWords(model, extractor, n_words=3, min_frequency=2).fit(TEXTS)


def test_top_words_are_the_most_activating_frequent_words_in_order(fitted: TopWords) -> None:
    result = fitted.interpret()
    assert sorted(result) == [0, 1, 2]
    assert result[0].aligned == ("superb", "great", "good")
    assert result[0].opposed == ("awful", "bad")  # only the words with a negative activation
    assert result[0].aligned_scores == (3.0, 2.0, 1.0)
    assert result[0].opposed_scores == (-2.5, -1.0)
    assert result[1].aligned == ("plot", "actors")  # only two words activate concept 1
    assert result[1].opposed == ()  # no negative activation: no opposed words
    assert result[2].aligned == ("actors", "plot", "awful")
    assert result[2].opposed == ()
    assert all(item.label is None for item in result.values())


def test_vocabulary_respects_min_frequency_and_counts(fitted: TopWords) -> None:
    vocabulary = dict(zip(fitted.vocabulary_, fitted.word_counts_.tolist(), strict=True))
    assert "brilliant" not in vocabulary  # once only: excluded although it activates concept 0 most
    assert vocabulary["the"] == 6 and vocabulary["plot"] == 5 and vocabulary["bad"] == 3
    assert "2" not in vocabulary and "stars" not in vocabulary
    assert fitted.vocabulary_[:4] == ["the", "plot", "actors", "good"]  # by count, then alphabetically
    assert list(fitted.word_counts_) == sorted(fitted.word_counts_, reverse=True)
    assert fitted.scores_.shape == (len(fitted.vocabulary_), 3)
    # every word is encoded alone, as a text of one word
    assert fitted.model.seen == fitted.vocabulary_
    np.testing.assert_allclose(fitted.scores_[fitted.vocabulary_.index("awful")], LEXICON["awful"], rtol=1e-6)


def test_lower_min_frequency_lets_rare_words_in() -> None:
    extractor = NoProjection().fit(np.array(list(LEXICON.values())))
    top = TopWords(Lexicon(), extractor, n_words=2, min_frequency=1).fit(TEXTS)
    assert top.interpret()[0].aligned == ("brilliant", "superb")


def test_max_vocabulary_stop_words_and_case() -> None:
    extractor = NoProjection().fit(np.array(list(LEXICON.values())))
    top = TopWords(Lexicon(), extractor, min_frequency=1, max_vocabulary=3, stop_words={"THE"}).fit(TEXTS)
    assert top.vocabulary_ == ["plot", "actors", "good"]  # 'the' (6) removed; ties broken alphabetically
    english = TopWords(Lexicon(), extractor, min_frequency=1, stop_words="english").fit(TEXTS)
    assert (
        "the" not in english.vocabulary_
        and "and" not in english.vocabulary_
        and "plot" in english.vocabulary_
    )
    cased = TopWords(Lexicon(), extractor, min_frequency=1, lowercase=False).fit(TEXTS)
    assert "GOOD" in cased.vocabulary_ and "Superb" in cased.vocabulary_
    assert cased.interpret()[0].aligned[0] == "superb"  # "Superb" is not in the lexicon: scores zero


def test_n_words_larger_than_the_vocabulary() -> None:
    extractor = NoProjection().fit(np.array(list(LEXICON.values())))
    top = TopWords(Lexicon(), extractor, n_words=50, min_frequency=2).fit(TEXTS)
    # every word with a positive activation, strongest first; no padding with inactive words
    assert top.interpret()[0].aligned == ("superb", "great", "good", "fine")
    assert top.interpret()[0].opposed == ("awful", "bad")


def test_tokenizer() -> None:
    top = TopWords(None, None)
    assert top.tokenize("Don't miss it: 2 well-made acts, 3D!") == [
        "don't",
        "miss",
        "it",
        "well-made",
        "acts",
        "3d",
    ]
    assert top.tokenize("l'été — naïve_ness") == ["l'été", "naïve", "ness"]


def test_top_words_errors() -> None:
    extractor = NoProjection().fit(np.array(list(LEXICON.values())))
    with pytest.raises(NotFittedError, match=r"TopWords is not fitted yet"):
        TopWords(Lexicon(), extractor).interpret()
    with pytest.raises(InvalidParameterError, match=r"'inputs' parameter of TopWords.fit .* non-empty"):
        TopWords(Lexicon(), extractor).fit([])
    with pytest.raises(
        InvalidParameterError, match=r"'min_frequency' .* at most the highest word count .* \(6\). Got 7"
    ):
        TopWords(Lexicon(), extractor, min_frequency=7).fit(TEXTS)
    with pytest.raises(InvalidParameterError, match=r"'n_words' parameter of TopWords"):
        TopWords(Lexicon(), extractor, n_words=0).fit(TEXTS)
    with pytest.raises(InvalidParameterError, match=r"'stop_words' .* 'english'"):
        TopWords(Lexicon(), extractor, stop_words="french").fit(TEXTS)
    with pytest.raises(InvalidParameterError, match=r"'model' parameter of TopWords"):
        TopWords(object(), extractor, min_frequency=1).fit(TEXTS)


def test_callable_model_is_accepted() -> None:
    extractor = NoProjection().fit(np.array(list(LEXICON.values())))
    lexicon = Lexicon()
    top = TopWords(lexicon.activations, extractor, n_words=1, min_frequency=2).fit(TEXTS)
    assert top.interpret()[1].aligned == ("plot",)


# --------------------------------------------------------------------------- top activating examples


def test_top_activating_examples_order_sides_and_ties() -> None:
    U = np.array([[0.9, -0.2, 0.0], [0.1, 0.7, 0.0], [0.0, -0.5, 0.0], [0.9, 0.3, 0.0], [-0.4, -0.5, 0.0]])
    texts = ["first", "second", "third", "fourth", "fifth"]
    out = top_activating_examples(U, texts, n=2)
    assert out[0] == ConceptInterpretation(
        aligned=("first", "fourth"), opposed=("fifth",)
    )  # tie: input order
    assert out[1] == ConceptInterpretation(aligned=("second", "fourth"), opposed=("third", "fifth"))
    assert out[2] == ConceptInterpretation()  # never active: nothing to show
    assert out[1].aligned_scores == (0.7, 0.3)
    tensor_out = top_activating_examples(torch.as_tensor(U, dtype=torch.float32), texts, n=2)
    assert tensor_out == out


def test_top_activating_examples_errors() -> None:
    U = np.ones((3, 2))
    with pytest.raises(
        InvalidParameterError, match=r"'concepts' and 'inputs' of top_activating_examples must have"
    ):
        top_activating_examples(U, ["a", "b"])
    with pytest.raises(InvalidParameterError, match=r"'inputs' .* non-empty"):
        top_activating_examples(U, [])
    with pytest.raises(InvalidParameterError, match=r"'concepts' .* 2-D"):
        top_activating_examples(np.ones(3), ["a", "b", "c"])
    with pytest.raises(InvalidParameterError, match=r"'n' parameter of top_activating_examples"):
        top_activating_examples(U, ["a", "b", "c"], n=0)


def test_interpretation_to_dict() -> None:
    item = ConceptInterpretation(aligned=("a",), opposed=("b", "c"), label="tone", aligned_scores=(1.0,))
    assert item.to_dict() == {"aligned": ["a"], "opposed": ["b", "c"], "label": "tone"}
    assert item == ConceptInterpretation(
        aligned=("a",), opposed=("b", "c"), label="tone"
    )  # scores not compared


# --------------------------------------------------------------------------- with the real SplitClassifier


def test_top_words_with_a_real_split_classifier_encodes_each_word_alone(tiny_split_classifier) -> None:
    from xaimetrics.concepts import PCA

    clf = tiny_split_classifier(hidden_size=12, seed=0, num_labels=2)
    extractor = PCA(n_concepts=4).fit(clf.activations(TEXTS))
    top = TopWords(clf, extractor, n_words=2, min_frequency=2).fit(TEXTS)
    for word in ("plot", "awful"):
        alone = extractor.encode(clf.activations([word])).numpy()[0]
        np.testing.assert_allclose(top.scores_[top.vocabulary_.index(word)], alone, rtol=1e-5, atol=1e-6)
    for concept, item in top.interpret().items():
        column = top.scores_[:, concept]
        assert (len(item.aligned) > 0) == bool((column > 0).any())
        if item.aligned:
            assert item.aligned[0] == top.vocabulary_[int(column.argmax())]
        assert (len(item.opposed) > 0) == bool((column < 0).any())


# -- CMAW variants: the default signed sides vs the paper's eq. 1 (issue #11, class 8) --------------------------
WORDS = [f"word{chr(97 + i)}" for i in range(9)]


@settings(max_examples=100, deadline=None)
@given(
    scores=st.lists(
        st.lists(st.integers(-3, 3).map(float), min_size=3, max_size=3),
        min_size=len(WORDS),
        max_size=len(WORDS),
    ),
    n_words=st.integers(1, 5),
)
def test_property_signed_and_paper_sides(scores, n_words) -> None:
    table = dict(zip(WORDS, scores, strict=True))
    texts = [" ".join(WORDS)] * 2  # every word twice: frequency ties, so the vocabulary is alphabetical

    def model(words):
        return np.array([table[w] for w in words])

    extractor = NoProjection().fit(np.array(scores))
    signed = TopWords(model, extractor, n_words=n_words, min_frequency=2).fit(texts).interpret()
    paper = (
        TopWords(model, extractor, n_words=n_words, min_frequency=2, variant="paper").fit(texts).interpret()
    )
    for concept in range(3):
        column = {w: table[w][concept] for w in WORDS}
        ranked = sorted(WORDS, key=lambda w: -column[w])  # stable: ties keep alphabetical order
        # paper (eq. 1): always n words aligned, the top n whatever their sign; n opposed when negatives exist
        assert paper[concept].aligned == tuple(ranked[:n_words])
        lowest = tuple(sorted(WORDS, key=lambda w: column[w])[:n_words])
        assert paper[concept].opposed == (lowest if min(column.values()) < 0 else ())
        # signed: the same order, cut to positive (aligned) and negative (opposed) activations
        assert signed[concept].aligned == tuple(w for w in ranked[:n_words] if column[w] > 0)
        assert signed[concept].opposed == tuple(w for w in lowest if column[w] < 0)


def test_paper_variant_keeps_punctuation_tokens() -> None:
    texts = ["Paris, France, again.", "Lyon, France!", "Nice, France, sun."]

    def model(words):  # the comma activates concept 0 most, as in the paper's App. E
        return np.array([[5.0 if w == "," else 1.0 if w == "france" else 0.0] for w in words])

    extractor = NoProjection().fit(np.array([[0.0], [1.0]]))
    paper = TopWords(model, extractor, n_words=2, min_frequency=2, variant="paper").fit(texts)
    assert "," in paper.vocabulary_ and paper.interpret()[0].aligned == (",", "france")
    signed = TopWords(model, extractor, n_words=2, min_frequency=2).fit(texts)
    assert "," not in signed.vocabulary_ and signed.interpret()[0].aligned == ("france",)
    with pytest.raises(
        InvalidParameterError, match=r"'variant' parameter of TopWords must be one of 'signed'"
    ):
        TopWords(model, extractor, variant="eq1").fit(texts)
