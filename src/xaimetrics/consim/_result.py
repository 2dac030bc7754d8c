"""The result of one ConSim evaluation: the score, the per-sample answers, the prompt and the usage.

**Degenerate answers**: a simulator that does not tell the samples apart did not try, and its score measures
the class balance, not the explanation. Without probabilities, :attr:`ConSimResult.majority_share` is the share
of EP samples given the most frequent answer, and giving one class to at least :data:`DEGENERATE_SHARE` of them
while f's own predictions are more varied is :attr:`~ConSimResult.degenerate`. With probabilities,
:attr:`ConSimResult.probability_spread` is the largest change, across the EP samples, of the probability given to
a class; below :data:`DEGENERATE_SPREAD` the simulator gave (nearly) the same distribution to every sample and
is degenerate (the argmax may still vary by a hair, so the majority share alone would miss it).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from xaimetrics._class_counts import ClassCounts, class_counts
from xaimetrics._usage import UsageView
from xaimetrics.consim._intervals import mean_interval, wilson_interval
from xaimetrics.consim._parsing import ReasonCounts, Status
from xaimetrics.consim._prompt_types import PromptSetting
from xaimetrics.simulators import ChatMessage, Usage

__all__ = ["DEGENERATE_SHARE", "DEGENERATE_SPREAD", "ConSimResult"]

#: answering one class for at least this share of the EP samples (more than f does) is degenerate
DEGENERATE_SHARE = 0.9
#: class probabilities that move by less than this across the EP samples are degenerate
DEGENERATE_SPREAD = 0.05


@dataclass(frozen=True)
class ConSimResult(ReasonCounts, UsageView):
    """One ConSim evaluation: the score, the per-sample answers, the prompt and the simulator accounting.

    Attributes:
        setting: the :class:`PromptSetting` (prompt type, and whether classes were shown as ``Class_i``).
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
        model, usage, error: from the simulator response; ``usage`` is its
            :class:`~xaimetrics.simulators.Usage` (an empty one without a call), also read as
            ``prompt_tokens``, ``completion_tokens``, ``latency_s``, ``cost_usd``, ``cached`` and ``attempts``.
        concept_ids: the concepts shown in the prompt; ``seed``: the selection seed, when known.
        probabilities: ``{id: probabilities over the classes (class id order)}`` when the simulator gave them;
            ``expected_accuracy``, ``log_loss``, ``brier``: the probabilistic scores (``None`` without them);
            ``probability_spread``: the largest range, over the classes, of their probability across samples.
        majority_share: share of EP samples given the most frequent answer (``None`` without an answer);
            ``reference_majority_share``: the same for f's predictions.
    """

    setting: PromptSetting
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
    usage: Usage = field(default_factory=Usage)
    error: str | None = None
    concept_ids: tuple[int, ...] = ()
    seed: int | None = None
    metadata: dict[str, object] = field(default_factory=dict)
    probabilities: dict[str, tuple[float, ...]] | None = None
    expected_accuracy: float | None = None
    log_loss: float | None = None
    brier: float | None = None
    majority_share: float | None = None
    reference_majority_share: float = 0.0
    probability_spread: float | None = None
    invalid_reasons: dict[str, str] = field(default_factory=dict)
    reference_probabilities: dict[str, float] | None = None

    def _invalid_reasons(self) -> Mapping[str, str]:
        return self.invalid_reasons

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

    def score_interval(self, confidence: float = 0.95) -> tuple[float, float] | None:
        """Wilson interval of :attr:`score` (or of :attr:`upper_bound` for U1) over the EP samples."""
        if (self.upper_bound if self.is_upper_bound else self.score) is None:
            return None
        return wilson_interval(self.n_correct, self.n_samples, confidence)

    def expected_accuracy_interval(self, confidence: float = 0.95) -> tuple[float, float] | None:
        """Student-t interval of :attr:`expected_accuracy` over the EP samples (``None`` without probabilities)."""
        if not self.reference_probabilities:
            return None
        return mean_interval([self.reference_probabilities[i] for i in self.sample_ids], confidence)

    @property
    def class_counts(self) -> dict[str, ClassCounts]:
        """Per class of f's predictions (and of the answers): ``{"n", "hits", "answered"}`` over the EP samples
        (:func:`~xaimetrics.consim._per_class.per_class_scores` turns them into recall and precision)."""
        return class_counts(self.references, self.answers)

    @property
    def empty_explanation(self) -> bool:
        """True for an explanation prompt type whose explanation shows no concept at all."""
        return self.setting.kind.content.global_explanations and not self.concept_ids

    @property
    def is_upper_bound(self) -> bool:
        """True for U1: report :attr:`upper_bound`, never rank it as a score."""
        return self.setting.kind.is_upper_bound

    @property
    def label(self) -> str:
        """The setting's short name, e.g. ``"E3-a"``."""
        return self.setting.label

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

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready record of the result (messages as role/content dicts)."""
        return {
            "prompt_type": self.setting.name,
            "label": self.label,
            "anonymized": self.setting.anonymized,
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
            "score_interval": self.score_interval(),
            "class_counts": self.class_counts,
            "expected_accuracy_interval": self.expected_accuracy_interval(),
            "reference_probabilities": self.reference_probabilities,
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
            "cached_prompt_tokens": self.cached_prompt_tokens,
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
