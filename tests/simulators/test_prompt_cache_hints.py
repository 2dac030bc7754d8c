"""``prompt_cache_key`` and Anthropic ``cache_control`` breakpoints, checked at the HTTP boundary: what the request
body carries, for which hosts, and that the answer is read the same."""

from __future__ import annotations

import pytest

from fake_openai_server import FakeOpenAIServer, constant_responder
from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.simulators import ChatMessage, OpenAICompatibleSimulator
from xaimetrics.simulators._openai import PromptCacheHint, prompt_cache_hint

SYSTEM = "Task and classes. Sample_0: a goal. Predicted: sport.\n\nconcept_3: aligned: ['goal']"
SHARED = len("Task and classes. Sample_0: a goal. Predicted: sport.\n\n")
MESSAGES = [ChatMessage("system", SYSTEM), ChatMessage("user", "Sample_1: a match")]


def _simulator(server: FakeOpenAIServer, **kwargs: object) -> OpenAICompatibleSimulator:
    return OpenAICompatibleSimulator(
        "fake-model", base_url=server.base_url, api_key="sk-test", max_retries=0, **kwargs
    )


def test_the_key_and_the_breakpoint_are_sent_when_enabled() -> None:
    with FakeOpenAIServer(constant_responder("Sample_1: sport")) as server:
        sim = _simulator(server, prompt_cache_key=True, cache_control=True)
        with prompt_cache_hint(PromptCacheHint("seed-7", SHARED)):
            response = sim.generate(MESSAGES)
        assert response.text == "Sample_1: sport" and response.error is None
        (request,) = server.chat_requests
        assert request.body["prompt_cache_key"] == "seed-7"
        first, second = request.body["messages"][0]["content"]
        assert first == {"type": "text", "text": SYSTEM[:SHARED], "cache_control": {"type": "ephemeral"}}
        assert second == {"type": "text", "text": SYSTEM[SHARED:]}
        assert request.body["messages"][1] == {"role": "user", "content": "Sample_1: a match"}


def test_unknown_servers_get_neither_field_by_default() -> None:
    with FakeOpenAIServer(constant_responder("Sample_1: sport")) as server:
        sim = _simulator(server)
        assert (sim.prompt_cache_key, sim.cache_control) == (False, False)
        with prompt_cache_hint(PromptCacheHint("seed-7", SHARED)):
            sim.generate(MESSAGES)
        sim.generate(MESSAGES)  # no hint at all
        for request in server.chat_requests:
            assert "prompt_cache_key" not in request.body
            assert request.body["messages"][0]["content"] == SYSTEM


def test_hosts_decide_the_defaults_and_a_useless_breakpoint_is_not_sent() -> None:
    openai = OpenAICompatibleSimulator("gpt-4o-mini", base_url="https://api.openai.com/v1", api_key="sk-x")
    anthropic = OpenAICompatibleSimulator("claude", base_url="https://api.anthropic.com/v1/", api_key="sk-x")
    assert (openai.prompt_cache_key, openai.cache_control) == (True, False)
    assert (anthropic.prompt_cache_key, anthropic.cache_control) == (False, True)
    with prompt_cache_hint(PromptCacheHint("k", 0)):  # the paper's layout: nothing shared to mark
        assert anthropic.request_body(tuple(MESSAGES), None)["messages"][0]["content"] == SYSTEM
    with prompt_cache_hint(PromptCacheHint("k", len(SYSTEM))):  # all of it shared (a baseline): one part
        assert anthropic.request_body(tuple(MESSAGES), None)["messages"][0]["content"] == [
            {"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}
        ]
    with pytest.raises(InvalidParameterError, match="'prompt_cache_key' parameter"):
        OpenAICompatibleSimulator("m", base_url="http://127.0.0.1:1/v1", prompt_cache_key="yes")  # type: ignore[arg-type]


def test_cache_identity_ignores_the_hints() -> None:
    plain = OpenAICompatibleSimulator("m", base_url="http://127.0.0.1:1/v1")
    hinted = OpenAICompatibleSimulator(
        "m", base_url="http://127.0.0.1:1/v1", prompt_cache_key=True, cache_control=True
    )
    assert plain.cache_identity() == hinted.cache_identity()  # same answers: the response cache is shared
