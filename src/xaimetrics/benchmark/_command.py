"""``xaimetrics benchmark``: run a grid from a TOML file (resumable) and write its report.

    xaimetrics benchmark run grid.toml --output results/      # run (or resume) and write the report
    xaimetrics benchmark report --output results/             # rebuild the report from the stored results
    xaimetrics benchmark export --output results/ rows.parquet
    xaimetrics benchmark rank --output results/ --by interpretation   # rank any grid axis

``--rank-by AXIS`` (``run`` and ``report``, repeatable) adds a ranking of that grid axis to the report.

``--providers module:attribute`` names a :class:`~xaimetrics.benchmark.Providers` object registering your own
datasets, models or simulators (the module must be importable).
"""

from __future__ import annotations

import argparse
import importlib
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
    from xaimetrics.benchmark import Providers, ResultsStore

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
    rank.set_defaults(func=_rank)
    export = actions.add_parser("export", help="export the stored results to .csv or .parquet")
    export.add_argument("path", help="the file to write (.csv or .parquet)")
    export.add_argument(
        "--output", default="xaimetrics-benchmark", help="results folder (default: %(default)s)"
    )
    export.set_defaults(func=_export)
    return parser


_RANK_BY_HELP = "also rank this grid axis in the report (e.g. interpretation); repeatable"


def _providers(spec: str | None) -> Providers:
    from xaimetrics.benchmark import Providers

    if spec is None:
        return Providers()
    module_name, _, attribute = spec.partition(":")
    try:
        value = getattr(importlib.import_module(module_name), attribute or "PROVIDERS")
    except (ImportError, AttributeError) as error:
        raise invalid("--providers", "xaimetrics benchmark run", "'module:attribute' of a Providers object", spec,
                      f"It could not be loaded ({error}).") from error  # fmt: skip
    if not isinstance(value, Providers):
        raise invalid("--providers", "xaimetrics benchmark run", "a Providers object", type(value).__name__)
    return value


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


def _run(args: argparse.Namespace) -> int:
    from xaimetrics.benchmark import RunInterrupted, load_grid, run_grid

    output = Path(args.output)
    resume = f"xaimetrics benchmark run {args.grid} --output {args.output}"
    try:
        providers = _providers(args.providers)
        grid = load_grid(args.grid, **providers.grid_extras())
        try:
            output.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise StoreError(
                f"Cannot create the results folder {output}: {write_failure_cause(output, error)}."
            ) from error
        grid_trackers(args, "xaimetrics-consim", output)  # a bad --mlflow-uri or a missing wandb fails now
        print(
            f"{len(grid.settings())} evaluation settings; results in {output / 'results.sqlite'}",
            file=sys.stderr,
        )
        summary = run_grid(
            grid, output / "results.sqlite", providers=providers, artefact_dir=output / "artefacts",
            response_cache=response_cache(args), backend=args.backend, progress=not args.no_progress,
            wait=args.wait,
        )  # fmt: skip
    except RunInterrupted as stopped:
        how = "at once (calls in flight abandoned)" if stopped.immediate else "after the calls in flight"
        print(
            f"Interrupted: stopped {how}, no call started after Ctrl-C; {stopped.stored} of "
            f"{stopped.summary.total} settings stored in {output / 'results.sqlite'}. Resume with: {resume}",
            file=sys.stderr,
        )
        # Everything stored is committed and the store is closed: exit now, without waiting for the abandoned
        # calls' threads (second Ctrl-C) or for the interpreter's slow teardown of torch & co (seconds).
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
          f"${summary.cost_usd:.4f}) in {summary.wall_time_s:.1f} s")  # fmt: skip
    for failure in summary.errors[:5]:
        print(f"  failed: {failure}", file=sys.stderr)
    _write(output, summary.as_dict(), args)
    return 0 if summary.failed == 0 else 1


def _write(
    output: Path, run: dict[str, object] | None, args: argparse.Namespace, to: Path | None = None
) -> None:
    from xaimetrics.benchmark import ResultsStore, write_report

    with ResultsStore(output / "results.sqlite", read_only=True) as store:
        frame, grid = store.to_frame(), store.get_meta("grid", {})
    sections = []
    if len(frame) and (frame["simulator"] == "human").any():  # rows exported by a human study
        from xaimetrics.studies import agreement_section

        sections.append(agreement_section(output / "results.sqlite"))
    target = output if to is None else to
    try:
        paths = write_report(frame, target, grid=grid, run=run, axes=args.rank_by, sections=sections)
    except OSError as error:
        raise StoreError(
            f"Cannot write the report into {target}: {write_failure_cause(Path(error.filename or target), error)}."
            " The results were not changed; 'xaimetrics benchmark report --output FOLDER --report-dir OTHER' "
            "writes it elsewhere."
        ) from error
    print(f"Report: {paths['report_html']}")
    track_grid(args, frame, grid, [paths["report_html"], paths["report_md"]], target)


def _report(args: argparse.Namespace) -> int:
    _open_results(args.output).close()
    grid_trackers(args, "xaimetrics-consim", args.report_dir or args.output)
    _write(Path(args.output), None, args, None if args.report_dir is None else Path(args.report_dir))
    return 0


def _rank(args: argparse.Namespace) -> int:
    from xaimetrics.benchmark import ranking_frame, rankings_by
    from xaimetrics.benchmark._analysis import overall_statistics
    from xaimetrics.benchmark._report import _pairs_table, markdown_table

    with _open_results(args.output) as store:
        frame = store.to_frame()
    try:
        long = ranking_frame(frame, axis=args.by)
    except InvalidParameterError as error:  # name the option, not the API argument
        raise InvalidParameterError(
            str(error).replace("'axis' parameter of ranking_frame", "'--by' option")
        ) from error
    if long[args.by].nunique() < 2:
        raise invalid("--by", "xaimetrics benchmark rank", "an axis with two or more values in shared settings",
                      f"{long[args.by].nunique()} value(s) of {args.by!r}", "Run more of the grid first.")  # fmt: skip
    table = rankings_by(long, axis=args.by)[()]
    _, differences = overall_statistics(long, axis=args.by)
    print(markdown_table(table))
    print()
    print(markdown_table(_pairs_table(differences, list(table.index)), index=False))
    return 0


def _export(args: argparse.Namespace) -> int:
    with _open_results(args.output) as store:
        print(store.export(args.path))
    return 0
