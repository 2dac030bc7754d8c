"""The answer database and the participants' plans: Latin square, screens, durability, binding to the bundle."""

from __future__ import annotations

import itertools
import sqlite3

import pytest

from xaimetrics.exceptions import InvalidParameterError, StoreError
from xaimetrics.studies import LikertStudy, SimulatabilityStudy, StudyStore
from xaimetrics.studies._likert import Dimension, RatingItem
from xaimetrics.studies._plan import assign_arms, screens
from xaimetrics.studies._simulatability import SampleSet, StudyArm


def _study(arms_per_participant: int = 3) -> SimulatabilityStudy:
    sets = [SampleSet.from_texts(s, [f"lp {s}"], [0], [f"ep {s} a", f"ep {s} b"], [1, 0]) for s in range(3)]
    arms = [StudyArm("NoExplanation", kind, anonymized, s) for kind, anonymized in (("NE1", False), ("NE2", False), ("NE2", True))
            for s in range(3)]  # fmt: skip
    return SimulatabilityStudy(["x", "y"], sets, [], arms, arms_per_participant=arms_per_participant)


def test_the_latin_square_balances_conditions_and_seeds():
    study = _study()
    plans = [assign_arms(study, p) for p in range(6)]
    for plan in plans:  # one condition per seed, three different conditions
        arms = [study.arm(a) for a in plan]
        assert sorted(a.seed for a in arms) == [0, 1, 2] and len({a.label for a in arms}) == 3
    for block in (plans[:3], plans[3:]):  # every 3 participants: each arm exactly once
        assert sorted(itertools.chain(*block)) == sorted(a.id for a in study.arms)
    single = _study(arms_per_participant=1)
    first_three = [assign_arms(single, p)[0] for p in range(3)]
    assert {single.arm(a).seed for a in first_three} == {0} and len(
        set(first_three)
    ) == 3  # they meet on seed 0


def test_screens_follow_the_plan():
    study = _study()
    sequence = screens(study, ["NoExplanation/NE1/seed0", "NoExplanation/NE2-a/seed1"])
    assert [(s.kind, s.block, s.number) for s in sequence] == [
        ("instructions", 0, 0), ("question", 1, 1), ("question", 1, 2),  # NE1: no learning phase
        ("learn", 2, 0), ("question", 2, 1), ("question", 2, 2),
    ]  # fmt: skip
    assert [s.sample for s in sequence if s.kind == "question"] == ["1", "2", "1", "2"]


def test_answers_survive_reopening_and_resume_at_the_first_unanswered_screen(tmp_path):
    study = _study()
    path = tmp_path / "answers.sqlite"
    store = StudyStore(path, study)
    invite = store.invite()
    store.record(invite.participant, 0, {"": None})
    store.record(invite.participant, 1, {"": 1})
    store.close()
    with StudyStore(path, study) as again:
        participant = again.participant(invite.token)
        assert participant == invite.participant
        assert again.answers(participant) == {0: {"": None}, 1: {"": 1}}
        assert again.current_screen(participant).index == 2
        assert again.participant("not-a-token") is None and again.participant(None) is None
        with pytest.raises(InvalidParameterError, match="'screen'"):
            again.record(participant, 99, {"": 1})
    with sqlite3.connect(path) as raw:  # WAL journal, full fsync, tokens hashed
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        (stored,) = raw.execute("SELECT token_hash FROM participants").fetchone()
        assert stored != invite.token and len(stored) == 64


def test_a_database_belongs_to_one_bundle(tmp_path):
    path = tmp_path / "answers.sqlite"
    StudyStore(path, _study()).close()
    with pytest.raises(StoreError, match="another version of the study bundle"):
        StudyStore(path, _study(arms_per_participant=2))


def test_invites_have_unique_labels_and_explicit_arms_are_checked(tmp_path):
    study = _study()
    store = StudyStore(tmp_path / "answers.sqlite", study)
    assert store.invite(arms=["NoExplanation/NE2/seed2"]).participant.plan == ("NoExplanation/NE2/seed2",)
    with pytest.raises(InvalidParameterError, match="'arm'"):
        store.invite(arms=["NMF/E2/seed0"])
    # two arms on one seed: the same LP/EP samples twice for one person, refused (nobody is invited)
    with pytest.raises(
        InvalidParameterError,
        match=r"'arms'.*different seeds.*NE1/seed1, NoExplanation/NE2/seed1 \(all on seed 1\)",
    ):
        store.invite(arms=["NoExplanation/NE2/seed0", "NoExplanation/NE1/seed1", "NoExplanation/NE2/seed1"])
    assert len(store.participants()) == 1
    two = store.invite(arms=["NoExplanation/NE2-a/seed0", "NoExplanation/NE1/seed1"]).participant
    assert two.plan == ("NoExplanation/NE2-a/seed0", "NoExplanation/NE1/seed1")
    store.invite(label="alice")
    with pytest.raises(InvalidParameterError, match=r"'label'.*not used yet"):
        store.invite(label="alice")
    tokens = {store.invite().token for _ in range(20)}
    assert len(tokens) == 20 and all(len(t) >= 32 for t in tokens)
    assert [p.label for p in store.participants()][:4] == ["P1", "P2", "alice", "P4"]
    admin = store.new_admin_token()
    assert store.is_admin(admin) and not store.is_admin(admin[:-1]) and not store.is_admin(None)
    replaced = store.new_admin_token()
    assert store.is_admin(replaced) and not store.is_admin(admin)


def test_likert_plans_shuffle_per_annotator(tmp_path):
    items = [RatingItem(str(i), f"text {i}", (float(i),)) for i in range(8)]
    study = LikertStudy([Dimension("d", "p")], items)
    store = StudyStore(tmp_path / "answers.sqlite", study)
    plans = [store.invite().participant.plan for _ in range(3)]
    assert all(sorted(plan) == sorted(i.id for i in items) for plan in plans)
    assert [plan[0] for plan in plans] == [
        plans[0][0],
        plans[0][3],
        plans[0][6],
    ]  # 3 annotators: thirds apart
    fixed = LikertStudy([Dimension("d", "p")], items, shuffle=False)
    assert StudyStore(tmp_path / "fixed.sqlite", fixed).invite().participant.plan == tuple(
        i.id for i in items
    )
