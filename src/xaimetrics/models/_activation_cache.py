"""Activations and predictions computed once per (model, texts) and kept on disk, so that a second command on
the same model and texts (``xaimetrics consim`` with another method, seed of the extractor or prompt type)
reads them in milliseconds instead of running the encoder again.

The key is the model's :func:`~xaimetrics._model_identity.model_digest` (weights, config, split, granularity,
positive flag, ``max_length``) and the texts' digest, so nothing is reused for another model or other texts;
files are plain ``.npy`` arrays read with ``allow_pickle=False`` (a cache folder is data, never code) and written
atomically.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np

from xaimetrics._cache import cache_dir
from xaimetrics._digest import update_with_texts
from xaimetrics._model_identity import model_digest

__all__ = ["cached_outputs"]

Output = Literal["activations", "predictions"]


def _texts_digest(texts: Sequence[str]) -> str:
    return update_with_texts(hashlib.sha256(), texts).hexdigest()[:16]


def cached_outputs(
    model: object,
    texts: Sequence[str],
    output: Output = "activations",
    *,
    root: str | os.PathLike[str] | None = None,
) -> np.ndarray:
    """``model.activations(texts)`` or ``model.predict(texts)`` as a NumPy array, from the cache when this model
    already computed it for these texts.

    Args:
        model: a split classifier (``activations`` / ``predict``).
        texts: the texts.
        output: ``"activations"`` or ``"predictions"``.
        root: the cache root (default: ``XAIMETRICS_CACHE_DIR`` or the user cache).

    Example:
        >>> import tempfile
        >>> class Lengths:
        ...     calls = 0
        ...     def activations(self, texts):
        ...         Lengths.calls += 1
        ...         return np.array([[len(t)] for t in texts], dtype=np.float32)
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     first = cached_outputs(Lengths(), ["ab", "c"], root=folder)
        ...     again = cached_outputs(Lengths(), ["ab", "c"], root=folder)
        >>> again.ravel().tolist(), Lengths.calls
        ([2.0, 1.0], 1)
    """
    folder = cache_dir("activations", root=root)
    path = folder / f"{output}-{model_digest(model)}-{_texts_digest(texts)}.npy"
    stored = _load(path, len(texts))
    if stored is not None:
        return stored
    compute = model.activations if output == "activations" else model.predict  # type: ignore[attr-defined]
    value = compute(list(texts))
    detach = getattr(value, "detach", None)
    array = np.asarray(detach().cpu().numpy() if callable(detach) else value)
    _save(path, array)
    return array


def _load(path: Path, n_texts: int) -> np.ndarray | None:
    try:
        array = np.load(path, allow_pickle=False)
    except (OSError, ValueError):
        return None  # absent or damaged: computed again (and rewritten)
    return array if array.ndim >= 1 and len(array) == n_texts else None


def _save(path: Path, array: np.ndarray) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with temporary.open("wb") as handle:
            np.save(handle, array, allow_pickle=False)
        os.replace(temporary, path)
    except OSError:
        temporary.unlink(missing_ok=True)  # a cache that cannot be written is only slower
