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

**Degenerate answers**: a simulator that does not tell the samples apart did not try, and its score measures
the class balance, not the explanation. Without probabilities, :attr:`ConSimResult.majority_share` is the share
of EP samples given the most frequent answer, and giving one class to at least :data:`DEGENERATE_SHARE` of them
while f's own predictions are more varied is :attr:`~ConSimResult.degenerate`. With probabilities,
:attr:`ConSimResult.probability_spread` is the largest change, across the EP samples, of the probability given to
a class; below :data:`DEGENERATE_SPREAD` the simulator gave (nearly) the same distribution to every sample and
is degenerate (the argmax may still vary by a hair, so the majority share alone would miss it).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from xaimetrics._validation import invalid
from xaimetrics.consim._parsing import ParsedAnswers, Status, parse_answers
from xaimetrics.consim._prompt_types import PromptType
from xaimetrics.consim._rendering import ConSimPrompt
from xaimetrics.simulators import ChatMessage, SimulatorResponse

__all__ = [
    "DEGENERATE_SHARE",
    "DEGENERATE_SPREAD",
    "SCORINGS",
    "ConSimResult",
    "answer_schema",
    "check_scoring",
    "score_response",
]

Scoring = Literal["accuracy", "probability"]
#: how a simulator's answer is scored: eq. 5 on the text, or also from its class probabilities
SCORINGS: tuple[str, ...] = ("accuracy", "probability")

#: answering one class for at least this share of the EP samples (more than f does) is degenerate
DEGENERATE_SHARE = 0.9
#: class probabilities that move by less than this across the EP samples are degenerate
DEGENERATE_SPREAD = 0.05
_LOG_FLOOR = 1e-12


@dataclass(frozen=True)
class ConSimResult:
    """One ConSim evaluation: the score, the per-sample answers, the prompt and the simulator accounting.

    Attributes:
        prompt_type: the :class:`PromptType`; ``anonymized`` whether classes were shown as ``Class_i``.
        score: accuracy against f's EP predictions (eq. 5), or ``None`` for U1, a dry run or a failed call.
        upper_bound: the U1 accuracy (``None`` for other types).
        sample_ids: EP ids (``"20"`` for ``Sample_20``).
        references: ``{id: class name f predicted}``; ``answers``: ``{id: class name answered or None}``
            (real names, also for anonymised prompts); ``statuses``: ``{id: "ok" | "missing" | "invalid" |
            "conflict"}``; ``raw_answers``: the text found for each id.
        n_correct, n_parsed, n_missing, n_invalid, n_conflicting: counts over the EP samples.
        invalid_reasons: ``{id: "no_class" | "hedged" | "negated"}`` for the invalid answers (a line naming
            no class, several distinct classes, or a negated class); ``n_hedged`` and ``n_negated`` count them.
        unexpected_ids: ids the answer mentioned that were not asked for.
        messages: the prompt; ``raw_answer`` the simulator's text (``None`` without a simulator).
        model, prompt_tokens, completion_tokens, latency_s, cost_usd, cached, attempts, error: from the
            simulator response.
        concept_ids: the concepts shown in the prompt; ``seed``: the selection seed, when known.
        probabilities: ``{id: probabilities over the classes (class id order)}`` when the simulator gave them;
            ``expected_accuracy``, ``log_loss``, ``brier``: the probabilistic scores (``None`` without them);
            ``probability_spread``: the largest range, over the classes, of their probability across samples.
        majority_share: share of EP samples given the most frequent answer (``None`` without an answer);
            ``reference_majority_share``: the same for f's predictions.
    """

    prompt_type: PromptType
    anonymized: bool
    score: float | None
    upper_bound: float | None
    sample_ids: tuple[str, ...]
    references: dict[str, str]
    answers: dict[str, str | None]
    statuses: dict[str, Status]
    raw_answers: dict[str, str]
    n_correct: int
    n_parsed: int
    n_missing: int
    n_invalid: int
    n_conflicting: int
    messages: tuple[ChatMessage, ...]
    raw_answer: str | None = None
    unexpected_ids: tuple[str, ...] = ()
    model: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cost_usd: float = 0.0
    cached: bool = False
    attempts: int = 0
    error: str | None = None
    concept_ids: tuple[int, ...] = ()
    seed: int | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    probabilities: dict[str, tuple[float, ...]] | None = None
    expected_accuracy: float | None = None
    log_loss: float | None = None
    brier: float | None = None
    majority_share: float | None = None
    reference_majority_share: float = 0.0
    probability_spread: float | None = None
    invalid_reasons: dict[str, str] = field(default_factory=dict)

    @property
    def degenerate(self) -> bool:
        """True when the simulator did not tell the EP samples apart (see the module docstring): the same class
        for (nearly) every sample, more uniformly than f; or, with probabilities, (nearly) the same
        distribution for every sample while f's predictions vary."""
        if self.reference_majority_share >= 1.0:
            return False  # f predicts one class for every sample: answering it is right, not degenerate
        if self.probability_spread is not None:
            return len(self.sample_ids) > 1 and self.probability_spread < DEGENERATE_SPREAD
        share = self.majority_share
        return share is not None and share >= DEGENERATE_SHARE and share > self.reference_majority_share

    @property
    def empty_explanation(self) -> bool:
        """True for an explanation prompt type whose explanation shows no concept at all."""
        return self.prompt_type.content.global_explanations and not self.concept_ids

    @property
    def n_hedged(self) -> int:
        """Invalid answers that named several distinct classes (``World News or Sci/Tech``)."""
        return sum(1 for reason in self.invalid_reasons.values() if reason == "hedged")

    @property
    def n_negated(self) -> int:
        """Invalid answers that negated a class (``not World News``)."""
        return sum(1 for reason in self.invalid_reasons.values() if reason == "negated")

    @property
    def is_upper_bound(self) -> bool:
        """True for U1: report :attr:`upper_bound`, never rank it as a score."""
        return self.prompt_type.is_upper_bound

    @property
    def label(self) -> str:
        """The setting's short name, e.g. ``"E3-a"``."""
        return self.prompt_type.label(self.anonymized)

    @property
    def n_samples(self) -> int:
        """Number of EP samples."""
        return len(self.sample_ids)

    @property
    def answered(self) -> bool:
        """Whether a simulator answer was obtained (False for a dry run or a failed call)."""
        return self.raw_answer is not None and self.error is None

    @property
    def parse_rate(self) -> float:
        """Share of EP samples with a valid answer (``nan`` when nothing was answered)."""
        return self.n_parsed / self.n_samples if self.answered else math.nan

    @property
    def accuracy(self) -> float | None:
        """The raw accuracy, whatever the prompt type (``score`` or ``upper_bound``)."""
        return self.upper_bound if self.is_upper_bound else self.score

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready record of the result (messages as role/content dicts)."""
        return {
            "prompt_type": self.prompt_type.value,
            "label": self.label,
            "anonymized": self.anonymized,
            "is_upper_bound": self.is_upper_bound,
            "score": self.score,
            "upper_bound": self.upper_bound,
            "n_samples": self.n_samples,
            "n_correct": self.n_correct,
            "n_parsed": self.n_parsed,
            "n_missing": self.n_missing,
            "n_invalid": self.n_invalid,
            "n_conflicting": self.n_conflicting,
            "n_hedged": self.n_hedged,
            "n_negated": self.n_negated,
            "invalid_reasons": dict(self.invalid_reasons),
            "sample_ids": list(self.sample_ids),
            "references": dict(self.references),
            "answers": dict(self.answers),
            "statuses": dict(self.statuses),
            "raw_answers": dict(self.raw_answers),
            "unexpected_ids": list(self.unexpected_ids),
            "messages": [message.as_dict() for message in self.messages],
            "raw_answer": self.raw_answer,
            "model": self.model,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "latency_s": self.latency_s,
            "cost_usd": self.cost_usd,
            "cached": self.cached,
            "attempts": self.attempts,
            "error": self.error,
            "concept_ids": list(self.concept_ids),
            "seed": self.seed,
            "metadata": dict(self.metadata),
            "probabilities": None
            if self.probabilities is None
            else {i: list(p) for i, p in self.probabilities.items()},
            "expected_accuracy": self.expected_accuracy,
            "log_loss": self.log_loss,
            "brier": self.brier,
            "majority_share": self.majority_share,
            "reference_majority_share": self.reference_majority_share,
            "probability_spread": self.probability_spread,
            "degenerate": self.degenerate,
            "empty_explanation": self.empty_explanation,
        }


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
    upper = prompt.prompt_type.is_upper_bound
    accounting: dict[str, Any] = {}
    if isinstance(response, SimulatorResponse):
        accounting = {
            "model": response.model,
            "prompt_tokens": int(response.prompt_tokens),
            "completion_tokens": int(response.completion_tokens),
            "latency_s": float(response.latency_s),
            "cost_usd": float(response.cost_usd),
            "cached": bool(response.cached),
            "attempts": int(response.attempts),
            "error": response.error,
        }
    elif isinstance(response, str):
        accounting = {"attempts": 1}
    probabilistic = _probabilistic_scores(prompt, response if text is not None else None)
    answered = [c for c in parsed.answers.values() if c is not None]
    return ConSimResult(
        prompt_type=prompt.prompt_type,
        anonymized=prompt.anonymized,
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
        **probabilistic,
        invalid_reasons=dict(parsed.reasons),
        **accounting,
    )


def check_scoring(scoring: Any, simulator: Any, owner: str) -> None:
    """Check a scoring mode, and that ``simulator`` (if given) can give class probabilities when asked."""
    if scoring not in SCORINGS:
        raise invalid("scoring", owner, "'accuracy' or 'probability'", scoring)
    if (
        scoring == "probability"
        and simulator is not None
        and not getattr(simulator, "supports_probabilities", False)
    ):
        raise invalid(
            "scoring", owner, "'accuracy' for a simulator without class probabilities",
            f"'probability' with {type(simulator).__name__}",
            "Use a simulator that exposes token log-probabilities (LlamaCppSimulator, TransformersChatSimulator, "
            "OpenAICompatibleSimulator with logprobs) or scoring='accuracy'.",
        )  # fmt: skip


def answer_schema(prompt: ConSimPrompt, scoring: str) -> Any:
    """The prompt's answer schema, asking for class probabilities when ``scoring == "probability"``."""
    schema = prompt.answer_schema
    return dataclasses.replace(schema, probabilities=True) if scoring == "probability" else schema


def _majority_share(values: list[int], n: int) -> float:
    if not values or not n:
        return 0.0
    return max(values.count(v) for v in set(values)) / n


def _probabilistic_scores(prompt: ConSimPrompt, response: Any) -> dict[str, Any]:
    """Expected accuracy, log-loss and Brier score from the response's class probabilities (if any)."""
    from xaimetrics.simulators import check_probabilities

    probabilities = getattr(response, "probabilities", None)
    if probabilities is None:
        return {}
    checked = check_probabilities(probabilities, prompt.answer_schema, "score_response")
    rows = np.array([checked[i] for i in prompt.sample_ids], dtype=np.float64)
    truth = np.zeros_like(rows)
    truth[np.arange(len(rows)), list(prompt.references)] = 1.0
    given = rows[np.arange(len(rows)), list(prompt.references)]
    return {
        "probabilities": checked,
        "expected_accuracy": float(given.mean()),
        "log_loss": float(-np.log(np.maximum(given, _LOG_FLOOR)).mean()),
        "brier": float(((rows - truth) ** 2).sum(axis=1).mean()),
        "probability_spread": float((rows.max(axis=0) - rows.min(axis=0)).max()),
    }
