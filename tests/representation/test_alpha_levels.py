"""Krippendorff's α: circular and bipolar levels, custom differences, value-count input and α of a subsample
against reference data — against the krippendorff package, a brute-force pairwise α, and the published
expectations of fast-krippendorff's tests (which define the two levels and the reference data)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.representation import krippendorff_alpha

krippendorff = pytest.importorskip("krippendorff")
nan = np.nan

PAPER = np.array(  # Krippendorff (2011), 4 coders × 12 units with gaps
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
        [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
    ]
)


def circular(period):
    return lambda c, k: math.sin(math.pi * (c - k) / period) ** 2


def bipolar(low, high):
    return lambda c, k: 0.0 if c == k else (c - k) ** 2 / ((c + k - 2 * low) * (2 * high - c - k))


def brute_force_alpha(data, delta):
    """α = 1 − D_o / D_e from its definition: every ordered pair of values inside a unit (weighted 1/(m−1))
    against every ordered pair of pairable values overall."""
    units = [[v for v in column if not math.isnan(v)] for column in np.asarray(data, dtype=float).T]
    units = [u for u in units if len(u) >= 2]
    values = [v for u in units for v in u]
    n = len(values)
    observed = (
        sum(
            delta(u[a], u[b]) / (len(u) - 1)
            for u in units
            for a, b in itertools.permutations(range(len(u)), 2)
        )
        / n
    )
    expected = sum(delta(values[a], values[b]) for a, b in itertools.permutations(range(n), 2)) / (
        n * (n - 1)
    )
    return 1 - observed / expected


def package_metric(scalar):
    """The package's difference-function protocol, written from a scalar function."""

    def metric(v1, v2, i1, i2, n_v, dtype=np.float64):
        return np.vectorize(scalar, otypes=[float])(*np.broadcast_arrays(v1, v2)).astype(dtype)

    return metric


def asymmetric_data(seed, low=0, high=11):
    rng = np.random.default_rng(seed)
    truth = rng.integers(low, high + 1, size=30)
    data = np.array([truth + rng.integers(-2, 3, size=30) for _ in range(4)], dtype=float)
    data = np.clip(data, low, high)
    data[rng.random(data.shape) < 0.25] = nan
    data[0, :3] = nan  # units with one rating only
    data[1, :3] = nan
    return data


def test_circular_and_bipolar_reproduce_the_published_hand_calculations():
    circular_data = [[0, 1, 2, 3], [0, 2, 2, 0]]
    assert krippendorff_alpha(
        circular_data, orientation="coders_units", level="circular"
    ).alpha == pytest.approx(0.5625, abs=1e-12)
    counts = [[2, 0, 0, 0], [0, 1, 1, 0], [0, 0, 2, 0], [1, 0, 0, 1]]
    assert krippendorff_alpha(counts, orientation="value_counts", level="circular").alpha == pytest.approx(
        0.5625
    )
    bipolar_data = [[-1, 0, 1], [-1, 1, 1]]
    assert krippendorff_alpha(
        bipolar_data, orientation="coders_units", level="bipolar"
    ).alpha == pytest.approx(18 / 23, abs=1e-12)
    counts = [[2, 0, 0], [0, 1, 1], [0, 0, 2]]
    result = krippendorff_alpha(counts, orientation="value_counts", level="bipolar", value_domain=[-1, 0, 1])
    assert result.alpha == pytest.approx(18 / 23, abs=1e-12) and result.level == "bipolar"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_circular_and_bipolar_equal_the_package_and_the_definition_with_missing_values(seed):
    data = asymmetric_data(seed)
    for level, scalar in (("circular", circular(12)), ("bipolar", bipolar(0, 11))):
        domain = np.unique(data[~np.isnan(data)])
        ours = krippendorff_alpha(
            data.T,
            orientation="units_coders",
            level=level,
            value_domain=list(range(12)) if level == "bipolar" else None,
        ).alpha
        if level == "bipolar":
            domain = np.arange(12.0)
        package = krippendorff.alpha(
            reliability_data=data, value_domain=domain, level_of_measurement=package_metric(scalar)
        )
        assert ours == pytest.approx(package, abs=1e-12), level
        assert ours == pytest.approx(brute_force_alpha(data, scalar), abs=1e-12), level
    # a circular scale: values across the wrap-around agree more than on a line
    assert krippendorff_alpha(
        data, orientation="coders_units", level="circular", period=12
    ).alpha != pytest.approx(
        krippendorff_alpha(data, orientation="coders_units", level="interval").alpha, abs=1e-3
    )


def test_circular_period_for_degrees_and_its_errors():
    degrees = [[350.0, 10.0, 180.0, 90.5], [5.0, 20.0, 170.0, 95.0], [nan, 0.0, 185.0, 80.0]]
    ours = krippendorff_alpha(degrees, orientation="coders_units", level="circular", period=360).alpha
    assert ours == pytest.approx(brute_force_alpha(degrees, circular(360)), abs=1e-12)
    with pytest.raises(InvalidParameterError, match=r"'period' parameter .* non-integer values.*period=360"):
        krippendorff_alpha(degrees, orientation="coders_units", level="circular")
    with pytest.raises(InvalidParameterError, match=r"'period' parameter.*finite positive"):
        krippendorff_alpha(degrees, orientation="coders_units", level="circular", period=0)


def test_a_custom_difference_equals_the_package_given_the_same_function():
    data = asymmetric_data(4)

    def absolute(c, k):
        return np.abs(c - k)

    ours = krippendorff_alpha(data, orientation="coders_units", level=absolute)
    package = krippendorff.alpha(
        reliability_data=data, level_of_measurement=package_metric(lambda c, k: abs(c - k))
    )
    assert ours.alpha == pytest.approx(package, abs=1e-12) and ours.level == "absolute"
    squared = krippendorff_alpha(data, orientation="coders_units", level=lambda c, k: (c - k) ** 2).alpha
    interval = krippendorff_alpha(data, orientation="coders_units", level="interval").alpha
    assert squared == pytest.approx(interval, abs=1e-12)
    with pytest.raises(InvalidParameterError, match=r"d\(c, c\) = 0"):
        krippendorff_alpha(data, orientation="coders_units", level=lambda c, k: np.abs(c - k) + 1)
    with pytest.raises(InvalidParameterError, match="two broadcastable arrays"):
        krippendorff_alpha(data, orientation="coders_units", level=lambda c: c)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_value_counts_equal_the_package_and_the_reliability_data(level):
    domain = np.array([1.0, 2, 3, 4, 5])
    counts = (PAPER.T[:, :, None] == domain[None, None, :]).sum(axis=1)
    ours = krippendorff_alpha(counts, orientation="value_counts", level=level, value_domain=list(domain))
    package = krippendorff.alpha(value_counts=counts, value_domain=domain, level_of_measurement=level)
    assert ours.alpha == pytest.approx(package, abs=1e-12)
    direct = krippendorff_alpha(PAPER, orientation="coders_units", level=level)
    assert ours.alpha == pytest.approx(direct.alpha, abs=1e-12)
    assert ours.n_units == 12 and ours.n_coders == 4 and ours.n_pairable == direct.n_pairable


def test_value_counts_errors():
    with pytest.raises(InvalidParameterError, match="non-negative integer counts"):
        krippendorff_alpha([[1, -1], [2, 0]], orientation="value_counts")
    with pytest.raises(InvalidParameterError, match="non-negative integer counts"):
        krippendorff_alpha([[1.5, 1], [2, 0]], orientation="value_counts")
    with pytest.raises(InvalidParameterError, match=r"one value per column of the value counts \(2\)"):
        krippendorff_alpha([[1, 1], [2, 0]], orientation="value_counts", value_domain=[1, 2, 3])


def test_alpha_of_a_subsample_against_reference_data():
    subsample = PAPER[:, :6]
    # fast-krippendorff's published expectation: 0.720 with the full data's expected disagreement (0.550 alone)
    alone = krippendorff_alpha(subsample, orientation="coders_units", value_domain=[1, 2, 3, 4, 5])
    against = krippendorff_alpha(
        subsample, orientation="coders_units", value_domain=[1, 2, 3, 4, 5], reference=PAPER
    )
    assert round(alone.alpha, 3) == 0.550 and round(against.alpha, 3) == 0.720
    # the reference equal to the data is the ordinary α, for every level (the core against the package)
    for level in ("nominal", "ordinal", "interval", "ratio", "circular", "bipolar"):
        plain = krippendorff_alpha(PAPER, orientation="coders_units", level=level).alpha
        same = krippendorff_alpha(PAPER, orientation="coders_units", level=level, reference=PAPER).alpha
        assert same == pytest.approx(plain, abs=1e-12), level
    # the same through value counts, and units × coders
    domain = np.array([1.0, 2, 3, 4, 5])
    sub_counts = (subsample.T[:, :, None] == domain).sum(axis=1)
    all_counts = (PAPER.T[:, :, None] == domain).sum(axis=1)
    by_counts = krippendorff_alpha(
        sub_counts, orientation="value_counts", value_domain=[1, 2, 3, 4, 5], reference=all_counts
    )
    by_units = krippendorff_alpha(
        subsample.T, orientation="units_coders", value_domain=[1, 2, 3, 4, 5], reference=PAPER.T
    )
    assert by_counts.alpha == pytest.approx(against.alpha, abs=1e-12)
    assert by_units.alpha == pytest.approx(against.alpha, abs=1e-12)


def test_reference_edge_cases():
    # a subsample with one value and perfect agreement: α = 1 against a varied reference (0/0 alone)
    perfect = krippendorff_alpha(
        [[1, 1], [1, 1]], orientation="coders_units", level="nominal", reference=[[1, 2, 3, 4], [1, 2, 3, 4]]
    )
    assert perfect.alpha == 1.0
    assert math.isnan(krippendorff_alpha([[1, 1], [1, 1]], orientation="coders_units").alpha)
    flat = krippendorff_alpha(
        [[1, 2], [2, 1]], orientation="coders_units", level="nominal", reference=[[1, 1], [1, 1]]
    )
    assert math.isnan(flat.alpha) and "no expected disagreement" in flat.reason
    with pytest.raises(InvalidParameterError, match=r"'reference' parameter.*at least one unit rated by two"):
        krippendorff_alpha([[1, 2], [2, 1]], orientation="coders_units", reference=[[1, nan], [nan, 2]])
    with pytest.raises(InvalidParameterError, match=r"'value_domain' parameter.*also hold 7"):
        krippendorff_alpha(
            [[1, 2], [2, 1]], orientation="coders_units", value_domain=[1, 2], reference=[[1, 7], [2, 1]]
        )
