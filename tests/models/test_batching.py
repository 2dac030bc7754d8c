"""Tokenising once, batching by length and padding: the tensors equal the tokenizer's own padded batch."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from xaimetrics.models._batching import accepted_inputs, batches_by_length, collate, encode, pad_offsets

TEXTS = [
    "A short one.",
    "A much longer sentence, with a comma and more words in it.",
    "Mid length text here.",
]


def test_encode_then_collate_equals_the_tokenizers_padded_batch_on_both_sides(tokenizer: Any) -> None:
    encoded = encode(tokenizer, TEXTS, max_length=12)
    assert encoded.lengths.tolist() == [len(ids) for ids in encoded.input_ids] and max(encoded.lengths) == 12
    accepted = frozenset({"input_ids", "attention_mask", "token_type_ids"})
    rows = np.array([2, 0, 1])
    for side in ("right", "left"):
        batch = collate(
            encoded, rows, pad_token_id=tokenizer.pad_token_id, accepted=accepted, device=torch.device("cpu"),
            padding_side=side,
        )  # fmt: skip
        tokenizer.padding_side = side
        try:
            reference = tokenizer(
                [TEXTS[i] for i in rows], truncation=True, max_length=12, padding=True, return_tensors="pt"
            )
        finally:
            tokenizer.padding_side = "right"
        for name in ("input_ids", "attention_mask", "token_type_ids"):
            assert torch.equal(batch[name], reference[name]), (side, name)


def test_explicit_positions_count_real_tokens_only(tokenizer: Any) -> None:
    encoded = encode(tokenizer, TEXTS[:2], max_length=32)
    batch = collate(
        encoded, np.array([0, 1]), pad_token_id=0, accepted=frozenset({"input_ids", "attention_mask"}),
        device=torch.device("cpu"), padding_side="left", position_ids=True,
    )  # fmt: skip
    short = int(encoded.lengths[0])
    width = batch["input_ids"].shape[1]
    assert batch["position_ids"][0, width - short :].tolist() == list(range(short))
    assert set(batch) == {"input_ids", "attention_mask", "position_ids"}  # no token_type_ids: not accepted


def test_offsets_locate_each_token_in_its_text(tokenizer: Any) -> None:
    encoded = encode(tokenizer, ["Hello world"], max_length=16, offsets=True)
    assert encoded.offsets is not None
    pieces = ["Hello world"[a:b].lower() for a, b in encoded.offsets[0] if b > a]
    assert pieces == ["hello", "world"]


def test_length_batches_and_padding_offsets() -> None:
    batches = batches_by_length(np.array([4, 8, 8, 1, 6]), 2)
    assert [b.tolist() for b in batches] == [[1, 2], [4, 0], [3]]  # longest first, ties in order
    assert pad_offsets(np.array([2, 7, 5]), 7, "left").tolist() == [5, 0, 2]


def test_token_type_ids_are_passed_only_to_models_that_name_them() -> None:
    class WithTypes(nn.Module):
        def forward(self, input_ids, attention_mask=None, token_type_ids=None):
            return input_ids

    class WithoutTypes(nn.Module):
        def forward(self, input_ids, attention_mask=None):
            return input_ids

    assert "token_type_ids" in accepted_inputs(WithTypes())
    assert accepted_inputs(WithoutTypes()) == frozenset({"input_ids", "attention_mask"})
