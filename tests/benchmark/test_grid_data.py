"""Grids on a user's own file (issue 23): TOML keys for the columns, checks before the run, case-insensitive method
names with suggestions, TOML errors with their file, line and column."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from toy_grid import toy_dataset, toy_model

from xaimetrics.benchmark import Grid, Providers, ResultsStore, load_grid, run_grid
from xaimetrics.exceptions import InvalidParameterError


def _tweets(path: Path) -> Path:
    """The toy topic texts (350) in a CSV with columns nobody guesses: Content (text) and Topic (class name)."""
    texts, names = [], []
    for split in ("train", "test"):
        data = toy_dataset(split)
        texts += data.texts
        names += [data.class_names[i] for i in data.labels]
    pd.DataFrame({"Id": range(len(texts)), "Content": texts, "Topic": names}).to_csv(path, index=False)
    return path


def _toml(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_a_grid_runs_on_a_csv_with_any_column_names(tmp_path: Path) -> None:
    data = _tweets(tmp_path / "tweets.csv")
    grid_file = _toml(
        tmp_path / "grid.toml",
        f'datasets = ["{data}"]\nmodels = ["toy"]\nmethods = ["pca", "NoExplanation"]\n'
        'text_column = "Content"\nlabel_column = "Topic"\nprompt_types = ["NE2", "E2"]\nseeds = [0]\n'
        'simulators = ["perfect"]\nn_concepts = { pca = 3 }\nn_lp = 6\nn_ep = 6\nn_fit = 100\nbalance = "relaxed"\n',
    )
    grid = load_grid(grid_file, extra_models=("toy",))
    assert grid.methods == ("PCA", "NoExplanation") and grid.n_concepts == {"PCA": 3}  # registry spelling
    assert grid.dataset_options() == {"text_column": "Content", "label_column": "Topic"}
    assert grid.to_dict()["text_column"] == "Content"
    summary = run_grid(
        grid, tmp_path / "r.sqlite", providers=Providers(models={"toy": toy_model}), progress=False
    )
    assert summary.failed == 0
    with ResultsStore(tmp_path / "r.sqlite") as store:
        frame = store.to_frame()
    assert set(frame["dataset"]) == {str(data)} and len(frame) == 2
    assert (
        frame.loc[frame["method"] == "PCA", "score"] == 1.0
    ).all()  # the perfect simulator, f's predictions


def test_bad_files_stop_the_grid_before_the_run(tmp_path: Path) -> None:
    missing = tmp_path / "tweetz.csv"
    with pytest.raises(InvalidParameterError, match=rf"'{missing}' was not found"):
        Grid(datasets=(str(missing),), simulators=("perfect",))
    data = _tweets(tmp_path / "tweets.csv")
    with pytest.raises(InvalidParameterError, match=r"'text_column'.*columns are Id, Content, Topic"):
        Grid(datasets=(str(data),), simulators=("perfect",))
    one = tmp_path / "one.csv"
    pd.DataFrame({"Content": ["a", "b", "c"], "Topic": ["x", "x", "x"]}).to_csv(one, index=False)
    with pytest.raises(
        InvalidParameterError, match=r"label column 'Topic' of .*one\.csv holds one class \('x'\)"
    ):
        Grid(datasets=(str(one),), simulators=("perfect",), text_column="Content", label_column="Topic")
    with pytest.raises(InvalidParameterError, match=r"'encoding' parameter of Grid.*Got utf-9"):
        Grid(simulators=("perfect",), encoding="utf-9")


def test_method_names_are_case_insensitive_with_suggestions(tmp_path: Path) -> None:
    grid = Grid(
        methods=("nmf", "pca", "noexplanation"), simulators=("perfect",), extractor_options={"nmf": {}}
    )
    assert grid.methods == ("NMF", "PCA", "NoExplanation") and grid.extractor_options == {"NMF": {}}
    with pytest.raises(
        InvalidParameterError, match=r"'methods' parameter of Grid.*Got NFM\. Did you mean 'NMF'\?"
    ):
        Grid(methods=("NFM",), simulators=("perfect",))
    with pytest.raises(InvalidParameterError, match=r"'methods'.*without duplicates"):
        Grid(methods=("NMF", "nmf"), simulators=("perfect",))
    with pytest.raises(InvalidParameterError, match=r"'models' parameter of Grid.*Did you mean 'minilm\+'\?"):
        Grid(models=("minlm+",), simulators=("perfect",))
    with pytest.raises(InvalidParameterError, match=r"\['text_colum'\]\. Did you mean 'text_column'\?"):
        load_grid(_toml(tmp_path / "g.toml", 'text_colum = "Content"\n'))


def test_a_toml_syntax_error_shows_the_file_line_and_column(tmp_path: Path) -> None:
    path = _toml(tmp_path / "grid.toml", 'datasets = ["bbc_news"]\nseeds = [0, 1\nmethods = ["NMF"]\n')
    with pytest.raises(InvalidParameterError) as caught:
        load_grid(path)
    message = str(caught.value)
    assert f"The grid file '{path}' is not valid TOML" in message
    assert "(at line 3, column 1)" in message  # never cut before the position
    with pytest.raises(InvalidParameterError, match=r"File not found: '.*nogrid\.toml'"):
        load_grid(tmp_path / "nogrid.toml")
