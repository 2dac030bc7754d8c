"""A fitted explanation as data a person or another tool reads: one record per concept, written to JSON or CSV.

Each record holds the concept's description (its words or its label), its global importance for every class
(eq. 4, as the prompts show it), its top-activating concept-fit texts and its direction in the model's
activation space (the extractor's decoder row), so that the concepts a ConSim score rests on can be inspected,
compared across seeds or loaded elsewhere.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from xaimetrics._typing import Array
from xaimetrics._validation import check_positive_int, invalid
from xaimetrics.consim._explanation import Explanation, global_importances_of

if TYPE_CHECKING:
    from xaimetrics._protocols import SplitModel

__all__ = ["concept_records", "export_concepts"]

_OWNER = "export_concepts"
_SUFFIXES = (".json", ".csv")


def concept_records(
    explanation: Explanation,
    texts: Sequence[str],
    class_names: Sequence[str],
    *,
    model: SplitModel | None = None,
    n_texts: int = 5,
) -> list[dict[str, Any]]:
    """One record per concept of a fitted ``explanation``: ``concept``, ``description``, ``importance``
    (``{class: Φ}``, eq. 4; needs ``model`` unless the explanation carries them), ``top_texts`` (the
    ``n_texts`` concept-fit ``texts`` it activates most, with their activations) and ``direction`` (the
    extractor's decoder row).

    Args:
        explanation: an :class:`Explanation` with a fitted ``extractor`` and the concept-fit ``activations``.
        texts: the concept-fit texts, in the order of ``explanation.activations``.
        class_names: the model's classes, naming the importance of each class.
        model: the split model (computes the importances when the explanation has none).
        n_texts: top-activating texts kept per concept.

    Example:
        >>> import numpy as np
        >>> from xaimetrics.concepts import PCA
        >>> A = np.array([[2.0, 0.0], [0.0, 1.0], [1.0, 0.1], [0.1, 0.2]])
        >>> ex = Explanation(extractor=PCA(n_concepts=1).fit(A), interpretation={0: ["big"]}, activations=A,
        ...                  global_importances=[[0.2], [0.8]])
        >>> record = concept_records(ex, ["a", "b", "c", "d"], ["neg", "pos"], n_texts=2)[0]
        >>> record["description"], record["importance"], [t["text"] for t in record["top_texts"]]
        (['big'], {'neg': 0.2, 'pos': 0.8}, ['a', 'c'])
    """
    n_texts = check_positive_int(n_texts, "n_texts", _OWNER)
    extractor = explanation.extractor
    activations = explanation.activations
    if extractor is None or activations is None:
        raise invalid(
            "explanation", _OWNER, "a fitted explanation (its extractor and its concept-fit activations)",
            "a baseline without concepts", "Export the concepts of a concept method, not of NoExplanation.",
        )  # fmt: skip
    if len(texts) != len(activations):
        raise invalid("texts", _OWNER, f"the {len(activations)} concept-fit texts", f"{len(texts)} texts")
    if hasattr(activations, "shape"):
        vectors = cast("Array", activations)
    elif model is not None:  # a split inside the network keeps the texts; h gives their activations
        vectors = model.activations(list(texts))
    else:
        raise invalid(
            "model", _OWNER, "the split model, whose activations of the texts the concepts encode", None
        )
    scores = _numpy(extractor.encode(vectors))
    importances = explanation.global_importances
    if importances is None:
        importances = global_importances_of(model, extractor, activations, len(class_names))
    phi = _numpy(importances)
    descriptions = explanation.interpretation_mapping() or {}
    directions = _numpy(extractor.components_)
    records = []
    for concept in range(scores.shape[1]):
        top = np.argsort(-scores[:, concept], kind="stable")[:n_texts]
        records.append({
            "concept": concept,
            "description": _plain(descriptions.get(concept)),
            "importance": {str(name): float(phi[k, concept]) for k, name in enumerate(class_names)},
            "top_texts": [{"text": texts[i], "activation": float(scores[i, concept])} for i in top],
            "direction": [float(v) for v in directions[concept]],
        })  # fmt: skip
    return records


def export_concepts(records: Sequence[dict[str, Any]], path: str | os.PathLike[str]) -> Path:
    """Write :func:`concept_records` to ``path``: ``.json`` as they are, ``.csv`` one row per concept (the
    description, importances, top texts and direction as JSON cells). Returns the path.

    Example:
        >>> import tempfile
        >>> rows = [{"concept": 0, "description": ["big"], "importance": {"pos": 0.8}, "top_texts": [],
        ...          "direction": [1.0, 0.0]}]
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     print(export_concepts(rows, Path(folder) / "c.csv").read_text().splitlines()[1])
        0,"[""big""]","{""pos"": 0.8}",[],"[1.0, 0.0]"
    """
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix not in _SUFFIXES:
        raise invalid("path", _OWNER, "a file ending in .json or .csv", str(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".json":
        target.write_text(json.dumps(list(records), indent=2, ensure_ascii=False), encoding="utf-8")
        return target
    columns = ["concept", "description", "importance", "top_texts", "direction"]
    with target.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        for record in records:
            writer.writerow([
                record["concept"],
                *(json.dumps(record[c], ensure_ascii=False) for c in columns[1:]),
            ])  # fmt: skip
    return target


def _plain(description: object) -> object:
    """A description as JSON: a :class:`~xaimetrics.concepts.ConceptInterpretation` as its ``to_dict()``
    (aligned and opposed words, label), words or a label as they are."""
    to_dict = getattr(description, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    return list(description) if isinstance(description, tuple) else description


def _numpy(value: object) -> np.ndarray:
    detach = getattr(value, "detach", None)
    if callable(detach):
        value = detach().cpu().numpy()
    return np.asarray(value, dtype=np.float64)
