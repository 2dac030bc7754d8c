"""Check the instrument, then measure: :func:`run_gated` (DESIGN §3d, "Gate first").

A simulator is an instrument; a careful experimenter checks it before spending on it. For each simulator of a
grid, :func:`run_gated`

1. **gates** it: runs only the baseline and the positive control, seed after seed, under the sequential rule
   (:func:`~xaimetrics.benchmark._sequential.until_decided`, ``question="controls"``); the negative control is run on a
   look's seeds only while the positive control has not failed (a simulator that cannot read a faithful
   explanation is out whatever the negative control says, so its settings would be spent for nothing);
2. **measures** the concept methods on fresh seeds (the gate's seeds are its own: a method tested on the seeds
   that made the gate pass would inherit the luck of their baseline) — only when the gate passed, or when
   ``force_methods`` asks for it (then labelled exploratory) — adding seeds until every method is decided
   (:func:`~xaimetrics.benchmark._sequential.sequential_verdicts`, ``question="methods"``) or the budget is spent;
3. when the grid lists ``randomized_twins`` and the gate passed, runs each method's **randomised twin** in the
   same looks, on the same seeds, and tests real against twin on the seeds the methods used
   (:func:`~xaimetrics.benchmark._twin_comparison.twin_comparison`, Holm over methods × twins). The twins never enter the
   methods' sequential decision (no seed is added for them), and a simulator that did not pass its gate
   (exploratory methods) runs no twin: a comparison read by an instrument that ignores explanations says nothing.

Everything is stored as it finishes (one resumable store for the whole run), so a rerun makes no call.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from xaimetrics._validation import invalid
from xaimetrics.benchmark._grid import BASELINE_METHOD, Grid
from xaimetrics.benchmark._sentences import Forecast, forecast_sentence
from xaimetrics.benchmark._sequential import (
    SequentialDesign,
    SequentialResult,
    gate_outcome,
    sequential_verdicts,
    unit_difference_table,
    until_decided,
)

if TYPE_CHECKING:
    from xaimetrics.benchmark._artefacts import Artefacts, Providers
    from xaimetrics.benchmark._runner import RunSummary

__all__ = ["GatedDesign", "GatedResult", "part_grids", "plan_gated", "replay_gated", "run_gated"]


@dataclass(frozen=True)
class GatedDesign:
    """The gate's and the methods' sequential designs, the margin, and whether a failed gate still measures the
    methods (exploratory).

    Args:
        gate: looks and α of the controls (seeds ``0 … gate.max_seeds − 1``).
        methods: looks and α of the methods, on the seeds after the gate's (``gate.max_seeds …``).
        margin: the controls' and methods' margin (score units).
        force_methods: measure the methods even when the gate fails or stays undecided (labelled exploratory).

    Example:
        >>> design = GatedDesign.default()
        >>> design.gate.looks(), design.methods.looks()[:2], design.method_seeds()[:2]
        ([5, 6, 7, 8], [8, 9], (8, 9))
    """

    gate: SequentialDesign
    methods: SequentialDesign
    margin: float = 0.05
    force_methods: bool = False

    @classmethod
    def default(cls, **changes: Any) -> GatedDesign:
        """Gate: 5 → 8 seeds; methods: 8 → 16 fresh seeds; α = 0.05 each; ρ = 0.5 (spends early)."""
        base = cls(
            gate=SequentialDesign(max_seeds=8, start=5), methods=SequentialDesign(max_seeds=16, start=8)
        )
        return dataclasses.replace(base, **changes)

    def to_dict(self) -> dict[str, object]:
        """The design as plain data (what a results store keeps to rebuild the verdicts)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GatedDesign:
        """The design :meth:`to_dict` wrote.

        Example:
            >>> GatedDesign.from_dict(GatedDesign.default().to_dict()) == GatedDesign.default()
            True
        """
        return cls(
            gate=SequentialDesign(**data["gate"]), methods=SequentialDesign(**data["methods"]),
            margin=data["margin"], force_methods=data["force_methods"],
        )  # fmt: skip

    def gate_seeds(self) -> tuple[int, ...]:
        return tuple(range(self.gate.max_seeds))

    def method_seeds(self) -> tuple[int, ...]:
        first = self.gate.max_seeds
        return tuple(range(first, first + self.methods.max_seeds))


@dataclass
class GatedResult:
    """One simulator's gate and (when run) its methods' measurement.

    Attributes:
        simulator: the simulator's grid name.
        gate: the controls' :class:`~xaimetrics.benchmark._sequential.SequentialResult`.
        outcome: ``"valid"`` (both controls pass), ``"invalid"`` (a control fails) or ``"undecided"``.
        methods: the methods' :class:`~xaimetrics.benchmark._sequential.SequentialResult`, or ``None`` when not run.
        exploratory: the methods were measured although the gate did not pass.
        summaries: the :class:`~xaimetrics.benchmark.RunSummary` of every run made.
        forecast: the planner's :class:`Forecast` made before the methods ran (:func:`forecast_methods`), with
            the seeds they then used (``seeds_used``), or ``None`` when they did not run.
        twins: each method against its randomised twins on the methods' seeds
            (:func:`~xaimetrics.benchmark._twin_comparison.twin_comparison`), or ``None`` when no twin ran.
    """

    simulator: str
    gate: SequentialResult
    outcome: str
    methods: SequentialResult | None = None
    exploratory: bool = False
    summaries: tuple[RunSummary, ...] = ()
    forecast: Forecast | None = None
    twins: pd.DataFrame | None = None

    @property
    def seeds(self) -> dict[str, tuple[int, ...]]:
        """The seeds each part used: ``{"gate": …, "methods": …}``."""
        return {"gate": self.gate.seeds, "methods": self.methods.seeds if self.methods else ()}

    @property
    def failed(self) -> int:
        return sum(s.failed for s in self.summaries)

    @property
    def failed_fits(self) -> int:
        """Settings not run because their concept extractor could not be fitted (part of :attr:`failed`)."""
        return sum(s.failed_fits for s in self.summaries)

    @property
    def fit_errors(self) -> list[str]:
        """The extractors' messages of the failed fits, one per fit, in the order they failed."""
        return [message for s in self.summaries for message in s.fit_errors]


def restricted(
    grid: Grid, methods: Sequence[str], seeds: Sequence[int] | None = None, *, twins: bool = True
) -> Grid:
    """``grid`` on ``methods`` (and ``seeds``), its per-method options kept for those methods only; its
    randomised twins kept only with ``twins`` and a concept method among ``methods``.

    Example:
        >>> from xaimetrics.benchmark import Grid
        >>> g = Grid(methods=("NMF", "SAE", "NoExplanation"), n_concepts={"NMF": 10, "SAE": 20},
        ...          extractor_options={"SAE": {"max_steps": 30}})
        >>> r = restricted(g, ("NMF", "NoExplanation"), seeds=(4,))
        >>> r.n_concepts, r.extractor_options, r.seeds
        ({'NMF': 10}, None, (4,))
        >>> t = g.replace(randomized_twins=("all",))
        >>> restricted(t, ("NMF", "NoExplanation")).twin_methods, restricted(t, ("NoExplanation",)).twin_methods
        (('NMF@random-all',), ())
    """
    from collections.abc import Mapping

    kept = set(methods)
    options = {m: o for m, o in (grid.extractor_options or {}).items() if m in kept} or None
    counts = grid.n_concepts
    if isinstance(counts, Mapping):
        counts = {m: c for m, c in counts.items() if m in kept}
    changes: dict[str, object] = {
        "methods": tuple(methods),
        "extractor_options": options,
        "n_concepts": counts,
    }
    if not twins or not any(m in grid.concept_methods for m in kept):
        changes["randomized_twins"] = ()  # a twin re-runs a concept method: none without one
    if seeds is not None:
        changes["seeds"] = tuple(seeds)
    return grid.replace(**changes)


def _frame(store_path: Path, simulator: str, seeds: Sequence[int]) -> pd.DataFrame:
    from xaimetrics.benchmark._store import ResultsStore

    with ResultsStore(store_path) as store:
        frame = store.to_frame()
    if frame.empty:
        return frame
    return frame[(frame["simulator"] == simulator) & frame["seed"].isin(list(seeds))]


def run_gated(
    grid: Grid,
    store_path: str | Path,
    design: GatedDesign | None = None,
    *,
    providers: Providers | None = None,
    artefacts: Artefacts | None = None,
    response_cache: str | Path | None = None,
    progress: bool = True,
    say: Callable[[str], None] | None = None,
    batch: bool = False,
    batch_poll_s: float = 30.0,
) -> list[GatedResult]:
    """Gate each simulator of ``grid`` on its controls, then measure its methods until decided.

    ``grid`` names the methods (with ``NoExplanation``), prompt types and everything else; its ``seeds`` and
    ``controls`` are replaced by the design's (both controls always run in the gate). Returns one
    :class:`GatedResult` per simulator, in the grid's order.
    """
    design = design or GatedDesign.default()
    if BASELINE_METHOD not in grid.methods:
        raise invalid(
            "grid.methods", "run_gated", "a list that holds NoExplanation", list(grid.methods),
            "Every verdict is a difference with the baseline: add NoExplanation.",
        )  # fmt: skip
    store = Path(store_path)
    say = say or (lambda _message: None)
    return [
        _Simulator(grid.replace(simulators=(simulator,), controls=False), store, design, say, {
            "providers": providers, "artefacts": artefacts, "response_cache": response_cache, "progress": progress,
            "batch_poll_s": batch_poll_s,
        }, batch).gate_and_measure()
        for simulator in grid.simulators
    ]  # fmt: skip


class _Simulator:
    """One simulator's gate and measurement on one store."""

    def __init__(
        self,
        grid: Grid,
        store: Path,
        design: GatedDesign,
        say: Callable[[str], None],
        options: dict[str, Any],
        batch: bool = False,
    ) -> None:
        from xaimetrics.consim import CONTROL_ROLES

        self.grid, self.store, self.design, self.say, self.options = grid, store, design, say, options
        self.name = grid.simulators[0]
        self.positive = tuple(m for m, r in CONTROL_ROLES.items() if r == "positive")
        self.negative = tuple(m for m, r in CONTROL_ROLES.items() if r == "negative")
        self.summaries: list[RunSummary] = []
        self.batch = batch

    def _run(
        self, methods: tuple[str, ...], seeds: Sequence[int], *, twins: bool = False, batch: bool = False
    ) -> None:
        from xaimetrics.benchmark._runner import run_grid

        grid = restricted(self.grid, methods, seeds, twins=twins)
        self.summaries.append(run_grid(grid, self.store, calls="batch" if batch else "live", **self.options))

    def _gate_look(self, seeds: Sequence[int]) -> pd.DataFrame:
        self.say(f"Gate of {self.name!r}: baseline and positive control on {len(seeds)} seeds...")
        self._run((BASELINE_METHOD, *self.positive), seeds)
        frame = _frame(self.store, self.name, seeds)
        verdicts = sequential_verdicts(
            unit_difference_table(frame), dict.fromkeys(self.positive, "positive"), self.design.gate, seeds=seeds,
            margin=self.design.margin, pvalues=False,
        )  # fmt: skip
        if (verdicts["verdict"] == "fail").any():
            return frame  # the gate is decided: the negative control would be spent for nothing
        self.say(f"Gate of {self.name!r}: negative control on {len(seeds)} seeds...")
        self._run((BASELINE_METHOD, *self.negative), seeds)
        return _frame(self.store, self.name, seeds)

    def _methods_look(self, seeds: Sequence[int], twins: bool) -> pd.DataFrame:
        methods = self.grid.concept_methods
        twins = twins and bool(self.grid.randomized_twins)
        also = f" and their randomised twins ({', '.join(self.grid.randomized_twins)})" if twins else ""
        self.say(f"Methods with {self.name!r}: {len(methods)} methods{also} on {len(seeds)} fresh seeds...")
        self._run((*methods, BASELINE_METHOD), seeds, twins=twins, batch=self.batch)  # the gate ran live
        return _frame(self.store, self.name, seeds)

    def gate_and_measure(self) -> GatedResult:
        result = _gate_and_measure(
            self.name, bool(self.grid.concept_methods), self.design, self._gate_look, self._methods_look,
            n_methods=len(self.grid.concept_methods), say=self.say,
        )  # fmt: skip
        result.summaries = tuple(self.summaries)
        return result


def _gate_and_measure(
    name: str,
    has_methods: bool,
    design: GatedDesign,
    gate_look: Callable[[Sequence[int]], pd.DataFrame],
    methods_look: Callable[[Sequence[int], bool], pd.DataFrame],
    *,
    n_methods: int | None = None,
    say: Callable[[str], None] | None = None,
) -> GatedResult:
    """The rule, once: gate on the controls; measure the methods when the gate passed (or when forced), with the
    planner's forecast made (and said) before they run; ``methods_look(seeds, twins)`` adds the randomised twins
    when the gate passed, and the twins' rows are kept out of the methods' decision."""
    gate = until_decided(gate_look, design.gate, question="controls", margin=design.margin)
    result = GatedResult(name, gate, gate_outcome(gate.verdicts))
    if has_methods and (result.outcome == "valid" or design.force_methods):
        result.exploratory = result.outcome != "valid"
        twins = not result.exploratory
        if n_methods:
            result.forecast = forecast_methods(gate, n_methods, design)
            if say is not None:
                say(forecast_sentence(result.forecast))
        last: list[pd.DataFrame] = []

        def look(seeds: Sequence[int]) -> pd.DataFrame:
            frame = methods_look(seeds, twins)
            last[:] = [frame]
            return without_twins(frame)

        result.methods = until_decided(
            look, design.methods, question="methods", margin=design.margin, first_seed=design.method_seeds()[0],
        )  # fmt: skip
        if twins and last:
            result.twins = twin_table(last[0], result.methods.seeds)
        if result.forecast is None and not result.methods.verdicts.empty:
            result.forecast = forecast_methods(gate, len(result.methods.verdicts), design)
        if result.forecast is not None:
            result.forecast = dataclasses.replace(
                result.forecast, seeds_used=len(result.methods.seeds), decided=result.methods.decided
            )
    return result


def forecast_methods(gate: SequentialResult, n_methods: int, design: GatedDesign) -> Forecast:
    """Before the methods run: the fresh seeds a method differing from NoExplanation by ``margin`` needs, planned
    with the exact test at Holm's first level from the gate's own unit SD (the controls' differences, pooled)."""
    import math

    from xaimetrics.stats import plan

    sd = math.nan
    if gate.results is not None and len(gate.results):
        differences = unit_difference_table(gate.results)
        variances = differences.var(ddof=1).dropna()
        sd = float(math.sqrt(variances.mean())) if len(variances) else math.nan
    target = design.margin
    seeds = None
    if math.isfinite(sd):
        seeds = plan(
            sd,
            target=target,
            alpha=design.methods.alpha,
            n_comparisons=max(1, n_methods),
            alternative="greater",
        ).units_needed
    return Forecast(sd=sd, target=target, seeds=seeds, n_methods=n_methods, budget=design.methods.max_seeds)


def replay_gated(
    results: pd.DataFrame, design: GatedDesign, simulators: Sequence[str], *, has_methods: bool = True
) -> list[GatedResult]:
    """:func:`run_gated`'s results rebuilt from stored rows, without a call: each look reads the rows of its
    seeds, as the run read them back from its store (so the verdicts are the run's).

    Args:
        results: the store's rows (:meth:`~xaimetrics.benchmark.ResultsStore.to_frame`).
        design: the run's design.
        simulators: the grid's simulators, in its order.
        has_methods: whether the grid listed concept methods.
    """

    def rows_of(simulator: str) -> Callable[[Sequence[int]], pd.DataFrame]:
        mine = results[results["simulator"] == simulator] if len(results) else results
        return lambda seeds: mine[mine["seed"].isin(list(seeds))] if len(mine) else mine

    def methods_of(simulator: str) -> Callable[[Sequence[int], bool], pd.DataFrame]:
        rows = rows_of(simulator)
        return lambda seeds, twins: rows(seeds) if twins else without_twins(rows(seeds))

    return [_gate_and_measure(s, has_methods, design, rows_of(s), methods_of(s)) for s in simulators]


def without_twins(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` without the rows of randomised twins (``"PCA@random-all"`` …).

    Example:
        >>> without_twins(pd.DataFrame({"method": ["PCA", "PCA@random-all", "NoExplanation"]}))["method"].tolist()
        ['PCA', 'NoExplanation']
    """
    from xaimetrics.benchmark._twins import split_twin

    if frame.empty or "method" not in frame.columns:
        return frame
    return frame[[split_twin(str(m))[1] is None for m in frame["method"]]]


def twin_table(frame: pd.DataFrame, seeds: Sequence[int]) -> pd.DataFrame | None:
    """:func:`~xaimetrics.benchmark._twin_comparison.twin_comparison` of the rows of ``seeds`` (the methods' seeds), on the score
    the rankings use (``"auto"``); ``None`` when they hold no twin."""
    from xaimetrics.benchmark._analysis import ranking_frame
    from xaimetrics.benchmark._twin_comparison import twin_comparison

    rows = frame[frame["seed"].isin(list(seeds))] if len(frame) else frame
    if len(without_twins(rows)) == len(rows):
        return None
    table = twin_comparison(ranking_frame(rows, metric="auto"))
    return None if table.empty else table


#: the store's meta key of a gated run: what ``xaimetrics benchmark report`` needs to replay its verdicts
GATED_META = "sequential"


def seeds_used(results: Sequence[GatedResult]) -> list[int]:
    """Every seed the gates and the methods of ``results`` ran on, sorted.

    Example:
        >>> from types import SimpleNamespace
        >>> seeds_used([SimpleNamespace(seeds={"gate": (0, 1), "methods": (8,)}), SimpleNamespace(seeds={"gate": (0,), "methods": ()})])
        [0, 1, 8]
    """
    return sorted({seed for result in results for part in result.seeds.values() for seed in part})


def store_gated_meta(
    store_path: str | Path, grid: Grid, design: GatedDesign, results: Sequence[GatedResult]
) -> None:
    """Keep with the rows what a gated run was: its design, its simulators, whether it listed methods, each
    simulator's gate outcome and the seeds each part used (``GATED_META``), and the grid with those seeds."""
    from xaimetrics.benchmark._store import ResultsStore

    used = seeds_used(results)
    with ResultsStore(store_path) as store:
        store.set_meta(GATED_META, {
            "design": design.to_dict(), "simulators": [r.simulator for r in results],
            "has_methods": bool(grid.concept_methods),
            "outcomes": {r.simulator: r.outcome for r in results},
            "seeds": {r.simulator: {k: list(v) for k, v in r.seeds.items()} for r in results},
        })  # fmt: skip
        store.set_meta("grid", grid.replace(seeds=tuple(used) or grid.seeds, controls=True).to_dict())


def plan_gated(grid: Grid, design: GatedDesign | None = None) -> dict[str, Any]:
    """The worst case of :func:`run_gated` before any call: settings per part and in all (every look made).

    Example:
        >>> from xaimetrics.benchmark import Grid
        >>> g = Grid(methods=("NMF", "PCA", "NoExplanation"), prompt_types=("NE2-a", "E2-a"), simulators=("lexical",))
        >>> plan_gated(g)["settings"]
        {'gate': 24, 'methods': 48, 'total': 72}
    """
    design = design or GatedDesign.default()
    parts = part_grids(grid)
    per_seed_gate = len(parts["gate"].settings())
    per_seed_methods = len(parts["methods"].settings())
    gate = per_seed_gate * design.gate.max_seeds
    methods = per_seed_methods * design.methods.max_seeds if grid.concept_methods else 0
    return {
        "settings": {"gate": gate, "methods": methods, "total": gate + methods},
        "seeds": {"gate": design.gate.max_seeds, "methods": design.methods.max_seeds},
        "per_seed": {"gate": per_seed_gate, "methods": per_seed_methods},
        "simulators": list(grid.simulators),
    }


def part_grids(grid: Grid, seed: int = 0) -> dict[str, Grid]:
    """The settings of one seed of each part, as grids: ``{"gate": baseline and both controls, "methods": the
    concept methods and the baseline}`` (the worst case of a gate look: the negative control runs too)."""
    from xaimetrics.consim import CONTROL_ROLES

    base = grid.replace(controls=False)
    return {
        "gate": restricted(base, (BASELINE_METHOD, *CONTROL_ROLES), (seed,)),
        "methods": restricted(base, (*grid.concept_methods, BASELINE_METHOD), (seed,)),
    }
