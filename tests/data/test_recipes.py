"""Dataset recipes (BIOS10, TweetEval-emotion): reduction rules on files with the hub's columns, offline errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from xaimetrics.data import DATASET_RECIPES, load_dataset
from xaimetrics.exceptions import InvalidParameterError, MissingDependencyError

SRC = Path(__file__).resolve().parents[2] / "src"


def _bios_file(path: Path, counts: dict[int, int], offset: int = 0) -> Path:
    """A file shaped like LabHC/bias_in_bios: hard_text, profession (index), gender."""
    rows = [
        {"hard_text": f"bio {offset + i} of profession {p}", "profession": p, "gender": i % 2}
        for p, n in counts.items()
        for i in range(n)
    ]
    pd.DataFrame(rows).to_parquet(path)
    return path


def test_bios10_keeps_the_ten_most_frequent_occupations_of_train(tmp_path: Path) -> None:
    # 12 professions; 25 (pastor) and 3 (chiropractor) are the two rarest in train and must go.
    train_counts = {p: 30 + p for p in (0, 1, 2, 4, 5, 6, 13, 19, 21, 26)} | {16: 5, 3: 4}
    files = {
        "train": _bios_file(tmp_path / "train.parquet", train_counts),
        "dev": _bios_file(tmp_path / "dev.parquet", {0: 2, 3: 9, 26: 1}, offset=1000),
        "test": _bios_file(tmp_path / "test.parquet", {16: 3, 21: 2}, offset=2000),
    }
    train = load_dataset("bios10", data_files=files)
    assert train.class_names == [
        "accountant", "architect", "attorney", "comedian", "composer", "dentist", "nurse", "physician",
        "professor", "teacher",
    ]  # fmt: skip
    assert len(train) == sum(train_counts.values()) - 9
    assert np.bincount(train.labels).tolist() == [30, 31, 32, 34, 35, 36, 43, 49, 51, 56]
    validation = load_dataset("bios10", "validation", data_files=files)  # the hub calls it "dev"
    assert validation.labels.tolist() == [0, 0, 9] and validation.class_names == train.class_names
    test = load_dataset("bias_in_bios_10", split="test", data_files=files)  # an alias
    assert test.labels.tolist() == [8, 8] and test.name == "bios10"
    assert len(load_dataset("bios10", "all", data_files=files)) == len(train) + 3 + 2


def test_tweet_eval_emotion_keeps_every_class(tmp_path: Path) -> None:
    path = tmp_path / "emotion.csv"
    pd.DataFrame({"text": ["grr", "yay", "hope", "sigh", "yay!"], "label": [0, 1, 2, 3, 1]}).to_csv(
        path, index=False
    )
    data = load_dataset("tweet_eval_emotion", data_files=path)
    assert data.class_names == ["anger", "joy", "optimism", "sadness"]
    assert data.labels.tolist() == [0, 1, 2, 3, 1]
    assert DATASET_RECIPES.get("tweet_eval/emotion").config == "emotion"


def test_recipe_file_without_the_hub_columns(tmp_path: Path) -> None:
    path = tmp_path / "bios.csv"
    pd.DataFrame({"text": ["a"], "label": [0]}).to_csv(path, index=False)
    with pytest.raises(InvalidParameterError, match=r"'data_files' parameter.*'hard_text' and 'profession'"):
        load_dataset("bios10", data_files=path)


def test_recipe_without_datasets_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "datasets", None)  # as if 'datasets' were not installed
    with pytest.raises(MissingDependencyError) as caught:
        load_dataset("tweet_eval_emotion")
    message = str(caught.value)
    assert "pip install 'xaimetrics[hub]'" in message
    assert "datasets.load_dataset('cardiffnlp/tweet_eval', 'emotion')" in message and "data_files=" in message


def test_recipe_offline_and_not_downloaded_says_what_to_download(tmp_path: Path) -> None:
    pytest.importorskip("datasets")
    code = "from xaimetrics.data import load_dataset\nload_dataset('bios10')"
    env = {**os.environ, "PYTHONPATH": str(SRC), "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert result.returncode != 0
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("xaimetrics.exceptions.AssetError: The dataset recipe 'bios10' could not load")
    assert "datasets.load_dataset('LabHC/bias_in_bios')" in last and "HF_HUB_OFFLINE=1" in last
