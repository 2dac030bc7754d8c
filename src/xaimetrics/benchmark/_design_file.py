"""The grid file's ``[sequential]`` table: gate first, then measure (``xaimetrics benchmark run --sequential``).

::

    [sequential]
    gate_seeds = 8        # the gate's seed budget (looks at gate_start, gate_start + step, … gate_seeds)
    gate_start = 5
    method_seeds = 16     # the methods' budget of fresh seeds (after the gate's)
    method_start = 8
    step = 1
    alpha = 0.05          # each part's type-I error over all its looks
    rho = 0.5             # α spent as α·(n / max)^ρ
    margin = 0.05
    force_methods = false # measure the methods even when a simulator fails its gate (exploratory)
    max_tokens = 2_000_000    # optional budgets, checked after each look of each part
    max_cost_usd = 5.0

Every key is optional; a bad value is an :class:`~xaimetrics.exceptions.InvalidParameterError` naming
``sequential.<key>`` (or the command-line flag that set it).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from xaimetrics._registry import did_you_mean
from xaimetrics._validation import invalid
from xaimetrics.benchmark._gated import GatedDesign
from xaimetrics.benchmark._grid import SEQUENTIAL_TABLE, read_grid_file
from xaimetrics.benchmark._sequential import SequentialDesign

__all__ = ["SEQUENTIAL_DEFAULTS", "design_from_table", "load_design"]

#: the keys of the ``[sequential]`` table and their defaults (``None``: no budget)
SEQUENTIAL_DEFAULTS: dict[str, Any] = {
    "gate_seeds": 8, "gate_start": 5, "method_seeds": 16, "method_start": 8, "step": 1, "alpha": 0.05,
    "rho": 0.5, "margin": 0.05, "force_methods": False, "max_tokens": None, "max_cost_usd": None,
}  # fmt: skip
_OWNER = "load_grid"
_COMMAND = "xaimetrics benchmark run"


def minimum_seeds(alpha: float, n_hypotheses: int = 1) -> int:
    """The fewest seeds with which an exact one-sided sign-flip test can reach ``alpha / n_hypotheses``
    (``2⁻ⁿ ≤ α / m``; Holm's first level over ``m`` methods).

    Example:
        >>> minimum_seeds(0.05), minimum_seeds(0.05, 6)
        (5, 7)
    """
    return max(2, math.ceil(math.log2(n_hypotheses / alpha) - 1e-9))


def design_from_table(
    table: object, *, n_methods: int = 1, flags: Mapping[str, Any] | None = None
) -> GatedDesign:
    """A :class:`~xaimetrics.benchmark.GatedDesign` from a ``[sequential]`` table and command-line ``flags``
    (``{key: value}``, which override the table and are named as ``--key`` in errors).

    Args:
        table: the table's plain data (``{}`` for the defaults).
        n_methods: the grid's concept methods (Holm's first level, ``α / n_methods``, sets the fewest method seeds).
        flags: values given on the command line.

    Example:
        >>> design = design_from_table({"gate_seeds": 6, "method_seeds": 10}, n_methods=2)
        >>> design.gate.looks(), design.methods.looks(), design.margin
        ([5, 6], [8, 9, 10], 0.05)
    """
    flags = {k: v for k, v in (flags or {}).items() if v is not None}

    def name(key: str) -> tuple[str, str]:
        return (
            ("--" + key.replace("_", "-"), _COMMAND)
            if key in flags
            else (f"{SEQUENTIAL_TABLE}.{key}", _OWNER)
        )

    if not isinstance(table, Mapping):
        raise invalid(SEQUENTIAL_TABLE, _OWNER, "a table of keys ([sequential] in the grid file)", table)
    unknown = sorted(set(table) - set(SEQUENTIAL_DEFAULTS))
    if unknown:
        hints = [hint for hint in (did_you_mean(key, list(SEQUENTIAL_DEFAULTS)) for key in unknown) if hint]
        raise invalid(
            SEQUENTIAL_TABLE,
            _OWNER,
            "keys among " + ", ".join(SEQUENTIAL_DEFAULTS),
            unknown,
            " ".join(hints) or None,
        )
    given = {**table, **flags}
    values = {**SEQUENTIAL_DEFAULTS, **given}
    for key in ("gate_seeds", "gate_start", "method_seeds", "method_start", "step", "max_tokens"):
        value = values[key]
        if value is None and key == "max_tokens":
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise invalid(*name(key), "an integer ≥ 1", value)
    for key, low, high in (("alpha", 0.0, 1.0), ("margin", 0.0, 1.0), ("rho", 0.0, math.inf)):
        value = values[key]
        if isinstance(value, bool) or not isinstance(value, int | float) or not low < value < high:
            expected = "a number > 0" if high == math.inf else f"a number in ({low:g}, {high:g})"
            raise invalid(*name(key), expected, value)
    cost = values["max_cost_usd"]
    if cost is not None and (isinstance(cost, bool) or not isinstance(cost, int | float) or not cost > 0):
        raise invalid(*name("max_cost_usd"), "a number of dollars > 0", cost)
    if not isinstance(values["force_methods"], bool):
        raise invalid(*name("force_methods"), "true or false", values["force_methods"])
    alpha = float(values["alpha"])
    m = max(1, n_methods)
    method_reach = (
        f"with fewer seeds the exact test cannot reach α/{m} = {alpha / m:.3g}, Holm's first level over the "
        f"grid's {m} concept method(s)"
    )
    gate_reach = f"with fewer seeds the exact one-sided test cannot reach α = {alpha:g}"
    for part, hypotheses, why in (("gate", 1, gate_reach), ("method", m, method_reach)):
        key, low = f"{part}_seeds", minimum_seeds(alpha, hypotheses)
        if values[key] < low:
            raise invalid(*name(key), f"≥ {low} ({why})", values[key], "Raise the seed budget.")
        start = f"{part}_start"
        if start not in given:  # the default start, within a small budget
            values[start] = min(values[start], values[key])
        elif values[start] > values[key]:
            raise invalid(*name(start), f"at most {name(key)[0]} ({values[key]})", values[start])
    budgets = {"step": values["step"], "alpha": alpha, "rho": float(values["rho"]),
               "max_tokens": values["max_tokens"], "max_cost_usd": values["max_cost_usd"]}  # fmt: skip
    return GatedDesign(
        gate=SequentialDesign(max_seeds=values["gate_seeds"], start=values["gate_start"], **budgets),
        methods=SequentialDesign(max_seeds=values["method_seeds"], start=values["method_start"], **budgets),
        margin=float(values["margin"]), force_methods=values["force_methods"],
    )  # fmt: skip


def load_design(path: str | Path, *, n_methods: int = 1) -> GatedDesign | None:
    """The gated design of a grid file's ``[sequential]`` table, or ``None`` when the file has none.

    Example:
        >>> import tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "grid.toml")
        >>> _ = open(path, "w").write('simulators = ["perfect"]\\n[sequential]\\ngate_seeds = 6\\n')
        >>> load_design(path).gate.looks()
        [5, 6]
    """
    data = read_grid_file(path)
    if SEQUENTIAL_TABLE not in data:
        return None
    return design_from_table(data[SEQUENTIAL_TABLE], n_methods=n_methods)
