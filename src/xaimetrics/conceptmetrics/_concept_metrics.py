"""ConceptMetrics: torchmetrics metrics routed by concept type, with summary and per-concept results.

Definitions (see ``docs/conceptmetrics.md``):

- **binary summary** (``SUMMARY-binary_<name>``): one metric fed the probabilities of *all* binary concepts,
  shape ``(batch, n_binary)``, i.e. pooled over every (sample, concept) pair;
- **categorical summary** (``SUMMARY-categorical_<name>``): the unweighted mean over categorical concepts of
  the per-concept values, each concept scored by its own metric built with ``num_classes`` = its cardinality.
  Class ``k`` of one concept is never pooled with class ``k`` of another (PyC pads every block to the largest
  cardinality and pools them, which mixes unrelated classes for class-wise metrics). For micro accuracy the
  two definitions coincide, since every concept is scored on the same samples;
- **continuous summary** (``SUMMARY-continuous_<name>``): one metric fed all continuous columns;
- **per concept** (``<concept>_<name>``): one metric per tracked concept.

Probabilities are derived explicitly — sigmoid for a binary logit, softmax over a categorical block — and
handed to torchmetrics as values in [0, 1], so torchmetrics' logits-or-probabilities range heuristic never
decides anything. Every metric owns its state: no ``MetricCollection`` compute groups, which could merge the
states of two metrics that happened to agree after the first batch.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Literal, TypeVar, cast

import torch
from torch import nn
from torchmetrics import Metric

from xaimetrics._validation import Kind, Options, Rule, invalid, validate_params
from xaimetrics.conceptmetrics._annotations import CONCEPT_TYPES, Annotations, AnnotationsLike
from xaimetrics.conceptmetrics._specs import MetricSpec, ResolvedSpec, resolve_specs

__all__ = ["ConceptMetrics"]

_OWNER = "ConceptMetrics"
_PREFIX: Rule = (Kind(str, "a string or None"), None)
InputKind = Literal["logits", "probabilities"]
SpecDict = Mapping[str, MetricSpec]
#: what a torchmetrics metric computes: a tensor, or a dict of them (the result keys get ``_<subkey>``)
MetricValue = torch.Tensor | Mapping[str, torch.Tensor]


_Value = TypeVar("_Value")


def _group(metrics: nn.Module) -> Mapping[str, Metric]:
    """One ``nn.ModuleDict`` of torchmetrics metrics built in ``ConceptMetrics.__init__``, typed as such."""
    return cast("Mapping[str, Metric]", metrics)


def _module_key(name: str) -> str:
    """An injective ModuleDict key for any name: no dots, never an existing attribute (``training``, ...)."""
    return ":" + name.replace("%", "%25").replace(".", "%2E")


class ConceptMetrics(nn.Module):
    """Type-aware metrics for concept models: binary, categorical and continuous concepts, per type and per concept.

    Args:
        annotations: the concepts (:class:`Annotations`, or any object with ``labels``, ``cardinalities``
            and ``types`` such as PyC's).
        binary, categorical, continuous: ``{name: spec}`` for the concepts of that type, each spec a
            ``torchmetrics.Metric`` class, a ``(class, kwargs)`` pair or a Metric instance. ``num_classes``
            (categorical) and ``n_concepts`` are filled in from the annotations when the constructor declares
            them; passing them in ``kwargs`` is an error.
        per_concept: ``False`` (none), ``True`` (every concept) or a list of concept names to report one
            result per concept for.
        summary: report the ``SUMMARY-<type>_<name>`` results.
        prefix: prepended as ``"<prefix>/"`` to every result key (e.g. ``"train"``).
        inputs: ``"logits"`` (default: sigmoid / softmax are applied here) or ``"probabilities"`` (binary
            columns are P(concept), categorical blocks are distributions). Continuous columns are used as is.
        validate_args: check label values and the probability range on every update (one device sync per
            check; turn off in tight training loops once the pipeline is trusted).

    Result keys (:attr:`keys`): ``[<prefix>/]SUMMARY-binary_<name>``, ``SUMMARY-categorical_<name>``,
    ``SUMMARY-continuous_<name>``, then ``<concept>_<name>`` per tracked concept, in label order.

    Raises:
        InvalidParameterError: for unknown spec forms, injected arguments passed by hand, unknown concepts in
            ``per_concept``, or two results that would get the same key.

    Example:
        >>> from torchmetrics.classification import BinaryAccuracy, MulticlassAccuracy
        >>> ann = Annotations(["is_round", "color", "big"], cardinalities=[1, 3, 1])
        >>> metrics = ConceptMetrics(ann, binary={"acc": BinaryAccuracy},
        ...                          categorical={"acc": (MulticlassAccuracy, {"average": "micro"})},
        ...                          per_concept=["color"], prefix="val")
        >>> logits = torch.tensor([[2.0, 0.1, 0.5, -1.0, -0.3],
        ...                        [-1.0, 0.0, 0.2, 3.0, 0.4],
        ...                        [0.5, 1.0, 0.0, 0.0, -2.0]])
        >>> target = torch.tensor([[1, 1, 0], [1, 2, 1], [1, 1, 1]])
        >>> metrics.update(logits, target)
        >>> {key: round(value.item(), 4) for key, value in metrics.compute().items()}
        {'val/SUMMARY-binary_acc': 0.6667, 'val/SUMMARY-categorical_acc': 0.6667, 'val/color_acc': 0.6667}
    """

    # index buffers registered in __init__ (declared for the type checker)
    _binary_columns: torch.Tensor
    _binary_targets: torch.Tensor
    _continuous_columns: torch.Tensor
    _continuous_targets: torch.Tensor

    @validate_params(
        {
            "summary": Kind(bool, "True or False"),
            "prefix": _PREFIX,
            "inputs": Options(("logits", "probabilities")),
        }
    )
    def __init__(
        self,
        annotations: Annotations | AnnotationsLike,
        binary: SpecDict | None = None,
        categorical: SpecDict | None = None,
        continuous: SpecDict | None = None,
        *,
        per_concept: bool | Sequence[str] = False,
        summary: bool = True,
        prefix: str | None = None,
        inputs: InputKind = "logits",
        validate_args: bool = True,
    ) -> None:
        super().__init__()
        self.annotations = Annotations.coerce(annotations, _OWNER)
        ann = self.annotations
        self.summary = summary
        self.inputs: InputKind = inputs
        self.validate_args = bool(validate_args)
        self._prefix = prefix
        self.specs: dict[str, list[ResolvedSpec]] = {
            "binary": resolve_specs(binary, "binary"),
            "categorical": resolve_specs(categorical, "categorical"),
            "continuous": resolve_specs(continuous, "continuous"),
        }
        groups = ann.type_groups
        for kind in CONCEPT_TYPES:
            if self.specs[kind] and not groups[kind]["labels"]:
                warnings.warn(
                    f"ConceptMetrics: {kind} metrics {[s.name for s in self.specs[kind]]} are ignored: the "
                    f"annotations have no {kind} concept.",
                    UserWarning,
                    stacklevel=2,
                )
        self.tracked_concepts: tuple[str, ...] = _check_per_concept(per_concept, ann)

        for kind in ("binary", "continuous"):
            self.register_buffer(
                f"_{kind}_columns",
                torch.tensor(groups[kind]["logits_idx"], dtype=torch.long),
                persistent=False,
            )
            self.register_buffer(
                f"_{kind}_targets",
                torch.tensor(groups[kind]["concept_idx"], dtype=torch.long),
                persistent=False,
            )

        # Pooled summaries: one metric fed every column of its type.
        self._pooled = nn.ModuleDict()
        if summary:
            for kind in ("binary", "continuous"):
                n_kind = len(groups[kind]["labels"])
                if self.specs[kind] and n_kind:
                    self._pooled[kind] = nn.ModuleDict(
                        {
                            _module_key(spec.name): spec.build(
                                n_concepts=n_kind, num_classes=None, where=f"the {kind} summary"
                            )
                            for spec in self.specs[kind]
                        }
                    )
        # One metric per concept: the tracked concepts, and every categorical concept for its summary.
        self._per_concept = nn.ModuleDict()
        tracked = set(self.tracked_concepts)
        for concept in ann:
            needed = concept.name in tracked or (summary and concept.type == "categorical")
            if needed and self.specs[concept.type]:
                self._per_concept[_module_key(concept.name)] = nn.ModuleDict(
                    {
                        _module_key(spec.name): spec.build(
                            n_concepts=1,
                            num_classes=concept.cardinality if concept.type == "categorical" else None,
                            where=f"concept {concept.name!r}",
                        )
                        for spec in self.specs[concept.type]
                    }
                )
        self._check_keys()

    # --- result keys ---------------------------------------------------------------------------------------

    @property
    def prefix(self) -> str | None:
        """The prefix of the result keys (``None``: no prefix)."""
        return self._prefix

    @property
    def keys(self) -> list[str]:
        """The keys :meth:`compute` returns (metrics returning a dict add ``_<subkey>`` to theirs)."""
        return [key for key, _ in self._plan()]

    def _plan(self) -> list[tuple[str, tuple[str, ...]]]:
        """``(result key, source)`` in output order; a source is ``("pooled", type, metric)``,
        ``("mean", metric)`` (categorical summary) or ``("concept", concept, metric)``."""
        pfx = f"{self._prefix}/" if self._prefix else ""
        plan: list[tuple[str, tuple[str, ...]]] = []
        if self.summary:
            for kind in CONCEPT_TYPES:
                if not self.annotations.type_groups[kind]["labels"]:
                    continue
                for spec in self.specs[kind]:
                    source = ("mean", spec.name) if kind == "categorical" else ("pooled", kind, spec.name)
                    plan.append((f"{pfx}SUMMARY-{kind}_{spec.name}", source))
        for name in self.tracked_concepts:
            kind = self.annotations.concept(name).type
            for spec in self.specs[kind]:
                plan.append((f"{pfx}{name}_{spec.name}", ("concept", name, spec.name)))
        return plan

    def _check_keys(self) -> None:
        seen: dict[str, tuple[str, ...]] = {}
        for key, source in self._plan():
            if key in seen:
                raise invalid(
                    "per_concept",
                    _OWNER,
                    "concepts and metric names whose result keys are all different",
                    f"the key {key!r} twice",
                    f"It names both {_describe(seen[key])} and {_describe(source)}: rename a metric (the dict key "
                    "of its spec) or leave one of the concepts out of per_concept.",
                )
            seen[key] = source

    # --- lifecycle -----------------------------------------------------------------------------------------

    def update(self, preds: torch.Tensor, target: torch.Tensor) -> None:
        """Route one batch to every metric.

        Args:
            preds: ``(batch, annotations.size)`` logits (or probabilities, see ``inputs``): one block per
                concept in label order. Extra leading dimensions are folded into the batch.
            target: ``(batch, len(annotations))`` ground truth, one column per concept: 0/1 for binary,
                the class index for categorical, the value for continuous.

        Raises:
            InvalidParameterError: if a shape does not match the annotations or (``validate_args``) a label
                or probability is out of range.
        """
        self._dispatch(preds, target, lambda metric, p, t: metric.update(p, t))

    def forward(self, preds: torch.Tensor, target: torch.Tensor) -> dict[str, torch.Tensor]:
        """Accumulate one batch (like :meth:`update`) and return the values of that batch alone."""
        values = self._dispatch(preds, target, lambda metric, p, t: metric(p, t))
        return self._assemble(values) if values else {}

    def compute(self) -> dict[str, torch.Tensor]:
        """The accumulated results, ``{key: value}`` (synchronised across processes by torchmetrics)."""
        values: dict[tuple[str, ...], MetricValue] = {}
        for kind, metrics in self._pooled.items():
            for spec in self.specs[kind]:
                values[("pooled", kind, spec.name)] = _group(metrics)[_module_key(spec.name)].compute()
        for concept in self.annotations:
            key = _module_key(concept.name)
            if key in self._per_concept:
                for spec in self.specs[concept.type]:
                    metric = _group(self._per_concept[key])[_module_key(spec.name)]
                    values[("concept", concept.name, spec.name)] = metric.compute()
        return self._assemble(values)

    def reset(self) -> None:
        """Clear the state of every metric."""
        for metric in self.metrics():
            metric.reset()

    @validate_params({"prefix": _PREFIX})
    def clone(self, prefix: str | None = None) -> ConceptMetrics:
        """An independent copy with fresh (reset) state; ``prefix`` replaces the prefix (``None`` keeps it,
        ``""`` removes it).

        Example:
            >>> from torchmetrics.classification import BinaryAccuracy
            >>> metrics = ConceptMetrics(Annotations(["a", "b"]), binary={"acc": BinaryAccuracy})
            >>> metrics.clone(prefix="train").keys, metrics.keys
            (['train/SUMMARY-binary_acc'], ['SUMMARY-binary_acc'])
        """
        cloned = copy.deepcopy(self)
        if prefix is not None:
            cloned._prefix = prefix or None
        cloned.reset()
        return cloned

    def metrics(self) -> list[Metric]:
        """Every underlying torchmetrics metric (each owns its state), pooled summaries first."""
        groups = [*self._pooled.values(), *self._per_concept.values()]
        return [metric for group in groups for metric in _group(group).values()]

    # --- internals -----------------------------------------------------------------------------------------

    def _dispatch(
        self,
        preds: torch.Tensor,
        target: torch.Tensor,
        call: Callable[[Metric, torch.Tensor, torch.Tensor], _Value],
    ) -> dict[tuple[str, ...], _Value]:
        """Check a batch, derive probabilities and call ``call(metric, preds, target)`` for every metric."""
        preds, target = self._check_batch(preds, target)
        values: dict[tuple[str, ...], _Value] = {}
        if preds.shape[0] == 0:
            return values
        columns = {
            "binary": self._binary_probabilities(preds),
            "continuous": preds.index_select(1, self._continuous_columns.to(preds.device)),
        }
        targets = {
            "binary": target.index_select(1, self._binary_targets.to(target.device)).long(),
            "continuous": target.index_select(1, self._continuous_targets.to(target.device)),
        }
        for kind, metrics in self._pooled.items():
            for spec in self.specs[kind]:
                metric = _group(metrics)[_module_key(spec.name)]
                values[("pooled", kind, spec.name)] = call(metric, columns[kind], targets[kind])
        positions = {kind: 0 for kind in CONCEPT_TYPES}
        for concept in self.annotations:
            position = positions[concept.type]
            positions[concept.type] += 1
            key = _module_key(concept.name)
            if key not in self._per_concept:
                continue
            if concept.type == "categorical":
                block = preds[:, concept.slice]
                p = torch.softmax(block, dim=-1) if self.inputs == "logits" else block
                t = target[:, concept.index].long()
            else:
                p = columns[concept.type][:, position]
                t = targets[concept.type][:, position]
            tracked = _group(self._per_concept[key])
            for spec in self.specs[concept.type]:
                values[("concept", concept.name, spec.name)] = call(tracked[_module_key(spec.name)], p, t)
        return values

    def _binary_probabilities(self, preds: torch.Tensor) -> torch.Tensor:
        columns = preds.index_select(1, self._binary_columns.to(preds.device))
        return torch.sigmoid(columns) if self.inputs == "logits" else columns

    def _check_batch(self, preds: object, target: object) -> tuple[torch.Tensor, torch.Tensor]:
        ann = self.annotations
        where = f"{_OWNER}.update"
        if not isinstance(preds, torch.Tensor) or not preds.is_floating_point():
            got = f"dtype {preds.dtype}" if isinstance(preds, torch.Tensor) else type(preds).__name__
            raise invalid("preds", where, "a floating-point torch.Tensor", got)
        if not isinstance(target, torch.Tensor):
            raise invalid("target", where, "a torch.Tensor", type(target).__name__)
        layout = " + ".join(f"{c.name} {c.cardinality}" for c in ann)
        if preds.ndim < 2 or preds.shape[-1] != ann.size:
            raise invalid(
                "preds",
                where,
                f"a tensor of shape (batch, {ann.size}) (logit width = sum of cardinalities: {_shorten(layout)})",
                f"shape {tuple(preds.shape)}",
                "Check that the model's concept head matches the annotations.",
            )
        expected = (*preds.shape[:-1], len(ann))
        if tuple(target.shape) != expected:
            hint = (
                "Pass one column per concept, with the class index for categorical concepts (not one-hot)."
                if target.shape[-1:] == preds.shape[-1:] and ann.size != len(ann)
                else "Pass one column per concept, one row per row of preds."
            )
            raise invalid(
                "target", where, f"a tensor of shape {expected}", f"shape {tuple(target.shape)}", hint
            )
        preds = preds.detach().reshape(-1, ann.size)
        target = target.detach().reshape(-1, len(ann)).to(preds.device)
        if self.validate_args and preds.shape[0]:
            self._check_values(preds, target)
        return preds, target

    def _check_values(self, preds: torch.Tensor, target: torch.Tensor) -> None:
        ann = self.annotations
        where = f"{_OWNER}.update"
        for concept in ann:
            if not self._scores(concept.type):
                continue
            block = preds[:, concept.slice]
            finite = torch.isfinite(block).all(dim=1)
            if not bool(finite.all()):  # a NaN logit scores as a wrong answer: accuracy 0.0, silently
                row = int((~finite).nonzero()[0, 0])
                value = block[row][~torch.isfinite(block[row])][0].item()
                raise invalid(
                    "preds", where, f"finite {self.inputs} for concept {concept.name!r}",
                    f"{value} in row {row} ({int((~finite).sum())} row(s) of {len(finite)})",
                    "Find where the model produces NaN or inf (a diverged loss, a log of 0) and fix it there.",
                )  # fmt: skip
            if concept.type == "continuous":
                column = target[:, concept.index]
                if not bool(torch.isfinite(column).all()):
                    row = int((~torch.isfinite(column)).nonzero()[0, 0])
                    raise invalid(
                        "target", where, f"finite values for continuous concept {concept.name!r}",
                        f"{column[row].item()} in row {row}", "Drop or impute the missing annotations.",
                    )  # fmt: skip
                continue
            column = target[:, concept.index]
            high = 1 if concept.type == "binary" else concept.cardinality - 1
            bad = (column < 0) | (column > high) | (column != torch.round(column))
            if bad.any():
                value = column[bad][0].item()
                raise invalid(
                    "target",
                    where,
                    f"integer labels in [0, {high}] for {concept.type} concept {concept.name!r}",
                    f"{value!r}",
                )
            if self.inputs == "probabilities":
                block = preds[:, concept.slice]
                if ((block < 0) | (block > 1)).any():
                    raise invalid(
                        "preds",
                        where,
                        f"probabilities in [0, 1] for concept {concept.name!r} (inputs='probabilities')",
                        f"values in [{block.min().item():.4g}, {block.max().item():.4g}]",
                        "Pass inputs='logits' to ConceptMetrics for raw scores.",
                    )

    def _scores(self, kind: str) -> bool:
        return bool(self.specs[kind])

    def _assemble(self, values: Mapping[tuple[str, ...], MetricValue]) -> dict[str, torch.Tensor]:
        results: dict[str, torch.Tensor] = {}
        for key, source in self._plan():
            value = self._categorical_mean(source[1], values) if source[0] == "mean" else values[source]
            for flat_key, flat_value in _flatten(key, value).items():
                if flat_key in results:
                    raise invalid(
                        "categorical" if source[0] == "mean" else "per_concept",
                        _OWNER,
                        "metrics whose result keys are all different",
                        f"the key {flat_key!r} twice (a metric returning a dict)",
                        "Rename the metric.",
                    )
                results[flat_key] = flat_value
        return results

    def _categorical_mean(self, name: str, values: Mapping[tuple[str, ...], MetricValue]) -> MetricValue:
        labels = self.annotations.type_groups["categorical"]["labels"]
        per_concept = [values[("concept", label, name)] for label in labels]
        if isinstance(per_concept[0], Mapping):
            # one spec for every concept: all its values are dicts when the first is
            dicts = cast("list[Mapping[str, torch.Tensor]]", per_concept)
            return {sub: _mean_of_scalars(name, [v[sub] for v in dicts]) for sub in per_concept[0]}
        return _mean_of_scalars(name, per_concept)

    def extra_repr(self) -> str:
        specs = ", ".join(f"{kind}={[s.name for s in specs]}" for kind, specs in self.specs.items() if specs)
        return (
            f"concepts={len(self.annotations)}, {specs}, summary={self.summary}, "
            f"per_concept={list(self.tracked_concepts)}, prefix={self._prefix!r}, inputs={self.inputs!r}"
        )


def _mean_of_scalars(name: str, values: Sequence[MetricValue]) -> torch.Tensor:
    if any(not isinstance(v, torch.Tensor) or v.numel() != 1 for v in values):
        shapes = [tuple(v.shape) if isinstance(v, torch.Tensor) else type(v).__name__ for v in values]
        raise invalid(
            "categorical",
            _OWNER,
            "metrics with one scalar value per concept for the categorical summary",
            f"metric {name!r} returning {shapes}",
            "Averaging class-wise vectors across concepts would mix unrelated classes: use a scalar average "
            "(e.g. average='macro') or summary=False with per_concept=True.",
        )
    scalars = [v for v in values if isinstance(v, torch.Tensor)]  # all of them (checked above)
    return torch.stack([v.reshape(()).double() for v in scalars]).mean().float()


def _flatten(key: str, value: MetricValue) -> dict[str, torch.Tensor]:
    if isinstance(value, Mapping):
        return {f"{key}_{sub}": v for sub, v in value.items()}
    return {key: value}


def _describe(source: tuple[str, ...]) -> str:
    if source[0] == "concept":
        return f"metric {source[2]!r} of concept {source[1]!r}"
    if source[0] == "mean":
        return f"the categorical summary of {source[1]!r}"
    return f"the {source[1]} summary of {source[2]!r}"


def _shorten(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _check_per_concept(per_concept: object, annotations: Annotations) -> tuple[str, ...]:
    if isinstance(per_concept, bool):
        return tuple(annotations.labels) if per_concept else ()
    if isinstance(per_concept, str) or not isinstance(per_concept, Sequence):
        raise invalid(
            "per_concept",
            _OWNER,
            "True, False or a list of concept names",
            repr(per_concept),
            f"Wrap a single name in a list: [{per_concept!r}]." if isinstance(per_concept, str) else None,
        )
    names = list(per_concept)
    unknown = [name for name in names if name not in annotations]
    if unknown:
        raise invalid(
            "per_concept",
            _OWNER,
            "names of annotated concepts",
            f"unknown concept(s) {unknown}",
            f"Known concepts: {_shorten(str(list(annotations.labels)), 200)}.",
        )
    if len(set(names)) != len(names):
        duplicated = sorted({name for name in names if names.count(name) > 1})
        raise invalid(
            "per_concept", _OWNER, "a list of distinct concept names", f"{duplicated} more than once"
        )
    order = annotations.label_to_index
    return tuple(sorted(names, key=order.__getitem__))
