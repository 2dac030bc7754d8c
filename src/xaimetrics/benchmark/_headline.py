"""The answer first: three to five plain lines a person reads in ten seconds (:func:`headline`).

Which simulator is a valid instrument; which methods help, by how much, how sure; what could not be decided and
what it would cost to decide. Every number in a line comes from the verdict table it describes (the tests check
each line against its table); the floors, the planner and the sensitivity analyses stay in the details.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from xaimetrics.benchmark._gated import GatedResult

__all__ = ["headline"]


def _p(value: float) -> str:
    if not math.isfinite(value):
        return "p n/a"
    return "p < 0.001" if value < 0.001 else f"p = {value:.3f}"


def _interval(row: pd.Series) -> str:
    low, high = float(row.get("ci_low", math.nan)), float(row.get("ci_high", math.nan))
    if not (math.isfinite(low) and math.isfinite(high)):
        return "no interval from one seed"
    if math.isclose(low, high):
        return f"the same difference in all {int(row['n_units'])} seeds"
    return f"95% CI [{low:+.3f}, {high:+.3f}]"


def _number(row: pd.Series) -> str:
    return f"{float(row['difference']):+.3f} ({_interval(row)}, {_p(float(row['pvalue']))}, {int(row['n_seeds'])} seeds)"


def _instrument_line(result: GatedResult, margin: float, names: dict[str, str]) -> str:
    name = names.get(result.simulator, result.simulator)
    table = result.gate.verdicts
    positive = table[table["role"] == "positive"] if len(table) else table
    negative = table[table["role"] == "negative"] if len(table) else table
    pos = positive.iloc[0] if len(positive) else None
    neg = negative.iloc[0] if len(negative) else None
    if result.outcome == "valid" and pos is not None:
        line = f"{name} is a valid instrument: its positive control beats NoExplanation by {_number(pos)}"
        if neg is not None:
            line += f", and its negative control is shown within ±{margin:g} ({float(neg['difference']):+.3f}, {_p(float(neg['pvalue']))})"
        return line + "."
    if result.outcome == "invalid":
        if pos is not None and pos["verdict"] == "fail":
            return (
                f"{name} does not use the explanations: its positive control gains {_number(pos)}, shown below "
                f"+{margin:g}; its concept-method settings were {'run anyway (exploratory)' if result.methods else 'not run'}."
            )
        if neg is not None and neg["verdict"] == "fail":
            return (
                f"{name} reacts to the form of an explanation, not its content: its negative control differs from "
                f"NoExplanation by {_number(neg)}, shown outside ±{margin:g}."
            )
    seeds = len(result.gate.seeds)
    parts = [f"{m} {r['verdict']} ({float(r['difference']):+.3f})" for m, r in table.iterrows()]
    return (
        f"{name} could not be checked within the gate's budget ({seeds} seeds): "
        + (", ".join(parts) if parts else "no control ran")
        + "."
    )


def _methods_lines(result: GatedResult, margin: float, names: dict[str, str]) -> list[str]:
    if result.methods is None or result.methods.verdicts.empty:
        return []
    name = names.get(result.simulator, result.simulator)
    if name.startswith("The "):  # mid-sentence here
        name = "the " + name[4:]
    table = result.methods.verdicts
    n_seeds = int(table["n_seeds"].max()) if len(table) else 0
    label = " (exploratory: the simulator did not pass its controls)" if result.exploratory else ""
    helps = table[table["verdict"].isin(["helps", "helps_little"])].sort_values("difference", ascending=False)
    below = table[table["verdict"] == "no_help"]
    undecided = table[table["verdict"] == "undecided"]
    clauses = []
    if len(helps):
        clauses.append(
            "; ".join(
                f"{m} helps{' (by less than ' + format(margin, 'g') + ')' if r['verdict'] == 'helps_little' else ''}: "
                f"{float(r['difference']):+.3f} ({_interval(r)}, {_p(float(r['pvalue']))})"
                for m, r in helps.iterrows()
            )
        )
    else:
        clauses.append("no concept method is shown to help")
    if len(below):
        clauses.append(
            ", ".join(below.index) + f" {'does' if len(below) == 1 else 'do'} not help by {margin:g} or more "
            f"(upper bounds of the 95% CIs: {', '.join(f'{float(v):+.3f}' for v in below['ci_high'])})"
        )
    lines = [
        f"Concept methods read by {name}{label}, {n_seeds} fresh seeds, Holm–Shaffer corrected over {len(table)} "
        f"methods: " + "; ".join(clauses) + "."
    ]
    if result.twins is not None and len(result.twins):
        lines.append(_twins_line(result.twins))
    if result.fit_errors:
        lines.append(_fit_errors_line(result.fit_errors))
    if len(undecided):
        lines.append(
            "Undecided: "
            + ", ".join(
                f"{m} ({float(r['difference']):+.3f}, {_interval(r)})" for m, r in undecided.iterrows()
            )
            + f" — the seed budget ({n_seeds}) ran out; {_cost_to_decide(table, undecided, margin)}"
        )
    return lines


def _twins_line(twins: pd.DataFrame) -> str:
    """Which methods beat their randomised twins (same seeds, Holm over methods × twins), with the gain over the
    twin of those that do; the others by name and their smallest Holm p. The table beside it has every number.

    Example:
        >>> twins = pd.DataFrame({"method": ["NMF", "PCA", "SVD"], "twin": "all", "n_units": 8,
        ...     "gain": [0.2, 0.1, 0.0], "over_twin": [0.15, -0.01, 0.02], "over_twin_low": [0.1, -0.05, -0.01],
        ...     "over_twin_high": [0.2, 0.03, 0.05], "p_twin_holm": [0.008, 1.0, 0.3], "beats_twin": [True, False, False]})
        >>> _twins_line(twins)  # doctest: +NORMALIZE_WHITESPACE
        'Against their randomised twins (all weights re-drawn; same seeds, Holm over 3 comparisons): NMF beats its
        twin by +0.150 (95% CI [+0.100, +0.200], Holm p = 0.008); PCA, SVD do not (Holm p ≥ 0.300).'
    """
    kinds = {"all": "all weights re-drawn", "top": "head re-drawn"}
    several = twins["twin"].nunique() > 1
    parts = []
    for twin, rows in twins.groupby("twin", sort=True):
        beats = rows["beats_twin"].astype(bool)
        said = [
            f"{r['method']} beats its twin by {float(r['over_twin']):+.3f} (95% CI "
            f"[{float(r['over_twin_low']):+.3f}, {float(r['over_twin_high']):+.3f}], "
            f"{_p(float(r['p_twin_holm'])).replace('p', 'Holm p', 1)})"
            for _, r in rows[beats].sort_values("over_twin", ascending=False).iterrows()
        ]
        if (~beats).any():
            others = rows[~beats]
            verb = "does not" if len(others) == 1 else "do not"
            names = ", ".join(sorted(map(str, others["method"])))
            said.append(f"{names} {verb} (Holm p ≥ {float(others['p_twin_holm'].min()):.3f})")
        kind = kinds.get(str(twin), str(twin))
        parts.append(f"{kind}: " * several + "; ".join(said))
    label = "" if several else f"{kinds.get(str(twins['twin'].iloc[0]), str(twins['twin'].iloc[0]))}; "
    return (
        f"Against their randomised twins ({label}same seeds, Holm over {len(twins)} comparisons): "
        + " | ".join(parts)
        + "."
    )


def _fit_errors_line(messages: Sequence[str]) -> str:
    """The methods whose concept fit failed (their settings are failed rows; everything else ran).

    Example:
        >>> _fit_errors_line(["ICA@random-all could not be fitted on the activations of m (20 concepts, seed 8): "
        ...     "ValueError: bad", "ICA@random-all could not be fitted on the activations of m (20 concepts, seed 9): "
        ...     "ValueError: bad"])
        'Not fitted (those settings are recorded as failed; the rest ran): ICA@random-all on 2 seeds (ValueError: bad).'
    """
    by_method: dict[str, list[str]] = {}
    for message in messages:
        method, _, rest = message.partition(" could not be fitted")
        by_method.setdefault(method, []).append(rest.split("): ", 1)[-1])
    parts = [
        f"{method} on {len(errors)} seed{'s' if len(errors) > 1 else ''} ({errors[0]})"
        for method, errors in by_method.items()
    ]
    return "Not fitted (those settings are recorded as failed; the rest ran): " + "; ".join(parts) + "."


def _cost_to_decide(table: pd.DataFrame, undecided: pd.DataFrame, margin: float) -> str:
    """The planner's seeds for the undecided methods' distance to the nearer boundary (0 or +margin)."""
    from xaimetrics.stats import plan

    widths = (undecided["ci_high"] - undecided["ci_low"]).to_numpy(dtype=float)
    n = int(undecided["n_units"].max())
    if not np.isfinite(widths).any() or n < 2:
        return "more seeds would decide them."
    from scipy import stats

    sd = float(np.nanmean(widths)) / 2 / float(stats.t.ppf(0.975, n - 1)) * math.sqrt(n)
    gaps = np.minimum(np.abs(undecided["difference"]), np.abs(margin - undecided["difference"])).to_numpy(
        dtype=float
    )
    target = max(float(np.nanmax(gaps)), margin / 4)
    needed = plan(sd, target=target, alpha=0.05, n_comparisons=len(table), alternative="greater").units_needed
    if needed is None:
        return f"a difference of {target:.3f} at this spread would need more than 1000 seeds."
    return f"about {needed} seeds (planner, unit SD {sd:.3f}) would decide a difference of {target:.3f}."


def headline(
    results: Sequence[GatedResult], *, margin: float = 0.05, names: dict[str, str] | None = None
) -> list[str]:
    """Three to five plain lines: each simulator's instrument verdict, what the methods do, what is undecided.

    ``results`` are :func:`~xaimetrics.benchmark.run_gated`'s, in the order to tell them; ``names`` gives a
    simulator a readable name (``{"lexical": "the lexical reference reader"}``).
    """
    names = names or {}
    lines = [_instrument_line(r, margin, names) for r in results]
    for result in results:
        lines.extend(_methods_lines(result, margin, names))
    if not any(r.methods is not None for r in results):
        lines.append("No simulator passed its controls, so no concept method was measured.")
    elif not any(line.startswith("Undecided") for line in lines):
        lines.append("Every question asked was decided.")
    return lines
