"""``xaimetrics demo``: the main job, fully offline, built to decide.

Loads (fine-tuning once, then from the cache) the positive MiniLM classifier and prints its test accuracy;
fits NMF, SAE, ICA, PCA, SVD and NoProjection concepts and prints their App. D metrics. Then it checks each
simulator before spending on it (:func:`~xaimetrics.benchmark.run_gated`): the local GGUF LLM, scored by its
class probabilities, runs only the baseline and the controls, seed after seed, until they are decided; a
simulator that fails its positive control is reported as not reading the explanations and its method settings
are not run. The lexical reference reader, which certainly reads the explanations' words, is gated on the same
seeds and then measures the concept methods on fresh seeds until each is decided (helps, or does not help by
the margin), with each method's randomised twin (``--twins``; the same extractor on a re-initialised copy of the
classifier) on the same seeds, tested real against twin once the methods are decided. The answer comes first, in a few lines, in the terminal and the report. Everything is stored as
it finishes: an interrupted demo resumes where it stopped, and a rerun only rebuilds the report.
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
    add_registry_argument,
    add_simulator_arguments,
    add_tracking_arguments,
    response_cache,
    track_grid,
)
from xaimetrics._validation import invalid

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from xaimetrics.benchmark import Artefacts, GatedDesign, GatedResult, Grid, Providers
    from xaimetrics.consim import ConSimSamples
    from xaimetrics.data import TextDataset
    from xaimetrics.models import SplitClassifier

__all__ = [
    "demo_design",
    "demo_grid",
    "demo_methods",
    "demo_providers",
    "each_warning_once",
    "register",
    "run",
    "selection_overlap",
]

#: the instrument check's simulator: a literal reader of the prompt's words (it runs on the main grid's seeds)
REFERENCE_SIMULATOR = "lexical"
#: per-concept scores (``--detection``) run on this many of the methods' seeds (each adds every concept's prompts)
DEMO_DETECTION_SEEDS = 3
#: the demo's task and simulator (docs/consim.md, "The demo's task", gives the measurements behind the choice)
DEMO_DATASET = "bbc_news"
DEMO_SIMULATOR = "local"
#: sample texts are cut to this many characters in prompts (BBC articles are long; the prompt's cost is its length)
DEMO_SAMPLE_CHARS = 150
#: the demo classifier's training texts, drawn from BBC News' train split (2,013 articles); the articles it never
#: saw join the test split's 212 in the LP/EP pool, so that the seeds draw their mispredicted samples from dozens
#: of texts rather than the five that a 0.98-accurate classifier gets wrong among 212 (docs/benchmark.md, "The demo")
DEMO_TRAIN_TEXTS = 800
#: one draw of each randomised twin for the whole run (``Grid.twin_seed``): a twin's activations and word
#: activations cost a forward pass of the classifier over the fit texts and the vocabulary, once instead of per seed
DEMO_TWIN_SEED = 0


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
    from xaimetrics.consim import SCORINGS

    parser = subparsers.add_parser(
        "demo",
        help="run the offline ConSim benchmark (BBC News topics, anonymised) and write a report",
        description=(
            "Fine-tune (once) a MiniLM classifier (BBC News by default) and extract concepts with NMF, SAE, ICA, "
            "PCA, SVD and NoProjection. Check each simulator first on its controls (the local LLM, then the "
            "lexical reference reader), adding seeds until decided; measure the concept methods only with a "
            "simulator that passes, on fresh seeds, until each method is decided; print the answer in a few "
            "lines and write an HTML + Markdown report."
        ),
    )
    parser.add_argument("--output", default="xaimetrics-output", help="report folder (default: %(default)s)")
    parser.add_argument(
        "--dataset",
        default=DEMO_DATASET,
        help="offline dataset: rotten_tomatoes, imdb or bbc_news (default: %(default)s)",
    )
    add_registry_argument(parser, "--scoring", SCORINGS, default="probability")
    parser.add_argument(
        "--methods",
        default=",".join(demo_methods()),
        help="comma-separated concept methods, among the registered extractors and NoExplanation "
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
        "--gate-seeds",
        type=int,
        default=8,
        metavar="MAX",
        help="the gate's seed budget: baseline and controls run on 5, 6, … MAX seeds until both controls are "
        "decided (default: %(default)s)",
    )
    parser.add_argument(
        "--method-seeds",
        type=int,
        default=16,
        metavar="MAX",
        help="the methods' seed budget: fresh seeds, 8, 9, … MAX, until every method is decided "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--force-methods",
        action="store_true",
        help="measure the methods even with a simulator that fails its controls (labelled exploratory)",
    )
    parser.add_argument(
        "--twins",
        default="all",
        help="randomised twins the methods phase runs beside each concept method, when its simulator passed its "
        "controls: comma-separated 'all' (every weight re-drawn), 'top' (the head), or 'none' (one draw of each "
        "for the whole run; default: %(default)s)",
    )
    parser.add_argument(
        "--detection",
        default="none",
        help="also score each concept alone with the simulator that measured the methods: comma-separated "
        "'detection', 'intruder', 'embedding', or 'none' (on the methods' first "
        f"{DEMO_DETECTION_SEEDS} seeds; off by default: it adds minutes; default: %(default)s)",
    )
    parser.add_argument(
        "--no-reference",
        action="store_true",
        help="skip the lexical reference reader (a literal reader of the explanations' words)",
    )
    parser.add_argument(
        "--quick", action="store_true", help="a tiny run for smoke tests (NMF and PCA, small budgets)"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_tracking_arguments(parser)
    parser.set_defaults(func=run)
    return parser


def _detection_scorers(args: argparse.Namespace) -> tuple[str, ...]:
    from xaimetrics.benchmark._concept_row import DETECTION_SCORERS

    scorers = tuple(
        t.strip() for t in getattr(args, "detection", "none").split(",") if t.strip() not in ("", "none")
    )
    for scorer in scorers:
        if scorer not in DETECTION_SCORERS:
            raise invalid("--detection", "xaimetrics demo", f"comma-separated {', '.join(DETECTION_SCORERS)} or none",
                          scorer, "Pass e.g. --detection intruder.")  # fmt: skip
    return scorers


def demo_grid(args: argparse.Namespace) -> Grid:
    """The demo's :class:`~xaimetrics.benchmark.Grid` for parsed arguments (its seeds come from the design)."""
    from xaimetrics.benchmark import Grid

    methods = tuple(m.strip() for m in args.methods.split(",") if m.strip())
    common = {
        "datasets": (args.dataset,), "simulators": (args.simulator,), "base_url": args.base_url,
        "concurrency": args.concurrency, "max_sample_chars": DEMO_SAMPLE_CHARS, "controls": False,
        "scoring": args.scoring, "balance": "relaxed" if args.dataset == "bbc_news" else "strict",
    }  # fmt: skip
    if args.quick:
        keep = [m for m in methods if m in ("NMF", "PCA", "NoExplanation")] or ["PCA", "NoExplanation"]
        return Grid(
            methods=tuple(keep), n_concepts=10, prompt_types=("NE2-a", "E2-a"), seeds=(0,), n_lp=6, n_ep=6,
            n_fit=500, pool_size=None if args.dataset == "bbc_news" else 400, **common,
        )  # fmt: skip
    twins = tuple(t.strip() for t in args.twins.split(",") if t.strip() not in ("", "none"))
    return Grid(
        methods=methods, n_concepts=args.n_concepts, randomized_twins=twins, twin_seed=DEMO_TWIN_SEED,
        prompt_types=tuple(p.strip() for p in args.prompt_types.split(",") if p.strip()),
        seeds=(0,), n_lp=args.samples, n_ep=args.samples, n_fit=2000,
        extractor_options={"SAE": {"max_steps": 300}} if "SAE" in methods else None, **common,
    )  # fmt: skip


def demo_design(args: argparse.Namespace) -> GatedDesign:
    """The demo's :class:`~xaimetrics.benchmark.GatedDesign`: the gate from 5 seeds up to ``--gate-seeds``, the
    methods from 8 fresh seeds up to ``--method-seeds`` (``--quick``: 5 and 8, one look each)."""
    from xaimetrics.benchmark import GatedDesign, SequentialDesign

    gate_max, method_max = (5, 8) if args.quick else (args.gate_seeds, args.method_seeds)
    if gate_max < 5:
        raise invalid(
            "--gate-seeds", "xaimetrics demo", "at least 5 (the exact one-sided test cannot reach p < 0.05 with "
            "fewer seeds)", gate_max,
        )  # fmt: skip
    if method_max < 8:
        raise invalid(
            "--method-seeds", "xaimetrics demo", "at least 8 (Holm's level over six methods is out of the exact "
            "test's reach with fewer seeds)", method_max,
        )  # fmt: skip
    return GatedDesign(
        gate=SequentialDesign(max_seeds=gate_max, start=5),
        methods=SequentialDesign(max_seeds=method_max, start=8),
        force_methods=args.force_methods,
    )


def demo_providers(args: argparse.Namespace) -> Providers:
    """The demo's data and classifier. On BBC News: the ``minilm+`` classifier fine-tuned on
    :data:`DEMO_TRAIN_TEXTS` training articles, concepts fitted on those, and the LP/EP pool made of every article
    the classifier never saw (the test split and the rest of the train split). Other datasets: the built-ins."""
    from xaimetrics.benchmark import Providers

    if args.dataset != "bbc_news":
        return Providers(progress=not args.no_progress)

    def training_order() -> tuple[TextDataset, np.ndarray]:
        import numpy as np

        from xaimetrics.data import load_dataset

        train = load_dataset("bbc_news", "train", seed=0)
        return train, np.random.default_rng(0).permutation(len(train))  # the draw of the classifier's recipe

    def dataset(split: str) -> TextDataset:
        import numpy as np

        from xaimetrics.data import TextDataset, load_dataset

        train, order = training_order()
        if split == "train":
            return train.subset(order[:DEMO_TRAIN_TEXTS])
        test, unseen = load_dataset("bbc_news", "test"), train.subset(order[DEMO_TRAIN_TEXTS:])
        return TextDataset(
            [*test.texts, *unseen.texts], np.concatenate([test.labels, unseen.labels]), test.class_names, name="bbc_news",
            split="unseen", info={"parts": "the test split and the train articles the classifier never saw"},
        )  # fmt: skip

    def classifier(dataset_name: str) -> SplitClassifier:
        from xaimetrics.models import load_demo_classifier

        return load_demo_classifier(
            "bbc_news", positive=True, n_train=DEMO_TRAIN_TEXTS, progress=not args.no_progress
        )

    return Providers(
        datasets={"bbc_news": dataset}, models={"minilm+": classifier}, progress=not args.no_progress
    )


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


def _simulator_names(args: argparse.Namespace) -> dict[str, str]:
    local = (
        "The local LLM (Qwen2.5-Coder-0.5B)"
        if args.simulator == "local"
        else f"The simulator {args.simulator!r}"
    )
    return {args.simulator: local, REFERENCE_SIMULATOR: "The lexical reference reader"}


def _run(args: argparse.Namespace) -> int:
    from xaimetrics.benchmark import (
        Artefacts,
        ResultsStore,
        headline,
        plan_gated,
        print_gated,
        run_gated,
        write_report,
    )
    from xaimetrics.benchmark._gated import seeds_used, store_gated_meta

    started = time.perf_counter()
    scorers = _detection_scorers(args)  # refused before anything runs
    grid = demo_grid(args)
    design = demo_design(args)
    output = Path(args.output)
    output.mkdir(parents=True, exist_ok=True)
    providers = demo_providers(args)
    grid = grid.replace(**providers.grid_extras())
    artefacts = Artefacts(grid.artefact_config(), providers, output / "artefacts")
    dataset, model_name = grid.datasets[0], grid.models[0]

    if args.no_progress:  # transformers' own weight-loading bar too
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()
    _say(f"Loading the classifier (fine-tuned once on {dataset}, about a minute on 2 cores, then cached)...")
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
        print(metrics.to_string(float_format=_three_digits))

    simulators = [args.simulator]
    if not args.no_reference and args.simulator != REFERENCE_SIMULATOR:
        simulators.append(REFERENCE_SIMULATOR)
    stores = {
        s: output / ("results.sqlite" if s == args.simulator else "reference/results.sqlite")
        for s in simulators
    }
    plan = plan_gated(grid, design)
    _say(
        f"Plan: each simulator is gated on its controls ({design.gate.looks()[0]}…{design.gate.max_seeds} seeds, "
        f"{plan['per_seed']['gate']} settings a seed), then measures {len(grid.concept_methods)} methods on fresh "
        f"seeds ({design.methods.looks()[0]}…{design.methods.max_seeds}, {plan['per_seed']['methods']} settings a "
        f"seed) if it passes: at most {plan['settings']['total']} settings per simulator."
    )
    results = []
    for simulator in simulators:
        stores[simulator].parent.mkdir(parents=True, exist_ok=True)
        one = grid.replace(simulators=(simulator,))
        part = run_gated(
            one, stores[simulator], design, providers=providers, artefacts=artefacts,
            response_cache=response_cache(args), progress=not args.no_progress, say=_say,
        )  # fmt: skip
        store_gated_meta(stores[simulator], one, design, part)  # 'xaimetrics benchmark report' replays it
        results.extend(part)
    names = _simulator_names(args)
    lines = headline(results, margin=design.margin, names=names)
    measured = next((r for r in results if r.methods is not None and not r.exploratory), None)
    measured = measured or next((r for r in results if r.methods is not None), results[0])
    with ResultsStore(stores[measured.simulator]) as store:
        frame = store.to_frame()
    for simulator, path in stores.items():
        with ResultsStore(path) as store:
            store.export(output / ("results.csv" if simulator == args.simulator else "reference/results.csv"))
    seeds = seeds_used(results)
    overlap = artefacts.json_record(  # stored: a rerun does not redraw every seed's selection
        "selection-overlap",
        [artefacts.model_id(dataset, model_name), seeds, grid.n_lp, grid.n_ep, grid.balance,
         len(artefacts.data(dataset)[1])],
        lambda: selection_overlap(
            [artefacts.samples(dataset, model_name, seed) for seed in seeds], pool=artefacts.data(dataset)[1],
            predictions=artefacts.activations(dataset, model_name)["predictions"],
        ),
    )  # fmt: skip
    sections = _sections(results, names, overlap, design)
    if scorers:
        sections.extend(
            _score_concepts(
                args, grid, measured, stores[measured.simulator], providers, artefacts, frame, scorers
            )
        )
    summary_wall = time.perf_counter() - started
    failed = sum(r.failed for r in results)
    unfitted = sum(r.failed_fits for r in results)
    paths = write_report(
        frame, output, grid=grid.to_dict(), concept_metrics=metrics,
        run={"wall_time_s": summary_wall, "failed": failed, "failed_fits": unfitted},
        title=f"xaimetrics demo — ConSim on {dataset}", headline=lines, sections=sections,
    )  # fmt: skip
    print_gated(results, names)
    print("\nData design: " + overlap["sentence"])
    calls = sum(s.calls for r in results for s in r.summaries)
    cached = sum(s.cached_calls for r in results for s in r.summaries)
    fits = f" ({unfitted} of them because their concepts could not be fitted)" if unfitted else ""
    print(
        f"\n{sum(s.completed for r in results for s in r.summaries)} settings run, {failed} failed{fits}; {calls} "
        f"simulator calls ({cached} cached); wall time {time.perf_counter() - started:.1f} s"
    )
    print(f"Report: {paths['report_html']}  ({paths['report_md'].name} beside it)")
    track_grid(args, frame, grid.to_dict(), [paths["report_html"], paths["report_md"]], output)
    print("\nThe answer")
    for line in lines:
        print(f"- {line}")
    return 0 if failed == unfitted else 1  # a fit that fails fails again: said in the answer, not retried


def _score_concepts(
    args: argparse.Namespace, grid: Grid, measured: GatedResult, store: Path, providers: Providers,
    artefacts: Artefacts, frame: pd.DataFrame, scorers: tuple[str, ...],
) -> list[dict[str, str]]:  # fmt: skip
    """Each concept of the measured methods (and their twins) scored alone by ``measured``'s simulator on the
    methods' first :data:`DEMO_DETECTION_SEEDS` seeds, into the same store; the report's legibility section."""
    from xaimetrics.benchmark import ConceptRow, ResultsStore, concept_sections, run_grid
    from xaimetrics.benchmark._gated import restricted

    if measured.methods is None or measured.exploratory:
        _say("Per-concept scores skipped: no simulator passed its controls to measure the methods.")
        return []
    seeds = tuple(measured.methods.seeds)[:DEMO_DETECTION_SEEDS]
    one = restricted(grid.replace(simulators=(measured.simulator,), detection=scorers),
                     grid.concept_methods, seeds)  # fmt: skip
    _say(f"Scoring each concept alone ({', '.join(scorers)}) on {len(seeds)} seeds...")
    run_grid(one, store, providers=providers, artefacts=artefacts, response_cache=response_cache(args),
             progress=not args.no_progress)  # fmt: skip
    with ResultsStore(store, read_only=True, row_type=ConceptRow) as concepts:
        return concept_sections(concepts.to_frame(), frame)


def _sections(
    results: Sequence[GatedResult], names: dict[str, str], overlap: dict[str, Any], design: GatedDesign
) -> list[dict[str, str]]:
    from xaimetrics.benchmark import gated_sections, report_section

    return [
        *gated_sections(results, names, design),
        report_section("Data design: do the seeds share samples?", overlap["sentence"]),
    ]


def selection_overlap(
    selections: Sequence[ConSimSamples], *, pool: TextDataset, predictions: Sequence[int] | np.ndarray
) -> dict[str, Any]:
    """How many evaluation samples two seeds share, against what independent draws of the same design share.

    Two seeds whose EP samples overlap beyond chance are not independent replicates (issue #21, M7). The
    selection is stratified (classes × correctly / wrongly predicted by f), so chance is not ``n_ep² / pool``:
    two independent draws share ``Σ_c q_c q'_c / N_c`` samples on average, where ``q_c`` is a seed's EP count in
    cell ``c`` and ``N_c`` the pool's. Few mispredicted texts make a small cell that every seed draws from: the
    sentence names the smallest cell, so the reader knows how many distinct mispredictions the result rests on.

    Example:
        >>> from types import SimpleNamespace
        >>> pool = SimpleNamespace(texts=list("abcdefgh"), labels=[0, 0, 0, 0, 1, 1, 1, 1])
        >>> seeds = [SimpleNamespace(ep_texts=("a", "e")), SimpleNamespace(ep_texts=("a", "f"))]
        >>> out = selection_overlap(seeds, pool=pool, predictions=[0, 0, 0, 1, 1, 1, 1, 0])
        >>> out["mean_shared"], round(out["chance"], 3)
        (1.0, 0.667)
    """
    import itertools

    import numpy as np

    predicted = np.asarray(predictions)
    labels = np.asarray(pool.labels)
    cell_of = {t: (int(y), bool(y == p)) for t, y, p in zip(pool.texts, labels, predicted, strict=True)}
    sizes: dict[tuple[int, bool], int] = {}
    for cell in cell_of.values():
        sizes[cell] = sizes.get(cell, 0) + 1
    counts = []
    for selection in selections:
        per_cell: dict[tuple[int, bool], int] = {}
        for text in selection.ep_texts:
            found = cell_of.get(text)
            if found is not None:
                per_cell[found] = per_cell.get(found, 0) + 1
        counts.append(per_cell)
    sets = [set(s.ep_texts) for s in selections]
    pairs = list(itertools.combinations(range(len(sets)), 2))
    shared = [len(sets[i] & sets[j]) for i, j in pairs]
    expected = [
        sum(counts[i].get(c, 0) * counts[j].get(c, 0) / n for c, n in sizes.items()) for i, j in pairs
    ]
    mean = float(np.mean(shared)) if shared else float("nan")
    chance = float(np.mean(expected)) if expected else float("nan")
    n_ep = int(np.mean([len(s) for s in sets])) if sets else 0
    wrong = sum(n for (_, right), n in sizes.items() if not right)
    if not pairs:
        sentence = "One seed: no overlap between seeds to measure."
    else:
        # beyond chance: more than three standard errors of the pairs' mean above the stratified expectation
        spread = (
            float(np.std(np.subtract(shared, expected), ddof=1)) / np.sqrt(len(pairs))
            if len(pairs) > 1
            else 0.0
        )
        beyond = mean > chance + max(3 * spread, 0.25)
        verdict = (
            "more than independent draws share: the seeds are not fully independent replicates, so the intervals "
            "and p-values are somewhat optimistic"
            if beyond
            else "what independent draws of this stratified design share"
        )
        sentence = (
            f"Two of the {len(sets)} seeds share {mean:.2f} of their {n_ep} evaluation samples on average (max "
            f"{max(shared)}), against {chance:.2f} expected for independent draws with the same class × "
            f"right/wrong quotas: {verdict}. The pool has {len(cell_of)} texts, {wrong} of them mispredicted by "
            "the model; the seeds' mispredicted samples come from those."
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
    """App. D metrics of each concept method (seed 0, the grid's number of concepts) on the LP/EP pool, stored
    beside the artefacts (a rerun reads them back instead of refitting six extractors)."""
    import pandas as pd

    from xaimetrics.benchmark import ConceptFit
    from xaimetrics.concepts import concept_metrics

    dataset, model_name, seed = grid.datasets[0], grid.models[0], 0
    fits = [ConceptFit(dataset, model_name, m, grid.candidates(m)[0], seed) for m in grid.concept_methods]

    def compute() -> dict[str, Any]:
        _, pool = artefacts.data(dataset)
        arrays = artefacts.activations(dataset, model_name)
        model = artefacts.model(dataset, model_name)
        return {
            fit.method: concept_metrics(
                model, artefacts.extractor(fit), arrays["pool"], labels=pool.labels
            ).to_dict()
            for fit in fits
        }

    parts = [
        artefacts.model_id(dataset, model_name), [(f.method, f.n_concepts, f.seed) for f in fits],
        {m: grid.options(m) for m in grid.concept_methods}, grid.n_fit, grid.pool_size, len(artefacts.data(dataset)[1]),
    ]  # fmt: skip
    rows = artefacts.json_record("concept-metrics", parts, compute)
    return pd.DataFrame(rows).T.rename_axis("method") if rows else pd.DataFrame()
