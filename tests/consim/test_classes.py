"""Classes matched by name: the same list as is, another order relabelled, another set refused."""

from __future__ import annotations

import numpy as np
import pytest

from xaimetrics.consim._classes import align_classes, class_order
from xaimetrics.data import TextDataset
from xaimetrics.exceptions import InvalidParameterError


def test_a_reordering_maps_every_label_to_the_same_name() -> None:
    model, data = ["c", "a", "d", "b"], ["a", "b", "c", "d"]
    order = class_order(model, data, model="m", dataset="d", owner="o")
    assert order is not None
    assert [model[order[label]] for label in range(4)] == data  # the name is kept for every label


def test_aligned_data_keeps_each_texts_class_name() -> None:
    data = TextDataset(["w1", "s1", "t1", "w2"], np.array([2, 0, 1, 2]), ["sports", "tech", "world"], "news")
    aligned, note = align_classes(data, ["world", "sports", "tech"], model="m", dataset="news", owner="o")
    before = [data.class_names[i] for i in data.labels]
    after = [aligned.class_names[i] for i in aligned.labels]
    assert after == before and aligned.labels.tolist() == [0, 1, 2, 0] and aligned.texts == data.texts
    assert note is not None and "another order" in note
    assert align_classes(data, None, model="m", dataset="news", owner="o") == (data, None)
    same, no_note = align_classes(data, data.class_names, model="m", dataset="news", owner="o")
    assert same is data and no_note is None


@pytest.mark.parametrize(
    "model_classes",
    [["sports", "tech"], ["sports", "tech", "weather"], ["sports", "sports", "tech", "world"]],
)
def test_another_set_of_classes_is_refused_with_both_lists(model_classes: list[str]) -> None:
    with pytest.raises(
        InvalidParameterError, match=r"'models' parameter of run_grid.*the data has \['sports'"
    ):
        class_order(model_classes, ["sports", "tech", "world"], model="m", dataset="d", owner="run_grid")
