"""Cohen's κ of the agreement report: sklearn's, with "no answer" as a category of its own."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from xaimetrics.studies._agreement import _kappa


def _by_definition(first: list[object], second: list[object]) -> float:
    """κ = (p_o − p_e) / (1 − p_e) from the confusion matrix (Cohen, 1960)."""
    categories = sorted({repr(v) for v in (*first, *second)})
    index = {c: i for i, c in enumerate(categories)}
    table = np.zeros((len(categories), len(categories)))
    for a, b in zip(first, second, strict=True):
        table[index[repr(a)], index[repr(b)]] += 1
    table /= table.sum()
    observed = np.trace(table)
    expected = float(table.sum(axis=1) @ table.sum(axis=0))
    return (observed - expected) / (1 - expected)


def test_kappa_is_sklearns_on_an_asymmetric_table_with_missing_answers():
    human = ["World", "Sports", "Sports", None, "Sci/Tech", "World", "Sports", "World", "Sci/Tech", None]
    llm = ["World", "Sports", "World", "World", "Sci/Tech", "Sports", "Sports", None, "World", None]
    value = _kappa(human, llm)
    assert value == pytest.approx(_by_definition(human, llm), abs=1e-12)
    shown = [str(v) for v in human], [str(v) for v in llm]  # None as the category "None"
    assert value == pytest.approx(cohen_kappa_score(*shown), abs=1e-12)
    assert value == pytest.approx(0.23 / 0.73, abs=1e-12)  # p_o = 0.5, p_e = 0.27 by hand
    assert _kappa(llm, human) == pytest.approx(value, abs=1e-12)  # κ is symmetric in the raters


def test_kappa_is_nan_without_two_categories():
    assert math.isnan(_kappa([], []))
    assert math.isnan(_kappa(["World", "World"], ["World", "World"]))
    assert _kappa(["World", "Sports"], ["Sports", "World"]) == pytest.approx(-1.0)
