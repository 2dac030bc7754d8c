"""The perfect simulator: answers each ConSim prompt it was shown with the model's own predictions."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Sequence
from typing import Protocol

from xaimetrics.simulators._base import AnswerSchema, BaseSimulator, ChatMessage, SimulatorResponse

__all__ = ["PerfectSimulator"]


class _ReferencePrompt(Protocol):
    """What the perfect simulator reads of a prompt (a :class:`~xaimetrics.consim.ConSimPrompt`)."""

    @property
    def messages(self) -> Sequence[ChatMessage]: ...

    @property
    def reference_answer(self) -> str: ...


class PerfectSimulator(BaseSimulator):
    """An oracle for pipeline checks: every registered prompt is answered with its reference answer (score 1).

    A prompt is anything with ``messages`` and ``reference_answer`` (a
    :class:`~xaimetrics.consim.ConSimPrompt`). Prompts are registered at construction, with :meth:`add`, or
    through :meth:`register` — the hook the grid runner calls before sending each prompt. Asked for class
    probabilities, it gives f's class probability 1. A conversation it was not shown gets an error response
    (so it cannot propose concept labels). Token counts are whitespace word counts.

    Args:
        prompts: prompts to answer.

    Example:
        >>> from types import SimpleNamespace
        >>> prompt = SimpleNamespace(messages=(ChatMessage("user", "Sample_4: a fine film"),),
        ...                          reference_answer="Sample_4: positive")
        >>> sim = PerfectSimulator([prompt])
        >>> sim.generate(prompt.messages).text
        'Sample_4: positive'
        >>> schema = AnswerSchema(("4",), ("negative", "positive"), probabilities=True)
        >>> sim.generate(prompt.messages, answer_schema=schema).probabilities
        {'4': (0.0, 1.0)}
    """

    name = "perfect"
    supports_probabilities = True

    def __init__(self, prompts: Iterable[_ReferencePrompt] = ()) -> None:
        self._answers: dict[tuple[ChatMessage, ...], str] = {}
        self._lock = threading.Lock()
        for prompt in prompts:
            self.add(prompt)

    def add(self, prompt: _ReferencePrompt) -> None:
        """Answer ``prompt`` (its ``messages``) with its ``reference_answer`` from now on."""
        with self._lock:
            self._answers[tuple(prompt.messages)] = prompt.reference_answer

    def register(self, setting: object, prompt: _ReferencePrompt) -> None:
        """The grid runner's hook, told each setting before its prompt is sent (``setting`` is not needed)."""
        self.add(prompt)

    def cache_identity(self) -> dict[str, object]:
        return {"simulator": "perfect"}

    def _generate(
        self, messages: tuple[ChatMessage, ...], answer_schema: AnswerSchema | None
    ) -> SimulatorResponse:
        started = time.perf_counter()
        with self._lock:
            answer = self._answers.get(messages)
        if answer is None:
            return SimulatorResponse(
                "", model=self.name, error="prompt not registered with the perfect simulator"
            )
        probabilities = None
        if answer_schema is not None and answer_schema.probabilities:
            chosen = dict(line.split(": ", 1) for line in answer.splitlines())
            probabilities = {
                i: tuple(float(c == chosen.get(f"Sample_{i}")) for c in answer_schema.classes)
                for i in answer_schema.sample_ids
            }
        return self._offline_response(answer, messages, started, probabilities)
