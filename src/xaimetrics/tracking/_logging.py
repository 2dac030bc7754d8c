"""Log ConSim grid results and fidelity runs to an experiment tracker (MLflow or W&B), one run each.

A toolkit below the families that produce the numbers: it reads them through two small protocols (:class:`Rows`,
anything with ``to_frame()`` such as a :class:`~xaimetrics.benchmark.ResultsStore`; :class:`CurveSet`, such as
fidelity's ``Curves``) and imports none of those families.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, SupportsFloat, cast

import numpy as np

from xaimetrics._validation import invalid
from xaimetrics.tracking._trackers import MLflowTracker, Tracker

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["consim_grid_metrics", "log_consim_grid", "log_fidelity", "log_run"]


class Rows(Protocol):
    """A results table that can give its rows as a ``pandas.DataFrame`` (a
    :class:`~xaimetrics.benchmark.ResultsStore`)."""

    def to_frame(self) -> pd.DataFrame: ...


class CurveSet(Protocol):
    """Perturbation curves with their areas (fidelity's ``Curves`` from ``Insertion.curves``/``Deletion.curves``)."""

    @property
    def auc(self) -> np.ndarray: ...

    def mean_curve(self, n_points: int) -> tuple[np.ndarray, np.ndarray]: ...


#: the grid columns logged as parameters (their distinct values)
_GRID_PARAMETERS = ("dataset", "model", "simulator", "interpretation", "n_concepts", "scoring", "phase")


def _frame(results: Rows | pd.DataFrame) -> pd.DataFrame:
    """A results table from a ``ResultsStore`` (anything with ``to_frame()``) or a ``pandas.DataFrame``."""
    import pandas as pd

    if isinstance(results, pd.DataFrame):
        return results
    if not isinstance(results, str | os.PathLike) and callable(getattr(results, "to_frame", None)):
        return results.to_frame()
    raise invalid(
        "results", "log_consim_grid", "an open ResultsStore or a pandas DataFrame of its rows",
        type(results).__name__,
        "Open a store's file first: 'with ResultsStore(path, read_only=True) as store: log_consim_grid(store)'.",
    )  # fmt: skip


def consim_grid_metrics(results: Rows | pd.DataFrame) -> dict[str, float]:
    """The numbers logged for a ConSim grid: counts, the mean score, and the mean score per method and prompt.

    Keys: ``settings``, ``failed_settings``, ``score.mean``, ``score/<method>/<prompt type>`` (``-a`` for
    anonymised classes), ``expected_accuracy/<method>/<prompt type>`` when probabilities were scored, and
    ``upper_bound/<method>`` for U1 rows (a ceiling, never a score).

    Example:
        >>> import pandas as pd
        >>> rows = pd.DataFrame({"method": ["NMF", "NMF", "ICA"], "prompt_type": ["E3", "E3", "E3"],
        ...                      "anonymized": [False, False, True], "score": [0.6, 0.8, 0.5]})
        >>> consim_grid_metrics(rows)
        {'settings': 3.0, 'failed_settings': 0.0, 'score.mean': 0.6333333333333333, 'score/ICA/E3-a': 0.5, 'score/NMF/E3': 0.7}
    """
    frame = _frame(results)
    if "score" not in frame.columns or "method" not in frame.columns:
        raise invalid(
            "results", "log_consim_grid", "rows with 'method' and 'score' columns", list(frame.columns)
        )
    failed = (
        frame["error"].notna() & (frame["error"] != "") if "error" in frame.columns else frame["score"].isna()
    )
    upper = _flag(frame["is_upper_bound"]) if "is_upper_bound" in frame.columns else None
    scored = frame if upper is None else frame[~upper]
    metrics: dict[str, float] = {
        "settings": float(len(frame)),
        "failed_settings": float(failed.sum()),
        "score.mean": float(np.nanmean(scored["score"].astype(float))) if len(scored) else float("nan"),
    }
    prompt = scored["prompt_type"].astype(str) if "prompt_type" in scored.columns else "all"
    if "anonymized" in scored.columns:
        prompt = prompt + np.where(_flag(scored["anonymized"]), "-a", "")
    keyed = scored.assign(_prompt=prompt)
    for column in ("score", "expected_accuracy"):
        if column not in keyed.columns:
            continue
        means = keyed.groupby(["method", "_prompt"])[column].mean()
        metrics.update({f"{column}/{m}/{p}": float(v) for (m, p), v in means.items() if v == v})
    if upper is not None and upper.any():
        means = frame[upper].groupby("method")["score"].mean()
        metrics.update({f"upper_bound/{m}": float(v) for m, v in means.items() if v == v})
    return metrics


def _flag(column: pd.Series) -> pd.Series:
    """A boolean column from stored flags (``True``/``1``/``1.0``; missing values are ``False``)."""
    import pandas as pd

    return (
        pd.to_numeric(
            column.astype(object).map(lambda v: float(bool(v)) if v is not None and v == v else 0.0)
        )
        > 0
    )


def _tracker(tracker: Tracker | None, experiment: str) -> Tracker:
    if tracker is None:
        return MLflowTracker(experiment=experiment)
    if not isinstance(tracker, Tracker):
        raise invalid(
            "tracker", "xaimetrics.tracking", "an MLflowTracker or a WandbTracker", type(tracker).__name__
        )
    return tracker


def log_consim_grid(
    results: Rows | pd.DataFrame,
    tracker: Tracker | None = None,
    *,
    run_name: str = "consim-grid",
    params: Mapping[str, object] | None = None,
    artifacts: Sequence[str | os.PathLike[str]] = (),
) -> str:
    """Log a ConSim grid as one tracker run and return the run id.

    Parameters: the distinct datasets, models, simulators, interpretations, concept counts (and the number of
    seeds) of the rows, plus ``params``. Metrics: :func:`consim_grid_metrics`. Artifacts: the rows as
    ``consim_results.csv`` and the files in ``artifacts`` (e.g. the report).

    Args:
        results: an open :class:`~xaimetrics.benchmark.ResultsStore` (anything with ``to_frame()``) or its rows as a
            DataFrame.
        tracker: an :class:`MLflowTracker` or :class:`WandbTracker` (default: MLflow, experiment
            ``xaimetrics-consim``, MLflow's default tracking URI).
    """
    frame = _frame(results)
    metrics = consim_grid_metrics(frame)
    logged: dict[str, object] = {
        column: ",".join(sorted(map(str, frame[column].dropna().unique())))
        for column in _GRID_PARAMETERS
        if column in frame.columns
    }
    if "seed" in frame.columns:
        logged["n_seeds"] = int(frame["seed"].nunique())
    logged.update(params or {})
    with tempfile.TemporaryDirectory() as folder:
        table = Path(folder) / "consim_results.csv"
        frame.drop(columns=[c for c in ("payload",) if c in frame.columns]).to_csv(table, index=False)
        return log_run(
            metrics, _tracker(tracker, "xaimetrics-consim"), run_name=run_name, params=logged,
            tags={"kind": "consim-grid"}, artifacts=[table, *artifacts],
        )  # fmt: skip


def log_fidelity(
    scores: Mapping[str, object],
    tracker: Tracker | None = None,
    *,
    run_name: str = "fidelity",
    params: Mapping[str, object] | None = None,
    curves: Mapping[str, CurveSet] | None = None,
    artifacts: Sequence[str | os.PathLike[str]] = (),
) -> str:
    """Log a fidelity run (metric values per explanation method, optionally curves) as one tracker run.

    Args:
        scores: ``{metric: value}`` or ``{explainer: {metric: value}}`` (e.g. ``{"saliency": {"deletion":
            0.21, "insertion": 0.64}}``); logged as ``fidelity/<metric>`` or ``fidelity/<metric>/<explainer>``.
        curves: ``{name: Curves}`` from ``Insertion.curves`` / ``Deletion.curves``: the mean curve is logged as
            ``curve/<name>`` with the step = the percentage of features perturbed (0–100), and the mean AUC as
            ``auc/<name>``.
        tracker: as in :func:`log_consim_grid` (default experiment ``xaimetrics-fidelity``).

    Example:
        >>> from xaimetrics.tracking._logging import _fidelity_metrics
        >>> _fidelity_metrics({"saliency": {"deletion": 0.2}, "random": {"deletion": 0.5}})
        {'fidelity/deletion/saliency': 0.2, 'fidelity/deletion/random': 0.5}
    """
    metrics = _fidelity_metrics(scores)
    steps: list[tuple[int, dict[str, float]]] = []
    for name, curve in (curves or {}).items():
        end = float(curve.mean_curve(2)[0][-1])  # the largest fraction reached, on average
        grid, mean = curve.mean_curve(max(2, round(100 * end) + 1))  # one point per percent
        steps += [
            (round(100 * float(f)), {f"curve/{name}": float(v)}) for f, v in zip(grid, mean, strict=True)
        ]
        metrics[f"auc/{name}"] = float(np.mean(curve.auc))
    return log_run(
        metrics, _tracker(tracker, "xaimetrics-fidelity"), run_name=run_name, params=params,
        tags={"kind": "fidelity"}, steps=steps, artifacts=artifacts,
    )  # fmt: skip


def log_run(
    metrics: Mapping[str, object],
    tracker: Tracker | None = None,
    *,
    run_name: str,
    params: Mapping[str, object] | None = None,
    tags: Mapping[str, str] | None = None,
    steps: Sequence[tuple[int, Mapping[str, object]]] = (),
    artifacts: Sequence[str | os.PathLike[str]] = (),
) -> str:
    """Log one run (metrics, parameters, tags, per-step metrics and files) and return its id: the one way every
    family logs, its numbers from a ``{name: value}`` map (non-finite values are not logged).

    Args:
        metrics: ``{name: value}`` (e.g. :meth:`~xaimetrics.representation.InterpretabilityReport.metrics`).
        tracker: an :class:`MLflowTracker` or :class:`WandbTracker` (default: MLflow, experiment ``xaimetrics``,
            MLflow's default tracking URI).
        run_name: the run's name.
        params: configuration values; tags: ``{name: text}`` labels of the run.
        steps: ``(step, {name: value})`` pairs, for a history such as a curve or a loss.
        artifacts: files to attach (e.g. a report's Markdown, HTML and JSON).

    Example:
        >>> from xaimetrics.tracking import Tracker
        >>> class Printer(Tracker):
        ...     def start(self, run_name, params=None, tags=None):
        ...         self.run_id = run_name
        ...         print("start", run_name, dict(params or {}), dict(tags or {}))
        ...         return run_name
        ...     def log_params(self, params): pass
        ...     def log_metrics(self, metrics, step=None): print("metrics", dict(metrics), step)
        ...     def log_artifact(self, path): print("file", path)
        ...     def end(self): print("end")
        >>> log_run({"coherence.mean": 0.41}, Printer(), run_name="r", params={"version": "1"}, steps=[(1, {"loss": 0.5})])
        start r {'version': '1'} {}
        metrics {'coherence.mean': 0.41} None
        metrics {'loss': 0.5} 1
        end
        'r'
    """
    target = _tracker(tracker, "xaimetrics")
    with target.run(run_name, dict(params or {}), tags):
        target.log_metrics(metrics)
        for step, values in steps:
            target.log_metrics(values, step=step)
        for path in artifacts:
            target.log_artifact(path)
        return str(target.run_id)


def _fidelity_metrics(scores: Mapping[str, object]) -> dict[str, float]:
    if not isinstance(scores, Mapping) or not scores:
        raise invalid(
            "scores",
            "log_fidelity",
            "a non-empty mapping {metric: value} or {explainer: {metric: value}}",
            scores,
        )
    metrics: dict[str, float] = {}
    for key, value in scores.items():
        if isinstance(value, Mapping):
            metrics.update({f"fidelity/{metric}/{key}": float(v) for metric, v in value.items()})
        else:
            metrics[f"fidelity/{key}"] = float(cast(SupportsFloat, value))  # float() raises on the rest
    return metrics
