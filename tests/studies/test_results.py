"""Scoring people like the LLM (eq. 5), exporting them to the results store, and the agreement report."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from study_helpers import study_grid
from toy_grid import PROVIDERS, MethodOracle

from xaimetrics.benchmark import ResultsStore, ranking_frame, rankings_by, run_grid
from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.representation import krippendorff_alpha
from xaimetrics.simulators import ScriptedSimulator
from xaimetrics.studies import (
    StudyStore,
    agreement_report,
    export_results,
    human_results,
    simulatability_study_from_grid,
    simulate_study,
)
from xaimetrics.studies._agreement import agreement_section

HUMAN_RIGHT = {"NMF": 5, "PCA": 4, "NoExplanation": 1}  # of 6 EP answers, the model's prediction
LLM_RIGHT = {"NMF": 6, "PCA": 2, "NoExplanation": 3}


@pytest.fixture(scope="module")
def study():
    return simulatability_study_from_grid(study_grid(), PROVIDERS, arms_per_participant=3)


def _answer(study, arm, position: int, sample, right: dict[str, int], shift: int) -> int:
    return sample.prediction if position < right[arm.method] else (sample.prediction + shift) % 3


def _fill(study, store, n: int) -> dict[str, dict[str, dict[str, int]]]:
    """``n`` participants answer every screen; return ``{label: {arm: {sample: class}}}``."""
    given: dict[str, dict[str, dict[str, int]]] = {}
    for _ in range(n):
        participant = store.invite().participant
        for screen in store.screens(participant):
            if screen.kind != "question":
                store.record(participant, screen.index, {"": None})
                continue
            arm = study.arm(screen.arm)
            sample = next(s for s in study.sample_set(arm.seed).ep if s.id == screen.sample)
            value = _answer(study, arm, screen.number - 1, sample, HUMAN_RIGHT, 1)
            store.record(participant, screen.index, {"": value})
            given.setdefault(participant.label, {}).setdefault(arm.id, {})[sample.id] = value
    return given


def test_people_are_scored_with_eq5_and_exported_once_per_arm(study, tmp_path):
    store = StudyStore(tmp_path / "answers.sqlite", study)
    given = _fill(study, store, 4)  # the 4th participant repeats the 1st one's arms
    partial = store.invite().participant
    store.record(partial, 0, {"": None})
    results = human_results(study, store)
    assert len(results) == 12 and {r.participant for r in results} == {"P1", "P2", "P3", "P4"}
    for human in results:
        arm = study.arm(human.arm)
        assert human.result.score == pytest.approx(HUMAN_RIGHT[arm.method] / 6)
        assert human.result.answers == {
            s: study.class_names[v] for s, v in given[human.participant][human.arm].items()
        }
    incomplete = human_results(study, store, complete_only=False)
    assert (
        next(r for r in incomplete if r.participant == "P5").result.score == 0.0
    )  # unanswered count as wrong

    path = tmp_path / "results.sqlite"
    assert export_results(study, store, path) == 9
    assert export_results(study, store, path) == 0  # the same answers again: nothing new
    rows = ResultsStore(path)
    frame = rows.to_frame()
    assert set(frame["simulator"]) == {"human"} and len(frame) == 9
    assert frame["score"].tolist() == pytest.approx([HUMAN_RIGHT[m] / 6 for m in frame["method"]])
    shared = frame[frame["method"] == "NMF"].sort_values("seed")
    assert shared["n_samples"].tolist() == [6, 12, 6]  # the Latin square's 4th row: NMF on seed 1, as P3
    payload = rows.payload(shared["key"].iloc[1])
    assert [p["participant"] for p in payload["participants"]] == ["P3", "P4"]
    rankings = rankings_by(ranking_frame(frame), ["simulator"])
    assert list(rankings[("human",)].index) == ["NMF", "PCA", "NoExplanation"]
    rows.close()
    for screen in store.screens(
        partial
    ):  # a 5th person finishes: re-exporting into the same store is refused
        store.record(partial, screen.index, {"": 0 if screen.kind == "question" else None})
    with pytest.raises(InvalidParameterError, match="new results store"):
        export_results(study, store, path)


def _scripted_llm(study) -> ScriptedSimulator:
    answers = {}
    for arm in study.arms:
        prompt = study.prompt(arm)
        lines = [
            f"Sample_{s.id}: {prompt.shown_classes[_answer(study, arm, i, s, LLM_RIGHT, 2)]}"
            for i, s in enumerate(study.sample_set(arm.seed).ep)
        ]
        answers[prompt.messages[0].content + prompt.messages[1].content] = "\n".join(lines)
    return ScriptedSimulator(
        lambda messages: answers[messages[0].content + messages[1].content], name="scripted"
    )


def test_the_agreement_report_compares_people_with_the_llm(study, tmp_path):
    store = StudyStore(tmp_path / "answers.sqlite", study)
    given = _fill(study, store, 6)
    path = tmp_path / "results.sqlite"
    export_results(study, store, path)
    assert simulate_study(study, _scripted_llm(study), path, name="scripted") == {
        "written": 9,
        "skipped": 0,
        "failed": 0,
    }
    assert simulate_study(study, _scripted_llm(study), path, name="scripted")["skipped"] == 9
    report = agreement_report(path)
    scores = report.scores.set_index("method")
    for method in HUMAN_RIGHT:
        assert scores.loc[method, "human"] == pytest.approx(HUMAN_RIGHT[method] / 6)
        assert scores.loc[method, "llm"] == pytest.approx(LLM_RIGHT[method] / 6)
    assert scores["human_rank"].to_dict() == {"NMF": 1, "PCA": 2, "NoExplanation": 3}
    assert scores["llm_rank"].to_dict() == {"NMF": 1, "PCA": 3, "NoExplanation": 2}
    row = report.correlations.loc["scripted"]
    assert (
        row["spearman"] == pytest.approx(0.5)
        and row["kendall"] == pytest.approx(1 / 3)
        and row["n_methods"] == 3
    )
    assert 0.0 < row["spearman_p"] < 1.0 and 0.0 < row["kendall_p"] <= 1.0
    # per-sample agreement, recomputed from the answers
    humans, llms, truth = [], [], []
    for arms in given.values():
        for arm_id, answers in arms.items():
            arm = study.arm(arm_id)
            for i, sample in enumerate(study.sample_set(arm.seed).ep):
                humans.append(answers[sample.id])
                llms.append(_answer(study, arm, i, sample, LLM_RIGHT, 2))
                truth.append(sample.prediction)
    humans, llms, truth = map(np.array, (humans, llms, truth))
    sample_row = report.samples.loc["scripted"]
    assert sample_row["pairs"] == len(humans) == 6 * 18
    assert sample_row["agreement"] == pytest.approx((humans == llms).mean())
    assert sample_row["kappa"] == pytest.approx(cohen_kappa_score(humans, llms))
    assert sample_row["human_accuracy"] == pytest.approx((humans == truth).mean())
    # α between people: 6 participants, two per arm (the Latin square repeats every 3 participants)
    assert report.alpha_same_arm.n_coders == 6 and not np.isnan(report.alpha_same_arm.alpha)
    units: dict[tuple[str, str], list[float]] = {}
    labels = sorted(given)
    for label, arms in given.items():
        for arm_id, answers in arms.items():
            for sample_id, value in answers.items():
                units.setdefault((arm_id, sample_id), [np.nan] * 6)[labels.index(label)] = value
    expected = krippendorff_alpha(np.array(list(units.values())), orientation="units_coders", level="nominal")
    assert report.alpha_same_arm.alpha == pytest.approx(expected.alpha)
    assert report.copeland.loc["NMF", "human"] == 1
    html, markdown = report.to_html(), report.to_markdown()
    assert "<h2>Does the LLM rank explanations like people?</h2>" in html and "Spearman" in markdown
    paths = report.save(tmp_path / "agreement")
    assert {p.name for p in paths.values()} == {"agreement.md", "agreement.html", "agreement.json"}
    assert agreement_section(path)["md"].startswith("## Does the LLM rank explanations like people?")
    # the benchmark report reads the human rows like any simulator and adds the agreement section
    from xaimetrics.cli import main

    assert main(["benchmark", "report", "--output", str(tmp_path)]) == 0
    markdown = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "## Does the LLM rank explanations like people?" in markdown
    assert markdown.index("like people?") < markdown.index("## Totals")
    assert "<h2>Does the LLM rank explanations like people?</h2>" in (tmp_path / "report.html").read_text()


def test_llm_rows_of_the_study_are_the_benchmarks_rows(study, tmp_path):
    path = tmp_path / "results.sqlite"
    run_grid(study_grid(), path, providers=PROVIDERS, progress=False)
    # the oracle asked through the study gets the same setting keys: everything is already stored
    counts = simulate_study(study, MethodOracle(), path, name="oracle")
    assert counts == {"written": 0, "skipped": 9, "failed": 0}


def test_reports_without_comparable_rows_say_why(study, tmp_path):
    path = tmp_path / "results.sqlite"
    run_grid(study_grid(seeds=(0,)), path, providers=PROVIDERS, progress=False)
    with pytest.raises(InvalidParameterError, match="rows of simulator 'human'"):
        agreement_report(path)
    section = agreement_section(path)
    assert "No human-vs-LLM comparison" in section["md"] and "<section>" in section["html"]


def test_the_report_compares_only_rows_shown_the_same_samples(study, tmp_path):
    """The reproduced case: people on a study of 3 + 3 samples, the LLM on a grid of 6 + 6 (same setting names).
    Matching on names alone compared 0 shared samples and printed agreement 0; now it refuses, with counts."""
    short = simulatability_study_from_grid(study_grid(n_lp=3, n_ep=3), PROVIDERS, arms_per_participant=3)
    store = StudyStore(tmp_path / "answers.sqlite", short)
    _fill(short, store, 3)
    path = tmp_path / "results.sqlite"
    assert export_results(short, store, path) == 9
    run_grid(study_grid(), path, providers=PROVIDERS, progress=False)  # the grid's own 6 + 6
    with pytest.raises(
        InvalidParameterError, match=r"oracle: 9 settings of the same names, 0 on the same samples"
    ):
        agreement_report(path)
    assert "STUDY.grid.toml" in agreement_section(path)["md"]
    # the LLM asked the study's own prompts: every human setting compared, whatever else the store holds
    assert simulate_study(short, MethodOracle(), path, name="oracle-study")["written"] == 9
    report = agreement_report(path)
    assert report.simulators == ("oracle-study",)
    assert report.overlap.loc["oracle"].to_dict() == {
        "human_settings": 9, "same_names": 9, "same_samples": 0, "other_samples": 9,
    }  # fmt: skip
    assert report.overlap.loc["oracle-study", "same_samples"] == 9
    assert report.samples.loc["oracle-study", "pairs"] == 3 * 3 * 3  # people × arms × EP samples
    assert any("oracle: 9 of the 9 settings" in note for note in report.notes)
    assert "Settings compared" in report.to_markdown()


def test_a_partial_overlap_compares_the_shared_samples_and_counts_the_rest(study, tmp_path):
    store = StudyStore(tmp_path / "answers.sqlite", study)
    _fill(study, store, 3)
    path = tmp_path / "results.sqlite"
    export_results(study, store, path)
    run_grid(study_grid(seeds=(0,)), path, providers=PROVIDERS, progress=False)  # the study's samples
    run_grid(study_grid(seeds=(1, 2), n_lp=3, n_ep=3), path, providers=PROVIDERS, progress=False)  # others
    report = agreement_report(path)
    assert report.overlap.loc["oracle"].to_dict() == {
        "human_settings": 9, "same_names": 9, "same_samples": 3, "other_samples": 6,
    }  # fmt: skip
    assert report.scores["n_settings"].sum() == 3 and set(report.scores["method"]) == set(HUMAN_RIGHT)
    assert report.samples.loc["oracle", "pairs"] == 3 * 6  # the 3 people on seed 0's arm: 6 EP samples each
    rows = ResultsStore(path).to_frame()
    seed0 = rows[(rows["simulator"] == "oracle") & (rows["seed"] == 0) & (rows["phase"] == "evaluation")]
    assert (
        len(seed0) == 3
    )  # one person per arm of seed 0: the LLM's accuracy over the pairs is its rows' mean
    assert report.samples.loc["oracle", "llm_accuracy"] == pytest.approx(seed0["score"].mean())
    assert "oracle: 6 of the 9 settings named like human ones were shown other samples" in " ".join(
        report.notes
    )
