"""Score a simulator's answer to a ConSim prompt (paper eq. 5) and keep everything needed to audit it.

``acc = mean over EP samples of 1{Ψ(x) = f(x)}``: the reference is **f's prediction on each EP sample** (not
the true label, and not the LP samples' predictions as in Interpreto 0.5). Missing, invalid and conflicting
answers count as wrong and are reported.

Policy for the two cases where a number would mislead:

- **U1** (local explanations at EP) leaks f's predictions: its accuracy goes to
  :attr:`ConSimResult.upper_bound` and :attr:`ConSimResult.score` stays ``None``, so it can never be ranked
  as a ConSim score by accident.
- **No answer at all** (no simulator — a dry run — or a call that failed for good after its retries):
  ``score`` is ``None``; :attr:`ConSimResult.error` says why, and every sample is counted as missing. An
  infrastructure failure is not a measurement of simulatability; re-run the setting instead of ranking it.

**Probabilistic simulatability** (when the simulator returned class probabilities ``p_i`` for every EP sample
``x_i``; docs/consim.md): with ``y_i = f(x_i)``,

- expected accuracy ``(1/|EP|) Σ_i p_i(y_i)`` — the accuracy a simulator sampling from ``p_i`` would get in
  expectation; far less variance than eq. 5's 0/1 outcomes;
- log-loss ``−(1/|EP|) Σ_i log max(p_i(y_i), 1e-12)``;
- Brier score ``(1/|EP|) Σ_i Σ_c (p_i(c) − 1{c = y_i})²`` (0 is perfect, 2 the worst).

The answer text then holds the most probable class per sample, so ``score`` (eq. 5) is the accuracy of
those argmax answers.

The result is a :class:`~xaimetrics.consim.ConSimResult` (``_result.py``); the prompt whose answer key it
checks, :class:`ConSimPrompt`, lives here so that rendering and scoring depend on it, never on each other.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, NamedTuple

import numpy as np

from xaimetrics._registry import Registry
from xaimetrics._validation import invalid
from xaimetrics.consim._parsing import ParsedAnswers, parse_answers
from xaimetrics.consim._prompt_types import PromptSetting
from xaimetrics.consim._result import ConSimResult
from xaimetrics.simulators import AnswerSchema, ChatMessage, SimulatorResponse, Usage

__all__ = [
    "SCORINGS",
    "ConSimPrompt",
    "ConSimResult",
    "ScoringKind",
    "answer_schema",
    "check_scoring",
    "score_response",
]

Scoring = Literal["accuracy", "probability"]

_LOG_FLOOR = 1e-12


@dataclass(frozen=True)
class ScoringKind:
    """How a simulator's answer is scored: what to ask the simulator for, and what that needs.

    Args:
        schema: the answer schema to send, from the prompt's own (:attr:`ConSimPrompt.answer_schema`).
        needs_probabilities: the simulator must return class probabilities (log-probabilities).

    Example:
        >>> SCORINGS.get("probability").needs_probabilities, SCORINGS.names()
        (True, ('accuracy', 'probability'))
        >>> SCORINGS.get("probability").schema(AnswerSchema(("0",), ("no", "yes"))).probabilities
        True
    """

    schema: Callable[[AnswerSchema], AnswerSchema]
    needs_probabilities: bool = False


def _with_probabilities(schema: AnswerSchema) -> AnswerSchema:
    return dataclasses.replace(schema, probabilities=True)


#: how a simulator's answer is scored (the ``scoring`` of a setting)
SCORINGS: Registry[ScoringKind] = Registry("scoring", argument="scoring")
SCORINGS.register(
    "accuracy", ScoringKind(lambda schema: schema), builtin=True, description="eq. 5 on the answer text",
)  # fmt: skip
SCORINGS.register(
    "probability", ScoringKind(_with_probabilities, needs_probabilities=True), builtin=True,
    description="also the simulator's class probabilities: expected accuracy, log-loss, Brier (needs log-probabilities)",
)  # fmt: skip


@dataclass(frozen=True)
class ConSimPrompt:
    """A rendered ConSim prompt and what its answer is scored against.

    Attributes:
        messages: ``(system, user)`` chat messages.
        setting: the :class:`PromptSetting` (prompt type, and whether classes are shown as ``Class_i``).
        class_names: the real class names, index = class id.
        shown_classes: the names the simulator sees and must answer with (real or ``Class_i``).
        lp_sample_ids, sample_ids: the ids (strings, ``"20"`` for ``Sample_20``) of the LP and EP samples.
        references: f's prediction (class id) for each EP sample, in ``sample_ids`` order — the targets of
            eq. 5.
        concept_ids: the concepts shown in the global explanation (empty for baselines).
        shared_prefix_chars: in the ``"cache"`` layout, the characters at the start of the system message that
            every prompt of the seed shares (task, classes, LP block): where a provider's cache breakpoint goes;
            0 in the paper's layout.
    """

    messages: tuple[ChatMessage, ...]
    setting: PromptSetting
    class_names: tuple[str, ...]
    shown_classes: tuple[str, ...]
    lp_sample_ids: tuple[str, ...]
    sample_ids: tuple[str, ...]
    references: tuple[int, ...]
    concept_ids: tuple[int, ...] = ()
    shared_prefix_chars: int = 0

    @property
    def label(self) -> str:
        """Short name of the setting, e.g. ``"E3-a"``."""
        return self.setting.label

    @property
    def answer_schema(self) -> AnswerSchema:
        """The expected answer: one ``Sample_{id}: {class}`` line per EP id, with the shown class names."""
        return AnswerSchema(sample_ids=self.sample_ids, classes=self.shown_classes)

    @property
    def reference_answer(self) -> str:
        """The perfect answer (f's predictions, with the shown class names), one line per EP sample."""
        return "\n".join(
            f"Sample_{i}: {self.shown_classes[c]}"
            for i, c in zip(self.sample_ids, self.references, strict=True)
        )

    @property
    def text(self) -> str:
        """The whole prompt as plain text (roles as headers), for ``--dry-run`` and reports."""
        return "\n\n".join(f"[{message.role}]\n{message.content}" for message in self.messages)

    def score(self, response: SimulatorResponse | str | None, *, seed: int | None = None) -> ConSimResult:
        """Parse an answer to this prompt and score it (see :func:`~xaimetrics.consim.score_response`)."""
        return score_response(self, response, seed=seed)


def score_response(
    prompt: ConSimPrompt, response: SimulatorResponse | str | None, *, seed: int | None = None
) -> ConSimResult:
    """Parse ``response`` (by sample id) and score it against f's predictions on the EP samples (eq. 5).

    Args:
        prompt: the rendered prompt (holds the EP ids, the shown class names and the references).
        response: a :class:`~xaimetrics.simulators.SimulatorResponse`, a bare answer text, or ``None``
            (no simulator: the result carries the prompt and the references, ``score=None``).
        seed: the selection seed, recorded in the result.

    Returns:
        A :class:`ConSimResult`.

    Example:
        >>> from xaimetrics.consim import render_prompt
        >>> prompt = render_prompt("NE1", class_names=["prime", "not prime"], lp_samples=["7", "9"],
        ...                        ep_samples=["4", "5", "8"], ep_predictions=[1, 0, 0])
        >>> result = score_response(prompt, "Sample_2: Not prime\\nSample_3: prime\\nSample_4: prime")
        >>> result.score, result.n_correct, result.answers["3"]
        (1.0, 3, 'prime')
        >>> score_response(prompt, "Sample_3: prime").score  # two answers missing count as wrong
        0.3333333333333333
    """
    if not isinstance(prompt, ConSimPrompt):
        raise invalid(
            "prompt", "score_response", "a ConSimPrompt (from render_prompt)", type(prompt).__name__
        )
    if response is not None and not isinstance(response, str | SimulatorResponse):
        raise invalid(
            "response", "score_response", "a SimulatorResponse, a string or None", type(response).__name__
        )
    text: str | None
    if isinstance(response, SimulatorResponse):
        text = response.text if response.error is None else None
    else:
        text = response
    parsed: ParsedAnswers = parse_answers(text, prompt.sample_ids, prompt.shown_classes)
    names = prompt.class_names
    references = {i: names[c] for i, c in zip(prompt.sample_ids, prompt.references, strict=True)}
    answers = {i: (None if c is None else names[c]) for i, c in parsed.answers.items()}
    n_correct = sum(
        1 for i, c in zip(prompt.sample_ids, prompt.references, strict=True) if parsed.answers[i] == c
    )
    accuracy = n_correct / len(prompt.sample_ids) if text is not None else None
    upper = prompt.setting.kind.is_upper_bound
    model, usage, error = "", Usage(), None
    if isinstance(response, SimulatorResponse):
        model, usage, error = response.model, response.usage, response.error
    elif isinstance(response, str):
        usage = Usage.of_call()  # an answer text stands for one call
    scores = None
    if isinstance(response, SimulatorResponse) and text is not None:
        scores = _probabilistic_scores(prompt, response)
    answered = [c for c in parsed.answers.values() if c is not None]
    return ConSimResult(
        setting=prompt.setting,
        score=None if upper else accuracy,
        upper_bound=accuracy if upper else None,
        sample_ids=prompt.sample_ids,
        references=references,
        answers=answers,
        statuses=dict(parsed.statuses),
        raw_answers=dict(parsed.raw),
        n_correct=n_correct,
        n_parsed=parsed.count("ok"),
        n_missing=parsed.count("missing"),
        n_invalid=parsed.count("invalid"),
        n_conflicting=parsed.count("conflict"),
        messages=prompt.messages,
        raw_answer=(response.text if isinstance(response, SimulatorResponse) else response),
        unexpected_ids=parsed.unexpected_ids,
        concept_ids=prompt.concept_ids,
        seed=seed,
        majority_share=None if text is None else _majority_share(answered, len(prompt.sample_ids)),
        reference_majority_share=_majority_share(list(prompt.references), len(prompt.sample_ids)),
        invalid_reasons=dict(parsed.reasons),
        model=model,
        usage=usage,
        error=error,
        **(scores._asdict() if scores is not None else {}),
    )


def check_scoring(scoring: object, simulator: object, owner: str) -> None:
    """Check a scoring mode, and that ``simulator`` (if given) can give class probabilities when asked."""
    if scoring not in SCORINGS.names():
        raise invalid("scoring", owner, f"one of {SCORINGS.choices()}", scoring)
    if (
        SCORINGS.get(scoring).needs_probabilities
        and simulator is not None
        and not getattr(simulator, "supports_probabilities", False)
    ):
        raise invalid(
            "scoring", owner, "'accuracy' for a simulator without class probabilities",
            f"'probability' with {type(simulator).__name__}",
            "Use a simulator that exposes token log-probabilities (LlamaCppSimulator, TransformersChatSimulator, "
            "OpenAICompatibleSimulator with logprobs) or scoring='accuracy'.",
        )  # fmt: skip


def answer_schema(prompt: ConSimPrompt, scoring: str) -> AnswerSchema:
    """The prompt's answer schema as the entry ``scoring`` of :data:`SCORINGS` asks it (``"probability"``: with
    class probabilities)."""
    return SCORINGS.get(scoring).schema(prompt.answer_schema)


def _majority_share(values: list[int], n: int) -> float:
    if not values or not n:
        return 0.0
    return max(values.count(v) for v in set(values)) / n


class _ProbabilityScores(NamedTuple):
    probabilities: dict[str, tuple[float, ...]]
    expected_accuracy: float
    reference_probabilities: dict[str, float]
    log_loss: float
    brier: float
    probability_spread: float


def _probabilistic_scores(prompt: ConSimPrompt, response: SimulatorResponse) -> _ProbabilityScores | None:
    """Expected accuracy, log-loss and Brier score from the response's class probabilities (if any)."""
    from xaimetrics.simulators._probabilities import check_probabilities

    probabilities = response.probabilities
    if probabilities is None:
        return None
    checked = check_probabilities(probabilities, prompt.answer_schema, "score_response")
    rows = np.array([checked[i] for i in prompt.sample_ids], dtype=np.float64)
    truth = np.zeros_like(rows)
    truth[np.arange(len(rows)), list(prompt.references)] = 1.0
    given = rows[np.arange(len(rows)), list(prompt.references)]
    return _ProbabilityScores(
        probabilities=checked,
        expected_accuracy=float(given.mean()),
        reference_probabilities=dict(zip(prompt.sample_ids, given.tolist(), strict=True)),
        log_loss=float(-np.log(np.maximum(given, _LOG_FLOOR)).mean()),
        brier=float(((rows - truth) ** 2).sum(axis=1).mean()),
        probability_spread=float((rows.max(axis=0) - rows.min(axis=0)).max()),
    )
