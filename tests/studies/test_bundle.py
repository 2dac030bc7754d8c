"""Study bundles: built from a grid they hold exactly what the LLM is shown; they round-trip through JSON."""

from __future__ import annotations

import json

import numpy as np
import pytest
from study_helpers import study_grid
from toy_grid import PROVIDERS

from xaimetrics.benchmark import Artefacts
from xaimetrics.benchmark._runner import build_group_prompts
from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.studies import (
    LikertStudy,
    SimulatabilityStudy,
    likert_study_from_concepts,
    likert_study_from_grid,
    load_study,
    save_study,
    simulatability_study_from_grid,
)
from xaimetrics.studies._bundle import study_digest
from xaimetrics.studies._likert import Dimension, RatingItem
from xaimetrics.studies._simulatability import SampleSet, StudyArm
from xaimetrics.studies._views import explanation_view


@pytest.fixture(scope="module")
def grid():
    return study_grid(
        prompt_types=("NE1", "NE2-a", "E1", "E2-a", "E3", "U1"),
        seeds=(0, 1),
        methods=("NMF", "PCA", "NoExplanation", "SurrogateWords"),
    )


@pytest.fixture(scope="module")
def study(grid):
    return simulatability_study_from_grid(grid, PROVIDERS)


def test_every_arm_is_the_prompt_the_benchmark_sends_to_the_llm(grid, study, tmp_path):
    loaded = load_study(save_study(study, tmp_path / "study.json"))
    artefacts = Artefacts(grid.artefact_config(), PROVIDERS, None)
    settings = grid.settings()
    assert len(settings) == len(study.arms) == 2 * (2 + 3 * 4)
    for setting in settings:
        ((_, expected),) = build_group_prompts(artefacts, [setting], {})
        (arm,) = [
            a
            for a in loaded.arms
            if (a.method, a.label, a.seed) == (setting.method, setting.label, setting.seed)
        ]
        assert arm.setting() == {k: setting.params()[k] for k in arm.setting()}
        prompt = loaded.prompt(arm)
        assert prompt.messages == expected.messages, arm.id
        assert prompt.references == expected.references and prompt.sample_ids == expected.sample_ids


def test_people_see_the_concepts_and_signs_the_llm_sees(study):
    for arm in study.arms:
        prompt = study.prompt(arm)
        view = explanation_view(study, arm)
        if not prompt.setting.kind.content.global_explanations:
            assert view["classes"] == []
            continue
        assert sorted(b["concept"] for b in view["concepts"]) == sorted(prompt.concept_ids)
        system = prompt.messages[0].content
        for shown_class in view["classes"]:
            line = next(x for x in system.splitlines() if x.startswith(shown_class["name"] + ": "))
            expected = {f"'concept_{b['concept']}': '{b['sign']}'" for b in shown_class["badges"]}
            assert expected == {e.strip() for e in line.split(": ", 1)[1].split(", ")} - {"none"}
        if prompt.setting.kind.content.lp_local:
            for sample in view["lp"]:
                line = next(
                    x
                    for x in system.splitlines()
                    if x.startswith(f"Concepts contributions for Sample_{sample['id']}:")
                )
                assert {f"'concept_{b['concept']}': '{b['sign']}'" for b in sample["badges"]} == (
                    {e.strip() for e in line.split(": ", 1)[1].split(", ")} - {"none"}
                )


def test_bundles_round_trip_and_are_bound_by_digest(study, tmp_path):
    path = save_study(study, tmp_path / "s.json")
    loaded = load_study(path)
    assert loaded.to_dict() == study.to_dict() and study_digest(loaded) == study_digest(study)
    data = json.loads(path.read_text())
    data["samples"][0]["ep"][0]["prediction"] = (data["samples"][0]["ep"][0]["prediction"] + 1) % 3
    path.write_text(json.dumps(data))
    assert study_digest(load_study(path)) != study_digest(study)
    for broken, message in (({"format": "other"}, "study bundle"), ({**data, "version": 9}, "version 1"),
                            ({**data, "kind": "poll"}, "of kind"), ({k: v for k, v in data.items() if k != "arms"}, "complete")):  # fmt: skip
        path.write_text(json.dumps(broken))
        with pytest.raises(InvalidParameterError, match=message):
            load_study(path)


def test_invalid_studies_are_refused_with_the_argument_named():
    samples = SampleSet.from_texts(0, ["a"], [0], ["b"], [1])
    with pytest.raises(InvalidParameterError, match=r"'arms'.*baseline prompt types"):
        StudyArm("NMF", "NE2", False, 0)
    with pytest.raises(InvalidParameterError, match="'arms_per_participant'"):
        SimulatabilityStudy(
            ["x", "y"], [samples], [], [StudyArm("NoExplanation", "NE2", False, 0)], arms_per_participant=2
        )
    with pytest.raises(InvalidParameterError, match=r"'explanations'.*missing"):
        SimulatabilityStudy(["x", "y"], [samples], [], [StudyArm("PCA", "E2", False, 0)])
    with pytest.raises(InvalidParameterError, match="'ep_predictions'"):
        SimulatabilityStudy(["x", "y"], [SampleSet.from_texts(0, ["a"], [0], ["b"], [5])], [],
                            [StudyArm("NoExplanation", "NE1", False, 0)])  # fmt: skip
    with pytest.raises(InvalidParameterError, match=r"'items'.*2 finite values"):
        LikertStudy([Dimension("a", "b"), Dimension("c", "d")], [RatingItem("0", "t", (1.0,))])
    with pytest.raises(InvalidParameterError, match="'question'"):
        LikertStudy([Dimension("a", "b")], [RatingItem("0", "t", (1.0,))], question="How good?")


def test_likert_studies_from_concepts_and_from_the_grid(grid):
    study = likert_study_from_grid(grid, PROVIDERS, method="NMF", n_examples=9, concept_ids=[0, 2])
    assert len(study.items) == 9 and [d.name for d in study.dimensions] == ["Concept 0", "Concept 2"]
    assert all(d.property.startswith("the theme of the words") for d in study.dimensions)
    _, pool = Artefacts(grid.artefact_config(), PROVIDERS, None).data("toy")
    labels = [pool.labels[int(item.id)] for item in study.items]
    assert sorted(np.bincount(labels).tolist()) == [3, 3, 3]  # every class represented
    values = np.array([[0.1, 2.0], [0.5, -1.0], [0.9, 0.0]])
    small = likert_study_from_concepts(
        ["x", "y", "z"], values, {0: {"label": "tone"}, 1: ["dull", "slow"]}, n_examples=3
    )
    assert [d.property for d in small.dimensions] == ["tone", "the theme of the words “dull, slow”"]
    assert (
        small.value_label(small.items[0], 1)
        == "2.00 (very high: 100 % of the largest magnitude, toward dull, slow)"
    )
    with pytest.raises(InvalidParameterError, match="'n_examples'"):
        likert_study_from_concepts(["x"], [[1.0]], {0: ["a"]}, n_examples=2)
