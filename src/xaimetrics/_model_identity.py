"""What identifies a classifier: a digest of everything it computes with (weights, config, options), so that
anything derived from it (cached activations, stored rows) is never reused for another model, even one whose
weights were replaced in the same folder."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping

import numpy as np

from xaimetrics._digest import canonical_json

__all__ = ["model_digest"]

#: attributes that say where or how a classifier runs, not what it computes (a progress bar, the batch size)
_PLACEMENT = frozenset({"device", "metadata", "progress", "batch_size"})


def _tensor_bytes(value: object) -> bytes:
    """The raw bytes of a tensor or an array (any dtype, bfloat16 included), with its dtype and shape."""
    detach = getattr(value, "detach", None)
    if callable(detach):
        import torch

        tensor: torch.Tensor = detach().cpu().contiguous()
        head = f"{tensor.dtype}{tuple(tensor.shape)}".encode()
        return head + tensor.reshape(-1).view(torch.uint8).numpy().tobytes()
    array = np.ascontiguousarray(np.asarray(value))
    return f"{array.dtype}{array.shape}".encode() + array.tobytes()


def _weights(classifier: object) -> Iterator[tuple[str, bytes]]:
    """``(name, bytes)`` of everything a classifier computes with: its torch module's ``state_dict`` and config
    (``classifier.model`` or the classifier itself), else its array and tensor attributes; then its plain
    options (numbers, strings, flags), where and how it runs excepted (device, progress bar, batch size)."""
    module = (
        classifier
        if callable(getattr(classifier, "state_dict", None))
        else getattr(classifier, "model", None)
    )
    if callable(getattr(module, "state_dict", None)):
        for name, tensor in sorted(module.state_dict().items()):  # type: ignore[union-attr]
            yield name, _tensor_bytes(tensor)
        config = getattr(module, "config", None)
        to_dict = getattr(config, "to_dict", None)
        if callable(to_dict):
            yield "config", canonical_json(to_dict()).encode()
    attributes = getattr(classifier, "__dict__", {})
    for name, value in sorted(attributes.items()):
        if name.startswith("_") or name in _PLACEMENT:
            continue
        if isinstance(value, np.ndarray) or callable(getattr(value, "detach", None)):
            if module is None or module is classifier:
                yield name, _tensor_bytes(value)
        elif (
            isinstance(value, bool | int | float | str)
            or value is None
            or (isinstance(value, Mapping | list | tuple) and len(canonical_json(value)) < 100_000)
        ):
            yield name, canonical_json(value).encode()


def model_digest(classifier: object) -> str:
    """The digest of a classifier: its type, class names, metadata (without where it is), weights and config.

    Exact: a model whose weights are replaced in the same folder gets another digest (every tensor is hashed,
    a few tenths of a second for a MiniLM).

    Example:
        >>> import torch
        >>> class Linear:
        ...     def __init__(self, w): self.weights, self.class_names = torch.tensor(w), ["no", "yes"]
        >>> model_digest(Linear([1.0, 2.0])) == model_digest(Linear([1.0, 2.0])), model_digest(Linear([1.0, 2.5])) == model_digest(Linear([1.0, 2.0]))
        (True, False)
    """
    metadata = getattr(classifier, "metadata", None)
    head = {
        "type": f"{type(classifier).__module__}.{type(classifier).__qualname__}",
        "classes": [str(c) for c in getattr(classifier, "class_names", None) or ()],
        "metadata": {k: v for k, v in metadata.items() if k != "path"}
        if isinstance(metadata, dict)
        else None,
    }
    digest = hashlib.sha256(canonical_json(head).encode())
    for name, data in _weights(classifier):
        digest.update(name.encode())
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()[:16]
