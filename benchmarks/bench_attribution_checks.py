"""Infidelity vs captum.metrics.infidelity, and the randomisation checks vs a per-sample loop, like for like.

Run from the repository root::

    PYTHONPATH=src python benchmarks/bench_attribution_checks.py           # 64 images, 4 explanations
    PYTHONPATH=src python benchmarks/bench_attribution_checks.py --quick   # 16 images

Every side is warmed up and timed in the same alternated rounds (``_harness.measure``; medians and min–max):

- **infidelity**: ``Infidelity(...).evaluate_samples`` on four explanations of the same images (a fresh metric
  object per round: its perturbed forward passes are paid once and shared by the four) vs four calls of
  ``captum.metrics.infidelity`` with the same Gaussian perturbations (drawn once, outside the timer, for both);
  also one explanation alone, and Captum drawing its own noise (``torch.randn``, as its documentation). The values of both sides are compared (max absolute difference).
- **randomisation checks**: ``ModelRandomization`` and ``CascadingRandomization`` vs the loop a user writes
  without them: deep copy, re-initialise, explain, then ``scipy.stats.spearmanr`` sample by sample; the same
  saliency explanations on both sides.
"""

from __future__ import annotations

import argparse
import copy
from typing import Any

import numpy as np
import torch
from _harness import Report, common_arguments, measure, ratio, set_threads
from scipy.stats import spearmanr

from xaimetrics.fidelity import CascadingRandomization, Infidelity, ModelRandomization, attribute
from xaimetrics.fidelity._infidelity import gaussian_perturbations
from xaimetrics.fidelity._randomization import _reset


class SmallCNN(torch.nn.Module):
    """A small image classifier (random weights, seeded)."""

    def __init__(self) -> None:
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(3, 16, 3, padding=1),
            torch.nn.ReLU(),
            torch.nn.Conv2d(16, 32, 3, stride=2, padding=1),
            torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(4),
            torch.nn.Flatten(),
        )
        self.head = torch.nn.Linear(32 * 16, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


def infidelity_speed(report: Report, model: Any, x: torch.Tensor, args: argparse.Namespace) -> None:
    import captum.metrics

    n, runs, std = x.shape[0], 20, 0.1
    methods = ("saliency", "input_x_gradient", "integrated_gradients", "occlusion")
    explanations = {m: attribute(model, x, m, n_steps=16, reduce_channels=False) for m in methods}
    target = model(x).argmax(1).detach()
    noise = gaussian_perturbations(tuple(x.shape[1:]), range(n), runs, std, 0).float()

    def perturb_func(inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return noise, inputs - noise

    def own_noise(inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        drawn = torch.randn_like(inputs) * std  # Captum's documented perturb_func
        return drawn, inputs - drawn

    def captum_side(chosen: tuple[str, ...], func: Any = perturb_func) -> list[np.ndarray]:
        return [
            captum.metrics.infidelity(
                model, func, x, explanations[m], target=target, n_perturb_samples=runs
            ).numpy()
            for m in chosen
        ]

    def ours_side(chosen: tuple[str, ...]) -> list[np.ndarray]:
        metric = Infidelity(
            model, x, perturbation="gaussian", n_perturb_samples=runs, noise_std=std, batch_size=n * runs
        )
        return [metric.evaluate_samples(explanations[m]) for m in chosen]

    timings, results = measure(
        {
            "captum, 4 explanations": lambda: captum_side(methods),
            "ours, 4 explanations": lambda: ours_side(methods),
            "captum, 1 explanation": lambda: captum_side(methods[:1]),
            "ours, 1 explanation": lambda: ours_side(methods[:1]),
            "captum, 1 explanation, torch.randn inside": lambda: captum_side(methods[:1], own_noise),
        },
        repeats=args.repeats,
        warmup=args.warmup,
    )
    difference = max(
        float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-12)))
        for a, b in zip(results["ours, 4 explanations"], results["captum, 4 explanations"], strict=True)
    )
    absolute = max(
        float(np.max(np.abs(a - b)))
        for a, b in zip(results["ours, 4 explanations"], results["captum, 4 explanations"], strict=True)
    )
    for name, stats in timings.items():
        report.row(f"infidelity: {name}", stats)
    report.row(
        "infidelity speed-up, 4 explanations (captum / ours)",
        ratio(timings["captum, 4 explanations"], timings["ours, 4 explanations"]),
        "×",
        1,
    )
    report.row(
        "infidelity speed-up, 1 explanation (captum / ours)",
        ratio(timings["captum, 1 explanation"], timings["ours, 1 explanation"]),
        "×",
        1,
    )
    report.row(
        "infidelity speed-up, 1 explanation (captum drawing its noise / ours)",
        ratio(timings["captum, 1 explanation, torch.randn inside"], timings["ours, 1 explanation"]),
        "×",
        1,
    )
    report.row("infidelity: max |ours − captum| (relative)", f"{absolute:.1e} ({difference:.1e})")


def randomization_speed(report: Report, model: Any, x: torch.Tensor, args: argparse.Namespace) -> None:
    def saliency(m: Any, inputs: Any, targets: torch.Tensor) -> Any:
        return attribute(m, inputs, "saliency", targets, reduce_channels=False)

    targets = model(x).argmax(1).detach()
    layers = ModelRandomization(model, x).layers

    def loop_full() -> np.ndarray:
        original = saliency(model, x, targets).numpy()
        randomized = copy.deepcopy(model)
        _reset(randomized, layers, 0)
        other = saliency(randomized, x, targets).numpy()
        return np.array(
            [spearmanr(a.ravel(), b.ravel()).statistic for a, b in zip(original, other, strict=True)]
        )

    def loop_cascade() -> dict[str, np.ndarray]:
        original = saliency(model, x, targets).numpy()
        randomized = copy.deepcopy(model)
        out = {}
        for name in reversed(layers):
            _reset(randomized, [name], 0)
            other = saliency(randomized, x, targets).numpy()
            out[name] = np.array(
                [spearmanr(a.ravel(), b.ravel()).statistic for a, b in zip(original, other, strict=True)]
            )
        return out

    timings, results = measure(
        {
            "loop, model randomisation": loop_full,
            "ours, ModelRandomization": lambda: ModelRandomization(model, x, targets).evaluate_samples(
                saliency
            ),
            "loop, cascading": loop_cascade,
            "ours, CascadingRandomization": lambda: CascadingRandomization(
                model, x, targets
            ).evaluate_samples(saliency),
        },
        repeats=args.repeats,
        warmup=args.warmup,
    )
    difference = float(
        np.max(np.abs(results["ours, ModelRandomization"] - results["loop, model randomisation"]))
    )
    cascade = max(
        float(np.max(np.abs(results["ours, CascadingRandomization"][k] - results["loop, cascading"][k])))
        for k in results["loop, cascading"]
    )
    for name, stats in timings.items():
        report.row(f"randomisation: {name}", stats)
    report.row(
        "ModelRandomization speed-up (loop / ours)",
        ratio(timings["loop, model randomisation"], timings["ours, ModelRandomization"]),
        "×",
        2,
    )
    report.row(
        "CascadingRandomization speed-up (loop / ours)",
        ratio(timings["loop, cascading"], timings["ours, CascadingRandomization"]),
        "×",
        2,
    )
    report.row("randomisation: max |ours − loop| (full, cascade)", f"{difference:.1e}, {cascade:.1e}")


def main() -> None:
    parser = common_arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]))
    args = parser.parse_args()
    set_threads(args.threads)
    n = 16 if args.quick else 64
    report = Report(
        "attribution_checks", "Infidelity vs Captum; randomisation checks vs a per-sample loop (fidelity)"
    )
    report.settings = {"images": n, "side": 32, "threads": args.threads, "repeats": args.repeats}
    torch.manual_seed(0)
    model = SmallCNN().eval()
    x = torch.rand(n, 3, 32, 32, generator=torch.Generator().manual_seed(1))
    infidelity_speed(report, model, x, args)
    randomization_speed(report, model, x, args)
    report.finish(args.json)


if __name__ == "__main__":
    main()
