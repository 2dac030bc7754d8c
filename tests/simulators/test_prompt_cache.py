"""Cached prompt tokens: read from every backend that reports them, priced at the cached rate, summed."""

from __future__ import annotations

import pytest

from fake_openai_server import FakeOpenAIServer, Fault, constant_responder
from xaimetrics._usage import UsageTracker
from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.simulators import AnswerSchema, ChatMessage, OpenAICompatibleSimulator
from xaimetrics.simulators._openai import cached_prompt_tokens
from xaimetrics.simulators._prices import TOKEN_PRICES, TokenPrice, token_price
from xaimetrics.simulators._probabilities import probability_response

SHARED = "You are a classifier . " * 20  # 100 words shared by both prompts
FIRST = [
    ChatMessage("system", SHARED + "concept_1: aligned: ['goal']"),
    ChatMessage("user", "Sample_0: a goal"),
]
SECOND = [
    ChatMessage("system", SHARED + "concept_7: aligned: ['chip']"),
    ChatMessage("user", "Sample_0: a goal"),
]


def _simulator(server: FakeOpenAIServer, **kwargs: object) -> OpenAICompatibleSimulator:
    return OpenAICompatibleSimulator(
        "fake-model", base_url=server.base_url, api_key="sk-test", timeout=2.0, max_retries=0, **kwargs
    )


def test_cached_tokens_of_a_repeated_prefix_are_read_and_priced_at_the_cached_rate() -> None:
    price = TokenPrice(input=1.0, output=4.0, cached_input=0.25)
    with FakeOpenAIServer(constant_responder("Sample_0: sport")) as server:
        simulator = _simulator(server, price_per_1k_tokens=price)
        tracker = simulator.usage = UsageTracker()
        first, second, again = (simulator.generate(m) for m in (FIRST, SECOND, FIRST))
    # words: 100 shared + 3 own in the system message, 3 in the user message
    assert (first.prompt_tokens, first.cached_prompt_tokens) == (106, 0)
    assert (second.prompt_tokens, second.cached_prompt_tokens) == (106, 100)  # 'concept_1:' differs
    assert again.cached_prompt_tokens == 106  # an exact repeat is read wholly from the cache
    assert first.cost_usd == pytest.approx((106 * 1.0 + 2 * 4.0) / 1000)
    assert second.cost_usd == pytest.approx((6 * 1.0 + 100 * 0.25 + 2 * 4.0) / 1000)
    assert tracker.summary().cached_prompt_tokens == 0 + 100 + 106


def test_the_cache_granularity_of_the_provider_is_reported_as_it_is() -> None:
    with FakeOpenAIServer(constant_responder("ok"), cache_block=64, cache_minimum=1024) as server:
        simulator = _simulator(server)
        simulator.generate(FIRST)
        assert simulator.generate(SECOND).cached_prompt_tokens == 0  # under the provider's minimum: no cache
    with FakeOpenAIServer(constant_responder("ok"), cache_block=64) as server:
        simulator = _simulator(server)
        simulator.generate(FIRST)
        assert simulator.generate(SECOND).cached_prompt_tokens == 64  # 100 shared, in steps of 64


def test_the_llama_cpp_server_timings_are_read_when_usage_has_no_details() -> None:
    body = Fault.completion("Sample_0: sport", usage={"prompt_tokens": 50, "completion_tokens": 3}).payload
    body["timings"] = {"cache_n": 37, "prompt_n": 13}
    with FakeOpenAIServer(faults=[Fault.json(body)]) as server:
        response = _simulator(server).generate(FIRST)
    assert (response.prompt_tokens, response.cached_prompt_tokens) == (50, 37)


@pytest.mark.parametrize(
    "details", [{"cached_tokens": 51}, {"cached_tokens": -1}, {"cached_tokens": True}, "x"]
)
def test_an_impossible_cached_count_reads_as_none(details: object) -> None:
    from types import SimpleNamespace as NS

    assert cached_prompt_tokens(NS(usage=NS(prompt_tokens_details=details)), 50) == 0


def test_the_local_prefix_reuse_is_counted_as_cached_prompt_tokens() -> None:
    schema = AnswerSchema(("1", "2"), ("a", "b"), probabilities=True)
    probabilities = {"1": (0.2, 0.8), "2": (0.6, 0.4)}
    reused = probability_response(
        schema, probabilities, model="m", computed=60, conditioned=110, prefix_reuse=True
    )
    fresh = probability_response(
        schema, probabilities, model="m", computed=110, conditioned=110, prefix_reuse=False
    )
    assert (reused.cached_prompt_tokens, fresh.cached_prompt_tokens) == (50, 0)


def test_prices_from_the_table_a_pair_or_a_triple() -> None:
    assert token_price("gpt-4o-mini", "x") is TOKEN_PRICES["gpt-4o-mini"]
    assert token_price((0.5, 2.0), "x") == TokenPrice(0.5, 2.0, 0.5)  # no discount assumed without a rate
    assert token_price([0.5, 2.0, 0.1], "x") == TokenPrice(0.5, 2.0, 0.1)
    for model, price in TOKEN_PRICES.items():  # a cached token never costs more than a fresh one
        assert 0 < price.cached_input < price.input < price.output and price.as_of, model
    with pytest.raises(
        InvalidParameterError, match=r"'price_per_1k_tokens' parameter of OpenAICompatible.*triple"
    ):
        OpenAICompatibleSimulator(
            "m", base_url="http://127.0.0.1:9/v1", api_key="k", price_per_1k_tokens=(1.0,)
        )
    with pytest.raises(
        InvalidParameterError, match=r"'cached_input' parameter of TokenPrice must be a price"
    ):
        TokenPrice(1.0, 1.0, -0.1)


def test_an_openai_spec_on_openais_api_is_priced_from_the_table_and_another_server_is_not(
    monkeypatch,
) -> None:
    from xaimetrics.simulators import make_simulator

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # no request is made
    assert make_simulator("openai:gpt-4.1-mini").price_per_1k_tokens is TOKEN_PRICES["gpt-4.1-mini"]
    assert make_simulator("openai:my-finetune").price_per_1k_tokens is None  # not in the table: no guess
    local = make_simulator("openai:gpt-4.1-mini", base_url="http://127.0.0.1:8080/v1")
    assert local.price_per_1k_tokens is None  # a server of one's own names models as it likes
