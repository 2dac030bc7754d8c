"""The shared fake OpenAI server itself (other families' tests rely on it)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import openai
import pytest

from fake_openai_server import (
    FakeOpenAIServer,
    Fault,
    fake_openai_server,  # noqa: F401  (fixture)
    perfect_consim_responder,
)


def post(url: str, payload: object) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(
        url, data=json.dumps(payload).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def test_openai_client_round_trip_and_models() -> None:
    responder = perfect_consim_responder({"4": "Sci/Tech", "9": "not prime", "1": "World"})
    with FakeOpenAIServer(responder, model="served-model") as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="sk-x", max_retries=0)
        completion = client.chat.completions.create(
            model="m",
            messages=[
                {"role": "system", "content": "Sample_1: learning phase"},
                {"role": "user", "content": "Sample_9: nine\nSample_4: chips\nSample_9 again"},
            ],
        )
        assert completion.choices[0].message.content == "Sample_9: not prime\nSample_4: Sci/Tech"
        assert completion.usage.prompt_tokens == 9 and completion.usage.completion_tokens == 5
        assert [m.id for m in client.models.list().data] == ["served-model"]
        assert server.chat_request_count == 1 and server.completion_count == 1
        assert [r.path for r in server.requests] == ["/v1/chat/completions", "/v1/models"]


def test_faults_are_consumed_in_order() -> None:
    with FakeOpenAIServer(
        faults=[Fault.rate_limit(1.5), Fault.server_error(503), Fault.garbage(b"oops")]
    ) as server:
        url = server.base_url + "/chat/completions"
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        status, headers, _ = post(url, body)
        assert status == 429 and headers["Retry-After"] == "1.5"
        assert post(url, body)[0] == 503
        assert post(url, body)[2] == b"oops"
        status, _, data = post(url, body)
        assert status == 200 and json.loads(data)["choices"][0]["message"]["content"] == "ok"
        assert [r.fault for r in server.chat_requests] == ["status", "status", "garbage", None]
        assert server.pending_faults == 0


def test_bad_request_body_is_a_400() -> None:
    with FakeOpenAIServer() as server:
        assert post(server.base_url + "/chat/completions", {"nope": 1})[0] == 400
        assert post(server.url + "/other", {})[0] == 404


def test_fixture_factory(fake_openai_server) -> None:  # noqa: F811
    server = fake_openai_server(latency_s=0.01)
    client = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0)
    assert client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}]).choices
    assert server.max_in_flight == 1


def test_unstarted_server_has_no_address() -> None:
    with pytest.raises(RuntimeError, match="not started"):
        _ = FakeOpenAIServer().base_url
