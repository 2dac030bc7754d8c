"""OpenAICompatibleSimulator against a fake OpenAI server over real HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
import logging
import pickle
import threading
import time

import pytest

from fake_openai_server import FakeOpenAIServer, Fault, constant_responder, perfect_consim_responder
from xaimetrics._usage import UsageTracker
from xaimetrics.exceptions import InvalidParameterError, SimulatorError
from xaimetrics.simulators import AnswerSchema, ChatMessage, OpenAICompatibleSimulator

KEY = "sk-test-4c1d9b27e5f0a8"
REFERENCE = {"12": "not prime", "3": "Sci/Tech", "40": "positive"}
PROMPT = [
    ChatMessage("system", "Learn from Sample_1: prime. Answer 'Sample_<id>: <class>' per sample."),
    ChatMessage("user", "Sample_12: twelve\nSample_3: a chip\nSample_40: lovely"),
]
EXPECTED = "Sample_12: not prime\nSample_3: Sci/Tech\nSample_40: positive"


def make(server: FakeOpenAIServer, **kwargs: object) -> OpenAICompatibleSimulator:
    options: dict[str, object] = {
        "base_url": server.base_url,
        "api_key": KEY,
        "timeout": 2.0,
        "max_retries": 3,
    }
    options.update(kwargs)
    return OpenAICompatibleSimulator("fake-qwen", **options)  # type: ignore[arg-type]


@pytest.fixture
def server():
    with FakeOpenAIServer(perfect_consim_responder(REFERENCE)) as fake:
        yield fake


def test_normal_answer_with_usage_and_request_body(server: FakeOpenAIServer) -> None:
    sim = make(server, seed=7, max_tokens=99, temperature=0.0, price_per_1k_tokens=(1.0, 2.0))
    response = sim.generate(PROMPT)
    assert response.text == EXPECTED
    assert response.error is None and response.attempts == 1 and not response.cached
    assert response.model == "fake-qwen"
    # the fake server counts whitespace words: 16 in the prompt, 7 in the answer
    assert (response.prompt_tokens, response.completion_tokens) == (16, 7)
    assert response.cost_usd == pytest.approx((16 * 1.0 + 7 * 2.0) / 1000)
    (request,) = server.chat_requests
    assert request.body["model"] == "fake-qwen"
    assert (
        request.body["seed"] == 7 and request.body["max_tokens"] == 99 and request.body["temperature"] == 0.0
    )
    assert request.messages == [m.as_dict() for m in PROMPT]
    assert request.headers["authorization"] == f"Bearer {KEY}"  # the key is sent...


def test_key_never_in_repr_state_or_errors(
    server: FakeOpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    server.inject(Fault.server_error(401))
    sim = make(server)
    caplog.set_level(logging.DEBUG)
    response = sim.generate(PROMPT)
    assert response.error is not None and "401" in response.error
    texts = [repr(sim), str(sim.cache_identity()), response.error, repr(response), caplog.text]
    texts += [repr(v) for k, v in vars(sim).items() if k not in ("_client",)]
    assert not any(KEY in text for text in texts)
    assert response.attempts == 1  # 401 is not retried


def test_key_from_environment(monkeypatch: pytest.MonkeyPatch, server: FakeOpenAIServer) -> None:
    monkeypatch.setenv("MY_LLM_KEY", "sk-from-env-777")
    sim = OpenAICompatibleSimulator("m", base_url=server.base_url, api_key_env="MY_LLM_KEY", max_retries=0)
    assert sim.generate(PROMPT).error is None
    assert server.chat_requests[-1].headers["authorization"] == "Bearer sk-from-env-777"


def test_missing_key_for_openai_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(InvalidParameterError, match=r"'api_key' .*export OPENAI_API_KEY=\.\.\."):
        OpenAICompatibleSimulator("gpt-4o-mini")


def test_rate_limit_then_success_honours_retry_after(server: FakeOpenAIServer) -> None:
    server.inject(Fault.rate_limit(retry_after=0.9))
    sim = make(server)
    started = time.perf_counter()
    response = sim.generate(PROMPT)
    elapsed = time.perf_counter() - started
    assert response.text == EXPECTED and response.attempts == 2 and response.error is None
    assert elapsed >= 0.9  # the client's first backoff alone waits at most 0.5 s
    assert server.chat_request_count == 2
    first, second = server.chat_requests
    assert second.received_at - first.received_at >= 0.9


@pytest.mark.parametrize("status", [408, 409, 429, 502])
def test_the_clients_retryable_statuses(server: FakeOpenAIServer, status: int) -> None:
    server.inject(Fault.server_error(status, retry_after=0.01))
    response = make(server).generate(PROMPT)
    assert response.text == EXPECTED and response.attempts == 2 and server.chat_request_count == 2


def test_one_budget_for_the_clients_retries_and_malformed_bodies(server: FakeOpenAIServer) -> None:
    # garbage (retried here), 500 (retried by the client), garbage, then an answer the budget never reaches
    server.inject(Fault.garbage(), Fault.server_error(500, retry_after=0.01), Fault.garbage())
    response = make(server, max_retries=2).generate(PROMPT)
    assert response.error is not None and "after 3 attempts: malformed response" in response.error
    assert response.attempts == 3 and server.chat_request_count == 3


@pytest.mark.parametrize(
    "fault",
    [Fault.server_error(500), Fault.server_error(503), Fault.garbage(), Fault.drop(), Fault.delay(1.5)],
    ids=["500", "503", "garbage", "drop", "timeout"],
)
def test_transient_failure_is_retried(server: FakeOpenAIServer, fault: Fault) -> None:
    server.inject(fault)
    sim = make(server, timeout=0.5)
    response = sim.generate(PROMPT)
    assert response.error is None and response.text == EXPECTED
    assert response.attempts == 2
    assert server.chat_request_count == 2
    assert server.chat_requests[0].fault == fault.kind


def test_final_failure_returns_error_response_and_is_counted(server: FakeOpenAIServer) -> None:
    server.inject(Fault.server_error(503), Fault.rate_limit(0.0), Fault.garbage(), Fault.server_error(500))
    sim = make(server, max_retries=3)
    response = sim.generate(PROMPT)
    assert response.text == "" and response.attempts == 4
    assert (
        response.error is not None and "after 4 attempts" in response.error and "HTTP 500" in response.error
    )
    summary = sim.usage.summary()
    assert (summary.calls, summary.failed_calls, summary.attempts) == (1, 1, 4)
    # the next call succeeds: the simulator is still usable
    assert sim.generate(PROMPT).text == EXPECTED
    assert sim.usage.summary().failed_calls == 1


def test_timeout_failure_counts_attempts(server: FakeOpenAIServer) -> None:
    server.inject(Fault.delay(2.0), Fault.delay(2.0))
    sim = make(server, timeout=0.3, max_retries=1)
    response = sim.generate(PROMPT)
    assert response.attempts == 2 and response.error is not None and "timeout" in response.error


def test_raise_on_error(server: FakeOpenAIServer) -> None:
    server.inject(Fault.server_error(500), Fault.server_error(500))
    sim = make(server, max_retries=1, raise_on_error=True)
    with pytest.raises(SimulatorError, match="failed after 2 attempts: HTTP 500"):
        sim.generate(PROMPT)
    assert sim.usage.summary().failed_calls == 1


def test_each_retry_is_logged_with_its_status_and_wait(server: FakeOpenAIServer, caplog) -> None:
    server.inject(Fault.rate_limit(0.05), Fault.drop())
    with caplog.at_level(logging.DEBUG):
        response = make(server).generate(PROMPT)
    assert response.text == EXPECTED and response.attempts == 3
    retries = [r.getMessage() for r in caplog.records if r.name == "xaimetrics.simulators"]
    assert len(retries) == 2 and all(r.startswith("openai:fake-qwen: retry ") for r in retries)
    assert "retry 1 of 3 after HTTP 429; waited 0." in retries[0]
    assert "retry 2 of 3 after no response (timeout or connection error)" in retries[1]
    assert (
        KEY not in caplog.text and "Bearer" not in caplog.text
    )  # not even at DEBUG, the client's own records


def test_batch_respects_concurrency_limit_and_order() -> None:
    def echo_last(messages: list[dict]) -> str:
        return messages[-1]["content"].upper()

    with FakeOpenAIServer(echo_last, latency_s=0.1) as server:
        sim = make(server, max_concurrency=3)
        conversations = [[ChatMessage("user", f"q{i}")] for i in range(10)]
        started = time.perf_counter()
        responses = sim.generate_batch(conversations)
        elapsed = time.perf_counter() - started
        assert [r.text for r in responses] == [f"Q{i}" for i in range(10)]
        assert server.max_in_flight == 3
        assert elapsed >= 0.35  # ceil(10 / 3) rounds of 100 ms; sequential would be 1.0 s
        server.reset_records()
        sim.generate_batch(conversations[:4], max_concurrency=1)
        assert server.max_in_flight == 1


def test_batch_survives_failures_in_some_requests(server: FakeOpenAIServer) -> None:
    server.inject(Fault.server_error(500), Fault.server_error(500), Fault.server_error(500))
    sim = make(server, max_retries=0, max_concurrency=1)
    responses = sim.generate_batch([PROMPT] * 5)
    assert [r.error is None for r in responses] == [False, False, False, True, True]
    assert sim.usage.summary().failed_calls == 3


def test_batch_from_a_running_event_loop(server: FakeOpenAIServer) -> None:
    sim = make(server)

    async def inside() -> list[str]:
        return [r.text for r in sim.generate_batch([PROMPT, PROMPT])]

    assert asyncio.run(inside()) == [EXPECTED, EXPECTED]


def test_grammar_field_sends_the_schema_grammar(server: FakeOpenAIServer) -> None:
    schema = AnswerSchema(("12", "3"), ("not prime", "Sci/Tech"))
    make(server).generate(PROMPT, answer_schema=schema)
    make(server, grammar_field="grammar").generate(PROMPT, answer_schema=schema)
    plain, constrained = server.chat_requests
    assert "grammar" not in plain.body
    assert constrained.body["grammar"].startswith('root ::= line-0 "\\n" line-1')


def test_shared_usage_tracker_is_thread_safe(server: FakeOpenAIServer) -> None:
    tracker = UsageTracker()
    sims = [make(server), make(server)]
    for sim in sims:
        sim.usage = tracker
    threads = [threading.Thread(target=lambda s=s: [s.generate(PROMPT) for _ in range(5)]) for s in sims]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    summary = tracker.summary()
    assert summary.calls == 10 and summary.prompt_tokens == 160 and summary.completion_tokens == 70


def test_pickle_roundtrip_keeps_working(server: FakeOpenAIServer) -> None:
    sim = make(server)
    sim.generate(PROMPT)
    clone = pickle.loads(pickle.dumps(sim))
    assert clone.generate(PROMPT).text == EXPECTED


def test_max_completion_tokens_param(server: FakeOpenAIServer) -> None:
    make(server, max_tokens_param="max_completion_tokens", max_tokens=5).generate(PROMPT)
    body = server.chat_requests[0].body
    assert body["max_completion_tokens"] == 5 and "max_tokens" not in body


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"temperature": -1}, "'temperature' parameter of OpenAICompatibleSimulator must be a number ≥ 0"),
        ({"timeout": 0}, "'timeout' .* > 0"),
        ({"max_retries": -1}, "'max_retries' parameter of OpenAICompatibleSimulator must be an integer ≥ 0"),
        ({"price_per_1k_tokens": (1.0,)}, "'price_per_1k_tokens'"),
        ({"max_concurrency": 0}, "'max_concurrency'"),
    ],
)
def test_invalid_arguments(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(InvalidParameterError, match=match):
        OpenAICompatibleSimulator("m", base_url="http://127.0.0.1:9/v1", api_key="k", **kwargs)  # type: ignore[arg-type]


def test_invalid_messages_are_rejected_before_any_request() -> None:
    with FakeOpenAIServer(constant_responder("x")) as server:
        sim = make(server)
        with pytest.raises(
            InvalidParameterError, match=r"'messages' parameter of OpenAICompatibleSimulator\.generate"
        ):
            sim.generate("Sample_1: hi")  # type: ignore[arg-type]
        with pytest.raises(InvalidParameterError, match="role in"):
            sim.generate([{"role": "robot", "content": "hi"}])  # type: ignore[list-item]
        assert server.chat_request_count == 0


# -- malformed 200 responses become error responses (issue #11, class 9) ---------------------------------------
_CHOICE = {"index": 0, "message": {"role": "assistant", "content": "x"}, "finish_reason": "stop"}
MALFORMED_RETRIED = {
    "no choices": Fault.json({"id": "x", "object": "chat.completion"}),
    "choices is a dict": Fault.completion(choices={"0": _CHOICE}),
    "choices is a string": Fault.completion(choices="oops"),
    "choices is empty": Fault.completion(choices=[]),
    "a choice is a string": Fault.completion(choices=["x"]),
    "no message": Fault.completion(message=None),
    "message is a string": Fault.completion(message="hi"),
    "null content, stop": Fault.completion(content=None),
    "content is a number": Fault.completion(content=42),
    "content is a list": Fault.completion(content=["a"]),
    "negative usage": Fault.completion("x", usage={"prompt_tokens": -5, "completion_tokens": 1}),
    "absurd usage": Fault.completion("x", usage={"prompt_tokens": 1e30, "completion_tokens": 1}),
    "fractional usage": Fault.completion("x", usage={"prompt_tokens": 1.5, "completion_tokens": 1}),
    "usage is text": Fault.completion("x", usage={"prompt_tokens": "lots", "completion_tokens": 1}),
    "usage is a list": Fault.completion("x", usage=[1, 2]),
    "body is a list": Fault.json([1, 2]),
    "body is a string": Fault.json("hello"),
    "body is null": Fault.json(None),
}
MALFORMED_FINAL = {
    "content filter, null": (
        Fault.completion(None, finish_reason="content_filter"),
        "content filter withheld",
    ),
    "content filter, cut": (Fault.completion("Sample_12: n", finish_reason="content_filter"), "filter cut"),
    "null content at the token limit": (Fault.completion(None, finish_reason="length"), "raise max_tokens"),
    "refusal": (
        Fault.completion(message={"role": "assistant", "content": None, "refusal": "I cannot help"}),
        "refused to answer (I cannot help)",
    ),
}


@pytest.mark.parametrize("fault", MALFORMED_RETRIED.values(), ids=MALFORMED_RETRIED.keys())
def test_malformed_completion_is_an_error_then_retried(server: FakeOpenAIServer, fault: Fault) -> None:
    server.inject(fault)
    response = make(server).generate(PROMPT)
    assert response.error is None and response.text == EXPECTED and response.attempts == 2
    server.inject(fault)
    failed = make(server, max_retries=0).generate(PROMPT)
    assert failed.text == "" and failed.error is not None and "malformed response" in failed.error


@pytest.mark.parametrize(("fault", "message"), MALFORMED_FINAL.values(), ids=MALFORMED_FINAL.keys())
def test_filtered_or_empty_completion_is_an_error_not_retried(
    server: FakeOpenAIServer, fault: Fault, message: str
) -> None:
    server.inject(fault)
    response = make(server).generate(PROMPT)
    assert response.text == "" and response.error is not None and message in response.error
    assert response.attempts == 1 and server.chat_request_count == 1


def test_malformed_completions_never_abort_a_batch(server: FakeOpenAIServer) -> None:
    faults = [*MALFORMED_RETRIED.values(), *(fault for fault, _ in MALFORMED_FINAL.values())]
    server.inject(*faults)
    sim = make(server, max_retries=0, max_concurrency=1)
    responses = sim.generate_batch([PROMPT] * (len(faults) + 3))
    assert [r.error is None for r in responses] == [False] * len(faults) + [True] * 3
    assert all(r.text == EXPECTED for r in responses[len(faults) :])
    assert make(server, max_retries=0).generate(PROMPT).text == EXPECTED


@pytest.mark.parametrize("fault", [f for f, _ in MALFORMED_FINAL.values()], ids=MALFORMED_FINAL.keys())
def test_an_error_response_is_never_cached(server: FakeOpenAIServer, fault: Fault, tmp_path) -> None:
    from xaimetrics.simulators import CachedSimulator

    server.inject(fault)
    cached = CachedSimulator(make(server), tmp_path / "cache.sqlite")
    assert cached.generate(PROMPT).error is not None
    assert len(cached) == 0
    again = cached.generate(PROMPT)  # asks the server again, gets the real answer, stores it
    assert again.text == EXPECTED and not again.cached and server.chat_request_count == 2
    assert cached.generate(PROMPT).cached and len(cached) == 1


# -- credentials inside base_url (class 10) --------------------------------------------------------------------
SECRET = "s3cr3t-9f8e7d6c"
CREDENTIAL_URLS = [
    "http://user:{s}@127.0.0.1:{port}/v1",
    "http://{s}@127.0.0.1:{port}/v1",
    "http://{s}:x@127.0.0.1:{port}/v1/",
]


@pytest.mark.parametrize("template", CREDENTIAL_URLS)
def test_credentials_in_base_url_never_leave_the_simulator(
    server: FakeOpenAIServer, template: str, tmp_path
) -> None:
    from xaimetrics.simulators import CachedSimulator

    url = template.format(s=SECRET, port=server.port)
    sim = make(server, base_url=url, max_retries=0)
    assert sim.generate(PROMPT).text == EXPECTED  # the URL works...
    server.inject(Fault.server_error(400))
    failed = sim.generate(PROMPT)
    cached = CachedSimulator(sim, tmp_path / "cache.sqlite")
    cached.generate(PROMPT)
    cached.close()
    shown = [repr(sim), repr(cached), str(sim.cache_identity()), failed.error, repr(failed)]
    assert not any(SECRET in text for text in shown)  # ...but never shows up
    assert SECRET.encode() not in (tmp_path / "cache.sqlite").read_bytes()
    assert f"127.0.0.1:{server.port}/v1" in repr(sim)
