"""Hugging Face loading with named errors, and encoder-decoder inputs shifted within each text's own tokens."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from transformers.models.bart.modeling_bart import shift_tokens_right

from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.models._hf_loading import decoder_inputs, load_hf_model, load_tokenizer

CONFIG = SimpleNamespace(decoder_start_token_id=2, pad_token_id=0)


def test_unpadded_rows_are_shifted_as_hugging_face_shifts_them() -> None:
    ids = torch.tensor([[5, 6, 7, 8], [9, 10, 11, 12]])
    out = decoder_inputs({"input_ids": ids, "attention_mask": torch.ones_like(ids)}, CONFIG)  # type: ignore[arg-type]
    assert torch.equal(out["decoder_input_ids"], shift_tokens_right(ids, 0, 2))


def test_left_and_right_padding_give_the_same_decoder_tokens() -> None:
    right = {"input_ids": torch.tensor([[5, 6, 7, 0, 0]]), "attention_mask": torch.tensor([[1, 1, 1, 0, 0]])}
    left = {"input_ids": torch.tensor([[0, 0, 5, 6, 7]]), "attention_mask": torch.tensor([[0, 0, 1, 1, 1]])}
    shifted_right = decoder_inputs(right, CONFIG)["decoder_input_ids"]  # type: ignore[arg-type]
    shifted_left = decoder_inputs(left, CONFIG)["decoder_input_ids"]  # type: ignore[arg-type]
    assert shifted_right.tolist() == [[2, 5, 6, 0, 0]] and shifted_left.tolist() == [[0, 0, 2, 5, 6]]
    assert torch.equal(decoder_inputs(left, CONFIG)["decoder_attention_mask"], left["attention_mask"])  # type: ignore[arg-type]


def test_loading_failures_name_the_argument(tmp_path: Path) -> None:
    def from_pretrained(source: str, **kwargs: object) -> object:
        raise OSError(f"{source} is not a model folder")

    with pytest.raises(
        InvalidParameterError, match=r"'name_or_path' parameter of Owner.*is not a model folder"
    ):
        load_hf_model(from_pretrained, tmp_path, None, "Owner")
    with pytest.raises(InvalidParameterError, match=r"'tokenizer' parameter of Owner.*Pass tokenizer="):
        load_tokenizer(None, tmp_path / "absent", "Owner")
    given = object()
    assert load_tokenizer(given, tmp_path, "Owner") is given  # type: ignore[arg-type]
