"""``xaimetrics benchmark``: run a grid from a TOML file (resumable) and write its report.

    xaimetrics benchmark run grid.toml --output results/      # run (or resume) and write the report
    xaimetrics benchmark report --output results/             # rebuild the report from the stored results
    xaimetrics benchmark export --output results/ rows.parquet
    xaimetrics benchmark rank --output results/ --by interpretation   # rank any grid axis

``--rank-by AXIS`` (``run`` and ``report``, repeatable) adds a ranking of that grid axis to the report.

``run --sequential`` (or a ``[sequential]`` table in the grid file, :func:`~xaimetrics.benchmark._design_file.load_design`) gates
each simulator on its controls, then measures the concept methods on fresh seeds until decided
(:func:`~xaimetrics.benchmark.run_gated`); the answer comes first, in the terminal and the report, and ``report``
rebuilds it from the stored rows. ``run --dry-run`` prints the plan and its worst-case budget without a call.

``--providers module:attribute`` names a :class:`~xaimetrics.benchmark.Providers` object registering your own
datasets, models or simulators (the module must be importable).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from xaimetrics._arguments import (
    add_portable_argument,
    add_tracking_arguments,
    grid_trackers,
    response_cache,
    track_grid,
)
from xaimetrics._validation import invalid
from xaimetrics._writes import write_failure_cause
from xaimetrics.exceptions import InvalidParameterError, StoreError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from xaimetrics.benchmark import GatedDesign, GatedResult, Grid, Providers, ResultsStore, RunSummary

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Add the ``benchmark`` sub-command (``run``, ``report``, ``export``)."""
    parser = subparsers.add_parser(
        "benchmark",
        help="run a ConSim grid from a TOML file and write its ranking report",
        description="Run a ConSim experiment grid (resumable), rank the methods and write an HTML/Markdown report.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    run = actions.add_parser("run", help="run (or resume) a grid, then write the report")
    run.add_argument("grid", help="the grid's TOML file")
    run.add_argument("--output", default="xaimetrics-benchmark", help="results folder (default: %(default)s)")
    run.add_argument(
        "--backend", default="local", choices=("local", "ray"), help="where to run (default: local)"
    )
    run.add_argument("--providers", default=None, help="'module:attribute' of a Providers object")
    run.add_argument("--no-cache", action="store_true", help="do not use the simulator response cache")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_portable_argument(run)
    run.add_argument("--rank-by", action="append", default=None, metavar="AXIS", help=_RANK_BY_HELP)
    run.add_argument(
        "--wait", action="store_true", help="when another run uses the folder, wait for it instead of exiting"
    )
    batch = run.add_argument_group(
        "batch jobs",
        "Send the pending settings of OpenAI-compatible simulators as Batch API jobs (50 %% cheaper, results within "
        "24 h). Ctrl-C leaves a batch running; the same command again waits for it (no new upload).",
    )
    batch.add_argument("--batch", action="store_true", help="submit the pending settings as batch jobs")
    batch.add_argument(
        "--cancel", action="store_true",
        help="cancel the batches a --batch run left running, store what they finished, ask nothing else",
    )  # fmt: skip
    batch.add_argument(
        "--batch-poll-s", type=float, default=30.0, metavar="S",
        help="seconds between two looks at a running batch (default: %(default)s)",
    )  # fmt: skip
    sequential = run.add_argument_group(
        "gate first, then measure",
        "Check each simulator on its controls, then measure the concept methods on fresh seeds until each is decided "
        "(the grid's 'seeds' are ignored). A [sequential] table in the grid file sets the same keys; these flags "
        "override it, and any of them implies --sequential.",
    )
    sequential.add_argument("--sequential", action="store_true", help="use the gated sequential design")
    for flag, kind, metavar, text in _SEQUENTIAL_FLAGS:
        sequential.add_argument(flag, type=kind, default=None, metavar=metavar, help=text)
    sequential.add_argument(
        "--force-methods", action="store_true", default=None,
        help="measure the methods even with a simulator that fails its controls (labelled exploratory)",
    )  # fmt: skip
    run.add_argument(
        "--dry-run", action="store_true",
        help="print the plan and its worst-case budget (settings, estimated tokens, dollars) and exit: no call, "
        "nothing written",
    )  # fmt: skip
    run.add_argument(
        "--price-per-1k-tokens", default=None, metavar="IN,OUT", type=_price,
        help="USD per 1,000 prompt and completion tokens, for the dry run's dollar estimate (e.g. 0.15,0.6)",
    )  # fmt: skip
    add_tracking_arguments(run)
    run.set_defaults(func=_run)
    report = actions.add_parser("report", help="rebuild the report from the stored results")
    report.add_argument(
        "--output", default="xaimetrics-benchmark", help="results folder (default: %(default)s)"
    )
    report.add_argument("--rank-by", action="append", default=None, metavar="AXIS", help=_RANK_BY_HELP)
    report.add_argument(
        "--report-dir", default=None,
        help="write the report here instead of into --output (e.g. for a read-only archived folder)",
    )  # fmt: skip
    add_tracking_arguments(report)
    report.set_defaults(func=_report)
    rank = actions.add_parser("rank", help="print the Copeland ranking and paired t-tests of one grid axis")
    rank.add_argument(
        "--by", default="method",
        help="the axis: 'method' (extraction), 'interpretation', or a column of the results (default: %(default)s)",
    )  # fmt: skip
    rank.add_argument(
        "--output", default="xaimetrics-benchmark", help="results folder (default: %(default)s)"
    )
    rank.add_argument(
        "--metric", default="auto", choices=("auto", "score", "expected_accuracy"),
        help="the score ranked: 'auto' is the report's (expected accuracy when every setting has class "
        "probabilities, else eq. 5's accuracy) (default: %(default)s)",
    )  # fmt: skip
    rank.set_defaults(func=_rank)
    export = actions.add_parser("export", help="export the stored results to .csv or .parquet")
    export.add_argument("path", help="the file to write (.csv or .parquet)")
    export.add_argument(
        "--output", default="xaimetrics-benchmark", help="results folder (default: %(default)s)"
    )
    export.set_defaults(func=_export)
    return parser


_RANK_BY_HELP = "also rank this grid axis in the report (e.g. interpretation); repeatable"
_SEQUENTIAL_FLAGS = (
    ("--gate-seeds", int, "MAX", "the gate's seed budget: looks at 5, 6, … MAX seeds (default 8)"),
    ("--method-seeds", int, "MAX", "the methods' budget of fresh seeds: looks at 8, 9, … MAX (default 16)"),
    ("--max-tokens", int, "N", "stop a part (gate or methods) of a simulator once its looks used N tokens"),
    ("--max-cost-usd", float, "USD", "stop a part of a simulator once its looks cost this much"),
)


def _price(text: str) -> tuple[float, float]:
    """``"IN,OUT"`` as two non-negative floats."""
    parts = text.split(",")
    try:
        values = tuple(float(p) for p in parts)
    except ValueError:
        values = ()
    if len(values) != 2 or not all(v >= 0 for v in values):
        raise argparse.ArgumentTypeError(
            f"expected IN,OUT: two non-negative USD prices per 1,000 tokens (e.g. 0.15,0.6); got {text!r}"
        )
    return (values[0], values[1])


def _store_path(output: str) -> Path:
    path = Path(output) / "results.sqlite"
    if not path.is_file():
        raise invalid("--output", "xaimetrics benchmark", "a folder holding results.sqlite", output,
                      "Run 'xaimetrics benchmark run GRID.toml --output FOLDER' first.")  # fmt: skip
    return path


def _open_results(output: str) -> ResultsStore:
    """The stored results of a folder, refusing a store that holds none (an export or report of nothing)."""
    from xaimetrics.benchmark import ResultsStore

    path = _store_path(output)
    store = ResultsStore(path, read_only=True)  # writes nothing: works on an archived, read-only folder
    if len(store) == 0:
        store.close()
        raise StoreError(
            f"The results store {path} holds no results. Run 'xaimetrics benchmark run GRID.toml --output "
            f"{output}' first; if it held results before, restore it from a backup."
        )
    return store


def _design(args: argparse.Namespace, grid: Grid) -> GatedDesign | None:
    """The gated design the grid file and the flags ask for, or ``None`` for a plain run."""
    from xaimetrics.benchmark._design_file import design_from_table
    from xaimetrics.benchmark._grid import SEQUENTIAL_TABLE, read_grid_file

    flags = {flag.lstrip("-").replace("-", "_"): getattr(args, flag.lstrip("-").replace("-", "_"))
             for flag, *_ in _SEQUENTIAL_FLAGS}  # fmt: skip
    flags["force_methods"] = args.force_methods
    table = read_grid_file(args.grid).get(SEQUENTIAL_TABLE)
    if table is None and not args.sequential and all(v is None for v in flags.values()):
        return None
    design = design_from_table(
        {} if table is None else table, n_methods=len(grid.concept_methods), flags=flags
    )
    for option, value in (("--backend", args.backend != "local"), ("--wait", args.wait)):
        if value:
            raise invalid(option, "xaimetrics benchmark run --sequential", "left out (the gated run is local)",
                          getattr(args, option.lstrip("-")), "Drop it, or run the grid without --sequential.")  # fmt: skip
    return design


def _dry_run(grid: Grid, design: GatedDesign | None, args: argparse.Namespace) -> int:
    """Print the plan and its worst-case budget; nothing is built, called or written."""
    from xaimetrics.benchmark._budget import (
        ASSUMED_CLASSES,
        CHARS_PER_TOKEN,
        DEFAULT_TEXT_CHARS,
        budget_table,
    )
    from xaimetrics.benchmark._report import markdown_table

    table = budget_table(grid, design, price=args.price_per_1k_tokens)
    if design is None:
        print(
            f"Dry run: {len(grid.settings())} settings on seeds {list(grid.seeds)}; nothing was called or written."
        )
    else:
        print(
            f"Dry run (gate first, then measure); nothing was called or written. The grid's seeds are ignored.\n"
            f"Gate: baseline and both controls, looks at {design.gate.looks()} seeds (seeds "
            f"{design.gate_seeds()[0]}–{design.gate_seeds()[-1]}); the negative control only while the positive one "
            f"has not failed.\nMethods: {len(grid.concept_methods)} concept methods and the baseline on fresh seeds, "
            f"looks at {design.methods.looks()} seeds (seeds {design.method_seeds()[0]}–{design.method_seeds()[-1]}), "
            f"only with a simulator that passes{' (or forced)' if design.force_methods else ''}.\n"
            f"α = {design.gate.alpha:g} per part over all looks, margin ±{design.margin:g}. Worst case below: every "
            "look made."
        )
    print()
    print(markdown_table(table))
    text = f"max_sample_chars = {grid.max_sample_chars}" if grid.max_sample_chars else (
        f"{DEFAULT_TEXT_CHARS} characters a text (the grid sets no max_sample_chars)")  # fmt: skip
    print(
        f"\nTokens are an estimate: each prompt rendered on stand-in inputs ({grid.n_lp} LP + {grid.n_ep} EP texts, "
        f"{text}, {ASSUMED_CLASSES} classes, every concept shown) at {CHARS_PER_TOKEN} characters a token."
        + ("" if args.price_per_1k_tokens else " Add --price-per-1k-tokens IN,OUT for dollars.")
    )
    return 0


def _run(args: argparse.Namespace) -> int:
    from xaimetrics.benchmark import Providers, RunInterrupted, load_grid, run_grid

    output = Path(args.output)
    resume = f"xaimetrics benchmark run {args.grid} --output {args.output}"
    try:
        providers = Providers.load(args.providers, owner="xaimetrics benchmark run")
        grid = load_grid(args.grid, **providers.grid_extras())
        design = _design(args, grid)
        if args.dry_run:
            return _dry_run(grid, design, args)
        try:
            output.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise StoreError(
                f"Cannot create the results folder {output}: {write_failure_cause(output, error)}."
            ) from error
        grid_trackers(args, "xaimetrics-consim", output)  # a bad --mlflow-uri or a missing wandb fails now
        if design is not None:
            if args.cancel:
                raise invalid(
                    "--cancel", "xaimetrics benchmark run", "a run without the sequential design", "--sequential",
                    "Cancel with the same command without the --sequential flags.",
                )  # fmt: skip
            return _run_gated(grid, design, providers, output, args)
        print(
            f"{len(grid.settings())} evaluation settings; results in {output / 'results.sqlite'}",
            file=sys.stderr,
        )
        summary = run_grid(
            grid, output / "results.sqlite", providers=providers, artefact_dir=output / "artefacts",
            response_cache=response_cache(args), backend=args.backend, progress=not args.no_progress,
            wait=args.wait, calls="cancel" if args.cancel else "batch" if args.batch else "live",
            batch_poll_s=args.batch_poll_s,
        )  # fmt: skip
    except RunInterrupted as stopped:
        how = "at once (calls in flight abandoned)" if stopped.immediate else "after the calls in flight"
        print(
            f"Interrupted: stopped {how}, no call started after Ctrl-C; {stopped.stored} of "
            f"{stopped.summary.total} settings stored in {output / 'results.sqlite'}. Resume with: {resume}",
            file=sys.stderr,
        )
        # Everything stored is committed and the store is closed: exit now, without waiting for the abandoned
        # calls' threads (second Ctrl-C) or for the interpreter's slow teardown of torch & co (seconds); the
        # children (local models' workers, Ray) first, as os._exit runs no finaliser.
        from xaimetrics._interrupts import exit_now_on_interrupt, stop_children

        exit_now_on_interrupt()
        stop_children()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)
    except KeyboardInterrupt:
        print(
            f"Interrupted before the first call: nothing new stored. Start again with: {resume}",
            file=sys.stderr,
        )
        return 130
    print(f"{summary.completed} run, {summary.skipped} already stored, {summary.failed} failed "
          f"({summary.calls} calls, {summary.cached_calls} cached, {summary.total_tokens:,} tokens, "
          f"{summary.cached_prompt_tokens:,} prompt tokens from the provider's cache, "
          f"${summary.cost_usd:.4f}{_batch_note(summary)}) in {summary.wall_time_s:.1f} s")  # fmt: skip
    concepts = summary.concepts
    if concepts.total:  # the grid's per-concept scores (Grid.detection)
        print(f"Concepts: {concepts.completed} scored, {concepts.skipped} already stored, {concepts.failed} failed "
              f"(not stored), {concepts.left_out} left out ({concepts.answers} reader answers)")  # fmt: skip
    for note in summary.notes:
        print(f"Note: {note}", file=sys.stderr)
    for failure in summary.errors[:5]:
        print(f"  failed: {failure}", file=sys.stderr)
    _write(output, summary.as_dict(), args)
    return 0 if summary.failed == 0 and concepts.failed == 0 else 1


def _batch_note(summary: RunSummary) -> str:
    """The cost line's batch part: requests answered by batches at the discount, and what it saved."""
    if not summary.batch_answered and not summary.batch_retried_live:
        return ""
    from xaimetrics.benchmark._batch import BATCH_PRICE_FACTOR

    return (
        f", {summary.batch_answered} from batch jobs at {1 - BATCH_PRICE_FACTOR:.0%} off (saved "
        f"${summary.batch_saved_usd:.4f}), {summary.batch_retried_live} asked live after their batch"
    )


def _run_gated(
    grid: Grid, design: GatedDesign, providers: Providers, output: Path, args: argparse.Namespace
) -> int:
    """``run`` with the gated design: gate, measure, print the tables and the answer, write the report."""
    from xaimetrics.benchmark import Artefacts, ResultsStore, print_gated, run_gated
    from xaimetrics.benchmark._gated import store_gated_meta

    store = output / "results.sqlite"
    gate, methods = design.gate_seeds(), design.method_seeds()
    print(f"Sequential design: the grid's seeds {list(grid.seeds)} are ignored (gate: seeds {gate[0]}–{gate[-1]}, "
          f"methods: fresh seeds {methods[0]}–{methods[-1]}) and both controls run in the gate; results in {store}",
          file=sys.stderr)  # fmt: skip
    results = run_gated(
        grid, store, design, providers=providers, artefacts=Artefacts(grid.artefact_config(), providers, output / "artefacts"),
        response_cache=response_cache(args), progress=not args.no_progress, say=_say,
        batch=args.batch, batch_poll_s=args.batch_poll_s,
    )  # fmt: skip
    store_gated_meta(
        store, grid, design, results
    )  # what 'report' needs to rebuild the verdicts from the rows
    summaries = [s for r in results for s in r.summaries]
    failed = sum(r.failed for r in results)
    print_gated(results)
    with ResultsStore(store, read_only=True) as results_store:
        n_stored = len(results_store)
    print(f"\n{sum(s.completed for s in summaries)} settings run ({n_stored} stored in all), {failed} failed; "
          f"{sum(s.calls for s in summaries)} simulator calls ({sum(s.cached_calls for s in summaries)} cached), "
          f"{sum(s.total_tokens for s in summaries):,} tokens, ${sum(s.cost_usd for s in summaries):.4f}; "
          f"{sum(s.wall_time_s for s in summaries):.1f} s")  # fmt: skip
    for failure in [e for s in summaries for e in s.errors][:5]:
        print(f"  failed: {failure}", file=sys.stderr)
    lines = _write(
        output, {"wall_time_s": sum(s.wall_time_s for s in summaries)}, args, gated=(results, design)
    )
    print("\nThe answer")
    for line in lines:
        print(f"- {line}")
    return 0 if failed == 0 else 1


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


#: the store's meta entry of a gated run: its design, simulators and whether it listed concept methods


def _write(
    output: Path,
    run: dict[str, object] | None,
    args: argparse.Namespace,
    to: Path | None = None,
    gated: tuple[Sequence[GatedResult], GatedDesign] | None = None,
) -> list[str]:
    """Write the report; a gated run's answer (``gated``, or rebuilt from the stored rows) comes first. Returns
    the answer's lines (none for a plain run)."""
    from xaimetrics._reporting import report_sections
    from xaimetrics.benchmark import (
        GatedDesign,
        ResultsStore,
        gated_sections,
        headline,
        replay_gated,
        write_report,
    )
    from xaimetrics.benchmark._gated import GATED_META

    with ResultsStore(output / "results.sqlite", read_only=True) as store:
        frame, grid = store.to_frame(), store.get_meta("grid", {})
        stored = store.get_meta(GATED_META)
    sections = []
    lines: list[str] = []
    if gated is None and stored:  # recomputed from the rows: the verdicts are the run's
        design = GatedDesign.from_dict(stored["design"])
        gated = (replay_gated(frame, design, stored["simulators"], has_methods=stored["has_methods"]), design)
    if gated is not None:
        results, design = gated
        lines = headline(results, margin=design.margin)
        sections.extend(gated_sections(results, None, design))
    from xaimetrics.benchmark._concept_report import concept_frame, concept_sections

    sections.extend(concept_sections(concept_frame(output / "results.sqlite"), frame))
    sections.extend(report_sections(output / "results.sqlite", frame))  # e.g. a human study's comparison
    target = output if to is None else to
    try:
        paths = write_report(
            frame, target, grid=grid, run=run, axes=args.rank_by, sections=sections, headline=lines
        )
    except OSError as error:
        raise StoreError(
            f"Cannot write the report into {target}: {write_failure_cause(Path(error.filename or target), error)}."
            " The results were not changed; 'xaimetrics benchmark report --output FOLDER --report-dir OTHER' "
            "writes it elsewhere."
        ) from error
    print(f"Report: {paths['report_html']}")
    track_grid(args, frame, grid, [paths["report_html"], paths["report_md"]], target)
    return lines


def _report(args: argparse.Namespace) -> int:
    _open_results(args.output).close()
    grid_trackers(args, "xaimetrics-consim", args.report_dir or args.output)
    lines = _write(Path(args.output), None, args, None if args.report_dir is None else Path(args.report_dir))
    if lines:
        print("\nThe answer")
        for line in lines:
            print(f"- {line}")
    return 0


def _rank(args: argparse.Namespace) -> int:
    from xaimetrics.benchmark import assess
    from xaimetrics.benchmark._analysis import overall_statistics
    from xaimetrics.benchmark._report import _pairs_table, axis_ranking, markdown_table, method_ranking

    with _open_results(args.output) as store:
        frame = store.to_frame()
    assessment = assess(frame, metric=args.metric)
    if args.by == "method":
        long, table = method_ranking(assessment)
        if long["method"].nunique() < 2:
            raise invalid("--by", "xaimetrics benchmark rank", "an axis with two or more values in shared settings",
                          "fewer than two methods", "Run more of the grid first.")  # fmt: skip
        pairs = _pairs_table(overall_statistics(long)[1], list(table.index))
        controls = " Controls are left out (they check the reader; see the report's controls table)."
    else:
        try:
            ranked = axis_ranking(frame, args.by, assessment.metric)
        except InvalidParameterError as error:  # name the option, not the API argument
            raise InvalidParameterError(
                str(error).replace("'axis' parameter of ranking_frame", "'--by' option")
            ) from error
        if ranked is None:
            raise invalid("--by", "xaimetrics benchmark rank", "an axis with two or more values in shared settings",
                          f"fewer than two values of {args.by!r}", "Run more of the grid first.")  # fmt: skip
        table, pairs = ranked
        controls = ""
    print(
        f"Ranked by {assessment.metric} ({_METRIC_WORDS[assessment.metric]}), as the report in {args.output} is; "
        f"tests over seeds, Holm-adjusted over the pairs shown.{controls}\n"
    )
    print(markdown_table(table))
    print()
    print(markdown_table(pairs, index=False))
    return 0


_METRIC_WORDS = {
    "score": "eq. 5's accuracy of the reader's answers",
    "expected_accuracy": "the probability the reader gives the model's class",
}


def _export(args: argparse.Namespace) -> int:
    with _open_results(args.output) as store:
        print(store.export(args.path))
    return 0
