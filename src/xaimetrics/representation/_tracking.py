"""Optional logging of interpretability metrics to experiment trackers (the document's "Continuous
Monitoring"): MLflow (extra ``tracking``, any tracking URI, e.g. a local ``file:`` store or SQLite) and
Weights & Biases (offline mode by default: nothing leaves the machine until ``wandb sync``)."""

from __future__ import annotations

import datetime as _dt
import math
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from xaimetrics._optional import import_optional

if TYPE_CHECKING:
    from xaimetrics.representation._report import InterpretabilityReport

__all__ = ["log_to_mlflow", "log_to_wandb"]


def _metrics_of(metrics: Mapping[str, float] | InterpretabilityReport) -> dict[str, float]:
    values = dict(metrics) if isinstance(metrics, Mapping) else metrics.metrics()
    # trackers reject NaN; an undefined metric is simply not logged
    return {name: float(v) for name, v in values.items() if v is not None and not math.isnan(float(v))}


def log_to_mlflow(
    metrics: Mapping[str, float] | InterpretabilityReport,
    *,
    version: str,
    tracking_uri: str | None = None,
    experiment: str = "xaimetrics-interpretability",
    run_name: str | None = None,
    artifacts: Sequence[str | os.PathLike[str]] = (),
) -> str:
    """Log the metrics (a ``{name: value}`` map or an :class:`InterpretabilityReport`) as one MLflow run.

    Args:
        metrics: the values; NaN values are skipped.
        version: the model version, logged as a parameter and a tag.
        tracking_uri: e.g. ``"sqlite:///mlflow.db"`` or ``"file:/path/mlruns"`` (MLflow 3 only accepts the
            file store with the environment variable ``MLFLOW_ALLOW_FILE_STORE=true``); default MLflow's own.
        experiment: experiment name (created if needed).
        run_name: run name (default ``interpretability-<version>``).
        artifacts: files to attach (e.g. the report's JSON, Markdown and HTML).

    Returns:
        The MLflow run id.
    """
    mlflow = import_optional("mlflow", extra="tracking", caller="log_to_mlflow")
    if tracking_uri is not None:
        mlflow.set_tracking_uri(tracking_uri)
    mlflow.set_experiment(experiment)
    with mlflow.start_run(run_name=run_name or f"interpretability-{version}") as run:
        mlflow.set_tag("model_version", version)
        mlflow.log_params({"version": version, "timestamp": _dt.datetime.now().isoformat(timespec="seconds")})
        mlflow.log_metrics(_metrics_of(metrics))
        for path in artifacts:
            mlflow.log_artifact(os.fspath(path))
        return str(run.info.run_id)


def log_to_wandb(
    metrics: Mapping[str, float] | InterpretabilityReport,
    *,
    version: str,
    project: str = "xaimetrics-interpretability",
    mode: str = "offline",
    directory: str | os.PathLike[str] | None = None,
    run_name: str | None = None,
) -> str:
    """Log the metrics as one Weights & Biases run (``mode="offline"`` by default) and return its id."""
    wandb = import_optional("wandb", extra="tracking", caller="log_to_wandb")
    run = wandb.init(
        project=project,
        mode=mode,
        dir=None if directory is None else os.fspath(directory),
        name=run_name or f"interpretability-{version}",
        config={"version": version},
        reinit=True,
    )
    try:
        run.log(
            {
                "version": version,
                "timestamp": _dt.datetime.now().isoformat(timespec="seconds"),
                **_metrics_of(metrics),
            }
        )
        return str(run.id)
    finally:
        run.finish()
