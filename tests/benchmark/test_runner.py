"""The grid runner end to end: real HTTP (fake OpenAI server), method-dependent accuracy, resume, report."""

from __future__ import annotations

import logging
import re

import numpy as np
import pandas as pd
import pytest
from toy_grid import PROVIDER_KWARGS, ToyTopicModel, toy_grid

from xaimetrics.benchmark import Providers, ResultsStore, rank_methods, ranking_frame, run_grid, write_report
from xaimetrics.benchmark._analysis import RANKING_KEYS, overall_statistics
from xaimetrics.benchmark._ranking import pivot_scores

PROVIDERS = Providers(**PROVIDER_KWARGS)
_LINE = re.compile(r"^Sample_(\d+): (.*)$", re.MULTILINE)


def toy_perfect_responder(messages):
    """Reads the EP samples of the user turn and answers the toy model's predictions (real or anonymised)."""
    user = messages[-1]["content"]
    anonymized = "Class_0" in messages[0]["content"]
    model, lines = ToyTopicModel(), []
    for sample_id, text in _LINE.findall(user):
        predicted = int(model.predict([text])[0])
        lines.append(
            f"Sample_{sample_id}: {f'Class_{predicted}' if anonymized else model.class_names[predicted]}"
        )
    return "\n".join(lines)


def test_fake_http_server_perfect_answers_give_all_ones_and_tied_ranking(tmp_path, fake_openai_server):
    server = fake_openai_server(toy_perfect_responder)
    grid = toy_grid(
        simulators=("openai:fake-model",), base_url=server.base_url, seeds=(0, 1),
        prompt_types=("NE1-a", "E1-a", "NE2", "E2", "E3-a", "U1"),
    )  # fmt: skip
    summary = run_grid(grid, tmp_path / "r.sqlite", providers=PROVIDERS, progress=False)
    frame = ResultsStore(tmp_path / "r.sqlite").to_frame()
    expected = len(grid.settings())
    assert summary.completed == expected == len(frame) == server.chat_request_count
    assert summary.failed == 0
    assert (frame["score"] == 1.0).all()
    assert (frame["n_parsed"] == frame["n_samples"]).all()
    ranking = rank_methods(pivot_scores(ranking_frame(frame), setting=list(RANKING_KEYS)))
    assert set(ranking["rank"]) == {1}
    assert set(ranking.index) == {"NMF", "PCA", "ICA", "NoExplanation"}
    assert server.max_in_flight <= grid.concurrency
    # the payload keeps the prompt and the answer
    key = frame.loc[frame["prompt_type"] == "E3", "key"].iloc[0]
    payload = ResultsStore(tmp_path / "r.sqlite").payload(key)
    assert payload["result"]["messages"][0]["role"] == "system"
    assert payload["result"]["raw_answer"].startswith("Sample_")
    assert payload["setting"]["anonymized"] is True


def test_method_dependent_accuracy_gives_the_expected_ranking(tmp_path):
    grid = toy_grid()
    summary = run_grid(
        grid, tmp_path / "r.sqlite", providers=PROVIDERS, artefact_dir=tmp_path / "a", progress=False
    )
    assert summary.completed == len(grid.settings())
    frame = ResultsStore(tmp_path / "r.sqlite").to_frame()
    # the run's usage is the sum of the results' usage records (the oracle counts words as tokens)
    assert summary.usage.calls == summary.calls == len(frame)
    assert summary.prompt_tokens == frame["prompt_tokens"].sum() > 0
    assert summary.completion_tokens == frame["completion_tokens"].sum() > 0
    long = ranking_frame(frame)
    # baselines spread: NE1 → E1, NE2 → E2 and E3; U1 never ranked
    assert set(long["prompt_type"]) == {"E1", "E2", "E3"}
    assert (long["method"] == "NoExplanation").sum() == 3 * 3
    ranking = rank_methods(pivot_scores(long, setting=list(RANKING_KEYS)))
    assert list(ranking.index) == ["NMF", "ICA", "PCA", "NoExplanation"]
    assert list(ranking["rank"]) == [1, 2, 3, 4]
    wins, differences = overall_statistics(long)
    assert wins.loc["NMF", "NoExplanation"] == 100.0 and wins.loc["NoExplanation", "NMF"] == 0.0
    # the oracle's accuracy: BASE[m] + 0.1·((seed + len(m)) mod 2), rounded to 9 samples
    n = 9

    def acc(method, seed):
        base = {"NMF": 0.8, "ICA": 0.6, "PCA": 0.4, "NoExplanation": 0.2}[method]
        return round((base + 0.1 * ((seed + len(method)) % 2)) * n) / n

    # the statistics run on seeds (the three prompt types of a seed share its samples): one difference per seed
    nmf = [acc("NMF", s) for s in (0, 1, 2)]
    pca = [acc("PCA", s) for s in (0, 1, 2)]
    assert differences.mean.loc["NMF", "PCA"] == pytest.approx(np.mean(np.subtract(nmf, pca)))
    from xaimetrics.stats import sign_flip_test

    assert differences.pvalue.loc["NMF", "PCA"] == pytest.approx(sign_flip_test(np.subtract(nmf, pca)))
    # U1 is stored as an upper bound
    u1 = frame[frame["prompt_type"] == "U1"]
    assert len(u1) == 3 * 3 and (u1["is_upper_bound"] == 1).all()


def test_rerun_skips_everything_and_artefacts_are_reused(tmp_path, caplog):
    grid = toy_grid(seeds=(0,), methods=("NMF", "NoExplanation"))
    first = run_grid(
        grid, tmp_path / "r.sqlite", providers=PROVIDERS, artefact_dir=tmp_path / "a", progress=False
    )
    assert first.completed > 0
    saved = sorted(p.name.split("-")[0] for p in (tmp_path / "a").iterdir())
    # fits are kept in memory only (a results folder never holds pickles); prompts are saved as JSON
    assert "activations" in saved and "prompts" in saved and "words" in saved and "fit" not in saved
    with caplog.at_level(logging.INFO, logger="xaimetrics.benchmark"):
        again = run_grid(
            grid, tmp_path / "r.sqlite", providers=PROVIDERS, artefact_dir=tmp_path / "a", progress=False
        )
    assert again.completed == 0 and again.skipped == first.completed and again.calls == 0
    assert (
        f"{first.completed} of {first.completed} evaluation settings already stored: skipped" in caplog.text
    )
    assert len(ResultsStore(tmp_path / "r.sqlite")) == first.completed


def test_validation_phase_chooses_the_number_of_concepts(tmp_path):
    grid = toy_grid(methods=("PCA", "NoExplanation"), n_concepts={"PCA": [2, 3]}, seeds=(0,), validation_seeds=(5, 6),
                    prompt_types=("NE2", "E2"))  # fmt: skip
    summary = run_grid(grid, tmp_path / "r.sqlite", providers=PROVIDERS, progress=False)
    frame = ResultsStore(tmp_path / "r.sqlite").to_frame()
    validation = frame[frame["phase"] == "validation"]
    assert sorted(validation["n_concepts"].unique()) == [2, 3] and set(validation["seed"]) == {5, 6}
    # the oracle scores both candidates equally: the tie goes to the smallest
    assert summary.chosen_n_concepts == {"toy/toy/PCA": 2}
    evaluation = frame[(frame["phase"] == "evaluation") & (frame["method"] == "PCA")]
    assert set(evaluation["n_concepts"]) == {2}
    assert set(ranking_frame(frame)["seed"]) == {0}


def test_failed_calls_are_not_stored_and_are_retried(tmp_path, fake_openai_server):
    from fake_openai_server import Fault

    server = fake_openai_server(toy_perfect_responder, faults=[Fault.server_error(400)] * 2)
    grid = toy_grid(simulators=("openai:fake-model",), base_url=server.base_url, seeds=(0,),
                    methods=("PCA", "NoExplanation"), prompt_types=("NE2", "E2"), concurrency=1)  # fmt: skip
    first = run_grid(grid, tmp_path / "r.sqlite", providers=PROVIDERS, progress=False)
    assert first.failed == 2 and first.completed == len(grid.settings()) - 2
    assert len(ResultsStore(tmp_path / "r.sqlite")) == first.completed
    second = run_grid(grid, tmp_path / "r.sqlite", providers=PROVIDERS, progress=False)
    assert second.completed == 2 and second.failed == 0


def test_report_files_contain_the_tables(tmp_path):
    grid = toy_grid(seeds=(0, 1))
    summary = run_grid(grid, tmp_path / "r.sqlite", providers=PROVIDERS, progress=False)
    frame = ResultsStore(tmp_path / "r.sqlite").to_frame()
    metrics = pd.DataFrame({"l0": [1.0, 2.0, 3.0], "logits_kl": [0.3, 0.1, 0.2]}, index=["NMF", "ICA", "PCA"])
    paths = write_report(frame, tmp_path / "report", grid=grid.to_dict(), run=summary.as_dict(),
                         concept_metrics=metrics)  # fmt: skip
    for name in ("report_html", "report_md", "wins", "differences", "distributions", "spearman"):
        assert paths[name].is_file() and paths[name].stat().st_size > 0
    md = paths["report_md"].read_text()
    assert "| method | rank | win_share | mean_score | n_settings |" in md
    assert "| NMF | 1 |" in md and "| NoExplanation | 4 |" in md
    assert "### prompt_type = E3" in md and "parse_rate" in md and "win_matrix.png" in md
    html = paths["report_html"].read_text()
    assert "<table" in html and "NoExplanation" in html and 'src="differences.png"' in html
    assert "U1" in md  # the upper bound is shown among prompt types, not ranked


def test_llm_labels_interpretation_runs_beside_top_words(tmp_path):
    grid = toy_grid(methods=("NMF", "NoExplanation"), interpretations=("top_words", "llm_labels"), seeds=(0,),
                    prompt_types=("NE2", "E2"))  # fmt: skip
    run_grid(grid, tmp_path / "r.sqlite", providers=PROVIDERS, progress=False)
    store = ResultsStore(tmp_path / "r.sqlite")
    frame = store.to_frame()
    assert sorted(frame["interpretation"]) == ["", "llm_labels", "top_words"]
    key = frame.loc[frame["interpretation"] == "llm_labels", "key"].iloc[0]
    system = store.payload(key)["result"]["messages"][0]["content"]
    assert any(label in system for label in ("diplomacy", "football", "computers"))
    long = ranking_frame(frame)
    assert sorted(long.loc[long["method"] == "NoExplanation", "interpretation"]) == [
        "llm_labels",
        "top_words",
    ]


def test_a_retrained_model_never_reads_stale_artefacts(tmp_path):
    from xaimetrics.benchmark import Artefacts, ConceptFit

    def trained(created):
        def factory(dataset):
            model = ToyTopicModel()
            model.metadata = {"created": created}
            return model

        return factory

    grid = toy_grid(seeds=(0,), methods=("PCA", "NoExplanation"))
    names = []
    for created in ("monday", "tuesday", "monday"):
        providers = Providers(datasets=PROVIDER_KWARGS["datasets"], models={"toy": trained(created)})
        artefacts = Artefacts(grid.artefact_config(), providers, tmp_path)
        artefacts.extractor(ConceptFit("toy", "toy", "PCA", 3, 0))
        names.append(sorted(p.name for p in tmp_path.iterdir()))
    assert len(names[1]) == 2 * len(names[0])  # new activations and fit files for the retrained model
    assert names[2] == names[1]  # the first model's files are found again


@pytest.mark.parametrize(
    "template",
    [
        "http://user:{s}@127.0.0.1:{port}/v1",
        "http://{s}@127.0.0.1:{port}/v1",
        "http://{s}:pw@127.0.0.1:{port}/v1/",
    ],
)
def test_credentials_in_base_url_reach_neither_the_store_nor_the_report(
    tmp_path, fake_openai_server, template
):
    """Issue #11, class 10: a URL credential is used for the calls but never stored or printed."""
    secret = "sk-url-7f3a9c21e4"
    server = fake_openai_server(toy_perfect_responder)
    base_url = template.format(s=secret, port=server.port)
    grid = toy_grid(simulators=("openai:fake-model",), base_url=base_url, seeds=(0,),
                    methods=("PCA", "ICA", "NoExplanation"), prompt_types=("NE2", "E2"))  # fmt: skip
    summary = run_grid(grid, tmp_path / "r.sqlite", providers=PROVIDERS, progress=False,
                       response_cache=tmp_path / "cache.sqlite")  # fmt: skip
    assert summary.failed == 0 and summary.completed == len(grid.settings())
    with ResultsStore(tmp_path / "r.sqlite") as store:
        frame, stored_grid = store.to_frame(), store.get_meta("grid")
    assert stored_grid["base_url"] == f"http://127.0.0.1:{server.port}/v1"
    paths = write_report(frame, tmp_path / "report", grid=stored_grid, run=summary.as_dict())
    files = [*tmp_path.glob("*.sqlite*"), paths["report_md"], paths["report_html"]]
    for path in files:
        assert secret.encode() not in path.read_bytes(), path
    assert secret not in repr(grid) and secret not in str(grid.to_dict())


def test_a_groups_stored_prompts_are_the_built_ones(tmp_path):
    from xaimetrics.benchmark import Artefacts
    from xaimetrics.benchmark._group import build_group_prompts

    grid = toy_grid(seeds=(0,), methods=("PCA",), prompt_types=("E2",))
    artefacts = Artefacts(grid.artefact_config(), PROVIDERS, tmp_path)
    settings = grid.settings()
    built = build_group_prompts(artefacts, settings, {})
    again = Artefacts(grid.artefact_config(), PROVIDERS, tmp_path).stored_prompts(settings)
    assert again is not None and [p.text for _, p in again] == [p.text for _, p in built]


#: every fault the client or the simulator must absorb: rate limits, 5xx, dropped connections, bodies that are not
#: JSON or not a completion (each followed by answered requests, so that no call runs out of retries)
FAULT_SUITE = (
    "Fault.rate_limit(0.01)", "Fault.server_error(503, retry_after=0.01)", "Fault.server_error(500)", "Fault.drop()",
    "Fault.garbage()", "Fault.completion(choices='oops')", "Fault.completion(content=None)",
    "Fault.server_error(409, retry_after=0.01)", "Fault.json([1, 2])",
)  # fmt: skip


@pytest.mark.parametrize("concurrency", [1, 3])
def test_injected_faults_lose_nothing_and_duplicate_nothing(tmp_path, fake_openai_server, concurrency):
    from fake_openai_server import Fault

    faults = [eval(text, {"Fault": Fault}) for text in FAULT_SUITE]
    server = fake_openai_server(toy_perfect_responder)
    for fault in faults:
        server.inject(fault, *[None] * max(1, concurrency - 1))
    grid = toy_grid(simulators=("openai:fake-model",), base_url=server.base_url, seeds=(0, 1, 2),
                    prompt_types=("NE2", "E2", "E3"), concurrency=concurrency)  # fmt: skip
    summary = run_grid(grid, tmp_path / "r.sqlite", providers=PROVIDERS, progress=False)
    frame = ResultsStore(tmp_path / "r.sqlite").to_frame()
    total = len(grid.settings())
    assert server.pending_faults == 0  # every fault was served
    assert summary.failed == 0 and summary.completed == total
    assert len(frame) == total and not frame["key"].duplicated().any()  # 0 lost, 0 stored twice
    assert server.completion_count == total  # no answer paid for twice
    assert server.chat_request_count == total + len(faults)  # one retry per fault, nothing more
    assert (frame["score"] == 1.0).all() and summary.attempts == total + len(faults)
