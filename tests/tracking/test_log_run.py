"""An interpretability report's metrics through the one tracking path (``xaimetrics.tracking.log_run``), as
``xaimetrics representation --mlflow-uri/--wandb`` logs them: MLflow with a local file store, W&B offline."""

from __future__ import annotations

import pytest

from xaimetrics.exceptions import MissingDependencyError
from xaimetrics.representation import InterpretabilityReport, composite_score
from xaimetrics.tracking import MLflowTracker, WandbTracker, log_run


def test_mlflow_local_store_receives_the_report_metrics(tmp_path, monkeypatch):
    mlflow = pytest.importorskip("mlflow")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # MLflow 3 keeps the file store behind this switch
    uri = (tmp_path / "mlruns").as_uri()
    report = InterpretabilityReport(model="m", version="0.2.0", composite=composite_score(stability=0.7))
    paths = report.save(tmp_path / "report")
    metrics = {**report.metrics(), "agreement.alpha": float("nan")}
    run_id = log_run(
        metrics, MLflowTracker(uri, experiment="xaimetrics-interpretability"), run_name="interpretability-0.2.0",
        params={"version": "0.2.0"}, tags={"model_version": "0.2.0"}, artifacts=[paths["markdown"]],
    )  # fmt: skip
    run = mlflow.tracking.MlflowClient(tracking_uri=uri).get_run(run_id)
    assert run.data.metrics == {"composite.score": 0.7}  # NaN is not logged
    assert run.data.params["version"] == "0.2.0" and run.data.tags["model_version"] == "0.2.0"
    artifacts = mlflow.tracking.MlflowClient(tracking_uri=uri).list_artifacts(run_id)
    assert [a.path for a in artifacts] == ["interpretability.md"]


def test_wandb_offline_run(tmp_path, monkeypatch):
    pytest.importorskip("wandb")
    monkeypatch.setenv("WANDB_SILENT", "true")
    run_id = log_run(
        {"coherence.mean": 0.41}, WandbTracker(directory=tmp_path), run_name="interpretability-0.2.0"
    )
    assert run_id
    assert list((tmp_path / "wandb").glob(f"offline-run-*-{run_id}"))


def test_missing_tracker_names_the_extra(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_mlflow(name, *args, **kwargs):
        if name == "mlflow":
            raise ImportError("no mlflow")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_mlflow)
    monkeypatch.delitem(__import__("sys").modules, "mlflow", raising=False)
    with pytest.raises(MissingDependencyError, match=r"pip install 'xaimetrics\[tracking\]'"):
        log_run({"a": 1.0}, run_name="r")
