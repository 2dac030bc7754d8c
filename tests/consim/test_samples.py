"""ConSimSamples and select_examples: the texts, labels and predictions of the indices the selection drew."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from xaimetrics.consim._samples import ConSimSamples, as_class_ids, select_examples
from xaimetrics.consim._selection import select_indices
from xaimetrics.exceptions import InvalidParameterError

TEXTS = [f"text {i}" for i in range(24)]
LABELS = np.array([i % 3 for i in range(24)])
PREDICTIONS = np.array([(i % 3) if i % 4 else (i + 1) % 3 for i in range(24)])


def test_the_samples_are_the_rows_of_the_selected_indices() -> None:
    samples = select_examples(TEXTS, LABELS, PREDICTIONS, n_lp=6, n_ep=6, seed=3)
    selection = select_indices(LABELS, PREDICTIONS, 6, 6, seed=3, inputs=TEXTS)
    lp, ep = selection.lp_indices, selection.ep_indices
    assert samples.lp_texts == tuple(TEXTS[i] for i in lp) and samples.ep_texts == tuple(TEXTS[i] for i in ep)
    assert samples.lp_predictions.tolist() == PREDICTIONS[lp].tolist()
    assert samples.ep_labels is not None and samples.ep_labels.tolist() == LABELS[ep].tolist()
    assert samples.texts == [*samples.lp_texts, *samples.ep_texts] and len(set(samples.texts)) == 12
    assert samples.predictions.tolist() == [*PREDICTIONS[lp], *PREDICTIONS[ep]]
    assert (samples.n_lp, samples.n_ep, samples.seed) == (6, 6, 3)


def test_samples_given_without_labels_have_none() -> None:
    samples = ConSimSamples(("a",), ("b", "c"), np.array([1]), np.array([0, 1]))
    assert samples.labels is None and samples.predictions.tolist() == [1, 0, 1] and samples.n_ep == 2


def test_class_ids_come_from_lists_arrays_and_tensors_and_bad_shapes_are_named() -> None:
    assert as_class_ids(torch.tensor([2, 0])).tolist() == [2, 0]
    assert as_class_ids([1, 2]).dtype == np.int64
    assert as_class_ids([]).shape == (0,)
    with pytest.raises(InvalidParameterError, match=r"'predictions' parameter of Owner.*shape \(2, 1\)"):
        as_class_ids([[1], [2]], "Owner")
    with pytest.raises(InvalidParameterError, match="dtype float64"):
        as_class_ids([0.5, 1.0])


def test_one_label_per_input_is_required() -> None:
    with pytest.raises(InvalidParameterError, match=r"'inputs' parameter of select_examples.*Got 23 texts"):
        select_examples(TEXTS[:-1], LABELS, PREDICTIONS, n_lp=2, n_ep=2)
