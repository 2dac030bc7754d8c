"""The samples a ConSim evaluation runs on: learning phase (LP) then evaluation phase (EP)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from xaimetrics._validation import invalid
from xaimetrics.consim._selection import ExampleSelection

__all__ = ["ConSimSamples", "as_class_ids"]


@dataclass(frozen=True)
class ConSimSamples:
    """The selected samples: learning phase (LP) first, then evaluation phase (EP).

    Attributes:
        lp_texts, ep_texts: the texts.
        lp_labels, ep_labels: their true labels (``numpy.ndarray[int64]``).
        lp_predictions, ep_predictions: f's predictions on them (``numpy.ndarray[int64]``).
        selection: the :class:`ExampleSelection` (indices into the data, counts, relaxations).
        seed: the selection seed.

    Example:
        >>> from xaimetrics.consim import ConSim
        >>> texts = ["dull", "fun", "great", "meh", "slow", "witty"]
        >>> samples = ConSim(None, class_names=["negative", "positive"]).select_examples(
        ...     texts, labels=[0, 1, 1, 0, 0, 1], predictions=[0, 0, 1, 1, 0, 1], n_lp=2, n_ep=2, seed=0)
        >>> samples.n_lp, samples.n_ep, sorted(samples.texts)
        (2, 2, ['dull', 'fun', 'great', 'meh'])
        >>> int((samples.labels == samples.predictions).sum())  # half predicted correctly
        2
    """

    lp_texts: tuple[str, ...]
    ep_texts: tuple[str, ...]
    lp_labels: np.ndarray
    ep_labels: np.ndarray
    lp_predictions: np.ndarray
    ep_predictions: np.ndarray
    selection: ExampleSelection | None = None
    seed: int | None = None

    @property
    def texts(self) -> list[str]:
        """LP texts followed by EP texts (Interpreto's ``interesting_samples``)."""
        return [*self.lp_texts, *self.ep_texts]

    @property
    def labels(self) -> np.ndarray:
        return np.concatenate([self.lp_labels, self.ep_labels])

    @property
    def predictions(self) -> np.ndarray:
        return np.concatenate([self.lp_predictions, self.ep_predictions])

    @property
    def n_lp(self) -> int:
        return len(self.lp_texts)

    @property
    def n_ep(self) -> int:
        return len(self.ep_texts)


def as_class_ids(values: Any, owner: str = "ConSim") -> np.ndarray:
    """A 1-D ``numpy.ndarray[int64]`` of class ids from a list, numpy array or tensor."""
    if hasattr(values, "detach"):
        values = values.detach().cpu().numpy()
    array = np.asarray(values)
    if array.ndim != 1 or (array.size and not np.issubdtype(array.dtype, np.integer)):
        raise invalid(
            "predictions", owner, "a 1-D array of class ids", f"shape {array.shape}, dtype {array.dtype}"
        )
    return array.astype(np.int64)
