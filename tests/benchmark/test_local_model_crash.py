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


# -- a hung worker (issue #33): real processes, a real SIGSTOP -------------------------------------------------
HANGING_GRID = """
datasets = ["toy"]
models = ["toy"]
methods = ["PCA", "NoExplanation"]
n_concepts = 3
prompt_types = ["NE2", "E2"]
seeds = [0, 1, 2]
simulators = ["hanging"]
n_lp = 6
n_ep = 6
n_fit = 200
concurrency = 1
"""


def _start(tmp_path, *extra: str, crash_at: str):
    import subprocess
    import sys

    from cli_runs import environment

    grid = tmp_path / "grid.toml"
    grid.write_text(HANGING_GRID)
    model = tmp_path / "fake.gguf"
    model.write_bytes(b"GGUF")
    env = {**environment(tmp_path / "cache"), "CRASH_AT": crash_at, "FAKE_GGUF": str(model)}
    command = [
        sys.executable, "-c", "import sys; from xaimetrics.cli import main; sys.exit(main())", "benchmark", "run",
        str(grid), "--output", str(tmp_path / "out"), "--providers", "llama_providers:PROVIDERS", "--no-progress",
        "--no-cache", *extra,
    ]  # fmt: skip
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _gone(pid: int) -> bool:
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_a_stopped_worker_fails_its_setting_at_the_deadline_and_the_grid_goes_on(
    crashing, monkeypatch, tmp_path
) -> None:
    """Before: the grid hung for good (> 180 s, no message). Now the worker is killed after its deadline, the
    setting is recorded as failed with the reason, a new worker answers the rest, and a rerun resumes it."""
    from toy_grid import PROVIDER_KWARGS

    from xaimetrics.benchmark import Grid, Providers, run_grid

    marker = tmp_path / "stopped"
    monkeypatch.setenv("CRASH_AT", f"stop:{marker}")
    providers = Providers(
        **{
            **PROVIDER_KWARGS,
            "simulators": {
                "hanging": lambda: CrashingLlama(crashing, portable=True, max_tokens=8, call_timeout=1)
            },
        }
    )
    grid = Grid(
        datasets=("toy",), models=("toy",), methods=("PCA", "NoExplanation"), n_concepts=3, default_n_concepts=3,
        prompt_types=("NE2", "E2"), seeds=(0, 1), simulators=("hanging",), n_lp=6, n_ep=6, n_fit=200,
        concurrency=1, **providers.grid_extras(),
    )  # fmt: skip
    store = tmp_path / "results.sqlite"
    first = run_grid(grid, store, providers=providers, artefact_dir=tmp_path / "artefacts", progress=False)
    assert (first.completed, first.failed) == (3, 1)
    assert "LocalModelTimeout" in first.errors[0] and "no answer within" in first.errors[0]
    assert _gone(int(marker.read_text()))
    resumed = run_grid(grid, store, providers=providers, artefact_dir=tmp_path / "artefacts", progress=False)
    assert (resumed.skipped, resumed.completed, resumed.failed) == (3, 1, 0)


def test_the_first_ctrl_c_ends_a_grid_whose_worker_is_stopped_and_leaves_no_process(tmp_path) -> None:
    """Before: the first Ctrl-C did not end it, the second did and left the stopped worker behind."""
    import signal
    import time

    marker = tmp_path / "stopped"
    child = _start(tmp_path, "--llm-call-timeout", "600", crash_at=f"stop:{marker}")
    deadline = time.monotonic() + 180
    while not (marker.exists() and marker.read_text()) and time.monotonic() < deadline:
        time.sleep(0.1)
    worker = int(marker.read_text())
    time.sleep(0.5)
    child.send_signal(signal.SIGINT)
    _, stderr = child.communicate(timeout=30)  # far less than the 600 s deadline
    assert child.returncode == 130, stderr
    assert "Traceback" not in stderr and "Interrupted: stopped after the calls in flight" in stderr
    assert _gone(worker)


def test_the_grid_and_the_command_line_set_the_deadline(monkeypatch) -> None:
    import pytest

    from xaimetrics import cli
    from xaimetrics._arguments import apply_portable_argument
    from xaimetrics._call_timeout import CALL_TIMEOUT_ENV
    from xaimetrics.benchmark import Grid, Providers
    from xaimetrics.benchmark._runner import grid_simulator
    from xaimetrics.exceptions import InvalidParameterError

    monkeypatch.delenv(CALL_TIMEOUT_ENV, raising=False)
    config = Grid(simulators=("local",)).artefact_config()
    local = grid_simulator(
        "local", Grid(simulators=("local",), call_timeout=7).artefact_config(), Providers(), None
    )
    assert local.call_timeout == 7.0  # type: ignore[attr-defined]
    assert grid_simulator("local", config, Providers(), None).call_timeout == 120.0  # type: ignore[attr-defined]
    with pytest.raises(InvalidParameterError, match="'call_timeout' parameter of Grid must be a number"):
        Grid(simulators=("local",), call_timeout=0)
    args = cli.build_parser().parse_args(["consim", "--llm-call-timeout", "30"])
    apply_portable_argument(args)
    assert grid_simulator("local", config, Providers(), None).call_timeout == 30.0  # type: ignore[attr-defined]
    monkeypatch.delenv(CALL_TIMEOUT_ENV)
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["benchmark", "run", "g.toml", "--llm-call-timeout", "-1"])
