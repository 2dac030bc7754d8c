"""Simulator specs: how they are written, checked and turned into simulators (behind the cache or not)."""

from __future__ import annotations

from pathlib import Path

import pytest

from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.simulators import (
    CachedSimulator,
    OpenAICompatibleSimulator,
    ScriptedSimulator,
)
from xaimetrics.simulators._perfect import PerfectSimulator
from xaimetrics.simulators._prices import TOKEN_PRICES
from xaimetrics.simulators._registry import check_simulator_spec, make_simulator, simulator_choices


def test_specs_are_split_into_kind_and_argument_case_insensitively() -> None:
    assert check_simulator_spec("OpenAI:my-model") == ("openai", "my-model")
    assert check_simulator_spec("local") == ("local", None)
    assert check_simulator_spec("mine", extra=("mine",)) == ("mine", None)
    choices = simulator_choices(("mine",))
    assert choices[:5] == ("local", "openai:<model>", "perfect", "lexical", "human") and choices[-1] == "mine"
    assert all(c.startswith("local:") for c in choices[5:-1]) and len(choices) > 6  # the verified GGUF models


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        ("openai", "'spec' parameter of make_simulator"),  # the model is required
        ("perfect:x", "among 'local'"),  # perfect takes no argument
        ("local:not-a-verified-model", "local:qwen"),  # a closed list of arguments
        ("perfekt", "Did you mean 'perfect'"),
    ],
)
def test_bad_specs_name_every_choice(spec: str, match: str) -> None:
    with pytest.raises(InvalidParameterError, match=match):
        check_simulator_spec(spec)


def test_the_factory_puts_non_oracles_behind_the_cache(tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    assert isinstance(make_simulator("perfect", cache=cache), PerfectSimulator)  # an oracle is never cached
    provided = make_simulator("mine", cache=cache, provided={"mine": lambda: ScriptedSimulator(["x"])})
    assert isinstance(provided, CachedSimulator)
    plain = make_simulator("mine", provided={"mine": lambda: ScriptedSimulator(["x"])})
    assert isinstance(plain, ScriptedSimulator)


def test_openai_specs_get_the_options_and_openais_own_prices_only_on_its_api(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("XM_TEST_KEY", "sk-test")  # never sent: no call is made
    own = make_simulator(
        "openai:gpt-4o", base_url="https://api.openai.com/v1", api_key_env="XM_TEST_KEY", concurrency=3
    )
    assert isinstance(own, OpenAICompatibleSimulator)
    assert own.max_concurrency == 3 and own.price_per_1k_tokens == TOKEN_PRICES["gpt-4o"]
    other = make_simulator("openai:gpt-4o", base_url="http://127.0.0.1:9/v1")
    assert isinstance(other, OpenAICompatibleSimulator) and other.price_per_1k_tokens is None
