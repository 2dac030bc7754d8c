"""The study kinds behind the web app: screens, answers and downloads per kind, through one protocol."""

from __future__ import annotations

import json

import pytest

from xaimetrics.studies import LikertStudy, SimulatabilityStudy, StudyStore
from xaimetrics.studies._kinds import AdminFacts, LikertKind, SimulatabilityKind, study_kind
from xaimetrics.studies._likert import Dimension, RatingItem
from xaimetrics.studies._plan import screens
from xaimetrics.studies._simulatability import SampleSet, StudyArm


def _simulatability() -> SimulatabilityStudy:
    samples = SampleSet.from_texts(
        0, ["the embassy closed", "a late goal"], [0, 1], ["referee quits", "new chip"], [1, 2]
    )
    return SimulatabilityStudy(
        ["World", "Sports", "Sci/Tech"], [samples], [], [StudyArm("NoExplanation", "NE2", False, 0)]
    )


def _likert() -> LikertStudy:
    dimensions = [Dimension("tone", "emotional tone"), Dimension("topic", "the topic")]
    items = [RatingItem("a", "a joy", (0.5, -1.0)), RatingItem("b", "dull", (0.1, 2.0))]
    return LikertStudy(dimensions, items, shuffle=False, n_annotators=2)


def test_each_study_has_its_kind():
    assert isinstance(study_kind(_simulatability()), SimulatabilityKind)
    assert isinstance(study_kind(_likert()), LikertKind)


def test_simulatability_screens_answers_and_downloads(tmp_path):
    study = _simulatability()
    kind = study_kind(study)
    plan = [study.arms[0].id]
    sequence = screens(study, plan)
    assert [kind.view(s, plan).template for s in sequence] == [
        "instructions_simulatability.html.jinja", "learn.html.jinja", "question.html.jinja", "question.html.jinja",
    ]  # fmt: skip
    question = sequence[2]
    assert [c["name"] for c in kind.view(question, plan).context["view"]["choices"]] == [
        "World",
        "Sports",
        "Sci/Tech",
    ]
    assert kind.parse(sequence[1], {}).values == {"": None}
    assert kind.parse(question, {"answer": "2"}).values == {"": 2}
    for bad in ("3", "-1", "²", ""):
        assert kind.parse(question, {"answer": bad}).error == "Choose one of the answers."
    assert kind.admin() == AdminFacts(arms=(study.arms[0].id,))
    store = StudyStore(tmp_path / "answers.sqlite", study)
    participant = store.invite().participant
    for screen, value in ((0, None), (1, None), (2, 1), (3, 0)):
        store.record(participant, screen, {"": value})
    scores = kind.export("scores.csv", store)
    assert scores is not None and scores.media_type == "text/csv"
    assert scores.content.splitlines() == [  # f predicted Sports (1) and Sci/Tech (2): one of two is right
        "participant,arm,score,n_correct,n_samples",
        f"P1,{study.arms[0].id},0.5,1,2",
    ]
    answers = kind.export("answers.json", store)
    assert answers is not None and [r["answer"] for r in answers.content if r["kind"] == "question"] == [
        "Sports",
        "World",
    ]
    assert kind.export("ratings.json", store) is None
    store.close()


def test_likert_screens_answers_and_downloads(tmp_path):
    study = _likert()
    kind = study_kind(study)
    plan = ["a", "b"]
    sequence = screens(study, plan)
    views = [kind.view(s, plan) for s in sequence]
    assert [v.template for v in views] == [
        "instructions_likert.html.jinja",
        "rate.html.jinja",
        "rate.html.jinja",
    ]
    assert views[0].context["view"]["n_items"] == 2 and views[2].context["view"]["text"] == "dull"
    assert kind.parse(sequence[1], {"d0": "5", "d1": "1"}).values == {"0": 5, "1": 1}
    partial = kind.parse(sequence[1], {"d0": "5", "d1": "6"})
    assert partial.values == {"0": 5} and partial.error == "Rate every dimension: topic."
    assert kind.admin() == AdminFacts(planned=2)
    store = StudyStore(tmp_path / "answers.sqlite", study)
    participant = store.invite().participant
    store.record(participant, 0, {"": None})
    store.record(participant, 2, {"0": 2, "1": 4})
    ratings = kind.export("ratings.json", store)
    assert ratings is not None and ratings.media_type == "application/json"
    assert json.loads(json.dumps(ratings.content)) == [[[None, None]], [[2, 4]]]
    assert kind.export("scores.csv", store) is None
    store.close()


@pytest.mark.parametrize("make", [_simulatability, _likert])
def test_every_listed_export_exists(make, tmp_path):
    study = make()
    kind = study_kind(study)
    store = StudyStore(tmp_path / "answers.sqlite", study)
    assert kind.exports[:2] == ("answers.csv", "answers.json")
    assert all(kind.export(name, store) is not None for name in kind.exports)
    store.close()


def test_a_new_kind_is_one_registration_seen_by_the_bundle_the_store_and_the_results(tmp_path):
    """A kind registered alone is saved and read back, plans and lays out its screens, and annotates answers."""
    from dataclasses import dataclass
    from typing import ClassVar

    from xaimetrics.studies import load_study, save_study
    from xaimetrics.studies._kind_registry import STUDY_KINDS, KindEntry
    from xaimetrics.studies._results import answers_frame

    @dataclass(frozen=True)
    class Ranking(LikertStudy):
        kind: ClassVar[str] = "ranking"

    @dataclass(frozen=True)
    class RankingKind(LikertKind):
        name: ClassVar[str] = "ranking"

        def plan(self, number, arms):
            return [item.id for item in reversed(self.study.items)]  # every annotator, last text first

        def annotate(self, frame):
            frame["ranked"] = frame["kind"] == "rate"
            return frame

    base = _likert()
    study = Ranking(base.dimensions, base.items, shuffle=False, n_annotators=2)
    with pytest.raises(ValueError, match="a bundle of kind 'simulatability' or 'likert'"):
        load_study(save_study(study, tmp_path / "before.json"))
    with STUDY_KINDS.temporarily("ranking", KindEntry(Ranking, RankingKind)):
        loaded = load_study(save_study(study, tmp_path / "ranking.json"))
        assert type(loaded) is Ranking and isinstance(study_kind(loaded), RankingKind)
        with StudyStore(tmp_path / "answers.sqlite", loaded) as store:
            participant = store.invite("ann").participant
            assert [s.item for s in store.screens(participant)] == [None, "b", "a"]
            store.record(participant, 1, {"0": 4, "1": 2})
            frame = answers_frame(loaded, store)
        assert frame.loc[frame["kind"] == "rate", "ranked"].all()
    assert "ranking" not in STUDY_KINDS
