"""ConceptMetrics: routing by type against hand computations with plain torch, keys, lifecycle and errors."""

from __future__ import annotations

import pytest
import torch
from torchmetrics import Metric
from torchmetrics.classification import (
    BinaryAccuracy,
    BinaryF1Score,
    MulticlassAccuracy,
    MulticlassF1Score,
)
from torchmetrics.regression import MeanAbsoluteError, MeanSquaredError

from xaimetrics.conceptmetrics import Annotations, ConceptAlignmentScore, ConceptMetrics
from xaimetrics.exceptions import InvalidParameterError

# Names with dots and words that are attributes of nn.Module / ModuleDict / dict.
LABELS = ["is.round", "color", "training", "shape.v2", "weight", "update"]
TYPES = ["binary", "categorical", "binary", "categorical", "continuous", "binary"]
CARDS = [1, 3, 1, 4, 1, 1]
N = 41


@pytest.fixture
def ann() -> Annotations:
    return Annotations(LABELS, cardinalities=CARDS, types=TYPES)


def make_batch(n: int = N, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Asymmetric logits (11 columns) and concept-space targets (6 columns) where every class occurs."""
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(n, 11, generator=g) * 2 + 0.3
    target = torch.stack(
        [
            (torch.rand(n, generator=g) < 0.7).float(),
            torch.arange(n).remainder(3)[torch.randperm(n, generator=g)].float(),
            (torch.rand(n, generator=g) < 0.35).float(),
            torch.arange(n).remainder(4)[torch.randperm(n, generator=g)].float(),
            torch.randn(n, generator=g),
            (torch.rand(n, generator=g) < 0.5).float(),
        ],
        dim=1,
    )
    return logits, target


# --- hand computations (plain torch) -------------------------------------------------------------------------


def hand_binary_accuracy(p: torch.Tensor, t: torch.Tensor) -> float:
    return ((p > 0.5).float() == t).float().mean().item()


def hand_binary_f1(p: torch.Tensor, t: torch.Tensor) -> float:
    pred = p > 0.5
    truth = t.bool()
    tp = (pred & truth).sum().item()
    fp = (pred & ~truth).sum().item()
    fn = (~pred & truth).sum().item()
    return 2 * tp / (2 * tp + fp + fn)


def hand_macro_f1(block: torch.Tensor, t: torch.Tensor, k: int) -> float:
    pred = block.argmax(dim=1)
    scores = []
    for c in range(k):
        tp = ((pred == c) & (t == c)).sum().item()
        fp = ((pred == c) & (t != c)).sum().item()
        fn = ((pred != c) & (t == c)).sum().item()
        scores.append(2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0)
    return sum(scores) / k


def hand_micro_accuracy(block: torch.Tensor, t: torch.Tensor) -> float:
    return (block.argmax(dim=1) == t.long()).float().mean().item()


def values(results: dict[str, torch.Tensor]) -> dict[str, float]:
    return {k: v.item() for k, v in results.items()}


# --- routing ---------------------------------------------------------------------------------------------------


def test_binary_summary_is_pooled_over_all_binary_concepts(ann: Annotations) -> None:
    logits, target = make_batch()
    metrics = ConceptMetrics(ann, binary={"acc": BinaryAccuracy, "f1": BinaryF1Score})
    metrics.update(logits, target)
    got = values(metrics.compute())
    p = torch.sigmoid(logits[:, [0, 4, 10]])
    t = target[:, [0, 2, 5]]
    assert list(got) == ["SUMMARY-binary_acc", "SUMMARY-binary_f1"]
    assert got["SUMMARY-binary_acc"] == pytest.approx(hand_binary_accuracy(p, t), abs=1e-6)
    assert got["SUMMARY-binary_f1"] == pytest.approx(hand_binary_f1(p, t), abs=1e-6)


def test_categorical_per_block_and_summary_over_different_cardinalities(ann: Annotations) -> None:
    logits, target = make_batch()
    metrics = ConceptMetrics(
        ann,
        categorical={
            "f1": (MulticlassF1Score, {"average": "macro"}),
            "acc": (MulticlassAccuracy, {"average": "micro"}),
        },
        per_concept=True,
    )
    metrics.update(logits, target)
    got = values(metrics.compute())
    color_f1 = hand_macro_f1(logits[:, 1:4], target[:, 1], 3)
    shape_f1 = hand_macro_f1(logits[:, 5:9], target[:, 3], 4)
    color_acc = hand_micro_accuracy(logits[:, 1:4], target[:, 1])
    shape_acc = hand_micro_accuracy(logits[:, 5:9], target[:, 3])
    assert got["color_f1"] == pytest.approx(color_f1, abs=1e-6)
    assert got["shape.v2_f1"] == pytest.approx(shape_f1, abs=1e-6)
    assert got["color_acc"] == pytest.approx(color_acc, abs=1e-6)
    assert got["shape.v2_acc"] == pytest.approx(shape_acc, abs=1e-6)
    # Summary: the mean over categorical concepts, each with its own number of classes.
    assert got["SUMMARY-categorical_f1"] == pytest.approx((color_f1 + shape_f1) / 2, abs=1e-6)
    assert got["SUMMARY-categorical_acc"] == pytest.approx((color_acc + shape_acc) / 2, abs=1e-6)
    # Pooling the padded blocks into one 4-class metric (PyC's summary) mixes class k of "color" with
    # class k of "shape.v2": on this data it gives another number, which we must not report.
    padded = torch.cat([torch.nn.functional.pad(logits[:, 1:4], (0, 1), value=-torch.inf), logits[:, 5:9]])
    pooled_targets = torch.cat([target[:, 1], target[:, 3]])
    mixed = hand_macro_f1(padded, pooled_targets, 4)
    assert abs(mixed - got["SUMMARY-categorical_f1"]) > 1e-3
    # Every categorical metric got num_classes from its own concept.
    classes = {m.num_classes for m in metrics.metrics()}
    assert classes == {3, 4}


def test_per_concept_subset_and_key_order(ann: Annotations) -> None:
    logits, target = make_batch()
    metrics = ConceptMetrics(
        ann,
        binary={"acc": BinaryAccuracy},
        categorical={"acc": (MulticlassAccuracy, {"average": "micro"})},
        continuous={"mse": MeanSquaredError},
        per_concept=["update", "weight", "color"],
        prefix="val",
    )
    metrics.update(logits, target)
    got = values(metrics.compute())
    assert (
        list(got)
        == metrics.keys
        == [
            "val/SUMMARY-binary_acc",
            "val/SUMMARY-categorical_acc",
            "val/SUMMARY-continuous_mse",
            "val/color_acc",
            "val/weight_mse",
            "val/update_acc",
        ]
    )
    assert got["val/update_acc"] == pytest.approx(
        hand_binary_accuracy(torch.sigmoid(logits[:, 10]), target[:, 5])
    )
    assert got["val/color_acc"] == pytest.approx(hand_micro_accuracy(logits[:, 1:4], target[:, 1]))
    mse = ((logits[:, 9] - target[:, 4]) ** 2).mean().item()
    assert got["val/weight_mse"] == pytest.approx(mse, rel=1e-5)
    assert got["val/SUMMARY-continuous_mse"] == pytest.approx(mse, rel=1e-5)


def test_summary_false_reports_only_tracked_concepts(ann: Annotations) -> None:
    logits, target = make_batch()
    metrics = ConceptMetrics(
        ann,
        binary={"acc": BinaryAccuracy},
        categorical={"acc": MulticlassAccuracy},
        summary=False,
        per_concept=["shape.v2"],
    )
    metrics.update(logits, target)
    assert list(metrics.compute()) == ["shape.v2_acc"]
    assert len(metrics.metrics()) == 1


def test_logits_inside_0_1_are_still_treated_as_logits() -> None:
    # torchmetrics would read values in [0, 1] as probabilities and threshold 0.3 to "absent";
    # as logits, sigmoid(0.3) = 0.57 means "present".
    ann = Annotations(["a", "b"], cardinalities=[1, 3])
    logits = torch.tensor([[0.3, 0.2, 0.9, 0.1], [0.1, 0.6, 0.5, 0.4], [0.45, 0.0, 0.0, 0.7]])
    target = torch.tensor([[1, 1], [1, 0], [1, 2]])
    metrics = ConceptMetrics(ann, binary={"acc": BinaryAccuracy}, categorical={"acc": MulticlassAccuracy})
    metrics.update(logits, target)
    assert values(metrics.compute()) == {"SUMMARY-binary_acc": 1.0, "SUMMARY-categorical_acc": 1.0}


def test_probability_inputs_equal_logit_inputs(ann: Annotations) -> None:
    logits, target = make_batch()
    probabilities = logits.clone()
    for c in ann:
        if c.type == "binary":
            probabilities[:, c.slice] = torch.sigmoid(logits[:, c.slice])
        elif c.type == "categorical":
            probabilities[:, c.slice] = torch.softmax(logits[:, c.slice], dim=1)
    specs = {
        "binary": {"f1": BinaryF1Score},
        "categorical": {"f1": MulticlassF1Score},
        "continuous": {"mae": MeanAbsoluteError},
    }
    from_logits = ConceptMetrics(ann, **specs, per_concept=True)
    from_probabilities = ConceptMetrics(ann, **specs, per_concept=True, inputs="probabilities")
    from_logits.update(logits, target)
    from_probabilities.update(probabilities, target)
    expected = values(from_logits.compute())
    got = values(from_probabilities.compute())
    assert got.keys() == expected.keys()
    for key in expected:
        assert got[key] == pytest.approx(expected[key], abs=1e-6)


def test_concept_alignment_score_gets_n_concepts_injected(ann: Annotations) -> None:
    logits, target = make_batch()
    metrics = ConceptMetrics(ann, binary={"cas": ConceptAlignmentScore}, per_concept=["training"])
    metrics.update(logits, target)
    got = values(metrics.compute())
    per_concept = [
        hand_binary_accuracy(torch.sigmoid(logits[:, j]), target[:, i]) for j, i in [(0, 0), (4, 2), (10, 5)]
    ]
    assert got["SUMMARY-binary_cas"] == pytest.approx(sum(per_concept) / 3, abs=1e-6)
    assert got["training_cas"] == pytest.approx(per_concept[1], abs=1e-6)
    assert sorted(m.n_concepts for m in metrics.metrics()) == [1, 3]


# --- names ---------------------------------------------------------------------------------------------------


def test_dotted_and_reserved_names_work_end_to_end() -> None:
    labels = ["a.b", "training", "keys", "update", "__class__", "50%.x", "50%2Ex"]
    ann = Annotations(labels, cardinalities=[1, 2, 1, 3, 1, 1, 1])
    logits, target = torch.randn(13, 10, generator=torch.Generator().manual_seed(3)), torch.zeros(13, 7)
    target[:, 1] = torch.arange(13) % 2
    target[:, 3] = torch.arange(13) % 3
    metrics = ConceptMetrics(
        ann, binary={"acc.v1": BinaryAccuracy}, categorical={"training": MulticlassAccuracy}, per_concept=True
    )
    metrics.update(logits, target)
    got = metrics.compute()
    assert set(got) == {
        "SUMMARY-binary_acc.v1",
        "SUMMARY-categorical_training",
        "a.b_acc.v1",
        "training_training",
        "keys_acc.v1",
        "update_training",
        "__class___acc.v1",
        "50%.x_acc.v1",
        "50%2Ex_acc.v1",
    }
    # Each concept has its own state (the escaping is injective).
    assert got["50%.x_acc.v1"].item() == pytest.approx(
        hand_binary_accuracy(torch.sigmoid(logits[:, 8]), target[:, 5])
    )
    assert got["50%2Ex_acc.v1"].item() == pytest.approx(
        hand_binary_accuracy(torch.sigmoid(logits[:, 9]), target[:, 6])
    )
    assert metrics.training is True  # the nn.Module attribute is not shadowed
    assert isinstance(metrics.to(torch.float64), ConceptMetrics)
    assert all("." not in key for key, _ in metrics.named_children())


def test_colliding_result_keys_are_rejected() -> None:
    ann = Annotations(["SUMMARY-binary", "b"])
    with pytest.raises(
        InvalidParameterError,
        match=r"the key 'SUMMARY-binary_acc' twice. It names both the binary summary of 'acc' and metric 'acc' of concept 'SUMMARY-binary'",
    ):
        ConceptMetrics(ann, binary={"acc": BinaryAccuracy}, per_concept=True)
    ann = Annotations(["a_b", "a"])
    with pytest.raises(InvalidParameterError, match=r"the key 'a_b_c' twice.*rename a metric"):
        ConceptMetrics(ann, binary={"c": BinaryAccuracy, "b_c": BinaryAccuracy}, per_concept=True)


# --- lifecycle ---------------------------------------------------------------------------------------------------


def full_metrics(ann: Annotations, **kwargs) -> ConceptMetrics:
    return ConceptMetrics(
        ann,
        binary={"acc": BinaryAccuracy, "f1": BinaryF1Score, "cas": ConceptAlignmentScore},
        categorical={"f1": MulticlassF1Score, "acc": (MulticlassAccuracy, {"average": "micro"})},
        continuous={"mse": MeanSquaredError},
        per_concept=True,
        **kwargs,
    )


def test_accumulated_equals_single_batch(ann: Annotations) -> None:
    logits, target = make_batch()
    one_shot = full_metrics(ann)
    one_shot.update(logits, target)
    batched = full_metrics(ann)
    for rows in (slice(0, 7), slice(7, 30), slice(30, N)):
        batched.update(logits[rows], target[rows])
    expected = values(one_shot.compute())
    got = values(batched.compute())
    assert got.keys() == expected.keys() and len(got) == 3 + 2 + 1 + 3 * 3 + 2 * 2 + 1
    for key in expected:
        assert got[key] == pytest.approx(expected[key], abs=1e-6), key


def test_forward_returns_batch_values_and_accumulates(ann: Annotations) -> None:
    logits, target = make_batch()
    metrics = full_metrics(ann)
    first = metrics(logits[:20], target[:20])
    metrics(logits[20:], target[20:])
    alone = full_metrics(ann)
    alone.update(logits[:20], target[:20])
    assert values(first) == pytest.approx(values(alone.compute()), abs=1e-6)
    everything = full_metrics(ann)
    everything.update(logits, target)
    assert values(metrics.compute()) == pytest.approx(values(everything.compute()), abs=1e-6)


def test_reset_and_clone_give_independent_state(ann: Annotations) -> None:
    logits, target = make_batch()
    train = full_metrics(ann, prefix="train")
    val = train.clone(prefix="val")
    test = train.clone()
    bare = train.clone(prefix="")
    assert val.keys[0] == "val/SUMMARY-binary_acc"
    assert test.keys[0] == "train/SUMMARY-binary_acc"
    assert bare.keys[0] == "SUMMARY-binary_acc" and bare.prefix is None
    train.update(logits[:20], target[:20])
    val.update(logits[20:], target[20:])
    reference = full_metrics(ann)
    reference.update(logits[:20], target[:20])
    assert list(values(train.compute()).values()) == pytest.approx(list(values(reference.compute()).values()))
    reference.reset()
    reference.update(logits[20:], target[20:])
    assert list(values(val.compute()).values()) == pytest.approx(list(values(reference.compute()).values()))
    assert all(not m.update_called for m in test.metrics())
    assert not set(map(id, train.metrics())) & set(map(id, val.metrics()))
    train.reset()
    assert all(not m.update_called for m in train.metrics())


def test_instance_spec_is_cloned_not_mutated(ann: Annotations) -> None:
    logits, target = make_batch()
    template = BinaryF1Score(threshold=0.7)
    metrics = ConceptMetrics(ann, binary={"f1": template}, per_concept=["is.round"])
    metrics.update(logits, target)
    got = values(metrics.compute())
    assert not template.update_called
    p = torch.sigmoid(logits[:, [0, 4, 10]])
    t = target[:, [0, 2, 5]]
    pred = p > 0.7
    tp = (pred & t.bool()).sum().item()
    expected = 2 * tp / (2 * tp + (pred & ~t.bool()).sum().item() + (~pred & t.bool()).sum().item())
    assert got["SUMMARY-binary_f1"] == pytest.approx(expected, abs=1e-6)


def test_no_compute_groups_between_metrics_that_agree_on_the_first_batch() -> None:
    # Two accuracies with different thresholds share identical states after this first batch; a
    # MetricCollection with compute groups would merge them for good. Ours keep their own state.
    ann = Annotations(["a"])
    metrics = ConceptMetrics(ann, binary={"t5": BinaryAccuracy, "t8": (BinaryAccuracy, {"threshold": 0.8})})
    metrics.update(torch.tensor([[3.0], [-3.0]]), torch.tensor([[1], [0]]))
    metrics.update(torch.tensor([[0.5], [1.0], [2.0]]), torch.tensor([[1], [1], [1]]))
    got = values(metrics.compute())
    assert got == pytest.approx({"SUMMARY-binary_t5": 1.0, "SUMMARY-binary_t8": 3 / 5})


def test_leading_dimensions_are_folded_and_empty_batches_ignored(ann: Annotations) -> None:
    logits, target = make_batch(n=12)
    flat = full_metrics(ann)
    flat.update(logits, target)
    nested = full_metrics(ann)
    nested.update(logits.reshape(3, 4, 11), target.reshape(3, 4, 6))
    nested.update(logits[:0], target[:0])
    assert values(nested.compute()) == pytest.approx(values(flat.compute()), abs=1e-6)


def test_dict_valued_metric_results_are_flattened() -> None:
    class TwoNumbers(Metric):
        full_state_update = False

        def __init__(self, **kwargs) -> None:
            super().__init__(**kwargs)
            self.add_state("total", default=torch.tensor(0.0), dist_reduce_fx="sum")
            self.add_state("count", default=torch.tensor(0.0), dist_reduce_fx="sum")

        def update(self, preds: torch.Tensor, target: torch.Tensor) -> None:
            self.total += preds.sum()
            self.count += preds.numel()

        def compute(self) -> dict[str, torch.Tensor]:
            return {"sum": self.total, "mean": self.total / self.count}

    ann = Annotations(["a", "b"], cardinalities=[3, 2])
    metrics = ConceptMetrics(
        ann, categorical={"stats": TwoNumbers}, per_concept=["b"], inputs="probabilities"
    )
    preds = torch.tensor([[0.2, 0.3, 0.5, 1.0, 0.0], [0.1, 0.1, 0.8, 0.25, 0.75]])
    metrics.update(preds, torch.tensor([[2, 0], [2, 1]]))
    got = values(metrics.compute())
    assert got == pytest.approx(
        {
            "SUMMARY-categorical_stats_sum": 2.0,
            "SUMMARY-categorical_stats_mean": (1 / 3 + 1 / 2) / 2,
            "b_stats_sum": 2.0,
            "b_stats_mean": 0.5,
        }
    )


def test_class_wise_summary_is_refused_but_per_concept_works() -> None:
    ann = Annotations(["a", "b"], cardinalities=[3, 2])
    logits = torch.tensor([[0.2, 0.3, 0.5, 1.0, 0.0], [0.1, 0.1, 0.8, 0.25, 0.75]])
    target = torch.tensor([[2, 0], [1, 1]])
    metrics = ConceptMetrics(
        ann, categorical={"acc": (MulticlassAccuracy, {"average": "none"})}, per_concept=True
    )
    metrics.update(logits, target)
    with pytest.raises(
        InvalidParameterError, match=r"Averaging class-wise vectors across concepts would mix"
    ):
        metrics.compute()
    per_concept = ConceptMetrics(
        ann, categorical={"acc": (MulticlassAccuracy, {"average": "none"})}, per_concept=True, summary=False
    )
    per_concept.update(logits, target)
    assert per_concept.compute()["a_acc"].tolist() == [0.0, 0.0, 1.0]


def test_states_follow_the_module_to_a_dtype_and_back(ann: Annotations) -> None:
    logits, target = make_batch()
    metrics = full_metrics(ann).to(torch.float64)
    metrics.update(logits.double(), target.double())
    reference = full_metrics(ann)
    reference.update(logits, target)
    assert values(metrics.compute()) == pytest.approx(values(reference.compute()), abs=1e-6)


def test_repr_names_the_configuration(ann: Annotations) -> None:
    text = repr(ConceptMetrics(ann, binary={"acc": BinaryAccuracy}, per_concept=["update"]))
    assert "binary=['acc']" in text and "per_concept=['update']" in text


# --- errors -------------------------------------------------------------------------------------------------------


def test_logit_width_must_match_annotations(ann: Annotations) -> None:
    metrics = ConceptMetrics(ann, binary={"acc": BinaryAccuracy})
    with pytest.raises(
        InvalidParameterError,
        match=r"'preds' parameter of ConceptMetrics.update must be a tensor of shape \(batch, 11\) \(logit width = sum of cardinalities: is.round 1 \+ color 3",
    ):
        metrics.update(torch.zeros(4, 10), torch.zeros(4, 6))


def test_target_shape_must_match(ann: Annotations) -> None:
    metrics = ConceptMetrics(ann, binary={"acc": BinaryAccuracy})
    with pytest.raises(
        InvalidParameterError, match=r"'target' .* must be a tensor of shape \(4, 6\). Got shape \(4, 5\)"
    ):
        metrics.update(torch.zeros(4, 11), torch.zeros(4, 5))
    with pytest.raises(InvalidParameterError, match=r"class index for categorical concepts \(not one-hot\)"):
        metrics.update(torch.zeros(4, 11), torch.zeros(4, 11))
    with pytest.raises(InvalidParameterError, match=r"shape \(3, 6\). Got shape \(4, 6\)"):
        metrics.update(torch.zeros(3, 11), torch.zeros(4, 6))


def test_label_and_probability_ranges_are_checked(ann: Annotations) -> None:
    metrics = ConceptMetrics(ann, binary={"acc": BinaryAccuracy}, categorical={"acc": MulticlassAccuracy})
    logits, target = make_batch(n=5)
    bad = target.clone()
    bad[2, 3] = 4
    with pytest.raises(
        InvalidParameterError, match=r"integer labels in \[0, 3\] for categorical concept 'shape.v2'. Got 4.0"
    ):
        metrics.update(logits, bad)
    bad = target.clone()
    bad[0, 2] = 0.5
    with pytest.raises(
        InvalidParameterError, match=r"integer labels in \[0, 1\] for binary concept 'training'"
    ):
        metrics.update(logits, bad)
    probabilities = ConceptMetrics(ann, binary={"acc": BinaryAccuracy}, inputs="probabilities")
    with pytest.raises(
        InvalidParameterError,
        match=r"probabilities in \[0, 1\] for concept 'is.round'.*Pass inputs='logits'",
    ):
        probabilities.update(logits, target)
    with pytest.raises(
        InvalidParameterError, match=r"must be a floating-point torch.Tensor. Got dtype torch.int64"
    ):
        metrics.update(logits.long(), target)
    unchecked = ConceptMetrics(ann, binary={"acc": BinaryAccuracy}, validate_args=False)
    unchecked.update(logits, target)  # no range checks at all


def test_unknown_concept_in_per_concept(ann: Annotations) -> None:
    with pytest.raises(
        InvalidParameterError, match=r"names of annotated concepts. Got unknown concept\(s\) \['colour'\]"
    ):
        ConceptMetrics(ann, binary={"acc": BinaryAccuracy}, per_concept=["color", "colour"])
    with pytest.raises(InvalidParameterError, match=r"Wrap a single name in a list: \['color'\]"):
        ConceptMetrics(ann, binary={"acc": BinaryAccuracy}, per_concept="color")
    with pytest.raises(InvalidParameterError, match=r"distinct concept names"):
        ConceptMetrics(ann, binary={"acc": BinaryAccuracy}, per_concept=["color", "color"])


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        ("accuracy", "Got 'accuracy' for metric 'm'. Unknown metric spec"),
        (len, "Unknown metric spec"),
        ((len, {}), "a pair whose first item is <built-in function len>"),
        ((BinaryAccuracy, ["threshold"]), "a pair whose second item is list"),
        ((BinaryAccuracy, {}, {}), "Unknown metric spec"),
        (torch.nn.Linear(2, 2), "Unknown metric spec"),
    ],
)
def test_unknown_metric_spec(ann: Annotations, spec: object, match: str) -> None:
    with pytest.raises(InvalidParameterError, match=match):
        ConceptMetrics(ann, binary={"m": spec})


def test_spec_argument_errors(ann: Annotations) -> None:
    with pytest.raises(
        InvalidParameterError, match=r"must be a dict mapping metric names to specs. Got list"
    ):
        ConceptMetrics(ann, binary=[BinaryAccuracy])
    with pytest.raises(InvalidParameterError, match=r"specs without 'num_classes'.*Remove 'num_classes'"):
        ConceptMetrics(ann, categorical={"acc": (MulticlassAccuracy, {"num_classes": 3})})
    with pytest.raises(InvalidParameterError, match=r"specs without 'n_concepts'"):
        ConceptMetrics(ann, binary={"cas": (ConceptAlignmentScore, {"n_concepts": 3})})
    with pytest.raises(
        InvalidParameterError,
        match=r"a metric with num_classes=4 for concept 'shape.v2'.*Pass the class instead",
    ):
        ConceptMetrics(ann, categorical={"acc": MulticlassAccuracy(num_classes=3)})
    with pytest.raises(
        InvalidParameterError,
        match=r"metric 'acc' failing for the binary summary. BinaryAccuracy.*raised ValueError: Expected argument `threshold`",
    ):
        ConceptMetrics(ann, binary={"acc": (BinaryAccuracy, {"threshold": 2.0})})
    with pytest.raises(
        InvalidParameterError,
        match=r"'inputs' parameter of ConceptMetrics must be one of 'logits', 'probabilities'",
    ):
        ConceptMetrics(ann, binary={"acc": BinaryAccuracy}, inputs="probs")
    with pytest.raises(InvalidParameterError, match=r"'annotations' parameter of ConceptMetrics"):
        ConceptMetrics({"labels": ["a"]}, binary={"acc": BinaryAccuracy})


def test_instance_spec_with_matching_classes_is_accepted() -> None:
    ann = Annotations(["a", "b", "c"], cardinalities=[3, 1, 3])
    metrics = ConceptMetrics(
        ann, categorical={"acc": MulticlassAccuracy(num_classes=3, average="micro")}, per_concept=True
    )
    logits = torch.tensor([[1.0, 0.0, 0.0, 5.0, 0.0, 0.0, 1.0], [0.0, 2.0, 0.0, -5.0, 0.0, 3.0, 1.0]])
    metrics.update(logits, torch.tensor([[0, 1, 2], [1, 0, 2]]))
    assert values(metrics.compute()) == pytest.approx(
        {"SUMMARY-categorical_acc": 0.75, "a_acc": 1.0, "c_acc": 0.5}
    )


def test_metrics_for_a_missing_type_warn() -> None:
    with pytest.warns(UserWarning, match=r"categorical metrics \['acc'\] are ignored"):
        metrics = ConceptMetrics(
            Annotations(["a"]), binary={"acc": BinaryAccuracy}, categorical={"acc": MulticlassAccuracy}
        )
    assert metrics.keys == ["SUMMARY-binary_acc"]


# -- non-finite predictions or continuous targets (issue #11, class 13) ----------------------------------------
_LOGIT_COLUMNS = {"is.round": 0, "color": 2, "training": 4, "shape.v2": 7, "weight": 9, "update": 10}


@pytest.mark.parametrize("concept", list(_LOGIT_COLUMNS))
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
@pytest.mark.parametrize("call", ["update", "forward"])
def test_non_finite_predictions_are_an_error_not_a_zero_accuracy(ann, concept, bad, call) -> None:
    metrics = ConceptMetrics(
        ann, binary={"acc": BinaryAccuracy}, categorical={"acc": (MulticlassAccuracy, {"average": "micro"})},
        continuous={"mse": MeanSquaredError},
    )  # fmt: skip
    logits, target = make_batch()
    logits[5, _LOGIT_COLUMNS[concept]] = bad
    with pytest.raises(
        InvalidParameterError,
        match=rf"'preds' parameter of ConceptMetrics.update must be finite logits for concept '{concept}'.*row 5",
    ):
        getattr(metrics, call)(logits, target)
    assert all(int(m.update_count) == 0 for m in metrics.metrics())  # nothing was accumulated


def test_non_finite_probabilities_and_continuous_targets(ann) -> None:
    metrics = ConceptMetrics(ann, binary={"acc": BinaryAccuracy}, continuous={"mse": MeanSquaredError},
                             inputs="probabilities")  # fmt: skip
    logits, target = make_batch()
    probabilities = torch.sigmoid(logits)
    probabilities[3, 0] = float("nan")
    with pytest.raises(InvalidParameterError, match=r"finite probabilities for concept 'is.round'"):
        metrics.update(probabilities, target)
    target[8, 4] = float("nan")
    with pytest.raises(
        InvalidParameterError, match=r"'target' parameter .* finite values for continuous concept 'weight'"
    ):
        metrics.update(torch.sigmoid(logits), target)
    # an unscored concept type is not checked (its columns are never read)
    binary_only = ConceptMetrics(ann, binary={"acc": BinaryAccuracy})
    logits, target = make_batch()
    logits[0, 9] = float("nan")  # the continuous column
    binary_only.update(logits, target)
    assert torch.isfinite(binary_only.compute()["SUMMARY-binary_acc"])
