"""One group of grid settings: its prompts, its simulator calls and its result rows.

A group shares dataset × model × method × k × seed × simulator: one concept fit, one LP/EP selection, and one
:class:`~xaimetrics.consim.Explanation` per interpretation. Data flows one way: this module asks
:class:`~xaimetrics.benchmark.Artefacts` for what it needs (they compute and cache it, and never call back),
renders the prompts with :class:`~xaimetrics.consim.ConSim`, asks the simulator through
:func:`xaimetrics.consim.evaluate_prompts` — the path of :meth:`ConSim.evaluate_prompts
<xaimetrics.consim.ConSim.evaluate_prompts>` — and turns each result into a store row. The local runner and
the Ray workers both use it; it imports neither of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from xaimetrics.benchmark._artefacts import Artefacts
from xaimetrics.benchmark._grid import Setting
from xaimetrics.benchmark._row import ResultRow
from xaimetrics.consim import ConSimResult

__all__ = ["ask", "build_group_prompts", "register_prompts", "setting_row"]


def build_group_prompts(
    artefacts: Artefacts, settings: list[Setting], simulators: Mapping[str, Any]
) -> list[tuple[Setting, Any]]:
    """The prompts of settings sharing dataset, model, method, number of concepts, seed and simulator.

    Built once per group and kept by the artefacts (a resumed run reuses them); one
    :class:`~xaimetrics.consim.ConSim` per interpretation renders all of its prompt types at once, so the
    importances are computed once.
    """
    stored = artefacts.stored_prompts(settings)
    if stored is not None:
        return stored
    from xaimetrics.consim import ConSim

    first = settings[0]
    samples = artefacts.samples(first.dataset, first.model, first.seed)
    _, pool = artefacts.data(first.dataset)
    model = artefacts.model(first.dataset, first.model)
    kinds: dict[str, list[Setting]] = {}
    for setting in settings:
        kinds.setdefault(setting.interpretation, []).append(setting)
    prompts: dict[str, Any] = {}
    for of_kind in kinds.values():
        explanation = artefacts.explanation(of_kind[0], simulators.get(first.simulator))
        consim = ConSim(
            model, None, list(pool.class_names), explanation=explanation,
            max_sample_chars=artefacts.grid.max_sample_chars,
        )  # fmt: skip
        built = consim.build_prompts(samples, prompt_types=[s.label for s in of_kind])
        prompts.update({s.key: p for s, p in zip(of_kind, built, strict=True)})
    out = [(setting, prompts[setting.key]) for setting in settings]
    artefacts.store_prompts(settings, out)
    return out


def register_prompts(simulators: Mapping[str, Any], prompts: list[tuple[Setting, Any]]) -> None:
    """Tell each simulator with a ``register(setting, prompt)`` method (oracles, replays) its settings."""
    for setting, prompt in prompts:
        register = getattr(simulators[setting.simulator], "register", None)
        if callable(register):
            register(setting, prompt)


def ask(simulator: Any, setting: Setting, prompt: Any) -> tuple[Any, bool]:
    """Call the simulator on one prompt and score it; ``(ConSimResult, ok)``. Never raises on a bad call: a
    simulator that raises is recorded as a failed call, retried by the next run."""
    from xaimetrics.consim import evaluate_prompts

    (result,) = evaluate_prompts(
        [prompt], simulator, scoring=setting.scoring, seed=setting.seed, errors="record"
    )
    return result, result.error is None


def setting_row(setting: Setting, result: ConSimResult) -> tuple[ResultRow, dict[str, object]]:
    """The store row and the JSON payload (prompt, answer, parse details) of a scored setting."""
    row = ResultRow.of({**setting.params(), "scoring": setting.scoring}, [result])
    return row, {"setting": setting.params(), "result": result.to_dict()}
