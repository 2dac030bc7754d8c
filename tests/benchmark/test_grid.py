"""Grid specification: validation errors name the bad key and the valid values; settings enumeration."""

from __future__ import annotations

import pytest

from xaimetrics.benchmark import BASELINE_METHOD, Grid, load_grid
from xaimetrics.benchmark._grid import Setting, ranking_prompt
from xaimetrics.consim import PromptSetting
from xaimetrics.exceptions import InvalidParameterError


def small(**changes) -> Grid:
    options = {"methods": ("NMF", "PCA", BASELINE_METHOD), "prompt_types": ("NE1", "E1", "NE2-a", "E2-a", "U1"),
               "seeds": (0, 1), "simulators": ("perfect",)}  # fmt: skip
    options.update(changes)
    return Grid(**options)


def test_settings_pair_baselines_with_noexplanation_only():
    grid = small()
    settings = grid.settings()
    baseline = [s for s in settings if s.method == BASELINE_METHOD]
    concept = [s for s in settings if s.method != BASELINE_METHOD]
    assert sorted({s.label for s in baseline}) == ["NE1", "NE2-a"]
    assert sorted({s.label for s in concept}) == ["E1", "E2-a", "U1"]
    # 2 seeds × (2 baselines + 2 methods × 3 explanation prompts)
    assert len(settings) == 2 * (2 + 2 * 3)
    assert all(s.n_concepts == 0 and s.interpretation == "" for s in baseline)
    assert len({s.key for s in settings}) == len(settings)


def test_setting_key_is_stable_and_distinguishes_fields():
    a = Setting("d", "m", "NMF", 20, "top_words", PromptSetting.parse("E2-a"), 0, "local")
    assert a.key == Setting("d", "m", "NMF", 20, "top_words", PromptSetting.parse("E2", True), 0, "local").key
    assert a.key != Setting("d", "m", "NMF", 20, "top_words", PromptSetting.parse("E2"), 0, "local").key
    assert a.label == "E2-a"


def test_setting_keys_are_those_of_earlier_stores():
    """The prompt setting is one field, but the key hashes its name and anonymisation as before (pinned)."""
    a = Setting("d", "m", "NMF", 20, "top_words", PromptSetting.parse("E2-a"), 0, "local")
    assert a.key == "211a03ee5edbee8b523af2ed6d92f3da"
    assert a.params() == {
        "dataset": "d", "model": "m", "method": "NMF", "n_concepts": 20, "interpretation": "top_words",
        "prompt_type": "E2", "anonymized": True, "seed": 0, "simulator": "local", "phase": "evaluation",
    }  # fmt: skip
    b = Setting(
        "d", "m", "NoExplanation", 0, "", PromptSetting.parse("NE1"), 3, "lexical", scoring="probability"
    )
    assert b.key == "9e1c99e1c55198863715bcd9942abf12" and b.params()["scoring"] == "probability"


def test_ranking_prompt_maps_baselines_to_their_explanations():
    assert ranking_prompt("NE1") == ("E1",)
    assert ranking_prompt("NE2") == ("E2", "E3")
    assert ranking_prompt("E3") == ("E3",)
    assert ranking_prompt("U1") == ()


@pytest.mark.parametrize(
    ("changes", "match"),
    [
        ({"methods": ("NMF", "LDA")}, r"'methods' parameter of Grid must be among 'NMF', 'SAE'.*Got LDA"),
        ({"prompt_types": ("E2", "E9")}, r"'prompt_types'.*NE1, E1, NE2, E2, E3, U1.*Got E9"),
        ({"simulators": ("gpt4",)}, r"'simulators'.*'local', 'openai:<model>', 'perfect'.*Got gpt4"),
        ({"datasets": ("mnist",)}, r"'datasets'.*\(bbc_news, imdb, rotten_tomatoes\).*Got mnist"),
        ({"models": ("minilm",)}, r"'models'.*'\+' \(non-negative\) variants when NMF is listed"),
        ({"interpretations": ("lime",)}, r"'interpretations'.*'top_words', 'llm_labels'"),
        (
            {"seeds": (0, 1000), "n_concepts": {"NMF": [5, 10]}},
            r"'validation_seeds'.*disjoint from 'seeds'.*\[1000\]",
        ),
        ({"n_concepts": {"NMF": [10, 10]}}, r"'n_concepts.NMF'.*without duplicates"),
        ({"n_concepts": {"SAE": 5}}, r"'n_concepts'.*keys among the listed concept methods"),
        ({"n_concepts": 0}, r"'n_concepts'.*an integer ≥ 1"),
        ({"n_lp": 0}, r"'n_lp'.*an integer ≥ 1"),
        ({"seeds": ()}, r"'seeds'.*non-empty"),
        ({"prompt_types": ("E1", "E2")}, r"baseline prompt type \(NE1 or NE2\) when 'NoExplanation'"),
        ({"prompt_types": ("NE1",)}, r"at least one explanation prompt type"),
        ({"balance": "loose"}, r"'balance'.*among 'strict', 'relaxed'"),
        ({"extractor_options": {"ICA": {}}}, r"'extractor_options'.*keys among"),
        ({"methods": ("PCA", "PCA")}, r"'methods'.*without duplicates"),
    ],
)
def test_invalid_grids_fail_naming_the_key(changes, match):
    with pytest.raises(InvalidParameterError, match=match):
        small(**changes)


def test_candidates_create_validation_settings_then_use_the_choice():
    grid = small(n_concepts={"NMF": [5, 10], "PCA": 4}, validation_seeds=(7, 8))
    validation = grid.settings(phase="validation")
    assert {s.n_concepts for s in validation} == {5, 10}
    assert {s.method for s in validation} == {"NMF"}
    assert {s.seed for s in validation} == {7, 8}
    assert all(s.prompt.name != "U1" and s.phase == "validation" for s in validation)
    evaluation = grid.settings(chosen={("rotten_tomatoes", "minilm+", "NMF"): 10})
    assert {s.n_concepts for s in evaluation if s.method == "NMF"} == {10}
    assert {s.n_concepts for s in evaluation if s.method == "PCA"} == {4}


def test_toml_round_trip_and_unknown_key(tmp_path):
    path = tmp_path / "grid.toml"
    path.write_text(
        'methods = ["NMF", "PCA", "NoExplanation"]\n'
        "n_concepts = { NMF = [10, 20], PCA = 5 }\n"
        'prompt_types = ["NE2-a", "E2-a", "E3-a"]\n'
        "seeds = [0, 1, 2]\n"
        'simulators = ["openai:gpt-4o-mini"]\n'
        'base_url = "http://127.0.0.1:8080/v1"\n'
        "concurrency = 8\n"
    )
    grid = load_grid(path)
    assert grid.candidates("NMF") == (10, 20) and grid.candidates("PCA") == (5,)
    assert grid.concurrency == 8 and grid.simulators == ("openai:gpt-4o-mini",)
    path.write_text('methods = ["PCA", "NoExplanation"]\nseed = [0]\n')
    with pytest.raises(InvalidParameterError, match=r"keys among datasets, models, methods.*\['seed'\]"):
        load_grid(path)
    path.write_text("methods = [")
    with pytest.raises(InvalidParameterError, match="is not valid TOML"):
        load_grid(path)
