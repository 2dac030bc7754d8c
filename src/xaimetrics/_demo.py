"""``xaimetrics demo``: the main job, fully offline.

Loads (fine-tuning once, then from the cache) the positive MiniLM classifier and prints its test accuracy;
fits NMF, SAE, ICA, PCA, SVD and NoProjection concepts and prints their App. D complexity and faithfulness
metrics; runs ConSim over seeds with the baseline and explanation prompt types (anonymised classes), the
positive and negative controls, and the local GGUF simulator scored by its class probabilities (expected
accuracy) behind the response cache; then says what the grid can conclude — whether the controls pass, which
methods beat the no-explanation baseline, by how much and how sure — ranks the methods (Copeland, paired
t-tests) and writes an HTML + Markdown report with figures. Everything is stored as it finishes: an
interrupted demo resumes where it stopped, and a rerun only rebuilds the report.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from xaimetrics._arguments import (
    add_scoring_argument,
    add_simulator_arguments,
    add_tracking_arguments,
    response_cache,
    track_grid,
)
from xaimetrics._validation import invalid

if TYPE_CHECKING:
    import pandas as pd

    from xaimetrics.benchmark import Artefacts, Grid, Providers, RunSummary, SequentialResult
    from xaimetrics.consim import ConSimSamples

__all__ = ["demo_grid", "demo_methods", "each_warning_once", "register", "run", "selection_overlap"]

#: the instrument check's simulator: a literal reader of the prompt's words (it runs on the main grid's seeds)
REFERENCE_SIMULATOR = "lexical"
#: the demo's task and simulator (docs/consim.md, "The demo's task", gives the measurements behind the choice)
DEMO_DATASET = "bbc_news"
DEMO_SIMULATOR = "local"
#: sample texts are cut to this many characters in prompts (BBC articles are long; the prompt's cost is its length)
DEMO_SAMPLE_CHARS = 150


def demo_methods() -> tuple[str, ...]:
    """The demo's methods: every registered concept extractor, then the no-explanation baseline.

    Example:
        >>> demo_methods()
        ('NMF', 'SAE', 'ICA', 'PCA', 'SVD', 'NoProjection', 'NoExplanation')
    """
    from xaimetrics.benchmark import BASELINE_METHOD
    from xaimetrics.concepts import EXTRACTORS

    return (*EXTRACTORS.names(), BASELINE_METHOD)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Add the ``demo`` sub-command (its method and simulator choices are read from the registries)."""

    parser = subparsers.add_parser(
        "demo",
        help="run the offline ConSim benchmark (BBC News topics, anonymised) and write a report",
        description=(
            "Fine-tune (once) a MiniLM classifier (BBC News by default), extract concepts with NMF, SAE, ICA, PCA, "
            "SVD and NoProjection, measure their simulatability with ConSim and a local LLM against the "
            "no-explanation baseline over several seeds, rank them and write an HTML + Markdown report."
        ),
    )
    parser.add_argument("--output", default="xaimetrics-output", help="report folder (default: %(default)s)")
    parser.add_argument(
        "--dataset",
        default=DEMO_DATASET,
        help="offline dataset: rotten_tomatoes, imdb or bbc_news (default: %(default)s)",
    )
    add_scoring_argument(parser, default="probability")
    parser.add_argument(
        "--no-controls",
        action="store_true",
        help="leave out the positive (SurrogateWords) and negative (RandomWords) controls",
    )
    parser.add_argument(
        "--seeds", default="3", help="number of seeds, or a comma-separated list (default: %(default)s)"
    )
    parser.add_argument(
        "--methods",
        default=",".join(demo_methods()),
        help="comma-separated concept methods, among the registered extractors, NoExplanation and the controls "
        "(default: %(default)s)",
    )
    add_simulator_arguments(
        parser, default=DEMO_SIMULATOR, local="the offline Qwen2.5-Coder-0.5B", api_key_env=False
    )
    parser.add_argument(
        "--n-concepts", type=int, default=20, help="concepts per method (default: %(default)s)"
    )
    parser.add_argument(
        "--samples", type=int, default=10, help="LP and EP samples each (paper: 20; default: %(default)s)"
    )
    parser.add_argument(
        "--prompt-types",
        default="NE2-a,E2-a",
        help="comma-separated prompt types ('-a': anonymised classes); add NE1-a,E1-a for the prompts "
        "without learning phase (default: %(default)s)",
    )
    parser.add_argument("--concurrency", type=int, default=2, help="simulator calls in flight")
    parser.add_argument(
        "--quick", action="store_true", help="a tiny grid for smoke tests (one seed, 3 methods)"
    )
    parser.add_argument(
        "--reference-seeds",
        type=int,
        default=None,
        help="seeds of the instrument check: the same grid read by the lexical reference simulator, a literal "
        "reader of the explanation's words (default: the main grid's seeds, so that both are judged at the same "
        "size; 0: skip)",
    )
    parser.add_argument(
        "--until-decided",
        type=int,
        default=None,
        metavar="MAX_SEEDS",
        help="a sequential design: start with --seeds seeds (0, 1, …) and add one seed per look until both "
        "controls are decided or MAX_SEEDS are spent, α spent over the looks (docs/benchmark.md)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_tracking_arguments(parser)
    parser.set_defaults(func=run)
    return parser


def _seeds(text: str) -> tuple[int, ...]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise invalid("--seeds", "xaimetrics demo", "a number of seeds or a list like 0,1,2", text) from None
    if len(values) == 1 and "," not in text:
        if values[0] < 1:
            raise invalid("--seeds", "xaimetrics demo", "a number of seeds ≥ 1", text)
        return tuple(range(values[0]))
    return tuple(values)


def demo_grid(args: argparse.Namespace) -> Grid:
    """The demo's :class:`~xaimetrics.benchmark.Grid` for parsed arguments."""
    from xaimetrics.benchmark import Grid

    methods = tuple(m.strip() for m in args.methods.split(",") if m.strip())
    common = {
        "datasets": (args.dataset,), "simulators": (args.simulator,), "base_url": args.base_url,
        "concurrency": args.concurrency, "max_sample_chars": DEMO_SAMPLE_CHARS, "controls": not args.no_controls,
        "scoring": args.scoring, "balance": "relaxed" if args.dataset == "bbc_news" else "strict",
    }  # fmt: skip
    if args.quick:
        keep = [m for m in methods if m in ("NMF", "PCA", "NoExplanation")] or ["PCA", "NoExplanation"]
        return Grid(
            methods=tuple(keep), n_concepts=10, prompt_types=("NE2-a", "E2-a"), seeds=(0,), n_lp=6, n_ep=6,
            n_fit=500, pool_size=None if args.dataset == "bbc_news" else 400, **common,
        )  # fmt: skip
    return Grid(
        methods=methods, n_concepts=args.n_concepts,
        prompt_types=tuple(p.strip() for p in args.prompt_types.split(",") if p.strip()),
        seeds=_seeds(args.seeds), n_lp=args.samples, n_ep=args.samples, n_fit=2000,
        extractor_options={"SAE": {"max_steps": 300}} if "SAE" in methods else None, **common,
    )  # fmt: skip


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@contextlib.contextmanager
def each_warning_once() -> Iterator[set[tuple[type, str]]]:
    """Show each distinct warning (category and message) once while the block runs.

    ``warnings.filterwarnings("once")`` is not enough: every ``warnings.catch_warnings()`` block (sklearn and
    joblib open many) resets the registry that "once" relies on, so NMF's ConvergenceWarning came back dozens
    of times. Here the display itself remembers what it showed.

    Example:
        >>> import warnings
        >>> with each_warning_once() as seen:
        ...     for _ in range(3):
        ...         with warnings.catch_warnings():
        ...             warnings.warn("same", UserWarning, stacklevel=1)
        >>> len(seen)
        1
    """
    seen: set[tuple[type, str]] = set()
    original = warnings.showwarning

    def show(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        key = (category, str(message))
        if key not in seen:
            seen.add(key)
            original(message, category, filename, lineno, file, line)

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        for hidden in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
            warnings.filterwarnings("ignore", category=hidden)  # hidden by Python's defaults too
        warnings.showwarning = show
        try:
            yield seen
        finally:
            warnings.showwarning = original


def run(args: argparse.Namespace) -> int:
    """Execute ``xaimetrics demo``; returns the exit code."""
    with each_warning_once():
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    from xaimetrics.benchmark import (
        Artefacts,
        Providers,
        ResultsStore,
        report_section,
        run_grid,
        write_report,
    )
    from xaimetrics.benchmark._analysis import spearman_with_metrics
    from xaimetrics.benchmark._assessment import assess

    started = time.perf_counter()
    if args.reference_seeds is not None and args.reference_seeds < 0:
        raise invalid(
            "--reference-seeds", "xaimetrics demo", "an integer ≥ 0 (0 skips the check)", args.reference_seeds
        )
    grid = demo_grid(args)
    output = Path(args.output)
    output.mkdir(parents=True, exist_ok=True)
    providers = Providers(progress=not args.no_progress)
    artefacts = Artefacts(grid, providers, output / "artefacts")
    dataset, model_name = grid.datasets[0], grid.models[0]

    if args.no_progress:  # transformers' own weight-loading bar too
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()
    _say(f"Loading the classifier (fine-tuned once on {dataset}, about 3 minutes on 2 cores, then cached)...")
    model = artefacts.model(dataset, model_name)
    if args.no_progress and hasattr(model, "progress"):
        model.progress = (
            False  # the classifier's own batch bars too (the cached object serves every later step)
        )
    accuracy = getattr(model, "test_accuracy", None)
    print(f"Classifier: MiniLM-L6 + ReLU ('+') on {dataset}; test accuracy = "
          f"{'n/a' if accuracy is None else f'{accuracy:.3f}'}")  # fmt: skip

    _say("Fitting concepts and computing their App. D metrics...")
    metrics = _concept_metrics(artefacts, grid)
    if len(metrics):
        print("\nConcept metrics (App. D; complexity: lower is simpler; faithfulness: lower L2/KL is better)")
        print(metrics.to_string(float_format=lambda v: f"{v:.3f}"))

    _say(
        f"Running ConSim: {len(grid.settings())} settings, simulator {args.simulator!r}, scored by "
        f"{'class probabilities' if grid.scoring == 'probability' else 'answer accuracy'}..."
    )
    store_path = output / "results.sqlite"
    sequential = None
    if args.until_decided is not None:
        grid, summary, sequential = _run_until_decided(args, grid, store_path, providers, artefacts)
    else:
        summary = run_grid(
            grid, store_path, providers=providers, artefacts=artefacts,
            response_cache=response_cache(args),  # oracles such as 'perfect' are never cached
            progress=not args.no_progress,
        )  # fmt: skip
    with ResultsStore(store_path) as store:
        frame = store.to_frame()
        store.export(output / "results.csv")
    alpha = 0.05 if sequential is None else sequential.looks[-1]["level"]
    assessment = assess(frame, alpha=alpha)
    overlap = selection_overlap([artefacts.samples(dataset, model_name, seed) for seed in grid.seeds],
                                pool_size=len(artefacts.data(dataset)[1].texts))  # fmt: skip
    check = _instrument_check(args, grid, artefacts, output, assessment)
    summary.wall_time_s = time.perf_counter() - started
    sections = [report_section("Data design: do the seeds share samples?", overlap["sentence"])]
    if sequential is not None:
        sections.insert(0, report_section("Sequential design", sequential.sentence, sequential.table))
    paths = write_report(frame, output, grid=grid.to_dict(), run=summary.as_dict(), concept_metrics=metrics,
                         title=f"xaimetrics demo — ConSim on {dataset}", alpha=alpha,
                         sections=[*sections, *([check["section"]] if check else [])])  # fmt: skip
    print(f"\nControls (score: {assessment.metric}; settings averaged within each seed; exact sign-flip tests in "
          "the pre-stated direction: positive control one-sided, negative control equivalence within "
          f"±{assessment.verdict['margin']:g} by TOST)")  # fmt: skip
    print(assessment.controls.to_string(float_format=_three_digits))
    print("\nConcept methods against NoExplanation (95% t-intervals over seeds; exact sign-flip p, Holm-adjusted "
          "across the methods; mdd = smallest difference detected with power 0.8 at the Holm level)")  # fmt: skip
    methods = assessment.comparison[assessment.comparison["role"] == "method"]
    print(methods.drop(columns="role").to_string(float_format=_three_digits))
    if len(assessment.ranking):
        print("\nSimulatability ranking of the concept methods (Copeland over seed means; controls left out)")
        print(assessment.ranking.to_string(float_format=_three_digits))
    if len(metrics) >= 3 and len(assessment.ranking):
        rho = spearman_with_metrics(assessment.ranking, metrics)
        print(f"\nSpearman correlation with simulatability (win share over {len(assessment.ranking)} methods; "
              f"p-values Holm-adjusted over the {len(rho)} metrics)")  # fmt: skip
        print(rho.to_string(formatters={"rho": "{:+.3f}".format, "pvalue": "{:.3f}".format,
                                        "pvalue_adjusted": "{:.3f}".format}))  # fmt: skip
    print("\nData design: " + overlap["sentence"])
    summary.wall_time_s = time.perf_counter() - started
    print(
        f"\n{summary.completed} settings run, {summary.skipped} already stored, {summary.failed} failed; "
        f"{summary.calls} simulator calls ({summary.cached_calls} cached), {summary.total_tokens:,} tokens; "
        f"wall time {summary.wall_time_s:.1f} s"
    )
    print(f"Report: {paths['report_html']}  ({paths['report_md'].name} beside it)")
    track_grid(args, frame, grid.to_dict(), [paths["report_html"], paths["report_md"]], output)
    if sequential is not None:
        print("\n" + sequential.sentence)
    print("\nConclusion: " + assessment.summary)
    if check:
        print("\nInstrument check: " + check["sentence"])
    return 0 if summary.failed == 0 and (not check or check["failed"] == 0) else 1


def _run_until_decided(
    args: argparse.Namespace, grid: Grid, store_path: Path, providers: Providers, artefacts: Artefacts
) -> tuple[Grid, RunSummary, SequentialResult]:
    """``--until-decided``: grow the grid one seed per look (:func:`~xaimetrics.benchmark.until_decided`);
    the store resumes, so each look runs only the new seed. Returns the final grid, a run summary over all
    looks and the :class:`~xaimetrics.benchmark.SequentialResult`."""
    import dataclasses

    from xaimetrics.benchmark import ResultsStore, SequentialDesign, run_grid, until_decided

    start = len(grid.seeds)
    if args.until_decided < start:
        raise invalid(
            "--until-decided", "xaimetrics demo", f"a seed budget ≥ the {start} starting seed(s) of --seeds",
            args.until_decided,
        )  # fmt: skip
    design = SequentialDesign(max_seeds=args.until_decided, start=start)
    summaries: list[RunSummary] = []

    def run_seeds(seeds: Sequence[int]) -> pd.DataFrame:
        look = dataclasses.replace(grid, seeds=tuple(seeds))
        _say(f"Sequential design: look at {len(seeds)} seeds (level {design.level(len(seeds)):.4g})...")
        summaries.append(run_grid(look, store_path, providers=providers, artefacts=artefacts,
                                  response_cache=response_cache(args), progress=not args.no_progress))  # fmt: skip
        with ResultsStore(store_path) as store:
            return store.to_frame()

    result = until_decided(run_seeds, design)
    summary = summaries[-1]
    summary.completed = sum(s.completed for s in summaries)
    summary.failed = sum(s.failed for s in summaries)
    final = dataclasses.replace(grid, seeds=tuple(range(result.looks[-1]["n_seeds"])))
    return final, summary, result


def _instrument_check(
    args: argparse.Namespace, grid: Any, artefacts: Any, output: Path, main: Any
) -> dict[str, Any] | None:
    """Run the same grid, on the same seeds, with the lexical reference simulator (a literal reader of the
    prompt's words) to show whether the grid's design *at this size* can detect a word-level signal.

    The claim is about the instrument, never about the LLM: the positive control and the lexical reader are
    both word-presence rules, so a pass shows the grid can detect a signal of that kind and size; it does not
    show why an LLM gains or does not. Returns the printed sentence, a report section and the number of failed
    settings (``None`` when skipped: ``--reference-seeds 0``, no controls, or the demo's simulator is the
    reference).
    """
    import dataclasses

    from xaimetrics.benchmark import ResultsStore, report_section, run_grid
    from xaimetrics.benchmark._assessment import _planning_sentence, assess

    seeds = grid.seeds if args.reference_seeds is None else tuple(range(int(args.reference_seeds)))
    if args.simulator == REFERENCE_SIMULATOR or not seeds or not grid.controls:
        return None
    reference = dataclasses.replace(grid, simulators=(REFERENCE_SIMULATOR,), seeds=seeds)
    n_seeds = len(seeds)
    plural = "s" if n_seeds != 1 else ""
    _say(
        f"Instrument check: the same grid read by the {REFERENCE_SIMULATOR} reference simulator, {n_seeds} seed{plural}..."
    )
    store_path = output / "reference" / "results.sqlite"
    store_path.parent.mkdir(parents=True, exist_ok=True)
    summary = run_grid(  # the same artefacts: the reference grid differs only in its simulator (and seeds if asked)
        reference, store_path, providers=artefacts.providers, artefacts=artefacts,
        response_cache=response_cache(args), progress=not args.no_progress,
    )  # fmt: skip
    with ResultsStore(store_path) as store:
        check = assess(store.to_frame())
    same = (
        "the main grid's seeds" if tuple(seeds) == tuple(grid.seeds) else "seeds other than the main grid's"
    )
    print(f"\nInstrument check: the same grid with the {REFERENCE_SIMULATOR} reference simulator ({n_seeds} seed{plural}, "
          f"{same}; a literal reader of the explanation's words, docs/consim.md): controls")  # fmt: skip
    print(check.controls.to_string(float_format=_three_digits))
    detects, llm = check.verdict.get("detects"), main.verdict.get("detects")
    sentence = check.verdict["sentence"]
    if detects:
        sentence += (
            f" So at {n_seeds} seed{plural} this grid can detect a word-level signal of the size the positive "
            "control gives a literal reader. Both are word-presence rules, so this shows the grid's sensitivity, "
            "not that the methods' explanations carry such a signal"
        )
        sentence += (
            f"; {args.simulator!r} not passing its controls on this grid is therefore not a limit of the grid's "
            "size, though nothing here says why it does not use the explanations."
            if not llm
            else "."
        )
    else:
        sentence += (
            f" So at {n_seeds} seed{plural} this grid could not show even a word-level signal to a literal "
            "reader: a failed or undecided control of the LLM grid at this size says nothing about the LLM."
        )
    sentence += " " + _planning_sentence(check.planning)
    section = report_section(
        f"Instrument check: the {REFERENCE_SIMULATOR} reference simulator", sentence, check.controls
    )
    return {"sentence": sentence, "section": section, "failed": summary.failed, "assessment": check}


def selection_overlap(selections: Sequence[ConSimSamples], *, pool_size: int) -> dict[str, Any]:
    """How many evaluation samples two seeds share, against what independent draws would share by chance.

    Two seeds whose EP samples overlap beyond chance are not independent replicates (issue #21, M7: a small pool
    with few mispredictions puts the same ones in every seed). ``selections`` are the seeds'
    :class:`~xaimetrics.consim.ConSimSamples`; chance is ``n_ep² / pool_size`` for two uniform draws.

    Example:
        >>> from types import SimpleNamespace
        >>> seeds = [SimpleNamespace(ep_texts=("a", "b", "c")), SimpleNamespace(ep_texts=("c", "d", "e"))]
        >>> out = selection_overlap(seeds, pool_size=30)
        >>> out["mean_shared"], round(out["chance"], 2)
        (1.0, 0.3)
    """
    import itertools

    import numpy as np

    sets = [set(s.ep_texts) for s in selections]
    n_ep = int(np.mean([len(s) for s in sets])) if sets else 0
    chance = n_ep**2 / pool_size if pool_size else float("nan")
    pairs = list(itertools.combinations(sets, 2))
    shared = [len(a & b) for a, b in pairs]
    mean = float(np.mean(shared)) if shared else float("nan")
    if not pairs:
        sentence = "One seed: no overlap between seeds to measure."
    else:
        verdict = (
            "about what chance gives: the seeds are independent draws"
            if mean <= 1.5 * chance + 0.5
            else "more than chance: the seeds are not fully independent replicates, so the intervals and p-values "
            "above are somewhat optimistic (the units share samples)"
        )
        sentence = (
            f"Two seeds share {mean:.2f} of their {n_ep} evaluation samples on average ({len(pairs)} pairs; "
            f"max {max(shared)}), against {chance:.2f} for independent draws from the {pool_size}-text pool: "
            f"{verdict}."
        )
    return {
        "mean_shared": mean,
        "chance": chance,
        "max_shared": max(shared) if shared else 0,
        "sentence": sentence,
    }


def _three_digits(value: float) -> str:
    return f"{value:.3f}"


def _concept_metrics(artefacts: Artefacts, grid: Grid) -> pd.DataFrame:
    """App. D metrics of each concept method (first seed, the grid's number of concepts) on the LP/EP pool."""
    import pandas as pd

    from xaimetrics.benchmark import ConceptFit
    from xaimetrics.concepts import concept_metrics

    dataset, model_name, seed = grid.datasets[0], grid.models[0], grid.seeds[0]
    _, pool = artefacts.data(dataset)
    arrays = artefacts.activations(dataset, model_name)
    model = artefacts.model(dataset, model_name)
    rows = {}
    for method in grid.concept_methods:
        k = grid.candidates(method)[0]
        extractor = artefacts.extractor(ConceptFit(dataset, model_name, method, k, seed))
        rows[method] = concept_metrics(model, extractor, arrays["pool"], labels=pool.labels).to_dict()
    return pd.DataFrame(rows).T.rename_axis("method")
