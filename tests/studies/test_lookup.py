"""find: a study's part by its id, the first match winning, or an error naming the argument."""

from __future__ import annotations

import pytest

from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.studies._lookup import find


def test_the_first_part_with_the_wanted_key_is_returned() -> None:
    arms = [{"id": "a", "n": 1}, {"id": "b", "n": 2}, {"id": "b", "n": 3}]
    assert find(arms, lambda arm: arm["id"], "b", "arm", "Study", "an arm id")["n"] == 2
    assert find(iter(arms), lambda arm: arm["n"], 3, "arm", "Study", "an arm id")["id"] == "b"  # any iterable


def test_a_missing_id_names_the_argument_and_the_owner() -> None:
    with pytest.raises(
        InvalidParameterError, match=r"The 'arm_id' parameter of Study\.result must be one of a, b\. Got c\."
    ):
        find([{"id": "a"}, {"id": "b"}], lambda arm: arm["id"], "c", "arm_id", "Study.result", "one of a, b")
