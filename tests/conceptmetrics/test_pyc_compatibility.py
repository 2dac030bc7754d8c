"""Same inputs, same numbers as PyC (``pytorch-concepts``) wherever the two definitions agree."""

from __future__ import annotations

import pytest
import torch
from torchmetrics.classification import (
    BinaryAccuracy,
    BinaryAUROC,
    BinaryF1Score,
    MulticlassAccuracy,
    MulticlassF1Score,
)

from xaimetrics.conceptmetrics import Annotations, ConceptMetrics

pyc = pytest.importorskip("torch_concepts")
pyc_nn = pytest.importorskip("torch_concepts.nn")

# No dots: PyC's ModuleDict keys cannot hold them (ours can, see test_concept_metrics.py).
LABELS = ["is_round", "color", "big", "shape", "shiny"]
CARDS = [1, 3, 1, 4, 1]


def inputs() -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(11)
    n = 57
    logits = torch.randn(n, sum(CARDS), generator=g) * 1.7 - 0.2
    target = torch.stack(
        [
            (torch.rand(n, generator=g) < 0.65).float(),
            torch.randint(0, 3, (n,), generator=g).float(),
            (torch.rand(n, generator=g) < 0.3).float(),
            torch.randint(0, 4, (n,), generator=g).float(),
            (torch.rand(n, generator=g) < 0.5).float(),
        ],
        dim=1,
    )
    return logits, target


def run_both(**specs) -> tuple[dict[str, float], dict[str, float]]:
    logits, target = inputs()
    ours = ConceptMetrics(Annotations(LABELS, cardinalities=CARDS), per_concept=True, prefix="test", **specs)
    pyc_ann = pyc.Annotations(labels=LABELS, cardinalities=CARDS)
    theirs = pyc_nn.ConceptMetrics(annotations=pyc_ann, per_concept=True, prefix="test", **specs)
    for rows in (slice(0, 20), slice(20, 57)):
        ours.update(logits[rows], target[rows])
        theirs.update(
            pyc.AnnotatedTensor(logits[rows], pyc_ann),
            pyc.AnnotatedTensor(target[rows], pyc_ann.to_concept_space()),
        )
    return (
        {k: v.item() for k, v in ours.compute().items()},
        {k: v.item() for k, v in theirs.compute().items()},
    )


def test_same_keys_and_numbers_where_definitions_agree() -> None:
    ours, theirs = run_both(
        binary={"acc": BinaryAccuracy, "f1": BinaryF1Score, "auroc": BinaryAUROC},
        categorical={
            "acc": (MulticlassAccuracy, {"average": "micro"}),
            "f1_macro": (MulticlassF1Score, {"average": "macro"}),
        },
    )
    assert set(ours) == set(theirs)
    # Summary micro accuracy: PyC pools the padded blocks, we average per concept; every concept is scored
    # on the same samples, so the two coincide. Everything except the class-wise categorical summary agrees.
    for key in theirs:
        if key != "test/SUMMARY-categorical_f1_macro":
            assert ours[key] == pytest.approx(theirs[key], abs=1e-6), key


def test_class_wise_categorical_summary_is_where_we_differ() -> None:
    ours, theirs = run_both(
        binary={"acc": BinaryAccuracy}, categorical={"f1": (MulticlassF1Score, {"average": "macro"})}
    )
    # Ours: the mean of the per-concept macro F1 scores (each over its own classes).
    assert ours["test/SUMMARY-categorical_f1"] == pytest.approx(
        (theirs["test/color_f1"] + theirs["test/shape_f1"]) / 2, abs=1e-6
    )
    # PyC's pools class k of "color" with class k of "shape" into one 4-class metric: another number.
    assert abs(ours["test/SUMMARY-categorical_f1"] - theirs["test/SUMMARY-categorical_f1"]) > 1e-3
