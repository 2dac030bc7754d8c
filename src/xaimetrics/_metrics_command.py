"""``xaimetrics metrics``: every metric the library ships, with its direction, range, data types and category.

A thin client of :data:`xaimetrics.METRICS`: a Markdown table by default (the one in ``docs/metrics.md``),
``--json`` for a list of objects (an infinite end of a range is ``null``), ``--family`` to keep one family.
"""

from __future__ import annotations

import argparse
import json

from xaimetrics._metric_entries import METRICS
from xaimetrics._metric_listing import metrics_table
from xaimetrics._metric_registry import FAMILIES

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Add the ``metrics`` sub-command."""
    parser = subparsers.add_parser(
        "metrics",
        help="list every metric: family, direction (higher/lower is better), range, data types, category",
        description=(
            "List every metric xaimetrics ships, from its metric registry: the family it is imported from, "
            "which direction is better, its range, the data it applies to, what it measures, the Python "
            "callables and the reference library whose numbers it reproduces."
        ),
    )
    parser.add_argument("--family", choices=FAMILIES, help="only the metrics of this family")
    parser.add_argument("--json", action="store_true", help="print a JSON list of objects instead of a table")
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Print the listing; returns the exit code."""
    if args.json:
        rows = [
            entry.value.to_dict(entry.description)
            for entry in METRICS.entries()
            if args.family is None or entry.value.family == args.family
        ]
        print(json.dumps(rows, indent=2, ensure_ascii=False, allow_nan=False))
    else:
        print(metrics_table(args.family))
    return 0
