"""Class probabilities from token log-probabilities, against hand computations on asymmetric cases."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import log_softmax as scipy_log_softmax

from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.simulators import AnswerSchema
from xaimetrics.simulators._probabilities import (
    ClassContinuations,
    answer_text,
    check_probabilities,
    class_continuations,
    log_softmax,
    normalise_log_probabilities,
)


def test_log_softmax_matches_scipy_on_large_logits() -> None:
    logits = np.array([1000.0, 998.5, -3.0, 1000.0])
    assert np.allclose(log_softmax(logits), scipy_log_softmax(logits))


def test_normalisation_ignores_minus_infinity_and_refuses_nothing_finite() -> None:
    got = normalise_log_probabilities([math.log(0.1), -math.inf, math.log(0.3)])
    assert got == pytest.approx((0.25, 0.0, 0.75))
    with pytest.raises(InvalidParameterError, match="a 1-d array with a finite value"):
        normalise_log_probabilities([-math.inf, -math.inf])


def test_shared_tail_tokens_are_read_once_and_summed_per_class() -> None:
    # classes "ab" -> tail (1, 2), "ac" -> (1, 3), "d" -> (4,); vocabulary of 5 tokens
    cont = ClassContinuations([[9, 1, 2], [9, 1, 3], [9, 4]])
    assert cont.stem == (9,) and cont.tails == ((1, 2), (1, 3), (4,))
    tiny = 1e-300  # a probability of (almost) zero, without log(0) warnings
    tables = {(): np.log([tiny, 0.6, tiny, tiny, 0.4]), (1,): np.log([0.1, 0.1, 0.2, 0.6, tiny])}
    asked: list[tuple[int, ...]] = []

    def next_log_probs(prefix: tuple[int, ...]) -> np.ndarray:
        asked.append(prefix)
        return tables[prefix]

    # p(ab) = 0.6 * 0.2 = 0.12, p(ac) = 0.6 * 0.6 = 0.36, p(d) = 0.4; normalised over 0.88
    assert cont.probabilities(next_log_probs) == pytest.approx((0.12 / 0.88, 0.36 / 0.88, 0.4 / 0.88))
    assert sorted(asked) == [(), (1,)]  # each distinct prefix once


def test_a_class_that_prefixes_another_gets_the_terminator() -> None:
    chars = lambda text: [ord(c) for c in text]  # noqa: E731
    plain = class_continuations(chars, "7", ["yes", "no"])
    assert plain.tails == ((ord("y"), ord("e"), ord("s")), (ord("n"), ord("o")))
    ended = class_continuations(chars, "7", ["pos", "positive"])
    assert "".join(map(chr, ended.stem)) == "Sample_7: pos" and ended.tails[0] == (ord("\n"),)
    with pytest.raises(InvalidParameterError, match="none of which is a prefix of another"):
        ClassContinuations([[1, 2], [1, 2, 3]])


def test_answer_text_takes_the_first_class_on_ties_and_checks_renormalise() -> None:
    schema = AnswerSchema(("4", "5"), ("b", "a", "c"))
    assert answer_text(schema, {"4": (0.4, 0.4, 0.2), "5": (0.1, 0.2, 0.7)}) == "Sample_4: b\nSample_5: c"
    checked = check_probabilities({"4": [0.2, 0.3, 0.5 + 1e-7], "5": [1, 0, 0]}, schema, "demo")
    assert sum(checked["4"]) == pytest.approx(1.0, abs=1e-12) and checked["5"] == (1.0, 0.0, 0.0)
    with pytest.raises(
        InvalidParameterError, match=r"for sample '5', 3 non-negative probabilities summing to 1"
    ):
        check_probabilities({"4": [0.2, 0.3, 0.5], "5": [0.5, 0.5]}, schema, "demo")
