"""The samples a ConSim evaluation runs on (learning phase, LP, then evaluation phase, EP), and how they are
selected: :func:`select_examples`, step 1 of the ConSim pipeline (the allocation rule is
:func:`~xaimetrics.consim._selection.select_indices`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from xaimetrics._validation import check_texts, invalid
from xaimetrics.consim._selection import Balance, ExampleSelection, select_indices

__all__ = ["DEFAULT_N_EP", "DEFAULT_N_LP", "ConSimSamples", "as_class_ids", "select_examples"]

#: the paper's 20 learning-phase and 20 evaluation-phase samples (App. B.1)
DEFAULT_N_LP = 20
DEFAULT_N_EP = 20


@dataclass(frozen=True)
class ConSimSamples:
    """The selected samples: learning phase (LP) first, then evaluation phase (EP).

    Attributes:
        lp_texts, ep_texts: the texts.
        lp_predictions, ep_predictions: f's predictions on them (``numpy.ndarray[int64]``).
        lp_labels, ep_labels: their true labels (``numpy.ndarray[int64]``; ``None`` for samples given as
            texts and predictions only).
        selection: the :class:`ExampleSelection` (indices into the data, counts, relaxations).
        seed: the selection seed.

    Example:
        >>> texts = ["dull", "fun", "great", "meh", "slow", "witty"]
        >>> samples = select_examples(texts, labels=[0, 1, 1, 0, 0, 1], predictions=[0, 0, 1, 1, 0, 1],
        ...                           n_lp=2, n_ep=2, seed=0)
        >>> samples.n_lp, samples.n_ep, sorted(samples.texts)
        (2, 2, ['dull', 'fun', 'great', 'meh'])
        >>> int((samples.labels == samples.predictions).sum())  # half predicted correctly
        2
    """

    lp_texts: tuple[str, ...]
    ep_texts: tuple[str, ...]
    lp_predictions: np.ndarray
    ep_predictions: np.ndarray
    lp_labels: np.ndarray | None = None
    ep_labels: np.ndarray | None = None
    selection: ExampleSelection | None = None
    seed: int | None = None

    @property
    def texts(self) -> list[str]:
        """LP texts followed by EP texts (Interpreto's ``interesting_samples``)."""
        return [*self.lp_texts, *self.ep_texts]

    @property
    def predictions(self) -> np.ndarray:
        """f's predictions on the LP samples followed by the EP samples."""
        return np.concatenate([self.lp_predictions, self.ep_predictions])

    @property
    def labels(self) -> np.ndarray | None:
        """LP labels followed by EP labels (``None`` when unknown)."""
        if self.lp_labels is None or self.ep_labels is None:
            return None
        return np.concatenate([self.lp_labels, self.ep_labels])

    @property
    def n_lp(self) -> int:
        return len(self.lp_texts)

    @property
    def n_ep(self) -> int:
        return len(self.ep_texts)


def select_examples(
    inputs: Sequence[str],
    labels: ArrayLike,
    predictions: ArrayLike,
    n_lp: int = DEFAULT_N_LP,
    n_ep: int = DEFAULT_N_EP,
    *,
    seed: int = 0,
    balance: Balance = "strict",
    class_names: Sequence[str] | None = None,
    owner: str = "select_examples",
) -> ConSimSamples:
    """Select the LP and EP samples of one ConSim evaluation (paper App. B.1; step 1 of the pipeline).

    Classes are covered uniformly (w.r.t. ``labels``), half of the samples are predicted correctly by f and
    half wrongly, without replacement, seeded; :func:`~xaimetrics.consim._selection.select_indices` gives the
    exact rule. A text is selected at most once: repeats of an earlier (normalised) text are left out, so no
    LP sample's prediction can be asked again in EP.

    Args:
        inputs: candidate texts (e.g. a test split).
        labels: their true classes, integer array-like of shape ``(n,)``.
        predictions: f's predictions on them, same shape (``model.predict(inputs)``).
        n_lp: number of learning-phase samples.
        n_ep: number of evaluation-phase samples.
        seed: seed of the draw.
        balance: ``"strict"`` raises when the data cannot meet the quotas; ``"relaxed"`` fills from the
            nearest cells and says so in ``samples.selection.notes``.
        class_names: names of the classes ``0 … C-1``; each gets a quota (default: the distinct labels).
        owner: the name errors give for the caller.

    Returns:
        The :class:`ConSimSamples` (texts, labels, predictions, the selection and the seed).

    Raises:
        InvalidParameterError: malformed inputs, or data that cannot satisfy the request (with the counts).

    Example:
        >>> samples = select_examples(["dull", "fun", "great", "meh"], [0, 1, 1, 0], [0, 0, 1, 1], n_lp=2,
        ...                           n_ep=2, class_names=["negative", "positive"], seed=1)
        >>> samples.lp_texts, samples.ep_texts, samples.ep_predictions.tolist()
        (('meh', 'great'), ('fun', 'dull'), [0, 0])
    """
    texts = check_texts(inputs, "inputs", owner)
    selection = select_indices(
        labels, predictions, n_lp, n_ep, seed=seed, balance=balance, class_names=class_names, inputs=texts
    )
    labels_ = as_class_ids(labels, owner)
    predictions_ = as_class_ids(predictions, owner)
    if len(labels_) != len(texts):
        raise invalid("labels", owner, f"one label per input ({len(texts)})", len(labels_))
    lp, ep = selection.lp_indices, selection.ep_indices
    return ConSimSamples(
        lp_texts=tuple(texts[i] for i in lp),
        ep_texts=tuple(texts[i] for i in ep),
        lp_predictions=predictions_[lp],
        ep_predictions=predictions_[ep],
        lp_labels=labels_[lp],
        ep_labels=labels_[ep],
        selection=selection,
        seed=int(seed),
    )


def as_class_ids(values: ArrayLike, owner: str = "ConSim") -> np.ndarray:
    """A 1-D ``numpy.ndarray[int64]`` of class ids from a list, numpy array or tensor."""
    detach = getattr(values, "detach", None)
    if callable(detach):
        values = detach().cpu().numpy()
    array = np.asarray(values)
    if array.ndim != 1 or (array.size and not np.issubdtype(array.dtype, np.integer)):
        raise invalid(
            "predictions", owner, "a 1-D array of class ids", f"shape {array.shape}, dtype {array.dtype}"
        )
    return array.astype(np.int64)
