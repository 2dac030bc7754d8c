"""A concept fit that fails is a failed setting, never a failed grid (issue #30): ICA on the degenerate activations
of a randomised twin stopped a whole run. Planted here (a real randomised tiny BERT gives nearly constant
activations that FastICA still fits): a classifier whose activations have one varying feature (FastICA's
whitening divides by the zero variances and raises), beside a method that fits them (PCA)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from toy_grid import ToyTopicModel, toy_dataset

from xaimetrics.benchmark import Grid, Providers, ResultsStore, run_grid, write_report
from xaimetrics.concepts import ICA


class OneFeatureModel(ToyTopicModel):
    """The toy lexicon classifier with every feature but the first set to 0 (a dead layer, as a randomised
    copy's ReLU can give): the first topic's count still varies, so PCA and the predictions are fine."""

    def activations(self, inputs):
        features = super().activations(inputs)
        return torch.cat([features[:, :1], torch.zeros_like(features[:, 1:])], dim=1)


def one_feature_model(dataset: str) -> OneFeatureModel:
    return OneFeatureModel()


def _providers() -> Providers:
    return Providers(datasets={"toy": toy_dataset}, models={"dead": one_feature_model})


def _grid(**changes) -> Grid:
    options = {
        "datasets": ("toy",), "models": ("dead",), "methods": ("ICA", "PCA", "NoExplanation"), "n_concepts": 3,
        "prompt_types": ("NE2", "E2", "E3"), "seeds": (0, 1), "simulators": ("perfect",), "n_lp": 6, "n_ep": 6,
        "n_fit": 100, "balance": "relaxed",
    }  # fmt: skip
    options.update(changes)
    return Grid(**options, **_providers().grid_extras())


def test_the_planted_activations_break_ica_itself() -> None:
    activations = one_feature_model("toy").activations(toy_dataset("train").texts[:100]).numpy()
    assert np.ptp(activations[:, 0]) > 0 and not activations[:, 1:].any()
    with pytest.raises(ValueError, match="infs or NaNs"):
        ICA(n_concepts=3, random_state=0).fit(activations)


def test_a_failed_fit_fails_its_settings_with_the_extractors_message_and_the_rest_runs(
    tmp_path: Path,
) -> None:
    grid = _grid()
    summary = run_grid(grid, tmp_path / "r.sqlite", providers=_providers(), progress=False)
    n_ica = sum(s.method == "ICA" for s in grid.settings())  # E2 and E3 of 2 seeds
    assert n_ica == 4
    assert (summary.failed, summary.failed_fits, summary.completed) == (4, 4, summary.total - 4)
    assert len(summary.errors) == len(summary.fit_errors) == 2  # one per concept fit (seed)
    assert all(
        e.startswith(
            "2 settings not run: ICA could not be fitted on the activations of dead (3 concepts, seed "
        )
        and "ValueError: " in e
        and "infs or NaNs" in e
        for e in summary.errors
    ), summary.errors
    with ResultsStore(tmp_path / "r.sqlite", read_only=True) as store:
        results = store.to_frame()
    assert set(results["method"]) == {"PCA", "NoExplanation"}
    assert (
        results.loc[results["method"] == "PCA", "score"] == 1.0
    ).all()  # the perfect reader, f's predictions
    write_report(results, tmp_path / "report", run=summary.as_dict())
    report = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert "run_failed_fits" in report and "run_failed" in report
    rerun = run_grid(grid, tmp_path / "r.sqlite", providers=_providers(), progress=False)
    assert (rerun.skipped, rerun.failed_fits) == (summary.completed, 4)  # tried again, not stored


@pytest.mark.slow  # starting a local Ray instance takes ~20-60 s on a loaded 2-core machine
def test_the_ray_backend_records_a_failed_fit_the_same_way(tmp_path: Path) -> None:
    import os

    ray = pytest.importorskip("ray")
    here = Path(__file__).parent
    path = os.pathsep.join([str(here.parents[1] / "src"), str(here), str(here.parent)])
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": path}})  # fmt: skip
    try:
        summary = run_grid(
            _grid(), tmp_path / "r.sqlite", providers=_providers(), backend="ray", progress=False
        )
    finally:
        ray.shutdown()
    assert (summary.failed, summary.failed_fits, len(summary.fit_errors)) == (4, 4, 2)
    assert all("ICA could not be fitted" in e for e in summary.fit_errors)
    with ResultsStore(tmp_path / "r.sqlite", read_only=True) as store:
        assert set(store.to_frame()["method"]) == {"PCA", "NoExplanation"}
