"""A small, deterministic fine-tuning loop for a :class:`SplitClassifier` (used by the demo classifier)."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from tqdm.auto import tqdm

from xaimetrics.models._batching import accepted_inputs, collate, encode

if TYPE_CHECKING:
    from xaimetrics.models._split_classifier import SplitClassifier

__all__ = ["fine_tune"]


@contextmanager
def _deterministic() -> Iterator[None]:
    """Turn on ``torch.use_deterministic_algorithms`` (warn-only, for CUDA ops without one) and restore it."""
    was_enabled = torch.are_deterministic_algorithms_enabled()
    was_warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    torch.use_deterministic_algorithms(True, warn_only=True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(was_enabled, warn_only=was_warn_only)


def fine_tune(
    classifier: SplitClassifier,
    texts: Sequence[str],
    labels: np.ndarray,
    *,
    epochs: int,
    batch_size: int,
    learning_rate: float,
    seed: int,
    weight_decay: float = 0.01,
    warmup_ratio: float = 0.1,
    progress: bool = True,
) -> dict[str, Any]:
    """Fine-tune ``classifier.model`` in place with AdamW and a linear warm-up/decay schedule.

    Cross-entropy on the logits, texts truncated to ``classifier.max_length``, batches drawn by a
    generator seeded with ``seed`` (dropout uses the global torch generator, seeded here too). A positive
    classifier keeps its ReLU at the head input during training. Returns ``{"train_seconds",
    "final_loss", "mean_loss", "steps"}``; ``final_loss`` is the mean loss over the last 10% of steps.
    """
    model = classifier.model
    encoded = encode(classifier.tokenizer, texts, classifier.max_length)
    targets = torch.as_tensor(np.asarray(labels), dtype=torch.long)
    generator = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    steps_per_epoch = -(-len(texts) // batch_size)
    total_steps = steps_per_epoch * epochs
    warmup = max(1, round(warmup_ratio * total_steps))

    def schedule(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return max(0.0, (total_steps - step) / max(1, total_steps - warmup))

    no_decay = [p for n, p in model.named_parameters() if p.ndim < 2 or "LayerNorm" in n or "layer_norm" in n]
    decay = [
        p for n, p in model.named_parameters() if not (p.ndim < 2 or "LayerNorm" in n or "layer_norm" in n)
    ]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=learning_rate,
    )
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)
    pad_token_id = int(classifier.tokenizer.pad_token_id)
    accepted = accepted_inputs(model)
    losses: list[float] = []
    start = time.perf_counter()
    model.train()
    try:
        with (
            _deterministic(),
            tqdm(total=total_steps, desc="fine-tuning", unit="step", disable=not progress) as bar,
        ):
            for _epoch in range(epochs):
                order = torch.randperm(len(texts), generator=generator).numpy()
                for first in range(0, len(order), batch_size):
                    indices = order[first : first + batch_size]
                    batch = collate(
                        encoded, indices, pad_token_id=pad_token_id, accepted=accepted,
                        device=classifier.device,
                    )  # fmt: skip
                    logits = model(**batch, return_dict=True).logits
                    loss = torch.nn.functional.cross_entropy(logits, targets[indices].to(classifier.device))
                    optimizer.zero_grad(set_to_none=True)
                    loss.backward()
                    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                    optimizer.step()
                    scheduler.step()
                    losses.append(float(loss.detach()))
                    bar.update(1)
                    bar.set_postfix(loss=f"{np.mean(losses[-20:]):.3f}")
    finally:
        model.eval()
        optimizer.zero_grad(set_to_none=True)
    tail = max(1, len(losses) // 10)
    return {
        "train_seconds": time.perf_counter() - start,
        "final_loss": float(np.mean(losses[-tail:])),
        "mean_loss": float(np.mean(losses)),
        "steps": len(losses),
    }
