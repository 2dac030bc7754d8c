"""Ask a simulator about rendered ConSim prompts and score its answers.

The one path from a prompt to a :class:`~xaimetrics.consim.ConSimResult`, shared by
:meth:`ConSim.evaluate_prompts <xaimetrics.consim.ConSim.evaluate_prompts>` and the benchmark runner: the
prompt's answer schema (asking for class probabilities when scoring by probability), one batched call when the
simulator is a :class:`~xaimetrics.simulators.BatchSimulator` and there are several prompts, one call per
prompt otherwise, then :func:`~xaimetrics.consim.score_response`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from xaimetrics._validation import invalid
from xaimetrics.consim._result import ConSimResult
from xaimetrics.consim._scoring import ConSimPrompt, Scoring, answer_schema, check_scoring, score_response
from xaimetrics.simulators import AnswerSchema, BatchSimulator, ChatMessage, Simulator, SimulatorResponse

__all__ = ["evaluate_prompts"]

#: what a simulator that raises becomes: the exception (``"raise"``) or a failed, recorded call (``"record"``)
Errors = Literal["raise", "record"]
_OWNER = "evaluate_prompts"


def evaluate_prompts(
    prompts: Sequence[ConSimPrompt],
    simulator: Simulator | None,
    *,
    scoring: Scoring = "accuracy",
    seed: int | None = None,
    max_concurrency: int | None = None,
    errors: Errors = "raise",
) -> list[ConSimResult]:
    """Ask ``simulator`` about rendered prompts and score each answer (eq. 5; probabilities when asked).

    Args:
        prompts: :class:`ConSimPrompt` objects (from :func:`render_prompt` or :meth:`ConSim.build_prompts`);
            prompts of different methods or samples can be mixed.
        simulator: a :class:`~xaimetrics.simulators.Simulator` (``generate(messages, *, answer_schema)``), or
            ``None`` for a dry run (results with ``score=None`` that carry the prompts and references).
        scoring: ``"accuracy"`` or ``"probability"`` (the simulator must then give class probabilities).
        seed: the selection seed, recorded in the results.
        max_concurrency: the most calls in flight for a batched call (default: the simulator's).
        errors: ``"raise"`` lets a simulator's exception through; ``"record"`` turns it into a failed call
            (``result.error`` says why), as the benchmark runner does so that it can retry the setting later.

    Returns:
        One :class:`ConSimResult` per prompt, in order.

    Example:
        >>> from xaimetrics.consim import render_prompt
        >>> from xaimetrics.simulators import ScriptedSimulator
        >>> prompt = render_prompt("NE1", class_names=["negative", "positive"], ep_samples=["fun", "dull"],
        ...                        ep_predictions=[1, 0])
        >>> [r.score for r in evaluate_prompts([prompt], ScriptedSimulator(["Sample_0: positive"]))]
        [0.5]
    """
    prompts = list(prompts)
    for prompt in prompts:
        if not isinstance(prompt, ConSimPrompt):
            raise invalid("prompts", _OWNER, "ConSimPrompt objects", type(prompt).__name__)
    if errors not in ("raise", "record"):
        raise invalid("errors", _OWNER, "'raise' or 'record'", errors)
    if simulator is not None and not callable(getattr(simulator, "generate", None)):
        raise invalid(
            "simulator", _OWNER, "None or an object with generate(messages)", type(simulator).__name__
        )
    check_scoring(scoring, simulator, _OWNER)
    if simulator is None:
        return [score_response(prompt, None, seed=seed) for prompt in prompts]
    conversations = [list(prompt.messages) for prompt in prompts]
    schemas = [answer_schema(prompt, scoring) for prompt in prompts]
    try:
        if len(prompts) > 1 and isinstance(simulator, BatchSimulator):
            responses = list(
                simulator.generate_batch(
                    conversations, answer_schemas=schemas, max_concurrency=max_concurrency
                )
            )
        else:
            responses = [
                _generate(simulator, c, s, errors) for c, s in zip(conversations, schemas, strict=True)
            ]
    except Exception as error:  # errors="record": every prompt of the failed batch is a failed call
        if errors == "raise":
            raise
        responses = [_failure(error)] * len(prompts)
    return [score_response(p, r, seed=seed) for p, r in zip(prompts, responses, strict=True)]


def _generate(
    simulator: Simulator, messages: list[ChatMessage], schema: AnswerSchema, errors: Errors
) -> SimulatorResponse:
    try:
        return simulator.generate(messages, answer_schema=schema)
    except Exception as error:
        if errors == "raise":
            raise
        return _failure(error)


def _failure(error: Exception) -> SimulatorResponse:
    return SimulatorResponse("", error=f"{type(error).__name__}: {error}")
