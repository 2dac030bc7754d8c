"""A credential inside ``base_url`` (``http://user:KEY@host/v1``) reaches the server as HTTP Basic
authentication, as before, and no log line of the HTTP library (httpx, or httpx2 for openai 3), httpcore or
openai — at any level — carries it."""

from __future__ import annotations

import base64
import logging

import pytest

from fake_openai_server import fake_openai_server  # noqa: F401  (fixture)
from xaimetrics.simulators import ChatMessage, OpenAICompatibleSimulator

pytest.importorskip("openai")

SECRET = "sk-SECRET-4f9a2c"


@pytest.mark.parametrize("batch", [False, True])
def test_no_credential_in_debug_logs_of_httpx_and_openai(fake_openai_server, caplog, batch):  # noqa: F811
    server = fake_openai_server()
    url = server.base_url.replace("http://", f"http://alice:{SECRET}@")
    caplog.set_level(logging.DEBUG)  # the root logger: every library's records
    for name in ("httpx", "httpx2", "httpcore", "httpcore2", "openai", "openai._base_client"):
        caplog.set_level(logging.DEBUG, logger=name)
    sim = OpenAICompatibleSimulator("fake-model", base_url=url, api_key="sk-api-key", max_retries=0)
    messages = [ChatMessage("user", "Sample_1: hello?")]
    answers = sim.generate_batch([messages, messages]) if batch else [sim.generate(messages)]
    assert all(a.text == "ok" for a in answers)
    assert "HTTP Request: POST http://127.0.0.1" in caplog.text  # the HTTP library did log the URL
    assert SECRET not in caplog.text
    assert base64.b64encode(f"alice:{SECRET}".encode()).decode() not in caplog.text
    # the server still gets the credential, as the Basic authentication httpx builds from such a URL
    expected = "Basic " + base64.b64encode(f"alice:{SECRET}".encode()).decode()
    assert {r.headers.get("authorization") for r in server.chat_requests} == {expected}
    assert SECRET not in repr(sim)
