"""Did the instrument pass its controls? Each control is tested alone, in the direction stated before the run.

A positive control must beat the baseline (one-sided superiority); a negative control must be shown equivalent
to it within a margin (TOST): "not significant" is not "no effect". The answer is a :class:`ControlVerdict` of
numbers and verdicts; the report writes the sentences.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from xaimetrics.stats._exact import (
    DEFAULT_MARGIN,
    equivalence_test,
    minimum_pvalue,
    robust_pvalue,
    sign_flip_test,
    t_interval,
)

Verdict = Literal["pass", "fail", "undecided"]
Role = Literal["positive", "negative"]

#: the columns of :attr:`ControlVerdict.table`
VERDICT_COLUMNS = (
    "role", "difference", "ci_low", "ci_high", "test", "verdict", "decided_by", "pvalue", "min_pvalue", "n_units",
    "pvalue_superiority", "pvalue_below_margin", "pvalue_equivalence", "pvalue_outside_margin",
)  # fmt: skip


@dataclass(frozen=True)
class ControlVerdict:
    """The controls' verdicts (:func:`control_verdict`).

    Attributes:
        ran: whether any control had scores beside the baseline.
        positive, negative: each control's verdict (``"pass"``, ``"fail"`` or ``"undecided"``), by role.
        detects: true only when every control passes; ``None`` when no positive control ran.
        decided: whether every control that ran is decided (none ``"undecided"``).
        table: per control, its difference, interval, verdict, the test that decided it (``decided_by``; for
            an undecided control the test that would pass it), **that test's** ``pvalue``, and every test's p
            in its own column (:data:`VERDICT_COLUMNS`).
        margin, alpha: the equivalence margin and the level every control was tested at.
    """

    ran: bool
    positive: dict[str, Verdict]
    negative: dict[str, Verdict]
    detects: bool | None
    decided: bool
    table: pd.DataFrame
    margin: float
    alpha: float

    @property
    def n_units(self) -> int:
        """The most units any control was tested on (0 when none ran)."""
        return int(self.table["n_units"].max()) if len(self.table) else 0


def control_verdict(
    scores: pd.DataFrame,
    roles: Mapping[str, str],
    *,
    baseline: str,
    alpha: float = 0.05,
    margin: float = DEFAULT_MARGIN,
    confidence: float = 0.95,
) -> ControlVerdict:
    """Test each control of ``roles`` (column → ``"positive"`` or ``"negative"``) against ``baseline``.

    - a **positive** control passes when it beats the baseline (one-sided :func:`robust_pvalue` ``< alpha``);
      it fails when it is shown to stay below ``+margin`` (one-sided sign-flip ``p < alpha`` that the
      difference is < margin); else it is undecided;
    - a **negative** control passes when it is shown equivalent to the baseline within ``±margin``
      (:func:`equivalence_test` ``p < alpha``); it fails only when it is shown **outside** the margin (the
      one-sided tests of ``d − margin > 0`` and ``d + margin < 0``, each at ``alpha/2``), so a true difference
      inside the margin fails at most ``alpha`` of the time; else it is undecided.

    Example:
        >>> s = pd.DataFrame({"NoExplanation": [0.5, 0.6, 0.5, 0.55, 0.5, 0.6],
        ...                   "SurrogateWords": [0.7, 0.75, 0.68, 0.72, 0.7, 0.71],
        ...                   "RandomWords": [0.51, 0.59, 0.5, 0.56, 0.49, 0.6]})
        >>> v = control_verdict(s, {"SurrogateWords": "positive", "RandomWords": "negative"}, baseline="NoExplanation")
        >>> v.positive, v.negative, v.detects
        ({'SurrogateWords': 'pass'}, {'RandomWords': 'pass'}, True)
    """
    rows: dict[str, dict[str, object]] = {}
    verdicts: dict[str, tuple[str, Verdict]] = {}
    base = scores[baseline].to_numpy(dtype=float) if baseline in scores.columns else None
    nan = math.nan
    for method, role in roles.items():
        if base is None or method not in scores.columns:
            continue
        mine = scores[method].to_numpy(dtype=float)
        shared = np.isfinite(mine) & np.isfinite(base)
        d = mine[shared] - base[shared]
        mean, low, high = t_interval(d, confidence=confidence)
        floor = minimum_pvalue(d.size, "greater")
        superior = below = equivalent = outside = nan
        verdict: Verdict
        if role == "positive":
            test = "one-sided superiority"
            superior = robust_pvalue(d, alternative="greater") if d.size else nan
            below = sign_flip_test(d - margin, alternative="less")
            if superior < alpha:
                verdict, decided_by, p = "pass", "superiority", superior
            elif below < alpha:
                verdict, decided_by, p = "fail", f"below +{margin:g}", below
            else:
                verdict, decided_by, p = "undecided", "superiority", superior
        else:
            test = f"equivalence within ±{margin:g} (TOST)"
            equivalent = equivalence_test(d, margin) if d.size else nan
            above = sign_flip_test(d - margin, alternative="greater")  # shown above +margin
            under = sign_flip_test(d + margin, alternative="less")  # shown below −margin
            outside = min(above, under) if d.size else nan
            if equivalent < alpha:
                verdict, decided_by, p = "pass", "equivalence (TOST)", equivalent
            elif outside < alpha / 2:  # each one-sided test at α/2: together a two-sided level-α test
                side = f"above +{margin:g}" if above <= under else f"below −{margin:g}"
                verdict, decided_by, p = "fail", side, outside
            else:
                verdict, decided_by, p = "undecided", "equivalence (TOST)", equivalent
        verdicts[method] = (role, verdict)
        rows[method] = {
            "role": role, "difference": mean, "ci_low": low, "ci_high": high, "test": test, "verdict": verdict,
            "decided_by": decided_by, "pvalue": p, "min_pvalue": floor, "n_units": int(d.size),
            "pvalue_superiority": superior, "pvalue_below_margin": below, "pvalue_equivalence": equivalent,
            "pvalue_outside_margin": outside,
        }  # fmt: skip
    table = pd.DataFrame.from_dict(rows, orient="index", columns=list(VERDICT_COLUMNS))
    table.index.name = "method"
    positive = {m: v for m, (r, v) in verdicts.items() if r == "positive"}
    negative = {m: v for m, (r, v) in verdicts.items() if r == "negative"}
    every = [*positive.values(), *negative.values()]
    detects = all(v == "pass" for v in every) if positive else None
    return ControlVerdict(
        ran=bool(rows), positive=positive, negative=negative, detects=detects,
        decided=bool(every) and "undecided" not in every, table=table, margin=margin, alpha=alpha,
    )  # fmt: skip
