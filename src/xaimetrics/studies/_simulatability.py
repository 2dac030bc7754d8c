"""The simulatability study (the ConSim protocol for people): what a participant is shown, as plain data.

A study is a self-contained bundle, computed once by ``xaimetrics study create`` and served with no model
loaded:

- :class:`SampleSet` — one seed's learning-phase (LP) and evaluation-phase (EP) samples with **f's
  predictions** (the seeded selection of :func:`xaimetrics.consim.select_examples`);
- :class:`MethodExplanation` — one method's explanation on one seed: the concept descriptions (words or
  labels), the global importances ``Φ`` per class and the local importances ``φ`` of the LP (and EP) samples;
- :class:`StudyArm` — one condition a participant goes through: a method (or the ``NoExplanation``
  baseline), a prompt type (``NE1`` … ``U1``, plain or anonymised) and a seed.

Each arm is also the ConSim prompt an LLM would get (:meth:`SimulatabilityStudy.prompt`, rendered by
:func:`xaimetrics.consim.render_prompt` from the same data), so people and LLMs see the same information and
are scored by the same function (eq. 5, :func:`xaimetrics.consim.score_response`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from xaimetrics._validation import invalid
from xaimetrics.benchmark import BASELINE_METHOD  # the no-explanation arms' method name
from xaimetrics.concepts import ConceptInterpretation
from xaimetrics.consim import ConSimPrompt, ConSimSamples, PromptSetting, render_prompt
from xaimetrics.studies._lookup import find

__all__ = [
    "MethodExplanation",
    "SampleSet",
    "SimulatabilityStudy",
    "StudyArm",
    "StudySample",
]

_OWNER = "SimulatabilityStudy"


@dataclass(frozen=True)
class StudySample:
    """A text with f's prediction (class id) and, when known, its true label.

    ``id`` is the number the ConSim prompt gives it (``"7"`` for ``Sample_7``): LP samples are ``0 …
    n_lp-1``, EP samples follow.
    """

    id: str
    text: str
    prediction: int
    label: int | None = None


@dataclass(frozen=True)
class SampleSet:
    """The LP and EP samples of one selection seed.

    Example:
        >>> s = SampleSet.from_texts(0, ["dull", "fine"], [0, 1], ["meh"], [0])
        >>> [(x.id, x.text) for x in s.ep]
        [('2', 'meh')]
    """

    seed: int
    lp: tuple[StudySample, ...]
    ep: tuple[StudySample, ...]

    @classmethod
    def from_texts(
        cls,
        seed: int,
        lp_texts: Sequence[str],
        lp_predictions: Sequence[int] | np.ndarray,
        ep_texts: Sequence[str],
        ep_predictions: Sequence[int] | np.ndarray,
        lp_labels: Sequence[int] | np.ndarray | None = None,
        ep_labels: Sequence[int] | np.ndarray | None = None,
    ) -> SampleSet:
        """Number the samples as the ConSim prompt does (LP first, then EP)."""
        n_lp = len(lp_texts)
        lp = tuple(
            StudySample(str(i), str(t), int(p), None if lp_labels is None else int(lp_labels[i]))
            for i, (t, p) in enumerate(zip(lp_texts, lp_predictions, strict=True))
        )
        ep = tuple(
            StudySample(str(n_lp + i), str(t), int(p), None if ep_labels is None else int(ep_labels[i]))
            for i, (t, p) in enumerate(zip(ep_texts, ep_predictions, strict=True))
        )
        return cls(int(seed), lp, ep)

    @classmethod
    def from_samples(cls, samples: ConSimSamples) -> SampleSet:
        """From a :class:`~xaimetrics.consim.ConSimSamples` (its seed, texts, predictions and labels)."""
        return cls.from_texts(
            samples.seed or 0, samples.lp_texts, samples.lp_predictions, samples.ep_texts,
            samples.ep_predictions, samples.lp_labels, samples.ep_labels,
        )  # fmt: skip

    def to_dict(self) -> dict[str, object]:
        return {"seed": self.seed, "lp": [vars(s) for s in self.lp], "ep": [vars(s) for s in self.ep]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SampleSet:
        return cls(
            int(data["seed"]),
            tuple(StudySample(**s) for s in data["lp"]),
            tuple(StudySample(**s) for s in data["ep"]),
        )


@dataclass(frozen=True)
class MethodExplanation:
    """One method's explanation on one seed's samples: what the prompt's explanation parts are made of.

    Attributes:
        method, n_concepts, interpretation, seed: the setting (as in the benchmark's results).
        concepts: ``{concept id: ConceptInterpretation}`` (aligned / opposed words, or a label).
        global_importances: ``Φ``, array of shape ``(n_classes, n_columns)`` (raw; normalised when shown).
        concept_ids: the concept id of each column.
        lp_local, ep_local: ``φ`` of the LP / EP samples for f's predicted class, ``(n_lp | n_ep,
            n_columns)``, or ``None`` when no arm needs them (E3 needs LP, U1 both).
    """

    method: str
    seed: int
    concepts: Mapping[int, ConceptInterpretation]
    global_importances: np.ndarray = field(repr=False)
    concept_ids: tuple[int, ...] = ()
    n_concepts: int = 0
    interpretation: str = ""
    lp_local: np.ndarray | None = field(default=None, repr=False)
    ep_local: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        phi = np.asarray(self.global_importances)
        if phi.ndim != 2 or not np.issubdtype(phi.dtype, np.floating):
            raise invalid("global_importances", _OWNER, "a float array (n_classes, n_concepts)", phi.shape)
        object.__setattr__(self, "global_importances", phi)
        ids = tuple(int(i) for i in self.concept_ids) or tuple(range(phi.shape[1]))
        object.__setattr__(self, "concept_ids", ids)
        concepts = {int(k): as_interpretation(v) for k, v in dict(self.concepts).items()}
        object.__setattr__(self, "concepts", concepts)
        for name in ("lp_local", "ep_local"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, np.asarray(value))

    @property
    def key(self) -> tuple[str, int, str, int]:
        return (self.method, self.n_concepts, self.interpretation, self.seed)

    def to_dict(self) -> dict[str, object]:
        def rows(array: np.ndarray | None) -> list[list[float]] | None:
            return None if array is None else [[float(v) for v in row] for row in array]

        return {
            "method": self.method, "seed": self.seed, "n_concepts": self.n_concepts,
            "interpretation": self.interpretation, "concept_ids": list(self.concept_ids),
            "concepts": {str(k): v.to_dict() for k, v in self.concepts.items()},
            "dtype": str(self.global_importances.dtype),
            "global_importances": rows(self.global_importances),
            "lp_local": rows(self.lp_local), "ep_local": rows(self.ep_local),
        }  # fmt: skip

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MethodExplanation:
        dtype = np.dtype(data.get("dtype", "float64"))  # the computed dtype: the same buckets as the LLM's

        def array(value: object) -> np.ndarray | None:
            return None if value is None else np.asarray(value, dtype=dtype)

        return cls(
            method=str(data["method"]), seed=int(data["seed"]), n_concepts=int(data.get("n_concepts", 0)),
            interpretation=str(data.get("interpretation", "")),
            concepts={int(k): v for k, v in data["concepts"].items()},
            global_importances=np.asarray(data["global_importances"], dtype=dtype),
            concept_ids=tuple(data.get("concept_ids", ())),
            lp_local=array(data.get("lp_local")), ep_local=array(data.get("ep_local")),
        )  # fmt: skip


def as_interpretation(value: object) -> ConceptInterpretation:
    """A concept description from a :class:`ConceptInterpretation`, a ``{aligned, opposed, label}`` mapping,
    a label or a word list.

    Example:
        >>> as_interpretation(["goal", "coach"]).aligned, as_interpretation("sports").label
        (('goal', 'coach'), 'sports')
    """
    if isinstance(value, ConceptInterpretation):
        return ConceptInterpretation(tuple(value.aligned), tuple(value.opposed), value.label)
    if isinstance(value, Mapping):
        return ConceptInterpretation(
            tuple(str(w) for w in value.get("aligned") or ()),
            tuple(str(w) for w in value.get("opposed") or ()),
            None if value.get("label") is None else str(value["label"]),
        )
    if isinstance(value, str):
        return ConceptInterpretation(label=value)
    if isinstance(value, Sequence):
        return ConceptInterpretation(tuple(str(w) for w in value))
    raise invalid(
        "concepts", _OWNER, "ConceptInterpretation objects, word lists, labels or {aligned, opposed, label}",
        type(value).__name__,
    )  # fmt: skip


@dataclass(frozen=True)
class StudyArm:
    """One condition: a method (or ``NoExplanation``), a prompt type, anonymised or not, and a seed.

    Example:
        >>> StudyArm("NMF", "E2", True, 0, n_concepts=3).id
        'NMF-3/E2-a/seed0'
        >>> StudyArm("NoExplanation", "NE2", False, 1).id
        'NoExplanation/NE2/seed1'
    """

    method: str
    prompt_type: str
    anonymized: bool
    seed: int
    n_concepts: int = 0
    interpretation: str = ""

    def __post_init__(self) -> None:
        prompt = PromptSetting.parse(self.prompt_type, True if self.anonymized else None)
        kind = prompt.kind
        object.__setattr__(self, "prompt_type", prompt.name)
        object.__setattr__(self, "anonymized", prompt.anonymized)
        if kind.is_baseline != (self.method == BASELINE_METHOD):
            raise invalid(
                "arms", _OWNER, "baseline prompt types (NE1, NE2) for NoExplanation and explanation types "
                "(E1, E2, E3, U1) for methods", f"{self.method} with {kind.name}",
            )  # fmt: skip

    @property
    def label(self) -> str:
        """The prompt type with ``-a`` for anonymised classes (``"E2-a"``)."""
        return self.prompt_type + ("-a" if self.anonymized else "")

    @property
    def id(self) -> str:
        method = self.method + (f"-{self.n_concepts}" if self.n_concepts else "")
        method += f"-{self.interpretation}" if self.interpretation not in ("", "top_words") else ""
        return f"{method}/{self.label}/seed{self.seed}"

    @property
    def explanation_key(self) -> tuple[str, int, str, int]:
        return (self.method, self.n_concepts, self.interpretation, self.seed)

    def setting(self) -> dict[str, object]:
        """The benchmark's setting columns of this arm (``dataset``, ``model`` and ``simulator`` aside)."""
        return {
            "method": self.method, "n_concepts": self.n_concepts, "interpretation": self.interpretation,
            "prompt_type": self.prompt_type, "anonymized": self.anonymized, "seed": self.seed,
        }  # fmt: skip


@dataclass(frozen=True)
class SimulatabilityStudy:
    """A ConSim-protocol study for people: samples, explanations and arms (see the module docstring).

    Args:
        class_names: the model's classes, index = class id.
        samples: one :class:`SampleSet` per seed.
        explanations: the :class:`MethodExplanation` of every (method, seed) an arm uses.
        arms: the conditions (:class:`StudyArm`).
        dataset, model: names recorded in the exported results (as in a benchmark grid).
        title: shown to participants.
        arms_per_participant: how many arms each participant goes through, each on a different seed (so
            nobody sees the same samples twice; see :func:`xaimetrics.studies._plan.assign_arms`).
        importance_threshold: ``τ`` on normalised importances (paper: 0.05).
        max_sample_chars: cut sample texts longer than this, as in the LLM prompt.

    Example:
        >>> samples = SampleSet.from_texts(0, ["goal scored", "new chip"], [0, 1], ["late goal", "robot"], [0, 0])
        >>> study = SimulatabilityStudy(["sports", "tech"], [samples], [],
        ...                             [StudyArm("NoExplanation", "NE2", False, 0)])
        >>> prompt = study.prompt(study.arms[0])
        >>> prompt.sample_ids, prompt.references
        (('2', '3'), (0, 0))
    """

    class_names: tuple[str, ...]
    samples: tuple[SampleSet, ...]
    explanations: tuple[MethodExplanation, ...]
    arms: tuple[StudyArm, ...]
    dataset: str = "custom"
    model: str = "custom"
    title: str = "Guess what the model answers"
    arms_per_participant: int = 1
    importance_threshold: float = 0.05
    max_sample_chars: int | None = None

    kind: ClassVar[str] = "simulatability"

    def __post_init__(self) -> None:
        for name in ("class_names", "samples", "explanations", "arms"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        if not self.arms:
            raise invalid("arms", _OWNER, "at least one arm", "none")
        ids = [arm.id for arm in self.arms]
        if len(set(ids)) != len(ids):
            raise invalid("arms", _OWNER, "distinct arms", ids)
        seeds = [s.seed for s in self.samples]
        if len(set(seeds)) != len(seeds):
            raise invalid("samples", _OWNER, "one sample set per seed", seeds)
        keys = [e.key for e in self.explanations]
        if len(set(keys)) != len(keys):
            raise invalid(
                "explanations", _OWNER, "one explanation per (method, k, interpretation, seed)", keys
            )
        n_seeds = len({arm.seed for arm in self.arms})
        apt = self.arms_per_participant
        if isinstance(apt, bool) or not isinstance(apt, int) or not 1 <= apt <= n_seeds:
            raise invalid(
                "arms_per_participant", _OWNER, f"an integer in [1, {n_seeds}] (the seeds the arms use)", apt,
                "Each arm a participant does uses another seed, so that nobody sees the same samples twice.",
            )  # fmt: skip
        for arm in self.arms:  # renders every prompt once: shapes, ids and class names are checked here
            self.prompt(arm)

    # -- lookups ---------------------------------------------------------------------------------------------
    def arm(self, arm_id: str) -> StudyArm:
        return find(self.arms, lambda arm: arm.id, arm_id, "arm", _OWNER, "the id of one of the study's arms")

    def sample_set(self, seed: int) -> SampleSet:
        seeds = [s.seed for s in self.samples]
        return find(
            self.samples, lambda s: s.seed, seed, "arms", _OWNER, f"seeds that have samples ({seeds})"
        )

    def explanation(self, arm: StudyArm) -> MethodExplanation | None:
        """The explanation an arm shows (``None`` for the baseline)."""
        if arm.method == BASELINE_METHOD:
            return None
        for explanation in self.explanations:
            if explanation.key == arm.explanation_key:
                return explanation
        raise invalid(
            "explanations", _OWNER, f"one for every explanation arm (missing: {arm.explanation_key})", None
        )

    def shown_classes(self, arm: StudyArm) -> tuple[str, ...]:
        """The class names as the arm shows them (``Class_0``… when anonymised)."""
        return (
            tuple(f"Class_{i}" for i in range(len(self.class_names))) if arm.anonymized else self.class_names
        )

    # -- the LLM's view of an arm ----------------------------------------------------------------------------
    def prompt(self, arm: StudyArm) -> ConSimPrompt:
        """The ConSim prompt of ``arm`` (what an LLM simulator is asked; people see the same parts)."""
        samples = self.sample_set(arm.seed)
        explanation = self.explanation(arm)
        return render_prompt(
            arm.label,
            class_names=self.class_names,
            lp_samples=[s.text for s in samples.lp],
            lp_predictions=np.array([s.prediction for s in samples.lp], dtype=np.int64),
            ep_samples=[s.text for s in samples.ep],
            ep_predictions=np.array([s.prediction for s in samples.ep], dtype=np.int64),
            importance_threshold=self.importance_threshold,
            max_sample_chars=self.max_sample_chars,
            interpretation=None if explanation is None else explanation.concepts,
            global_importances=None if explanation is None else explanation.global_importances,
            lp_local_importances=None if explanation is None else explanation.lp_local,
            ep_local_importances=None if explanation is None else explanation.ep_local,
            concept_ids=None if explanation is None else explanation.concept_ids,
        )

    # -- serialisation ---------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, object]:
        return {
            "kind": self.kind, "title": self.title, "dataset": self.dataset, "model": self.model,
            "class_names": list(self.class_names), "arms_per_participant": self.arms_per_participant,
            "importance_threshold": self.importance_threshold, "max_sample_chars": self.max_sample_chars,
            "samples": [s.to_dict() for s in self.samples],
            "explanations": [e.to_dict() for e in self.explanations],
            "arms": [vars(a) for a in self.arms],
        }  # fmt: skip

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SimulatabilityStudy:
        threshold = float(data.get("importance_threshold", 0.05))
        if not math.isfinite(threshold):
            raise invalid("importance_threshold", _OWNER, "a number in [0, 1)", threshold)
        return cls(
            class_names=tuple(data["class_names"]),
            samples=tuple(SampleSet.from_dict(s) for s in data["samples"]),
            explanations=tuple(MethodExplanation.from_dict(e) for e in data.get("explanations", ())),
            arms=tuple(StudyArm(**a) for a in data["arms"]),
            dataset=str(data.get("dataset", "custom")), model=str(data.get("model", "custom")),
            title=str(data.get("title", cls.title)),
            arms_per_participant=data.get("arms_per_participant", 1),
            importance_threshold=threshold, max_sample_chars=data.get("max_sample_chars"),
        )  # fmt: skip
