"""Words of a text collection: one tokenizer and one top-words pipeline, for concepts and representation.

The pipeline has four steps, each a function of this module:

1. :class:`WordTokenizer` splits texts into words;
2. :func:`count_words` / :func:`most_frequent` keep the words frequent enough, most frequent first (ties by
   spelling), without stop words (:func:`stop_word_set`);
3. :func:`encode_words` passes each word alone, as a one-word text, through an encoder;
4. :func:`top_word_indices` ranks the words of each dimension (column) by their activation.

:class:`~xaimetrics.concepts.TopWords` (CMAW, ConSim eq. 1) and the Dim-Coherence@k of
:mod:`xaimetrics.representation` (``ReferenceCorpus.frequent_words``, ``encode_words``, ``top_words``) are
both built from these steps. Their tokenizers differ only by configuration (see :class:`WordTokenizer`).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from xaimetrics._validation import check_positive_int, invalid

__all__ = [
    "WordTokenizer",
    "count_words",
    "encode_texts",
    "encode_words",
    "most_frequent",
    "stop_word_set",
    "top_word_indices",
    "words_of",
]

Pole = Literal["abs", "positive", "negative"]
POLES: tuple[Pole, ...] = ("abs", "positive", "negative")

#: a run of letters or digits (the underscore, a "word" character for ``re``, separates words)
_RUN = r"[^\W_]+"
#: one punctuation mark (or the underscore) as a token of its own
_PUNCTUATION = r"[^\w\s]|_"
#: the compiled run, for :func:`words_of`
_WORD = re.compile(_RUN)


@dataclass(frozen=True)
class WordTokenizer:
    """Split a text into words: runs of letters or digits, optionally joined by ``joiners`` inside a word.

    One tokenizer for the library, configured per use so that each keeps its behaviour:

    - ``WordTokenizer()``: :class:`~xaimetrics.concepts.TopWords` (``variant="signed"``): inner apostrophes
      and hyphens kept ("don't", "well-made"), numbers and punctuation dropped;
    - ``WordTokenizer(keep_punctuation=True)``: ``TopWords(variant="paper")``, every punctuation mark is a
      token (the ConSim paper's App. E shows ``','`` as a top word);
    - ``WordTokenizer(joiners="'", keep_numbers=True)``: :func:`xaimetrics.representation._corpus.tokenize`, the
      reference corpora of Dim-Coherence (hyphens split words, numbers are words).

    Args:
        lowercase: lower-case the text first.
        joiners: characters that may join two runs inside one word (``""``: none).
        keep_punctuation: every punctuation mark (and ``_``) is a token of its own.
        keep_numbers: keep words made of digits only ("2", "10"); "3d" is always a word.
        pattern: a regular expression whose matches are the words, instead of runs joined by ``joiners``.

    Example:
        >>> WordTokenizer()("Don't miss it: 2 well-made acts!")
        ["don't", 'miss', 'it', 'well-made', 'acts']
        >>> WordTokenizer(keep_punctuation=True)("Paris, France!")
        ['paris', ',', 'france', '!']
        >>> WordTokenizer(joiners="'", keep_numbers=True)("It's a well-made film, 10/10")
        ["it's", 'a', 'well', 'made', 'film', '10', '10']
    """

    lowercase: bool = True
    joiners: str = "'’-"
    keep_punctuation: bool = False
    keep_numbers: bool = False
    pattern: str | None = None

    def __post_init__(self) -> None:
        for name in ("lowercase", "keep_punctuation", "keep_numbers"):
            if not isinstance(getattr(self, name), bool):
                raise invalid(name, "WordTokenizer", "True or False", repr(getattr(self, name)))
        if not isinstance(self.joiners, str):
            raise invalid("joiners", "WordTokenizer", "a string of characters", repr(self.joiners))
        if self.pattern is not None:
            try:
                re.compile(self.pattern)
            except (re.error, TypeError) as error:
                raise invalid(
                    "pattern", "WordTokenizer", "a valid regular expression or None", repr(self.pattern)
                ) from error

    @cached_property
    def regex(self) -> re.Pattern[str]:
        """The compiled expression whose matches are the tokens."""
        if self.pattern is not None:
            words = self.pattern
        elif self.joiners:
            words = f"{_RUN}(?:[{re.escape(self.joiners)}]{_RUN})*"
        else:
            words = _RUN
        return re.compile(f"{words}|{_PUNCTUATION}" if self.keep_punctuation else words)

    def __call__(self, text: str) -> list[str]:
        """The words of ``text``, in order."""
        if self.lowercase:
            text = text.lower()
        tokens = self.regex.findall(text)
        return tokens if self.keep_numbers else [token for token in tokens if not token.isdigit()]


def stop_word_set(
    stop_words: str | Iterable[str] | None, owner: str, *, lowercase: bool = False
) -> frozenset[str]:
    """The stop words to leave out: ``None`` (none), ``"english"`` (scikit-learn's list) or a collection of
    words (lower-cased when ``lowercase``, to match a lower-casing tokenizer).

    Example:
        >>> sorted(stop_word_set({"The", "a"}, "TopWords", lowercase=True))
        ['a', 'the']
    """
    if stop_words is None:
        return frozenset()
    if isinstance(stop_words, str):
        if stop_words != "english":
            raise invalid("stop_words", owner, "None, 'english' or a collection of words", repr(stop_words))
        from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

        return frozenset(ENGLISH_STOP_WORDS)
    words = frozenset(stop_words)
    return frozenset(word.lower() for word in words) if lowercase else words


def count_words(
    texts: Iterable[str], tokenizer: Callable[[str], list[str]], stop_words: Collection[str] = ()
) -> Counter[str]:
    """How often each word of ``tokenizer`` occurs in ``texts``, ``stop_words`` left out.

    Example:
        >>> count_words(["a good film", "good, good"], WordTokenizer(), {"a"})
        Counter({'good': 3, 'film': 1})
    """
    return Counter(word for text in texts for word in tokenizer(text) if word not in stop_words)


def most_frequent(
    counts: Iterable[tuple[str, int]], *, min_count: int, max_words: int | None
) -> list[tuple[str, int]]:
    """The ``(word, count)`` pairs with at least ``min_count`` occurrences, most frequent first (ties by
    spelling), at most ``max_words`` of them (``None``: all).

    Example:
        >>> most_frequent([("plot", 2), ("film", 3), ("actor", 2), ("rare", 1)], min_count=2, max_words=2)
        [('film', 3), ('actor', 2)]
    """
    frequent = sorted(
        ((word, count) for word, count in counts if count >= min_count), key=lambda item: (-item[1], item[0])
    )
    return frequent if max_words is None else frequent[:max_words]


def encode_words(
    encoder: Callable[[list[str]], ArrayLike], vocabulary: Sequence[str], *, batch_size: int | None = 256
) -> np.ndarray:
    """Encode each vocabulary word as a one-word text with ``encoder`` (texts → array ``(n, d)``).

    Args:
        encoder: texts → array of shape ``(len(texts), d)`` (numpy, torch or nested lists).
        vocabulary: the words.
        batch_size: words per encoder call (``None``: all words in one call).

    Returns:
        Array of shape ``(len(vocabulary), d)`` (numpy, float64).

    Example:
        >>> encode_words(lambda ws: [[len(w), w.count("a")] for w in ws], ["banana", "kiwi"]).tolist()
        [[6.0, 3.0], [4.0, 0.0]]
    """
    if not len(vocabulary):
        raise invalid("vocabulary", "encode_words", "a non-empty list of words", "an empty list")
    return encode_texts(
        encoder, vocabulary, batch_size=batch_size, owner="encode_words", name="encoder", item="word"
    )


def encode_texts(
    encoder: Callable[[list[str]], ArrayLike],
    texts: Sequence[str],
    *,
    batch_size: int | None,
    owner: str,
    name: str,
    item: str = "text",
) -> np.ndarray:
    """``encoder(texts)`` (``texts`` non-empty) as a float64 numpy array of one row per text, ``batch_size``
    texts per call (``None``: one call); errors name ``owner`` and its argument ``name`` that gave the
    encoder, and call a text an ``item``."""
    if batch_size is not None:
        batch_size = check_positive_int(batch_size, "batch_size", owner)
    texts = list(texts)
    size = batch_size or len(texts)
    parts = []
    for start in range(0, len(texts), size):
        batch = texts[start : start + size]
        part = encoder(batch)
        if hasattr(part, "detach"):
            part = part.detach().cpu().numpy()
        part = np.asarray(part, dtype=np.float64)
        if part.ndim != 2 or part.shape[0] != len(batch):
            raise invalid(
                name,
                owner,
                f"an encoder returning one row per {item}, shape ({len(batch)}, n_dimensions)",
                f"shape {part.shape}",
            )
        parts.append(part)
    return np.concatenate(parts)


def top_word_indices(values: np.ndarray, k: int, pole: Pole = "abs") -> np.ndarray:
    """Per column of ``values`` (shape ``(n_words, n_dimensions)``), the rows of its ``k`` strongest words.

    ``pole``: ``"abs"`` (largest absolute values), ``"positive"`` (largest values) or ``"negative"``
    (smallest values). The sort is stable: ties keep the vocabulary order.

    Returns:
        int array of shape ``(min(k, n_words), n_dimensions)``, strongest first.

    Example:
        >>> values = np.array([[0.9, -0.1], [-0.8, 0.3], [0.1, 0.7]])
        >>> top_word_indices(values, 2).tolist(), top_word_indices(values, 1, "negative").tolist()
        ([[0, 2], [1, 1]], [[1, 0]])
    """
    strength = {"abs": np.abs(values), "positive": values, "negative": -values}[pole]
    return np.argsort(-strength, axis=0, kind="stable")[:k]


def words_of(text: str) -> list[str]:
    """The case-folded letter/digit runs of ``text`` after NFKC normalisation.

    Folding is ``NFKC(casefold(upper(casefold(NFKC(text)))))``: every case variant of a word folds alike,
    including letters whose plain ``casefold`` differs between cases (Turkish dotless ``ı`` vs ``I``) and
    letters whose case mapping decomposes them (``ΐ`` vs ``Ϊ́``).

    Example:
        >>> words_of("**Sci / TECH.**")
        ['sci', 'tech']
        >>> words_of("KIRMIZI") == words_of("Kırmızı")
        True
    """
    folded = unicodedata.normalize("NFKC", text).casefold()
    if not folded.isascii():
        folded = unicodedata.normalize("NFKC", folded.upper().casefold())
    return _WORD.findall(folded)
