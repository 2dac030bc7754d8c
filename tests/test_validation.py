"""The shared boundary checks (``xaimetrics._validation``) and the public functions that use them."""

from __future__ import annotations

import numpy as np
import pytest

from xaimetrics._validation import check_seed
from xaimetrics.exceptions import InvalidParameterError

BAD_SEEDS = [-1, -(2**70), np.int64(-3), 1.5, True, "0", None]


@pytest.mark.parametrize("seed", BAD_SEEDS, ids=repr)
def test_negative_or_non_integer_seeds_name_the_argument_everywhere(seed) -> None:
    """Issue #11, class 14: numpy's own message names no argument; every seeded public function checks first."""
    from xaimetrics.consim import select_examples
    from xaimetrics.data import TextDataset, load_dataset

    calls = {
        "select_examples": lambda: select_examples(
            list("abcdefgh"), [0, 1] * 4, [0, 0, 1, 1] * 2, 2, 2, seed=seed
        ),
        "TextDataset.sample": lambda: TextDataset(["a", "b", "c"], np.array([0, 1, 0]), ["x", "y"]).sample(
            2, seed=seed
        ),
        "load_dataset": lambda: load_dataset("bbc_news", "test", seed=seed),
    }
    for owner, call in calls.items():
        with pytest.raises(
            InvalidParameterError, match=rf"The 'seed' parameter of {owner} must be an integer ≥ 0"
        ):
            call()


@pytest.mark.parametrize("seed", [0, 7, 2**70, np.int32(5), np.uint64(9)])
def test_valid_seeds_are_returned_as_int(seed) -> None:
    value = check_seed(seed, "seed", "f")
    assert value == int(seed) and type(value) is int


def test_grid_seeds_must_be_non_negative() -> None:
    from xaimetrics.benchmark import Grid

    with pytest.raises(
        InvalidParameterError,
        match=r"'seeds' parameter of Grid must be integers in \[0, 2\*\*32 - 1\].*Got \[-1\]",
    ):
        Grid(seeds=(0, -1), simulators=("perfect",))
    with pytest.raises(InvalidParameterError, match=r"'validation_seeds' parameter of Grid"):
        Grid(validation_seeds=(-5,), simulators=("perfect",))


# ----------------------------------------------------------------------------- declared constraints (issue #31)
def test_interval_wording_and_ends() -> None:
    from xaimetrics._validation import Interval

    assert str(Interval(int, 0)) == "an integer ≥ 0"
    assert str(Interval(float, 0, 1, closed="neither")) == "a number in ]0, 1["
    assert str(Interval(float, -1, 1)) == "a number in [-1, 1]"
    assert str(Interval(float, high=0.5, closed="left")) == "a number < 0.5"
    half_open = Interval(float, 0, 1, closed="right")
    assert [half_open.accepts(v) for v in (0, 1, 0.5, 1.5, float("nan"), True, "0.5")] == [
        False, True, True, False, False, False, False,
    ]  # fmt: skip
    assert Interval(int, 1).accepts(np.int64(3)) and not Interval(int, 1).accepts(2.0)


def test_options_are_read_live_from_a_registry() -> None:
    from xaimetrics._validation import Options, check_params

    registry = ["a"]
    rules = {"method": Options(lambda: registry)}
    with pytest.raises(InvalidParameterError, match=r"'method' parameter of f must be one of 'a'\. Got b\."):
        check_params("f", rules, {"method": "b"})
    registry.append("b")
    check_params("f", rules, {"method": "b"})
    assert not Options((1, 0)).accepts(True)  # True == 1, but a flag is not an option
    assert not Options(("a",)).accepts(np.array(["a", "a"]))  # unhashable/ambiguous values are refused


def test_a_refused_type_is_shown_by_name_and_none_is_worded_once() -> None:
    from xaimetrics._validation import Interval, Kind, check_params

    rules = {
        "explain": Kind(callable, "a callable explain(x)"),
        "size": (Interval(int, 1), None),
        "batch": (Interval(int, 1, text="an integer ≥ 1 or None (all at once)"), None),
    }
    with pytest.raises(InvalidParameterError, match=r"must be a callable explain\(x\)\. Got list\.$"):
        check_params("g", rules, {"explain": [1]})
    with pytest.raises(InvalidParameterError, match=r"must be None or an integer ≥ 1\. Got 0\.$"):
        check_params("g", rules, {"size": 0})
    with pytest.raises(
        InvalidParameterError, match=r"must be an integer ≥ 1 or None \(all at once\)\. Got -2\.$"
    ):
        check_params("g", rules, {"batch": -2})


def test_validate_params_names_the_class_of_the_object_and_sets_the_caller() -> None:
    from xaimetrics._validation import Interval, caller, validate_params

    class Base:
        @validate_params({"k": Interval(int, 1)})
        def __init__(self, k: int = 1) -> None:
            self.seen = caller()

        @validate_params({"k": Interval(int, 1)}, fixes={"k": "Pass 1 or more."})
        def fit(self, k: int) -> str:
            return caller()

    class Child(Base):
        pass

    assert Child().seen == "Child" and Child().fit(2) == "Child.fit"
    assert caller() == "this function"  # the scope ends with the call
    with pytest.raises(
        InvalidParameterError, match=r"'k' parameter of Child must be an integer ≥ 1\. Got 0\."
    ):
        Child(0)
    with pytest.raises(
        InvalidParameterError, match=r"of Child\.fit must be an integer ≥ 1\. Got 0\. Pass 1 or more\."
    ):
        Child().fit(0)
    with pytest.raises(TypeError, match="has no parameter"):
        validate_params({"missing": Interval(int)})(lambda k: k)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (
            lambda m, x: __import__("xaimetrics.fidelity").fidelity.Deletion(m, x, steps=0),
            r"The 'steps' parameter of Deletion must be an integer ≥ 1, or -1 for every feature\. Got 0\.",
        ),
        (
            lambda m, x: __import__("xaimetrics.fidelity").fidelity.Insertion(m, x, batch_size=0),
            r"The 'batch_size' parameter of Insertion must be an integer ≥ 1 or None \(all rows at once\)\. Got 0\.",
        ),
        (
            lambda m, x: __import__("xaimetrics.fidelity").fidelity.MuFidelity(m, x, subset_percent=1.0),
            r"The 'subset_percent' parameter of MuFidelity must be a number in \]0, 1\[\. Got 1\.0\.",
        ),
        (
            lambda m, x: __import__("xaimetrics.fidelity").fidelity.AOPCSufficiency(
                m, x, thresholds=[0.5, 0]
            ),
            r"'thresholds' parameter of AOPCSufficiency must be a non-empty sequence of fractions in \]0, 1\]\.",
        ),
        (
            lambda m, x: __import__("xaimetrics.fidelity").fidelity.Infidelity(m, x, perturbation="noise"),
            r"'perturbation' parameter of Infidelity must be 'gaussian', 'subset' or a callable",
        ),
        (
            lambda m, x: __import__("xaimetrics.fidelity").fidelity.AverageGain(m, x, operator=3),
            r"'operator' parameter of AverageGain must be a callable g\(f, x, y\) or None\. Got int\.",
        ),
        (
            lambda m, x: __import__("xaimetrics.fidelity").fidelity.Deletion(m, x, activation="relu"),
            r"'activation' parameter of Deletion must be one of 'sigmoid', 'softmax', None\. Got relu\.",
        ),
    ],
)
def test_declared_fidelity_checks_keep_their_messages(build, message) -> None:
    import torch

    with pytest.raises(InvalidParameterError, match=message):
        build(torch.nn.Linear(3, 2), torch.ones(2, 3))
