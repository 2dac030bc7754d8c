"""Plot of insertion/deletion curves."""

from __future__ import annotations

import pytest
import torch

from fidelity.fidelity_reference import make_linear
from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.fidelity import Deletion, plot_curves

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")


def test_plot_compares_methods_with_their_auc():
    model = make_linear([3.0, 2.0, 1.0, 0.5])
    x = torch.ones(3, 4)
    metric = Deletion(model, x, steps=-1)
    good = metric.curves(torch.tensor([[3.0, 2.0, 1.0, 0.5]]).repeat(3, 1))
    bad = metric.curves(torch.tensor([[0.5, 1.0, 2.0, 3.0]]).repeat(3, 1))
    ax = plot_curves({"exact": good, "reversed": bad}, show_samples=True)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == [f"exact (AUC {good.auc.mean():.3f})", f"reversed (AUC {bad.auc.mean():.3f})"]
    assert ax.get_xlabel() == "fraction of features deleted"
    assert ax.get_title() == "Deletion: lower AUC is better"  # read from the metric registry
    mean_line = ax.get_lines()[0]
    assert list(mean_line.get_ydata()[[0, -1]]) == pytest.approx([6.5, 0.0])
    assert len(ax.get_lines()) == 2 + 2 * 3
    matplotlib.pyplot.close("all")


def test_plot_rejects_other_objects():
    with pytest.raises(
        InvalidParameterError, match=r"'curves' parameter of plot_curves must be a Curves object"
    ):
        plot_curves({"x": [1, 2]})
