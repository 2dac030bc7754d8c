"""Krippendorff's α against the krippendorff package and the published worked example; rating analysis."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.representation import analyze_ratings, krippendorff_alpha

krippendorff = pytest.importorskip("krippendorff")
nan = np.nan

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", 4 coders × 12 units with gaps.
PAPER = np.array(
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
        [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
    ]
)


@pytest.mark.parametrize(("level", "published"), [("nominal", 0.743), ("interval", 0.849), ("ratio", 0.797)])
def test_alpha_reproduces_the_published_example(level, published):
    result = krippendorff_alpha(PAPER, orientation="coders_units", level=level)
    assert result.alpha == pytest.approx(published, abs=5e-4)
    assert (result.n_coders, result.n_units) == (4, 12)
    assert result.n_pairable == 40  # unit 12 has a single rating and is left out


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_alpha_equals_the_package_with_missing_values_and_either_orientation(level, seed):
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, size=30)
    ratings = np.clip(truth + rng.integers(-1, 2, size=(4, 30)), 1, 5).astype(float)  # 4 coders × 30 units
    ratings[rng.random(ratings.shape) < 0.2] = nan
    reference = krippendorff.alpha(reliability_data=ratings, level_of_measurement=level)
    as_coders = krippendorff_alpha(ratings, orientation="coders_units", level=level).alpha
    as_units = krippendorff_alpha(ratings.T, orientation="units_coders", level=level).alpha
    assert as_coders == pytest.approx(reference, abs=1e-12)
    assert as_units == as_coders  # declared orientation: the same number whichever way the data comes
    transposed_wrongly = krippendorff.alpha(reliability_data=ratings.T, level_of_measurement=level)
    assert not math.isclose(transposed_wrongly, reference, abs_tol=1e-6)  # why the orientation is required


def test_alpha_accepts_none_for_missing_and_levels_differ():
    ratings = [[1, 2, 3, 3, None], [1, 2, 3, 4, 4], [None, 3, 3, 4, 4]]
    ordinal = krippendorff_alpha(ratings, orientation="coders_units")
    nominal = krippendorff_alpha(ratings, orientation="coders_units", level="nominal")
    assert ordinal.level == "ordinal" and ordinal.alpha != nominal.alpha
    assert ordinal.band in {"Excellent", "Good", "Tentative", "Poor"}


def test_alpha_undefined_cases_give_nan_with_a_reason():
    same = krippendorff_alpha([[4, 4, nan], [4, 4, 4]], orientation="coders_units")
    assert math.isnan(same.alpha) and "no variation" in same.reason
    unpaired = krippendorff_alpha([[1, nan, 3], [nan, 2, nan]], orientation="coders_units")
    assert math.isnan(unpaired.alpha) and unpaired.reason == "no unit was rated by two or more coders"
    assert unpaired.to_dict()["alpha"] is None


def test_one_coder_and_bad_input_are_rejected():
    with pytest.raises(InvalidParameterError, match="ratings from at least two coders"):
        krippendorff_alpha([[1, 2, 3]], orientation="coders_units")
    with pytest.raises(
        InvalidParameterError, match=r"coders are the columns with orientation='units_coders'"
    ):
        krippendorff_alpha([[1, nan], [2, nan], [3, nan]], orientation="units_coders")
    with pytest.raises(TypeError, match="orientation"):
        krippendorff_alpha([[1, 2], [1, 2]])  # the orientation must be declared
    with pytest.raises(InvalidParameterError, match="'orientation' parameter"):
        krippendorff_alpha([[1, 2], [1, 2]], orientation="rows")
    with pytest.raises(InvalidParameterError, match="Encode categories as integers"):
        krippendorff_alpha([["a", "b"], ["a", "b"]], orientation="coders_units")


def test_analyze_ratings_matches_numpy_statistics():
    rng = np.random.default_rng(3)
    cube = rng.integers(1, 6, size=(8, 3, 2)).astype(float)  # examples × annotators × dimensions
    cube[0, 1, 0] = nan
    result = analyze_ratings(cube, dimension_names=["structure", "sentiment"])
    for d, row in enumerate(result.summary.itertuples()):
        values = cube[:, :, d][~np.isnan(cube[:, :, d])]
        assert row.mean_rating == pytest.approx(values.mean())
        assert row.std_rating == pytest.approx(values.std())
        assert row.median_rating == pytest.approx(np.median(values))
        assert row.pct_agree == pytest.approx((values >= 4).mean())
        assert row.pct_disagree == pytest.approx((values <= 2).mean())
        assert row.n_ratings == values.size
        expected_alpha = krippendorff.alpha(reliability_data=cube[:, :, d].T, level_of_measurement="ordinal")
        assert row.alpha == pytest.approx(expected_alpha)
    overall = krippendorff.alpha(
        reliability_data=cube.transpose(1, 0, 2).reshape(3, -1), level_of_measurement="ordinal"
    )
    assert result.alpha.alpha == pytest.approx(overall)
    assert list(result.summary["dimension"]) == ["structure", "sentiment"]
    assert (result.n_examples, result.n_annotators) == (8, 3)


def test_long_format_gives_the_same_analysis_as_the_cube():
    rng = np.random.default_rng(4)
    cube = rng.integers(1, 6, size=(5, 3, 2)).astype(float)
    rows = [
        {"example": f"t{e}", "annotator": f"a{a}", "dimension": f"d{d}", "rating": cube[e, a, d]}
        for e in range(5)
        for a in range(3)
        for d in range(2)
        if (e, a, d) != (2, 1, 0)  # one missing rating
    ]
    cube[2, 1, 0] = nan
    from_frame = analyze_ratings(pd.DataFrame(rows[::-1]))  # row order does not matter
    assert list(from_frame.summary["dimension"]) == ["d0", "d1"]
    from_cube = analyze_ratings(cube)
    pd.testing.assert_frame_equal(
        from_frame.summary.drop(columns="dimension"),
        from_cube.summary.drop(columns="dimension"),
    )


def test_analyze_ratings_errors():
    with pytest.raises(InvalidParameterError, match=r"ratings in \[1, 5\]"):
        analyze_ratings(np.full((2, 2, 1), 7.0))
    with pytest.raises(InvalidParameterError, match="a 3-D array"):
        analyze_ratings(np.ones((2, 2)))
    with pytest.raises(InvalidParameterError, match="missing \\['rating'\\]"):
        analyze_ratings(pd.DataFrame({"example": [1], "annotator": [1], "dimension": [1]}))
    with pytest.raises(InvalidParameterError, match="ratings from at least two coders"):
        analyze_ratings(np.full((3, 1, 2), 4.0))  # one annotator


# -- value_domain is checked against the ratings (issue #11, class 14) -----------------------------------------
@pytest.mark.parametrize(
    ("domain", "message"),
    [
        (
            [1, 2],
            r"a list holding every rating value of the data. Got \[1.0, 2.0\], while the ratings also hold 3, 4",
        ),
        ([1, 2, 2, 3, 4], "distinct values"),
        ([4], "at least two finite numbers"),
        ([1, 2, float("nan"), 4], "at least two finite numbers"),
        ("1234", "a sequence of the possible rating values"),
        (["low", "high"], "numbers"),
    ],
)
def test_value_domain_errors_name_the_argument(domain, message) -> None:
    with pytest.raises(
        InvalidParameterError, match=rf"The 'value_domain' parameter of krippendorff_alpha .*{message}"
    ):
        krippendorff_alpha(PAPER, orientation="coders_units", level="ordinal", value_domain=domain)


@settings(max_examples=60, deadline=None)
@given(
    ratings=st.lists(
        st.lists(st.sampled_from([1, 2, 3, 4, 5, None]), min_size=6, max_size=6), min_size=2, max_size=4
    ),
    domain=st.lists(st.integers(0, 7), min_size=2, max_size=8, unique=True),
    level=st.sampled_from(["nominal", "ordinal", "interval"]),
)
def test_property_value_domain_covers_the_ratings_or_is_rejected(ratings, domain, level) -> None:
    data = np.array(ratings, dtype=float)
    present = set(np.unique(data[~np.isnan(data)]).tolist())
    covered = present <= set(domain)
    rated_twice = (~np.isnan(data)).sum(axis=0) >= 2
    try:
        result = krippendorff_alpha(
            data, orientation="coders_units", level=level, value_domain=sorted(domain)
        )
    except InvalidParameterError as error:
        message = str(error)
        assert "value_domain" in message or "two coders" in message
        assert not covered or "two coders" in message
        return
    assert covered
    assert math.isnan(result.alpha) == (result.reason is not None)
    assert result.reason is not None or rated_twice.any()
