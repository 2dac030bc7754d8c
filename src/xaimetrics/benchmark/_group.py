"""One group of grid settings: its prompts, its simulator calls and its result rows.

A group shares dataset × model × method × k × seed × simulator: one concept fit, one LP/EP selection, and one
:class:`~xaimetrics.consim.Explanation` per interpretation. Data flows one way: this module asks
:class:`~xaimetrics.benchmark.Artefacts` for what it needs (they compute and cache it, and never call back),
renders the prompts with :func:`xaimetrics.consim.build_prompts`, asks the simulator through
:func:`xaimetrics.consim.evaluate_prompts` — the functions :class:`~xaimetrics.consim.ConSim` and
``xaimetrics consim`` call — and turns each result into a store row. The local runner and the Ray workers both
use it; it imports neither of them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import cast

from xaimetrics.benchmark._artefacts import Artefacts, ConceptFit, FitFailed, SettingPrompts
from xaimetrics.benchmark._grid import Setting
from xaimetrics.benchmark._row import ResultRow
from xaimetrics.consim import (
    ConSimPrompt,
    ConSimResult,
    Scoring,
    build_prompts,
    evaluate_prompts,
)
from xaimetrics.simulators import Simulator
from xaimetrics.simulators._openai import PromptCacheHint, prompt_cache_hint

__all__ = ["ask", "build_group_prompts", "group_prompts", "group_settings", "register_prompts", "setting_row"]


def group_settings(settings: list[Setting]) -> list[list[Setting]]:
    """``settings`` cut into groups sharing dataset, model, method, number of concepts, seed, simulator and phase
    (in order of first appearance)."""
    groups: dict[tuple[object, ...], list[Setting]] = {}
    for s in settings:
        groups.setdefault(
            (s.dataset, s.model, s.method, s.n_concepts, s.seed, s.simulator, s.phase), []
        ).append(s)
    return list(groups.values())


def build_group_prompts(
    artefacts: Artefacts, settings: list[Setting], simulators: Mapping[str, Simulator]
) -> SettingPrompts:
    """The prompts of settings sharing dataset, model, method, number of concepts, seed and simulator.

    Built once per group and kept by the artefacts (a resumed run reuses them); one
    :func:`~xaimetrics.consim.build_prompts` call per interpretation renders all of its prompt types at once, so
    the importances are computed once.
    """
    stored = artefacts.stored_prompts(settings)
    if stored is not None:
        return stored
    first = settings[0]
    samples = artefacts.samples(first.dataset, first.model, first.seed)
    _, pool = artefacts.aligned_data(first.dataset, first.model)  # class names in the model's order
    model = artefacts.classifier(ConceptFit.of(first))  # a twin's importances are its randomised copy's
    kinds: dict[str, list[Setting]] = {}
    for setting in settings:
        kinds.setdefault(setting.interpretation, []).append(setting)
    prompts: dict[str, ConSimPrompt] = {}
    for of_kind in kinds.values():
        explanation = artefacts.explanation(of_kind[0], simulators.get(first.simulator))
        built = build_prompts(
            samples, explanation, [s.label for s in of_kind], model=model, class_names=list(pool.class_names),
            max_sample_chars=artefacts.config.max_sample_chars, layout=artefacts.config.prompt_layout,
        )  # fmt: skip
        prompts.update({s.key: p for s, p in zip(of_kind, built, strict=True)})
    out = [(setting, prompts[setting.key]) for setting in settings]
    artefacts.store_prompts(settings, out)
    return out


def group_prompts(
    artefacts: Artefacts, settings: list[Setting], simulators: Mapping[str, Simulator]
) -> tuple[SettingPrompts, str | None]:
    """:func:`build_group_prompts`, or no prompts and the extractor's message when the group's concept fit fails
    (:class:`~xaimetrics.benchmark._artefacts.FitFailed`): the runners record those settings as failed and go
    on with the other groups, so that one method that cannot be fitted (ICA on a randomised twin's constant
    activations) never stops a grid."""
    try:
        return build_group_prompts(artefacts, settings, simulators), None
    except FitFailed as error:
        return [], str(error)


def register_prompts(simulators: Mapping[str, Simulator], prompts: SettingPrompts) -> None:
    """Tell each simulator with a ``register(setting, prompt)`` method (oracles, replays) its settings."""
    for setting, prompt in prompts:
        register = getattr(simulators[setting.simulator], "register", None)
        if callable(register):
            register(setting, prompt)


def ask(simulator: Simulator, setting: Setting, prompt: ConSimPrompt) -> tuple[ConSimResult, bool]:
    """Call the simulator on one prompt and score it; ``(ConSimResult, ok)``. Never raises on a bad call: a
    simulator that raises is recorded as a failed call, retried by the next run.

    The call carries a :class:`~xaimetrics.simulators._openai.PromptCacheHint` for OpenAI-compatible servers:
    one ``prompt_cache_key`` per dataset × model × seed × simulator (the prompts that share a learning-phase
    block), and the shared part of the system message for an Anthropic breakpoint."""
    scope = f"{setting.dataset}|{setting.model}|{setting.seed}|{setting.simulator}|{setting.phase}"
    hint = PromptCacheHint(
        "xaimetrics-" + hashlib.sha256(scope.encode()).hexdigest()[:24], prompt.shared_prefix_chars
    )
    with prompt_cache_hint(hint):
        (result,) = evaluate_prompts(
            [prompt], simulator, scoring=cast(Scoring, setting.scoring), seed=setting.seed, errors="record"
        )
    return result, result.error is None


def setting_row(setting: Setting, result: ConSimResult) -> tuple[ResultRow, dict[str, object]]:
    """The store row and the JSON payload (prompt, answer, parse details) of a scored setting."""
    row = ResultRow.of({**setting.params(), "scoring": setting.scoring}, [result])
    return row, {"setting": setting.params(), "result": result.to_dict()}
