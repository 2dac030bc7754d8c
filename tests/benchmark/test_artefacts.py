"""The artefact store (benchmark/_artefacts.py): concept artefacts keyed by one ConceptFit, computed once, and a
group's prompts built by the same functions as ConSim (consim.select_examples, build_prompts)."""

from __future__ import annotations

import numpy as np
from toy_grid import PROVIDERS, toy_grid

from xaimetrics.benchmark import Artefacts, ConceptFit
from xaimetrics.benchmark._group import build_group_prompts
from xaimetrics.consim import ConSim, Explanation, select_examples


def test_concept_artefacts_are_keyed_by_one_concept_fit() -> None:
    grid = toy_grid(
        seeds=(0, 1), methods=("PCA", "SurrogateWords", "NoExplanation"), prompt_types=("NE2", "E3")
    )
    artefacts = Artefacts(grid.artefact_config(), PROVIDERS, None)
    fit = ConceptFit("toy", "toy", "PCA", 3, 0)
    assert artefacts.extractor(fit) is artefacts.extractor(ConceptFit("toy", "toy", "PCA", 3, 0))
    assert artefacts.extractor(fit) is not artefacts.extractor(ConceptFit("toy", "toy", "PCA", 3, 1))
    assert np.shape(artefacts.global_importances(fit)) == (len(artefacts.data("toy")[1].class_names), 3)
    words = artefacts.interpretation(fit, "top_words")
    assert sorted(words) == [0, 1, 2] and artefacts.interpretation(fit, "top_words") is words
    for setting in grid.settings():
        explanation = artefacts.explanation(setting)
        if setting.method == "PCA":
            assert ConceptFit.of(setting) == ConceptFit("toy", "toy", "PCA", 3, setting.seed)
            assert explanation.extractor is artefacts.extractor(ConceptFit.of(setting))
        elif setting.method == "NoExplanation":
            assert explanation == Explanation()
        else:  # a control: its words and importances, for the seed's samples
            samples = artefacts.samples("toy", "toy", setting.seed)
            assert np.shape(explanation.lp_local_importances)[0] == samples.n_lp


def test_a_groups_prompts_are_those_of_the_consim_functions_and_class() -> None:
    grid = toy_grid(seeds=(1,), methods=("NMF",), prompt_types=("NE2", "E2", "E3", "U1"))
    artefacts = Artefacts(grid.artefact_config(), PROVIDERS, None)
    settings = grid.settings()
    built = build_group_prompts(artefacts, settings, {})
    _, pool = artefacts.data("toy")
    model = artefacts.model("toy", "toy")
    samples = select_examples(
        pool.texts, pool.labels, model.predict(pool.texts), grid.n_lp, grid.n_ep, seed=1,
        class_names=pool.class_names,
    )  # fmt: skip
    stored = artefacts.samples("toy", "toy", 1)
    assert (samples.lp_texts, samples.ep_texts) == (stored.lp_texts, stored.ep_texts)
    np.testing.assert_array_equal(samples.predictions, stored.predictions)
    fit = ConceptFit.of(settings[0])
    explanation = Explanation(
        extractor=artefacts.extractor(fit), interpretation=artefacts.interpretation(fit, "top_words"),
        activations=artefacts.activations("toy", "toy")["fit"],
    )  # fmt: skip
    consim = ConSim(model, class_names=pool.class_names, explanation=explanation)
    by_class = consim.build_prompts(samples, prompt_types=[s.label for s in settings])
    assert [p.text for _, p in built] == [p.text for p in by_class]


def test_keys_and_artefact_names_are_those_a_store_written_before_the_config_holds(tmp_path) -> None:
    """The artefact cache reads an ``ArtefactConfig``, not the grid: the row keys, the per-concept keys and the
    artefact file names are byte-identical to those written when it read the grid (pinned from that version), so
    a store written then resumes with nothing computed again."""
    import sqlite3

    from xaimetrics._digest import json_digest
    from xaimetrics.benchmark import ResultsStore, run_grid

    grid = toy_grid(
        methods=("NMF", "PCA", "SurrogateWords", "NoExplanation"), prompt_types=("NE2", "E2"), seeds=(0,),
        simulators=("lexical",), n_lp=6, n_ep=6, n_fit=100, balance="relaxed", max_sample_chars=300,
        extractor_options={"NMF": {"max_iter": 50}}, detection=("intruder",),
    )  # fmt: skip

    def run() -> tuple[int, int]:
        summary = run_grid(
            grid, tmp_path / "results.sqlite", providers=PROVIDERS, artefact_dir=tmp_path / "artefacts",
            progress=False,
        )  # fmt: skip
        return summary.completed, summary.concepts.completed

    assert run() == (4, 5)
    with ResultsStore(tmp_path / "results.sqlite", read_only=True) as store:
        keys = sorted(store.keys())
    with sqlite3.connect(tmp_path / "results.sqlite") as connection:
        concept_keys = sorted(row[0] for row in connection.execute("SELECT key FROM concept_results"))
    files = sorted(path.name for path in (tmp_path / "artefacts").iterdir())
    assert json_digest(keys, length=16) == "8085fe0534677439"
    assert json_digest(concept_keys, length=16) == "2584953b2149eaa2"
    assert files == [
        "activations-51de747288e17204.npz", "prompts-0928fd0528f8e412.json", "prompts-575665d08ebec7b5.json",
        "prompts-bf3eedeb441f1dca.json", "prompts-c25cbb163c43e452.json", "words-3e6b46690222b287.npz",
    ]  # fmt: skip
    assert run() == (0, 0)  # resumed: nothing computed again
