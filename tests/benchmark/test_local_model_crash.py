"""Issue #20: a grid whose local model crashes (a real SIGSEGV in its worker process) survives it, records the
setting as failed with the reason, and a rerun resumes exactly that setting."""

from __future__ import annotations

from crashing_llama import CrashingLlama


def test_a_grid_survives_a_crash_records_the_setting_and_resumes_it(crashing, monkeypatch, tmp_path) -> None:
    from toy_grid import PROVIDER_KWARGS

    from xaimetrics.benchmark import Grid, Providers, ResultsStore, run_grid

    monkeypatch.setenv("CRASH_AT", f"once:{tmp_path / 'crashed'}")
    providers = Providers(
        **{**PROVIDER_KWARGS, "simulators": {"crashing": lambda: CrashingLlama(crashing, portable=True)}}
    )
    grid = Grid(
        datasets=("toy",), models=("toy",), methods=("NMF", "NoExplanation"), n_concepts=3, default_n_concepts=3,
        prompt_types=("NE2", "E2"), seeds=(0,), simulators=("crashing",), n_lp=9, n_ep=9, n_fit=200,
        concurrency=1, **providers.grid_extras(),
    )  # fmt: skip
    total = len(grid.settings())
    store = tmp_path / "results.sqlite"
    first = run_grid(grid, store, providers=providers, artefact_dir=tmp_path / "artefacts", progress=False)
    assert (tmp_path / "crashed").is_file()
    assert first.failed == 1 and first.completed == total - 1
    assert "LocalModelCrashed" in first.errors[0] and "SIGSEGV" in first.errors[0]
    resumed = run_grid(grid, store, providers=providers, artefact_dir=tmp_path / "artefacts", progress=False)
    assert (resumed.skipped, resumed.completed, resumed.failed) == (total - 1, 1, 0)
    frame = ResultsStore(store).to_frame()
    assert len(frame) == total and not frame["key"].duplicated().any()
