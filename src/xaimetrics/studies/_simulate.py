"""An LLM simulator on a study's own arms: the prompts rendered from the bundle, so the LLM and the people
answer the same samples with the same explanations, and their rows meet in one results store."""

from __future__ import annotations

from typing import Any

from xaimetrics._validation import invalid
from xaimetrics.consim import score_response
from xaimetrics.studies._simulatability import SimulatabilityStudy

__all__ = ["simulate_study"]


def simulate_study(study: SimulatabilityStudy, simulator: Any, results: Any, *, name: str) -> dict[str, int]:
    """Ask ``simulator`` every arm's ConSim prompt, score it (eq. 5) and store one row per arm.

    Rows and keys are those of ``xaimetrics benchmark run`` for the same setting and simulator name, so
    settings already in the store (from the benchmark, or an earlier call) are skipped. A failed call is not
    stored (counted in ``"failed"``; run again to retry).

    Args:
        study: the simulatability study.
        simulator: anything with ``generate(messages, *, answer_schema=None)``.
        results: a :class:`~xaimetrics.benchmark.ResultsStore` or its path.
        name: the simulator's name in the results (e.g. ``"local"``, ``"openai:gpt-4o-mini"``).

    Returns:
        ``{"written": ..., "skipped": ..., "failed": ...}``.

    Example:
        >>> import os, tempfile
        >>> from xaimetrics.simulators import ScriptedSimulator
        >>> from xaimetrics.studies import SampleSet, StudyArm
        >>> samples = SampleSet.from_texts(0, ["goal", "chip"], [0, 1], ["late goal"], [0])
        >>> study = SimulatabilityStudy(["sports", "tech"], [samples], [], [StudyArm("NoExplanation", "NE2", False, 0)])
        >>> path = os.path.join(tempfile.mkdtemp(), "results.sqlite")
        >>> simulate_study(study, ScriptedSimulator(lambda m: "Sample_2: sports"), path, name="scripted")
        {'written': 1, 'skipped': 0, 'failed': 0}
    """
    from xaimetrics.benchmark import ResultRow, ResultsStore, setting_key
    from xaimetrics.simulators import SimulatorResponse

    if not isinstance(study, SimulatabilityStudy):
        raise invalid("study", "simulate_study", "a SimulatabilityStudy", type(study).__name__)
    if not callable(getattr(simulator, "generate", None)):
        raise invalid(
            "simulator", "simulate_study", "an object with generate(messages)", type(simulator).__name__
        )
    owned = not isinstance(results, ResultsStore)
    store = ResultsStore(results) if owned else results
    counts = {"written": 0, "skipped": 0, "failed": 0}
    try:
        done = store.keys()
        for arm in study.arms:
            setting = {"dataset": study.dataset, "model": study.model, **arm.setting(), "simulator": name,
                       "phase": "evaluation"}  # fmt: skip
            key = setting_key(setting)
            if key in done:
                counts["skipped"] += 1
                continue
            prompt = study.prompt(arm)
            try:
                response = simulator.generate(list(prompt.messages), answer_schema=prompt.answer_schema)
            except TypeError:  # a simulator without answer schemas
                response = simulator.generate(list(prompt.messages))
            except Exception as error:  # a failed call is retried by the next run, never stored
                response = SimulatorResponse("", error=f"{type(error).__name__}: {error}")
            result = score_response(prompt, response, seed=arm.seed)
            if result.error is not None or result.raw_answer is None:
                counts["failed"] += 1
                continue
            store.add(key, ResultRow.of(setting, [result]), {"setting": setting, "result": result.to_dict()})
            counts["written"] += 1
    finally:
        if owned:
            store.close()
    return counts
