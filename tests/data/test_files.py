"""load_dataset on the user's files (CSV, TSV, JSON Lines, Parquet) and on Hugging Face configurations."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from xaimetrics.data import load_dataset, read_table
from xaimetrics.exceptions import InvalidParameterError

ROWS = [(f"review number {i} is {'good' if i % 3 else 'bad'}", "pos" if i % 3 else "neg") for i in range(60)]


def _frame() -> pd.DataFrame:
    return pd.DataFrame(
        {"id": range(len(ROWS)), "review": [t for t, _ in ROWS], "stars": [s for _, s in ROWS]}
    )


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl", ".json", ".parquet", ".csv.gz"])
def test_every_format_reads_the_same_table(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"reviews{suffix}"
    frame = _frame()
    if suffix.startswith(".csv"):
        frame.to_csv(path, index=False)
    elif suffix == ".tsv":
        frame.to_csv(path, sep="\t", index=False)
    elif suffix == ".jsonl":
        frame.to_json(path, orient="records", lines=True)
    elif suffix == ".json":
        path.write_text(json.dumps(frame.to_dict(orient="records")), encoding="utf-8")
    else:
        frame.to_parquet(path)
    assert read_table(path)["review"].tolist() == frame["review"].tolist()
    data = load_dataset(path, "all", text_column="review", label_column="stars")
    assert data.class_names == ["neg", "pos"]  # string labels, sorted
    assert data.texts == frame["review"].tolist()
    assert data.labels.tolist() == [int(s == "pos") for s in frame["stars"]]
    assert data.name == "reviews" and data.info["text_column"] == "review"


def test_a_single_file_is_split_like_the_offline_datasets(tmp_path: Path) -> None:
    path = tmp_path / "reviews.csv"
    _frame().to_csv(path, index=False)
    kwargs = {"text_column": "review", "label_column": "stars", "class_names": ["pos", "neg"]}
    parts = {s: load_dataset(path, s, test_fraction=0.2, **kwargs) for s in ("train", "validation", "test")}
    assert sum(len(p) for p in parts.values()) == len(ROWS)
    assert not set(parts["train"].texts) & set(parts["test"].texts)
    assert np.bincount(parts["test"].labels).tolist() == [8, 4]  # 40 pos, 20 neg: 20% of each
    assert parts["test"].class_names == ["pos", "neg"]  # class_names fixes the order
    assert load_dataset(path, "test", test_fraction=0.2, **kwargs).texts == parts["test"].texts
    assert load_dataset(path, "test", test_fraction=0.2, seed=1, **kwargs).texts != parts["test"].texts


def test_default_columns_integer_labels_and_duplicates(tmp_path: Path) -> None:
    path = tmp_path / "data.csv"
    pd.DataFrame({"text": ["a", "b", "a", "c"], "label": [0, 2, 0, 1]}).to_csv(path, index=False)
    data = load_dataset(path, split="all")
    assert data.texts == ["a", "b", "c"] and data.labels.tolist() == [0, 2, 1]
    assert data.class_names == ["0", "1", "2"] and data.info["duplicates_removed"] == 1


def test_labels_lose_surrounding_spaces_and_conflicting_copies_are_said(tmp_path: Path) -> None:
    path = tmp_path / "reuters.csv"
    frame = pd.DataFrame(
        {
            "body": ["oil up", "wheat down", "oil up", "gold flat"],
            "category": ["earn ", "acq", "acq", " earn"],
        }
    )
    frame.to_csv(path, index=False)
    with pytest.warns(UserWarning) as caught:
        data = load_dataset(path, split="all", text_column="body", label_column="category")
    assert data.class_names == ["acq", "earn"] and data.labels.tolist() == [1, 0, 1]
    messages = " ".join(str(w.message) for w in caught)
    assert "2 label value(s) had surrounding spaces" in messages and "' earn'" in messages
    assert "1 text(s) appear more than once with different labels" in messages and "'oil up'" in messages


def test_a_control_character_in_a_label_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "nul.jsonl"
    path.write_text('{"text": "a", "label": "x\\u0000y"}\n{"text": "b", "label": "z"}\n')
    with pytest.raises(InvalidParameterError, match=r"label_column.*without control characters.*'x\\x00y'"):
        load_dataset(path, split="all")


def test_a_mapping_of_split_files_shares_one_class_order(tmp_path: Path) -> None:
    train, test = tmp_path / "train.jsonl", tmp_path / "test.jsonl"
    pd.DataFrame({"text": ["x", "y", "z", "w"], "label": ["b", "c", "b", "c"]}).to_json(
        train, orient="records", lines=True
    )
    pd.DataFrame({"text": ["u", "v"], "label": ["a", "c"]}).to_json(test, orient="records", lines=True)
    files = {"train": train, "test": test}
    got_test = load_dataset(files, "test")
    got_train = load_dataset(files, "train")
    assert got_test.class_names == got_train.class_names == ["a", "b", "c"]
    assert got_test.labels.tolist() == [0, 2] and got_train.labels.tolist() == [1, 2, 1, 2]
    assert len(load_dataset(files, "all")) == 6
    with pytest.raises(InvalidParameterError, match=r"'split' parameter.*one of the given splits"):
        load_dataset({"test": test}, "validation")


def test_file_errors_name_the_argument_and_the_columns(tmp_path: Path) -> None:
    path = tmp_path / "odd.csv"
    pd.DataFrame({"body": ["a", "b"], "y": [0, 1]}).to_csv(path, index=False)
    with pytest.raises(
        InvalidParameterError, match=r"'text_column' parameter.*columns are body, y.*text_column="
    ):
        load_dataset(path)
    with pytest.raises(
        InvalidParameterError, match=r"'label_column' parameter.*a column of odd.csv \(body, y\)"
    ):
        load_dataset(path, text_column="body", label_column="stars")
    with pytest.raises(InvalidParameterError, match=r"missing\.csv' was not found"):
        load_dataset(tmp_path / "missing.csv")
    with pytest.raises(
        InvalidParameterError,
        match=r"'config' parameter.*Got emotion\. A second positional.*'train', 'validation'",
    ):
        load_dataset(path, "emotion", text_column="body", label_column="y")
    with pytest.raises(InvalidParameterError, match=r"'class_names' parameter.*Labels not in it: 'maybe'"):
        missing = tmp_path / "three.csv"
        pd.DataFrame({"text": ["a", "b", "c"], "label": ["yes", "no", "maybe"]}).to_csv(missing, index=False)
        load_dataset(missing, class_names=["no", "yes"])
    blank = tmp_path / "blank.csv"
    blank.write_text("text,label\na,0\nb,\n", encoding="utf-8")
    with pytest.raises(
        InvalidParameterError, match=r"blank\.csv' has 1 empty label cell in column 'label' \(line 3\)"
    ):
        load_dataset(blank)


def _hub_folder(root: Path) -> Path:
    """A local Hugging Face dataset folder with two configurations, declared in its README."""
    (root / "emotion").mkdir(parents=True)
    (root / "sentiment").mkdir()
    (root / "README.md").write_text(
        "---\nconfigs:\n- config_name: emotion\n  data_files:\n  - split: train\n    path: emotion/train.csv\n"
        "  - split: test\n    path: emotion/test.csv\n- config_name: sentiment\n  data_files:\n"
        "  - split: train\n    path: sentiment/train.csv\n---\n",
        encoding="utf-8",
    )
    pd.DataFrame({"text": ["happy day", "so sad", "angry now"], "label": ["joy", "sadness", "anger"]}).to_csv(
        root / "emotion" / "train.csv", index=False
    )
    pd.DataFrame({"text": ["glad", "crying"], "label": ["joy", "sadness"]}).to_csv(
        root / "emotion" / "test.csv", index=False
    )
    pd.DataFrame({"text": ["good", "bad"], "label": [1, 0]}).to_csv(
        root / "sentiment" / "train.csv", index=False
    )
    return root


def test_hugging_face_configurations_pass_without_collision(tmp_path: Path) -> None:
    pytest.importorskip("datasets")
    folder = str(_hub_folder(tmp_path / "tweets"))
    cache = {"cache_dir": str(tmp_path / "cache")}
    test = load_dataset(folder, "emotion", split="test", **cache)  # the positional form of datasets
    assert test.texts == ["glad", "crying"] and test.info["config"] == "emotion"
    assert test.class_names == ["anger", "joy", "sadness"]  # over every split, not only test
    assert test.labels.tolist() == [1, 2] and test.name == "tweets"
    by_keyword = load_dataset(folder, name="sentiment", **cache)  # Hugging Face's own keyword for it
    assert by_keyword.texts == ["good", "bad"] and by_keyword.labels.tolist() == [1, 0]
    assert load_dataset(folder, config="sentiment", split="all", **cache).texts == by_keyword.texts


def test_a_dataset_is_named_first_not_by_the_name_keyword() -> None:
    with pytest.raises(InvalidParameterError, match=r"'path' parameter of load_dataset must be given"):
        load_dataset(name="bbc_news", split="test")
