"""Activations computed once per (model, texts) and read back (issue #35 item 10: each consim call re-encoded)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from xaimetrics.models import SplitClassifier
from xaimetrics.models._activation_cache import cached_outputs

TEXTS = ["a great moving film", "a dull boring film", "superb"]


def test_a_second_call_reads_the_cache_and_another_model_never_does(tiny_model_dir, tmp_path: Path) -> None:
    model = SplitClassifier.from_pretrained(tiny_model_dir, device="cpu")
    calls = []
    encode = model.activations

    def counted(texts):
        calls.append(len(texts))
        return encode(texts)

    model.activations = counted  # type: ignore[method-assign]
    first = cached_outputs(model, TEXTS, root=tmp_path)
    again = cached_outputs(model, TEXTS, root=tmp_path)
    assert calls == [3] and np.array_equal(first, again)
    np.testing.assert_allclose(first, encode(TEXTS).numpy(), rtol=0, atol=0)
    cached_outputs(model, TEXTS[:2], root=tmp_path)  # other texts: computed
    assert calls == [3, 2]
    predictions = cached_outputs(model, TEXTS, "predictions", root=tmp_path)
    assert predictions.tolist() == model.predict(TEXTS).tolist()
    with torch.no_grad():  # the same folder, other weights: never the stored activations
        next(model.model.parameters()).add_(0.5)
    changed = cached_outputs(model, TEXTS, root=tmp_path)
    assert calls == [3, 2, 3] and not np.array_equal(changed, first)
    np.testing.assert_array_equal(changed, encode(TEXTS).numpy())
    files = sorted(p.name for p in (tmp_path / "activations").iterdir())
    assert len(files) == 4 and all(name.endswith(".npy") for name in files)


def test_a_damaged_cache_file_is_computed_again(tiny_model_dir, tmp_path: Path) -> None:
    model = SplitClassifier.from_pretrained(tiny_model_dir, device="cpu")
    first = cached_outputs(model, TEXTS, root=tmp_path)
    (path,) = (tmp_path / "activations").iterdir()
    path.write_bytes(path.read_bytes()[:40])  # cut mid-write by another process
    np.testing.assert_array_equal(cached_outputs(model, TEXTS, root=tmp_path), first)
