"""Classification-head layouts: recognised from the module structure, and g(a) on the read head input gives
the model's own logits (BERT, DistilBERT, RoBERTa, GPT-2)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
from torch import nn

from xaimetrics.models._heads import detect_head


def _tiny_gpt2() -> nn.Module:
    from transformers import AutoModelForSequenceClassification, GPT2Config

    torch.manual_seed(0)
    config = GPT2Config(vocab_size=60, n_embd=16, n_layer=1, n_head=2, num_labels=3, pad_token_id=0)
    return AutoModelForSequenceClassification.from_config(config).eval()


@pytest.mark.parametrize(
    ("architecture", "layout", "module"),
    [
        ("bert", "pooled output (bert)", "classifier"),
        ("distilbert", "[CLS] hidden state (distilbert)", "pre_classifier"),
        ("roberta", "first-token hidden state (roberta)", "classifier"),
        ("gpt2", "last-token hidden state (gpt2)", "score"),
    ],
)
def test_the_head_run_on_its_read_input_reproduces_the_logits(
    make_model: Callable[..., nn.Module], architecture: str, layout: str, module: str
) -> None:
    model = _tiny_gpt2() if architecture == "gpt2" else make_model(architecture)
    adapter = detect_head(model)
    assert adapter is not None and (adapter.layout, adapter.module_name, adapter.width) == (
        layout,
        module,
        adapter.width,
    )
    assert adapter.first_token is (architecture != "gpt2")
    assert adapter.width == (16 if architecture == "gpt2" else 32)  # the hidden sizes of the tiny configs
    ids = torch.tensor([[3, 14, 15, 9, 2], [5, 26, 5, 0, 0]])
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]])
    last = torch.tensor([4, 2])
    captured: list[torch.Tensor] = []
    hook = model.get_submodule(module).register_forward_pre_hook(
        lambda _m, args: captured.append(adapter.extract(args, last))
    )
    with torch.no_grad():
        logits = model(input_ids=ids, attention_mask=mask).logits
        hook.remove()
        assert captured[0].shape == (2, adapter.width)
        assert torch.allclose(adapter.head(model, captured[0]), logits, atol=1e-5)


def test_a_module_without_a_known_head_has_none() -> None:
    assert detect_head(nn.Sequential(nn.Linear(3, 2))) is None
