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
