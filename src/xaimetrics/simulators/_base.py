"""The simulator protocol: chat messages in, text out.

A *simulator* (the paper's meta-predictor Ψ) is anything that answers a chat. ConSim only needs
:meth:`Simulator.generate`; batching with a concurrency limit (threads, :func:`map_bounded`) and usage
accounting come from :class:`BaseSimulator`, whose subclasses implement one method, ``_generate``.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

from xaimetrics._threads import map_bounded
from xaimetrics._usage import Usage, UsageTracker, UsageView
from xaimetrics._validation import invalid
from xaimetrics.exceptions import SimulatorError

__all__ = [
    "AnswerSchema",
    "BaseSimulator",
    "BatchSimulator",
    "ChatMessage",
    "Simulator",
    "SimulatorResponse",
    "as_chat_messages",
]

Role = Literal["system", "user", "assistant"]
_ROLES = ("system", "user", "assistant")


@dataclass(frozen=True)
class ChatMessage:
    """One chat turn.

    Example:
        >>> ChatMessage("user", "Sample_0: a fine film").as_dict()
        {'role': 'user', 'content': 'Sample_0: a fine film'}
    """

    role: Role
    content: str

    def as_dict(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


def as_chat_messages(messages: object, owner: str = "generate") -> tuple[ChatMessage, ...]:
    """Check a conversation and return it as :class:`ChatMessage` objects.

    Accepts :class:`ChatMessage` objects and ``{"role": ..., "content": ...}`` mappings.

    Example:
        >>> as_chat_messages([{"role": "system", "content": "Be brief."}, ChatMessage("user", "Hi")])[0]
        ChatMessage(role='system', content='Be brief.')
    """
    if isinstance(messages, str | bytes | Mapping) or not isinstance(messages, Sequence):
        raise invalid(
            "messages",
            owner,
            "a list of chat messages",
            type(messages).__name__,
            'Pass e.g. [ChatMessage("user", "...")] or [{"role": "user", "content": "..."}].',
        )
    if not messages:
        raise invalid("messages", owner, "a non-empty list of chat messages", "an empty list")
    checked: list[ChatMessage] = []
    for i, message in enumerate(messages):
        if isinstance(message, Mapping):
            role, content = message.get("role"), message.get("content")
        elif isinstance(message, ChatMessage):
            role, content = message.role, message.content
        else:
            raise invalid(
                "messages", owner, "a list of ChatMessage or dicts", f"{type(message).__name__} at {i}"
            )
        if role not in _ROLES or not isinstance(content, str):
            raise invalid(
                "messages",
                owner,
                "messages with a role in ('system', 'user', 'assistant') and a string content",
                f"role={role!r}, content of type {type(content).__name__} at position {i}",
            )
        checked.append(message if isinstance(message, ChatMessage) else ChatMessage(role, content))
    return tuple(checked)


@dataclass(frozen=True)
class AnswerSchema:
    """The answer a ConSim prompt expects: one line ``Sample_{id}: {class}`` per id, in this order.

    Backends that can constrain decoding (llama.cpp grammars, the local transformers simulator) force their
    answer into this shape; HTTP backends may ignore it. It is part of the response-cache key.

    With ``probabilities=True`` the caller also asks for the simulator's **probability distribution over the
    classes** for every sample (:attr:`SimulatorResponse.probabilities`), read from token log-probabilities.
    Simulators that can (``supports_probabilities``) answer each sample as a continuation ``Sample_{id}: ``
    of the prompt, never conditioned on an answer given for another sample; the text then holds the most
    probable class per sample. :class:`~xaimetrics.simulators.OpenAICompatibleSimulator` reads them from the
    ``top_logprobs`` of its freely generated answer instead (each answer conditioned on the model's own earlier
    answers, never on f's). See ``docs/consim.md`` ("Probabilistic simulatability").

    Args:
        sample_ids: the evaluation sample ids, in the order the answer lines must follow.
        classes: the allowed class names (multi-word and punctuated names are fine).
        probabilities: ask for per-sample class probabilities as well as the answer text.

    Example:
        >>> schema = AnswerSchema(sample_ids=("7", "2"), classes=("not prime", "prime"))
        >>> schema.line("7", "not prime")
        'Sample_7: not prime'
    """

    sample_ids: tuple[str, ...]
    classes: tuple[str, ...]
    probabilities: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.probabilities, bool):
            raise invalid("probabilities", "AnswerSchema", "True or False", self.probabilities)
        for name in ("sample_ids", "classes"):
            values = getattr(self, name)
            if isinstance(values, str) or not isinstance(values, Sequence):
                raise invalid(name, "AnswerSchema", "a tuple of strings", type(values).__name__)
            values = tuple(str(v) if isinstance(v, int) and not isinstance(v, bool) else v for v in values)
            object.__setattr__(self, name, values)
            if not values:
                raise invalid(name, "AnswerSchema", "a non-empty tuple of strings", "an empty tuple")
            for value in values:
                if not isinstance(value, str) or not value.strip() or "\n" in value or "\r" in value:
                    raise invalid(name, "AnswerSchema", "non-empty one-line strings", repr(value))
            if len(set(values)) != len(values):
                raise invalid(name, "AnswerSchema", "unique values", values, "Remove the duplicates.")
        for sample_id in self.sample_ids:
            if any(ch.isspace() for ch in sample_id) or ":" in sample_id:
                raise invalid(
                    "sample_ids",
                    "AnswerSchema",
                    "ids without spaces or ':'",
                    repr(sample_id),
                    "Use e.g. '12'.",
                )

    def line(self, sample_id: str, label: str) -> str:
        """The expected answer line for one sample."""
        return f"Sample_{sample_id}: {label}"

    def as_dict(self) -> dict[str, object]:
        data: dict[str, object] = {"sample_ids": list(self.sample_ids), "classes": list(self.classes)}
        if self.probabilities:  # only when asked, so that the cache keys of text answers never change
            data["probabilities"] = True
        return data


@dataclass(frozen=True, init=False)
class SimulatorResponse(UsageView):
    """What a simulator answered, with the :class:`~xaimetrics.simulators.Usage` of the call.

    ``error`` is set (and ``text`` is empty) when the call failed for good after retries: ConSim then counts
    every evaluation sample of that prompt as unanswered instead of crashing.

    The accounting is one :class:`Usage` record, ``usage``; the keywords ``prompt_tokens``,
    ``completion_tokens``, ``latency_s``, ``cost_usd``, ``cached`` and ``attempts`` build it (or override the
    fields of a given ``usage``) and stay readable as attributes. ``attempts`` counts the requests made (1
    without retries; 0 for a hit of :class:`CachedSimulator`); ``cached`` responses were read from a response
    cache and cost nothing (their ``cost_usd`` is 0).
    ``prompt_tokens`` counts the prompt tokens the model *computed* (a prefix reused from a KV cache is not
    counted); ``metadata["prompt_tokens_total"]``, when present, counts every prompt token it conditioned on.
    ``cached_prompt_tokens`` counts the prompt tokens read from the backend's prompt cache (see
    :class:`Usage`).

    ``probabilities`` (when the :class:`AnswerSchema` asked for them and the simulator can) maps each sample
    id to the simulator's probabilities of the schema's classes, in the schema's class order, summing to 1.

    Example:
        >>> response = SimulatorResponse("Sample_0: a", prompt_tokens=12, completion_tokens=3, attempts=2)
        >>> response.usage.calls, response.attempts, response.total_tokens, response.cached
        (1, 2, 15, False)
    """

    text: str
    model: str = ""
    error: str | None = None
    metadata: dict[str, object] = field(default_factory=dict)
    probabilities: Mapping[str, tuple[float, ...]] | None = None
    usage: Usage = field(default_factory=Usage)

    def __init__(
        self,
        text: str,
        model: str = "",
        prompt_tokens: int | None = None,
        completion_tokens: int | None = None,
        latency_s: float | None = None,
        cost_usd: float | None = None,
        cached: bool | None = None,
        attempts: int | None = None,
        error: str | None = None,
        metadata: dict[str, object] | None = None,
        probabilities: Mapping[str, tuple[float, ...]] | None = None,
        *,
        usage: Usage | None = None,
        cached_prompt_tokens: int | None = None,
    ) -> None:
        if usage is not None and not isinstance(usage, Usage):
            raise invalid("usage", "SimulatorResponse", "a Usage or None", type(usage).__name__)
        base = usage or Usage.of_call()
        # one response is one call, failed exactly when it carries an error (also after dataclasses.replace)
        call = Usage.of_call(
            prompt_tokens=base.prompt_tokens if prompt_tokens is None else prompt_tokens,
            completion_tokens=base.completion_tokens if completion_tokens is None else completion_tokens,
            latency_s=base.latency_s if latency_s is None else latency_s,
            cost_usd=base.cost_usd if cost_usd is None else cost_usd,
            cached=base.cached if cached is None else cached,
            attempts=base.attempts if attempts is None else attempts,
            failed=error is not None,
            cached_prompt_tokens=base.cached_prompt_tokens
            if cached_prompt_tokens is None
            else cached_prompt_tokens,
        )
        object.__setattr__(self, "text", text)
        object.__setattr__(self, "model", model)
        object.__setattr__(self, "error", error)
        object.__setattr__(self, "metadata", {} if metadata is None else metadata)
        object.__setattr__(self, "probabilities", probabilities)
        object.__setattr__(self, "usage", call)

    @property
    def ok(self) -> bool:
        """True when the call succeeded (``error`` is ``None``)."""
        return self.error is None


@runtime_checkable
class Simulator(Protocol):
    """Anything with ``generate(messages, *, answer_schema=None) -> SimulatorResponse`` can simulate."""

    def generate(
        self, messages: Sequence[ChatMessage], *, answer_schema: AnswerSchema | None = None
    ) -> SimulatorResponse: ...


@runtime_checkable
class BatchSimulator(Simulator, Protocol):
    """A :class:`Simulator` that also answers many conversations at once (:meth:`BaseSimulator.generate_batch`).

    ConSim sends the prompts of one evaluation as one batch to such a simulator, and one by one otherwise.
    """

    def generate_batch(
        self,
        conversations: Sequence[Sequence[ChatMessage]],
        *,
        answer_schemas: Sequence[AnswerSchema | None] | None = None,
        max_concurrency: int | None = None,
    ) -> list[SimulatorResponse]: ...


class BaseSimulator(ABC):
    """Base class giving checks, usage accounting and batched generation on top of ``_generate``.

    Subclasses implement ``_generate(messages, answer_schema)`` (called from several threads at once by
    :meth:`generate_batch` when ``max_concurrency > 1``) and ``cache_identity()`` (the model and sampling parameters that determine the answer).
    ``max_concurrency`` bounds how many requests :meth:`generate_batch` keeps in flight; ``usage`` is a
    :class:`UsageTracker` (replace it to share one tracker between simulators).
    """

    name: str = "simulator"
    max_concurrency: int = 1
    #: Whether ``_generate`` fills :attr:`SimulatorResponse.probabilities` when the schema asks for them.
    supports_probabilities: bool = False
    #: Raise :class:`~xaimetrics.exceptions.SimulatorError` (after accounting) instead of returning a response
    #: whose ``error`` is set.
    raise_on_error: bool = False

    @property
    def usage(self) -> UsageTracker:
        tracker = self.__dict__.get("_usage")
        if tracker is None:
            tracker = self.__dict__.setdefault("_usage", UsageTracker())
        return tracker

    @usage.setter
    def usage(self, tracker: UsageTracker) -> None:
        if not isinstance(tracker, UsageTracker):
            raise invalid("usage", type(self).__name__, "a UsageTracker", type(tracker).__name__)
        self.__dict__["_usage"] = tracker

    # -- to implement ----------------------------------------------------------------------------------------
    @abstractmethod
    def _generate(
        self, messages: tuple[ChatMessage, ...], answer_schema: AnswerSchema | None
    ) -> SimulatorResponse:
        """Answer one checked conversation."""

    def cache_identity(self) -> dict[str, object]:
        """JSON-able description of the model and sampling parameters (never credentials)."""
        return {"simulator": type(self).__name__, "name": self.name}

    # -- public API ------------------------------------------------------------------------------------------
    def generate(
        self, messages: Sequence[ChatMessage], *, answer_schema: AnswerSchema | None = None
    ) -> SimulatorResponse:
        """Answer one conversation (``ChatMessage`` objects or role/content dicts)."""
        checked = as_chat_messages(messages, f"{type(self).__name__}.generate")
        _check_schema(answer_schema, type(self).__name__)
        return self._finish(self._generate(checked, answer_schema))

    def _offline_response(
        self,
        text: str,
        messages: Sequence[ChatMessage],
        started: float,
        probabilities: Mapping[str, tuple[float, ...]] | None = None,
    ) -> SimulatorResponse:
        """The response of a local rule-based simulator: tokens counted as words, latency since ``started``."""
        return SimulatorResponse(
            text,
            model=self.name,
            prompt_tokens=sum(len(m.content.split()) for m in messages),
            completion_tokens=len(text.split()),
            latency_s=time.perf_counter() - started,
            probabilities=probabilities,
        )

    def _finish(self, response: SimulatorResponse) -> SimulatorResponse:
        self.usage.record(response)
        if response.error is not None and self.raise_on_error:
            raise SimulatorError(response.error)
        return response

    def generate_batch(
        self,
        conversations: Sequence[Sequence[ChatMessage]],
        *,
        answer_schemas: Sequence[AnswerSchema | None] | None = None,
        max_concurrency: int | None = None,
    ) -> list[SimulatorResponse]:
        """Answer many conversations, in order, with at most ``max_concurrency`` in flight (threads).

        At the first exception or Ctrl-C no further call starts (:func:`map_bounded`).

        Example:
            >>> from xaimetrics.simulators import ScriptedSimulator
            >>> sim = ScriptedSimulator(lambda messages: messages[-1].content.upper())
            >>> [r.text for r in sim.generate_batch([[ChatMessage("user", "a")], [ChatMessage("user", "b")]])]
            ['A', 'B']
        """
        owner = f"{type(self).__name__}.generate_batch"
        schemas = _check_batch(conversations, answer_schemas, max_concurrency, owner)
        for messages in conversations:  # every conversation is checked before the first call
            as_chat_messages(messages, owner)
        pairs = list(zip(conversations, schemas, strict=True))
        return map_bounded(
            lambda pair: self.generate(pair[0], answer_schema=pair[1]),
            pairs,
            max_concurrency or max(1, self.max_concurrency),
        )


def _check_schema(answer_schema: object, owner: str) -> None:
    if answer_schema is not None and not isinstance(answer_schema, AnswerSchema):
        raise invalid("answer_schema", owner, "an AnswerSchema or None", type(answer_schema).__name__)


def _check_batch(
    conversations: Sequence[Sequence[ChatMessage]],
    answer_schemas: Sequence[AnswerSchema | None] | None,
    max_concurrency: int | None,
    owner: str,
) -> list[AnswerSchema | None]:
    if isinstance(conversations, str) or not isinstance(conversations, Sequence):
        raise invalid("conversations", owner, "a list of conversations", type(conversations).__name__)
    if max_concurrency is not None and (
        isinstance(max_concurrency, bool) or not isinstance(max_concurrency, int) or max_concurrency < 1
    ):
        raise invalid("max_concurrency", owner, "an integer ≥ 1 or None", max_concurrency)
    if answer_schemas is None:
        return [None] * len(conversations)
    schemas = list(answer_schemas)
    if len(schemas) != len(conversations):
        raise invalid(
            "answer_schemas",
            owner,
            f"one schema (or None) per conversation ({len(conversations)})",
            f"{len(schemas)} schemas",
        )
    return schemas
