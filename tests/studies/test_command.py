"""``xaimetrics study ...`` in process: create (from a grid, from files), invite, export, simulate, report."""

from __future__ import annotations

import dataclasses
import json
import re

import numpy as np
import pytest

from fake_openai_server import fake_openai_server  # noqa: F401  (fixture)
from xaimetrics import cli
from xaimetrics.representation import analyze_ratings
from xaimetrics.studies import StudyStore, load_study
from xaimetrics.studies._config import load_config

GRID = """
datasets = ["toy"]
models = ["toy"]
methods = ["NMF", "PCA", "NoExplanation"]
n_concepts = 3
prompt_types = ["NE2-a", "E2-a"]
seeds = [0, 1, 2]
simulators = ["oracle"]
n_lp = 6
n_ep = 6
n_fit = 200
"""


def _run(argv: list[str], capsys) -> tuple[int, str]:
    code = cli.main(argv)
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_likert_study_with_the_seed_command_shape(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "grid.toml").write_text(GRID)
    code, out = _run(["study", "create", "likert", "--grid", "grid.toml", "--providers", "toy_grid:PROVIDERS",
                      "--method", "NMF", "--n-examples", "50", "--output", "annotations/study.json"], capsys)  # fmt: skip
    assert code == 0, out
    study = load_study("annotations/study.json")
    assert len(study.items) == 50 and len(study.dimensions) == 3 and study.n_annotators == 3
    config = load_config("annotations/study.toml")
    assert (
        config.study.resolve() == (tmp_path / "annotations/study.json").resolve()
        and config.host == "127.0.0.1"
    )
    code, out = _run(["study", "invite", "annotations/study.toml", "--count", "3"], capsys)
    links = re.findall(r"http://127\.0\.0\.1:8765/s/(\S+)", out)
    assert code == 0 and len(links) == 3
    with StudyStore(config.database, study) as store:
        for a, token in enumerate(links):
            participant = store.participant(token)
            for screen in store.screens(participant):
                if screen.kind == "rate":
                    store.record(participant, screen.index, {str(d): 1 + (a + d) % 5 for d in range(3)})
    code, out = _run(
        ["study", "export", "annotations/study.toml", "--output", "annotations/ratings.json"], capsys
    )
    assert code == 0, out
    cube = np.array(json.loads((tmp_path / "annotations/ratings.json").read_text()), dtype=float)
    assert cube.shape == (50, 3, 3) and np.isfinite(cube).all()
    assert cube[:, :, 0].tolist() == [[1, 2, 3]] * 50
    meta = json.loads((tmp_path / "annotations/ratings.meta.json").read_text())
    assert meta["annotators"] == ["P1", "P2", "P3"]
    # the interpretability command reads the export directly
    assert analyze_ratings(cube).n_annotators == 3
    assert (
        _run(["study", "export", "annotations/study.toml", "--output", "annotations/ratings.csv"], capsys)[0]
        == 0
    )
    assert (
        (tmp_path / "annotations/ratings.csv").read_text().startswith("example,annotator,dimension,rating\n")
    )


def test_a_study_from_command_line_choices_without_a_grid_file(tmp_path, capsys):
    code, out = _run(["study", "create", "likert", "--dataset", "toy", "--model", "toy", "--method", "PCA",
                      "--n-concepts", "2", "--n-examples", "12", "--providers", "toy_grid:PROVIDERS",
                      "--output", str(tmp_path / "likert.json")], capsys)  # fmt: skip
    assert code == 0, out
    assert [d.name for d in load_study(tmp_path / "likert.json").dimensions] == ["Concept 0", "Concept 1"]
    code, out = _run(["study", "create", "simulatability", "--dataset", "toy", "--model", "toy", "--methods", "ICA",
                      "NoExplanation", "--prompt-types", "NE1", "E3", "--seeds", "0", "1", "--n-concepts", "3",
                      "--n-lp", "6", "--n-ep", "6", "--providers", "toy_grid:PROVIDERS",
                      "--output", str(tmp_path / "consim.json")], capsys)  # fmt: skip
    assert code == 0, out
    assert sorted(a.id for a in load_study(tmp_path / "consim.json").arms) == [
        "ICA-3/E3/seed0", "ICA-3/E3/seed1", "NoExplanation/NE1/seed0", "NoExplanation/NE1/seed1",
    ]  # fmt: skip


def test_likert_study_from_items_and_dimensions_files(tmp_path, capsys):
    items = tmp_path / "items.jsonl"
    items.write_text("\n".join(json.dumps({"text": f"text {i}", "values": [i, -i]}) for i in range(8)))
    dimensions = tmp_path / "dimensions.json"
    dimensions.write_text(
        json.dumps([{"name": "A", "property": "a"}, {"name": "B", "property": "b", "low": "x"}])
    )
    code, out = _run(["study", "create", "likert", "--items", str(items), "--dimensions", str(dimensions),
                      "--n-examples", "5", "--output", str(tmp_path / "s.json")], capsys)  # fmt: skip
    assert code == 0, out
    study = load_study(tmp_path / "s.json")
    assert len(study.items) == 5 and [d.low for d in study.dimensions] == ["", "x"]
    code, out = _run(
        ["study", "create", "likert", "--items", str(items), "--output", str(tmp_path / "t.json")], capsys
    )
    assert code == 1 and "'--items'" in out and "--dimensions" in out


def test_simulatability_study_simulate_export_and_report(tmp_path, capsys, fake_openai_server):  # noqa: F811
    (tmp_path / "grid.toml").write_text(GRID)
    bundle = tmp_path / "studies" / "consim.json"
    code, out = _run(["study", "create", "simulatability", "--grid", str(tmp_path / "grid.toml"), "--providers",
                      "toy_grid:PROVIDERS", "--arms-per-participant", "3", "--output", str(bundle)], capsys)  # fmt: skip
    assert code == 0 and "9 arms" in out, out
    config = bundle.with_suffix(".toml")
    study = load_study(bundle)
    code, out = _run(
        ["study", "invite", str(config), "--count", "2", "--base-url", "https://study.example"], capsys
    )
    tokens = re.findall(r"https://study\.example/s/(\S+)", out)
    assert code == 0 and len(tokens) == 2
    with StudyStore(bundle.with_suffix(".sqlite"), study) as store:
        for token in tokens:
            participant = store.participant(token)
            for screen in store.screens(participant):
                store.record(participant, screen.index, {"": 0 if screen.kind == "question" else None})

    def class_zero(messages):  # an LLM that answers Class_0 for every sample
        user = messages[-1]["content"]
        return "\n".join(f"Sample_{i}: Class_0" for i in re.findall(r"Sample_(\d+)", user))

    server = fake_openai_server(class_zero)
    store_path = tmp_path / "results.sqlite"
    code, out = _run(["study", "simulate", str(config), "--simulator", "openai:fake", "--base-url", server.base_url,
                      "--results-store", str(store_path)], capsys)  # fmt: skip
    assert code == 0 and "9 rows written" in out, out
    code, out = _run(["study", "export", str(config), "--results-store", str(store_path),
                      "--output", str(tmp_path / "answers.csv")], capsys)  # fmt: skip
    assert code == 0 and "6 human rows written" in out, out
    assert len((tmp_path / "answers.csv").read_text().splitlines()) == 1 + 2 * (
        1 + 3 + 18
    )  # header; instructions, 3 learn, 18 questions
    code, out = _run(
        ["study", "report", "--results-store", str(store_path), "--output", str(tmp_path / "report")], capsys
    )
    assert code == 0, out
    text = (tmp_path / "report" / "agreement.md").read_text()
    assert text.startswith("# Does the LLM rank explanations like people?") and "openai:fake" in text
    report = json.loads((tmp_path / "report" / "agreement.json").read_text())
    (samples,) = report["samples"]
    assert samples["agreement"] == 1.0  # both always answered the first class
    assert samples["pairs"] == 36


def test_user_mistakes_are_one_line_errors(tmp_path, capsys):
    code, out = _run(["study", "create", "simulatability", "--output", str(tmp_path / "s.txt")], capsys)
    assert code == 1 and "'--output'" in out and "Traceback" not in out
    code, out = _run(["study", "create", "simulatability", "--output", str(tmp_path / "s.json")], capsys)
    assert code == 1 and "'--grid'" in out
    code, out = _run(["study", "serve", str(tmp_path / "missing.toml")], capsys)
    assert code == 1 and "STUDY.toml" in out
    (tmp_path / "bad.toml").write_text('study = "s.json"\nport = "80"\n')
    code, out = _run(["study", "invite", str(tmp_path / "bad.toml")], capsys)
    assert code == 1 and "'port'" in out
    code, out = _run(["study", "report", "--results-store", str(tmp_path / "none.sqlite")], capsys)
    assert code == 1 and "'--results-store'" in out


def test_the_selection_options_of_the_python_api_are_on_the_command_line(tmp_path, capsys):
    (tmp_path / "grid.toml").write_text(GRID)
    base = ["study", "create", "simulatability", "--grid", str(tmp_path / "grid.toml"), "--providers",
            "toy_grid:PROVIDERS", "--methods", "NoExplanation", "--prompt-types", "NE2-a", "--seeds", "0"]  # fmt: skip
    # 120 of the 150 toy texts, half of them predicted wrongly: the toy model is too good for "strict"
    code, out = _run([*base, "--n-lp", "60", "--n-ep", "60", "--output", str(tmp_path / "a.json")], capsys)
    assert code == 1 and "Traceback" not in out and len(out.strip().splitlines()) == 1
    assert "balance='relaxed'" in out and "--balance relaxed" in out  # the advice can be followed here
    code, out = _run([*base, "--n-lp", "60", "--n-ep", "60", "--balance", "relaxed",
                      "--output", str(tmp_path / "a.json")], capsys)  # fmt: skip
    assert code == 0, out
    study = load_study(tmp_path / "a.json")
    (samples,) = study.samples
    assert len(samples.lp) == 60 and len(samples.ep) == 60  # the grid file said 6 + 6
    # a pool that cannot hold the selection is refused from its labels, before the model reads it
    code, out = _run([*base, "--pool-size", "30", "--n-lp", "20", "--n-ep", "20",
                      "--output", str(tmp_path / "b.json")], capsys)  # fmt: skip
    assert code == 1 and "fewer than 40 texts" in out and "--pool-size" in out
    code, out = _run([*base, "--max-sample-chars", "12", "--output", str(tmp_path / "c.json")], capsys)
    assert code == 0 and load_study(tmp_path / "c.json").max_sample_chars == 12


def test_a_class_short_of_texts_is_refused_before_the_long_work():
    from toy_grid import PROVIDERS, toy_dataset

    from xaimetrics.benchmark import Grid
    from xaimetrics.exceptions import InvalidParameterError
    from xaimetrics.studies._from_grid import check_selection

    pool = toy_dataset("test")
    grid = Grid(datasets=("toy",), models=("toy",), methods=("NoExplanation",), prompt_types=("NE2",),
                simulators=("perfect",), n_lp=60, n_ep=60, **PROVIDERS.grid_extras())  # fmt: skip
    counts = np.bincount(pool.labels)
    check_selection(pool.labels, pool.class_names, grid, "toy")  # 40 per class: the labels allow it
    keep = np.flatnonzero((pool.labels != 0) | (np.cumsum(pool.labels == 0) <= 39))  # class 0: 39 texts
    with pytest.raises(
        InvalidParameterError, match=r"class 'world' has 39 texts, and each class needs at least 40"
    ):
        check_selection(pool.labels[keep], pool.class_names, grid, "toy")
    check_selection(pool.labels[keep], pool.class_names, dataclasses.replace(grid, balance="relaxed"), "toy")
    assert counts.tolist() == [54, 48, 48]


def test_study_create_writes_its_grid_and_the_report_compares_only_its_samples(tmp_path, capsys):
    """The reproduced case: a study with --n-lp 3 --n-ep 3 beside a benchmark run of the grid's 6 + 6."""
    from toy_grid import PROVIDERS

    from xaimetrics.benchmark import load_grid, run_grid

    (tmp_path / "grid.toml").write_text(GRID)
    bundle = tmp_path / "studies" / "consim.json"
    code, out = _run(["study", "create", "simulatability", "--grid", str(tmp_path / "grid.toml"), "--providers",
                      "toy_grid:PROVIDERS", "--n-lp", "3", "--n-ep", "3", "--balance", "relaxed", "--seeds", "0", "1",
                      "--arms-per-participant", "2", "--output", str(bundle)], capsys)  # fmt: skip
    written = bundle.with_suffix(".grid.toml")
    assert code == 0 and str(written) in out, out
    grid = load_grid(written, **PROVIDERS.grid_extras())
    assert (grid.n_lp, grid.n_ep, grid.balance, grid.seeds, grid.n_fit) == (3, 3, "relaxed", (0, 1), 200)
    assert grid.methods == ("NMF", "PCA", "NoExplanation") and grid.datasets == ("toy",)
    config = bundle.with_suffix(".toml")
    code, out = _run(["study", "invite", str(config), "--count", "3"], capsys)
    study = load_study(bundle)
    with StudyStore(bundle.with_suffix(".sqlite"), study) as store:
        for participant in store.participants():
            for screen in store.screens(participant):
                store.record(participant, screen.index, {"": 0 if screen.kind == "question" else None})
    # the benchmark on the grid's own 6 + 6 (run_grid: `benchmark run` on this toy grid fails in its report's
    # pipeline section, "Encountered all NA values", outside the studies)
    store_path = tmp_path / "bench" / "results.sqlite"
    run_grid(
        load_grid(tmp_path / "grid.toml", **PROVIDERS.grid_extras()),
        store_path,
        providers=PROVIDERS,
        progress=False,
    )
    assert _run(["study", "export", str(config), "--results-store", str(store_path)], capsys)[0] == 0
    report = ["study", "report", "--results-store", str(store_path), "--study", str(config),
              "--output", str(tmp_path / "report")]  # fmt: skip
    code, out = _run(report, capsys)
    assert code == 1 and "Traceback" not in out and len(out.strip().splitlines()) == 1, out
    assert "0 on the same samples" in out and f"benchmark run {written}" in out
    run_grid(grid, store_path, providers=PROVIDERS, progress=False)  # the study's grid: the people's samples
    code, out = _run(report, capsys)
    assert code == 0, out
    saved = json.loads((tmp_path / "report" / "agreement.json").read_text())
    (overlap,) = saved["overlap"]
    assert overlap["same_samples"] == overlap["human_settings"] == 6 and overlap["other_samples"] == 0
    assert saved["samples"][0]["pairs"] == 3 * 2 * 3  # people × arms × EP samples
    markdown = (tmp_path / "report" / "agreement.md").read_text()
    assert f"The study's grid: {written} (n_lp=3, n_ep=3, balance=relaxed" in markdown


def test_the_selection_is_checked_before_the_model_is_loaded(caplog):
    """`study create` on BBC News fine-tuned for 19 minutes before a selection error: the label counts, repeated
    texts left out, are checked before the model factory is called, and strict balance's needs are logged."""
    import logging

    from toy_grid import PROVIDERS

    from xaimetrics.benchmark import Grid, Providers
    from xaimetrics.exceptions import InvalidParameterError
    from xaimetrics.studies import simulatability_study_from_grid
    from xaimetrics.studies._from_grid import check_selection

    loaded = []

    def model(dataset):
        loaded.append(dataset)
        return PROVIDERS.models["toy"](dataset)

    providers = Providers(PROVIDERS.datasets, {"toy": model}, PROVIDERS.simulators)
    options = dict(datasets=("toy",), models=("toy",), methods=("NoExplanation",), prompt_types=("NE2",),
                   simulators=("perfect",), **providers.grid_extras())  # fmt: skip
    with pytest.raises(
        InvalidParameterError, match=r"class 'sports' has 48 texts, and each class needs at least 50"
    ):
        simulatability_study_from_grid(Grid(n_lp=75, n_ep=75, **options), providers)
    assert loaded == []  # refused from the labels: the model was never loaded
    caplog.set_level(logging.INFO, logger="xaimetrics.studies")
    study = simulatability_study_from_grid(Grid(n_lp=6, n_ep=6, **options), providers)
    assert loaded == ["toy"] and len(study.arms) == 3  # the grid's default seeds 0, 1, 2
    messages = [r.getMessage() for r in caplog.records if r.name == "xaimetrics.studies"]
    assert any(
        "needs 2 texts per class that the model predicts wrongly (6 of the pool's 150" in m for m in messages
    )
    assert messages.index(next(m for m in messages if "needs 2 texts" in m)) < messages.index(
        next(m for m in messages if m.startswith("study: the model 'toy'"))
    )
    # a repeated text is not counted (the selection never shows it twice): 3 distinct texts of class 'a'
    grid = Grid(n_lp=4, n_ep=4, **{**options, "datasets": ("d",), "extra_datasets": ("d",)})
    labels, texts = (
        [0, 0, 0, 0, 1, 1, 1, 1, 1],
        ["war", "War ", "vote", "tax", "goal", "race", "cup", "set", "net"],
    )
    check_selection(labels, ["a", "b"], grid, "d")  # 4 labels each: enough by the labels alone
    with pytest.raises(
        InvalidParameterError, match=r"class 'a' has 3 texts, and each class needs at least 4"
    ):
        check_selection(labels, ["a", "b"], grid, "d", texts=texts)
