"""A small, deterministic, resumable fine-tuning loop for a :class:`SplitClassifier`."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch
from tqdm.auto import tqdm

from xaimetrics._progress import show_bar
from xaimetrics.models._batching import collate

if TYPE_CHECKING:
    from xaimetrics.models._batching import Encoded
    from xaimetrics.models._split_classifier import SplitClassifier, _Batch

__all__ = ["CHECKPOINT_FILE", "fine_tune"]

#: the training state written in ``checkpoint_dir`` (model, optimiser, schedule, random states, losses)
CHECKPOINT_FILE = "training-state.pt"


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


def _save_state(path: Path, state: dict[str, object]) -> None:
    """Write atomically: a crash while saving leaves the previous checkpoint intact."""
    temporary = path.with_name(path.name + ".tmp")
    torch.save(state, temporary)
    os.replace(temporary, path)


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
    checkpoint_dir: str | os.PathLike[str] | None = None,
    checkpoint_steps: int | None = None,
    callback: Callable[[int, float], None] | None = None,
) -> dict[str, float]:
    """Fine-tune ``classifier.model`` in place with AdamW and a linear warm-up/decay schedule.

    Cross-entropy on the logits, texts truncated to ``classifier.max_length``, batches drawn by a
    generator seeded with ``seed`` (dropout uses the global torch generator, seeded here too). A positive
    classifier keeps its ReLU at the head input during training.

    **Resuming.** With ``checkpoint_dir``, the whole training state (weights, optimiser, schedule, the batch
    generator at the start of the current epoch, the global random state, the losses) is saved there every
    ``checkpoint_steps`` steps and at the end of each epoch; a later call with the same directory (and the
    same data and recipe) continues from it and ends with the same weights as an uninterrupted run.

    Args:
        callback: called as ``callback(step, loss)`` after each optimisation step (progress, tracking).

    Returns:
        ``{"train_seconds", "final_loss", "mean_loss", "steps", "resumed_from_step"}``; ``final_loss`` is the
        mean loss over the last 10% of steps.
    """
    model = classifier.model
    encoded = classifier._encode(list(texts))
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

    def no_decay(name: str, parameter: torch.nn.Parameter) -> bool:
        return parameter.ndim < 2 or "LayerNorm" in name or "layer_norm" in name

    named = list(model.named_parameters())
    optimizer = torch.optim.AdamW(
        [
            {"params": [p for n, p in named if not no_decay(n, p)], "weight_decay": weight_decay},
            {"params": [p for n, p in named if no_decay(n, p)], "weight_decay": 0.0},
        ],
        lr=learning_rate,
    )
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)
    losses: list[float] = []
    step = 0
    epoch_generator_state = generator.get_state()
    checkpoint = None if checkpoint_dir is None else Path(checkpoint_dir) / CHECKPOINT_FILE
    elapsed = 0.0
    if checkpoint is not None and checkpoint.is_file():
        state = torch.load(
            checkpoint, map_location=classifier.device, weights_only=True
        )  # never unpickle code
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        step, losses, elapsed = int(state["step"]), list(state["losses"]), float(state["elapsed"])
        epoch_generator_state = state["epoch_generator_state"]
        torch.set_rng_state(state["torch_rng"])
    resumed_from = step

    def save() -> None:
        if checkpoint is None:
            return
        checkpoint.parent.mkdir(parents=True, exist_ok=True)
        _save_state(
            checkpoint,
            {
                "model": model.state_dict(), "optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(),
                "step": step, "losses": losses, "elapsed": elapsed + time.perf_counter() - start,
                "epoch_generator_state": epoch_generator_state, "torch_rng": torch.get_rng_state(),
            },
        )  # fmt: skip

    pad_token_id = int(classifier.tokenizer.pad_token_id)
    start = time.perf_counter()
    model.train()
    try:
        with (
            _deterministic(),
            tqdm(
                total=total_steps,
                initial=step,
                desc="fine-tuning",
                unit="step",
                disable=not show_bar(progress),
            ) as bar,
        ):
            for epoch in range(step // steps_per_epoch, epochs):
                generator.set_state(epoch_generator_state)
                order = torch.randperm(len(texts), generator=generator).numpy()
                first_batch = step - epoch * steps_per_epoch  # > 0 only when resuming inside this epoch
                for first in range(first_batch * batch_size, len(order), batch_size):
                    indices = order[first : first + batch_size]
                    batch = collate(
                        encoded, indices, pad_token_id=pad_token_id, accepted=classifier._accepted,
                        device=classifier.device, padding_side=classifier.padding_side,
                        position_ids=classifier._explicit_positions,
                    )  # fmt: skip
                    logits = classifier._model_logits(_batch(indices, batch, encoded, classifier))
                    loss = torch.nn.functional.cross_entropy(logits, targets[indices].to(logits.device))
                    optimizer.zero_grad(set_to_none=True)
                    loss.backward()
                    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                    optimizer.step()
                    scheduler.step()
                    step += 1
                    losses.append(float(loss.detach()))
                    bar.update(1)
                    bar.set_postfix(loss=f"{np.mean(losses[-20:]):.3f}")
                    if callback is not None:
                        callback(step, losses[-1])
                    if checkpoint_steps and step % checkpoint_steps == 0 and step % steps_per_epoch:
                        save()
                epoch_generator_state = generator.get_state()
                save()
    finally:
        model.eval()
        optimizer.zero_grad(set_to_none=True)
    tail = max(1, len(losses) // 10)
    return {
        "train_seconds": elapsed + time.perf_counter() - start,
        "final_loss": float(np.mean(losses[-tail:])) if losses else float("nan"),
        "mean_loss": float(np.mean(losses)) if losses else float("nan"),
        "steps": len(losses),
        "resumed_from_step": resumed_from,
    }


def _batch(
    indices: np.ndarray, inputs: dict[str, torch.Tensor], encoded: Encoded, classifier: SplitClassifier
) -> _Batch:
    """The batch record ``SplitClassifier._model_logits`` reads, for a training step."""
    from xaimetrics.models._batching import pad_offsets
    from xaimetrics.models._split_classifier import _Batch as Batch  # at run time (torch is loaded by now)

    lengths = encoded.lengths[indices]
    starts = pad_offsets(lengths, int(lengths.max()), classifier.padding_side)
    return Batch(indices, inputs, torch.as_tensor(starts + lengths - 1, device=classifier.device), None)
