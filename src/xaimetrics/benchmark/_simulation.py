"""Simulated grids with known effects, shaped like a results store's rows: :func:`simulate_results`.

They are how the statistics are calibrated (tests/benchmark/test_calibration.py, benchmarks/
bench_calibration.py): under the null every method's true difference with ``NoExplanation`` is 0, so the share
of grids where :func:`~xaimetrics.benchmark.assess` calls something significant is its false-positive rate;
with a known effect, the share of grids that detect it is the power, to compare with :func:`~xaimetrics.
benchmark.plan`'s prediction. They also serve to plan a grid from a stated variance before it runs.

The model of one score, for seed ``s``, competitor ``m``, arm ``a`` (prompt type ``k`` × interpretation) and
simulator ``j``: ``0.5 + effect[m] + prompt_effect[k] + u_s + v_{s,m} + e_{s,m,a,j}`` with ``u ~ N(0, seed_sd)``
(what the seed's samples make easy or hard, shared by every arm of the seed), ``v ~ N(0, method_sd)`` (a
method's luck with the seed's samples: the draw favours or hinders it for **every** simulator, prompt type and
interpretation alike) and ``e ~ N(0, setting_sd)`` (the simulator's noise in one setting). ``NoExplanation``
runs once per seed, simulator and baseline prompt type; the controls, like the grid's, once per interpretation.
``prompt_effect`` shifts every arm of a prompt type (a baseline prompt type has its own: ``{"E1": -0.1,
"NE1": -0.1}`` says that prompts without learning phase are harder for every arm), so that a competitor
missing a setting (``missing``) would bias a comparison that mixes prompt types differently on each side.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from xaimetrics._validation import check_positive_int, invalid
from xaimetrics.benchmark._grid import BASELINE_METHOD

__all__ = ["simulate_results"]

_METHODS = ("NMF", "SAE", "ICA", "PCA", "SVD", "NoProjection")
_CONTROLS = ("SurrogateWords", "RandomWords")


def simulate_results(
    *,
    n_seeds: int = 5,
    methods: Sequence[str] = _METHODS,
    controls: Sequence[str] = _CONTROLS,
    effects: Mapping[str, float] | None = None,
    prompt_types: Sequence[str] = ("E2",),
    interpretations: Sequence[str] = ("top_words",),
    seed_sd: float = 0.05,
    method_sd: float = 0.03,
    setting_sd: float = 0.04,
    degenerate: Mapping[str, Sequence[int]] | None = None,
    simulators: Sequence[str] = ("s",),
    prompt_effects: Mapping[str, float] | None = None,
    missing: Mapping[str | tuple[str, str], Sequence[int]] | None = None,
    simulator_effects: Mapping[str, float] | None = None,
    interpretation_effects: Mapping[str, float] | None = None,
    random_state: int = 0,
) -> pd.DataFrame:
    """Rows of a simulated grid (the columns :func:`~xaimetrics.benchmark.assess` reads).

    Args:
        n_seeds: independent units.
        methods, controls: the competitors besides ``NoExplanation`` (controls keep their registered roles).
        effects: true mean difference with ``NoExplanation`` per competitor (default 0: the null).
        prompt_types: explanation prompt types (``"E1"`` pairs with ``NE1``, ``"E2"``/``"E3"`` with ``NE2``).
        interpretations: interpretation arms of the concept methods and controls.
        seed_sd, method_sd, setting_sd: the standard deviations of the model (module docstring).
        degenerate: ``{method: [seed, ...]}`` — in those seeds the method's settings are flagged degenerate
            and score 0.2 (the simulator answered one class), whatever the effect.
        simulators: the simulators that read every seed's samples (factors inside the unit, sharing ``u`` and
            ``v``; each setting has its own noise ``e``).
        prompt_effects: ``{prompt type: level}`` added to every row of that prompt type (default 0).
        missing: ``{method: [seed, ...]}`` drops the method's rows in those seeds, ``{(method, prompt type):
            [seed, ...]}`` only its rows of that prompt type (a failed setting, a prompt type that does not
            apply). The rows are drawn and then dropped, so the other rows do not change.
        simulator_effects, interpretation_effects: ``{level: shift}`` added to every row of that simulator
            (baseline included) or interpretation (default 0), e.g. to calibrate a variance decomposition.
        random_state: the generator's seed.

    Example:
        >>> frame = simulate_results(n_seeds=3, methods=("NMF",), controls=(), prompt_types=("E2", "E3"),
        ...                          missing={("NMF", "E3"): [0, 1]})
        >>> frame.groupby("method").size().to_dict()
        {'NMF': 4, 'NoExplanation': 3}
    """
    n_seeds = check_positive_int(n_seeds, "n_seeds", "simulate_results")
    if isinstance(simulators, str) or not simulators:
        raise invalid("simulators", "simulate_results", "a non-empty list of simulator names", simulators)
    rng = np.random.default_rng(random_state)
    effects = dict(effects or {})
    levels = dict(prompt_effects or {})
    shift_simulator = dict(simulator_effects or {})
    shift_interpretation = dict(interpretation_effects or {})
    degenerate_seeds = {m: set(s) for m, s in (degenerate or {}).items()}
    from xaimetrics.consim import PROMPT_TYPES

    baselines = sorted({PROMPT_TYPES.baseline_of(p) or "NE2" for p in prompt_types})
    rows = []
    base = {"dataset": "simulated", "model": "m", "phase": "evaluation", "is_upper_bound": 0,
            "anonymized": 1, "n_concepts_shown": 3}  # fmt: skip
    for seed in range(n_seeds):
        u = rng.normal(0.0, seed_sd)
        for kind in baselines:
            v = rng.normal(0.0, method_sd)
            for simulator in simulators:
                value = (
                    0.5 + levels.get(kind, 0.0) + shift_simulator.get(simulator, 0.0) + u + v
                    + rng.normal(0.0, setting_sd)
                )  # fmt: skip
                rows.append({**base, "simulator": simulator, "seed": seed, "method": BASELINE_METHOD,
                             "interpretation": "", "prompt_type": kind, "score": value, "degenerate": 0})  # fmt: skip
        for method in (*methods, *controls):
            v = rng.normal(0.0, method_sd)
            for interpretation in interpretations:
                for kind in prompt_types:
                    for simulator in simulators:
                        value = (
                            0.5 + effects.get(method, 0.0) + levels.get(kind, 0.0) + u + v
                            + shift_simulator.get(simulator, 0.0) + shift_interpretation.get(interpretation, 0.0)
                            + rng.normal(0.0, setting_sd)
                        )  # fmt: skip
                        flag = int(seed in degenerate_seeds.get(method, ()))
                        rows.append({**base, "simulator": simulator, "seed": seed, "method": method,
                                     "interpretation": interpretation, "prompt_type": kind,
                                     "score": 0.2 if flag else value, "degenerate": flag})  # fmt: skip
    frame = pd.DataFrame(rows)
    for key, seeds in (missing or {}).items():
        method, kind = (key, "") if isinstance(key, str) else (key[0], key[1])
        drop = (frame["method"] == method) & frame["seed"].isin(list(seeds))
        if kind:
            drop &= frame["prompt_type"] == kind
        frame = frame[~drop]
    frame = frame.reset_index(drop=True)
    frame["expected_accuracy"] = frame["score"]
    return frame
