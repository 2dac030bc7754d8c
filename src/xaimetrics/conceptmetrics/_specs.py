"""Metric specifications of :class:`ConceptMetrics`: the three accepted forms and how each becomes a metric.

A spec dict maps a metric name to one of:

1. a ``torchmetrics.Metric`` subclass, built with the injected arguments only;
2. a ``(MetricClass, kwargs)`` pair, built with ``kwargs`` plus the injected arguments;
3. a ``torchmetrics.Metric`` instance, cloned (and reset) for every place it is used.

Injected arguments, filled from the annotations when the constructor declares them by name:
``num_classes`` (categorical metrics: the cardinality of the concept) and ``n_concepts`` (the number of
concepts whose columns the metric receives: all concepts of its type for a pooled summary, 1 per concept).
Passing an injected argument yourself is an error: the value would disagree with the annotations somewhere.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass, field

from torchmetrics import Metric

from xaimetrics._validation import invalid

__all__ = ["INJECTED_ARGUMENTS", "MetricSpec", "ResolvedSpec", "resolve_specs"]

#: A metric spec: a Metric class, a ``(class, kwargs)`` pair, or a Metric instance.
MetricSpec = type[Metric] | tuple[type[Metric], Mapping[str, object]] | Metric

#: Constructor arguments that ConceptMetrics fills in from the annotations when a metric declares them.
INJECTED_ARGUMENTS: tuple[str, ...] = ("num_classes", "n_concepts")

_OWNER = "ConceptMetrics"
_FORMS = "a Metric subclass, a (MetricClass, kwargs) pair or a Metric instance"


@dataclass(frozen=True)
class ResolvedSpec:
    """One validated metric spec of one concept type; :meth:`build` makes fresh, independent metrics."""

    name: str
    concept_type: str
    metric_class: type[Metric]
    kwargs: dict[str, object] = field(default_factory=dict)
    instance: Metric | None = None

    @property
    def accepts(self) -> frozenset[str]:
        """The injected arguments this metric's constructor declares."""
        return _declared_arguments(self.metric_class)

    def build(self, *, n_concepts: int, num_classes: int | None, where: str) -> Metric:
        """A new metric (own state) for ``n_concepts`` concepts with ``num_classes`` states (categorical).

        Args:
            n_concepts: number of concept columns the metric will receive.
            num_classes: cardinality of the concept (categorical metrics), else ``None``.
            where: what the metric is for, shown in error messages (e.g. ``"concept 'color'"``).
        """
        if self.instance is not None:
            metric = self.instance.clone()
            metric.reset()
            for attr, expected in (("num_classes", num_classes), ("n_concepts", n_concepts)):
                have = getattr(metric, attr, None)
                if expected is not None and isinstance(have, int) and have != expected:
                    raise invalid(
                        self.concept_type,
                        _OWNER,
                        f"a metric with {attr}={expected} for {where}",
                        f"{type(metric).__name__} instance {self.name!r} with {attr}={have}",
                        f"Pass the class instead ({type(metric).__name__} or ({type(metric).__name__}, kwargs)) "
                        f"so that {attr} is filled in for every concept.",
                    )
            return metric
        injected: dict[str, object] = {}
        declared = self.accepts
        if "n_concepts" in declared:
            injected["n_concepts"] = n_concepts
        if "num_classes" in declared and num_classes is not None:
            injected["num_classes"] = num_classes
        try:
            return self.metric_class(**self.kwargs, **injected)
        except (TypeError, ValueError) as error:
            raise invalid(
                self.concept_type,
                _OWNER,
                "specs whose metric can be built",
                f"metric {self.name!r} failing for {where}",
                f"{self.metric_class.__name__}(**{dict(self.kwargs, **injected)!r}) raised "
                f"{type(error).__name__}: {error} Check the keyword arguments of the spec.",
            ) from error


def resolve_specs(specs: Mapping[str, MetricSpec] | None, concept_type: str) -> list[ResolvedSpec]:
    """Validate one ``{name: spec}`` dict of :class:`ConceptMetrics` and return the resolved specs.

    Raises:
        InvalidParameterError: if ``specs`` is not a dict of names to one of the three forms, or a
            ``(class, kwargs)`` spec passes an argument that is injected from the annotations.

    Example:
        >>> from torchmetrics.classification import MulticlassAccuracy
        >>> spec, = resolve_specs({"acc": (MulticlassAccuracy, {"average": "micro"})}, "categorical")
        >>> spec.build(n_concepts=1, num_classes=4, where="concept 'color'").num_classes
        4
    """
    if specs is None:
        return []
    if not isinstance(specs, Mapping):
        raise invalid(
            concept_type,
            _OWNER,
            "a dict mapping metric names to specs",
            type(specs).__name__,
            f'Pass e.g. {concept_type}={{"accuracy": BinaryAccuracy}}.',
        )
    resolved = []
    for name, spec in specs.items():
        if not isinstance(name, str) or not name:
            raise invalid(concept_type, _OWNER, "a dict whose keys are non-empty metric names", repr(name))
        resolved.append(_resolve_one(name, spec, concept_type))
    return resolved


def _resolve_one(name: str, spec: object, concept_type: str) -> ResolvedSpec:
    if isinstance(spec, Metric):
        return ResolvedSpec(name, concept_type, type(spec), instance=spec)
    if isinstance(spec, type) and issubclass(spec, Metric):
        return ResolvedSpec(name, concept_type, spec)
    if isinstance(spec, tuple | list) and len(spec) == 2:
        metric_class, kwargs = spec
        if not (isinstance(metric_class, type) and issubclass(metric_class, Metric)):
            raise invalid(
                concept_type,
                _OWNER,
                f"specs that are {_FORMS}",
                f"a pair whose first item is {metric_class!r} for metric {name!r}",
            )
        if not isinstance(kwargs, Mapping):
            raise invalid(
                concept_type,
                _OWNER,
                f"specs that are {_FORMS}",
                f"a pair whose second item is {type(kwargs).__name__} for metric {name!r}",
                "The second item must be a dict of keyword arguments.",
            )
        kwargs = dict(kwargs)
        declared = _declared_arguments(metric_class)
        for reserved in INJECTED_ARGUMENTS:
            injected = concept_type == "categorical" if reserved == "num_classes" else reserved in declared
            if reserved in kwargs and injected:
                raise invalid(
                    concept_type,
                    _OWNER,
                    f"specs without '{reserved}' (it is set from the annotations)",
                    f"{reserved}={kwargs[reserved]!r} in the kwargs of metric {name!r}",
                    f"Remove '{reserved}': ConceptMetrics fills it in for every concept.",
                )
        return ResolvedSpec(name, concept_type, metric_class, kwargs=kwargs)
    raise invalid(
        concept_type,
        _OWNER,
        f"specs that are {_FORMS}",
        f"{spec!r} for metric {name!r}",
        "Unknown metric spec; e.g. BinaryAccuracy, (MulticlassF1Score, {'average': 'macro'}) or "
        "MulticlassAccuracy(num_classes=3).",
    )


def _declared_arguments(metric_class: type[Metric]) -> frozenset[str]:
    """The injected arguments the constructor names explicitly (``**kwargs`` does not count)."""
    try:
        parameters = inspect.signature(metric_class).parameters
    except (TypeError, ValueError):
        return frozenset()
    return frozenset(
        p.name
        for p in parameters.values()
        if p.name in INJECTED_ARGUMENTS and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    )
