"""Intruder detection (Delphi; Paulo & Belrose, 2026): can a reader pick the one text the concept ignores?

A *trial* shows ``n_shown`` texts: ``n_shown − 1`` activating texts of the concept and one non-activating
text (the *intruder*) at a random position. The reader names the intruder; the score is the **accuracy**
over trials (chance ``1 / n_shown``). No written explanation is needed — the reader compares the texts — so
the score checks the *concept* (are its activating texts alike?) rather than its description; passing an
interpretation adds the description to the prompt (and the shuffled-description control then applies).

- **Reading.** Each trial is one prompt answered ``Sample_0: <position>``; the schema's classes are the
  positions ``"0" … "n_shown − 1"``, so a simulator with log-probabilities gives ``P(position)`` for every
  position, as detection reads ``P(Yes)``. The pick is the most probable position (ties broken by a seeded
  draw, never by the first position: a fixed rule would reward where the intruder happens to sit), and
  ``expected_accuracy`` is the mean ``P(intruder)``; a text-only simulator's pick is parsed from its answer.
  An unreadable answer counts as wrong.
- **Trials.** One per non-activating text of the :class:`~xaimetrics.detection._sampling.DetectionSample`
  (its random and hard negatives give the two rows, as in detection), each with ``n_shown − 1`` activating
  texts drawn without replacement from the sample's activating texts (top and quantile), seeded.
- **Statistics.** The trials are independent Bernoulli draws given the concept's texts: exact one-sided
  binomial test of ``accuracy > 1 / n_shown`` and the Wilson interval (``scipy.stats.binomtest``).

Delphi highlights the activating tokens of each shown text; the classifiers here have one vector per text,
so nothing is highlighted and the reader compares whole texts.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import numpy as np

from xaimetrics._validation import check_positive_int, invalid
from xaimetrics.detection._prompts import (
    _LABEL_LINE,
    _WORDS_LINE,
    SAMPLE_ID,
    DetectionPrompt,
    _cut,
    describe,
)
from xaimetrics.simulators import AnswerSchema, ChatMessage

if TYPE_CHECKING:
    from numpy.typing import ArrayLike
    from typing_extensions import Unpack

    from xaimetrics.detection._detection import DetectionResult
    from xaimetrics.detection._prompts import Interpretation
    from xaimetrics.detection._sampling import DetectionSample, SamplingOptions
    from xaimetrics.simulators import Simulator

__all__ = [
    "Intruder",
    "IntruderScore",
    "build_intruder_prompts",
    "intrude_concept",
    "intruder_score",
    "intruder_trials",
    "read_intruder_prompt",
]

INTRUDER_PROMPT = (
    "All but one of the texts below activate the same feature of a text classifier; one text, the intruder, "
    "does not. Which text is the intruder? Answer 'Sample_0: <number of the intruder>'."
)
_TEXT_LINE = re.compile(r"^Text (\d+): (.*)$")
_PICK = re.compile(r"Sample_0\s*:\s*\**\s*(\d+)")


def intruder_trials(
    sample: DetectionSample, n_shown: int = 5, *, seed: int = 0
) -> list[tuple[np.ndarray, int, str]]:
    """The trials of one concept: ``(pool indices shown, intruder position, negative kind)`` per intruder.

    Example:
        >>> from xaimetrics.detection._sampling import sample_texts
        >>> U = np.array([[3.0], [2.0], [1.5], [0.0], [0.0]])
        >>> s = sample_texts(U, 0, n_top=3, n_quantile=0, n_random=2, n_hard=0,
        ...                  active_quantile=0.4, inactive_quantile=0.4)
        >>> [(sorted(i.tolist()), kind) for i, _, kind in intruder_trials(s, 3, seed=0)]
        [([0, 1, 3], 'random'), ([1, 2, 4], 'random')]
    """
    n_shown = check_positive_int(n_shown, "n_shown", "intruder_trials", minimum=2)
    activating = np.asarray(sample.indices)[np.asarray(sample.active) == 1]
    if len(activating) < n_shown - 1:
        raise invalid(
            "n_shown", "intruder_trials", f"at most {len(activating) + 1} (activating texts of concept "
            f"{sample.concept} + 1)", n_shown, "Lower n_shown or draw more activating texts.",
        )  # fmt: skip
    rng = np.random.default_rng([int(seed), int(sample.concept), 2])
    trials = []
    for index, active, kind in zip(sample.indices, sample.active, sample.kinds, strict=True):
        if active:
            continue
        shown = list(rng.choice(activating, size=n_shown - 1, replace=False))
        position = int(rng.integers(n_shown))
        shown.insert(position, int(index))
        trials.append((np.asarray(shown, dtype=np.int64), position, kind))
    return trials


def build_intruder_prompts(
    trials: Sequence[Sequence[str]],
    interpretation: Interpretation | None = None,
    *,
    max_chars: int = 300,
    probabilities: bool = True,
) -> list[DetectionPrompt]:
    """One prompt per trial (a list of texts), asking which text is the intruder (``Sample_0: <position>``).

    Args:
        trials: per trial, the texts in the order shown.
        interpretation: the concept's description, shown above the texts (``None``: none, Delphi's default).
        max_chars: each text is cut (at a word boundary) to this many characters.
        probabilities: ask the simulator for ``P(position)`` as well as the text answer.

    Example:
        >>> p = build_intruder_prompts([["a late goal", "the cup final", "a new chip"]])[0]
        >>> print(p.messages[1].content)
        Text 0: a late goal
        Text 1: the cup final
        Text 2: a new chip
        >>> p.schema.classes
        ('0', '1', '2')
    """
    owner = "build_intruder_prompts"
    max_chars = check_positive_int(max_chars, "max_chars", owner, minimum=20)
    if isinstance(trials, str) or not isinstance(trials, Sequence) or not trials:
        raise invalid("trials", owner, "a non-empty list of lists of texts", type(trials).__name__)
    lines = [INTRUDER_PROMPT]
    if interpretation is not None:
        words, label = describe(interpretation)
        lines.append("")
        if label:
            lines.append(_LABEL_LINE + label)
        if words:
            lines.append(_WORDS_LINE + ", ".join(repr(w) for w in words))
    system = ChatMessage("system", "\n".join(lines))
    prompts = []
    for trial in trials:
        if isinstance(trial, str) or len(trial) < 2 or not all(isinstance(t, str) for t in trial):
            raise invalid("trials", owner, "lists of two or more texts", repr(trial)[:60])
        body = "\n".join(f"Text {i}: {_cut(text, max_chars)}" for i, text in enumerate(trial))
        schema = AnswerSchema(
            (SAMPLE_ID,), tuple(str(i) for i in range(len(trial))), probabilities=probabilities
        )
        prompts.append(DetectionPrompt((system, ChatMessage("user", body)), schema))
    return prompts


@dataclass(frozen=True)
class ReadIntruderPrompt:
    """What a literal reader finds in an intruder prompt: the description (if any) and the texts."""

    words: tuple[str, ...]
    label: str | None
    texts: tuple[str, ...]


def read_intruder_prompt(messages: Sequence[ChatMessage]) -> ReadIntruderPrompt | None:
    """Parse a prompt of :func:`build_intruder_prompts` (``None``: not one).

    Example:
        >>> read = read_intruder_prompt(build_intruder_prompts([["a goal", "a chip"]], ["goal"])[0].messages)
        >>> read.words, read.texts
        (('goal',), ('a goal', 'a chip'))
    """
    import ast

    system = "\n".join(m.content for m in messages if m.role == "system")
    if not system.startswith(INTRUDER_PROMPT):
        return None
    user = "\n".join(m.content for m in messages if m.role == "user")
    words: tuple[str, ...] = ()
    label = None
    for line in system.splitlines():
        if line.startswith(_WORDS_LINE):
            try:
                words = tuple(str(v) for v in ast.literal_eval("[" + line[len(_WORDS_LINE) :] + "]"))
            except (ValueError, SyntaxError):
                return None
        elif line.startswith(_LABEL_LINE):
            label = line[len(_LABEL_LINE) :]
    texts = [m.group(2) for m in map(_TEXT_LINE.match, user.splitlines()) if m]
    return ReadIntruderPrompt(words, label, tuple(texts)) if len(texts) >= 2 else None


@dataclass(frozen=True)
class IntruderScore:
    """One concept's intruder score over a set of trials.

    ``value`` is the accuracy (``metric = "accuracy"``), ``low``/``high`` its Wilson interval, ``p_value``
    the exact one-sided binomial p of ``accuracy > chance``; ``expected_accuracy`` the mean ``P(intruder)``
    (NaN unless every trial was read with probabilities).
    """

    metric: str
    value: float
    low: float
    high: float
    p_value: float
    expected_accuracy: float
    chance: float
    n_trials: int
    n_unanswered: int

    def as_dict(self) -> dict[str, float | int | str]:
        return asdict(self)


def parse_pick(text: str, n_shown: int) -> int | None:
    """The position named by an answer text (``Sample_0: 3``), ``None`` when absent or out of range.

    Example:
        >>> parse_pick("Sample_0: 2", 4), parse_pick("Sample_0: 7", 4), parse_pick("no idea", 4)
        (2, None, None)
    """
    match = _PICK.search(text)
    if match is None:
        return None
    pick = int(match.group(1))
    return pick if 0 <= pick < n_shown else None


def intruder_score(
    intruders: Sequence[int] | np.ndarray,
    probabilities: Sequence[Sequence[float] | None] | None = None,
    picks: Sequence[int | None] | None = None,
    *,
    n_shown: int,
    confidence: float = 0.95,
    seed: int = 0,
) -> IntruderScore:
    """Accuracy of the reader's picks (from ``probabilities`` where given, else ``picks``) over trials.

    Args:
        intruders: the intruder's position in each trial.
        probabilities: per trial, ``P(position)`` for each of the ``n_shown`` positions (``None``: not read).
        picks: per trial, the position the reader named (``None``: unreadable).
        n_shown: texts per trial (chance is ``1 / n_shown``).
        confidence: level of the Wilson interval.
        seed: seeds the tie-breaks of equally probable positions.

    Example:
        >>> s = intruder_score([0, 2, 1, 3], [[.7, .1, .1, .1], [.1, .1, .6, .2], [.4, .3, .2, .1], None],
        ...                    picks=[None, None, None, 3], n_shown=4)
        >>> s.value, round(s.p_value, 4), s.expected_accuracy
        (0.75, 0.0508, nan)
    """
    from scipy import stats

    owner = "intruder_score"
    truth = np.asarray(intruders, dtype=np.int64)
    n = len(truth)
    if truth.ndim != 1 or n == 0 or (truth < 0).any() or (truth >= n_shown).any():
        raise invalid("intruders", owner, f"a non-empty list of positions in [0, {n_shown})", truth.tolist())
    probs = list(probabilities) if probabilities is not None else [None] * n
    chosen = list(picks) if picks is not None else [None] * n
    if len(probs) != n or len(chosen) != n:
        raise invalid("probabilities", owner, f"{n} entries (one per trial)", (len(probs), len(chosen)))
    rng = np.random.default_rng(seed)
    correct, p_true, unanswered = 0, [], 0
    for t, p, pick in zip(truth, probs, chosen, strict=True):
        if p is not None:
            row = np.asarray(p, dtype=np.float64)
            if row.shape != (n_shown,) or not np.isfinite(row).all():
                raise invalid(
                    "probabilities", owner, f"{n_shown} finite probabilities per trial", row.tolist()
                )
            best = np.flatnonzero(row == row.max())
            pick = int(best[rng.integers(len(best))]) if len(best) > 1 else int(best[0])
            p_true.append(float(row[t]))
        if pick is None:
            unanswered += 1
            continue
        correct += int(pick == t)
    chance = 1.0 / n_shown
    test = stats.binomtest(correct, n, chance, alternative="greater")
    two_sided = stats.binomtest(correct, n, chance).proportion_ci(confidence, method="wilson")
    expected = float(np.mean(p_true)) if len(p_true) == n else math.nan
    return IntruderScore(
        "accuracy", correct / n, float(two_sided.low), float(two_sided.high), float(test.pvalue), expected,
        chance, n, unanswered,
    )  # fmt: skip


def intrude_concept(
    simulator: Simulator,
    concept: int,
    inputs: Sequence[str],
    sample: DetectionSample,
    *,
    n_shown: int = 5,
    interpretations: Mapping[int, Interpretation] | None = None,
    shuffled: bool = True,
    max_chars: int = 300,
    seed: int = 0,
    confidence: float = 0.95,
    concurrency: int | None = None,
) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """Intruder rows and per-trial answers of one concept.

    Without ``interpretations`` the prompts show no description (``description = "none"``); with them, the
    concept's own description (``"own"``) and, when ``shuffled``, another concept's (``"shuffled"``, the
    control of :func:`~xaimetrics.detection.detect_concept`). One row per description and negative kind.

    Example:
        >>> from xaimetrics.detection import WordOverlapReader
        >>> from xaimetrics.detection._sampling import sample_texts
        >>> texts = ["goal cup w1", "cup goal w2", "goal final w3", "chip w1 w4", "laptop w5", "cup w6 goal"]
        >>> U = np.array([[3.0], [2.0], [1.0], [0.0], [0.0], [2.5]])
        >>> s = sample_texts(U, 0, n_top=4, n_quantile=0, n_random=2, n_hard=0,
        ...                  active_quantile=0.3, inactive_quantile=0.3)
        >>> rows, _ = intrude_concept(WordOverlapReader(), 0, texts, s, n_shown=3)
        >>> [(r["description"], r["negatives"], r["value"], r["n_trials"]) for r in rows]
        [('none', 'random', 1.0, 2)]
    """
    from xaimetrics.detection._detection import describe_or_none, shuffled_concept

    trials = intruder_trials(sample, n_shown, seed=seed)
    descriptions: list[tuple[str, int | None]] = [("none", None)]
    if interpretations is not None:
        descriptions = [("own", concept)]
        if shuffled:
            candidates = [c for c, i in interpretations.items() if describe_or_none(i) is not None]
            descriptions.append(("shuffled", shuffled_concept(concept, candidates, seed)))
    shown_texts = [[inputs[int(i)] for i in shown] for shown, _, _ in trials]
    prompts: list[DetectionPrompt] = []
    for _, by in descriptions:
        interpretation = None if by is None or interpretations is None else interpretations[by]
        prompts += build_intruder_prompts(shown_texts, interpretation, max_chars=max_chars)
    responses = ask_positions(simulator, prompts, concurrency=concurrency)
    rows: list[dict[str, object]] = []
    records: list[dict[str, object]] = []
    kinds = np.array([kind for _, _, kind in trials])
    positions = np.array([position for _, position, _ in trials])
    for d, (description, by) in enumerate(descriptions):
        part = responses[d * len(trials) : (d + 1) * len(trials)]
        for negatives in ("random", "hard"):
            keep = np.flatnonzero(kinds == negatives)
            if not len(keep):
                continue
            result = intruder_score(
                positions[keep], [part[k][0] for k in keep], [part[k][1] for k in keep], n_shown=n_shown,
                confidence=confidence, seed=seed,
            )  # fmt: skip
            rows.append({"concept": concept, "scorer": "intruder", "description": description,
                         "described_by": concept if by is None else by, "negatives": negatives,
                         **result.as_dict()})  # fmt: skip
        for (shown, position, kind), (p, pick, error) in zip(trials, part, strict=True):
            records.append({"concept": concept, "description": description, "kind": kind,
                            "shown": [int(i) for i in shown], "intruder": position,
                            "p_intruder": None if p is None else float(p[position]), "pick": pick,
                            "error": error})  # fmt: skip
    return rows, records


def ask_positions(
    simulator: Simulator, prompts: Sequence[DetectionPrompt], *, concurrency: int | None = None
) -> list[tuple[tuple[float, ...] | None, int | None, str | None]]:
    """Per intruder prompt: ``(P(position) per position or None, the parsed pick or None, error or None)``."""
    from typing import cast

    from xaimetrics.detection._detection import generate_all

    schemas = [p.schema for p in prompts]
    responses = generate_all(simulator, prompts, concurrency=concurrency)
    out: list[tuple[tuple[float, ...] | None, int | None, str | None]] = []
    for response, schema in zip(responses, schemas, strict=True):
        if not response.ok:
            out.append((None, None, response.error))
            continue
        unread = cast("Sequence[str]", (response.metadata or {}).get("probability_fallback_ids") or ())
        p = None
        if response.probabilities and SAMPLE_ID in response.probabilities and SAMPLE_ID not in unread:
            p = tuple(float(v) for v in response.probabilities[SAMPLE_ID])
        out.append((p, parse_pick(response.text, len(schema.classes)), None))
    return out


class Intruder:
    """Per-concept intruder scores of a reader (see the module docstring): accuracy of picking the odd text.

    Args:
        simulator: the reader (with log-probabilities, ``P(position)`` is read and ``expected_accuracy`` filled).
        n_shown: texts per trial (``n_shown − 1`` activating + one intruder; chance ``1 / n_shown``).
        describe: show the concept's interpretation in the prompt (Delphi's intruder shows none).
        shuffled: with ``describe``, also run the shuffled-description control.
        n_top, n_quantile, n_random, n_hard: texts per concept (one trial per non-activating text).
        max_chars, seed, confidence, concurrency: as for :class:`~xaimetrics.detection.Detection`.
        sampling: other keyword arguments of :func:`~xaimetrics.detection._sampling.sample_texts`.

    Example:
        >>> from xaimetrics.detection import WordOverlapReader
        >>> texts = ["goal cup w1", "cup goal w2", "goal final w3", "chip laptop", "laptop chip w9", "chip w4"]
        >>> U = np.array([[3, 0], [2, 0], [1, 0], [0, 1], [0, 2], [0, 3]], dtype=float)
        >>> intruder = Intruder(WordOverlapReader(), n_shown=3, n_top=2, n_quantile=0, n_random=2, n_hard=0,
        ...                     active_quantile=0.4, inactive_quantile=0.4)
        >>> frame = intruder.evaluate(U, texts).to_frame()
        >>> frame.concept.tolist(), frame.value.tolist(), frame.n_trials.tolist(), round(float(frame.chance[0]), 3)
        ([0, 1], [1.0, 1.0], [2, 2], 0.333)
    """

    higher_is_better = True

    def __init__(
        self,
        simulator: Simulator,
        *,
        n_shown: int = 5,
        describe: bool = False,
        shuffled: bool = True,
        n_top: int = 10,
        n_quantile: int = 10,
        n_random: int = 10,
        n_hard: int = 10,
        max_chars: int = 300,
        seed: int = 0,
        confidence: float = 0.95,
        concurrency: int | None = None,
        **sampling: Unpack[SamplingOptions],
    ) -> None:
        from xaimetrics.simulators import Simulator

        if not isinstance(simulator, Simulator):
            raise invalid("simulator", "Intruder", "a Simulator (with generate)", type(simulator).__name__)
        self.simulator = simulator
        self.n_shown = check_positive_int(n_shown, "n_shown", "Intruder", minimum=2)
        self.describe = bool(describe)
        self.shuffled = bool(shuffled)
        self.counts = {"n_top": n_top, "n_quantile": n_quantile, "n_random": n_random, "n_hard": n_hard}
        self.max_chars = check_positive_int(max_chars, "max_chars", "Intruder", minimum=20)
        self.seed = seed
        self.confidence = confidence
        self.concurrency = concurrency
        self.sampling = sampling

    def evaluate(
        self,
        concepts: ArrayLike,
        inputs: Sequence[str],
        interpretations: Mapping[int, Interpretation] | None = None,
        *,
        embeddings: ArrayLike | None = None,
        concept_ids: Iterable[int] | None = None,
    ) -> DetectionResult:
        """Score every concept of ``concept_ids`` (default: those of ``interpretations``, else every column).

        ``interpretations`` is needed when ``describe`` is set (and then concepts without words are skipped).
        """
        from xaimetrics._validation import check_texts
        from xaimetrics.detection._detection import DetectionResult, describe_or_none, failure_reason
        from xaimetrics.detection._sampling import sample_concepts

        owner = "Intruder.evaluate"
        texts = check_texts(inputs, "inputs", owner)
        if self.describe and interpretations is None:
            raise invalid("interpretations", owner, "the concepts' interpretations when describe=True", None)
        if concept_ids is not None:
            ids = [int(c) for c in concept_ids]
        elif interpretations is not None:
            ids = sorted(int(c) for c in interpretations)
        else:
            ids = list(range(np.shape(concepts)[1] if len(np.shape(concepts)) == 2 else 0))
        samples, skipped = sample_concepts(
            concepts, len(texts), ids, owner=owner, embeddings=embeddings, seed=self.seed,
            **self.counts, **self.sampling,
        )  # fmt: skip
        result = DetectionResult(skipped=skipped)
        for concept, sample in samples.items():
            if self.describe and (
                interpretations is None
                or concept not in interpretations
                or describe_or_none(interpretations[concept]) is None
            ):
                result.skipped[concept] = "no interpretation (no word activates the concept)"
                continue
            try:
                rows, records = intrude_concept(
                    self.simulator, concept, texts, sample, n_shown=self.n_shown,
                    interpretations=interpretations if self.describe else None, shuffled=self.shuffled,
                    max_chars=self.max_chars, seed=self.seed, confidence=self.confidence,
                    concurrency=self.concurrency,
                )  # fmt: skip
            except ValueError as error:
                result.skipped[concept] = str(error)
                continue
            result.answers += records
            reason = failure_reason(records)
            if reason is not None:  # a failed call is never a score
                result.failed[concept] = reason
                continue
            result.rows += rows
        return result
