"""Hugging Face ``datasets`` as a source: splits, a validation split carved from train, class names, errors.

The datasets are local CSV files read by the hub library's own ``csv`` builder, so the tests run offline.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("datasets")

from xaimetrics.data._hub import hub_splits, load_from_hub
from xaimetrics.data._splits import split_indices
from xaimetrics.data._tables import Columns
from xaimetrics.exceptions import AssetError, InvalidParameterError


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    train = tmp_path / "train.csv"
    train.write_text(
        "text,label\n" + "".join(f"train {i},{'ab'[i % 2]}\n" for i in range(20)), encoding="utf-8"
    )
    test = tmp_path / "test.csv"
    test.write_text("text,label\ntest 0,b\ntest 1,c\n", encoding="utf-8")
    return {"train": str(train), "test": str(test)}


def test_hub_splits_returns_every_split_by_name(files: dict[str, str], tmp_path: Path) -> None:
    splits = hub_splits("csv", None, "caller", "", data_files=files, cache_dir=str(tmp_path / "hf"))
    assert sorted(splits) == ["test", "train"]
    assert list(splits["test"]["text"]) == ["test 0", "test 1"]
    one = hub_splits(
        "csv", None, "caller", "", data_files=files, split="test", cache_dir=str(tmp_path / "hf")
    )
    assert list(one) == ["test"]  # a single split asked for is named after it


def test_a_failed_load_is_an_asset_error_with_the_hint(tmp_path: Path) -> None:
    with pytest.raises(
        AssetError, match=r"caller could not load 'csv' with configuration 'x'.*Try the files"
    ):
        hub_splits("csv", "x", "caller", "Try the files.", data_files=str(tmp_path / "none.csv"))


def test_class_names_span_every_split_and_validation_is_carved_from_train(
    files: dict[str, str], tmp_path: Path
) -> None:
    options = {"data_files": files, "cache_dir": str(tmp_path / "hf")}
    test = load_from_hub(
        "csv", None, "test", seed=3, validation_fraction=0.2, columns=Columns(), hint="", **options
    )
    assert test.class_names == ["a", "b", "c"]  # 'c' is only in the test split
    assert test.labels.tolist() == [1, 2] and test.info["splits"] == ["test"]
    validation = load_from_hub(
        "csv", None, "validation", seed=3, validation_fraction=0.2, columns=Columns(), hint="", **options
    )
    train_labels = np.array([i % 2 for i in range(20)])
    rows = split_indices(train_labels, 3, 0.2, 0.0)["validation"]
    assert validation.texts == [f"train {i}" for i in rows] and len(rows) == 4
    assert validation.info["splits"] == ["train"]


def test_an_unknown_split_names_the_available_ones(files: dict[str, str], tmp_path: Path) -> None:
    with pytest.raises(InvalidParameterError, match=r"'split'.*\['train', 'test'\] or 'all'"):
        load_from_hub(
            "csv", None, "dev", seed=0, validation_fraction=0.1, columns=Columns(), hint="",
            data_files=files, cache_dir=str(tmp_path / "hf"),
        )  # fmt: skip
