"""Tokenise once, sort by length, pad per batch: the plumbing shared by inference, ``g`` and fine-tuning."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

__all__ = ["Encoded", "accepted_inputs", "batches_by_length", "collate", "encode"]


@dataclass(frozen=True)
class Encoded:
    """Token ids of a list of texts, unpadded.

    Attributes:
        input_ids: one list of token ids per text (truncated to ``max_length``).
        token_type_ids: the matching segment ids, or ``None`` if the tokenizer has none.
        lengths: array of shape ``(n_texts,)``, the number of tokens of each text.
    """

    input_ids: list[list[int]]
    token_type_ids: list[list[int]] | None
    lengths: np.ndarray


def encode(tokenizer: Any, texts: Sequence[str], max_length: int) -> Encoded:
    """Tokenise ``texts`` without padding (special tokens included, truncated to ``max_length``)."""
    encoding = tokenizer(
        list(texts), truncation=True, max_length=max_length, padding=False, return_attention_mask=False
    )
    input_ids = [list(ids) for ids in encoding["input_ids"]]
    token_type_ids = encoding.get("token_type_ids")
    if token_type_ids is not None:
        token_type_ids = [list(ids) for ids in token_type_ids]
    lengths = np.fromiter((len(ids) for ids in input_ids), dtype=np.int64, count=len(input_ids))
    return Encoded(input_ids, token_type_ids, lengths)


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


def collate(
    encoded: Encoded,
    indices: np.ndarray,
    *,
    pad_token_id: int,
    accepted: frozenset[str],
    device: torch.device,
) -> dict[str, torch.Tensor]:
    """Right-pad the texts at ``indices`` into tensors of shape ``(len(indices), longest)`` on ``device``."""
    width = int(encoded.lengths[indices].max())
    input_ids = torch.full((len(indices), width), pad_token_id, dtype=torch.long)
    attention_mask = torch.zeros((len(indices), width), dtype=torch.long)
    token_type_ids = torch.zeros((len(indices), width), dtype=torch.long)
    for row, index in enumerate(indices):
        length = int(encoded.lengths[index])
        input_ids[row, :length] = torch.as_tensor(encoded.input_ids[index], dtype=torch.long)
        attention_mask[row, :length] = 1
        if encoded.token_type_ids is not None:
            token_type_ids[row, :length] = torch.as_tensor(encoded.token_type_ids[index], dtype=torch.long)
    batch = {"input_ids": input_ids, "attention_mask": attention_mask}
    if encoded.token_type_ids is not None and "token_type_ids" in accepted:
        batch["token_type_ids"] = token_type_ids
    return {name: tensor.to(device) for name, tensor in batch.items() if name in accepted}
