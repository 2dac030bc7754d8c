"""The result row: one finished setting as the results store, its CSV/Parquet export, the study export and the
report's table of settings see it.

:class:`ResultRow` is the one place a column is declared. Its fields, in order, are the store's columns (the
``results`` table, between ``key`` and ``payload``), the columns of ``results.csv`` (between ``key`` and
``created_at``) and those of the report's table of every setting. A field is either a *setting* column (read
from the setting's parameters, :meth:`Setting.params <xaimetrics.benchmark.Setting.params>`) or an *outcome*
column whose metadata says how it is computed from the :class:`~xaimetrics.consim.ConSimResult` of the setting
(one for an LLM; one per participant for a human study arm: their mean accuracy, summed counts). Adding a
column is one edit here, e.g.::

    n_hedged: int = field(default=0, metadata=summed("n_hedged"))

(a field after ``scoring`` needs a default; a store written before it refuses to open, see
:class:`~xaimetrics.benchmark.ResultsStore`, unless the column is listed in its ``ADDED_COLUMNS`` with the
value old rows read, as ``cached_prompt_tokens`` is).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from xaimetrics._class_counts import add_class_counts
from xaimetrics._validation import invalid
from xaimetrics.consim import ConSimResult

__all__ = ["ResultRow", "averaged", "first", "summed"]

#: how an outcome column is computed from a setting's results (one or more)
Reduce = Callable[[Sequence[ConSimResult]], object]
_REDUCE = "reduce"


def summed(attribute: str) -> dict[str, Reduce]:
    """Metadata of an outcome column: the sum of ``attribute`` over the results (counts, tokens, cost)."""

    def reduce(results: Sequence[ConSimResult]) -> object:
        return sum(getattr(r, attribute) for r in results)

    return {_REDUCE: reduce}


def averaged(attribute: str) -> dict[str, Reduce]:
    """Metadata of an outcome column: the mean of ``attribute`` over the results that have it, else ``None``."""

    def reduce(results: Sequence[ConSimResult]) -> object:
        present = [value for value in (getattr(r, attribute) for r in results) if value is not None]
        return float(np.mean(present)) if present else None

    return {_REDUCE: reduce}


def first(compute: Callable[[ConSimResult], object]) -> dict[str, Reduce]:
    """Metadata of an outcome column that every result of a setting shares: computed on the first."""
    return {_REDUCE: lambda results: compute(results[0])}


def _every(attribute: str) -> dict[str, Reduce]:
    return {_REDUCE: lambda results: all(getattr(r, attribute) for r in results)}


def _class_counts(results: Sequence[ConSimResult]) -> str:
    """The per-class counts of the results, summed (exact), as a JSON object (one column for any classes)."""
    return json.dumps(add_class_counts(r.class_counts for r in results), sort_keys=True)


def _first_error(results: Sequence[ConSimResult]) -> str | None:
    return next((r.error for r in results if r.error is not None), None)


@dataclass(frozen=True)
class ResultRow:
    """One row of the results store: the setting's parameters, then what its result(s) gave.

    Setting columns: ``dataset`` … ``phase`` and ``scoring`` (the prompt setting as ``prompt_type`` and
    ``anonymized``). Outcome columns: ``is_upper_bound``; ``score`` (eq. 5 accuracy, U1's upper bound
    included: ``is_upper_bound`` says which); the parse counts; the simulator accounting (zero for people);
    ``error``; the probabilistic scores; the degenerate flag and the number of concepts the prompt showed;
    ``class_counts``, a JSON object ``{class: {"n", "hits", "answered"}}`` over f's classes (summed over the
    results, so sums over seeds stay exact; :func:`~xaimetrics.consim.per_class_scores`).

    Example:
        >>> from xaimetrics.consim import render_prompt, score_response
        >>> prompt = render_prompt("NE1", class_names=["no", "yes"], ep_samples=["a", "b"], ep_predictions=[1, 0])
        >>> setting = {"dataset": "d", "model": "m", "method": "NoExplanation", "n_concepts": 0,
        ...            "interpretation": "", "prompt_type": "NE1", "anonymized": False, "seed": 0,
        ...            "simulator": "s", "phase": "evaluation"}
        >>> row = ResultRow.of(setting, [score_response(prompt, "Sample_0: yes\\nSample_1: yes")])
        >>> row.score, row.n_parsed, row.scoring, ResultRow.columns()[:3]
        (0.5, 2, 'accuracy', ('dataset', 'model', 'method'))
    """

    dataset: str
    model: str
    method: str
    n_concepts: int
    interpretation: str
    prompt_type: str
    anonymized: bool
    seed: int
    simulator: str
    phase: str
    is_upper_bound: bool = field(metadata=first(lambda r: r.is_upper_bound))
    score: float | None = field(metadata=averaged("accuracy"))
    n_samples: int = field(metadata=summed("n_samples"))
    n_parsed: int = field(metadata=summed("n_parsed"))
    n_missing: int = field(metadata=summed("n_missing"))
    n_invalid: int = field(metadata=summed("n_invalid"))
    prompt_tokens: int = field(metadata=summed("prompt_tokens"))
    completion_tokens: int = field(metadata=summed("completion_tokens"))
    cost_usd: float = field(metadata=summed("cost_usd"))
    latency_s: float = field(metadata=summed("latency_s"))
    cached: bool = field(metadata=_every("cached"))
    error: str | None = field(metadata={_REDUCE: _first_error})
    expected_accuracy: float | None = field(metadata=averaged("expected_accuracy"))
    log_loss: float | None = field(metadata=averaged("log_loss"))
    brier: float | None = field(metadata=averaged("brier"))
    majority_share: float | None = field(metadata=averaged("majority_share"))
    degenerate: bool = field(metadata=_every("degenerate"))
    n_concepts_shown: int = field(metadata=first(lambda r: len(r.concept_ids)))
    scoring: str = "accuracy"
    cached_prompt_tokens: int = field(default=0, metadata=summed("cached_prompt_tokens"))
    class_counts: str = field(default="{}", metadata={_REDUCE: _class_counts})

    #: the store's table of these rows
    TABLE: ClassVar[str] = "results"

    @classmethod
    def columns(cls) -> tuple[str, ...]:
        """The column names, in store and export order.

        Example:
            >>> ResultRow.columns()[-3:]
            ('scoring', 'cached_prompt_tokens', 'class_counts')
        """
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def of(cls, setting: Mapping[str, object], results: Sequence[ConSimResult]) -> ResultRow:
        """The row of a setting (its parameters: ``Setting.params()`` or a study arm's) answered by ``results``.

        Setting columns missing from ``setting`` take their default (``scoring="accuracy"``); parameters that are
        not columns (a study's digest) are ignored.

        Raises:
            InvalidParameterError: no result, or a setting column without a value and without a default.
        """
        if not results:
            raise invalid("results", "ResultRow.of", "at least one ConSimResult", "none")
        values: dict[str, object] = {}
        for spec in dataclasses.fields(cls):
            reduce = spec.metadata.get(_REDUCE)
            if reduce is not None:
                values[spec.name] = reduce(results)
            elif spec.name in setting:
                values[spec.name] = setting[spec.name]
            elif spec.default is dataclasses.MISSING:
                raise invalid(
                    "setting", "ResultRow.of", f"a value for the {spec.name!r} column", sorted(setting)
                )
        return cls(**values)  # type: ignore[arg-type]  # the values follow the fields' own specs

    def as_dict(self) -> dict[str, object]:
        """``{column: value}`` in column order (what the store writes)."""
        return {name: getattr(self, name) for name in self.columns()}
