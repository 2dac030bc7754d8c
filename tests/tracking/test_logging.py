"""Tracking ConSim grids, fidelity runs and fine-tuning to a local MLflow file store (skipped without mlflow)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from xaimetrics.benchmark import ResultsStore
from xaimetrics.exceptions import InvalidParameterError, MissingDependencyError
from xaimetrics.fidelity import Deletion
from xaimetrics.tracking import MLflowTracker, WandbTracker, log_consim_grid, log_fidelity
from xaimetrics.tracking._logging import consim_grid_metrics

ROWS = [
    {"dataset": "bbc_news", "model": "minilm+", "method": "NMF", "n_concepts": 10, "interpretation": "top_words",
     "prompt_type": "E3", "anonymized": False, "seed": 0, "simulator": "local", "phase": "test", "score": 0.6},
    {"dataset": "bbc_news", "model": "minilm+", "method": "NMF", "n_concepts": 10, "interpretation": "top_words",
     "prompt_type": "E3", "anonymized": False, "seed": 1, "simulator": "local", "phase": "test", "score": 0.8},
    {"dataset": "bbc_news", "model": "minilm+", "method": "NoExplanation", "n_concepts": 0, "interpretation": "",
     "prompt_type": "NE2", "anonymized": True, "seed": 0, "simulator": "local", "phase": "test", "score": 0.4},
    {"dataset": "bbc_news", "model": "minilm+", "method": "NMF", "n_concepts": 10, "interpretation": "top_words",
     "prompt_type": "U1", "anonymized": False, "seed": 0, "simulator": "local", "phase": "test", "score": 0.95,
     "is_upper_bound": True},
    {"dataset": "bbc_news", "model": "minilm+", "method": "ICA", "n_concepts": 10, "interpretation": "top_words",
     "prompt_type": "E3", "anonymized": False, "seed": 0, "simulator": "local", "phase": "test", "score": None,
     "error": "SimulatorError: timed out"},
]  # fmt: skip


@pytest.fixture
def mlflow_uri(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    pytest.importorskip("mlflow")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # MLflow 3 keeps the file store behind this switch
    return (tmp_path / "mlruns").as_uri()


def _client(uri: str):
    import mlflow

    return mlflow.tracking.MlflowClient(tracking_uri=uri)


def test_consim_grid_metrics_from_rows() -> None:
    metrics = consim_grid_metrics(pd.DataFrame(ROWS))
    assert metrics["settings"] == 5 and metrics["failed_settings"] == 1
    assert metrics["score/NMF/E3"] == pytest.approx(0.7) and metrics["score/NoExplanation/NE2-a"] == 0.4
    assert (
        metrics["upper_bound/NMF"] == 0.95 and "score/NMF/U1" not in metrics
    )  # U1 is a ceiling, not a score
    assert metrics["score.mean"] == pytest.approx(0.6)  # 0.6, 0.8, 0.4 (U1 and the failed setting left out)
    with pytest.raises(InvalidParameterError, match=r"'results' parameter of log_consim_grid"):
        consim_grid_metrics(pd.DataFrame({"x": [1]}))


def test_a_results_store_is_logged_as_one_mlflow_run(tmp_path: Path, mlflow_uri: str) -> None:
    store_path = tmp_path / "grid.sqlite"
    with ResultsStore(store_path) as store:
        for i, row in enumerate(ROWS):
            store.add(f"key{i}", row)
    report = tmp_path / "report.md"
    report.write_text("# ConSim report\n")
    tracker = MLflowTracker(mlflow_uri, experiment="grids")
    with pytest.raises(InvalidParameterError, match=r"Open a store's file first"):
        log_consim_grid(store_path, tracker)  # a path: tracking opens no store (it sits below benchmark)
    with ResultsStore(store_path, read_only=True) as store:
        run_id = log_consim_grid(store, tracker, run_name="bbc", params={"note": "smoke"}, artifacts=[report])
    run = _client(mlflow_uri).get_run(run_id)
    assert run.info.run_name == "bbc" and run.data.tags["kind"] == "consim-grid"
    assert run.data.metrics == consim_grid_metrics(pd.DataFrame(ROWS)) | {"failed_settings": 1.0}
    assert run.data.params["dataset"] == "bbc_news" and run.data.params["n_seeds"] == "2"
    assert run.data.params["simulator"] == "local" and run.data.params["note"] == "smoke"
    names = {a.path for a in _client(mlflow_uri).list_artifacts(run_id)}
    assert names == {"consim_results.csv", "report.md"}
    csv = Path(_client(mlflow_uri).download_artifacts(run_id, "consim_results.csv", str(tmp_path)))
    assert len(pd.read_csv(csv)) == 5


def test_fidelity_scores_and_curves(mlflow_uri: str) -> None:
    model = torch.nn.Linear(4, 1, bias=False)
    model.weight.data.copy_(torch.tensor([[4.0, 3.0, 2.0, 1.0]]))
    inputs = torch.ones(3, 4)
    metric = Deletion(model, inputs, steps=-1)
    good, bad = torch.tensor([[4.0, 3.0, 2.0, 1.0]] * 3), torch.tensor([[1.0, 2.0, 3.0, 4.0]] * 3)
    curves = {"saliency": metric.curves(good), "reversed": metric.curves(bad)}
    scores = {name: {"deletion": float(c.auc.mean())} for name, c in curves.items()}
    run_id = log_fidelity(scores, MLflowTracker(mlflow_uri), params={"model": "linear"}, curves=curves)
    client = _client(mlflow_uri)
    run = client.get_run(run_id)
    assert run.data.metrics["fidelity/deletion/saliency"] < run.data.metrics["fidelity/deletion/reversed"]
    assert run.data.metrics["auc/saliency"] == pytest.approx(scores["saliency"]["deletion"])
    history = sorted(client.get_metric_history(run_id, "curve/saliency"), key=lambda m: m.step)
    assert [m.step for m in history] == list(range(101))
    assert history[0].value == pytest.approx(10.0) and history[-1].value == pytest.approx(0.0)
    _, mean = curves["saliency"].mean_curve(101)
    np.testing.assert_allclose([m.value for m in history], mean, rtol=1e-6)


def test_step_logger_records_a_loss_history(mlflow_uri: str) -> None:
    tracker = MLflowTracker(mlflow_uri, experiment="finetune")
    with tracker.run("training", {"lr": 1e-3}):
        log = tracker.step_logger("loss")  # e.g. finetune(..., callback=log)
        for step, loss in enumerate([0.9, 0.7, 0.4], start=1):
            log(step, loss)
        tracker.log_metrics({"test_accuracy": 0.8, "undefined": float("nan")})
    run = _client(mlflow_uri).get_run(tracker.run_id)
    assert run.data.metrics == {"loss": 0.4, "test_accuracy": 0.8} and run.data.params["lr"] == "0.001"
    history = _client(mlflow_uri).get_metric_history(tracker.run_id, "loss")
    assert [(m.step, m.value) for m in sorted(history, key=lambda m: m.step)] == [
        (1, 0.9),
        (2, 0.7),
        (3, 0.4),
    ]


def test_wandb_offline_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("wandb")
    monkeypatch.setenv("WANDB_SILENT", "true")
    run_id = log_fidelity({"deletion": 0.3}, WandbTracker(directory=tmp_path))
    assert list((tmp_path / "wandb").glob(f"offline-run-*-{run_id}"))


def test_missing_mlflow_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mlflow", None)  # as if it were not installed
    with pytest.raises(MissingDependencyError, match=r"MLflowTracker.*pip install 'xaimetrics\[tracking\]'"):
        log_fidelity({"deletion": 0.3})
    with pytest.raises(InvalidParameterError, match=r"'tracker' parameter"):
        log_fidelity({"deletion": 0.3}, tracker="mlflow")  # type: ignore[arg-type]


def test_wandb_tracker_without_an_open_run_says_how_to_open_one() -> None:
    from xaimetrics.exceptions import TrackingError

    with pytest.raises(
        TrackingError, match=r"WandbTracker has no open run\. Open one first: 'with tracker\.run"
    ):
        WandbTracker().log_metrics({"loss": 0.5})
