"""A fake OpenAI-compatible chat server over real HTTP on 127.0.0.1, for tests and benchmarks.

It speaks enough of the OpenAI REST API (``POST /v1/chat/completions``, ``GET /v1/models``) for the official
``openai`` client, answers with a ``responder(messages) -> str`` callable, and can inject failures into the
next requests (rate limits with ``Retry-After``, 5xx, a delay longer than the client timeout, a non-JSON body,
a dropped connection, a 200 JSON body that is not a usable completion). With a ``logprobs`` callable it
also returns token log-probabilities (``choices[0].logprobs.content`` with ``top_logprobs``) to requests
that ask for them (see :func:`token_script`). Like OpenAI's prompt cache it reports
``usage.prompt_tokens_details.cached_tokens``: the longest prefix of a request's prompt (its words, message by
message) shared with an earlier request, in steps of ``cache_block`` tokens from ``cache_minimum``. It records every request (path, headers, JSON body) and the maximum number of requests
in flight, so tests can check retries, the concurrency limit and what the client sent.

Import it from any test (``tests/`` is on ``sys.path`` under pytest)::

    from fake_openai_server import FakeOpenAIServer, Fault, perfect_consim_responder

    with FakeOpenAIServer(perfect_consim_responder({"3": "positive"}), faults=[Fault.rate_limit()]) as server:
        client = OpenAI(base_url=server.base_url, api_key="sk-test")
        ...
        assert server.chat_request_count == 2

or use the :func:`fake_openai_server` fixture (a factory that stops its servers at teardown).
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

import pytest

__all__ = [
    "FakeOpenAIServer",
    "Fault",
    "RecordedRequest",
    "certain_logprobs",
    "constant_responder",
    "fake_openai_server",
    "perfect_consim_responder",
    "split_tokens",
    "token_script",
]

Responder = Callable[[list[dict[str, Any]]], str]
#: ``(messages, answer text) -> choices[0].logprobs.content`` (OpenAI format), or None for ``"logprobs": null``
LogprobsResponder = Callable[[list[dict[str, Any]], str], "list[dict[str, Any]] | None"]
FaultKind = Literal["status", "delay", "garbage", "drop", "json"]


@dataclass(frozen=True)
class Fault:
    """One injected failure, consumed by the next chat-completion request.

    Build them with the class methods: ``Fault.rate_limit(retry_after=0.05)``, ``Fault.server_error(503)``,
    ``Fault.delay(2.0)``, ``Fault.garbage()``, ``Fault.drop()``, ``Fault.json(payload)`` (a 200 JSON body of
    your own; ``Fault.completion(...)`` builds a completion with chosen content, finish reason, usage).
    """

    kind: FaultKind
    status: int = 500
    retry_after: float | None = None
    delay_s: float = 0.0
    body: bytes = b""
    payload: Any = None

    @classmethod
    def rate_limit(cls, retry_after: float | None = 0.05) -> Fault:
        """HTTP 429 with a ``Retry-After`` header (seconds; ``None`` omits the header)."""
        return cls("status", status=429, retry_after=retry_after)

    @classmethod
    def server_error(cls, status: int = 500, retry_after: float | None = None) -> Fault:
        """An HTTP error status (500, 502, 503, or a client error such as 400/401)."""
        return cls("status", status=status, retry_after=retry_after)

    @classmethod
    def delay(cls, seconds: float) -> Fault:
        """Sleep ``seconds`` before answering normally (longer than the client timeout: a timeout)."""
        return cls("delay", delay_s=seconds)

    @classmethod
    def garbage(cls, body: bytes = b"<html>upstream proxy error</html>", status: int = 200) -> Fault:
        """Answer with a body that is not JSON, labelled ``application/json``."""
        return cls("garbage", status=status, body=body)

    @classmethod
    def drop(cls) -> Fault:
        """Close the connection without sending any response."""
        return cls("drop")

    @classmethod
    def json(cls, payload: Any, status: int = 200) -> Fault:
        """Answer with ``payload`` as a JSON body (valid JSON, but maybe not a completion)."""
        return cls("json", status=status, payload=payload)

    @classmethod
    def completion(
        cls,
        content: Any = "",
        *,
        finish_reason: Any = "stop",
        usage: Any = None,
        message: Any = "default",
        choices: Any = "default",
    ) -> Fault:
        """A 200 completion whose fields can be anything: ``content=None`` with
        ``finish_reason="content_filter"``, ``usage={"prompt_tokens": -5}``, ``message=None`` (the key is
        left out), ``choices={}``..."""
        choice: dict[str, Any] = {"index": 0, "finish_reason": finish_reason, "logprobs": None}
        if message == "default":
            choice["message"] = {"role": "assistant", "content": content}
        elif message is not None:
            choice["message"] = message
        payload: dict[str, Any] = {
            "id": "chatcmpl-fault", "object": "chat.completion", "created": 0, "model": "fake-model",
            "choices": [choice] if choices == "default" else choices,
        }  # fmt: skip
        if usage is not None:
            payload["usage"] = usage
        return cls.json(payload)


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server received it. ``headers`` keys are lower-cased."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    fault: FaultKind | None
    received_at: float = field(default_factory=time.monotonic)

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The chat messages of a chat-completion request (empty otherwise)."""
        if isinstance(self.body, dict) and isinstance(self.body.get("messages"), list):
            return self.body["messages"]
        return []


def _count_words(text: str) -> int:
    return len(text.split())


def constant_responder(text: str) -> Responder:
    """A responder that always answers ``text``."""

    def respond(messages: list[dict[str, Any]]) -> str:
        return text

    return respond


_SAMPLE_ID = re.compile(r"Sample_([A-Za-z0-9_\-]+?)(?=[^A-Za-z0-9_\-]|$)")


def _last_user_text(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):  # content parts
                return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def perfect_consim_responder(reference: Mapping[str | int, str]) -> Responder:
    """A responder that answers ``Sample_<id>: <reference[id]>`` for every sample id in the last user message.

    Ids are taken in order of first appearance; ids absent from ``reference`` are skipped.

    >>> respond = perfect_consim_responder({"7": "not prime", 2: "Sci/Tech"})
    >>> print(respond([{"role": "system", "content": "Sample_1: x"},
    ...                {"role": "user", "content": "Sample_7: seven\\nSample_2: two\\nSample_9: ?"}]))
    Sample_7: not prime
    Sample_2: Sci/Tech
    """
    table = {str(key): value for key, value in reference.items()}

    def respond(messages: list[dict[str, Any]]) -> str:
        seen: list[str] = []
        for sample_id in _SAMPLE_ID.findall(_last_user_text(messages)):
            if sample_id in table and sample_id not in seen:
                seen.append(sample_id)
        return "\n".join(f"Sample_{sample_id}: {table[sample_id]}" for sample_id in seen)

    return respond


# -- token log-probabilities ---------------------------------------------------------------------------------
_TOKEN = re.compile(r" ?[A-Za-z]+|[0-9]|\n|\s|[^A-Za-z0-9\s]")


def split_tokens(text: str) -> list[str]:
    """A toy BPE-like split: words with their leading space, single digits, single symbols.

    >>> split_tokens("Sample_12: Class_1\\nSample_3: not prime")
    ['Sample', '_', '1', '2', ':', ' Class', '_', '1', '\\n', 'Sample', '_', '3', ':', ' not', ' prime']
    """
    return _TOKEN.findall(text)


def _token_entry(token: str, alternatives: Mapping[str, float]) -> dict[str, Any]:
    """One ``logprobs.content`` item: the token and its alternatives (probabilities) sorted, most probable first."""
    ranked = sorted(alternatives.items(), key=lambda item: -item[1])
    return {
        "token": token,
        "logprob": math.log(alternatives[token]),
        "bytes": list(token.encode()),
        "top_logprobs": [
            {"token": alt, "logprob": math.log(p), "bytes": list(alt.encode())} for alt, p in ranked if p > 0
        ],
    }


def certain_logprobs(messages: list[dict[str, Any]], text: str) -> list[dict[str, Any]]:
    """A :data:`LogprobsResponder` giving every token of :func:`split_tokens` probability 1 (its only alternative).

    >>> [item["top_logprobs"] for item in certain_logprobs([], "ok")]
    [[{'token': 'ok', 'logprob': 0.0, 'bytes': [111, 107]}]]
    """
    return [_token_entry(token, {token: 1.0}) for token in split_tokens(text)]


def token_script(*items: str | tuple[str, Mapping[str, float]]) -> tuple[Responder, LogprobsResponder]:
    """A fixed answer given token by token, with chosen alternatives at some positions.

    Each item is a token (probability 1) or ``(token, {alternative: probability})`` (the token among them).
    Returns the text responder and the logprobs responder to give :class:`FakeOpenAIServer`.

    >>> respond, logprobs = token_script("Sample_1:", (" yes", {" yes": 0.7, " no": 0.2}))
    >>> respond([])
    'Sample_1: yes'
    >>> [(t["token"], round(t["logprob"], 4)) for t in logprobs([], "")[1]["top_logprobs"]]
    [(' yes', -0.3567), (' no', -1.6094)]
    """
    entries = [
        _token_entry(item, {item: 1.0}) if isinstance(item, str) else _token_entry(item[0], item[1])
        for item in items
    ]
    text = "".join(entry["token"] for entry in entries)
    return constant_responder(text), lambda messages, answer: [dict(entry) for entry in entries]


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    # Without TCP_NODELAY, small responses wait ~40 ms for Nagle's algorithm: a latency a real server doesn't add.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        return

    def _read_body(self) -> tuple[bytes, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return raw, json.loads(raw) if raw else None
        except ValueError:
            return raw, None

    def _send_json(self, status: int, payload: Any, headers: Mapping[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self._send_bytes(status, data, headers)

    def _send_bytes(self, status: int, data: bytes, headers: Mapping[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def do_GET(self) -> None:
        fake = self.server.fake
        fake._record(self, None, None)
        if fake._route(self, "GET", b"", None):
            return
        if self.path.rstrip("/") == "/v1/models":
            self._send_json(
                200,
                {
                    "object": "list",
                    "data": [{"id": fake.model, "object": "model", "created": 0, "owned_by": "fake"}],
                },
            )
        else:
            self._send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

    def do_POST(self) -> None:
        fake = self.server.fake
        raw, body = self._read_body()
        if self.path.rstrip("/") != "/v1/chat/completions":
            fake._record(self, body, None)
            if fake._route(self, "POST", raw, body):
                return
            self._send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        fault = fake._next_fault()
        fake._record(self, body, fault.kind if fault else None)
        with fake._in_flight():
            if fake.latency_s:
                fake._sleep(fake.latency_s)
            if fault is not None and self._apply_fault(fault):
                return
            self._answer(body)

    def _apply_fault(self, fault: Fault) -> bool:
        """Apply ``fault``; return True when the request is fully handled."""
        if fault.kind == "delay":
            self.server.fake._sleep(fault.delay_s)
            return False  # answer normally, too late for the client
        if fault.kind == "drop":
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
            return True
        if fault.kind == "garbage":
            self._send_bytes(fault.status, fault.body)
            return True
        if fault.kind == "json":
            self._send_json(fault.status, fault.payload)
            return True
        headers = {} if fault.retry_after is None else {"Retry-After": f"{fault.retry_after:g}"}
        error_type = "rate_limit_exceeded" if fault.status == 429 else "server_error"
        payload = {"error": {"message": f"injected HTTP {fault.status}", "type": error_type, "code": None}}
        self._send_json(fault.status, payload, headers)
        return True

    def _answer(self, body: Any) -> None:
        status, payload = self.server.fake.complete(body)
        self._send_json(status, payload)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    fake: FakeOpenAIServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gave up (timeout, dropped connection) makes the late write fail: expected, stay quiet.
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


class FakeOpenAIServer:
    """A threaded HTTP server on ``127.0.0.1:<ephemeral port>`` that imitates the OpenAI chat API.

    Args:
        responder: ``messages -> answer text`` (default: answers ``"ok"``).
        faults: failures applied, in order, to the next chat-completion requests (one per request).
        latency_s: fixed delay added to every chat-completion request (e.g. 0.2 for benchmarks).
        model: the model id listed by ``/v1/models`` and echoed when a request names none.
        logprobs: ``(messages, text) -> logprobs content`` for requests with ``logprobs: true`` (default: none,
            ``"logprobs": null`` like a server that ignores the option); see :func:`token_script`.
        cache_block, cache_minimum: the prompt cache's granularity and the shortest prompt it caches, in
            tokens (words; OpenAI: 128 and 1,024 tokens); ``cache_block=0`` reports no cached tokens.

    Attributes (read them after the requests): ``requests`` (every :class:`RecordedRequest`),
    ``chat_request_count``, ``completion_count`` (successful answers), ``max_in_flight``, ``base_url``.
    """

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        faults: Iterable[Fault] = (),
        latency_s: float = 0.0,
        model: str = "fake-model",
        logprobs: LogprobsResponder | None = None,
        cache_block: int = 1,
        cache_minimum: int = 0,
    ) -> None:
        self.responder: Responder = responder or constant_responder("ok")
        self.cache_block = cache_block
        self.cache_minimum = cache_minimum
        self._prompts: list[list[tuple[str, str]]] = []
        self.logprobs = logprobs
        self.latency_s = float(latency_s)
        self.model = model
        self._faults: deque[Fault | None] = deque(faults)
        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []
        self._in_flight_now = 0
        self._max_in_flight = 0
        self._completions = 0
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------------------------
    def start(self) -> FakeOpenAIServer:
        """Bind an ephemeral port and serve in a background thread. Returns ``self``."""
        if self._server is not None:
            return self
        server = _Server(("127.0.0.1", 0), _Handler)
        server.fake = self
        self._server = server
        self._stopping.clear()
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-openai", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; requests sleeping in a delay fault are woken up."""
        if self._server is None:
            return
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- addresses -------------------------------------------------------------------------------------------
    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError(
                "FakeOpenAIServer is not started; use it as a context manager or call start()."
            )
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """The ``base_url`` to give an OpenAI client: ``http://127.0.0.1:<port>/v1``."""
        return self.url + "/v1"

    # -- faults ----------------------------------------------------------------------------------------------
    def inject(self, *faults: Fault | None) -> None:
        """Append failures for the next chat-completion requests (``None``: that request is answered)."""
        with self._lock:
            self._faults.extend(faults)

    @property
    def pending_faults(self) -> int:
        with self._lock:
            return len(self._faults)

    def _next_fault(self) -> Fault | None:
        with self._lock:
            return self._faults.popleft() if self._faults else None

    def _sleep(self, seconds: float) -> None:
        self._stopping.wait(seconds)

    # -- records ---------------------------------------------------------------------------------------------
    def _record(self, handler: _Handler, body: Any, fault: FaultKind | None) -> None:
        headers = {key.lower(): value for key, value in handler.headers.items()}
        with self._lock:
            self._requests.append(RecordedRequest(handler.command, handler.path, headers, body, fault))

    class _InFlight:
        def __init__(self, fake: FakeOpenAIServer) -> None:
            self.fake = fake

        def __enter__(self) -> None:
            with self.fake._lock:
                self.fake._in_flight_now += 1
                self.fake._max_in_flight = max(self.fake._max_in_flight, self.fake._in_flight_now)

        def __exit__(self, *exc_info: object) -> None:
            with self.fake._lock:
                self.fake._in_flight_now -= 1

    def _in_flight(self) -> FakeOpenAIServer._InFlight:
        return FakeOpenAIServer._InFlight(self)

    @property
    def requests(self) -> list[RecordedRequest]:
        """A copy of every request received so far, in arrival order."""
        with self._lock:
            return list(self._requests)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [
            r for r in self.requests if r.method == "POST" and r.path.rstrip("/") == "/v1/chat/completions"
        ]

    @property
    def chat_request_count(self) -> int:
        """How many chat-completion requests arrived (including those that got an injected fault)."""
        return len(self.chat_requests)

    @property
    def completion_count(self) -> int:
        """How many chat-completion requests were answered successfully."""
        with self._lock:
            return self._completions

    @property
    def max_in_flight(self) -> int:
        """The largest number of chat-completion requests handled at the same time."""
        with self._lock:
            return self._max_in_flight

    def _cached_tokens(self, messages: list[dict[str, Any]]) -> int:
        """The request's prompt tokens in a prefix shared with an earlier request (then this one is cached too)."""
        tokens = [(str(m.get("role")), word) for m in messages for word in str(m.get("content", "")).split()]
        with self._lock:
            shared = 0
            for earlier in self._prompts:
                n = 0
                for a, b in zip(tokens, earlier, strict=False):
                    if a != b:
                        break
                    n += 1
                shared = max(shared, n)
            self._prompts.append(tokens)
        if self.cache_block <= 0 or len(tokens) < self.cache_minimum:
            return 0
        return shared // self.cache_block * self.cache_block

    # -- answers ---------------------------------------------------------------------------------------------
    def complete(self, body: Any) -> tuple[int, dict[str, Any]]:
        """The HTTP status and JSON payload the server answers to a chat-completion request ``body`` (the Batch
        API fake of ``fake_batch_api`` answers its lines with it too)."""
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return 400, {"error": {"message": "body must be JSON with 'messages'", "type": "invalid"}}
        messages = body["messages"]
        try:
            text = self.responder(messages)
        except Exception as error:  # a broken responder is a server error, visible to the test
            return 500, {"error": {"message": f"responder failed: {error!r}", "type": "server_error"}}
        prompt_tokens = sum(_count_words(str(m.get("content", ""))) for m in messages)
        completion_tokens = _count_words(text)
        cached_tokens = self._cached_tokens(messages)
        with self._lock:
            self._completions += 1
            number = self._completions
        payload = {
            "id": f"chatcmpl-fake-{number}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": str(body.get("model") or self.model),
            "system_fingerprint": "fp_fake",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                    "logprobs": self._logprobs(body, messages, text),
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
                "prompt_tokens_details": {"cached_tokens": cached_tokens},
            },
        }
        return 200, payload

    def _logprobs(self, body: dict[str, Any], messages: list[dict[str, Any]], text: str) -> Any:
        """``{"content": [...]}`` when the request asks for logprobs and the server has a logprobs responder."""
        if self.logprobs is None or not body.get("logprobs"):
            return None
        content = self.logprobs(messages, text)
        if content is None:
            return None
        top = int(body.get("top_logprobs") or 0)  # like OpenAI: only the requested number of alternatives
        return {"content": [{**item, "top_logprobs": item["top_logprobs"][:top]} for item in content]}

    def _route(self, handler: _Handler, method: str, raw: bytes, body: Any) -> bool:
        """Handle a request to another path than the chat and model endpoints; True when answered. None here:
        subclasses add endpoints (``fake_batch_api.FakeBatchServer``: Files and Batches)."""
        return False

    def reset_records(self) -> None:
        """Forget recorded requests and counters (faults still pending are kept)."""
        with self._lock:
            self._requests.clear()
            self._max_in_flight = self._in_flight_now
            self._completions = 0


@pytest.fixture
def fake_openai_server() -> Iterator[Callable[..., FakeOpenAIServer]]:
    """A factory fixture: ``server = fake_openai_server(responder, faults=[...], latency_s=0.0)``.

    Servers are started when made and stopped at teardown. Register it in a test module with
    ``from fake_openai_server import fake_openai_server  # noqa: F401`` or in a conftest with
    ``pytest_plugins = ["fake_openai_server"]`` (root conftest only).
    """
    servers: list[FakeOpenAIServer] = []

    def make(responder: Responder | None = None, **kwargs: Any) -> FakeOpenAIServer:
        server = FakeOpenAIServer(responder, **kwargs).start()
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.stop()
