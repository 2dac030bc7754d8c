"""Loading Hugging Face models and tokenizers with errors that name the argument, and encoder-decoder inputs."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import torch

from xaimetrics._validation import invalid

if TYPE_CHECKING:
    from transformers import PretrainedConfig, PreTrainedModel, PreTrainedTokenizerBase

__all__ = ["decoder_inputs", "load_hf_model", "load_tokenizer"]


def decoder_inputs(inputs: Mapping[str, torch.Tensor], config: PretrainedConfig) -> dict[str, torch.Tensor]:
    """Decoder inputs of an encoder-decoder classifier (T5, BART): each text's tokens shifted right by one
    behind the decoder start token, *within its own columns*, with the encoder's attention mask.

    Hugging Face shifts the whole padded row, which puts left padding inside the decoder's sequence; shifting
    within the real tokens keeps the padding masked, so both padding sides give the same numbers.
    """
    ids, mask = inputs["input_ids"], inputs["attention_mask"].bool()
    start = config.decoder_start_token_id
    pad = config.pad_token_id if config.pad_token_id is not None else 0
    shifted = ids.roll(1, dims=1)
    first = mask.int().argmax(dim=1)
    shifted[torch.arange(len(ids), device=ids.device), first] = start
    shifted = shifted.masked_fill(~mask, pad)
    return {"decoder_input_ids": shifted, "decoder_attention_mask": inputs["attention_mask"]}


def load_hf_model(
    from_pretrained: Callable[..., PreTrainedModel],
    name_or_path: str | os.PathLike[str],
    kwargs: Mapping[str, object] | None,
    owner: str,
) -> PreTrainedModel:
    """``from_pretrained(name_or_path, **kwargs)`` (an auto class's loader) with an error naming the argument."""
    source = os.fspath(name_or_path)
    try:
        return from_pretrained(source, **dict(kwargs or {}))
    except (OSError, ValueError) as error:
        raise invalid(
            "name_or_path", owner, "a directory holding a saved model or a reachable hub id", source,
            f"Loading failed with: {error}",
        ) from error  # fmt: skip


def load_tokenizer(
    tokenizer: PreTrainedTokenizerBase | str | os.PathLike[str] | None,
    name_or_path: str | os.PathLike[str],
    owner: str,
) -> PreTrainedTokenizerBase:
    """``tokenizer`` itself, or the tokenizer stored at ``tokenizer`` (a path) or at ``name_or_path``."""
    if tokenizer is not None and not isinstance(tokenizer, str | os.PathLike):
        return tokenizer
    from transformers import AutoTokenizer

    source = os.fspath(name_or_path if tokenizer is None else tokenizer)
    try:
        return AutoTokenizer.from_pretrained(source)
    except (OSError, ValueError) as error:
        raise invalid(
            "tokenizer", owner, "a tokenizer or a place holding one", source,
            "Pass tokenizer=<tokenizer or its directory>.",
        ) from error  # fmt: skip
