"""A simulator talking to any OpenAI-compatible chat server (OpenAI, vLLM, llama.cpp server, Ollama).

Retries are the ``openai`` client's own (HTTP 408/409/429/5xx, timeouts and connection errors, exponential
backoff with jitter, ``Retry-After`` honoured). This module adds only what the client does not do, each piece
marked where it happens:

- a **200 body that is not a usable completion** (:func:`completion_problem`, or a body that is not JSON) is
  retried here, within the same budget of ``max_retries``: the client returns such a body as a success;
- **attempts are counted** per call (an ``httpx`` request hook), for :class:`~xaimetrics.simulators.Usage`
  and for the log: the client's exceptions and responses do not say how many requests they took;
- each retry is **logged** on ``xaimetrics.simulators`` (INFO) with the status and the wait, never the URL's
  credentials, the key or a header: the client's own retry record names neither the status nor the call.
"""

from __future__ import annotations

import base64
import contextlib
import contextvars
import dataclasses
import logging
import os
import random
import threading
import time
import urllib.parse
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Literal, Protocol

from xaimetrics._optional import import_optional
from xaimetrics._urls import public_url as _public_url
from xaimetrics._urls import scrub_url, split_credentials
from xaimetrics._validation import check_positive_int, invalid
from xaimetrics.simulators._base import AnswerSchema, BaseSimulator, ChatMessage, SimulatorResponse
from xaimetrics.simulators._grammar import answer_grammar
from xaimetrics.simulators._logprobs import read_class_probabilities, token_logprobs
from xaimetrics.simulators._prices import TokenPrice, token_price
from xaimetrics.simulators._probabilities import check_probabilities

if TYPE_CHECKING:
    import httpx2
    from openai import OpenAI
    from openai.types.chat import ChatCompletion

__all__ = ["OpenAICompatibleSimulator"]

_OWNER = "OpenAICompatibleSimulator"
_LOG = logging.getLogger("xaimetrics.simulators")
_DEFAULT_BASE_URL = "https://api.openai.com/v1"
_DEFAULT_TOP_LOGPROBS = 20
_FALLBACKS = ("uniform", "error")


class _Secret:
    """Holds a credential; its repr never shows it."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "_Secret('***')"


#: token counts above this are not usage numbers but a broken server (no context window is near it)
MAX_USAGE_TOKENS = 10**9


def completion_problem(completion: object) -> tuple[str, bool] | None:
    """Why an HTTP 200 completion cannot be used as an answer, and whether a retry may help; ``None`` if fine.

    A body that is valid JSON is not necessarily a completion: ``choices`` may be missing or not a list,
    ``message`` absent, ``content`` null or not text, usage numbers negative, fractional or absurd. Each
    becomes an error response (never cached, never scored) instead of an exception that would abort a whole
    batch. A ``content_filter`` finish (null or cut content) and a null content at ``finish_reason="length"``
    are not retried: the same request gets the same verdict.

    Example:
        >>> from types import SimpleNamespace as NS
        >>> ok = NS(choices=[NS(message=NS(content="Sample_1: a"), finish_reason="stop")], usage=None)
        >>> completion_problem(ok) is None
        True
        >>> completion_problem(NS(choices=[NS(message=NS(content=None), finish_reason="content_filter")]))
        ("the server's content filter withheld the answer (finish_reason='content_filter')", False)
        >>> completion_problem(NS(choices="oops"))
        ("malformed response: 'choices' is a str, not a non-empty list", True)
    """
    choices = getattr(completion, "choices", None)
    if not isinstance(choices, list) or not choices:
        kind = "missing" if choices is None else "empty" if choices == [] else f"a {type(choices).__name__}"
        return f"malformed response: 'choices' is {kind}, not a non-empty list", True
    choice = choices[0]
    message = getattr(choice, "message", None)
    finish = getattr(choice, "finish_reason", None)
    if message is None:
        return "malformed response: choices[0] has no 'message'", True
    content = getattr(message, "content", None)
    if finish == "content_filter":
        verb = "withheld" if not content else "cut"
        return f"the server's content filter {verb} the answer (finish_reason='content_filter')", False
    if content is None:
        refusal = getattr(message, "refusal", None)
        if isinstance(refusal, str) and refusal:
            return f"the model refused to answer ({refusal[:200]})", False
        if finish == "length":
            return "no content before the token limit (finish_reason='length'); raise max_tokens", False
        return f"malformed response: the message content is null (finish_reason={finish!r})", True
    if not isinstance(content, str):
        return f"malformed response: the message content is a {type(content).__name__}, not text", True
    usage = getattr(completion, "usage", None)
    if isinstance(usage, list | tuple | str | int | float):
        return f"malformed response: 'usage' is a {type(usage).__name__}, not an object", True
    for name in ("prompt_tokens", "completion_tokens"):
        value = getattr(usage, name, None) if usage is not None else None
        if value is None:
            continue
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not 0 <= value <= MAX_USAGE_TOKENS
            or value != int(value)
        ):
            return f"malformed response: usage.{name} is {value!r}, not a token count", True
    return None


def cached_prompt_tokens(completion: object, prompt_tokens: int) -> int:
    """The prompt tokens a server read from its prompt cache: OpenAI's ``usage.prompt_tokens_details.cached_tokens``,
    else the llama.cpp server's ``timings.cache_n``; 0 when it reports neither (or a count outside
    ``[0, prompt_tokens]``, which no cache can give).

    Example:
        >>> from types import SimpleNamespace as NS
        >>> cached_prompt_tokens(NS(usage=NS(prompt_tokens_details=NS(cached_tokens=1024))), 1500)
        1024
        >>> cached_prompt_tokens(NS(usage=NS(prompt_tokens_details=None), timings={"cache_n": 37}), 50)
        37
    """
    details = getattr(getattr(completion, "usage", None), "prompt_tokens_details", None)
    value = (
        details.get("cached_tokens") if isinstance(details, dict) else getattr(details, "cached_tokens", None)
    )
    if value is None:
        timings = getattr(completion, "timings", None)
        value = timings.get("cache_n") if isinstance(timings, dict) else None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= prompt_tokens:
        return 0
    return value


@dataclasses.dataclass(frozen=True)
class PromptCacheHint:
    """What a caller knows about a call's place in a grid, for the provider's prompt cache: ``key`` names the
    prompts that share a prefix (a grid's seed: sent as OpenAI's ``prompt_cache_key``, which routes them to the
    same cache), ``shared_chars`` is how much of the first message they share (where an Anthropic
    ``cache_control`` breakpoint goes; 0: none)."""

    key: str
    shared_chars: int = 0


_HINT: contextvars.ContextVar[PromptCacheHint | None] = contextvars.ContextVar(
    "xaimetrics_prompt_cache_hint", default=None
)


@contextlib.contextmanager
def prompt_cache_hint(hint: PromptCacheHint | None) -> Iterator[None]:
    """Give the OpenAI-compatible calls made in this block (in this thread) ``hint``.

    Example:
        >>> sim = OpenAICompatibleSimulator("m", base_url="https://api.openai.com/v1", api_key="sk-x")
        >>> with prompt_cache_hint(PromptCacheHint("grid-seed-3")):
        ...     sim.request_body((ChatMessage("user", "Hi"),), None)["prompt_cache_key"]
        'grid-seed-3'
    """
    token = _HINT.set(hint)
    try:
        yield
    finally:
        _HINT.reset(token)


def _host(url: str) -> str:
    return (urllib.parse.urlsplit(url).hostname or "").lower()


class OpenAICompatibleSimulator(BaseSimulator):
    """Chat completions over HTTP with retries, a concurrency limit and accounting.

    Uses the official ``openai`` client (extra ``openai``) and its retries: HTTP 408/409/429/5xx, timeouts and
    connection errors are retried with exponential backoff and jitter (0.5 s doubling up to 8 s), honouring
    ``Retry-After`` up to two minutes. A 200 body that is not a usable completion (:func:`completion_problem`:
    no ``message``, ``choices`` not a list, absurd usage, null content or a ``content_filter`` finish, or not
    JSON at all) is an error too, retried here when a retry may help, within the same ``max_retries``. Each
    retry is logged on ``xaimetrics.simulators`` (INFO: the status and the wait). A call that still fails
    returns a :class:`SimulatorResponse` whose ``error`` is set and ``text`` empty (or raises
    :class:`~xaimetrics.exceptions.SimulatorError` with ``raise_on_error=True``), so one bad request does not
    end a long run. The API key is read once and kept only inside the HTTP clients: it never appears in
    ``repr``, error messages, cache keys or results; nor do credentials inside ``base_url``.

    **Class probabilities** (``AnswerSchema(probabilities=True)``): the same chat request also asks for
    ``logprobs=True, top_logprobs=K``; for each answer line ``Sample_{id}: {class}`` the distribution over the
    classes is read from the top-``K`` alternatives of the token where the class names diverge (details,
    including classes absent from the top ``K``, in :mod:`xaimetrics.simulators._logprobs` and
    ``docs/consim.md``). The answer is generated freely, so a later sample's answer is conditioned on the
    model's *own* earlier answers (never on f's predictions); the text is the generated answer. A sample
    whose line is missing or unreadable gets a uniform distribution, listed in
    ``metadata["probability_fallback_ids"]`` (``probability_fallback="uniform"``), or makes the response an
    error (``"error"``); a response where no sample can be read, or a server that returns no log-probabilities,
    is an error response (not retried) that says so.

    Args:
        model: the model name the server knows (``"gpt-4o-mini"``, ``"Qwen/Qwen2.5-7B-Instruct"``, ...).
        base_url: server URL ending in ``/v1`` (default: ``$OPENAI_BASE_URL`` or the OpenAI API).
        api_key: the key itself; by default it is read from the environment variable ``api_key_env``. Local
            servers without authentication get a placeholder.
        api_key_env: environment variable holding the key (default ``OPENAI_API_KEY``).
        temperature, seed, max_tokens: sampling parameters (greedy and seeded by default).
        timeout: seconds before a request is abandoned (then retried).
        max_retries: retries after the first attempt (the ``openai`` client's ``max_retries``).
        max_concurrency: requests in flight in :meth:`generate_batch` (threads).
        price_per_1k_tokens: USD per 1,000 tokens, to fill ``cost_usd``: ``(input, output)``, ``(input, output,
            cached input)``, a :class:`TokenPrice` or a model name of :data:`TOKEN_PRICES`. Prompt tokens the
            server read from its prompt cache (``cached_prompt_tokens``) are priced at the cached rate.
        raise_on_error: raise instead of returning an error response after the last retry.
        extra_body: extra JSON fields for the request (server-specific options).
        grammar_field: when set (``"grammar"`` for a llama.cpp server), an :class:`AnswerSchema` is sent as a
            GBNF grammar in this request field; otherwise the schema is ignored.
        max_tokens_param: ``"max_completion_tokens"`` for OpenAI reasoning models.
        top_logprobs: alternatives per token requested for class probabilities (OpenAI accepts at most 20).
        probability_fallback: for a sample whose class probabilities cannot be read, ``"uniform"`` (flagged in
            ``metadata["probability_fallback_ids"]``) or ``"error"`` (the whole response fails).
        prompt_cache_key: send the caller's :class:`PromptCacheHint` key as ``prompt_cache_key`` (OpenAI routes
            requests with one key to one prompt cache). ``None``: only to ``api.openai.com``.
        cache_control: send the first message as two text parts, an Anthropic ``cache_control`` breakpoint
            after the part the hint says is shared. ``None``: only to ``api.anthropic.com``.

    Example:
        >>> sim = OpenAICompatibleSimulator("qwen2.5", base_url="http://127.0.0.1:8080/v1", api_key="sk-x")
        >>> sim
        OpenAICompatibleSimulator(model='qwen2.5', base_url='http://127.0.0.1:8080/v1', temperature=0.0, seed=0)
    """

    supports_probabilities = True

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        temperature: float = 0.0,
        seed: int | None = 0,
        max_tokens: int = 512,
        timeout: float = 60.0,
        max_retries: int = 4,
        max_concurrency: int = 8,
        price_per_1k_tokens: TokenPrice | tuple[float, ...] | str | None = None,
        raise_on_error: bool = False,
        extra_body: Mapping[str, object] | None = None,
        grammar_field: str | None = None,
        max_tokens_param: Literal["max_tokens", "max_completion_tokens"] = "max_tokens",
        top_logprobs: int = _DEFAULT_TOP_LOGPROBS,
        probability_fallback: Literal["uniform", "error"] = "uniform",
        prompt_cache_key: bool | None = None,
        cache_control: bool | None = None,
    ) -> None:
        if not isinstance(model, str) or not model:
            raise invalid("model", _OWNER, "a non-empty model name", model)
        if isinstance(temperature, bool) or not isinstance(temperature, int | float) or temperature < 0:
            raise invalid("temperature", _OWNER, "a number ≥ 0", temperature)
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise invalid("seed", _OWNER, "an integer or None", seed)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise invalid("timeout", _OWNER, "a number of seconds > 0", timeout)
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise invalid("max_retries", _OWNER, "an integer ≥ 0", max_retries)
        price = token_price(price_per_1k_tokens, _OWNER)
        if max_tokens_param not in ("max_tokens", "max_completion_tokens"):
            raise invalid(
                "max_tokens_param", _OWNER, "'max_tokens' or 'max_completion_tokens'", max_tokens_param
            )
        self.model = model
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or _DEFAULT_BASE_URL).rstrip("/")
        self.temperature = float(temperature)
        self.seed = seed
        self.max_tokens = check_positive_int(max_tokens, "max_tokens", _OWNER)
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.max_concurrency = check_positive_int(max_concurrency, "max_concurrency", _OWNER)
        self.price_per_1k_tokens = price
        self.raise_on_error = bool(raise_on_error)
        self.extra_body = dict(extra_body or {})
        self.grammar_field = grammar_field
        self.max_tokens_param = max_tokens_param
        self.name = f"openai:{model}"
        self.top_logprobs = check_positive_int(top_logprobs, "top_logprobs", _OWNER)
        if probability_fallback not in _FALLBACKS:
            raise invalid("probability_fallback", _OWNER, "'uniform' or 'error'", probability_fallback)
        self.probability_fallback = probability_fallback
        for name, value in (("prompt_cache_key", prompt_cache_key), ("cache_control", cache_control)):
            if value is not None and not isinstance(value, bool):
                raise invalid(name, _OWNER, "True, False or None (decided by the server's host)", value)
        host = _host(self.base_url)
        # unknown servers may refuse unknown fields: only OpenAI's and Anthropic's hosts get them unless asked
        self.prompt_cache_key = host == "api.openai.com" if prompt_cache_key is None else prompt_cache_key
        self.cache_control = host == "api.anthropic.com" if cache_control is None else cache_control
        self._key = _Secret(self._resolve_key(api_key, api_key_env))
        self._openai = import_optional("openai", extra="openai", caller=_OWNER)
        self._client: OpenAI | None = None
        self._client_lock = threading.Lock()
        #: set by a batch run (:mod:`xaimetrics.benchmark._batch`): answers calls from a batch's results
        self.batch_answers: BatchAnswers | None = None

    def _resolve_key(self, api_key: str | None, api_key_env: str) -> str:
        if api_key is not None:
            if not isinstance(api_key, str) or not api_key:
                raise invalid("api_key", _OWNER, "a non-empty string or None", "an empty or non-string value")
            return api_key
        from_env = os.environ.get(api_key_env, "")
        if from_env:
            return from_env
        if self.base_url == _DEFAULT_BASE_URL:
            raise invalid(
                "api_key",
                _OWNER,
                f"given, or set in the environment variable {api_key_env}",
                "nothing",
                f"Run `export {api_key_env}=...` or pass base_url= for a local server.",
            )
        return "not-needed"  # local servers (vLLM, llama.cpp, Ollama) without authentication

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(model={self.model!r}, base_url={_public_url(self.base_url)!r}, "
            f"temperature={self.temperature}, seed={self.seed})"
        )

    def __getstate__(self) -> dict[str, object]:
        state = self.__dict__.copy()
        for name in ("_client", "_client_lock", "_openai"):
            state.pop(name, None)
        state["batch_answers"] = None
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._openai = import_optional("openai", extra="openai", caller=_OWNER)
        self._client = None
        self._client_lock = threading.Lock()
        self.batch_answers = None

    def cache_identity(self) -> dict[str, object]:
        identity = {
            "simulator": "openai-compatible",
            "base_url": _public_url(self.base_url),
            "model": self.model,
            "temperature": self.temperature,
            "seed": self.seed,
            "max_tokens": self.max_tokens,
            "extra_body": self.extra_body,
            "grammar_field": self.grammar_field,
        }
        # only when not the default, so that the cache keys written before these options existed still hold
        if self.top_logprobs != _DEFAULT_TOP_LOGPROBS:
            identity["top_logprobs"] = self.top_logprobs
        if self.probability_fallback != "uniform":
            identity["probability_fallback"] = self.probability_fallback
        return identity

    # -- the client ----------------------------------------------------------------------------------------
    def _client_arguments(self) -> dict[str, object]:
        """The client's URL *without* the credentials it may carry (``http://user:KEY@host/v1``): they are sent
        as the ``Authorization: Basic`` header the HTTP library builds from such a URL (the same request on the
        wire), so that no log line of the HTTP library or openai (they print the request URL, at INFO and
        DEBUG) ever holds them. The HTTP client counts and logs the attempts (:func:`_on_request`)."""
        http_client = self._openai.DefaultHttpxClient(
            event_hooks={"request": [_on_request], "response": [_on_response]}
        )
        arguments: dict[str, object] = {
            "base_url": self.base_url, "api_key": self._key.reveal(), "timeout": self.timeout,
            "max_retries": self.max_retries, "http_client": http_client,
        }  # fmt: skip
        bare, credentials = split_credentials(self.base_url)
        if bare != _public_url(bare) or credentials is not None:
            _SCRUB.add(self.base_url)
        if credentials is not None:
            token = base64.b64encode(":".join(credentials).encode("utf-8")).decode("ascii")
            arguments["base_url"] = bare
            arguments["default_headers"] = {"Authorization": f"Basic {token}"}
        return arguments

    def _sync_client(self) -> OpenAI:
        """One client per simulator, shared by the threads of :meth:`generate_batch` (its connection pool is
        thread-safe)."""
        with self._client_lock:
            if self._client is None:
                self._client = self._openai.OpenAI(**self._client_arguments())
            return self._client

    # -- request / response ----------------------------------------------------------------------------------
    def _request(self, messages: tuple[ChatMessage, ...], schema: AnswerSchema | None) -> dict[str, Any]:
        body = dict(self.extra_body)
        if schema is not None and self.grammar_field:
            body[self.grammar_field] = answer_grammar(schema)
        hint = _HINT.get()
        if hint is not None and self.prompt_cache_key:
            body["prompt_cache_key"] = hint.key
        wire: list[dict[str, Any]] = [m.as_dict() for m in messages]
        if hint is not None and self.cache_control and 0 < hint.shared_chars <= len(messages[0].content):
            text = messages[0].content  # the breakpoint after the shared block (a baseline's is all of it)
            parts = [
                {"type": "text", "text": text[: hint.shared_chars], "cache_control": {"type": "ephemeral"}}
            ]
            if hint.shared_chars < len(text):
                parts.append({"type": "text", "text": text[hint.shared_chars :]})
            wire[0]["content"] = parts
        request: dict[str, Any] = {
            "model": self.model,
            "messages": wire,
            "temperature": self.temperature,
            self.max_tokens_param: self.max_tokens,
        }
        if self.seed is not None:
            request["seed"] = self.seed
        if schema is not None and schema.probabilities:
            request["logprobs"] = True
            request["top_logprobs"] = self.top_logprobs
        if body:
            request["extra_body"] = body
        return request

    def request_body(
        self, messages: tuple[ChatMessage, ...], answer_schema: AnswerSchema | None
    ) -> dict[str, Any]:
        """The JSON body of the chat-completion request a call sends (``extra_body``'s fields at the top level, as
        on the wire): one line's ``body`` of a Batch API input file.

        Example:
            >>> sim = OpenAICompatibleSimulator("m", base_url="http://127.0.0.1:1/v1", extra_body={"top_k": 1})
            >>> sim.request_body((ChatMessage("user", "Hi"),), None)
            {'model': 'm', 'messages': [{'role': 'user', 'content': 'Hi'}], 'temperature': 0.0, 'max_tokens': 512, 'seed': 0, 'top_k': 1}
        """
        request = self._request(messages, answer_schema)
        extra = request.pop("extra_body", {})
        return {**request, **extra}

    def response_from_body(
        self,
        body: object,
        answer_schema: AnswerSchema | None,
        *,
        price_factor: float = 1.0,
        metadata: Mapping[str, object] | None = None,
    ) -> SimulatorResponse:
        """The response for a chat-completion JSON ``body`` received another way than a live call (a Batch API
        output line): checked and read exactly as a live answer (:func:`completion_problem`, usage, cached
        tokens, class probabilities), its cost multiplied by ``price_factor`` (0.5: the batch discount)."""
        started = time.perf_counter()
        try:
            completion = self._openai.types.chat.ChatCompletion.model_validate(body)
        except Exception as error:  # pydantic's ValidationError, or a body that is no object
            return self._failure(f"malformed response ({type(error).__name__})", started, 1)
        problem = completion_problem(completion)
        if problem is not None:
            return self._failure(self._scrub(problem[0]), started, 1)
        response = self._success(completion, started, 1)
        response = dataclasses.replace(
            response,
            usage=dataclasses.replace(response.usage, cost_usd=response.cost_usd * price_factor),
            metadata={**response.metadata, **(metadata or {})},
        )
        return self._with_probabilities(response, completion, answer_schema)

    def _success(self, completion: ChatCompletion, started: float, attempts: int) -> SimulatorResponse:
        """The response of a completion that :func:`completion_problem` accepted."""
        choice = completion.choices[0]
        usage = completion.usage
        prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
        completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
        cached_tokens = cached_prompt_tokens(completion, prompt_tokens)
        cost = 0.0
        if self.price_per_1k_tokens is not None:
            cost = self.price_per_1k_tokens.cost(
                prompt_tokens=prompt_tokens,
                cached_prompt_tokens=cached_tokens,
                completion_tokens=completion_tokens,
            )
        return SimulatorResponse(
            text=choice.message.content or "",
            model=str(getattr(completion, "model", "") or self.model),
            prompt_tokens=prompt_tokens,
            cached_prompt_tokens=cached_tokens,
            completion_tokens=completion_tokens,
            latency_s=time.perf_counter() - started,
            cost_usd=cost,
            attempts=attempts,
            metadata={"finish_reason": choice.finish_reason, "id": getattr(completion, "id", None)},
        )

    def _describe(self, error: Exception) -> str:
        """A safe one-line message for the exception that ended a call (the client's retries are spent)."""
        openai = self._openai
        if isinstance(error, openai.APIStatusError):
            return self._scrub(f"HTTP {error.status_code}: {error.message}")
        if isinstance(error, openai.APITimeoutError):
            return f"timeout after {self.timeout:g} s"
        if isinstance(error, openai.APIConnectionError):
            return self._scrub(f"connection error: {error}")
        return self._scrub(f"{type(error).__name__}: {error}")

    def _scrub(self, text: str) -> str:
        key = self._key.reveal()
        text = text.replace(key, "***") if len(key) >= 4 else text
        return scrub_url(text, self.base_url)  # credentials inside base_url (http://user:KEY@host/v1)

    def _failure(self, message: str, started: float, attempts: int) -> SimulatorResponse:
        attempts = max(1, attempts)
        summary = f"{self.name} failed after {attempts} attempt{'s' if attempts > 1 else ''}: {message}"
        return SimulatorResponse(
            text="",
            model=self.model,
            latency_s=time.perf_counter() - started,
            attempts=attempts,
            error=summary,
        )

    # -- generation ------------------------------------------------------------------------------------------
    def _generate(
        self, messages: tuple[ChatMessage, ...], answer_schema: AnswerSchema | None
    ) -> SimulatorResponse:
        """One call: the client's request with its retries, and the retries of a malformed 200 body."""
        if self.batch_answers is not None:
            answered = self.batch_answers.answer(self, messages, answer_schema)
            if answered is not None:
                return answered
        request = self._request(messages, answer_schema)
        started = time.perf_counter()
        attempts = _Attempts(self.name, self.max_retries + 1)
        token = _ATTEMPTS.set(attempts)
        try:
            while True:
                client = self._sync_client()
                if attempts.count:  # a malformed body took some of the budget: the client gets what is left
                    client = client.with_options(max_retries=self.max_retries - attempts.count)
                try:
                    completion = client.chat.completions.create(**request)
                except (ValueError, self._openai.APIResponseValidationError) as error:
                    # a 200 body that is not JSON, or not the client's model of one: the client does not retry it
                    problem = (f"malformed response ({type(error).__name__}: {error})", True)
                except Exception as error:  # the client's final verdict: its retries are spent or pointless
                    return self._failure(self._describe(error), started, attempts.count)
                else:
                    found = completion_problem(completion)  # a JSON body that is no usable completion
                    if found is None:
                        response = self._success(completion, started, attempts.count)
                        return self._with_probabilities(response, completion, answer_schema)
                    problem = found
                message, retryable = self._scrub(problem[0]), problem[1]
                if not retryable or attempts.count > self.max_retries:
                    return self._failure(message, started, attempts.count)
                attempts.outcome = message
                # the client's own backoff formula (0.5 s doubling up to 8 s, minus up to 25 % jitter), so a
                # malformed body waits as long as a 5xx would
                time.sleep(min(0.5 * 2.0 ** (attempts.count - 1), 8.0) * (1 - 0.25 * random.random()))
        finally:
            _ATTEMPTS.reset(token)

    # -- class probabilities ---------------------------------------------------------------------------------
    def _with_probabilities(
        self, response: SimulatorResponse, completion: ChatCompletion, schema: AnswerSchema | None
    ) -> SimulatorResponse:
        """Add the class probabilities read from ``completion``'s logprobs (when the schema asks for them)."""
        if response.error is not None or schema is None or not schema.probabilities:
            return response
        logprobs = getattr(completion.choices[0], "logprobs", None)
        tokens = token_logprobs(getattr(logprobs, "content", None))
        if tokens is None or (not tokens and response.text):
            return self._probability_error(
                response,
                "the server returned no token log-probabilities (choices[0].logprobs.content), so class "
                "probabilities cannot be read. Use a server that honours 'logprobs' and 'top_logprobs' "
                "(OpenAI, vLLM, llama.cpp's server), or score by accuracy (ConSim(scoring='accuracy')).",
            )
        probabilities, unread = read_class_probabilities(tokens, schema)
        if unread and (self.probability_fallback == "error" or not probabilities):
            return self._probability_error(
                response,
                f"the class probabilities of sample(s) {', '.join(unread)} cannot be read from the answer's "
                "log-probabilities (a missing line, or an answer that is not one of the classes). "
                + (
                    "No sample could be read. "
                    if not probabilities
                    else "probability_fallback='uniform' accepts a uniform distribution for them. "
                )
                + "Raise max_tokens if the answer was cut off, or check the prompt's answer format.",
            )
        uniform = tuple(1.0 / len(schema.classes) for _ in schema.classes)
        filled = {i: probabilities.get(i, uniform) for i in schema.sample_ids}
        return dataclasses.replace(
            response,
            probabilities=check_probabilities(filled, schema, _OWNER),
            metadata={
                **response.metadata,
                "mode": "logprobs",
                "top_logprobs": self.top_logprobs,
                "probability_fallback_ids": unread,
            },
        )

    def _probability_error(self, response: SimulatorResponse, message: str) -> SimulatorResponse:
        """The response as a failure (tokens and cost kept for accounting): it cannot give probabilities."""
        return dataclasses.replace(
            response,
            text="",
            error=self._scrub(f"{self.name}: {message}"),
            metadata={**response.metadata, "answer_text": response.text},
        )


class BatchAnswers(Protocol):
    """What a batch run plugs into a simulator: the answer of a call taken from a batch (or recorded for one), or
    ``None`` to make the call live."""

    def answer(
        self,
        simulator: OpenAICompatibleSimulator,
        messages: tuple[ChatMessage, ...],
        answer_schema: AnswerSchema | None,
    ) -> SimulatorResponse | None: ...


class _Attempts:
    """The requests of one call, counted by the HTTP client's hooks (:func:`_on_request`, :func:`_on_response`)
    in the thread that makes the call (a :class:`contextvars.ContextVar` holds it)."""

    def __init__(self, name: str, budget: int) -> None:
        self.name = name
        self.budget = budget
        self.count = 0
        self.outcome = ""  # what the last attempt got ("HTTP 429", or a malformed body)
        self.ended = 0.0  # when the last attempt ended (its response, or its start if it got none)


_ATTEMPTS: contextvars.ContextVar[_Attempts | None] = contextvars.ContextVar(
    "xaimetrics_attempts", default=None
)


def _on_request(request: httpx2.Request) -> None:
    """Count an attempt; log it when it is a retry (the previous outcome and the wait, never a header)."""
    attempts = _ATTEMPTS.get()
    if attempts is None:
        return
    now = time.perf_counter()
    if attempts.count:
        _LOG.info(
            "%s: retry %d of %d after %s; waited %.2f s",
            attempts.name, attempts.count, attempts.budget - 1,
            attempts.outcome or "no response (timeout or connection error)", now - attempts.ended,
        )  # fmt: skip
    attempts.count += 1
    attempts.outcome, attempts.ended = "", now


def _on_response(response: httpx2.Response) -> None:
    attempts = _ATTEMPTS.get()
    if attempts is not None:
        attempts.outcome, attempts.ended = f"HTTP {response.status_code}", time.perf_counter()


class _ScrubCredentials(logging.Filter):
    """Defence in depth for the client libraries' loggers (``httpx``, ``openai``): a record quoting a base URL
    with secrets (a query ``?api_key=...``; credentials before ``@`` never reach them, see
    ``_client_arguments``) is rewritten with the URL's public form."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: set[str] = set()
        self._installed = False

    def add(self, url: str) -> None:
        self.urls.add(url)
        if not self._installed:
            for name in ("httpx", "httpx2", "httpcore", "httpcore2", "openai", "openai._base_client"):
                logging.getLogger(name).addFilter(self)
            self._installed = True

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # a record that cannot format: left alone
            return True
        scrubbed = message
        for url in tuple(self.urls):
            scrubbed = scrub_url(scrubbed, url)
        if scrubbed != message:
            record.msg, record.args = scrubbed, ()
        return True


_SCRUB = _ScrubCredentials()
