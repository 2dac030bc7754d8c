"""Study kinds behind one protocol: what the web app asks of a study, whatever its kind.

Nothing asks which kind of study it serves: the answer store asks the study's :class:`StudyKind` for a
participant's plan and screens (:meth:`~StudyKind.plan`, :meth:`~StudyKind.screens`), the results for the kind's
answer columns (:meth:`~StudyKind.annotate`), the command line for its summary, its exports and whether its answers
are result rows (:attr:`~StudyKind.summary`, :meth:`~StudyKind.write_answers`, :attr:`~StudyKind.results_rows`),
and the web app (:mod:`xaimetrics.studies._app`) how to show a screen (:meth:`~StudyKind.view`), how to read the form posted on it
(:meth:`~StudyKind.parse`), which downloads exist (:attr:`~StudyKind.exports`, :meth:`~StudyKind.export`) and
what the admin page lists (:meth:`~StudyKind.admin`). :func:`study_kind` is the one place that maps a study to
its kind, through :data:`~xaimetrics.studies._kind_registry.STUDY_KINDS`; a new kind of study is a class, a
template and one registration, with no change to the store, the results, the command or the routes.

- :class:`SimulatabilityKind` — instructions, a *learn* screen per arm and one *question* per EP sample; an
  answer is a class id; the downloads add each participant's eq. 5 scores (``scores.csv``).
- :class:`LikertKind` — instructions, then one *rate* screen per text; an answer is a rating per dimension;
  the downloads add the ratings array (``ratings.json``) and its long table (``ratings.csv``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Literal, Protocol, cast

import numpy as np

from xaimetrics._validation import invalid
from xaimetrics.studies._kind_registry import STUDY_KINDS, KindCore, KindEntry, Screen, Study, kind_of
from xaimetrics.studies._likert import LikertStudy
from xaimetrics.studies._plan import simulatability_plan
from xaimetrics.studies._security import parse_number
from xaimetrics.studies._simulatability import SimulatabilityStudy
from xaimetrics.studies._store import StudyStore
from xaimetrics.studies._views import explanation_view, question_view, rating_view

if TYPE_CHECKING:
    import pandas as pd

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


class StudyKind(KindCore, Protocol):
    """What the store, the results, the command line and the web app need from a kind of study (see the module
    docstring)."""

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

    def write_answers(self, store: StudyStore, path: Path) -> Path:
        """Write the answers in ``store`` to ``path`` in the kind's own form (``xaimetrics study export --output``)."""
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
    results_rows: ClassVar[bool] = True

    @property
    def summary(self) -> str:
        return f"{len(self.study.arms)} arms"

    def plan(self, number: int, arms: Sequence[str] | None) -> list[str]:
        """The given ``arms`` (checked), else balanced arms (:func:`~xaimetrics.studies.assign_arms`)."""
        return simulatability_plan(self.study, number, arms)

    def screens(self, plan: Sequence[str]) -> list[Screen]:
        """Instructions, then per arm a *learn* screen (none for NE1) and one *question* per EP sample."""
        out = [Screen(0, "instructions")]
        for block, arm_id in enumerate(plan, 1):
            arm = self.study.arm(arm_id)
            content = self.study.prompt(arm).setting.kind.content
            if content.global_explanations or content.lp_samples:
                out.append(Screen(len(out), "learn", arm=arm_id, block=block))
            ep = self.study.sample_set(arm.seed).ep
            for number, sample in enumerate(ep, 1):
                out.append(
                    Screen(len(out), "question", arm=arm_id, sample=sample.id, block=block, number=number,
                           total=len(ep))
                )  # fmt: skip
        return out

    def annotate(self, frame: pd.DataFrame) -> pd.DataFrame:
        """Adds the class chosen (``answer``), f's prediction (``model_answer``) and whether they agree."""
        import pandas as pd

        chosen, model, correct = [], [], []
        for kind, subject, value in zip(frame["kind"], frame["subject"], frame["value"], strict=True):
            entry: tuple[str | None, str | None, bool | None] = (None, None, None)
            if kind == "question" and not pd.isna(value):
                arm_id, sample_id = subject.rsplit("/", 1)
                sample = next(
                    s for s in self.study.sample_set(self.study.arm(arm_id).seed).ep if s.id == sample_id
                )
                names = self.study.class_names
                entry = (names[int(value)], names[sample.prediction], int(value) == sample.prediction)
            chosen.append(entry[0])
            model.append(entry[1])
            correct.append(entry[2])
        frame["answer"], frame["model_answer"], frame["correct"] = chosen, model, correct
        return frame

    def write_answers(self, store: StudyStore, path: Path) -> Path:
        """Every answer (:func:`~xaimetrics.studies.answers_frame`) as ``.csv`` or ``.json`` records."""
        from xaimetrics.studies._results import answers_frame

        frame = answers_frame(self.study, store)
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".csv":
            frame.to_csv(path, index=False)
        elif path.suffix == ".json":
            path.write_text(frame.to_json(orient="records", indent=1) + "\n", encoding="utf-8")
        else:
            raise invalid("--output", "xaimetrics study", "a .csv or .json file", str(path))
        return path

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
    results_rows: ClassVar[bool] = False

    @property
    def summary(self) -> str:
        return f"{len(self.study.items)} texts"

    def plan(self, number: int, arms: Sequence[str] | None) -> list[str]:
        """Every text; when the study shuffles, in one seeded order rotated per annotator (``arms`` refused)."""
        if arms is not None:
            raise invalid(
                "arms", "make_plan", "None for a Likert study (every annotator rates every text)", list(arms)
            )
        ids = [item.id for item in self.study.items]
        if (
            self.study.shuffle
        ):  # one seeded order, rotated so that each annotator starts in another part of it
            ids = [ids[i] for i in np.random.default_rng(0).permutation(len(ids))]
            offset = (number * -(-len(ids) // self.study.n_annotators)) % len(ids)
            ids = ids[offset:] + ids[:offset]
        return ids

    def screens(self, plan: Sequence[str]) -> list[Screen]:
        """Instructions, then one *rate* screen per text."""
        out = [Screen(0, "instructions")]
        for number, item in enumerate(plan, 1):
            out.append(Screen(len(out), "rate", item=item, number=number, total=len(plan)))
        return out

    def annotate(self, frame: pd.DataFrame) -> pd.DataFrame:
        """Adds the rated ``dimension`` of each rating."""
        names = [d.name for d in self.study.dimensions]
        frame["dimension"] = [
            names[int(f)] if k == "rate" else None for k, f in zip(frame["kind"], frame["field"], strict=True)
        ]
        return frame

    def write_answers(self, store: StudyStore, path: Path) -> Path:
        """The ratings (:func:`~xaimetrics.studies.likert_ratings`), saved by :meth:`LikertRatings.save`."""
        from xaimetrics.studies._results import likert_ratings

        return likert_ratings(self.study, store).save(path)

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


STUDY_KINDS.register(
    SimulatabilityKind.name, KindEntry(SimulatabilityStudy, cast("Callable[[Study], KindCore]", SimulatabilityKind)),
    builtin=True, description="the ConSim protocol for people: learn from explanations, then predict the model",
)  # fmt: skip
STUDY_KINDS.register(
    LikertKind.name, KindEntry(LikertStudy, cast("Callable[[Study], KindCore]", LikertKind)), builtin=True,
    description="the Atlas protocol's ratings: every annotator rates every text on each dimension",
)  # fmt: skip


def study_kind(study: Study) -> StudyKind:
    """The :class:`StudyKind` of ``study`` (the one place that asks which kind a study is: its registered entry).

    Example:
        >>> from xaimetrics.studies import LikertStudy
        >>> from xaimetrics.studies._likert import Dimension, RatingItem
        >>> kind = study_kind(LikertStudy([Dimension("tone", "emotional tone")], [RatingItem("0", "a joy", (0.8,))]))
        >>> kind.name, kind.exports, kind.summary
        ('likert', ('answers.csv', 'answers.json', 'ratings.json', 'ratings.csv'), '1 texts')
    """
    return cast(StudyKind, kind_of(study))  # every registered kind is a full StudyKind
