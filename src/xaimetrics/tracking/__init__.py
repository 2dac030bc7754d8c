"""Experiment tracking for ConSim grids, fidelity runs and fine-tuning: MLflow or Weights & Biases (extra
``tracking``), with the conventions of the interpretability reports (:mod:`xaimetrics.representation`).

Example:
    >>> from xaimetrics.tracking import MLflowTracker, log_consim_grid
    >>> tracker = MLflowTracker("file:///tmp/mlruns", experiment="my-grid")  # nothing is opened yet
    >>> tracker.experiment
    'my-grid'
"""

from xaimetrics.tracking._logging import log_consim_grid, log_fidelity
from xaimetrics.tracking._trackers import MLflowTracker, Tracker, WandbTracker

__all__ = [
    "MLflowTracker",
    "Tracker",
    "WandbTracker",
    "log_consim_grid",
    "log_fidelity",
]
