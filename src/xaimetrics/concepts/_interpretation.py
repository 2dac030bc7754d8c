"""Concept interpretation (ConSim paper §3.2): Concept Maximally Activating Words (CMAW, eq. 1) and top
activating examples.

An interpretation maps each concept id to a :class:`ConceptInterpretation`: the strings that activate the
concept most (``aligned``), those that activate it most negatively (``opposed``, only when negative
activations exist) and an optional ``label`` (filled by label-based methods such as o1CA). Every
interpretation method of xaimetrics returns this shape, so prompts and reports treat them alike.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Literal

import numpy as np

from xaimetrics._arrays import to_numpy
from xaimetrics._validation import (
    Interval,
    Kind,
    Options,
    Rule,
    caller,
    check_fitted,
    check_params,
    check_same_length,
    check_texts,
    invalid,
    validate_params,
)
from xaimetrics._words import (
    WordTokenizer,
    count_words,
    encode_texts,
    most_frequent,
    stop_word_set,
    top_word_indices,
)
from xaimetrics.concepts._concept_model import check_matrix, h_of

if TYPE_CHECKING:
    from xaimetrics._protocols import ActivationModel, ConceptCodec
    from xaimetrics._typing import Array

__all__ = ["ConceptInterpretation", "TopWords", "top_activating_examples"]

Variant = Literal["signed", "paper"]


@dataclass(frozen=True)
class ConceptInterpretation:
    """How one concept is shown to a reader.

    Attributes:
        aligned: strings (words, examples) that activate the concept most, strongest first.
        opposed: strings that activate it most negatively, most negative first; empty when the concept
            has no negative activation.
        label: a short name for the concept, when the method gives one (e.g. o1CA), else ``None``.
        aligned_scores, opposed_scores: the concept activation of each string, in the same order.

    Example:
        >>> ConceptInterpretation(aligned=("great", "superb"), opposed=("dull",)).to_dict()
        {'aligned': ['great', 'superb'], 'opposed': ['dull'], 'label': None}
    """

    aligned: tuple[str, ...] = ()
    opposed: tuple[str, ...] = ()
    label: str | None = None
    aligned_scores: tuple[float, ...] = field(default=(), compare=False, repr=False)
    opposed_scores: tuple[float, ...] = field(default=(), compare=False, repr=False)

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict with ``aligned``, ``opposed`` and ``label``."""
        return {"aligned": list(self.aligned), "opposed": list(self.opposed), "label": self.label}


def _select(
    scores: np.ndarray, items: Sequence[str], n: int, *, signed: bool = True
) -> dict[int, ConceptInterpretation]:
    """Per concept (column of ``scores``, shape ``(n_items, k)``): the ``n`` items with the highest scores and
    the ``n`` with the lowest. ``signed``: only positive scores are aligned and negative ones opposed (a side
    may hold fewer than ``n``); otherwise (eq. 1) always ``n`` aligned, and ``n`` opposed whenever some score
    is negative. Ties keep the order of ``items``."""
    result: dict[int, ConceptInterpretation] = {}
    highest, lowest = top_word_indices(scores, n, "positive"), top_word_indices(scores, n, "negative")
    for concept in range(scores.shape[1]):
        column, high, low = scores[:, concept], highest[:, concept], lowest[:, concept]
        if signed:
            high = high[column[high] > 0]
            low = low[column[low] < 0]
        elif not (column < 0).any():
            low = low[:0]
        result[concept] = ConceptInterpretation(
            aligned=tuple(items[i] for i in high),
            opposed=tuple(items[i] for i in low),
            aligned_scores=tuple(float(column[i]) for i in high),
            opposed_scores=tuple(float(column[i]) for i in low),
        )
    return result


@validate_params({"n": Interval(int, 1)})
def top_activating_examples(
    concepts: Array, inputs: Sequence[str], n: int = 5
) -> dict[int, ConceptInterpretation]:
    """The ``n`` inputs that activate each concept most (and most negatively, when negatives exist).

    Only strictly positive activations count as aligned and strictly negative ones as opposed, so a concept
    that never fires gets an empty interpretation. Ties keep the order of ``inputs``; duplicate texts are
    kept as given.

    Args:
        concepts: concept activations ``U = f_ic(inputs)``, shape ``(n_samples, n_concepts)``.
        inputs: the texts behind each row of ``concepts``.
        n: how many examples per side.

    Returns:
        ``{concept_id: ConceptInterpretation(aligned=..., opposed=...)}`` for every concept ``0 … k−1``.

    Example:
        >>> import numpy as np
        >>> U = np.array([[0.9, -0.2], [0.1, 0.7], [0.0, -0.5]])
        >>> out = top_activating_examples(U, ["a fine film", "so dull", "meh"], n=2)
        >>> out[0].aligned, out[0].opposed
        (('a fine film', 'so dull'), ())
        >>> out[1].aligned, out[1].opposed
        (('so dull',), ('meh', 'a fine film'))
    """
    owner = caller()
    texts = check_texts(inputs, "inputs", owner)
    concepts = check_matrix(concepts, "concepts", what="(n_samples, n_concepts)")
    check_same_length(range(concepts.shape[0]), texts, ("concepts", "inputs"), owner)
    return _select(to_numpy(concepts).astype(np.float64), texts, n)


class TopWords:
    """Concept Maximally Activating Words (CMAW, ConSim paper eq. 1): ``topk_{x ∈ words} f_ic(x)_i``.

    :meth:`fit` tokenises the dataset, keeps the words frequent enough in it as the vocabulary, and passes
    each word **alone as a text** through the model and the extractor, ``f_ic(word) = t(h(word))``. Each
    concept is then interpreted by the ``n_words`` words with the highest (positive) activation and, when
    some words activate it negatively, the ``n_words`` with the lowest (negative) activation.

    The steps are those of the library's one top-words pipeline (:mod:`xaimetrics._words`):
    tokenisation by a :class:`WordTokenizer` (default: letters/digits with inner apostrophes or hyphens,
    lower-cased when ``lowercase``, numbers dropped), stop words left out, the vocabulary ordered by
    frequency (then alphabetically, which also breaks ties between equal activations).

    Two variants (``variant=``), documented in ``docs/consim.md``:

    - ``"signed"`` (default): aligned words must activate the concept *positively* and opposed words
      *negatively*, so a side may show fewer than ``n_words`` words (none when nothing activates the concept),
      and punctuation is not a word. A word with a zero or negative activation is never shown as aligned.
    - ``"paper"``: eq. 1 as the paper's code and App. E apply it: always the ``n_words`` highest-activating
      words as aligned (whatever their sign), the ``n_words`` lowest as opposed whenever some word activates
      the concept negatively, and punctuation marks are tokens (App. E shows ``','`` as a top word).

    Args:
        model: the split classifier, with ``activations(texts)`` (``h``), or a callable ``texts → activations``.
        extractor: the fitted concept extractor (``encode``, ``t``).
        n_words: words per side and concept (the paper uses 5).
        min_frequency: a word enters the vocabulary if it occurs at least this many times in the texts.
        max_vocabulary: keep at most this many of the most frequent words (``None``: no limit).
        lowercase: lower-case texts before tokenising.
        stop_words: words to leave out: ``None`` (keep all), ``"english"`` (scikit-learn's list) or a
            collection of words.
        variant: ``"signed"`` (default) or ``"paper"`` (eq. 1 with punctuation tokens), see above.
        tokenizer: a :class:`WordTokenizer` or any callable ``text → words``; default
            ``WordTokenizer(lowercase=lowercase, keep_punctuation=variant == "paper")``. When given,
            ``lowercase`` only folds the stop words.

    Attributes (after :meth:`fit`):
        vocabulary_ (list[str]): the candidate words, most frequent first.
        word_counts_ (numpy.ndarray): occurrences of each vocabulary word, shape ``(n_words_in_vocabulary,)``.
        scores_ (numpy.ndarray): ``f_ic(word)``, shape ``(n_words_in_vocabulary, n_concepts)``.
        interpretations_ (dict[int, ConceptInterpretation]): the result, as returned by :meth:`interpret`.

    Example:
        >>> import numpy as np
        >>> class Lexicon:  # h(text): two features, "good"/"great" push one way, "bad" the other
        ...     weights = {"good": (1.0, 0.0), "great": (2.0, 0.0), "bad": (-1.0, 0.5), "plot": (0.0, 1.0)}
        ...     def activations(self, texts):
        ...         return np.array([self.weights.get(t, (0.0, 0.0)) for t in texts])
        >>> class Identity:
        ...     def encode(self, A):
        ...         return A
        >>> texts = ["good plot", "great plot, bad acting", "bad good great", "plot"]
        >>> top = TopWords(Lexicon(), Identity(), n_words=2, min_frequency=2).fit(texts)
        >>> top.vocabulary_
        ['plot', 'bad', 'good', 'great']
        >>> top.interpret()[0]
        ConceptInterpretation(aligned=('great', 'good'), opposed=('bad',), label=None)
        >>> top.interpret()[1].aligned
        ('plot', 'bad')
        >>> paper = TopWords(Lexicon(), Identity(), n_words=2, min_frequency=2, variant="paper").fit(texts)
        >>> paper.interpret()[0]  # two words per side: 'plot' (0.0) fills the opposed side
        ConceptInterpretation(aligned=('great', 'good'), opposed=('bad', 'plot'), label=None)
    """

    #: What each ``__init__`` argument may be, checked by :meth:`fit`.
    _parameter_constraints: ClassVar[dict[str, Rule]] = {
        "n_words": Interval(int, 1),
        "variant": Options(("signed", "paper")),
        "min_frequency": Interval(int, 1),
        "max_vocabulary": (Interval(int, 1, text="an integer ≥ 1 (or None: no limit)"), None),
        "tokenizer": (Kind(callable, "None, a WordTokenizer or a callable text → words"), None),
    }

    def __init__(
        self,
        model: ActivationModel | Callable[[list[str]], Array],
        extractor: ConceptCodec,
        *,
        n_words: int = 5,
        min_frequency: int = 5,
        max_vocabulary: int | None = 5000,
        lowercase: bool = True,
        stop_words: str | Iterable[str] | None = None,
        variant: Variant = "signed",
        tokenizer: Callable[[str], list[str]] | None = None,
    ) -> None:
        self.model = model
        self.extractor = extractor
        self.n_words = n_words
        self.min_frequency = min_frequency
        self.max_vocabulary = max_vocabulary
        self.lowercase = lowercase
        self.stop_words = stop_words
        self.variant = variant
        self.tokenizer = tokenizer

    def tokenize(self, text: str) -> list[str]:
        """Split one text into the words counted by :meth:`fit`.

        Example:
            >>> TopWords(None, None).tokenize("Don't miss it: 2 well-made acts!")
            ["don't", 'miss', 'it', 'well-made', 'acts']
            >>> TopWords(None, None, variant="paper").tokenize("Paris, France!")
            ['paris', ',', 'france', '!']
        """
        return self._tokenizer()(text)

    def word_counts(self, texts: Sequence[str]) -> Counter[str]:
        """How often each word of :meth:`tokenize` occurs in ``texts``, stop words left out."""
        stop_words = stop_word_set(self.stop_words, "TopWords", lowercase=self.lowercase)
        return count_words(texts, self._tokenizer(), stop_words)

    def _tokenizer(self) -> Callable[[str], list[str]]:
        if self.tokenizer is not None:
            return self.tokenizer
        return WordTokenizer(lowercase=self.lowercase, keep_punctuation=self.variant == "paper")

    def frequent_words(self, counts: Counter[str]) -> list[tuple[str, int]]:
        """The words :meth:`fit` scores: at least ``min_frequency`` occurrences, most frequent first (ties by
        word), at most ``max_vocabulary`` of them, with their counts."""
        return most_frequent(counts.items(), min_count=self.min_frequency, max_words=self.max_vocabulary)

    @validate_params({})
    def fit(self, inputs: Sequence[str]) -> TopWords:
        """Build the vocabulary from ``inputs`` (a list of texts), score every word, keep the top words.

        Raises:
            InvalidParameterError: empty ``inputs``, bad parameters, or no word reaching ``min_frequency``.
        """
        owner = type(self).__name__
        texts = check_texts(inputs, "inputs", f"{owner}.fit")
        rules = self._parameter_constraints
        check_params(owner, rules, {name: getattr(self, name) for name in rules})
        n_words, min_frequency = int(self.n_words), int(self.min_frequency)
        h = h_of(self.model)
        counts = self.word_counts(texts)
        frequent = self.frequent_words(counts)
        if not frequent:
            top = max(counts.values(), default=0)
            raise invalid(
                "min_frequency",
                owner,
                f"at most the highest word count of the texts ({top})",
                min_frequency,
                "Lower min_frequency or pass more texts.",
            )
        self.vocabulary_ = [word for word, _ in frequent]
        self.word_counts_ = np.array([count for _, count in frequent], dtype=np.int64)
        self.scores_ = encode_texts(
            lambda words: self.extractor.encode(h(words)),
            self.vocabulary_,
            batch_size=None,
            owner=owner,
            name="extractor",
            item="word",
        )
        self.interpretations_ = _select(
            self.scores_, self.vocabulary_, n_words, signed=self.variant == "signed"
        )
        return self

    def interpret(self) -> dict[int, ConceptInterpretation]:
        """``{concept_id: ConceptInterpretation(aligned=top words, opposed=bottom words)}`` for every concept.

        Raises:
            NotFittedError: before :meth:`fit`.
        """
        check_fitted(self, "interpretations_", "with the dataset texts first")
        return dict(self.interpretations_)
