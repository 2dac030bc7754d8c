"""Which token positions make each activation row: the granularities of a named split point.

Each text's tokens are gathered into *groups*; a group's activation is the mean of its tokens' vectors:

==============  ========================================================  =================================
granularity     groups of one text                                        rows per text
==============  ========================================================  =================================
``cls``         the first token                                           1
``last``        the last token (a causal LM's answer position)            1
``mean``        every token of the text (padding excluded)                1
``token``       each token on its own                                     one per token
``word``        the tokens of each whitespace-separated word (special     one per word
                tokens left out)
==============  ========================================================  =================================

``g`` at a named split (the rest of the network) takes one vector per group and feeds the network the module
output ``H`` changed so that each group's mean becomes that vector: every token of a group is shifted by the
same amount, ``H'_t = H_t + (a_g − mean_{s∈g} H_s)``. For one-token groups this *is* the replacement of the
token's vector, and ``g(h(x)) = f(x)`` in every case, since the shift is zero at ``a = h(x)``. Tokens outside
every group (padding; special tokens for ``word``; the prompt template of a prompted LLM) keep their own
output. The gradient of ``g`` with respect to a group vector is the sum of the gradients of its tokens.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch

__all__ = ["GRANULARITIES", "BatchGroups", "batch_groups", "text_groups"]

GranularityName = Literal["cls", "last", "mean", "token", "word"]
#: every granularity of a named split point
GRANULARITIES: tuple[GranularityName, ...] = ("cls", "last", "mean", "token", "word")
#: granularities with exactly one row per text
POOLED: frozenset[str] = frozenset({"cls", "last", "mean"})


def _word_index(text: str) -> np.ndarray:
    """For each character of ``text``: the index of the whitespace-separated word it belongs to (−1: space)."""
    index = np.full(len(text), -1, dtype=np.int64)
    word = -1
    previous_space = True
    for position, char in enumerate(text):
        if char.isspace():
            previous_space = True
            continue
        if previous_space:
            word += 1
            previous_space = False
        index[position] = word
    return index


def text_groups(
    granularity: str,
    length: int,
    *,
    span: tuple[int, int] | None = None,
    offsets: list[tuple[int, int]] | None = None,
    text: str | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``(positions, group_ids)`` of one text: token positions (unpadded) and the group of each.

    Args:
        granularity: one of :data:`GRANULARITIES`.
        length: number of tokens of the text.
        span: the token range ``[start, end)`` that holds the text (``mean``/``token``/``word``); default all.
        offsets: character ``(start, end)`` of each token in ``text`` (needed for ``word``).
        text: the string that was tokenised (needed for ``word``).

    Example:
        >>> text_groups("word", 6, offsets=[(0, 0), (0, 3), (3, 5), (6, 8), (8, 9), (0, 0)], text="don't go!")
        (array([1, 2, 3, 4]), array([0, 0, 1, 1]))
        >>> text_groups("mean", 4, span=(1, 3))
        (array([1, 2]), array([0, 0]))
    """
    start, end = span if span is not None else (0, length)
    if granularity == "cls":
        return np.array([0]), np.array([0])
    if granularity == "last":
        return np.array([length - 1]), np.array([0])
    positions = np.arange(start, end)
    if granularity == "mean":
        return positions, np.zeros(len(positions), dtype=np.int64)
    if granularity == "token":
        return positions, np.arange(len(positions))
    if offsets is None or text is None:
        raise ValueError("word granularity needs the token offsets and the text")
    words = _word_index(text)
    kept: list[int] = []
    ids: list[int] = []
    for position in positions:
        first, last = offsets[position]
        if last <= first:  # a special token: no characters
            continue
        inside = words[first:last]
        inside = inside[inside >= 0]
        if len(inside):
            kept.append(int(position))
            ids.append(int(inside[0]))
    if not kept:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    _, dense = np.unique(np.asarray(ids), return_inverse=True)  # words numbered 0, 1, … in order
    return np.asarray(kept, dtype=np.int64), dense.astype(np.int64)


@dataclass(frozen=True)
class BatchGroups:
    """The groups of a padded batch: flat token coordinates and a batch-wide group id per token.

    Attributes:
        rows, columns: padded coordinates of every grouped token, shape ``(n_grouped_tokens,)``.
        group_ids: the group of each of them, in ``[0, n_groups)``; groups are numbered text by text.
        counts: tokens per group, shape ``(n_groups,)``.
        groups_per_text: rows of activations of each text of the batch, shape ``(batch,)``.
        single_tokens: every group has one token (replacement is exact, no shift needed).
    """

    rows: torch.Tensor
    columns: torch.Tensor
    group_ids: torch.Tensor
    counts: torch.Tensor
    groups_per_text: np.ndarray
    single_tokens: bool

    def pool(self, hidden: torch.Tensor) -> torch.Tensor:
        """Group means of ``hidden`` (shape ``(batch, tokens, p)``), shape ``(n_groups, p)``."""
        values = hidden[self.rows, self.columns]
        if self.single_tokens:
            return values
        sums = values.new_zeros((len(self.counts), hidden.shape[-1])).index_add(0, self.group_ids, values)
        return sums / self.counts[:, None].to(values.dtype)

    def replace(self, hidden: torch.Tensor, activations: torch.Tensor) -> torch.Tensor:
        """``hidden`` with each group's tokens shifted so that its mean is the group's row of ``activations``."""
        activations = activations.to(hidden.dtype)
        if self.single_tokens:
            values = activations[self.group_ids]
        else:
            shift = activations - self.pool(hidden)
            values = hidden[self.rows, self.columns] + shift[self.group_ids]
        return hidden.index_put((self.rows, self.columns), values)


def batch_groups(
    per_text: list[tuple[np.ndarray, np.ndarray]], pad_offsets: np.ndarray, device: torch.device
) -> BatchGroups:
    """Stack the groups of the texts of one batch; ``pad_offsets[i]`` is added to text ``i``'s positions
    (the number of padding tokens before it: non-zero for left padding)."""
    rows, columns, ids, per = [], [], [], []
    first = 0
    for row, (positions, group_ids) in enumerate(per_text):
        n = int(group_ids.max()) + 1 if len(group_ids) else 0
        rows.append(np.full(len(positions), row, dtype=np.int64))
        columns.append(positions + int(pad_offsets[row]))
        ids.append(group_ids + first)
        per.append(n)
        first += n
    group_ids = np.concatenate(ids) if ids else np.zeros(0, dtype=np.int64)
    counts = np.bincount(group_ids, minlength=first)
    return BatchGroups(
        rows=torch.as_tensor(np.concatenate(rows), device=device),
        columns=torch.as_tensor(np.concatenate(columns), device=device),
        group_ids=torch.as_tensor(group_ids, device=device),
        counts=torch.as_tensor(counts, device=device),
        groups_per_text=np.asarray(per, dtype=np.int64),
        single_tokens=bool((counts == 1).all()),
    )
