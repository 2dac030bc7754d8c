"""Check the instrument, then measure (benchmark/_gated.py) on the toy grid: real runs into a real store."""

from __future__ import annotations

import pytest
from toy_grid import PROVIDERS, toy_grid

from xaimetrics.benchmark import (
    GatedDesign,
    ResultsStore,
    SequentialDesign,
    headline,
    plan_gated,
    run_gated,
)
from xaimetrics.exceptions import InvalidParameterError

DESIGN = GatedDesign(
    gate=SequentialDesign(max_seeds=6, start=5), methods=SequentialDesign(max_seeds=9, start=8)
)


def _methods_in(store, seeds):
    with ResultsStore(store) as s:
        frame = s.to_frame()
    return set(frame.loc[frame["seed"].isin(list(seeds)), "method"])


def test_a_simulator_blind_to_explanations_is_gated_out_and_its_methods_never_run(tmp_path) -> None:
    """The blind simulator answers one class whatever the prompt: no explanation can help it."""
    grid = toy_grid(prompt_types=("NE2", "E2"), simulators=("blind",))
    store = tmp_path / "results.sqlite"
    (result,) = run_gated(grid, store, DESIGN, providers=PROVIDERS, progress=False)
    assert result.outcome == "invalid" and result.methods is None
    assert result.gate.verdicts.loc["SurrogateWords", "verdict"] == "fail"
    # the negative control was never spent: the positive control failed at the first look
    assert _methods_in(store, range(20)) == {"NoExplanation", "SurrogateWords"}
    assert result.seeds == {"gate": (0, 1, 2, 3, 4), "methods": ()}
    lines = headline([result], names={"blind": "The blind reader"})
    assert lines[0].startswith("The blind reader does not use the explanations: its positive control gains")
    assert (
        "not run" in lines[0]
        and lines[-1] == "No simulator passed its controls, so no concept method was measured."
    )


def test_a_valid_instrument_measures_the_methods_on_fresh_seeds_until_decided(tmp_path) -> None:
    grid = toy_grid(
        prompt_types=("NE2", "E2"), simulators=("controlled_oracle",), methods=("NMF", "PCA", "NoExplanation")
    )
    store = tmp_path / "results.sqlite"
    (result,) = run_gated(grid, store, DESIGN, providers=PROVIDERS, progress=False)
    assert result.outcome == "valid", result.gate.verdicts
    assert result.methods is not None and result.methods.seeds == tuple(
        range(6, 14)
    )  # decided at the first look
    assert result.methods.verdicts["verdict"].to_dict() == {"NMF": "helps", "PCA": "no_help"}
    assert _methods_in(store, result.methods.seeds) == {"NMF", "PCA", "NoExplanation"}
    assert _methods_in(store, result.gate.seeds) == {"NoExplanation", "SurrogateWords", "RandomWords"}
    before = len(ResultsStore(store).to_frame())
    (again,) = run_gated(grid, store, DESIGN, providers=PROVIDERS, progress=False)  # a rerun makes no call
    assert len(ResultsStore(store).to_frame()) == before and sum(s.completed for s in again.summaries) == 0
    assert again.methods is not None and again.methods.verdicts.equals(result.methods.verdicts)
    lines = headline([result], names={"controlled_oracle": "The oracle"})
    assert lines[0].startswith(
        "The oracle is a valid instrument: its positive control beats NoExplanation by +0."
    )
    assert lines[1].startswith(
        "Concept methods read by the oracle, 8 fresh seeds, Holm–Shaffer corrected over 2 methods: NMF helps: +0."
    )
    assert (
        "PCA does not help by 0.05 or more" in lines[1] and lines[-1] == "Every question asked was decided."
    )


def test_a_noisy_negative_control_keeps_the_gate_undecided_and_says_so(tmp_path) -> None:
    """The lexical reader on the toy task: the positive control passes, the negative control (random words
    that sometimes match a topic) is too noisy to be shown within ±0.05 in 6 seeds: no methods."""
    grid = toy_grid(prompt_types=("NE2", "E2"), simulators=("lexical",), methods=("NMF", "NoExplanation"),
                    scoring="probability")  # fmt: skip
    (result,) = run_gated(grid, tmp_path / "r.sqlite", DESIGN, providers=PROVIDERS, progress=False)
    assert result.outcome == "undecided" and result.methods is None and result.gate.stopped == "seeds"
    assert headline([result])[0].startswith("lexical could not be checked within the gate's budget (6 seeds)")


def test_force_methods_measures_a_failed_simulator_as_exploratory(tmp_path) -> None:
    grid = toy_grid(prompt_types=("NE2", "E2"), simulators=("blind",), methods=("NMF", "NoExplanation"))
    design = GatedDesign(gate=DESIGN.gate, methods=DESIGN.methods, force_methods=True)
    (result,) = run_gated(grid, tmp_path / "r.sqlite", design, providers=PROVIDERS, progress=False)
    assert result.outcome == "invalid" and result.exploratory and result.methods is not None
    assert "exploratory" in " ".join(headline([result]))


def test_an_exploratory_methods_phase_runs_no_randomised_twin(tmp_path) -> None:
    """Forced past a failed gate, the methods run (exploratory) but their twins do not: a comparison read by an
    instrument that does not read explanations says nothing (the toy classifier is no torch module: a twin
    would raise)."""
    grid = toy_grid(prompt_types=("NE2", "E2"), simulators=("blind",), methods=("NMF", "NoExplanation"),
                    randomized_twins=("all",))  # fmt: skip
    design = GatedDesign(gate=DESIGN.gate, methods=DESIGN.methods, force_methods=True)
    (result,) = run_gated(grid, tmp_path / "r.sqlite", design, providers=PROVIDERS, progress=False)
    assert result.exploratory and result.methods is not None and result.twins is None
    assert _methods_in(tmp_path / "r.sqlite", range(20)) == {"NoExplanation", "SurrogateWords", "NMF"}
    assert plan_gated(grid, DESIGN)["per_seed"] == {"gate": 3, "methods": 3}  # NMF, its twin, the baseline


def test_the_plan_counts_the_worst_case_before_any_call() -> None:
    grid = toy_grid(
        prompt_types=("NE2", "E2"), simulators=("lexical",), methods=("NMF", "PCA", "NoExplanation")
    )
    plan = plan_gated(grid, DESIGN)
    assert plan["per_seed"] == {"gate": 3, "methods": 3}
    assert plan["settings"] == {"gate": 18, "methods": 27, "total": 45}


def test_a_grid_without_the_baseline_is_refused(tmp_path) -> None:
    with pytest.raises(InvalidParameterError, match=r"'grid\.methods' parameter of run_gated"):
        run_gated(
            toy_grid(methods=("NMF",)), tmp_path / "r.sqlite", DESIGN, providers=PROVIDERS, progress=False
        )
