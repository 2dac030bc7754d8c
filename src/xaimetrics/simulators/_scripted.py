"""Simulators without a model: scripted answers (tests, replays) and a human at the terminal."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import TextIO

from xaimetrics._validation import invalid
from xaimetrics.exceptions import SimulatorError
from xaimetrics.simulators._base import AnswerSchema, BaseSimulator, ChatMessage, SimulatorResponse

__all__ = ["HumanSimulator", "ScriptedSimulator"]

Script = Callable[[tuple[ChatMessage, ...]], "str | SimulatorResponse"]


def _words(text: str) -> int:
    return len(text.split())


class ScriptedSimulator(BaseSimulator):
    """Answers from a fixed list (in call order) or from a function of the conversation.

    Token counts are whitespace word counts. Every call is recorded in ``calls`` (the messages) and
    ``answer_schemas``, so tests can inspect the prompts. A function script may return a
    :class:`SimulatorResponse` with ``probabilities`` (class probabilities per sample), which are passed on.

    Args:
        responses: a list of answers used in order, or ``fn(messages) -> str | SimulatorResponse``.
        name: model name reported in responses and in the cache identity.

    Raises:
        SimulatorError: when a list of answers is exhausted.

    Example:
        >>> sim = ScriptedSimulator(["Sample_3: positive", "Sample_1: negative"])
        >>> sim.generate([ChatMessage("user", "Sample_3: great")]).text
        'Sample_3: positive'
        >>> len(sim.calls), sim.remaining
        (1, 1)
    """

    def __init__(self, responses: Sequence[str] | Script, *, name: str = "scripted") -> None:
        if callable(responses):
            self._script: Script | None = responses
            self._answers: list[str] = []
        elif isinstance(responses, Sequence) and not isinstance(responses, str):
            if not all(isinstance(r, str) for r in responses):
                raise invalid("responses", "ScriptedSimulator", "a list of strings or a callable", responses)
            self._script, self._answers = None, list(responses)
        else:
            raise invalid(
                "responses", "ScriptedSimulator", "a list of strings or a callable", type(responses).__name__
            )
        self.name = name
        self.supports_probabilities = True
        self.calls: list[tuple[ChatMessage, ...]] = []
        self.answer_schemas: list[AnswerSchema | None] = []
        self._position = 0
        self._lock = threading.Lock()

    @property
    def remaining(self) -> int | None:
        """Answers left in the list (``None`` for a function script)."""
        return None if self._script is not None else len(self._answers) - self._position

    def cache_identity(self) -> dict[str, object]:
        return {"simulator": "scripted", "name": self.name}

    def _generate(
        self, messages: tuple[ChatMessage, ...], answer_schema: AnswerSchema | None
    ) -> SimulatorResponse:
        started = time.perf_counter()
        with self._lock:
            self.calls.append(messages)
            self.answer_schemas.append(answer_schema)
            if self._script is None:
                if self._position >= len(self._answers):
                    raise SimulatorError(
                        f"ScriptedSimulator ran out of answers after {len(self._answers)} calls. "
                        "Give one answer per expected call, or a function."
                    )
                answer: str | SimulatorResponse = self._answers[self._position]
                self._position += 1
        if self._script is not None:
            answer = self._script(messages)
        if isinstance(answer, SimulatorResponse):
            return answer
        if not isinstance(answer, str):
            raise invalid(
                "responses", "ScriptedSimulator", "a function returning a string", type(answer).__name__
            )
        return SimulatorResponse(
            text=answer,
            model=self.name,
            prompt_tokens=sum(_words(m.content) for m in messages),
            completion_tokens=_words(answer),
            latency_s=time.perf_counter() - started,
        )


class HumanSimulator(BaseSimulator):
    """A person plays the simulator: the conversation is printed and the answer typed in.

    The answer ends with an empty line (or end of input). Useful to try a prompt by hand or to collect a
    human baseline from the terminal.

    Example:
        >>> import io
        >>> sim = HumanSimulator(stdin=io.StringIO("Sample_2: positive\\n\\n"), stdout=io.StringIO())
        >>> sim.generate([ChatMessage("user", "Sample_2: what a joy")]).text
        'Sample_2: positive'
    """

    def __init__(
        self, *, stdin: TextIO | None = None, stdout: TextIO | None = None, name: str = "human"
    ) -> None:
        self.stdin = stdin
        self.stdout = stdout
        self.name = name
        self._lock = threading.Lock()

    def cache_identity(self) -> dict[str, object]:
        return {"simulator": "human", "name": self.name}

    def _generate(
        self, messages: tuple[ChatMessage, ...], answer_schema: AnswerSchema | None
    ) -> SimulatorResponse:
        stdin = self.stdin if self.stdin is not None else sys.stdin
        stdout = self.stdout if self.stdout is not None else sys.stdout
        with self._lock:  # one person, one conversation at a time
            started = time.perf_counter()
            for message in messages:
                stdout.write(f"===== {message.role} =====\n{message.content}\n")
            if answer_schema is not None:
                stdout.write(
                    f"Answer one line per sample, e.g. '{answer_schema.line(answer_schema.sample_ids[0], answer_schema.classes[0])}'. "
                    f"Classes: {', '.join(answer_schema.classes)}.\n"
                )
            stdout.write("===== your answer (end with an empty line) =====\n")
            stdout.flush()
            lines = []
            while True:
                line = stdin.readline()
                if not line or not line.strip():
                    break
                lines.append(line.rstrip("\n"))
        text = "\n".join(lines)
        return SimulatorResponse(text=text, model=self.name, latency_s=time.perf_counter() - started)
