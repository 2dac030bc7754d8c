"""Per-concept scores in the grid (``Grid.detection``): planted concepts are legible to the word reader and their
randomised twins are not, a rerun asks nothing, a changed input recomputes, failures are never scores, and the
report shows the section."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from planted_grid import planted_grid, planted_providers

from xaimetrics.benchmark import ConceptRow, Grid, ResultsStore, run_grid
from xaimetrics.benchmark._concept_report import concept_frame, concept_sections, legibility_summary
from xaimetrics.detection import legibility_table
from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.simulators import SimulatorResponse


@pytest.fixture(scope="module")
def planted_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    folder = tmp_path_factory.mktemp("planted")
    store = folder / "results.sqlite"
    grid = planted_grid(randomized_twins=("all",))
    first = run_grid(grid, store, providers=planted_providers(), progress=False)
    again = run_grid(grid, store, providers=planted_providers(), progress=False)
    with ResultsStore(store, read_only=True) as results:
        frame = results.to_frame()
    return {"grid": grid, "store": store, "first": first, "again": again, "concepts": concept_frame(store),
            "results": frame}  # fmt: skip


def test_the_word_reader_finds_the_planted_concepts_legible_and_their_twins_not(planted_run: dict) -> None:
    concepts = planted_run["concepts"]
    first = planted_run["first"]
    assert first.failed == 0 and first.concepts.failed == 0
    # one row per concept (the 3 planted groups) × scorer × seed, for the method and its twin
    trained = concepts[concepts.method == "NoProjection"]
    assert len(trained) == 3 * 2 * 3 and set(trained.scorer) == {"detection", "intruder"}
    assert {w.split(", ")[0] in "goal match striker league cup chip laptop software internet broadband election "
            "minister parliament vote party" for w in trained.words}  # fmt: skip
    intruder = trained[trained.scorer == "intruder"]
    assert intruder.value.mean() >= 0.9 and (intruder.chance == 0.2).all() and (intruder.n == 10).all()
    assert (intruder.expected > intruder.chance).all()  # the word reader's P(intruder)
    # the legibility table over the stored rows: every planted concept legible after Holm, at every seed
    from xaimetrics.benchmark._concept_row import long_concept_rows

    table = legibility_table(long_concept_rows(intruder), groups=["seed"])
    assert len(table) == 9 and table.legible.all()
    twin = concepts[(concepts.method == "NoProjection@random-all") & (concepts.scorer == "intruder")]
    assert len(twin) == 9 and twin.value.mean() < 0.5
    summary = legibility_summary(concepts, planted_run["results"])
    line = summary[summary.scorer == "intruder"].iloc[0]
    assert line["method"] == "NoProjection" and line["legible"] == 1.0 and line["n_seeds"] == 3
    assert line["over_random"] > 0.4 and line["over_random_low"] > 0 and line["p_random"] == 0.125  # 1/2**3
    assert line["consim"] > line["consim_baseline"]  # the planted words also help the lexical ConSim reader


def test_a_rerun_asks_nothing_and_stores_nothing(planted_run: dict) -> None:
    first, again = planted_run["first"], planted_run["again"]
    assert first.concepts.completed == first.concepts.total > 0 and first.concepts.answers > 0
    assert again.concepts.completed == 0 and again.concepts.answers == 0
    assert again.concepts.skipped == first.concepts.total and again.completed == 0


def test_the_report_section_renders_beside_consim(planted_run: dict, tmp_path: Path) -> None:
    (section,) = concept_sections(planted_run["concepts"], planted_run["results"])
    assert section["md"].startswith("## Per-concept legibility") or "Per-concept legibility" in section["md"]
    assert "NoProjection" in section["md"] and "over_random" in section["md"] and "<table" in section["html"]
    assert concept_sections(pd.DataFrame()) == []
    # the report command reads the same store file
    import shutil

    from xaimetrics.cli import main

    shutil.copy(planted_run["store"], tmp_path / "results.sqlite")
    assert main(["benchmark", "report", "--output", str(tmp_path)]) == 0
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "Per-concept legibility" in report and "| intruder |" in report.replace("  ", " ")


def test_a_changed_input_recomputes_and_supersedes_the_old_rows(tmp_path: Path) -> None:
    store = tmp_path / "results.sqlite"
    grid = planted_grid(seeds=(0,), detection=("intruder",))
    first = run_grid(grid, store, providers=planted_providers(), progress=False)
    before = concept_frame(store)
    changed = run_grid(grid.replace(n_fit=200), store, providers=planted_providers(), progress=False)
    assert changed.concepts.completed == first.concepts.completed == 3 and changed.concepts.skipped == 0
    after = concept_frame(store)
    assert len(after) == 3 and set(after.key).isdisjoint(before.key)
    with ResultsStore(store, row_type=ConceptRow) as concepts:
        assert len(concepts) == 6 and concepts.superseded() == set(before.key)
    # back to the old inputs: the old rows are read again, nothing is asked
    back = run_grid(grid, store, providers=planted_providers(), progress=False)
    assert back.concepts.completed == 0 and set(concept_frame(store).key) == set(before.key)


class RaisingReader:
    """Raises on every call: ConSim's settings and the concepts fail, none is stored."""

    name = "raising"

    def generate(self, messages, *, answer_schema=None) -> SimulatorResponse:
        raise ConnectionError("no server")


def test_failed_reader_calls_are_counted_never_stored_and_asked_again(tmp_path: Path) -> None:
    from xaimetrics.benchmark import Providers

    providers = Providers(
        datasets={"planted": planted_providers().datasets["planted"]},
        models={"planted": planted_providers().models["planted"]},
        simulators={"raising": RaisingReader},
        progress=False,
    )
    grid = Grid(**{**planted_grid(seeds=(0,), detection=("detection",)).to_dict(), "simulators": ("raising",)},
                **providers.grid_extras())  # fmt: skip
    store = tmp_path / "results.sqlite"
    summary = run_grid(grid, store, providers=providers, progress=False)
    assert summary.concepts.failed == 3 and summary.concepts.completed == 0
    assert any("ConnectionError: no server" in e for e in summary.errors)
    assert len(concept_frame(store)) == 0
    assert run_grid(grid, store, providers=providers, progress=False).concepts.failed == 3  # asked again


def test_the_option_is_checked() -> None:
    with pytest.raises(
        InvalidParameterError, match=r"'detection' parameter of Grid must be among 'detection', "
    ):
        Grid(methods=("PCA",), prompt_types=("E1",), simulators=("lexical",), detection=("fuzzing",))
    with pytest.raises(
        InvalidParameterError, match=r"'detection' parameter of Grid must be empty when no concept"
    ):
        Grid(
            methods=("NoExplanation",),
            prompt_types=("NE1",),
            simulators=("lexical",),
            detection=("intruder",),
        )
    grid = Grid(methods=("PCA",), prompt_types=("E1",), simulators=("lexical", "perfect"), seeds=(0,),
                detection=("intruder", "embedding"))  # fmt: skip
    assert [(s.scorer, s.reader) for s in grid.concept_settings()] == [
        ("intruder", "lexical"),
        ("embedding", "minilm"),
    ]


def test_the_command_runs_a_grid_file_with_detection_and_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    from xaimetrics.cli import main

    grid = tmp_path / "grid.toml"
    grid.write_text(
        'datasets = ["planted"]\nmodels = ["planted"]\nmethods = ["NoProjection", "NoExplanation"]\n'
        'prompt_types = ["NE1", "E1"]\nseeds = [0]\nsimulators = ["lexical"]\nn_lp = 6\nn_ep = 6\nn_fit = 300\n'
        'detection = ["intruder"]\n',
        encoding="utf-8",
    )
    command = ["benchmark", "run", str(grid), "--output", str(tmp_path / "out"), "--providers",
               "planted_grid:PROVIDERS", "--no-progress", "--no-cache"]  # fmt: skip
    assert main(command) == 0
    assert (
        "Concepts: 3 scored, 0 already stored, 0 failed (not stored), 0 left out" in capsys.readouterr().out
    )
    assert main(command) == 0
    out = capsys.readouterr().out
    assert "Concepts: 0 scored, 3 already stored" in out and "(0 reader answers)" in out
    assert "Per-concept legibility" in (tmp_path / "out" / "report.md").read_text(encoding="utf-8")


class InterruptOnce:
    """The lexical readers, but Ctrl-C arrives during the 45th intruder prompt (the second concept: 40 prompts
    each, own and shuffled words) of the process's first run."""

    name = "interrupt-once"
    calls = 0

    def __init__(self) -> None:
        from xaimetrics.detection import WordOverlapReader
        from xaimetrics.simulators import LexicalSimulator

        self.consim, self.words = LexicalSimulator(), WordOverlapReader()

    def cache_identity(self) -> dict[str, object]:
        return {"simulator": "interrupt-once"}

    def generate(self, messages, *, answer_schema=None) -> SimulatorResponse:
        if "intruder" not in " ".join(m.content for m in messages):
            return self.consim.generate(messages, answer_schema=answer_schema)
        InterruptOnce.calls += 1
        if InterruptOnce.calls == 45:
            raise KeyboardInterrupt
        return self.words.generate(messages, answer_schema=answer_schema)


def test_ctrl_c_keeps_the_scored_concepts_and_a_rerun_scores_the_rest(tmp_path: Path) -> None:
    from xaimetrics.benchmark import Providers, RunInterrupted

    base = planted_providers()
    providers = Providers(datasets=base.datasets, models=base.models, simulators={"interrupt-once": InterruptOnce},
                          progress=False)  # fmt: skip
    grid = Grid(**{**planted_grid(seeds=(0,), detection=("intruder",)).to_dict(), "simulators": ("interrupt-once",)},
                **providers.grid_extras())  # fmt: skip
    store = tmp_path / "results.sqlite"
    with pytest.raises(RunInterrupted):
        run_grid(grid, store, providers=providers, progress=False)
    assert concept_frame(store).concept.tolist() == [0]  # the first concept, stored before the interrupt
    again = run_grid(grid, store, providers=providers, progress=False)
    assert (again.concepts.skipped, again.concepts.completed, again.concepts.failed) == (1, 2, 0)
    assert sorted(concept_frame(store).concept) == [0, 1, 2] and again.completed == 0
