"""The per-concept row of a grid (``Grid.detection``): one concept of one fit, scored by one scorer and reader.

:class:`ConceptSetting` is what the runner enumerates without fitting anything (dataset, model, method, number
of concepts, interpretation, seed, reader, scorer and the inputs fingerprint); each concept of that fit is one
:class:`ConceptRow` in the store's ``concept_results`` table, keyed by the setting and the concept. The row
flattens the scorer's rows (:mod:`xaimetrics.detection`): the main score (the concept's own description, or
none for intruder and embedding, against random non-activating texts) with its interval and one-sided p, the
score against hard negatives and, for detection and intruder, with another concept's words (the shuffled
control).
:func:`long_concept_rows` turns them back into the detection family's rows for
:func:`~xaimetrics.detection.legibility_table` and :func:`~xaimetrics.detection.random_baseline`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from xaimetrics._digest import json_digest

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["DETECTION_SCORERS", "ConceptRow", "ConceptSetting", "long_concept_rows"]

#: the per-concept scorers a grid can run (``Grid.detection``)
DETECTION_SCORERS = ("detection", "intruder", "embedding")
#: the reader name of the example-embedding rows (no LLM: the offline MiniLM sentence encoder)
EMBEDDING_READER = "minilm"


@dataclass(frozen=True)
class ConceptSetting:
    """The concepts of one fit scored by one scorer and reader: the key of a group of :class:`ConceptRow`.

    Example:
        >>> s = ConceptSetting("toy", "toy", "NMF", 3, "top_words", 0, "lexical", "detection")
        >>> s.params()["scorer"], len(s.key(2)), s.key(2) == s.key(1)
        ('detection', 32, False)
    """

    dataset: str
    model: str
    method: str
    n_concepts: int
    interpretation: str
    seed: int
    reader: str
    scorer: str
    inputs: str = ""

    def params(self) -> dict[str, str | int]:
        """The fields as the store keys them (``inputs`` only when set)."""
        params = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        if not self.inputs:
            del params["inputs"]
        return params

    @property
    def group(self) -> str:
        """The key of the group (every field)."""
        return json_digest(self.params(), length=32)

    def key(self, concept: int) -> str:
        """The store key of one concept's row."""
        return json_digest({**self.params(), "concept": int(concept)}, length=32)


def _nan(value: object) -> float:
    return math.nan if value is None else float(value)  # type: ignore[arg-type]  # numbers from the scorers


@dataclass(frozen=True)
class ConceptRow:
    """One concept scored by one scorer and reader: the columns of the store's ``concept_results`` table.

    ``value`` is the main score (detection: AUROC of P(Yes), or balanced accuracy for a text-only reader;
    intruder: accuracy of the pick; embedding: AUROC of the similarity to the top texts) against random
    non-activating texts, with ``low``/``high`` and the one-sided ``p_value`` against chance (``chance``);
    ``value_hard`` against hard negatives; ``value_shuffled`` with another concept's words (not for embedding);
    ``expected`` the intruder's mean P(intruder) where the reader gives probabilities.

    Example:
        >>> s = ConceptSetting("toy", "toy", "NMF", 3, "", 0, "lexical", "intruder")
        >>> rows = [{"description": "none", "negatives": "random", "metric": "accuracy", "value": 0.9,
        ...          "low": 0.7, "high": 0.97, "p_value": 1e-6, "chance": 0.2, "n_trials": 10,
        ...          "expected_accuracy": 0.8},
        ...         {"description": "none", "negatives": "hard", "metric": "accuracy", "value": 0.6}]
        >>> row = ConceptRow.of(s, 1, rows, "goal, cup")
        >>> row.value, row.value_hard, row.n, row.columns()[8:11]
        (0.9, 0.6, 10, ('concept', 'words', 'metric'))
    """

    dataset: str
    model: str
    method: str
    n_concepts: int
    interpretation: str
    seed: int
    reader: str
    scorer: str
    concept: int
    words: str
    metric: str
    value: float
    low: float
    high: float
    p_value: float
    value_hard: float
    value_shuffled: float
    expected: float
    chance: float
    n: int

    #: the store's table of these rows
    TABLE: ClassVar[str] = "concept_results"

    @classmethod
    def columns(cls) -> tuple[str, ...]:
        """The column names, in store order."""
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def of(
        cls, setting: ConceptSetting, concept: int, rows: Sequence[Mapping[str, object]], words: str
    ) -> ConceptRow:
        """The row of ``concept`` from its scorer rows (:attr:`DetectionResult.rows` of that concept)."""

        def pick(description: tuple[str, ...], negatives: str) -> Mapping[str, object] | None:
            return next(
                (r for r in rows if r.get("description") in description and r.get("negatives") == negatives),
                None,
            )

        main = pick(("own", "none"), "random") or pick(("own", "none"), "hard") or rows[0]
        hard = pick(("own", "none"), "hard")
        shuffled = pick(("shuffled",), "random")
        metric = str(main.get("metric", "auroc"))
        n = main.get("n_trials")
        if n is None:
            n = int(main.get("n_active", 0) or 0) + int(main.get("n_inactive", 0) or 0)  # type: ignore[call-overload]
        chance = main.get("chance", 0.5 if metric in ("auroc", "balanced_accuracy") else None)
        return cls(
            setting.dataset, setting.model, setting.method, setting.n_concepts, setting.interpretation,
            setting.seed, setting.reader, setting.scorer, int(concept), words, metric, _nan(main.get("value")),
            _nan(main.get("low")), _nan(main.get("high")), _nan(main.get("p_value")),
            _nan(None if hard is None else hard.get("value")),
            _nan(None if shuffled is None else shuffled.get("value")), _nan(main.get("expected_accuracy")),
            _nan(chance), int(n),  # type: ignore[call-overload]
        )  # fmt: skip

    def as_dict(self) -> dict[str, object]:
        """``{column: value}`` in column order (what the store writes)."""
        return {name: getattr(self, name) for name in self.columns()}


def long_concept_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The detection family's rows of stored concept rows: one per concept and (description, negatives)
    (``own``/``none`` against random and hard negatives; ``shuffled`` for detection), with the setting columns.

    Example:
        >>> import pandas as pd
        >>> s = ConceptSetting("toy", "toy", "NMF", 3, "top_words", 0, "lexical", "detection")
        >>> rows = [{"description": "own", "negatives": "random", "metric": "auroc", "value": 0.9},
        ...         {"description": "shuffled", "negatives": "random", "metric": "auroc", "value": 0.5}]
        >>> long = long_concept_rows(pd.DataFrame([ConceptRow.of(s, 0, rows, "goal").as_dict()]))
        >>> long[["description", "negatives", "value"]].values.tolist()
        [['own', 'random', 0.9], ['shuffled', 'random', 0.5]]
    """
    import pandas as pd

    keep = [c for c in ConceptRow.columns() if c not in ("value_hard", "value_shuffled", "expected")]
    out = []
    for row in frame.to_dict("records"):
        base = {c: row[c] for c in keep if c in row}
        own = "none" if row["scorer"] == "embedding" else "own"
        out.append({**base, "description": own, "negatives": "random"})
        if not pd.isna(row["value_hard"]):
            out.append({**base, "description": own, "negatives": "hard", "value": row["value_hard"],
                        "low": math.nan, "high": math.nan, "p_value": math.nan})  # fmt: skip
        if not pd.isna(row["value_shuffled"]):
            out.append({**base, "description": "shuffled", "negatives": "random", "value": row["value_shuffled"],
                        "low": math.nan, "high": math.nan, "p_value": math.nan})  # fmt: skip
    return pd.DataFrame(out, columns=[*keep, "description", "negatives"])
