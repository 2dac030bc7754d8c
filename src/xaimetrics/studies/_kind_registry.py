"""The registry of study kinds (:data:`STUDY_KINDS`) and what every kind does below the web app.

A kind of study is one entry: the study class it serves (read back from a bundle by its ``kind``) and the
:class:`~xaimetrics.studies._kinds.StudyKind` that holds everything that differs between kinds — the plan of a
participant, their screens, the columns their answers add, the command line's summary — so that the bundle,
the answer store, the results and the command ask the kind instead of testing the study's class. The built-in
kinds (``simulatability``, ``likert``) register themselves in :mod:`xaimetrics.studies._kinds`; this module
stands below the store and the bundle, which read it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal, Protocol

from xaimetrics._registry import Registry
from xaimetrics.studies._likert import LikertStudy
from xaimetrics.studies._simulatability import SimulatabilityStudy

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["STUDY_KINDS", "KindCore", "KindEntry", "Screen", "ScreenKind", "Study", "kind_of"]

#: a study of any registered kind
Study = SimulatabilityStudy | LikertStudy
ScreenKind = Literal["instructions", "learn", "question", "rate"]


@dataclass(frozen=True)
class Screen:
    """One page of a participant's sequence.

    Attributes:
        index: position in the sequence (0 = instructions).
        kind: ``"instructions"``, ``"learn"``, ``"question"`` (simulatability) or ``"rate"`` (Likert).
        arm: the arm id (simulatability); sample: the EP sample id (questions); item: the text id (Likert).
        block: the arm's number in the plan, 1-based; number / total: the question's number in its block.
    """

    index: int
    kind: ScreenKind
    arm: str | None = None
    sample: str | None = None
    item: str | None = None
    block: int = 0
    number: int = 0
    total: int = 0

    @property
    def answered(self) -> bool:
        """Whether the screen asks for an answer (else it is acknowledged with "Continue")."""
        return self.kind in ("question", "rate")


class KindCore(Protocol):
    """What the store, the results and the command line ask of a kind of study (the web app asks more:
    :class:`~xaimetrics.studies._kinds.StudyKind`)."""

    #: its answers are :class:`~xaimetrics.benchmark.ResultRow` s of the ``human`` simulator, comparable with an
    #: LLM's on the study's grid (exported to a results store, simulated by an LLM, a grid written beside it)
    results_rows: ClassVar[bool]

    @property
    def summary(self) -> str:
        """The study's size in words, for the command line (``"3 arms"``, ``"50 texts"``)."""
        ...

    def plan(self, number: int, arms: Sequence[str] | None) -> list[str]:
        """Participant ``number``'s plan (arm ids or text ids), from the given ``arms`` where the kind takes them."""
        ...

    def screens(self, plan: Sequence[str]) -> list[Screen]:
        """The sequence of screens of a participant with ``plan``."""
        ...

    def annotate(self, frame: pd.DataFrame) -> pd.DataFrame:
        """The stored answers (``answers_frame``'s common columns) with the kind's own columns added."""
        ...


@dataclass(frozen=True)
class KindEntry:
    """A registered kind: the study class of its bundles and the :class:`KindCore` made for a study."""

    study_type: type[SimulatabilityStudy] | type[LikertStudy]
    make: Callable[[Study], KindCore]


#: the kinds of study, by the ``kind`` name their bundles carry
STUDY_KINDS: Registry[KindEntry] = Registry("study kind", argument="kind")


def kind_of(study: Study) -> KindCore:
    """The registered kind of ``study`` (by its ``kind`` name)."""
    return STUDY_KINDS.get(study.kind).make(study)
