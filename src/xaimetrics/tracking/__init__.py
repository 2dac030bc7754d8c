"""Experiment tracking for every family (ConSim grids, fidelity runs, interpretability reports, fine-tuning): MLflow
or Weights & Biases (extra ``tracking``) behind one :class:`Tracker` interface; :func:`log_run` logs one run.

Example:
    >>> from xaimetrics.tracking import MLflowTracker, log_consim_grid
    >>> tracker = MLflowTracker("file:///tmp/mlruns", experiment="my-grid")  # nothing is opened yet
    >>> tracker.experiment
    'my-grid'
"""

from xaimetrics.tracking._logging import log_consim_grid, log_fidelity, log_run
from xaimetrics.tracking._trackers import MLflowTracker, Tracker, WandbTracker

__all__ = [
    "MLflowTracker",
    "Tracker",
    "WandbTracker",
    "log_consim_grid",
    "log_fidelity",
    "log_run",
]
