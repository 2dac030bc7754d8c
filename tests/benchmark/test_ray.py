"""The Ray backend gives the same results as the local one (a local Ray instance)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from toy_grid import PROVIDER_KWARGS, toy_grid

from xaimetrics.benchmark import Providers, ResultsStore, run_grid

ray = pytest.importorskip("ray")
HERE = Path(__file__).parent


@pytest.mark.slow  # starting a local Ray instance takes ~20-60 s on a loaded 2-core machine
def test_ray_backend_equals_local(tmp_path):
    grid = toy_grid(seeds=(0, 1))
    providers = Providers(**PROVIDER_KWARGS)
    local = run_grid(
        grid, tmp_path / "local.sqlite", providers=providers, artefact_dir=tmp_path / "a1", progress=False
    )
    path = os.pathsep.join([str(HERE.parents[1] / "src"), str(HERE), str(HERE.parent)])
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": path}},
    )
    try:
        remote = run_grid(grid, tmp_path / "ray.sqlite", providers=providers, artefact_dir=tmp_path / "a2",
                          backend="ray", progress=False)  # fmt: skip
    finally:
        ray.shutdown()
    assert remote.completed == local.completed == len(grid.settings()) and remote.failed == 0
    volatile = ["created_at", "latency_s"]
    a = ResultsStore(tmp_path / "local.sqlite").to_frame().drop(columns=volatile)
    b = ResultsStore(tmp_path / "ray.sqlite").to_frame().drop(columns=volatile)
    assert a.equals(b)
