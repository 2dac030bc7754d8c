"""Classes are matched by name, never by position.

A model's class ids index *its* class names (``id2label``); a dataset's labels index *its* class names. When the
two lists differ in order (a model fine-tuned on ``world, sports, tech`` and a data file read as ``sports, tech,
world``), showing the model's predictions under the data's names puts every sample under another class, silently.
:func:`align_classes` compares the two lists before anything is asked: the same list is used as is, the same names
in another order relabel the data in the model's order (and say so), another set is refused with both lists.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from xaimetrics.exceptions import InvalidParameterError

if TYPE_CHECKING:
    from xaimetrics.data import TextDataset

__all__ = ["align_classes", "class_order"]


def class_order(
    model_classes: Sequence[object],
    data_classes: Sequence[object],
    *,
    model: str,
    dataset: str,
    owner: str,
    argument: str = "models",
) -> np.ndarray | None:
    """Match a model's classes with the data's by name: ``None`` when they are the same list, else the array
    ``order`` with ``order[data_label] = model_label`` (the same names in another order).

    Raises:
        InvalidParameterError: another set of classes (other names, or another number), with both lists.

    Example:
        >>> class_order(["no", "yes"], ["no", "yes"], model="m", dataset="d", owner="run_grid") is None
        True
        >>> class_order(["world", "sports", "tech"], ["sports", "tech", "world"], model="m", dataset="d", owner="run_grid")
        array([1, 2, 0])
        >>> class_order(["cats", "dogs"], ["no", "yes"], model="m", dataset="d", owner="run_grid")
        Traceback (most recent call last):
        ...
        xaimetrics.exceptions.InvalidParameterError: The 'models' parameter of run_grid must be a classifier of the classes of 'd' (matched by name). Got 'm' with the classes ['cats', 'dogs']; the data has ['no', 'yes']. ...
    """
    model_names = [str(c) for c in model_classes]
    data_names = [str(c) for c in data_classes]
    if model_names == data_names:
        return None
    if sorted(model_names) != sorted(data_names) or len(set(model_names)) != len(model_names):
        raise InvalidParameterError(
            f"The '{argument}' parameter of {owner} must be a classifier of the classes of {dataset!r} (matched by "
            f"name). Got {model!r} with the classes {model_names}; the data has {data_names}. Fine-tune the model "
            "on this dataset, or name its classes as the data does (id2label in its config.json)."
        )
    position = {name: i for i, name in enumerate(model_names)}
    return np.array([position[name] for name in data_names], dtype=np.int64)


def align_classes(
    data: TextDataset,
    model_classes: Sequence[object] | None,
    *,
    model: str,
    dataset: str,
    owner: str,
    argument: str = "models",
) -> tuple[TextDataset, str | None]:
    """``data`` with its labels in the model's class order (:func:`class_order`), and the note to show when they
    were mapped (``None`` when nothing changed; a model without ``class_names`` is taken in the data's order).

    Example:
        >>> import numpy as np
        >>> from xaimetrics.data import TextDataset
        >>> data = TextDataset(["a goal", "a chip"], np.array([0, 1]), ["sports", "tech"])
        >>> aligned, note = align_classes(data, ["tech", "sports"], model="m", dataset="d", owner="run_grid")
        >>> aligned.class_names, aligned.labels.tolist(), note
        (['tech', 'sports'], [1, 0], "The classes of model 'm' are those of 'd' in another order (model: ['tech', 'sports']; data: ['sports', 'tech']): they are matched by name.")
    """
    if model_classes is None:
        return data, None
    order = class_order(
        model_classes, data.class_names, model=model, dataset=dataset, owner=owner, argument=argument
    )
    if order is None:
        return data, None
    from xaimetrics.data import TextDataset

    names = [str(c) for c in model_classes]
    note = (
        f"The classes of model {model!r} are those of {dataset!r} in another order (model: {names}; data: "
        f"{list(data.class_names)}): they are matched by name."
    )
    return TextDataset(data.texts, order[data.labels], names, data.name, data.split, dict(data.info)), note
