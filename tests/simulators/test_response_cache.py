"""CachedSimulator: persistent SQLite cache, zero calls on a rerun, no secrets stored, errors not cached."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from fake_openai_server import FakeOpenAIServer, Fault, perfect_consim_responder
from xaimetrics.simulators import (
    AnswerSchema,
    CachedSimulator,
    ChatMessage,
    OpenAICompatibleSimulator,
    ScriptedSimulator,
)
from xaimetrics.simulators._response_cache import cache_key

KEY = "sk-cache-test-9f8e7d6c5b4a"
REFERENCE = {"5": "World", "8": "Sci/Tech", "13": "Business"}


def prompt(ids: tuple[str, ...] = ("5", "8", "13")) -> list[ChatMessage]:
    return [
        ChatMessage("system", "Topics."),
        ChatMessage("user", "\n".join(f"Sample_{i}: text {i}" for i in ids)),
    ]


def openai_sim(server: FakeOpenAIServer, **kwargs: object) -> OpenAICompatibleSimulator:
    options: dict[str, object] = {"base_url": server.base_url, "api_key": KEY, "max_retries": 0}
    options.update(kwargs)
    return OpenAICompatibleSimulator("fake-model", **options)  # type: ignore[arg-type]


def test_rerun_makes_zero_requests_and_key_is_not_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / "cache" / "responses.sqlite"
    conversations = [prompt(), prompt(("8", "5")), prompt(("13",))]
    with FakeOpenAIServer(perfect_consim_responder(REFERENCE)) as server:
        first = CachedSimulator(openai_sim(server), path)
        answers = [r.text for r in first.generate_batch(conversations)]
        assert server.chat_request_count == 3
        assert all(r.headers["authorization"] == f"Bearer {KEY}" for r in server.chat_requests)
        first.close()

        # a new process would build new objects: same model and parameters, new cache handle
        second = CachedSimulator(openai_sim(server), path)
        responses = second.generate_batch(conversations)
        assert server.chat_request_count == 3  # zero new requests
        assert [r.text for r in responses] == answers
        assert all(r.cached and r.attempts == 0 and r.cost_usd == 0.0 for r in responses)
        assert responses[0].prompt_tokens > 0  # tokens are still reported
        summary = second.usage.summary()
        assert (summary.calls, summary.cached_calls, summary.attempts) == (3, 3, 0)
        assert second.inner.usage.summary().calls == 0
        second.close()
    raw = b"".join(p.read_bytes() for p in path.parent.iterdir())  # database, WAL and shared-memory files
    assert KEY.encode() not in raw
    assert b"authorization" not in raw.lower() and b"bearer" not in raw.lower()
    assert b"Sample_8: Sci/Tech" in raw  # the answers themselves are stored


def test_key_changes_do_not_change_the_cache_key(tmp_path: Path) -> None:
    with FakeOpenAIServer(perfect_consim_responder(REFERENCE)) as server:
        path = tmp_path / "c.sqlite"
        CachedSimulator(openai_sim(server), path).generate(prompt())
        other_key = OpenAICompatibleSimulator("fake-model", base_url=server.base_url, api_key="sk-other-key")
        assert CachedSimulator(other_key, path).generate(prompt()).cached
        assert server.chat_request_count == 1


@pytest.mark.parametrize(
    "change",
    [{"temperature": 0.7}, {"seed": 1}, {"max_tokens": 10}, {"model": "other-model"}],
    ids=["temperature", "seed", "max_tokens", "model"],
)
def test_sampling_parameters_and_model_are_part_of_the_key(tmp_path: Path, change: dict[str, object]) -> None:
    with FakeOpenAIServer(perfect_consim_responder(REFERENCE)) as server:
        path = tmp_path / "c.sqlite"
        CachedSimulator(openai_sim(server), path).generate(prompt())
        options = {"base_url": server.base_url, "api_key": KEY, "max_retries": 0}
        model = str(change.pop("model", "fake-model"))
        changed = OpenAICompatibleSimulator(model, **options, **change)  # type: ignore[arg-type]
        assert not CachedSimulator(changed, path).generate(prompt()).cached
        assert server.chat_request_count == 2


def test_messages_and_answer_schema_are_part_of_the_key(tmp_path: Path) -> None:
    inner = ScriptedSimulator(lambda messages: "Sample_5: World")
    sim = CachedSimulator(inner, tmp_path / "c.sqlite")
    schema = AnswerSchema(("5",), ("World", "Sports"))
    sim.generate(prompt(("5",)))
    sim.generate(prompt(("5",)), answer_schema=schema)
    sim.generate(prompt(("5",)), answer_schema=AnswerSchema(("5",), ("World", "Business")))
    sim.generate([ChatMessage("user", "Sample_5: text 5")])
    assert len(inner.calls) == 4
    sim.generate(prompt(("5",)), answer_schema=schema)
    assert len(inner.calls) == 4 and len(sim) == 4


def test_errors_are_not_cached(tmp_path: Path) -> None:
    with FakeOpenAIServer(perfect_consim_responder(REFERENCE), faults=[Fault.server_error(503)]) as server:
        sim = CachedSimulator(openai_sim(server), tmp_path / "c.sqlite")
        failed = sim.generate(prompt())
        assert failed.error is not None and not failed.cached and len(sim) == 0
        retried = sim.generate(prompt())
        assert retried.error is None and not retried.cached
        assert sim.generate(prompt()).cached
        assert server.chat_request_count == 2
        assert sim.usage.summary().failed_calls == 1


def test_cache_key_is_order_insensitive_for_identity_but_not_for_messages() -> None:
    a, b = ChatMessage("user", "Sample_1: a"), ChatMessage("user", "Sample_2: b")
    identity = {"model": "m", "seed": 0}
    assert cache_key(identity, (a, b), None) == cache_key({"seed": 0, "model": "m"}, (a, b), None)
    assert cache_key(identity, (a, b), None) != cache_key(identity, (b, a), None)


def test_concurrent_threads_share_one_cache(tmp_path: Path) -> None:
    calls = []
    lock = threading.Lock()

    def answer(messages: tuple[ChatMessage, ...]) -> str:
        with lock:
            calls.append(messages[-1].content)
        return messages[-1].content[::-1]

    sim = CachedSimulator(ScriptedSimulator(answer), tmp_path / "c.sqlite")
    errors: list[BaseException] = []

    def worker(offset: int) -> None:
        try:
            for i in range(20):
                text = f"q{(i + offset) % 25}"
                assert sim.generate([ChatMessage("user", text)]).text == text[::-1]
        except BaseException as error:  # collect for the main thread
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(k * 5,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(sim) == 25
    assert sim.usage.summary().calls == 80
    assert sim.usage.summary().cached_calls == 80 - len(calls)
    with sqlite3.connect(tmp_path / "c.sqlite") as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_batch_through_the_cache(tmp_path: Path) -> None:
    with FakeOpenAIServer(perfect_consim_responder(REFERENCE)) as server:
        sim = CachedSimulator(openai_sim(server, max_concurrency=2), tmp_path / "c.sqlite")
        conversations = [prompt((i,)) for i in ("5", "8", "13")]
        first = sim.generate_batch(conversations)
        second = sim.generate_batch(conversations)
        assert [r.text for r in first] == ["Sample_5: World", "Sample_8: Sci/Tech", "Sample_13: Business"]
        assert [r.text for r in second] == [r.text for r in first]
        assert all(r.cached for r in second) and server.chat_request_count == 3
