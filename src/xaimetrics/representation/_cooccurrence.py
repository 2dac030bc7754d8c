"""Boolean sliding-window counts of words and word pairs, vectorised with sparse matrices.

Every window of ``window_size`` consecutive tokens is a virtual document. For a set of ``m`` words we build
the binary matrix ``W`` of shape ``(m, n_windows)`` (word present in window) without looping over windows:
an occurrence at position ``q`` of a document with ``n`` windows lies in the windows
``[max(0, q - window_size + 1), min(q, n - 1)]``, an interval; the intervals of one word in one document are
merged, expanded to (word, window) entries and stored sparse. Then ``W @ W.T`` holds every pair count at
once, its diagonal the single-word counts. Memory stays bounded whatever the corpus size: documents are
streamed in chunks (only the counted words of one chunk are materialised, never an array over every token),
the pairs of overlapping intervals are expanded a block at a time, and the counts accumulate in one
``(m, m)`` array.

Two conventions (see :data:`COUNTING_MODES`):

- ``"xaimetrics"``: a word counts once per window however often it occurs in it; a document shorter than
  the window is one window; an empty document has no window.
- ``"gensim"``: reproduces gensim 4's ``WordOccurrenceAccumulator`` (the single-process path of
  ``CoherenceModel``) bit for bit, including two quirks: an empty document still counts as one window, and
  when a word leaves a window at its left edge it is marked absent even if a second occurrence of it is still
  inside the window (so ``a x a y`` with window 3 counts ``a`` in the first window only). The gensim marks
  reduce to: occurrence ``q`` makes its word present from window ``max(0, q - window_size + 1)`` up to the
  position of the first occurrence of the same word at or after that window start.

``window_size=None`` counts whole documents instead of windows (the boolean-document estimate of gensim's
``u_mass``): ``W`` is then the sparse document × word incidence matrix, one row per document (an empty
document is a row of zeros in ``"gensim"`` mode and is not counted in ``"xaimetrics"`` mode).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import scipy.sparse as sp

from xaimetrics._validation import Interval, Options, invalid, validate_params
from xaimetrics.representation._corpus import ReferenceCorpus

__all__ = ["COUNTING_MODES", "WindowCounts", "count_windows"]

CountingMode = Literal["xaimetrics", "gensim"]
COUNTING_MODES: tuple[CountingMode, ...] = ("xaimetrics", "gensim")
_DENSE_LIMIT = 4_000_000  # m² below which pair counts accumulate in a dense array


@dataclass(frozen=True)
class WindowCounts:
    """Sliding-window counts for ``words``.

    Attributes:
        words: the counted words, in the order of the matrix rows.
        joint: sparse matrix of shape ``(m, m)``: windows containing both words (diagonal: the word alone).
        n_windows: number of windows (virtual documents) in the corpus.
        window_size: tokens per window (``None``: whole documents).
        mode: the counting convention.
    """

    words: tuple[str, ...]
    joint: sp.csr_matrix
    n_windows: int
    window_size: int | None
    mode: str

    @property
    def marginals(self) -> np.ndarray:
        """Array of shape ``(m,)``: windows containing each word."""
        return np.asarray(self.joint.diagonal(), dtype=np.int64)

    def pair_counts(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """Joint counts of the word pairs ``(rows[i], cols[i])`` (indices into ``words``)."""
        return np.asarray(self.joint[rows, cols], dtype=np.int64).ravel()


@validate_params(
    {
        "window_size": (Interval(int, 1, text="an integer ≥ 1 (or None: documents)"), None),
        "mode": Options(COUNTING_MODES),
    }
)
def count_windows(
    corpus: ReferenceCorpus,
    words: Sequence[str],
    *,
    window_size: int | None = 10,
    mode: CountingMode = "xaimetrics",
    max_entries: int = 1_000_000,
) -> WindowCounts:
    """Count, over the sliding windows of ``corpus``, the windows holding each word and each pair of words.

    Args:
        corpus: the reference corpus.
        words: distinct words to count (absent words get zero counts).
        window_size: tokens per window (gensim's ``c_npmi`` default is 10); ``None`` counts documents.
        mode: ``"xaimetrics"`` or ``"gensim"`` (module docstring).
        max_entries: bound on the (token, window) entries handled at once: documents are processed in
            chunks of ``max_entries / window_size`` tokens and the pairs of overlapping intervals are expanded
            ``max_entries / 8`` at a time. Memory and speed, not results, depend on it.

    Returns:
        :class:`WindowCounts`.

    Example:
        >>> corpus = ReferenceCorpus.from_tokens([["a", "b", "a", "c"], ["b"]])
        >>> counts = count_windows(corpus, ["a", "b", "c"], window_size=2)
        >>> counts.n_windows, counts.marginals.tolist(), counts.joint.toarray()[0].tolist()
        (4, [3, 3, 1], [3, 2, 1])
    """
    words = tuple(words)
    if len(set(words)) != len(words):
        duplicates = sorted({w for w in words if words.count(w) > 1})
        raise invalid("words", "count_windows", "distinct words", f"duplicates {duplicates}")
    if window_size is None:
        return _count_documents(corpus, words, mode)
    m = len(words)

    lengths = corpus.lengths
    windows_per_doc = np.maximum(lengths - window_size + 1, 1)
    if mode == "xaimetrics":
        windows_per_doc[lengths == 0] = 0
    window_offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(windows_per_doc, out=window_offsets[1:])
    n_windows = int(window_offsets[-1])

    ids = corpus.ids(words)
    lookup = np.full(len(corpus.vocabulary), -1, dtype=np.int32)
    known = ids >= 0
    lookup[ids[known]] = np.flatnonzero(known)

    # stream over chunks of whole documents of at most ``max_entries / window_size`` tokens: only the
    # counted words of one chunk are ever materialised (no array spans every token of the corpus)
    accumulator = _Accumulator(m)
    offsets = corpus.offsets
    chunk_tokens = max(max_entries // window_size, 1)
    stride = int(lengths.max()) + 1 if len(lengths) else 1
    first_doc = 0
    while first_doc < len(lengths):
        # the largest run of documents from first_doc within chunk_tokens (at least one document)
        end_doc = int(np.searchsorted(offsets, offsets[first_doc] + chunk_tokens, side="right")) - 1
        end_doc = min(max(end_doc, first_doc + 1), len(lengths))
        start_token, stop_token = int(offsets[first_doc]), int(offsets[end_doc])
        block = lookup[corpus.token_ids[start_token:stop_token]]
        hits = np.flatnonzero(block >= 0)
        if len(hits):
            docs = np.searchsorted(offsets[first_doc : end_doc + 1], hits + start_token, side="right") - 1
            docs += first_doc
            _chunk_counts(
                accumulator, docs, hits + start_token - offsets[docs], block[hits], windows_per_doc,
                window_offsets, window_size, mode, stride, max(max_entries // 8, 1),
            )  # fmt: skip
        first_doc = end_doc
    joint = accumulator.result()
    return WindowCounts(words, joint, n_windows, window_size, mode)


def _count_documents(
    corpus: ReferenceCorpus, words: tuple[str, ...], mode: CountingMode, chunk: int = 1_000_000
) -> WindowCounts:
    """Documents holding each word and each pair: ``B.T @ B`` of the binary document × word matrix ``B``,
    built from the corpus ``chunk`` tokens at a time (no array over every token)."""
    ids = corpus.ids(words)
    lookup = np.full(len(corpus.vocabulary), -1, dtype=np.int64)
    known = ids >= 0
    lookup[ids[known]] = np.flatnonzero(known)
    docs, columns = [], []
    for start in range(0, corpus.n_tokens, chunk):
        block = lookup[corpus.token_ids[start : start + chunk]]
        hits = np.flatnonzero(block >= 0)
        docs.append(np.searchsorted(corpus.offsets, hits + start, side="right") - 1)
        columns.append(block[hits])
    rows, cols = np.concatenate(docs), np.concatenate(columns)
    lengths = corpus.lengths
    incidence = sp.coo_matrix(
        (np.ones(len(rows), dtype=np.int64), (rows, cols)), shape=(len(lengths), len(words))
    ).tocsr()
    incidence.sum_duplicates()
    incidence.data[:] = 1  # a word counts once per document
    n_documents = len(lengths) if mode == "gensim" else int((lengths > 0).sum())
    joint = (incidence.T @ incidence).tocsr()
    return WindowCounts(words, joint, n_documents, None, mode)


class _Accumulator:
    """Pair counts summed over chunks: one dense ``(m, m)`` array when small, else sparse partial sums.

    Counts are integers; the dense path sums them as float64 (exact below 2**53) because ``np.bincount``
    weights are float64.
    """

    def __init__(self, m: int) -> None:
        self.m = m
        self.dense = (
            m * m <= _DENSE_LIMIT
        )  # one bincount is cheaper than building and sorting a sparse matrix
        self.upper = np.zeros(m * m if self.dense else 0)
        self.diagonal = np.zeros(m)
        self.sparse = sp.csr_matrix((m, m), dtype=np.int64)

    def add_pairs(self, a: np.ndarray, b: np.ndarray, overlap: np.ndarray) -> None:
        """Add ``overlap[i]`` windows to the pair ``(a[i], b[i])`` (``a ≠ b``; the matrix stays symmetric)."""
        if self.dense:
            self.upper += np.bincount(a.astype(np.int64) * self.m + b, weights=overlap, minlength=self.m**2)
            return
        counts = sp.coo_matrix(
            (
                np.concatenate([overlap, overlap]).astype(np.int64),
                (np.concatenate([a, b]), np.concatenate([b, a])),
            ),
            shape=(self.m, self.m),
        )
        self.sparse = self.sparse + counts.tocsr()

    def result(self) -> sp.csr_matrix:
        m = self.m
        if self.dense:
            upper = self.upper.reshape(m, m)
            dense = upper + upper.T
            dense[np.diag_indices(m)] = self.diagonal
            return sp.csr_matrix(np.rint(dense).astype(np.int64))
        diagonal = sp.coo_matrix(
            (np.rint(self.diagonal).astype(np.int64), (np.arange(m), np.arange(m))), shape=(m, m)
        )
        return (self.sparse + diagonal.tocsr()).tocsr()


def _chunk_counts(
    accumulator: _Accumulator,
    docs: np.ndarray,
    positions: np.ndarray,
    columns: np.ndarray,
    windows_per_doc: np.ndarray,
    window_offsets: np.ndarray,
    window_size: int,
    mode: str,
    stride: int,
    max_pairs: int,
) -> None:
    """Add the counts of one chunk of whole documents (occurrences sorted by document then position)."""
    # group the occurrences by (word, document); positions stay sorted inside a group (stable sort)
    first_doc = int(docs.min())
    local_docs = (docs - first_doc).astype(np.int64)
    order = np.argsort(columns.astype(np.int64) * (int(local_docs.max()) + 1) + local_docs, kind="stable")
    del local_docs
    docs, positions, columns = docs[order], positions[order].astype(np.int64), columns[order]
    new_group = np.ones(len(docs), dtype=bool)
    new_group[1:] = (docs[1:] != docs[:-1]) | (columns[1:] != columns[:-1])
    last_window = windows_per_doc[docs] - 1
    start = np.maximum(positions - window_size + 1, 0)
    if mode == "gensim":
        rank = np.cumsum(new_group) - 1
        key = rank * stride + positions
        first_after_start = np.searchsorted(key, rank * stride + start, side="left")
        del rank, key
        end = np.minimum(positions[first_after_start], last_window)
    else:
        end = np.minimum(positions, last_window)
    # ends never decrease inside a group, so trimming each interval after its predecessor merges them
    previous_end = np.empty_like(end)
    previous_end[0] = -1
    previous_end[1:] = end[:-1]
    previous_end[new_group] = -1
    start = np.maximum(start, previous_end + 1)
    keep = end >= start
    first = window_offsets[docs[keep]] + start[keep]  # global window indices: documents never overlap
    last = window_offsets[docs[keep]] + end[keep]
    columns = columns[keep]
    del docs, positions, start, end, previous_end, last_window, keep, new_group
    accumulator.diagonal += np.bincount(columns, weights=last - first + 1, minlength=accumulator.m)
    # every pair of intervals of different words that overlap: sort by start, then each interval i meets
    # the intervals starting in [start_i, last_i] after it; the overlap length is the shared window count.
    # The pairs are expanded a block of intervals at a time (at most ``max_pairs`` pairs) to bound memory.
    order = np.argsort(first, kind="stable")
    first, last, columns = first[order], last[order], columns[order]
    stop = np.searchsorted(first, last, side="right")
    n_partners = stop - np.arange(1, len(first) + 1)
    del stop, order
    cumulative = np.cumsum(n_partners)
    lo = 0
    while lo < len(first):
        done = int(cumulative[lo - 1]) if lo else 0
        hi = max(int(np.searchsorted(cumulative, done + max_pairs, side="right")), lo + 1)
        partners = n_partners[lo:hi]
        total = int(partners.sum())
        if total:
            left = np.repeat(np.arange(lo, hi), partners)
            offsets_in_block = np.cumsum(partners) - partners
            right = left + 1 + (np.arange(total) - np.repeat(offsets_in_block, partners))
            overlap = np.minimum(last[left], last[right]) - first[right] + 1
            accumulator.add_pairs(columns[left], columns[right], overlap)
        lo = hi
