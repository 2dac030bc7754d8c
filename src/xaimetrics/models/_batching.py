"""Tokenise once, sort by length, pad per batch (right or left): the plumbing shared by inference, ``g`` and
fine-tuning."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
import torch
from torch import nn

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

__all__ = [
    "Encoded",
    "PaddingSide",
    "accepted_inputs",
    "batches_by_length",
    "collate",
    "encode",
    "pad_offsets",
]

PaddingSide = Literal["left", "right"]


@dataclass(frozen=True)
class Encoded:
    """Token ids of a list of texts, unpadded.

    Attributes:
        input_ids: one list of token ids per text (truncated to ``max_length``).
        token_type_ids: the matching segment ids, or ``None`` if the tokenizer has none.
        lengths: array of shape ``(n_texts,)``, the number of tokens of each text.
        strings: the strings tokenised (the texts, or the prompts built around them), when kept.
        offsets: character ``(start, end)`` of each token in its string (fast tokenizers), when asked.
        spans: the token range ``[start, end)`` of each text inside its string (prompts), else ``None``.
    """

    input_ids: list[list[int]]
    token_type_ids: list[list[int]] | None
    lengths: np.ndarray
    strings: list[str] | None = None
    offsets: list[list[tuple[int, int]]] | None = None
    spans: list[tuple[int, int]] | None = None


def encode(
    tokenizer: PreTrainedTokenizerBase, texts: Sequence[str], max_length: int, *, offsets: bool = False
) -> Encoded:
    """Tokenise ``texts`` without padding (special tokens included, truncated to ``max_length``).

    ``offsets=True`` also keeps each token's character range (needs a fast tokenizer).
    """
    encoding = tokenizer(
        list(texts),
        truncation=True,
        max_length=max_length,
        padding=False,
        return_attention_mask=False,
        return_offsets_mapping=offsets,
    )
    input_ids = [list(ids) for ids in encoding["input_ids"]]
    token_type_ids = encoding.get("token_type_ids")
    if token_type_ids is not None:
        token_type_ids = [list(ids) for ids in token_type_ids]
    lengths = np.fromiter((len(ids) for ids in input_ids), dtype=np.int64, count=len(input_ids))
    pairs = [[(int(a), int(b)) for a, b in row] for row in encoding["offset_mapping"]] if offsets else None
    return Encoded(input_ids, token_type_ids, lengths, strings=list(texts), offsets=pairs)


def batches_by_length(lengths: np.ndarray, batch_size: int) -> list[np.ndarray]:
    """Split text indices into batches of similar length (longest first) to reduce padding.

    Example:
        >>> [b.tolist() for b in batches_by_length(np.array([3, 9, 1, 9, 5]), 2)]
        [[1, 3], [4, 0], [2]]
    """
    order = np.argsort(-lengths, kind="stable")
    return [order[start : start + batch_size] for start in range(0, len(order), batch_size)]


def accepted_inputs(model: nn.Module) -> frozenset[str]:
    """The tokenizer outputs to pass: ids and mask, and ``token_type_ids`` if ``model.forward`` names them.

    (DistilBERT takes no ``token_type_ids``; models that ignore them run fine without.)
    """
    named = "token_type_ids" in inspect.signature(model.forward).parameters
    return frozenset(
        ("input_ids", "attention_mask", "token_type_ids") if named else ("input_ids", "attention_mask")
    )


def pad_offsets(lengths: np.ndarray, width: int, side: PaddingSide) -> np.ndarray:
    """Padding tokens before each text in a batch of ``width`` columns (zero for right padding).

    Example:
        >>> pad_offsets(np.array([3, 5]), 5, "left").tolist(), pad_offsets(np.array([3, 5]), 5, "right").tolist()
        ([2, 0], [0, 0])
    """
    return (width - lengths) if side == "left" else np.zeros_like(lengths)


def collate(
    encoded: Encoded,
    indices: np.ndarray,
    *,
    pad_token_id: int,
    accepted: frozenset[str],
    device: torch.device,
    padding_side: PaddingSide = "right",
    position_ids: bool = False,
) -> dict[str, torch.Tensor]:
    """Pad the texts at ``indices`` into tensors of shape ``(len(indices), longest)`` on ``device``.

    With ``position_ids=True`` the positions ``0, 1, …`` of the real tokens are passed explicitly, so that
    left padding does not shift them (causal LMs count positions from the first column otherwise).
    """
    lengths = encoded.lengths[indices]
    width = int(lengths.max())
    starts = pad_offsets(lengths, width, padding_side)
    input_ids = torch.full((len(indices), width), pad_token_id, dtype=torch.long)
    attention_mask = torch.zeros((len(indices), width), dtype=torch.long)
    token_type_ids = torch.zeros((len(indices), width), dtype=torch.long)
    for row, index in enumerate(indices):
        columns = slice(int(starts[row]), int(starts[row] + lengths[row]))
        input_ids[row, columns] = torch.as_tensor(encoded.input_ids[index], dtype=torch.long)
        attention_mask[row, columns] = 1
        if encoded.token_type_ids is not None:
            token_type_ids[row, columns] = torch.as_tensor(encoded.token_type_ids[index], dtype=torch.long)
    batch = {"input_ids": input_ids, "attention_mask": attention_mask}
    if encoded.token_type_ids is not None and "token_type_ids" in accepted:
        batch["token_type_ids"] = token_type_ids
    if position_ids:
        batch["position_ids"] = (attention_mask.cumsum(dim=1) - 1).clamp_min(0)
    return {
        name: tensor.to(device)
        for name, tensor in batch.items()
        if name in accepted or name == "position_ids"
    }
