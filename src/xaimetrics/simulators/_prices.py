"""Token prices with the date they were read, and the cost of a call with cached prompt tokens.

Providers bill prompt tokens read from their prompt cache at a discount (OpenAI: 0.25-0.5x of the input price,
reported as ``usage.prompt_tokens_details.cached_tokens``). :data:`TOKEN_PRICES` is a small table of published
prices (USD per 1,000 tokens, with the date they were read); prices change, so pass your own
:class:`TokenPrice` (or an ``(input, output, cached input)`` tuple) as ``price_per_1k_tokens`` to override it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from xaimetrics._validation import invalid

__all__ = ["TOKEN_PRICES", "TokenPrice", "token_price"]


@dataclass(frozen=True)
class TokenPrice:
    """USD per 1,000 tokens: prompt tokens, cached prompt tokens and completion tokens; ``as_of`` the date read.

    Example:
        >>> price = TokenPrice(input=0.4, output=1.6, cached_input=0.1)
        >>> round(price.cost(prompt_tokens=2000, cached_prompt_tokens=1500, completion_tokens=100), 4)
        0.51
    """

    input: float
    output: float
    cached_input: float
    as_of: str = ""

    def __post_init__(self) -> None:
        for name in ("input", "output", "cached_input"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
                raise invalid(name, "TokenPrice", "a price ≥ 0 (USD per 1,000 tokens)", value)

    def cost(self, *, prompt_tokens: int, cached_prompt_tokens: int, completion_tokens: int) -> float:
        """The cost of a call whose ``prompt_tokens`` include ``cached_prompt_tokens`` read from the cache."""
        cached = min(max(cached_prompt_tokens, 0), prompt_tokens)
        return (
            (prompt_tokens - cached) * self.input
            + cached * self.cached_input
            + completion_tokens * self.output
        ) / 1000


#: published prices (USD per 1,000 tokens) of a few OpenAI models, read on the date given; override them
TOKEN_PRICES: Mapping[str, TokenPrice] = MappingProxyType({
    "gpt-4o": TokenPrice(0.0025, 0.01, 0.00125, "2025-06"),
    "gpt-4o-mini": TokenPrice(0.00015, 0.0006, 0.000075, "2025-06"),
    "gpt-4.1": TokenPrice(0.002, 0.008, 0.0005, "2025-06"),
    "gpt-4.1-mini": TokenPrice(0.0004, 0.0016, 0.0001, "2025-06"),
    "gpt-4.1-nano": TokenPrice(0.0001, 0.0004, 0.000025, "2025-06"),
})  # fmt: skip


def token_price(value: object, owner: str, argument: str = "price_per_1k_tokens") -> TokenPrice | None:
    """A :class:`TokenPrice` from ``None``, a :class:`TokenPrice`, a model name of :data:`TOKEN_PRICES`, an
    ``(input, output)`` pair (cached prompt tokens at the input price: no discount assumed) or an
    ``(input, output, cached input)`` triple.

    Example:
        >>> token_price((1.0, 2.0), "x").cached_input, token_price("gpt-4.1-mini", "x").as_of
        (1.0, '2025-06')
    """
    if value is None or isinstance(value, TokenPrice):
        return value
    if isinstance(value, str) and value in TOKEN_PRICES:
        return TOKEN_PRICES[value]
    values = list(value) if isinstance(value, tuple | list) else []
    numbers = all(isinstance(p, int | float) and not isinstance(p, bool) and p >= 0 for p in values)
    if not values or not numbers or len(values) not in (2, 3):
        raise invalid(
            argument, owner,
            "an (input, output) pair or an (input, output, cached input) triple of prices ≥ 0, a TokenPrice, "
            f"a model of TOKEN_PRICES ({', '.join(TOKEN_PRICES)}) or None", value,
        )  # fmt: skip
    prices = [float(p) for p in values]
    return TokenPrice(prices[0], prices[1], prices[2] if len(prices) == 3 else prices[0])
