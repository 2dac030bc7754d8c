"""Token groups of each granularity; pooling is the group mean and replacing shifts a group to a given mean."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from xaimetrics.models._groups import batch_groups, text_groups


def test_each_granularity_groups_the_expected_positions() -> None:
    assert [g.tolist() for g in text_groups("cls", 5)] == [[0], [0]]
    assert [g.tolist() for g in text_groups("last", 5)] == [[4], [0]]
    assert [g.tolist() for g in text_groups("mean", 5, span=(1, 4))] == [[1, 2, 3], [0, 0, 0]]
    assert [g.tolist() for g in text_groups("token", 4, span=(1, 3))] == [[1, 2], [0, 1]]
    # "  ab cd" tokenised as [CLS] "a" "b" " c" "d" [SEP]: words start after the leading spaces
    offsets = [(0, 0), (2, 3), (3, 4), (4, 6), (6, 7), (0, 0)]
    positions, words = text_groups("word", 6, offsets=offsets, text="  ab cd")
    assert positions.tolist() == [1, 2, 3, 4] and words.tolist() == [0, 0, 1, 1]
    with pytest.raises(ValueError, match="word granularity needs the token offsets and the text"):
        text_groups("word", 3)


def _batch() -> tuple[object, torch.Tensor]:
    # text 0: tokens 0..2 in one group (mean); text 1 (left-padded by 1): tokens 1 and 2 as their own groups
    groups = batch_groups(
        [(np.array([0, 1, 2]), np.array([0, 0, 0])), (np.array([0, 1]), np.array([0, 1]))],
        pad_offsets=np.array([0, 1]), device=torch.device("cpu"),
    )  # fmt: skip
    hidden = torch.arange(2 * 3 * 2, dtype=torch.float64).reshape(2, 3, 2)
    return groups, hidden


def test_pooling_is_the_mean_of_each_groups_tokens() -> None:
    groups, hidden = _batch()
    assert groups.groups_per_text.tolist() == [1, 2] and groups.counts.tolist() == [3, 1, 1]  # type: ignore[attr-defined]
    pooled = groups.pool(hidden)  # type: ignore[attr-defined]
    expected = torch.stack([hidden[0].mean(dim=0), hidden[1, 1], hidden[1, 2]])
    assert torch.allclose(pooled, expected)


def test_replacing_moves_each_group_to_its_row_and_keeps_other_tokens() -> None:
    groups, hidden = _batch()
    target = torch.tensor([[100.0, -1.0], [7.0, 8.0], [9.0, 10.0]], dtype=torch.float64)
    replaced = groups.replace(hidden, target)  # type: ignore[attr-defined]
    assert torch.allclose(groups.pool(replaced), target)  # type: ignore[attr-defined]
    assert torch.equal(replaced[1, 0], hidden[1, 0])  # the padding token is untouched
    shift = replaced[0] - hidden[0]
    assert torch.allclose(shift, shift[0].expand_as(shift))  # one shift for every token of the group
    assert torch.equal(groups.replace(hidden, groups.pool(hidden)), hidden)  # g(h(x)) = f(x)  # type: ignore[attr-defined]
