"""Study kinds behind one protocol: what the web app asks of a study, whatever its kind.

The app (:mod:`xaimetrics.studies._app`) never asks which kind of study it serves: it asks the study's
:class:`StudyKind` how to show a screen (:meth:`~StudyKind.view`), how to read the form posted on it
(:meth:`~StudyKind.parse`), which downloads exist (:attr:`~StudyKind.exports`, :meth:`~StudyKind.export`) and
what the admin page lists (:meth:`~StudyKind.admin`). :func:`study_kind` is the one place that maps a study to
its kind; a new kind of study is a new class here and a template, with no change to the routes.

- :class:`SimulatabilityKind` — instructions, a *learn* screen per arm and one *question* per EP sample; an
  answer is a class id; the downloads add each participant's eq. 5 scores (``scores.csv``).
- :class:`LikertKind` — instructions, then one *rate* screen per text; an answer is a rating per dimension;
  the downloads add the ratings array (``ratings.json``) and its long table (``ratings.csv``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Literal, Protocol

from xaimetrics.studies._bundle import Study
from xaimetrics.studies._likert import LikertStudy
from xaimetrics.studies._plan import Screen
from xaimetrics.studies._security import parse_number
from xaimetrics.studies._simulatability import SimulatabilityStudy
from xaimetrics.studies._store import StudyStore
from xaimetrics.studies._views import explanation_view, question_view, rating_view

__all__ = [
    "AdminFacts",
    "Answer",
    "Download",
    "LikertKind",
    "ParsedAnswer",
    "ScreenView",
    "SimulatabilityKind",
    "StudyKind",
    "study_kind",
]

#: the stored values of one screen: ``{field: value}`` (``{"": None}`` acknowledges a screen)
Answer = dict[str, int | None]
#: the downloads every kind offers
_ANSWER_EXPORTS = ("answers.csv", "answers.json")


@dataclass(frozen=True)
class ScreenView:
    """A screen as the app renders it: the template and its context (beside the app's own)."""

    template: str
    context: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class ParsedAnswer:
    """The values to store for a screen, or the message that asks the participant to correct the form."""

    values: Answer
    error: str | None = None


@dataclass(frozen=True)
class Download:
    """An export's content: text of ``media_type``, or JSON-ready data when ``media_type`` is JSON."""

    content: object
    media_type: Literal["text/csv", "application/json"]


@dataclass(frozen=True)
class AdminFacts:
    """What the admin page says about a study: the arm ids an invite may name, the planned annotators."""

    arms: tuple[str, ...] = ()
    planned: int | None = None


class StudyKind(Protocol):
    """What the web app needs from a kind of study (see the module docstring)."""

    @property
    def name(self) -> str:
        """The kind's name (``"simulatability"``, ``"likert"``): the bundle's ``kind`` and templates' suffix."""
        ...

    @property
    def exports(self) -> tuple[str, ...]:
        """The file names the admin can download."""
        ...

    def view(self, screen: Screen, plan: Sequence[str]) -> ScreenView:
        """The template and context of ``screen`` for a participant with ``plan``."""
        ...

    def parse(self, screen: Screen, fields: Mapping[str, str]) -> ParsedAnswer:
        """The answer posted on ``screen`` (checked), or the error to show with the form again."""
        ...

    def export(self, name: str, store: StudyStore) -> Download | None:
        """The download ``name`` (one of :attr:`exports`) from the answers in ``store``; ``None``: no such file."""
        ...

    def admin(self) -> AdminFacts:
        """What the admin page says about the study."""
        ...


def _acknowledged(screen: Screen) -> bool:
    return screen.kind in ("instructions", "learn")


def _answers_download(study: Study, store: StudyStore, name: str) -> Download | None:
    """``answers.csv`` / ``answers.json``: every stored answer (:func:`~xaimetrics.studies._results.answers_frame`)."""
    from xaimetrics.studies._results import answers_frame

    if name not in _ANSWER_EXPORTS:
        return None
    frame = answers_frame(study, store)
    if name.endswith(".csv"):
        return Download(frame.to_csv(index=False), "text/csv")
    records = frame.astype(object).where(frame.notna(), None).to_dict(orient="records")
    return Download(records, "application/json")


@dataclass(frozen=True)
class SimulatabilityKind:
    """The ConSim protocol for people (:class:`~xaimetrics.studies.SimulatabilityStudy`)."""

    study: SimulatabilityStudy
    name: ClassVar[str] = "simulatability"
    exports: ClassVar[tuple[str, ...]] = (*_ANSWER_EXPORTS, "scores.csv")

    def view(self, screen: Screen, plan: Sequence[str]) -> ScreenView:
        parts = {"parts": len(plan)}
        if screen.kind == "instructions":
            return ScreenView("instructions_simulatability.html.jinja", parts)
        if screen.kind == "learn":
            arm = self.study.arm(str(screen.arm))
            return ScreenView("learn.html.jinja", {"view": explanation_view(self.study, arm), **parts})
        if screen.kind == "question":
            return ScreenView("question.html.jinja", {"view": question_view(self.study, screen), **parts})
        raise ValueError(
            f"A simulatability study has no {screen.kind!r} screens."
        )  # a plan matches its study

    def parse(self, screen: Screen, fields: Mapping[str, str]) -> ParsedAnswer:
        """A class id in ``answer`` on a question; ``{"": None}`` acknowledges instructions and learn screens.

        Example:
            >>> from xaimetrics.studies import SimulatabilityStudy
            >>> from xaimetrics.studies._simulatability import SampleSet, StudyArm
            >>> study = SimulatabilityStudy(["x", "y"], [SampleSet.from_texts(0, ["a"], [0], ["b"], [1])], [],
            ...                             [StudyArm("NoExplanation", "NE2", False, 0)])
            >>> question = Screen(2, "question", arm=study.arms[0].id, sample="1")
            >>> kind = SimulatabilityKind(study)
            >>> kind.parse(question, {"answer": "1"}).values, kind.parse(question, {"answer": "2"}).error
            ({'': 1}, 'Choose one of the answers.')
        """
        if _acknowledged(screen):
            return ParsedAnswer({"": None})
        if screen.kind != "question":
            return ParsedAnswer({}, "Unexpected answer.")
        value = parse_number(fields.get("answer"))
        if value is None or value >= len(self.study.class_names):
            return ParsedAnswer({}, "Choose one of the answers.")
        return ParsedAnswer({"": value})

    def export(self, name: str, store: StudyStore) -> Download | None:
        if name != "scores.csv":
            return _answers_download(self.study, store, name)
        import pandas as pd

        from xaimetrics.studies._results import human_results

        columns = ["participant", "arm", "score", "n_correct", "n_samples"]
        rows = [
            (h.participant, h.arm, h.result.accuracy, h.result.n_correct, h.result.n_samples)
            for h in human_results(self.study, store)
        ]
        return Download(pd.DataFrame(rows, columns=columns).to_csv(index=False), "text/csv")

    def admin(self) -> AdminFacts:
        return AdminFacts(arms=tuple(arm.id for arm in self.study.arms))


@dataclass(frozen=True)
class LikertKind:
    """The Atlas protocol's rating study (:class:`~xaimetrics.studies.LikertStudy`)."""

    study: LikertStudy
    name: ClassVar[str] = "likert"
    exports: ClassVar[tuple[str, ...]] = (*_ANSWER_EXPORTS, "ratings.json", "ratings.csv")

    def view(self, screen: Screen, plan: Sequence[str]) -> ScreenView:
        if screen.kind == "instructions":
            study = self.study
            view = {"dimensions": study.dimensions, "scale": study.scale, "n_items": len(plan),
                    "instructions": study.instructions}  # fmt: skip
            return ScreenView("instructions_likert.html.jinja", {"parts": len(plan), "view": view})
        return ScreenView("rate.html.jinja", {"view": rating_view(self.study, screen)})

    def parse(self, screen: Screen, fields: Mapping[str, str]) -> ParsedAnswer:
        """A rating in ``1 … len(scale)`` for every dimension (fields ``d0``, ``d1``, …).

        Example:
            >>> from xaimetrics.studies import LikertStudy
            >>> from xaimetrics.studies._likert import Dimension, RatingItem
            >>> study = LikertStudy([Dimension("tone", "emotional tone"), Dimension("topic", "the topic")],
            ...                     [RatingItem("0", "a joy", (0.8, 0.1))])
            >>> rate, kind = Screen(1, "rate", item="0"), LikertKind(study)
            >>> kind.parse(rate, {"d0": "4", "d1": "5"}).values, kind.parse(rate, {"d0": "6", "d1": "5"}).error
            ({'0': 4, '1': 5}, 'Rate every dimension: tone.')
        """
        if _acknowledged(screen):
            return ParsedAnswer({"": None})
        values: Answer = {}
        missing = []
        for d, dimension in enumerate(self.study.dimensions):
            value = parse_number(fields.get(f"d{d}"))
            if value is not None and 1 <= value <= len(self.study.scale):
                values[str(d)] = value
            else:
                missing.append(dimension.name)
        if missing:
            return ParsedAnswer(values, "Rate every dimension: " + ", ".join(missing) + ".")
        return ParsedAnswer(values)

    def export(self, name: str, store: StudyStore) -> Download | None:
        if name not in ("ratings.json", "ratings.csv"):
            return _answers_download(self.study, store, name)
        from xaimetrics.studies._results import likert_ratings

        ratings = likert_ratings(self.study, store)
        if name.endswith(".csv"):
            return Download(ratings.frame().to_csv(index=False), "text/csv")
        return Download(ratings.to_list(), "application/json")

    def admin(self) -> AdminFacts:
        return AdminFacts(planned=self.study.n_annotators)


def study_kind(study: Study) -> StudyKind:
    """The :class:`StudyKind` of ``study`` (the one place that asks which kind a study is).

    Example:
        >>> from xaimetrics.studies import LikertStudy
        >>> from xaimetrics.studies._likert import Dimension, RatingItem
        >>> kind = study_kind(LikertStudy([Dimension("tone", "emotional tone")], [RatingItem("0", "a joy", (0.8,))]))
        >>> kind.name, kind.exports
        ('likert', ('answers.csv', 'answers.json', 'ratings.json', 'ratings.csv'))
    """
    if isinstance(study, LikertStudy):
        return LikertKind(study)
    return SimulatabilityKind(study)
