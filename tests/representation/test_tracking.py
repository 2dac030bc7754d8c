"""Optional trackers: MLflow with a local file store, W&B in offline mode (skipped when not installed)."""

from __future__ import annotations

import pytest

from xaimetrics.exceptions import MissingDependencyError
from xaimetrics.representation._tracking import log_to_mlflow, log_to_wandb


def test_mlflow_local_store_receives_the_metrics(tmp_path, monkeypatch):
    mlflow = pytest.importorskip("mlflow")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # MLflow 3 keeps the file store behind this switch
    uri = (tmp_path / "mlruns").as_uri()
    artifact = tmp_path / "report.md"
    artifact.write_text("# report\n")
    run_id = log_to_mlflow(
        {"coherence.mean": 0.41, "composite.score": 0.7, "agreement.alpha": float("nan")},
        version="0.2.0",
        tracking_uri=uri,
        artifacts=[artifact],
    )
    run = mlflow.tracking.MlflowClient(tracking_uri=uri).get_run(run_id)
    assert run.data.metrics == {"coherence.mean": 0.41, "composite.score": 0.7}  # NaN is not logged
    assert run.data.params["version"] == "0.2.0" and run.data.tags["model_version"] == "0.2.0"


def test_wandb_offline_run(tmp_path, monkeypatch):
    pytest.importorskip("wandb")
    monkeypatch.setenv("WANDB_SILENT", "true")
    run_id = log_to_wandb({"coherence.mean": 0.41}, version="0.2.0", directory=tmp_path)
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
        log_to_mlflow({"a": 1.0}, version="1")
