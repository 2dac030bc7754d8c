"""Detection: does each concept's interpretation tell a reader where the concept is active?

The functional core, in order — :func:`~xaimetrics.detection._sampling.sample_texts` (which texts),
:func:`~xaimetrics.detection._prompts.build_detection_prompts` (one prompt per text), :func:`ask` (the simulator's
``P(Yes)`` and Yes/No per prompt), :func:`~xaimetrics.detection.score` (AUROC with an interval) — and
:func:`detect_concept`, which runs them for one concept with its own description and, as the negative
control, a *shuffled* description (another concept's words, which must score ≈ 0.5 when concepts are
unrelated). :class:`Detection` is the thin shell that loops over concepts.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

import numpy as np

from xaimetrics._validation import check_positive_int, check_texts, invalid
from xaimetrics.detection._prompts import (
    PROMPTS,
    DetectionPrompt,
    PromptName,
    build_detection_prompts,
    describe,
)
from xaimetrics.detection._sampling import DetectionSample, SamplingOptions, sample_texts
from xaimetrics.detection._scoring import parse_yes, score
from xaimetrics.simulators import BatchSimulator, Simulator, SimulatorResponse

if TYPE_CHECKING:
    import pandas as pd
    from numpy.typing import ArrayLike
    from typing_extensions import Unpack

    from xaimetrics.detection._prompts import Interpretation

__all__ = [
    "Answer",
    "Detection",
    "DetectionResult",
    "ask",
    "detect_concept",
    "failure_reason",
    "shuffled_concept",
]

#: the score columns of a result row, after the setting columns
SCORE_COLUMNS = ("metric", "value", "low", "high", "p_value", "auroc", "balanced_accuracy", "n_active",
                 "n_inactive", "n_unanswered")  # fmt: skip


@dataclass(frozen=True)
class Answer:
    """The reader's answer to one prompt: ``P(Yes)`` (``None``: not read), the Yes/No text, an error."""

    p_yes: float | None
    yes: bool | None
    error: str | None = None
    cached: bool = False


def ask(
    simulator: Simulator, prompts: Sequence[DetectionPrompt], *, concurrency: int | None = None
) -> list[Answer]:
    """Ask ``simulator`` every prompt (as one batch when it can); ``P(Yes)`` from its class probabilities.

    A probability the simulator could not read (an OpenAI-compatible answer whose log-probabilities lack
    Yes and No, flagged in ``metadata["probability_fallback_ids"]``) is ``None``, never a made-up 0.5.

    Example:
        >>> from xaimetrics.detection import WordOverlapReader
        >>> from xaimetrics.detection._prompts import build_detection_prompts
        >>> [round(a.p_yes, 3) for a in ask(WordOverlapReader(), build_detection_prompts(["cup"], ["a cup", "a"]))]
        [0.622, 0.378]
    """
    answers = []
    for response in generate_all(simulator, prompts, concurrency=concurrency):
        if not response.ok:
            answers.append(Answer(None, None, response.error))
            continue
        p_yes = None
        unread = cast("Collection[str]", (response.metadata or {}).get("probability_fallback_ids") or ())
        if response.probabilities and "0" in response.probabilities and "0" not in unread:
            p_yes = float(response.probabilities["0"][1])
        answers.append(Answer(p_yes, parse_yes(response.text), None, bool(response.usage.cached)))
    return answers


def generate_all(
    simulator: Simulator, prompts: Sequence[DetectionPrompt], *, concurrency: int | None = None
) -> list[SimulatorResponse]:
    """The simulator's responses to ``prompts`` (one batch when it can), in order."""
    conversations = [p.messages for p in prompts]
    schemas = [p.schema for p in prompts]
    if isinstance(simulator, BatchSimulator):
        return list(
            simulator.generate_batch(conversations, answer_schemas=schemas, max_concurrency=concurrency)
        )
    return [simulator.generate(m, answer_schema=s) for m, s in zip(conversations, schemas, strict=True)]


def shuffled_concept(concept: int, candidates: Iterable[int], seed: int) -> int:
    """Another concept, drawn uniformly (seeded by ``seed`` and ``concept``), whose words the control shows.

    Example:
        >>> shuffled_concept(3, [0, 1, 2, 3], seed=0) in (0, 1, 2)
        True
    """
    others = sorted(int(c) for c in candidates if int(c) != int(concept))
    if not others:
        raise invalid("interpretations", "shuffled_concept", "at least two concepts with words", [concept])
    return others[int(np.random.default_rng([int(seed), int(concept)]).integers(len(others)))]


def _rows(
    concept: int, description: str, described_by: int, sample: DetectionSample, answers: Sequence[Answer],
    *, confidence: float, seed: int,
) -> list[dict[str, object]]:  # fmt: skip
    rows: list[dict[str, object]] = []
    kinds = np.asarray(sample.kinds)
    for negatives in ("random", "hard"):
        keep = (sample.active == 1) | (kinds == negatives)
        if not (kinds == negatives).any():
            continue
        chosen = [a for a, k in zip(answers, keep, strict=True) if k]
        result = score(
            sample.active[keep], [a.p_yes for a in chosen], [a.yes for a in chosen],
            confidence=confidence, seed=seed,
        )  # fmt: skip
        rows.append({"concept": concept, "description": description, "described_by": described_by,
                     "negatives": negatives, **result.as_dict()})  # fmt: skip
    return rows


def detect_concept(
    simulator: Simulator,
    concept: int,
    interpretations: Mapping[int, Interpretation],
    inputs: Sequence[str],
    sample: DetectionSample,
    *,
    prompt: PromptName = "words",
    max_chars: int = 300,
    shuffled: bool = True,
    seed: int = 0,
    confidence: float = 0.95,
    concurrency: int | None = None,
) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """Detection rows and per-text answers of one concept (own description, and the shuffled control).

    Returns ``(rows, answers)``: one row per description (``"own"``, ``"shuffled"``) and negative kind
    (``"random"``, ``"hard"``) with the :class:`~xaimetrics.detection._scoring.DetectionScore` fields; one answer
    record per text and description.
    """
    texts = [inputs[int(i)] for i in sample.indices]
    descriptions = [("own", concept)]
    if shuffled:
        candidates = [c for c, interp in interpretations.items() if describe_or_none(interp) is not None]
        descriptions.append(("shuffled", shuffled_concept(concept, candidates, seed)))
    prompts: list[DetectionPrompt] = []
    for _, shown in descriptions:
        prompts += build_detection_prompts(interpretations[shown], texts, prompt=prompt, max_chars=max_chars)
    answers = ask(simulator, prompts, concurrency=concurrency)
    rows: list[dict[str, object]] = []
    records: list[dict[str, object]] = []
    for d, (description, shown) in enumerate(descriptions):
        part = answers[d * len(texts) : (d + 1) * len(texts)]
        rows += _rows(concept, description, shown, sample, part, confidence=confidence, seed=seed)
        for j, answer in enumerate(part):
            records.append({
                "concept": concept, "description": description, "described_by": shown,
                "index": int(sample.indices[j]), "kind": sample.kinds[j], "active": int(sample.active[j]),
                "activation": float(sample.activations[j]), "p_yes": answer.p_yes, "yes": answer.yes,
                "error": answer.error,
            })  # fmt: skip
    return rows, records


def failure_reason(answers: Sequence[Mapping[str, object]]) -> str | None:
    """Why one concept's answers cannot be scored (``None``: they can): a reader call failed (an HTTP error, no
    server, no log-probabilities), or no answer could be read at all. A failure is never a score of 0.

    Example:
        >>> failure_reason([{"p_yes": 0.8, "yes": True, "error": None}])  # None: scorable
        >>> failure_reason([{"p_yes": None, "yes": None, "error": "HTTP 500"}, {"p_yes": 0.2, "error": None}])
        '1 of 2 reader calls failed: HTTP 500'
    """
    errors = [str(a["error"]) for a in answers if a.get("error")]
    if errors:
        return f"{len(errors)} of {len(answers)} reader calls failed: {errors[0]}"
    readable = ("p_yes", "yes", "pick", "p_intruder")
    if answers and all(all(a.get(name) is None for name in readable) for a in answers):
        return f"none of the {len(answers)} answers could be read (no Yes/No, no pick, no probabilities)"
    return None


def describe_or_none(interpretation: Interpretation) -> tuple[tuple[str, ...], str | None] | None:
    """:func:`describe`, or ``None`` for a concept without words or label (nothing activates it)."""
    try:
        return describe(interpretation)
    except ValueError:
        return None


@dataclass
class DetectionResult:
    """Rows (one per concept, description and negative kind), per-text answers, the concepts left out, and the
    concepts whose reader calls failed (``failed``: their reasons; they have no rows, never a score of 0)."""

    rows: list[dict[str, object]] = field(default_factory=list)
    answers: list[dict[str, object]] = field(default_factory=list)
    skipped: dict[int, str] = field(default_factory=dict)
    failed: dict[int, str] = field(default_factory=dict)

    def to_frame(self) -> pd.DataFrame:
        """The rows as a :class:`pandas.DataFrame`."""
        import pandas as pd

        return pd.DataFrame(self.rows)


class Detection:
    """Per-concept detection scores of a simulator reading each concept's interpretation.

    Args:
        simulator: the reader (any :class:`~xaimetrics.simulators.Simulator`; with log-probabilities the score
            is the AUROC of ``P(Yes)``, else the balanced accuracy of its answers).
        prompt: a key of :data:`~xaimetrics.detection._prompts.PROMPTS`.
        n_top, n_quantile, n_random, n_hard: texts per concept (see :func:`~xaimetrics.detection._sampling.sample_texts`).
        max_chars: texts are cut to this many characters in prompts.
        shuffled: also run the shuffled-description control.
        seed: seeds the draws and the shuffled control.
        confidence: level of the AUROC intervals.
        concurrency: simulator calls in flight.
        sampling: other keyword arguments of :func:`~xaimetrics.detection._sampling.sample_texts` (quantiles, strata).

    Example:
        >>> from xaimetrics.detection import WordOverlapReader
        >>> texts = ["goal cup", "cup final", "goal", "chip", "laptop chip", "new laptop"]
        >>> U = np.array([[2, 0], [1, 0], [1, 0], [0, 1], [0, 2], [0, 1]], dtype=float)
        >>> detection = Detection(WordOverlapReader(), n_top=1, n_quantile=1, n_random=2, n_hard=0,
        ...                       active_quantile=0.4, inactive_quantile=0.4)
        >>> frame = detection.evaluate(U, texts, {0: ["goal", "cup"], 1: ["chip", "laptop"]}).to_frame()
        >>> frame[["concept", "description", "auroc"]].values.tolist()
        [[0, 'own', 1.0], [0, 'shuffled', 0.0], [1, 'own', 1.0], [1, 'shuffled', 0.0]]
    """

    higher_is_better = True

    def __init__(
        self,
        simulator: Simulator,
        *,
        prompt: PromptName = "words",
        n_top: int = 10,
        n_quantile: int = 10,
        n_random: int = 10,
        n_hard: int = 10,
        max_chars: int = 300,
        shuffled: bool = True,
        seed: int = 0,
        confidence: float = 0.95,
        concurrency: int | None = None,
        **sampling: Unpack[SamplingOptions],
    ) -> None:
        if not isinstance(simulator, Simulator):
            raise invalid("simulator", "Detection", "a Simulator (with generate)", type(simulator).__name__)
        if prompt not in PROMPTS:
            raise invalid("prompt", "Detection", "one of " + ", ".join(map(repr, PROMPTS)), prompt)
        self.simulator = simulator
        self.prompt = prompt
        self.counts = {"n_top": n_top, "n_quantile": n_quantile, "n_random": n_random, "n_hard": n_hard}
        self.max_chars = check_positive_int(max_chars, "max_chars", "Detection", minimum=20)
        self.shuffled = bool(shuffled)
        self.seed = seed
        self.confidence = confidence
        self.concurrency = concurrency
        self.sampling = sampling

    def evaluate(
        self,
        concepts: ArrayLike,
        inputs: Sequence[str],
        interpretations: Mapping[int, Interpretation],
        *,
        embeddings: ArrayLike | None = None,
        concept_ids: Iterable[int] | None = None,
        on_concept: Callable[[int, list[dict[str, object]], list[dict[str, object]]], None] | None = None,
        on_failure: Callable[[int, str, list[dict[str, object]]], None] | None = None,
        progress: bool = False,
    ) -> DetectionResult:
        """Score every concept of ``concept_ids`` (default: every concept of ``interpretations``).

        Args:
            concepts: concept activations ``U`` of ``inputs``, shape ``(n_texts, n_concepts)``.
            inputs: the pool of texts.
            interpretations: ``{concept id: ConceptInterpretation, words or label}``.
            embeddings: the hard negatives' space, shape ``(n_texts, d)`` (the classifier's activations).
            concept_ids: the concepts to score.
            on_concept: called with ``(concept, rows, answers)`` as each concept finishes (durable stores).
            on_failure: called with ``(concept, reason, answers)`` for a concept whose reader calls failed
                (:func:`failure_reason`); it gets no rows.
            progress: show a progress bar over concepts.
        """
        from xaimetrics._arrays import to_numpy

        texts = check_texts(inputs, "inputs", "Detection.evaluate")
        U = np.asarray(to_numpy(concepts), dtype=np.float64)
        if U.ndim != 2 or U.shape[0] != len(texts):
            raise invalid(
                "concepts", "Detection.evaluate", f"an array with {len(texts)} rows (one per input)", U.shape
            )
        E = None if embeddings is None else np.asarray(to_numpy(embeddings), dtype=np.float64)
        ids = sorted(interpretations) if concept_ids is None else [int(c) for c in concept_ids]
        describable = [c for c, interp in interpretations.items() if describe_or_none(interp) is not None]
        if self.shuffled and len(describable) < 2:
            raise invalid(
                "interpretations", "Detection.evaluate", "two or more concepts with words for the shuffled control",
                f"{len(describable)} such concept(s)", "Pass more concepts or shuffled=False.",
            )  # fmt: skip
        result = DetectionResult()
        iterator: Iterable[int] = ids
        if progress:
            from tqdm.auto import tqdm

            iterator = tqdm(ids, desc="detection", unit="concept")
        for concept in iterator:
            if concept not in interpretations or describe_or_none(interpretations[concept]) is None:
                result.skipped[concept] = "no interpretation (no word activates the concept)"
                continue
            try:
                sample = sample_texts(
                    U, concept, embeddings=E, seed=self.seed, **self.counts, **self.sampling
                )
            except ValueError as error:
                result.skipped[concept] = str(error)
                continue
            rows, answers = detect_concept(
                self.simulator, concept, interpretations, texts, sample, prompt=self.prompt,
                max_chars=self.max_chars, shuffled=self.shuffled, seed=self.seed, confidence=self.confidence,
                concurrency=self.concurrency,
            )  # fmt: skip
            result.answers += answers
            reason = failure_reason(answers)
            if reason is not None:
                result.failed[concept] = reason
                if on_failure is not None:
                    on_failure(concept, reason, answers)
                continue
            result.rows += rows
            if on_concept is not None:
                on_concept(concept, rows, answers)
        return result
