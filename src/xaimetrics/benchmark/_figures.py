"""The report's figures (matplotlib, Agg backend, PNG): win and difference heatmaps, score distributions,
Spearman correlations."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from xaimetrics._reporting import pyplot, save_figure
from xaimetrics.benchmark._analysis import prompt_labels
from xaimetrics.consim import PROMPT_TYPES

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.image import AxesImage

    from xaimetrics.benchmark._ranking import PairwiseDifferences

__all__ = [
    "plot_baseline_comparison",
    "plot_differences",
    "plot_score_distributions",
    "plot_spearman",
    "plot_win_matrix",
]


def _heatmap(
    ax: Axes, values: np.ndarray, labels: list[str], cmap: str, vmin: float, vmax: float
) -> AxesImage:
    image = ax.imshow(values, cmap=cmap, vmin=vmin, vmax=vmax)
    ax.set_xticks(range(len(labels)), labels, rotation=45, ha="right")
    ax.set_yticks(range(len(labels)), labels)
    ax.set_xlabel("method 2")
    ax.set_ylabel("method 1")
    return image


def plot_win_matrix(wins: pd.DataFrame, path: str | Path) -> Path:
    """Eq. 6 as a heatmap: the share (%) of shared settings where method 1 beats method 2."""
    plt = pyplot("the benchmark report")
    labels = [str(c) for c in wins.columns]
    size = 1.0 + 0.75 * len(labels)
    fig, ax = plt.subplots(figsize=(size + 1.5, size))
    values = wins.to_numpy(dtype=float)
    image = _heatmap(ax, values, labels, "RdBu", 0.0, 100.0)
    for i in range(len(labels)):
        for j in range(len(labels)):
            if not np.isnan(values[i, j]):
                color = "white" if abs(values[i, j] - 50.0) > 30.0 else "black"
                ax.text(j, i, f"{values[i, j]:.0f}", ha="center", va="center", fontsize=8, color=color)
    fig.colorbar(image, ax=ax, label="% of settings won (tie = ½)")
    ax.set_title("Pairwise wins (ranked by Copeland)")
    return save_figure(fig, path)


def plot_differences(differences: PairwiseDifferences, path: str | Path) -> Path:
    """Eq. 8 as a heatmap: mean ± std over seeds of ``score_1 − score_2``; ``*`` marks a Holm-adjusted sign-flip
    p < alpha."""
    plt = pyplot("the benchmark report")
    labels = [str(c) for c in differences.mean.columns]
    mean = differences.mean.to_numpy(dtype=float)
    std = differences.std.to_numpy(dtype=float)
    significant = differences.significant.to_numpy()
    bound = float(np.nanmax(np.abs(mean))) if np.isfinite(mean).any() else 1.0
    bound = bound or 1.0
    size = 1.0 + 0.9 * len(labels)
    fig, ax = plt.subplots(figsize=(size + 1.5, size))
    image = _heatmap(ax, mean, labels, "RdBu", -bound, bound)
    for i in range(len(labels)):
        for j in range(len(labels)):
            if i == j or np.isnan(mean[i, j]):
                continue
            mark = "*" if significant[i, j] else ""
            spread = "" if np.isnan(std[i, j]) else f"\n±{std[i, j]:.2f}"
            weight = "bold" if significant[i, j] else "normal"
            color = "white" if abs(mean[i, j]) > 0.6 * bound else "black"
            ax.text(j, i, f"{mean[i, j]:+.2f}{mark}{spread}", ha="center", va="center", fontsize=7,
                    fontweight=weight, color=color)  # fmt: skip
    fig.colorbar(image, ax=ax, label="mean difference over seeds")
    ax.set_title(f"Mean differences (* Holm-adjusted sign-flip p < {differences.alpha})")
    return save_figure(fig, path)


def plot_score_distributions(results: pd.DataFrame, path: str | Path, *, metric: str = "score") -> Path:
    """Box plots of the scores (``metric``: the report's one score) per prompt type (one panel per dataset),
    baselines included, U1 apart."""
    plt = pyplot("the benchmark report")
    rows = results[(results["phase"] == "evaluation")].copy()
    column = metric if metric in rows.columns else "score"
    rows["value"] = pd.to_numeric(rows[column], errors="coerce").astype(float)
    rows["prompt"] = prompt_labels(rows)
    datasets = sorted(rows["dataset"].unique()) or [""]
    fig, axes = plt.subplots(1, len(datasets), figsize=(6.5 * len(datasets), 4.0), squeeze=False)
    order = {name: i for i, name in enumerate(PROMPT_TYPES.names())}  # registry order; unknown names last
    for ax, dataset in zip(axes[0], datasets, strict=True):
        part = rows[rows["dataset"] == dataset]
        kinds = part.groupby("prompt")["prompt_type"].first()
        prompts = sorted(kinds.index, key=lambda p: (order.get(kinds[p], len(order)), p))
        data = [part.loc[part["prompt"] == p, "value"].dropna().to_numpy() for p in prompts]
        if prompts:
            ax.boxplot(data, showmeans=True)
            upper = {p: getattr(PROMPT_TYPES.find(kinds[p]), "is_upper_bound", False) for p in prompts}
            ax.set_xticks(range(1, len(prompts) + 1), [p + (" (upper bound)" if upper[p] else "") for p in prompts],
                          rotation=30, ha="right")  # fmt: skip
        ax.set_ylim(-0.05, 1.05)
        ax.set_ylabel("simulator accuracy vs f (eq. 5)" if column == "score" else f"{column} vs f")
        ax.set_title(f"Scores per prompt type — {dataset}")
    return save_figure(fig, path)


def plot_spearman(correlations: pd.DataFrame, path: str | Path) -> Path:
    """Horizontal bars of Spearman's ρ between simulatability and each concept metric (paper Fig. 5)."""
    plt = pyplot("the benchmark report")
    table = correlations.dropna(subset=["rho"]) if len(correlations) else correlations
    fig, ax = plt.subplots(figsize=(6.0, 0.4 * max(3, len(table)) + 1.0))
    if len(table):
        colors = ["#2b6cb0" if r > 0 else "#c53030" for r in table["rho"]]
        ax.barh([str(i) for i in table.index], table["rho"], color=colors)
        adjusted = table["pvalue_adjusted"] if "pvalue_adjusted" in table.columns else table["pvalue"]
        for y, (rho, p) in enumerate(zip(table["rho"], adjusted, strict=True)):
            ax.text(rho, y, f" {rho:+.2f}{'*' if p < 0.05 else ''}", va="center", fontsize=8)
    else:
        ax.text(0.5, 0.5, "not enough methods with metrics", ha="center", va="center", transform=ax.transAxes)
    ax.axvline(0.0, color="black", linewidth=0.8)
    ax.set_xlim(-1.15, 1.15)
    ax.set_xlabel("Spearman ρ with simulatability (win share); * Holm-adjusted p < 0.05")
    ax.set_title("Simulatability vs concept metrics (App. D)")
    return save_figure(fig, path)


def plot_baseline_comparison(comparison: pd.DataFrame, path: str | Path) -> Path:
    """Each method's mean difference with NoExplanation and its 95 % t-interval over seeds (a forest plot);
    filled markers are significant (Holm-adjusted sign-flip test for the methods, their own p for controls)."""
    plt = pyplot("the benchmark report")
    table = comparison.dropna(subset=["difference"]).sort_values("difference")
    fig, ax = plt.subplots(figsize=(7.0, 1.2 + 0.45 * max(1, len(table))))
    for y, (_, row) in enumerate(table.iterrows()):
        ax.plot([row["ci_low"], row["ci_high"]], [y, y], color="#2b6cb0", linewidth=2)
        face = "#2b6cb0" if bool(row["significant"]) else "white"
        ax.plot([row["difference"]], [y], "o", markerfacecolor=face, markeredgecolor="#2b6cb0", markersize=7)
    ax.axvline(0.0, color="#a0aec0", linestyle="--", linewidth=1)
    ax.set_yticks(range(len(table)), [str(m) for m in table.index])
    ax.set_xlabel("difference with NoExplanation (95% t-interval over seeds; filled: significant)")
    ax.set_title("Does the explanation help the simulator predict the model?")
    return save_figure(fig, path)
