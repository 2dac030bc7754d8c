"""The shell every in-process model backend shares (llama.cpp, transformers): one model, one call at a time."""

from __future__ import annotations

import dataclasses
import threading
import time
from abc import abstractmethod

from xaimetrics.simulators._base import AnswerSchema, BaseSimulator, ChatMessage, SimulatorResponse

__all__ = ["LocalModelSimulator"]


class LocalModelSimulator(BaseSimulator):
    """A simulator whose model lives in this process and is not thread-safe.

    Calls are serialised by a per-object lock and timed here. Subclasses implement two methods, both run under
    the lock: ``_complete`` (a text answer, following the schema when one is given) and
    ``_class_probabilities`` (for ``AnswerSchema(probabilities=True)``, every sample scored as a continuation of
    the prompt). The ``latency_s`` of the response they return is replaced by the time the call took.
    """

    max_concurrency = 1
    supports_probabilities = True
    _lock_guard = threading.Lock()

    @property
    def _model_lock(self) -> threading.Lock:
        with LocalModelSimulator._lock_guard:
            lock = self.__dict__.get("_model_lock_obj")
            if lock is None:
                lock = self.__dict__["_model_lock_obj"] = threading.Lock()
            return lock

    def _generate(
        self, messages: tuple[ChatMessage, ...], answer_schema: AnswerSchema | None
    ) -> SimulatorResponse:
        with self._model_lock:
            started = time.perf_counter()
            if answer_schema is not None and answer_schema.probabilities:
                response = self._class_probabilities(messages, answer_schema)
            else:
                response = self._complete(messages, answer_schema)
            latency = time.perf_counter() - started
        return dataclasses.replace(response, usage=dataclasses.replace(response.usage, latency_s=latency))

    @abstractmethod
    def _complete(
        self, messages: tuple[ChatMessage, ...], answer_schema: AnswerSchema | None
    ) -> SimulatorResponse:
        """Generate the answer text (constrained to ``answer_schema`` when the backend can)."""

    @abstractmethod
    def _class_probabilities(
        self, messages: tuple[ChatMessage, ...], schema: AnswerSchema
    ) -> SimulatorResponse:
        """Score every sample's class lines as continuations of the prompt (see ``_probabilities``)."""
