"""The fine-tuned model cache's parts: atomic saves, stale leftovers, per-class reports against scikit-learn."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import classification_report, f1_score

from xaimetrics.data import TextDataset
from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.models._model_cache import (
    check_evaluation_splits,
    check_recipe,
    class_report,
    evaluate_splits,
    package_version,
    remove_stale_temporaries,
    save_atomically,
)


class Saved:
    """Writes two files, the marker last, and can fail half-way (a killed save)."""

    def __init__(self, text: str, fail: bool = False) -> None:
        self.text, self.fail = text, fail

    def save_pretrained(self, path: Path) -> None:
        (Path(path) / "weights.bin").write_text(self.text)
        if self.fail:
            raise KeyboardInterrupt
        (Path(path) / "metadata.json").write_text("{}")

    def predict(self, texts: list[str]) -> list[int]:
        return [int("!" in t) for t in texts]


def test_a_save_replaces_the_old_model_whole_or_not_at_all(tmp_path: Path) -> None:
    target = tmp_path / "models" / "m"
    save_atomically(Saved("v1"), target)  # type: ignore[arg-type]
    save_atomically(Saved("v2"), target)  # type: ignore[arg-type]
    assert (target / "weights.bin").read_text() == "v2" and (target / "metadata.json").is_file()
    with pytest.raises(KeyboardInterrupt):
        save_atomically(Saved("v3", fail=True), target)  # type: ignore[arg-type]
    assert (target / "weights.bin").read_text() == "v2"
    assert sorted(p.name for p in target.parent.iterdir()) == ["m"]  # no temporary left behind


def test_only_leftovers_older_than_a_day_are_removed(tmp_path: Path) -> None:
    old, fresh, model = tmp_path / ".tmp-m-1", tmp_path / ".old-m-2", tmp_path / "m"
    for path in (old, fresh, model):
        path.mkdir()
    two_days_ago = time.time() - 2 * 24 * 3600
    os.utime(old, (two_days_ago, two_days_ago))
    os.utime(model, (two_days_ago, two_days_ago))
    remove_stale_temporaries(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".old-m-2", "m"]


def test_class_report_matches_scikit_learn_and_skips_absent_classes_in_macro_f1() -> None:
    labels = np.array([0, 0, 1, 1, 1, 0, 1])
    predictions = np.array([0, 1, 1, 1, 0, 2, 1])  # class 2 is predicted but absent from the labels
    report = class_report(labels, predictions, ["a", "b", "c"])
    reference = classification_report(
        labels, predictions, labels=[0, 1, 2], target_names=["a", "b", "c"], output_dict=True, zero_division=0
    )
    for name in ("a", "b", "c"):
        ours = report["per_class"][name]  # type: ignore[index]
        for key, theirs in (("precision", "precision"), ("recall", "recall"), ("f1", "f1-score")):
            assert ours[key] == pytest.approx(reference[name][theirs])
        assert ours["support"] == reference[name]["support"]
    assert report["accuracy"] == pytest.approx(4 / 7)
    f1 = f1_score(labels, predictions, labels=[0, 1, 2], average=None, zero_division=0)
    assert report["macro_f1"] == pytest.approx(f1[:2].mean())  # class 'c' has no support


def test_evaluation_draws_the_same_texts_and_refuses_empty_splits() -> None:
    splits = {
        "validation": TextDataset(
            [f"v{i}" + "!" * (i % 2) for i in range(10)], np.array([i % 2 for i in range(10)]), ["x", "y"]
        ),
        "test": TextDataset(["t!", "t", "u"], np.array([1, 1, 0]), ["x", "y"]),
    }
    scores = evaluate_splits(Saved("m"), splits.__getitem__, n_eval=4)  # type: ignore[arg-type]
    assert (scores["n_validation"], scores["validation_accuracy"]) == (4, 1.0)
    assert (scores["n_test"], scores["test_accuracy"]) == (3, pytest.approx(2 / 3))
    assert scores == {
        **evaluate_splits(Saved("m"), splits.__getitem__, n_eval=4),
        "eval_seconds": scores["eval_seconds"],
    }  # type: ignore[arg-type]
    splits["test"] = TextDataset([], np.array([], dtype=np.int64), ["x", "y"])
    with pytest.raises(
        InvalidParameterError, match=r"an empty test split of 'f\.csv'.*\(options: encoding='latin-1'\)"
    ):
        check_evaluation_splits(splits.__getitem__, "f.csv", {"encoding": "latin-1"})


def test_recipes_are_checked_argument_by_argument_and_versions_are_read() -> None:
    good = dict(
        positive=True,
        n_train=None,
        n_eval=10,
        epochs=1,
        max_length=64,
        batch_size=8,
        learning_rate=1e-4,
        seed=0,
    )
    check_recipe("finetune", **good)
    for name, bad in (
        ("positive", 1),
        ("n_train", 1),
        ("max_length", 4),
        ("learning_rate", 2.0),
        ("seed", -1),
    ):
        with pytest.raises(InvalidParameterError, match=f"'{name}' parameter of finetune"):
            check_recipe("finetune", **{**good, name: bad})
    assert package_version("numpy") == np.__version__
    assert package_version("no-such-distribution-xm") == "unknown"
