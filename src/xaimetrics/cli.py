"""The ``xaimetrics`` command: a thin client of the public API.

Each sub-command lives in the family it belongs to, in a ``_command.py`` module exposing
``register(subparsers)``, which adds an ``argparse`` parser whose ``func`` default takes the parsed
arguments and returns an exit code. The global options ``-v``/``--verbose`` (repeatable) and ``--log-level`` come
before the sub-command and show the ``xaimetrics`` log records (retries, cache hits, fallbacks, skipped
settings) on stderr; warnings are shown by default. User mistakes (:class:`~xaimetrics.exceptions.XaimetricsError`) print as
one ``Type: message`` line and exit with code 1, without a traceback. A Ctrl-C (or SIGTERM) prints one line and
exits with code 130; a second one ends the process at once, without a traceback, and no child process (a local
model's worker, Ray) outlives the command (:mod:`xaimetrics._interrupts`).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import sys
from collections.abc import Sequence

from xaimetrics import __version__
from xaimetrics._interrupts import exit_now_on_interrupt, stop_children, terminate_as_interrupt
from xaimetrics._logging import LOG_LEVELS, level_from_options, log_to_stderr
from xaimetrics._progress import bars_disabled, no_progress_bars
from xaimetrics.exceptions import XaimetricsError

__all__ = ["build_parser", "main"]

#: sub-command modules, in the order ``--help`` lists them
COMMAND_MODULES: tuple[str, ...] = (
    "xaimetrics._demo",
    "xaimetrics.consim._command",
    "xaimetrics.detection._command",
    "xaimetrics.benchmark._command",
    "xaimetrics.representation._command",
    "xaimetrics.studies._command",
    "xaimetrics.models._command",
    "xaimetrics._metrics_command",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="xaimetrics", description="Evaluate explanations of machine-learning models."
    )
    parser.add_argument("--version", action="version", version=f"xaimetrics {__version__}")
    parser.add_argument(
        "-v", "--verbose", action="count", default=0,
        help="log more on stderr: -v retries, fallbacks and skipped settings (INFO), -vv also cache hits (DEBUG)",
    )  # fmt: skip
    parser.add_argument(
        "--log-level", type=str.upper, choices=LOG_LEVELS, metavar="LEVEL",
        help=f"the least severe log records shown on stderr, one of {', '.join(LOG_LEVELS)} (default WARNING)",
    )  # fmt: skip
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMAND_MODULES:
        importlib.import_module(module).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    restore_sigterm = terminate_as_interrupt()
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return 2
        from xaimetrics._arguments import apply_portable_argument

        apply_portable_argument(args)
        quiet = getattr(args, "no_progress", False) or bars_disabled()  # every bar, transformers' too
        with (
            log_to_stderr(level_from_options(args.verbose, args.log_level)),
            no_progress_bars() if quiet else contextlib.nullcontext(),
        ):
            code = int(args.func(args) or 0)
    except XaimetricsError as error:
        print(f"{type(error).__name__}: {error}", file=sys.stderr)
        code = 1
    except KeyboardInterrupt:  # also during start-up (imports, model loading): one line, no traceback
        exit_now_on_interrupt()  # a second Ctrl-C while the interpreter winds down: no traceback either
        stop_children()
        print("Interrupted.", file=sys.stderr)
        return 130
    restore_sigterm()
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
