"""Token prices: the cost of a call with cached prompt tokens, and the forms a price may be given in."""

from __future__ import annotations

import pytest

from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.simulators._prices import TOKEN_PRICES, TokenPrice, token_price


def test_cost_bills_cached_prompt_tokens_at_their_own_rate_and_clamps_the_cached_count() -> None:
    price = TokenPrice(input=2.0, output=8.0, cached_input=0.5)
    # 300 uncached at 2.0 + 700 cached at 0.5 + 50 completion at 8.0, per 1,000 tokens
    assert price.cost(prompt_tokens=1000, cached_prompt_tokens=700, completion_tokens=50) == pytest.approx(
        1.35
    )
    assert price.cost(prompt_tokens=100, cached_prompt_tokens=500, completion_tokens=0) == pytest.approx(0.05)
    assert price.cost(prompt_tokens=100, cached_prompt_tokens=-3, completion_tokens=0) == pytest.approx(0.2)


def test_a_price_is_a_table_name_a_pair_a_triple_or_none() -> None:
    assert token_price(None, "x") is None
    assert token_price("gpt-4o", "x") is TOKEN_PRICES["gpt-4o"]
    pair = token_price([1.0, 3.0], "x")
    assert pair == TokenPrice(1.0, 3.0, 1.0)  # no cache discount assumed
    assert token_price((1, 3, 0.25), "x") == TokenPrice(1, 3, 0.25)
    assert all(p.cached_input <= p.input and p.as_of for p in TOKEN_PRICES.values())


@pytest.mark.parametrize("bad", ["gpt-9-unknown", (1.0,), (1.0, -2.0), (1.0, True), (1, 2, 3, 4)])
def test_bad_prices_are_named(bad: object) -> None:
    with pytest.raises(InvalidParameterError, match="'price_per_1k_tokens' parameter of Sim"):
        token_price(bad, "Sim")


def test_negative_or_boolean_prices_are_refused_at_construction() -> None:
    with pytest.raises(InvalidParameterError, match="'output' parameter of TokenPrice must be a price ≥ 0"):
        TokenPrice(1.0, -1.0, 0.5)
    with pytest.raises(InvalidParameterError, match="'input' parameter of TokenPrice"):
        TokenPrice(True, 1.0, 0.5)  # type: ignore[arg-type]
