"""The exact group-sequential sign-flip test and the questions asked with it (benchmark/_sequential.py).

Each guarantee is checked on simulated unit differences, seeded: the error over all looks under the null, the
power gained over the union bound, the verdicts of the controls and the Holm–Shaffer family of the methods."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from xaimetrics.benchmark import SequentialDesign
from xaimetrics.benchmark._sequential import (
    gate_outcome,
    sequential_verdicts,
)
from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.stats import sequential_sign_test, sign_flip_test
from xaimetrics.stats._sequential import sequential_pvalue


#: Monte-Carlo allowance: three standard errors of a rate of 0.05 over the number of simulated sequences
def _allowance(n: int, rate: float = 0.05) -> float:
    return rate + 3 * (rate * (1 - rate) / n) ** 0.5


def _fractions(design: SequentialDesign) -> list[float]:
    return [design.fraction(n) for n in design.looks()]


def test_one_look_is_the_fixed_exact_sign_flip_test() -> None:
    """With a single look the sequential p is the one-sided exact permutation p of scipy's test."""
    d = np.array([0.12, -0.03, 0.2, 0.07, -0.01, 0.15, 0.04])
    for alternative in ("greater", "less"):
        sequential = sequential_pvalue(d, looks=[7], fractions=[1.0], alternative=alternative)
        assert sequential == pytest.approx(sign_flip_test(d, alternative=alternative), abs=1e-5)


def test_looks_beyond_the_data_have_not_happened() -> None:
    d = [0.1, 0.2, 0.05, 0.3, 0.1]
    out = sequential_sign_test(d, looks=[5, 6, 7], fractions=[0.7, 0.85, 1.0])
    assert out.rejected and out.n_units == 5 and out.look == 0


def test_bad_inputs_name_the_argument() -> None:
    with pytest.raises(InvalidParameterError, match="'differences' parameter of sequential_sign_test"):
        sequential_sign_test([0.1, float("nan")], looks=[2], fractions=[1.0])
    with pytest.raises(InvalidParameterError, match="'fractions' parameter"):
        sequential_sign_test([0.1, 0.2], looks=[1, 2], fractions=[1.0])
    with pytest.raises(InvalidParameterError, match="'alternative' parameter"):
        sequential_sign_test([0.1, 0.2], looks=[2], fractions=[1.0], alternative="two-sided")  # type: ignore[arg-type]


def test_false_rejections_over_all_looks_stay_below_alpha() -> None:
    """Null: symmetric differences (normal and a heavy-tailed t₂), looks at 5…10 seeds, 600 sequences each."""
    design = SequentialDesign(max_seeds=10, start=5)
    rng = np.random.default_rng(7)
    n = 600
    for draw in (lambda: rng.normal(0, 1, 10), lambda: rng.standard_t(2, 10)):
        rejected = sum(
            sequential_sign_test(draw(), looks=design.looks(), fractions=_fractions(design)).rejected
            for _ in range(n)
        )
        assert rejected / n <= _allowance(n), rejected / n


def test_more_powerful_than_the_union_bound() -> None:
    """The same looks and spending, tested at each look's increment alone (the previous design): the exact
    group-sequential test rejects more often at a true effect, never less."""
    design = SequentialDesign(max_seeds=10, start=5)
    rng = np.random.default_rng(3)
    exact = union = 0
    for _ in range(300):
        d = rng.normal(0.6, 1.0, 10)
        exact += sequential_sign_test(d, looks=design.looks(), fractions=_fractions(design)).rejected
        union += any(sign_flip_test(d[:n], alternative="greater") <= design.level(n) for n in design.looks())
    assert exact > union * 1.1, (exact, union)


def _table(values: dict[str, np.ndarray]) -> pd.DataFrame:
    n = len(next(iter(values.values())))
    return pd.DataFrame(values, index=pd.Index(range(n), name="seed"))


def test_a_blind_simulator_fails_its_positive_control_at_the_first_look() -> None:
    """The demo's case: the 0.5B model's positive control is +0.006 (unit SD 0.016); five seeds decide "fail"
    (shown below +0.05) with the gate's design."""
    rng = np.random.default_rng(0)
    table = _table({"SurrogateWords": rng.normal(0.006, 0.016, 8)})
    design = SequentialDesign(max_seeds=8, start=5)
    verdicts = sequential_verdicts(table, {"SurrogateWords": "positive"}, design, seeds=range(5))
    row = verdicts.loc["SurrogateWords"]
    assert row["verdict"] == "fail" and row["n_seeds"] == 5 and "below +0.05" in row["decided_by"]
    assert gate_outcome(verdicts) == "invalid"


def test_negative_control_fails_only_outside_the_margin() -> None:
    """A true +0.025 lies inside ±0.05: "fail" (shown outside the margin) stays below α at 10 and 20 seeds."""
    rng = np.random.default_rng(11)
    for n_seeds in (10, 20):
        design = SequentialDesign(max_seeds=n_seeds, start=n_seeds)
        fails = 0
        for _ in range(200):
            table = _table({"RandomWords": rng.normal(0.025, 0.05, n_seeds)})
            verdicts = sequential_verdicts(
                table, {"RandomWords": "negative"}, design, seeds=range(n_seeds), pvalues=False
            )
            fails += verdicts.loc["RandomWords", "verdict"] == "fail"
        assert fails / 200 <= _allowance(200), (n_seeds, fails / 200)


def test_negative_control_passes_when_shown_equivalent_and_fails_far_outside() -> None:
    design = SequentialDesign(max_seeds=8, start=8)
    rng = np.random.default_rng(1)
    inside = _table({"RandomWords": rng.normal(0.0, 0.005, 8)})
    outside = _table({"RandomWords": rng.normal(0.2, 0.01, 8)})
    assert (
        sequential_verdicts(inside, {"RandomWords": "negative"}, design, seeds=range(8)).iloc[0]["verdict"]
        == "pass"
    )
    row = sequential_verdicts(outside, {"RandomWords": "negative"}, design, seeds=range(8)).iloc[0]
    assert row["verdict"] == "fail" and "outside ±0.05" in row["decided_by"]


def test_methods_family_wise_error_over_looks_stays_below_alpha() -> None:
    """Six null methods (true difference 0, shared per-seed noise), looks at 8…12 seeds: any false "helps" or
    false "does not help by the margin" in ≤ α of 200 sequences. Effects of 0 are not in the "no_help" null
    (0 < margin), so only "helps" can be false here; a second family puts every method at +margin."""
    design = SequentialDesign(max_seeds=12, start=8)
    rng = np.random.default_rng(5)
    roles = {f"M{i}": "method" for i in range(6)}
    for truth, wrong in ((0.0, "helps"), (0.05, "no_help")):
        errors = 0
        for _ in range(200):
            shared = rng.normal(0, 0.03, (12, 1))
            table = _table(
                {
                    m: col
                    for m, col in zip(roles, (truth + shared + rng.normal(0, 0.04, (12, 6))).T, strict=True)
                }
            )
            verdicts = sequential_verdicts(
                table, roles, design, seeds=range(12), question="methods", pvalues=False
            )
            errors += bool(
                (verdicts["verdict"].isin([wrong, "helps_little"] if wrong == "no_help" else [wrong])).any()
            )
        assert errors / 200 <= _allowance(200), (truth, errors / 200)


def test_methods_are_decided_both_ways_when_the_effects_are_clear() -> None:
    design = SequentialDesign(max_seeds=16, start=8)
    rng = np.random.default_rng(2)
    table = _table({"NMF": rng.normal(0.15, 0.03, 16), "PCA": rng.normal(-0.05, 0.03, 16)})
    verdicts = sequential_verdicts(
        table, {"NMF": "method", "PCA": "method"}, design, seeds=range(16), question="methods"
    )
    assert verdicts.loc["NMF", "verdict"] == "helps" and verdicts.loc["PCA", "verdict"] == "no_help"
    assert (verdicts["n_seeds"] == 16).all() and verdicts["pvalue"].max() < 0.05


def test_design_says_when_a_look_can_decide() -> None:
    assert SequentialDesign(max_seeds=8, start=3).first_decisive_look() == 5
    assert SequentialDesign(max_seeds=16, start=8).first_decisive_look(6) == 8
    assert SequentialDesign(max_seeds=4, start=2).first_decisive_look() is None


def test_skewed_differences_need_the_skew_check_to_claim_a_benefit() -> None:
    """Zero mean, small gains and rare large losses (+0.02 w.p. 0.8, −0.08 w.p. 0.2, noise SD 0.02), looks at
    12…16 seeds: the sign-flip test alone claims a benefit in 0.087 of 300 sequences; confirmed by the
    skewness-corrected t-test at its look, 0.050. (No test can help a sample that holds no loss at all: at 6 seeds
    a quarter of them look exactly like a true gain — start a design where losses show.)"""
    from xaimetrics.benchmark._sequential import _prepare

    design = SequentialDesign(max_seeds=16, start=12)
    looks, fractions = design.looks(), _fractions(design)
    rng = np.random.default_rng(21)
    n = 300
    plain = checked = 0
    for _ in range(n):
        d = np.where(rng.random(16) < 0.8, 0.02, -0.08) + rng.normal(0, 0.02, 16)
        plain += _prepare(d, looks).first_rejection(fractions, 0.05) is not None
        checked += _prepare(d, looks, skew_check=True).first_rejection(fractions, 0.05) is not None
    assert checked < plain and checked / n <= _allowance(n), (plain / n, checked / n)


def test_a_positive_control_below_the_margin_fails_even_when_it_beats_the_baseline() -> None:
    """A true gain of +0.006 (unit SD 0.016, the 0.5B LLM) is above 0 and below +0.05: when both are shown the
    verdict is "fail" (too little to be a useful instrument). The gate passed such a simulator in ~10 % of draws
    when "pass" was checked first; now in under 2 %."""
    design = SequentialDesign(max_seeds=8, start=5)
    rng = np.random.default_rng(0)
    passes = 0
    for _ in range(300):
        table = _table({"SurrogateWords": rng.normal(0.006, 0.016, 8)})
        verdicts = sequential_verdicts(
            table, {"SurrogateWords": "positive"}, design, seeds=range(5), pvalues=False
        )
        passes += verdicts.iloc[0]["verdict"] == "pass"
    assert passes / 300 < 0.02
