"""The shared-prefix share of a list of prompts, against a brute-force definition."""

from __future__ import annotations

import numpy as np
import pytest

from xaimetrics.consim._prefix import prompt_text, shared_prefix_share
from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.simulators import ChatMessage


def _lcp(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def _brute_force(texts: list[str]) -> float:
    """Σ_i max_{j<i} lcp(t_i, t_j) / Σ_i |t_i|, every pair compared."""
    shared = sum(max((_lcp(t, u) for u in texts[:i]), default=0) for i, t in enumerate(texts))
    return shared / sum(map(len, texts))


def test_the_share_matches_the_definition_on_random_prompts_in_sending_order() -> None:
    rng = np.random.default_rng(5)
    for _ in range(20):
        prompts = [
            [ChatMessage("system", "Task: " + "".join(rng.choice(list("ab"), size=rng.integers(0, 6)))),
             ChatMessage("user", "".join(rng.choice(list("abc"), size=rng.integers(1, 9))))]
            for _ in range(rng.integers(1, 12))
        ]  # fmt: skip
        texts = [prompt_text(p) for p in prompts]
        assert shared_prefix_share(prompts) == pytest.approx(_brute_force(texts))


def test_order_matters_and_a_role_change_breaks_the_prefix() -> None:
    long, short = [ChatMessage("user", "abcdef")], [ChatMessage("user", "abc")]
    # sent first, the long prompt shares nothing; the short one then shares all of itself but its end
    assert prompt_text(long) == "<|user|>\nabcdef\n" and prompt_text(short) == "<|user|>\nabc\n"
    assert shared_prefix_share([long, short]) == pytest.approx(12 / (16 + 13))
    assert shared_prefix_share([short, long]) == pytest.approx(12 / (13 + 16))
    same_text = [ChatMessage("system", "abc")]
    assert shared_prefix_share([short, same_text]) == pytest.approx(2 / (13 + 15))  # only "<|"


def test_no_text_at_all_is_refused() -> None:
    with pytest.raises(InvalidParameterError, match="at least one non-empty prompt"):
        shared_prefix_share([])
