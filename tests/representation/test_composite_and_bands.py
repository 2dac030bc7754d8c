"""Composite score (weights, normalisations, missing parts), bands and version targets."""

from __future__ import annotations

import pytest

from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.representation import composite_score
from xaimetrics.representation._bands import Target, band, check_targets, status_mark
from xaimetrics.representation._composite import DEFAULT_WEIGHTS


def test_composite_follows_the_document_formula():
    coherence, consistency, ari, human = [0.45, 0.52, 0.38], [0.68, 0.75, 0.62], 0.82, [3.8, 4.2, 3.5]
    expected = (
        0.30 * sum((c + 1) / 2 for c in coherence) / 3
        + 0.25 * sum(consistency) / 3
        + 0.20 * ari
        + 0.25 * (sum(human) / 3) / 5
    )
    result = composite_score(coherence=coherence, consistency=consistency, stability=ari, human=human)
    assert result.score == pytest.approx(expected, abs=1e-12)
    assert result.weights == DEFAULT_WEIGHTS and result.missing == []


def test_missing_components_rescale_the_weights_and_negatives_clip():
    result = composite_score(coherence=[0.2, float("nan")], stability=-0.3)
    assert result.missing == ["consistency", "human"]
    assert result.components == {"coherence": pytest.approx(0.6), "stability": 0.0}
    assert result.weights == {"coherence": pytest.approx(0.6), "stability": pytest.approx(0.4)}
    assert result.score == pytest.approx(0.36)
    custom = composite_score(coherence=[0.2], stability=1.0, weights={"coherence": 1, "stability": 3})
    assert custom.score == pytest.approx(0.25 * 0.6 + 0.75 * 1.0)


def test_composite_errors():
    with pytest.raises(InvalidParameterError, match="at least one measured component"):
        composite_score()
    with pytest.raises(InvalidParameterError, match="keys among"):
        composite_score(stability=0.5, weights={"fun": 1.0})
    with pytest.raises(InvalidParameterError, match="non-negative weights"):
        composite_score(stability=0.5, weights={"stability": -1.0})


@pytest.mark.parametrize(
    ("metric", "value", "expected"),
    [
        ("coherence", 0.51, "Excellent"),
        ("coherence", 0.5, "Good"),
        ("coherence", 0.3, "Good"),
        ("coherence", 0.29, "Fair"),
        ("coherence", 0.1, "Fair"),
        ("coherence", 0.09, "Poor"),
        ("agreement", 0.67, "Good"),
        ("agreement", 0.66, "Tentative"),
        ("composite", 0.6, "Acceptable"),
        ("purity", 0.29, "Very low"),
        ("stability", float("nan"), "Undefined"),
    ],
)
def test_band_boundaries(metric, value, expected):
    assert band(metric, value) == expected


def test_status_marks():
    assert status_mark("consistency", 0.7) == "✓ Good"
    assert status_mark("consistency", 0.5) == "○ Fair"
    assert status_mark("consistency", 0.1) == "✗ Poor"
    with pytest.raises(InvalidParameterError, match="'metric' parameter of band"):
        band("beauty", 1.0)


def test_version_targets():
    five = [0.45, 0.52, 0.38, 0.41, 0.48]
    v01 = {
        c.target.metric: c.passed for c in check_targets({"coherence": five, "ari": 0.96, "nmi": 0.9}, "v0.1")
    }
    assert v01 == {"coherence": True, "ari": True, "nmi": False}
    v02 = {c.target.metric: c.passed for c in check_targets({"coherence": five}, "v0.2")}
    assert v02["coherence"] is False and v02["alpha"] is None  # one dimension is ≤ 0.4; α not measured
    primary = {"v": (Target("consistency", 0.6, dimensions=(1, 2, 4)),)}
    checks = check_targets({"consistency": [0.1, 0.7, 0.65, 0.2, 0.9]}, "v", primary)
    assert checks[0].passed is True and "dimensions [1, 2, 4]" in checks[0].target.describe()
    with pytest.raises(InvalidParameterError, match="'version' parameter of check_targets"):
        check_targets({}, "v9")
