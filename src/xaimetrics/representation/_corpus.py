"""The reference corpus that coherence counts co-occurrences in: documents as integer token ids."""

from __future__ import annotations

from array import array
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from xaimetrics._validation import check_texts, invalid
from xaimetrics._words import WordTokenizer, most_frequent, stop_word_set

__all__ = ["ReferenceCorpus", "tokenize"]

_TOKENIZER = WordTokenizer(joiners="'", keep_numbers=True)


def tokenize(text: str) -> list[str]:
    """Lower-case words (letters and digits, inner apostrophes kept), punctuation dropped: the default
    tokenizer of :class:`ReferenceCorpus`, ``WordTokenizer(joiners="'", keep_numbers=True)``.

    Example:
        >>> tokenize("It's a GREAT film -- isn't it? 10/10")
        ["it's", 'a', 'great', 'film', "isn't", 'it', '10', '10']
    """
    return _TOKENIZER(text)


@dataclass(frozen=True, eq=False)
class ReferenceCorpus:
    """Tokenised documents stored flat: ``token_ids[offsets[d]:offsets[d + 1]]`` is document ``d``.

    Build it with :meth:`from_texts`, :meth:`from_tokens` or :meth:`from_dataset` (the offline datasets).

    Attributes:
        token_ids: array of shape ``(n_tokens,)``, ids into ``vocabulary``.
        offsets: array of shape ``(n_documents + 1,)``, document boundaries.
        vocabulary: the distinct tokens, ``vocabulary[i]`` is id ``i``.
        name: a label for reports.

    Example:
        >>> corpus = ReferenceCorpus.from_texts(["The cat sat.", "A dog, a cat!"])
        >>> len(corpus), corpus.n_tokens, corpus.document(1)
        (2, 7, ['a', 'dog', 'a', 'cat'])
    """

    token_ids: np.ndarray
    offsets: np.ndarray
    vocabulary: tuple[str, ...]
    name: str = "corpus"

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_tokens(cls, documents: Iterable[Sequence[str]], *, name: str = "corpus") -> ReferenceCorpus:
        """Build from already tokenised documents (lists of strings)."""
        vocab: dict[str, int] = {}
        lengths: list[int] = []
        ids = array("i")  # 4 bytes per token while building (a list would hold an 8-byte pointer per token)
        for document in documents:
            if isinstance(document, str):
                raise invalid(
                    "documents",
                    "ReferenceCorpus.from_tokens",
                    "an iterable of token lists",
                    "a string",
                    "Use ReferenceCorpus.from_texts for raw texts.",
                )
            ids.extend(vocab.setdefault(token, len(vocab)) for token in document)
            lengths.append(len(document))
        if not lengths:
            raise invalid(
                "documents",
                "ReferenceCorpus",
                "a non-empty corpus",
                "no documents",
                "Pass at least one document.",
            )
        if not ids:
            raise invalid(
                "documents",
                "ReferenceCorpus",
                "a corpus with at least one token",
                f"{len(lengths)} empty document(s)",
                "Check the texts and the tokenizer.",
            )
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        token_ids = np.frombuffer(ids, dtype=np.intc).astype(np.int32, copy=False)  # no copy
        return cls(token_ids, offsets, tuple(vocab), name)

    @classmethod
    def from_texts(
        cls,
        texts: Sequence[str],
        *,
        tokenizer: Callable[[str], list[str]] | None = None,
        name: str = "corpus",
    ) -> ReferenceCorpus:
        """Tokenise raw texts (default :func:`tokenize`; any :class:`WordTokenizer` or callable
        ``text → tokens``) and build the corpus."""
        texts = check_texts(texts, "texts", "ReferenceCorpus.from_texts")
        tokenizer = tokenizer or tokenize
        return cls.from_tokens((tokenizer(text) for text in texts), name=name)

    @classmethod
    def from_dataset(
        cls,
        name: str = "rotten_tomatoes",
        split: str = "train",
        *,
        max_documents: int | None = None,
        tokenizer: Callable[[str], list[str]] | None = None,
        dataset_options: Mapping[str, Any] | None = None,
    ) -> ReferenceCorpus:
        """The texts of a dataset of :func:`xaimetrics.data.load_dataset` (offline: ``rotten_tomatoes``,
        ``imdb``, ``bbc_news``; or a file, read with ``dataset_options`` such as ``text_column``), optionally only
        the first ``max_documents``."""
        from xaimetrics.data import load_dataset

        texts = load_dataset(name, split, **dict(dataset_options or {})).texts
        if max_documents is not None:
            texts = texts[:max_documents]
        return cls.from_texts(texts, tokenizer=tokenizer, name=f"{name}/{split}")

    # ------------------------------------------------------------------ views
    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def n_documents(self) -> int:
        return len(self)

    @property
    def n_tokens(self) -> int:
        return int(self.offsets[-1])

    @cached_property
    def lengths(self) -> np.ndarray:
        """Array of shape ``(n_documents,)``: tokens per document."""
        return np.diff(self.offsets)

    @cached_property
    def token_to_id(self) -> dict[str, int]:
        return {token: i for i, token in enumerate(self.vocabulary)}

    @cached_property
    def counts(self) -> np.ndarray:
        """Array of shape ``(len(vocabulary),)``: occurrences of each token in the whole corpus."""
        return np.bincount(self.token_ids, minlength=len(self.vocabulary))

    def document(self, index: int) -> list[str]:
        """The tokens of one document."""
        start, stop = self.offsets[index], self.offsets[index + 1]
        return [self.vocabulary[i] for i in self.token_ids[start:stop]]

    def documents(self) -> Iterator[list[str]]:
        """Every document as a list of tokens (what gensim expects as ``texts``)."""
        for index in range(len(self)):
            yield self.document(index)

    def ids(self, words: Sequence[str]) -> np.ndarray:
        """Array of shape ``(len(words),)``: the id of each word, ``-1`` when it is not in the corpus."""
        lookup = self.token_to_id
        return np.fromiter((lookup.get(w, -1) for w in words), dtype=np.int64, count=len(words))

    def frequent_words(
        self,
        *,
        min_count: int = 5,
        max_words: int | None = 5000,
        stop_words: Collection[str] | str | None = "english",
        min_length: int = 2,
    ) -> list[str]:
        """Words frequent enough to stand for a dimension, most frequent first (ties by spelling).

        Args:
            min_count: minimum number of occurrences in the corpus.
            max_words: keep at most this many (``None``: all).
            stop_words: ``"english"`` (scikit-learn's list), a collection of words, or ``None``.
            min_length: minimum number of characters; tokens made only of digits are dropped.

        Example:
            >>> corpus = ReferenceCorpus.from_texts(["the cat and the dog", "a cat, a bird", "cat"])
            >>> corpus.frequent_words(min_count=2)
            ['cat']
        """
        stop = stop_word_set(stop_words, "frequent_words")
        counts = self.counts
        candidates = (
            (word, int(counts[i]))
            for i in np.flatnonzero(counts >= min_count)
            if len(word := self.vocabulary[i]) >= min_length and word not in stop and not word.isdigit()
        )
        return [word for word, _ in most_frequent(candidates, min_count=min_count, max_words=max_words)]
