"""An LLM simulator on a study's own arms: the prompts rendered from the bundle, so the LLM and the people
answer the same samples with the same explanations, and their rows meet in one results store."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from xaimetrics._validation import invalid
from xaimetrics.consim import score_response
from xaimetrics.studies._simulatability import SimulatabilityStudy

if TYPE_CHECKING:
    from xaimetrics.benchmark import ResultsStore
    from xaimetrics.simulators import Simulator

__all__ = ["simulate_study"]

_LOG = logging.getLogger("xaimetrics.studies")


def simulate_study(
    study: SimulatabilityStudy,
    simulator: Simulator,
    results: ResultsStore | str | Path,
    *,
    name: str,
) -> dict[str, int]:
    """Ask ``simulator`` every arm's ConSim prompt, score it (eq. 5) and store one row per arm.

    Rows are those of ``xaimetrics benchmark run`` for the same setting and simulator name, so settings already
    reported by the store (from the benchmark, whose keys also hold its inputs fingerprint, or an earlier call)
    are skipped. A failed call is not stored (counted in ``"failed"``; run again to retry).

    Args:
        study: the simulatability study.
        simulator: a :class:`~xaimetrics.simulators.Simulator` (``generate(messages, *, answer_schema=None)``).
        results: a :class:`~xaimetrics.benchmark.ResultsStore` or its path.
        name: the simulator's name in the results (e.g. ``"local"``, ``"openai:gpt-4o-mini"``).

    Returns:
        ``{"written": ..., "skipped": ..., "failed": ...}``.

    Example:
        >>> import os, tempfile
        >>> from xaimetrics.simulators import ScriptedSimulator
        >>> from xaimetrics.studies._simulatability import SampleSet, StudyArm
        >>> samples = SampleSet.from_texts(0, ["goal", "chip"], [0, 1], ["late goal"], [0])
        >>> study = SimulatabilityStudy(["sports", "tech"], [samples], [], [StudyArm("NoExplanation", "NE2", False, 0)])
        >>> path = os.path.join(tempfile.mkdtemp(), "results.sqlite")
        >>> simulate_study(study, ScriptedSimulator(lambda m: "Sample_2: sports"), path, name="scripted")
        {'written': 1, 'skipped': 0, 'failed': 0}
    """
    from xaimetrics.benchmark import ResultRow, ResultsStore
    from xaimetrics.benchmark._inputs import setting_identity
    from xaimetrics.benchmark._store import setting_key
    from xaimetrics.simulators import SimulatorResponse

    if not isinstance(study, SimulatabilityStudy):
        raise invalid("study", "simulate_study", "a SimulatabilityStudy", type(study).__name__)
    if not callable(getattr(simulator, "generate", None)):
        raise invalid(
            "simulator", "simulate_study", "an object with generate(messages)", type(simulator).__name__
        )
    store = results if isinstance(results, ResultsStore) else ResultsStore(results)
    owned = store is not results
    counts = {"written": 0, "skipped": 0, "failed": 0}
    try:
        done = store.keys()
        reported = _reported_settings(store)
        for arm in study.arms:
            setting = {"dataset": study.dataset, "model": study.model, **arm.setting(), "simulator": name,
                       "phase": "evaluation"}  # fmt: skip
            key = setting_key(setting)
            if key in done or setting_identity(setting, n_concepts=True) in reported:
                _LOG.debug("simulate_study: %s skipped, already in the results store", arm.id)
                counts["skipped"] += 1
                continue
            prompt = study.prompt(arm)
            try:
                response = simulator.generate(list(prompt.messages), answer_schema=prompt.answer_schema)
            except Exception as error:  # a failed call is retried by the next run, never stored
                response = SimulatorResponse("", error=f"{type(error).__name__}: {error}")
            result = score_response(prompt, response, seed=arm.seed)
            if result.error is not None or result.raw_answer is None:
                _LOG.warning("simulate_study: %s failed (%s); not stored, a rerun retries it", arm.id,
                             (result.error or "no answer").split(":")[0])  # fmt: skip
                counts["failed"] += 1
                continue
            store.add(key, ResultRow.of(setting, [result]), {"setting": setting, "result": result.to_dict()})
            counts["written"] += 1
    finally:
        if owned:
            store.close()
    return counts


def _reported_settings(store: ResultsStore) -> set[str]:
    """The identities of the settings the store reports (not superseded): a grid row counts whatever its inputs
    fingerprint, which the study's settings do not carry."""
    from xaimetrics.benchmark._inputs import setting_identity

    hidden = store.superseded()
    identities = set()
    for row in store.rows():
        if row["key"] in hidden:
            continue
        try:
            identities.add(setting_identity(row, n_concepts=True))
        except (KeyError, TypeError, ValueError):  # a row without the setting columns
            continue
    return identities
