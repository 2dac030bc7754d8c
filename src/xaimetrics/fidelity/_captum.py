"""Attributions to evaluate, computed with Captum, for tensors and texts.

Tensors: Captum's ``Saliency`` (absolute gradient), ``InputXGradient``, ``IntegratedGradients`` (baseline
``baseline``, default 0) and ``Occlusion`` (one feature at a time; for images one pixel with all its
channels). Image attributions ``(n, C, H, W)`` are summed over channels into ``(n, H, W)`` so that fidelity
metrics perturb pixels (``reduce_channels=False`` keeps them).

Texts: attributions at the word-embedding layer, reduced to one score per token, then summed per feature
(token or word, the same features as the fidelity metrics, special tokens excluded):

- ``"saliency"``: L2 norm of the gradient of the target logit w.r.t. the token's embedding;
- ``"input_x_gradient"``: embedding · gradient (``LayerGradientXActivation``);
- ``"integrated_gradients"``: ``LayerIntegratedGradients`` from a baseline where every non-special token is
  the pad token, summed over the embedding dimension;
- ``"occlusion"``: the drop of the target logit when the feature alone is replaced by the mask token.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, cast

import numpy as np
import torch

from xaimetrics._optional import import_optional
from xaimetrics._validation import Interval, Options, caller, invalid, validate_params
from xaimetrics.fidelity._base import is_text, run_rows
from xaimetrics.fidelity._outputs import model_outputs
from xaimetrics.fidelity._tensor import as_float_tensor, model_device, model_dtype

if TYPE_CHECKING:
    from collections.abc import Sequence
    from types import ModuleType

    from numpy.typing import ArrayLike
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

    from xaimetrics.fidelity._outputs import FidelityModel
    from xaimetrics.fidelity._text import TextPerturber, TokenizedModel

__all__ = ["METHODS", "attribute"]

Method = Literal["saliency", "input_x_gradient", "integrated_gradients", "occlusion"]
METHODS = ("saliency", "input_x_gradient", "integrated_gradients", "occlusion")


@validate_params(
    {
        "method": Options(METHODS),
        "granularity": Options(("token", "word")),
        "n_steps": Interval(int, 1),
        "batch_size": Interval(int, 1),
    }
)
def attribute(
    model: FidelityModel | TokenizedModel,
    inputs: ArrayLike | Sequence[str],
    method: Method = "saliency",
    targets: ArrayLike | None = None,
    *,
    tokenizer: PreTrainedTokenizerBase | None = None,
    granularity: Literal["token", "word"] = "token",
    baseline: float = 0.0,
    n_steps: int = 50,
    batch_size: int = 16,
    reduce_channels: bool = True,
    max_length: int | None = None,
) -> torch.Tensor | list[np.ndarray]:
    """Attribute each input's target output to its features with a Captum method.

    Args:
        model: a differentiable ``torch.nn.Module`` (tensors) or a Hugging Face sequence classifier with
            ``tokenizer=`` / a ``SplitClassifier`` (texts).
        inputs: an array ``(n, *features)`` or a list of texts.
        method: ``"saliency"``, ``"input_x_gradient"``, ``"integrated_gradients"`` or ``"occlusion"``.
        targets: class indices ``(n,)`` or one-hot rows; ``None``: the predicted class.
        tokenizer, granularity, max_length: text only (same meaning as in the fidelity metrics).
        baseline: tensors: the baseline value of integrated gradients and occlusion.
        n_steps: integration steps of integrated gradients.
        batch_size: inputs per backward pass (texts) / perturbations per forward pass (occlusion).
        reduce_channels: sum image attributions over the channel axis.

    Returns:
        tensors: a CPU tensor ``(n, *features)`` (``(n, H, W)`` for images with ``reduce_channels``);
        texts: a list of 1-D float arrays, one score per feature.

    Example:
        >>> import torch
        >>> model = torch.nn.Linear(3, 2).eval()
        >>> _ = model.weight.data.copy_(torch.tensor([[1.0, -2.0, 0.5], [0.0, 1.0, 1.0]]))
        >>> attribute(model, torch.tensor([[2.0, 1.0, 4.0]]), "input_x_gradient", targets=[0]).tolist()
        [[2.0, -2.0, 2.0]]
    """
    captum_attr = import_optional("captum.attr", extra="captum", caller="xaimetrics.fidelity.attribute")
    if is_text(inputs):
        return _attribute_text(
            model,
            list(inputs),
            method,
            targets,
            captum_attr,
            tokenizer,
            granularity,
            batch_size,
            n_steps,
            max_length,
        )
    tensor_model = cast("FidelityModel", model)  # tensor inputs: a callable model
    return _attribute_tensor(
        tensor_model, inputs, method, targets, captum_attr, baseline, n_steps, batch_size, reduce_channels
    )


def _target_indices(targets: ArrayLike | None, outputs: torch.Tensor) -> torch.Tensor:
    if targets is None:
        return outputs.argmax(dim=-1)
    y = torch.as_tensor(np.asarray(targets.detach().cpu() if isinstance(targets, torch.Tensor) else targets))
    if y.ndim == 2:
        y = y.argmax(dim=-1)
    if y.ndim != 1 or y.shape[0] != outputs.shape[0]:
        raise invalid(
            "targets",
            caller(),
            f"{outputs.shape[0]} class indices or one-hot rows",
            f"shape {tuple(y.shape)}",
        )
    return y.long().to(outputs.device)


def _attribute_tensor(
    model: FidelityModel,
    inputs: ArrayLike,
    method: str,
    targets: ArrayLike | None,
    captum_attr: ModuleType,
    baseline: float,
    n_steps: int,
    batch_size: int,
    reduce_channels: bool,
) -> torch.Tensor:
    x = as_float_tensor(inputs, "inputs", caller())
    x = x.to(device=model_device(model), dtype=model_dtype(model) or x.dtype)

    def forward(batch: torch.Tensor) -> torch.Tensor:
        return model_outputs(model, batch)

    with torch.no_grad():
        target = _target_indices(targets, forward(x))
    parts = []
    for start in range(0, x.shape[0], batch_size):
        xb = x[start : start + batch_size].clone().requires_grad_(True)
        tb = target[start : start + batch_size]
        if method == "saliency":
            a = captum_attr.Saliency(forward).attribute(xb, target=tb, abs=True)
        elif method == "input_x_gradient":
            a = captum_attr.InputXGradient(forward).attribute(xb, target=tb)
        elif method == "integrated_gradients":
            a = captum_attr.IntegratedGradients(forward).attribute(
                xb, baselines=baseline, target=tb, n_steps=n_steps, internal_batch_size=batch_size
            )
        else:
            window = (x.shape[1], *([1] * (x.ndim - 2))) if x.ndim == 4 else tuple([1] * (x.ndim - 1))
            a = captum_attr.Occlusion(forward).attribute(
                xb.detach(),
                sliding_window_shapes=window,
                baselines=baseline,
                target=tb,
                perturbations_per_eval=batch_size,
            )
        parts.append(a.detach().cpu())
    out = torch.cat(parts)
    if reduce_channels and out.ndim == 4:
        out = out.sum(dim=1)
    return out


def _attribute_text(
    model: FidelityModel | TokenizedModel,
    texts: list[str],
    method: str,
    targets: ArrayLike | None,
    captum_attr: ModuleType,
    tokenizer: PreTrainedTokenizerBase | None,
    granularity: str,
    batch_size: int,
    n_steps: int,
    max_length: int | None,
) -> list[np.ndarray]:
    from xaimetrics.fidelity._text import TextPerturber, resolve_text_model

    hf_model, tokenizer, _ = resolve_text_model(model, tokenizer, caller())
    p = TextPerturber(
        model,
        texts,
        tokenizer=tokenizer,
        granularity=granularity,
        baseline_mode="mask" if tokenizer.mask_token_id is not None else "pad",
        max_length=max_length,
        device=None,
        activation=None,
        operator=None,
    )
    p.set_targets(targets, batch_size)
    n, width = p.n_samples, int(p.n_features.max())
    if method == "occlusion":
        clean = p.endpoint_scores(baseline=False, batch_size=batch_size)
        samples = torch.arange(n).repeat_interleave(width)
        feature = torch.arange(width).repeat(n)
        valid = feature < p.n_features[samples]
        samples, feature = samples[valid], feature[valid]
        feature_device = feature.to(p.device)

        def mask_fn(rows: torch.Tensor) -> torch.Tensor:
            return torch.nn.functional.one_hot(feature_device[rows], width).bool()

        drops = clean[samples] - run_rows(p, samples, mask_fn, batch_size)
        scores = torch.zeros(n, width, dtype=torch.float64)
        scores[samples, feature] = drops
    else:
        scores = _embedding_attributions(hf_model, p, method, captum_attr, batch_size, n_steps)
    return [scores[i, : int(p.n_features[i])].numpy().copy() for i in range(n)]


def _embedding_attributions(
    hf_model: FidelityModel,
    p: TextPerturber,
    method: str,
    captum_attr: ModuleType,
    batch_size: int,
    n_steps: int,
) -> torch.Tensor:
    """Token attributions at the word-embedding layer, summed per feature: ``(n, max_features)``."""
    layer = cast("PreTrainedModel", hf_model).get_input_embeddings()  # a Hugging Face classifier
    keys = p.keys
    targets = p.targets
    assert targets is not None  # set by set_targets before any attribution
    target = targets.argmax(dim=-1)

    def forward(input_ids: torch.Tensor, *extra: torch.Tensor) -> torch.Tensor:
        kwargs = dict(zip(keys[1:], extra, strict=True))
        return model_outputs(hf_model, input_ids=input_ids, **kwargs)

    n, width = p.n_samples, int(p.n_features.max())
    scores = torch.zeros(n, width, dtype=torch.float64)
    pad_id = p.tokenizer.pad_token_id if p.tokenizer.pad_token_id is not None else 0
    for start in range(0, n, batch_size):
        samples = p.sample_order[start : start + batch_size].to(p.device)
        length = int(p.lengths[samples.cpu()].max())
        batch = {"input_ids": p.ids[samples, :length], "attention_mask": p.attention[samples, :length]}
        batch["token_type_ids"] = p.token_types[samples, :length]
        ids = batch["input_ids"]
        extra = tuple(batch[k] for k in keys[1:])
        tb = target[samples]
        if method == "integrated_gradients":
            feature = p.feature_of_token[samples, :length]
            base = torch.where(feature >= 0, torch.full_like(ids, pad_id), ids)
            # internal_batch_size bounds memory: without it the n_steps interpolations of the whole batch go
            # through the model at once (50 × 16 texts of 512 tokens exhausted 24 GB)
            a = captum_attr.LayerIntegratedGradients(forward, layer).attribute(
                ids, baselines=base, target=tb, additional_forward_args=extra, n_steps=n_steps,
                internal_batch_size=batch_size,
            )  # fmt: skip
            token_scores = a.sum(dim=-1)
        else:
            a = captum_attr.LayerGradientXActivation(
                forward, layer, multiply_by_inputs=method == "input_x_gradient"
            ).attribute(ids, target=tb, additional_forward_args=extra)
            token_scores = a.norm(dim=-1) if method == "saliency" else a.sum(dim=-1)
        feature = p.feature_of_token[samples, :length]
        per_feature = torch.zeros(len(samples), width, dtype=torch.float64, device=token_scores.device)
        valid = feature >= 0
        per_feature.scatter_add_(1, feature.clamp(min=0), torch.where(valid, token_scores.double(), 0.0))
        scores[samples.cpu()] = per_feature.detach().cpu()
    return scores
