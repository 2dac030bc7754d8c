"""Module outputs inside a forward pass: the main tensor read and replaced in every container; model helpers."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn
from transformers.modeling_outputs import BaseModelOutput

from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.models._module_io import (
    as_float_tensor,
    first_tensor,
    last_layer_name,
    positions_from_input_ids,
    replace_first_tensor,
    transformer_layers,
)


def test_the_main_tensor_is_read_and_replaced_in_each_container_type() -> None:
    a, b, new = torch.zeros(2), torch.ones(3), torch.full((2,), 7.0)
    assert first_tensor(a) is a and replace_first_tensor(a, new) is new
    out = replace_first_tensor((a, b), new)
    assert isinstance(out, tuple) and out[0] is new and out[1] is b
    listed = replace_first_tensor([a, b], new)
    assert isinstance(listed, list) and listed[0] is new and listed[1] is b
    output = BaseModelOutput(last_hidden_state=a, attentions=(b,))  # a transformers ModelOutput
    assert first_tensor(output) is a
    replaced = replace_first_tensor(output, new)
    assert isinstance(replaced, BaseModelOutput)
    assert replaced.last_hidden_state is new and replaced.attentions == (b,)


def test_an_output_without_a_leading_tensor_is_named() -> None:
    for output in ("text", (), (1, torch.zeros(1))):
        with pytest.raises(InvalidParameterError, match="a module that outputs a tensor"):
            first_tensor(output)
    with pytest.raises(InvalidParameterError, match="a module that outputs a tensor"):
        replace_first_tensor("text", torch.zeros(1))


def test_activations_become_float32_and_tensors_stay_in_the_graph() -> None:
    leaf = torch.ones(2, requires_grad=True)
    assert as_float_tensor(leaf, "x") is leaf
    converted = as_float_tensor(np.array([[1, 2]], dtype=np.int64), "x")
    assert converted.dtype == torch.float32 and converted.tolist() == [[1.0, 2.0]]
    with pytest.raises(InvalidParameterError, match="'activations' parameter of Owner"):
        as_float_tensor([["a"]], "Owner")


def test_transformer_layers_are_the_longest_module_list() -> None:
    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.heads = nn.ModuleList([nn.Linear(2, 2)])
            self.encoder = nn.Module()
            self.encoder.layer = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])

    net = Net()
    assert transformer_layers(net) == ["encoder.layer.0", "encoder.layer.1", "encoder.layer.2"]
    assert last_layer_name(net) == "encoder.layer.2"
    assert transformer_layers(nn.Linear(2, 2)) == [] and last_layer_name(nn.Linear(2, 2)) == "<module name>"
    assert not positions_from_input_ids(net)
    embedding = nn.Module()  # RoBERTa-style embeddings derive positions from the token ids
    embedding.create_position_ids_from_input_ids = lambda ids: ids  # type: ignore[assignment]
    net.encoder.embeddings = embedding
    assert positions_from_input_ids(net)
