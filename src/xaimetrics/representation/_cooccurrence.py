"""Boolean sliding-window counts of words and word pairs, vectorised with sparse matrices.

Every window of ``window_size`` consecutive tokens is a virtual document. For a set of ``m`` words we build
the binary matrix ``W`` of shape ``(m, n_windows)`` (word present in window) without looping over windows:
an occurrence at position ``q`` of a document with ``n`` windows lies in the windows
``[max(0, q - window_size + 1), min(q, n - 1)]``, an interval; the intervals of one word in one document are
merged, expanded to (word, window) entries and stored sparse. Then ``W @ W.T`` holds every pair count at
once, its diagonal the single-word counts. Documents are processed in chunks to bound memory.

Two conventions (see :data:`COUNTING_MODES`):

- ``"xaimetrics"``: a word counts once per window however often it occurs in it; a document shorter than
  the window is one window; an empty document has no window.
- ``"gensim"``: reproduces gensim 4's ``WordOccurrenceAccumulator`` (the single-process path of
  ``CoherenceModel``) bit for bit, including two quirks: an empty document still counts as one window, and
  when a word leaves a window at its left edge it is marked absent even if a second occurrence of it is still
  inside the window (so ``a x a y`` with window 3 counts ``a`` in the first window only). The gensim marks
  reduce to: occurrence ``q`` makes its word present from window ``max(0, q - window_size + 1)`` up to the
  position of the first occurrence of the same word at or after that window start.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import scipy.sparse as sp

from xaimetrics._validation import check_choice, check_positive_int, invalid
from xaimetrics.representation._corpus import ReferenceCorpus

__all__ = ["COUNTING_MODES", "WindowCounts", "count_windows"]

CountingMode = Literal["xaimetrics", "gensim"]
COUNTING_MODES: tuple[str, ...] = ("xaimetrics", "gensim")
_DENSE_LIMIT = 4_000_000  # m² below which pair counts accumulate in a dense array


@dataclass(frozen=True)
class WindowCounts:
    """Sliding-window counts for ``words``.

    Attributes:
        words: the counted words, in the order of the matrix rows.
        joint: sparse matrix of shape ``(m, m)``: windows containing both words (diagonal: the word alone).
        n_windows: number of windows (virtual documents) in the corpus.
        window_size: tokens per window.
        mode: the counting convention.
    """

    words: tuple[str, ...]
    joint: sp.csr_matrix
    n_windows: int
    window_size: int
    mode: str

    @property
    def marginals(self) -> np.ndarray:
        """Array of shape ``(m,)``: windows containing each word."""
        return np.asarray(self.joint.diagonal(), dtype=np.int64)

    def pair_counts(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """Joint counts of the word pairs ``(rows[i], cols[i])`` (indices into ``words``)."""
        return np.asarray(self.joint[rows, cols], dtype=np.int64).ravel()


def count_windows(
    corpus: ReferenceCorpus,
    words: Sequence[str],
    *,
    window_size: int = 10,
    mode: CountingMode = "xaimetrics",
    max_entries: int = 20_000_000,
) -> WindowCounts:
    """Count, over the sliding windows of ``corpus``, the windows holding each word and each pair of words.

    Args:
        corpus: the reference corpus.
        words: distinct words to count (absent words get zero counts).
        window_size: tokens per window (gensim's ``c_npmi`` default is 10).
        mode: ``"xaimetrics"`` or ``"gensim"`` (module docstring).
        max_entries: bound on the (word, window) entries materialised at once; larger corpora are chunked.

    Returns:
        :class:`WindowCounts`.

    Example:
        >>> corpus = ReferenceCorpus.from_tokens([["a", "b", "a", "c"], ["b"]])
        >>> counts = count_windows(corpus, ["a", "b", "c"], window_size=2)
        >>> counts.n_windows, counts.marginals.tolist(), counts.joint.toarray()[0].tolist()
        (4, [3, 3, 1], [3, 2, 1])
    """
    window_size = check_positive_int(window_size, "window_size", "count_windows")
    mode = check_choice(mode, "mode", "count_windows", COUNTING_MODES)
    words = tuple(words)
    if len(set(words)) != len(words):
        duplicates = sorted({w for w in words if words.count(w) > 1})
        raise invalid("words", "count_windows", "distinct words", f"duplicates {duplicates}")
    m = len(words)

    lengths = corpus.lengths
    windows_per_doc = np.maximum(lengths - window_size + 1, 1)
    if mode == "xaimetrics":
        windows_per_doc[lengths == 0] = 0
    window_offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(windows_per_doc, out=window_offsets[1:])
    n_windows = int(window_offsets[-1])

    ids = corpus.ids(words)
    lookup = np.full(len(corpus.vocabulary), -1, dtype=np.int64)
    known = ids >= 0
    lookup[ids[known]] = np.flatnonzero(known)
    columns = lookup[corpus.token_ids]
    positions = np.flatnonzero(columns >= 0)
    columns = columns[positions]
    docs = np.searchsorted(corpus.offsets, positions, side="right") - 1

    joint = sp.csr_matrix((m, m), dtype=np.int64)
    if len(positions):
        per_doc = np.bincount(docs, minlength=len(lengths)) * window_size
        chunk_of_doc = np.cumsum(per_doc) // max(max_entries, window_size)
        chunk = chunk_of_doc[docs]
        bounds = np.concatenate([[0], np.flatnonzero(chunk[1:] != chunk[:-1]) + 1, [len(positions)]])
        for lo, hi in itertools.pairwise(bounds):
            joint = joint + _chunk_counts(
                docs[lo:hi],
                positions[lo:hi] - corpus.offsets[docs[lo:hi]],
                columns[lo:hi],
                windows_per_doc,
                window_offsets,
                m,
                window_size,
                mode,
                int(lengths.max()) + 1,
            )
    return WindowCounts(words, joint.tocsr(), n_windows, window_size, mode)


def _chunk_counts(
    docs: np.ndarray,
    positions: np.ndarray,
    columns: np.ndarray,
    windows_per_doc: np.ndarray,
    window_offsets: np.ndarray,
    m: int,
    window_size: int,
    mode: str,
    stride: int,
) -> sp.csr_matrix:
    """Pair counts of one chunk of whole documents (occurrences sorted by document then position)."""
    # group the occurrences by (word, document); positions stay sorted inside a group (stable sort)
    order = np.argsort(columns * (int(docs.max()) + 1) + docs, kind="stable")
    docs, positions, columns = docs[order], positions[order], columns[order]
    new_group = np.ones(len(docs), dtype=bool)
    new_group[1:] = (docs[1:] != docs[:-1]) | (columns[1:] != columns[:-1])
    last_window = windows_per_doc[docs] - 1
    start = np.maximum(positions - window_size + 1, 0)
    if mode == "gensim":
        rank = np.cumsum(new_group) - 1
        key = rank * stride + positions
        first_after_start = np.searchsorted(key, rank * stride + start, side="left")
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
    diagonal = np.bincount(columns, weights=last - first + 1, minlength=m)
    # every pair of intervals of different words that overlap: sort by start, then each interval i meets
    # the intervals starting in [start_i, last_i] after it; the overlap length is the shared window count
    order = np.argsort(first, kind="stable")
    first, last, columns = first[order], last[order], columns[order]
    stop = np.searchsorted(first, last, side="right")
    n_partners = stop - np.arange(1, len(first) + 1)
    total = int(n_partners.sum())
    left = np.repeat(np.arange(len(first)), n_partners)
    right = left + 1 + (np.arange(total) - np.repeat(np.cumsum(n_partners) - n_partners, n_partners))
    overlap = np.minimum(last[left], last[right]) - first[right] + 1
    a, b = columns[left], columns[right]
    if m * m <= _DENSE_LIMIT:  # one bincount is cheaper than building and sorting a sparse matrix
        upper = np.bincount(a * m + b, weights=overlap, minlength=m * m).reshape(m, m)
        dense = upper + upper.T
        dense[np.diag_indices(m)] = diagonal
        return sp.csr_matrix(np.rint(dense).astype(np.int64))
    counts = sp.coo_matrix(
        (
            np.concatenate([overlap, overlap, diagonal]).astype(np.int64),
            (np.concatenate([a, b, np.arange(m)]), np.concatenate([b, a, np.arange(m)])),
        ),
        shape=(m, m),
    )
    return counts.tocsr()
