"""The exceptions raised by xaimetrics.

Every class also subclasses the builtin it refines, so ``except ValueError`` keeps working for callers that
do not know about xaimetrics (the httpx / scikit-learn convention).

Example:
    >>> from xaimetrics.exceptions import InvalidParameterError
    >>> issubclass(InvalidParameterError, ValueError)
    True
"""

from __future__ import annotations

__all__ = [
    "AssetError",
    "InvalidParameterError",
    "LocalModelCrashed",
    "LocalModelTimeout",
    "MissingDependencyError",
    "NotFittedError",
    "SimulatorError",
    "StoreError",
    "XaimetricsError",
]


class XaimetricsError(Exception):
    """Base class of every error raised on purpose by xaimetrics."""


class InvalidParameterError(XaimetricsError, ValueError):
    """An argument has the wrong value, type or shape. The message names the argument and the fix."""


class NotFittedError(XaimetricsError, ValueError, AttributeError):
    """An estimator was used before ``fit``."""


class MissingDependencyError(XaimetricsError, ImportError):
    """An optional dependency is not installed. The message names the extra to install."""


class AssetError(XaimetricsError, RuntimeError):
    """An offline asset (dataset file, model weights) is missing or does not match its pinned checksum."""


class SimulatorError(XaimetricsError, RuntimeError):
    """A simulator failed for good (after its retries)."""


class LocalModelCrashed(SimulatorError):
    """A local model's native code (llama.cpp, torch) crashed in its worker process. The caller's process is
    unaffected; the message names the signal, what the model was doing, the CPU's features and the switch
    that avoids the crash."""


class LocalModelTimeout(SimulatorError, TimeoutError):
    """A local model's worker process gave no answer within the call's deadline (a hung or stopped process) and
    was killed; the next call starts a new one. The message names the deadline and the option that sets it."""


class StoreError(XaimetricsError, RuntimeError):
    """A results store (an SQLite file) cannot be used as it is: corrupted, truncated, emptied, or not a
    results store. The message names the file and what to do; xaimetrics never overwrites such a file."""


class TrackingError(XaimetricsError, RuntimeError):
    """An experiment tracker (MLflow, Weights & Biases) cannot log: a bad tracking URI, a server that does not
    answer, a missing package. Reported before a grid runs where it can be checked."""
