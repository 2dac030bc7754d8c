"""Adversarial simulator answers of a given size, for the parser's linear-time test and benchmark.

Each generator returns a text of about ``size`` characters built to hit one costly path of
:func:`xaimetrics.consim._parsing.parse_answers`: unclosed or repeated ``<think>`` tags (a non-greedy ``.*?`` regex is
quadratic on them), characters whose lower-case form is longer (``İ``), long separator runs after ``sample``,
huge ids, thousands of distinct unexpected ids, one id repeated, long lines of class words, JSON escapes and
long bullet lines without any sample mention (the bare ``id: class`` fallback).

Used by ``tests/consim/test_parsing.py`` and ``benchmarks/bench_parse_worst_case.py``.

Example:
    >>> sorted(len(make(1000)) >= 1000 for make in GENERATORS.values()) == [True] * len(GENERATORS)
    True
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["CLASSES", "GENERATORS", "IDS"]

#: the classes and ids the adversarial answers are parsed against
CLASSES = ["prime", "not prime", "Sci/Tech", "Class_1", "Class_10"]
IDS = [str(i) for i in range(20, 40)]


def _repeat(unit: str, size: int) -> str:
    return unit * (size // len(unit) + 1)


def _distinct_ids(size: int) -> str:
    parts, total, i = [], 0, 0
    while total < size:
        part = f"Sample_{1000 + i}: prime\n"
        parts.append(part)
        total += len(part)
        i += 1
    return "".join(parts)


GENERATORS: dict[str, Callable[[int], str]] = {
    "unclosed <think>": lambda size: _repeat("<think>", size),
    "lone </think>": lambda size: _repeat("</think>", size),
    "<think> then İ": lambda size: _repeat("<think>İ", size) + "</think>Sample_20: prime",
    "İ before </think>": lambda size: _repeat("İ", size) + "</think>Sample_20: Sci/Tech",
    "separator runs": lambda size: _repeat("sample" + " _-#\\" * 50, size),
    "one huge id": lambda size: "Sample_" + "9" * size + ": prime",
    "distinct unexpected ids": _distinct_ids,
    "one id repeated": lambda size: _repeat("Sample_20: not prime\n", size),
    "class words on one line": lambda size: "Sample_20: " + _repeat("not prime Sci/Tech Class_10 ", size),
    "JSON escapes": lambda size: '{"Sample_20": "' + _repeat("\\u0130\\n", size) + '"}',
    "bullet lines, no mention": lambda size: _repeat("*" * 999 + "\n", size),
    "digits, no separator": lambda size: _repeat("1" * 999 + "\n", size),
}
