"""Experiment trackers with one small interface: MLflow (any tracking URI) and Weights & Biases (offline by default).

The conventions are those of the interpretability reports (:mod:`xaimetrics.representation`): extra
``tracking``; MLflow takes a tracking URI (a local ``file:`` store — MLflow 3 wants ``MLFLOW_ALLOW_FILE_STORE=true``
for it —, a server's ``http://`` URL, or ``sqlite:///mlflow.db`` with the full ``mlflow`` package: the extra's
``mlflow-skinny`` has no SQL store) and an experiment name; W&B runs in offline mode unless told
otherwise, so nothing leaves the machine before ``wandb sync``; NaN values are never logged (trackers reject
them: an undefined metric is simply absent).
"""

from __future__ import annotations

import contextlib
import importlib.util
import math
import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping
from types import ModuleType
from typing import Protocol, SupportsFloat, cast

from xaimetrics._optional import import_optional
from xaimetrics.exceptions import TrackingError, XaimetricsError

__all__ = ["MLflowTracker", "Tracker", "WandbTracker", "finite"]

#: tracking URI schemes served by MLflow's SQL store (``postgresql+psycopg2://`` counts as ``postgresql``)
_DATABASE_SCHEMES = frozenset({"sqlite", "postgresql", "mysql", "mssql"})


def finite(metrics: Mapping[str, object]) -> dict[str, float]:
    """The entries that are finite numbers, as floats (``None``, NaN and infinities are left out).

    Example:
        >>> finite({"a": 1, "b": float("nan"), "c": None, "d": 0.5})
        {'a': 1.0, 'd': 0.5}
    """
    out = {}
    for name, value in metrics.items():
        if value is None or isinstance(value, bool):
            continue
        number = float(cast(SupportsFloat, value))  # float() raises on anything else, as it should
        if math.isfinite(number):
            out[str(name)] = number
    return out


class Tracker(ABC):
    """One run of an experiment tracker: ``start`` → ``log_params`` / ``log_metrics`` / ``log_artifact`` → ``end``.

    Use it as a context manager (``with tracker.run("name", params): ...``) or call the steps yourself.
    Subclass it to log elsewhere:

    Example:
        >>> class Printer(Tracker):
        ...     def start(self, run_name, params=None, tags=None):
        ...         self.run_id = run_name
        ...         return run_name
        ...     def log_params(self, params): print("params", dict(params))
        ...     def log_metrics(self, metrics, step=None): print("metrics", finite(metrics), step)
        ...     def log_artifact(self, path): print("file", path)
        ...     def end(self): print("end")
        >>> with Printer().run("demo") as tracker:
        ...     tracker.step_logger("loss")(3, 0.25)
        metrics {'loss': 0.25} 3
        end
    """

    run_id: str | None = None

    @abstractmethod
    def start(
        self, run_name: str, params: Mapping[str, object] | None = None, tags: Mapping[str, str] | None = None
    ) -> str:
        """Open a run and return its id."""

    @abstractmethod
    def log_params(self, params: Mapping[str, object]) -> None:
        """Record configuration values (strings, numbers)."""

    @abstractmethod
    def log_metrics(self, metrics: Mapping[str, object], step: int | None = None) -> None:
        """Record numbers (non-finite ones are skipped), optionally at a step."""

    @abstractmethod
    def log_artifact(self, path: str | os.PathLike[str]) -> None:
        """Attach a file."""

    @abstractmethod
    def end(self) -> None:
        """Close the run."""

    def check(self) -> None:  # noqa: B027 - an optional hook: trackers without a check need nothing
        """Fail now (:class:`~xaimetrics.exceptions.TrackingError`, or ``MissingDependencyError``), before any
        paid work, when this tracker cannot log; the default checks nothing."""

    def run(
        self, run_name: str, params: Mapping[str, object] | None = None, tags: Mapping[str, str] | None = None
    ) -> _Run:
        """A context manager around :meth:`start` and :meth:`end`."""
        return _Run(self, run_name, params, tags)

    def step_logger(self, name: str = "loss") -> Callable[[int, float], None]:
        """A ``callback(step, value)`` logging ``name`` at each step (e.g. for :func:`xaimetrics.models.finetune`)."""

        def log(step: int, value: float) -> None:
            self.log_metrics({name: value}, step=step)

        return log


class _Run:
    def __init__(
        self,
        tracker: Tracker,
        run_name: str,
        params: Mapping[str, object] | None,
        tags: Mapping[str, str] | None,
    ) -> None:
        self.tracker, self.run_name, self.params, self.tags = tracker, run_name, params, tags

    def __enter__(self) -> Tracker:
        self.tracker.start(self.run_name, self.params, self.tags)
        return self.tracker

    def __exit__(self, *exc: object) -> None:
        self.tracker.end()


class MLflowTracker(Tracker):
    """Log to MLflow.

    Args:
        tracking_uri: e.g. ``Path("mlruns").as_uri()`` (with ``MLFLOW_ALLOW_FILE_STORE=true`` under MLflow 3), a
            server's ``http://`` URL, or ``"sqlite:///mlflow.db"`` (needs the full ``mlflow`` package, not the
            ``tracking`` extra's ``mlflow-skinny``); default MLflow's own.
        experiment: the experiment name (created if needed).

    Example:
        >>> MLflowTracker(experiment="xaimetrics-consim").experiment
        'xaimetrics-consim'
    """

    def __init__(self, tracking_uri: str | None = None, experiment: str = "xaimetrics") -> None:
        self.tracking_uri = tracking_uri
        self.experiment = experiment
        self._run: object | None = None  # the active mlflow.ActiveRun

    def _mlflow(self) -> ModuleType:
        return import_optional("mlflow", extra="tracking", caller="MLflowTracker")

    @contextlib.contextmanager
    def _calling(self, what: str) -> Iterator[None]:
        """MLflow's own errors (a bad URI, a server that does not answer) as one :class:`TrackingError`."""
        try:
            yield
        except (XaimetricsError, KeyboardInterrupt):
            raise
        except Exception as error:
            first = (str(error).strip().splitlines() or [""])[0][:300]
            raise TrackingError(
                f"MLflow could not {what} at the tracking URI {self.tracking_uri or '(MLflow default)'!r} "
                f"({type(error).__name__}: {first}). Check --mlflow-uri (e.g. 'file:///path/mlruns' with "
                "MLFLOW_ALLOW_FILE_STORE=true under MLflow 3, 'sqlite:///mlflow.db' with the full mlflow package, or "
                "a running server's http:// URL)."
            ) from error

    def _check_store(self) -> None:
        """A database URI needs MLflow's SQL store, which ``mlflow-skinny`` (the ``tracking`` extra) lacks: say
        what to install or use, instead of MLflow's "unsupported URI" error."""
        scheme = (self.tracking_uri or "").split(":", 1)[0].split("+", 1)[0].lower()
        if scheme in _DATABASE_SCHEMES and importlib.util.find_spec("sqlalchemy") is None:
            raise TrackingError(
                f"The MLflow tracking URI {self.tracking_uri!r} is a database, and MLflow's SQL store needs the full "
                "MLflow package (SQLAlchemy, Alembic), which the 'tracking' extra (mlflow-skinny) does not install. "
                "Install it with: pip install mlflow — or log to a local folder: --mlflow-uri file:///path/to/mlruns "
                "(with MLflow 3, also set MLFLOW_ALLOW_FILE_STORE=true), or to a running server's http:// URL."
            )

    def _connect(self) -> ModuleType:
        self._check_store()
        mlflow = self._mlflow()
        with self._calling("open the experiment"):
            if self.tracking_uri is not None:
                mlflow.set_tracking_uri(self.tracking_uri)
            mlflow.set_experiment(self.experiment)
        return mlflow

    def check(self) -> None:
        """Open the tracking URI and the experiment now (the server is asked once)."""
        self._connect()

    def start(
        self, run_name: str, params: Mapping[str, object] | None = None, tags: Mapping[str, str] | None = None
    ) -> str:
        mlflow = self._connect()
        with self._calling("start a run"):
            run = mlflow.start_run(run_name=run_name)
            self.run_id, self._run = str(run.info.run_id), run
            if tags:
                mlflow.set_tags(dict(tags))
        if params:
            self.log_params(params)
        return self.run_id

    def log_params(self, params: Mapping[str, object]) -> None:
        with self._calling("log parameters"):
            self._mlflow().log_params({str(k): _short(v) for k, v in params.items()})

    def log_metrics(self, metrics: Mapping[str, object], step: int | None = None) -> None:
        values = finite(metrics)
        if values:
            with self._calling("log metrics"):
                self._mlflow().log_metrics(values, step=step)

    def log_artifact(self, path: str | os.PathLike[str]) -> None:
        with self._calling("log a file"):
            self._mlflow().log_artifact(os.fspath(path))

    def end(self) -> None:
        if self._run is not None:
            self._run = None
            with self._calling("end the run"):
                self._mlflow().end_run()


class _WandbConfig(Protocol):
    def update(self, values: Mapping[str, object], allow_val_change: bool) -> None: ...


class _WandbRun(Protocol):
    """The part of ``wandb``'s run this tracker uses."""

    id: str
    config: _WandbConfig

    def log(self, data: Mapping[str, float], step: int | None = None) -> None: ...

    def save(self, glob_str: str, policy: str) -> object: ...

    def finish(self) -> None: ...


class WandbTracker(Tracker):
    """Log to Weights & Biases (``mode="offline"`` by default: files under ``directory``, synced later).

    Example:
        >>> WandbTracker(project="xaimetrics-consim").mode
        'offline'
    """

    def __init__(
        self,
        project: str = "xaimetrics",
        *,
        mode: str = "offline",
        directory: str | os.PathLike[str] | None = None,
    ) -> None:
        self.project = project
        self.mode = mode
        self.directory = directory
        self._run: _WandbRun | None = None

    def check(self) -> None:
        """Whether ``wandb`` is installed (``MissingDependencyError`` naming the extra otherwise)."""
        import_optional("wandb", extra="tracking", caller="WandbTracker")

    def start(
        self, run_name: str, params: Mapping[str, object] | None = None, tags: Mapping[str, str] | None = None
    ) -> str:
        wandb = import_optional("wandb", extra="tracking", caller="WandbTracker")
        self._run = run = wandb.init(
            project=self.project, mode=self.mode, dir=None if self.directory is None else os.fspath(self.directory),
            name=run_name, config=dict(params or {}), tags=[f"{k}:{v}" for k, v in (tags or {}).items()], reinit=True,
        )  # fmt: skip
        self.run_id = str(run.id)
        return self.run_id

    def _active(self) -> _WandbRun:
        if self._run is None:
            raise TrackingError(
                "WandbTracker has no open run. Open one first: 'with tracker.run(name): ...' or tracker.start(name)."
            )
        return self._run

    def log_params(self, params: Mapping[str, object]) -> None:
        self._active().config.update(dict(params), allow_val_change=True)

    def log_metrics(self, metrics: Mapping[str, object], step: int | None = None) -> None:
        values = finite(metrics)
        if values:
            self._active().log(values, step=step)

    def log_artifact(self, path: str | os.PathLike[str]) -> None:
        self._active().save(os.fspath(path), policy="now")

    def end(self) -> None:
        if self._run is not None:
            self._run.finish()
            self._run = None


def _short(value: object) -> str:
    """MLflow parameters are strings of at most a few hundred characters."""
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 250 else text[:247] + "..."
