"""A local "model" that dies like a native crash, for the crash-isolation tests (importable by the worker).

:class:`CrashingLlama` is a :class:`LlamaCppSimulator` whose worker builds no llama.cpp model: it segfaults
for real (a NULL read through ``ctypes``) where llama.cpp crashed in issue #20, and otherwise answers every
sample with the first class. Where it crashes is read from ``CRASH_AT`` in the environment (the worker
inherits it):

- ``first-decode``: loading with the accelerated weights (``portable=False``) crashes, the portable ones work;
- ``always-first-decode``: loading crashes whatever the weights;
- ``once:<file>``: the first answer crashes and creates ``<file>``; later answers (any process) work;
- ``call``: every answer whose prompt holds ``CRASH`` crashes;
- ``stop-load:<file>``: loading writes the worker's pid to ``<file>`` and takes 60 s (for a kill from outside);
- ``stop:<file>``: the first answer writes the worker's pid to ``<file>`` and stops the worker (a real SIGSTOP:
  a hung process); later answers (a new worker) work.
"""

from __future__ import annotations

import ctypes
import os
import signal
import time
from pathlib import Path

import pytest

from xaimetrics.simulators import AnswerSchema, LlamaCppSimulator, SimulatorResponse
from xaimetrics.simulators._llama_weights import PORTABLE_ENV
from xaimetrics.simulators._probabilities import probability_response
from xaimetrics.simulators._worker import TARGETS

TARGET = "crashing-test-model"


def segfault() -> None:
    ctypes.string_at(0)  # a read of address 0: SIGSEGV, as a native kernel's fault


class CrashingLlama(LlamaCppSimulator):
    _worker_target = TARGET

    def load(self) -> dict:
        if self.isolate:  # the caller's side: start the worker, which runs the code below
            return super().load()
        mode = os.environ.get("CRASH_AT", "")
        if mode == "always-first-decode" or (mode == "first-decode" and not self.weights.portable):
            segfault()
        if mode.startswith("stop-load:"):  # loads slowly: its pid is the cue for a test's kill -9
            Path(mode.split(":", 1)[1]).write_text(str(os.getpid()))
            time.sleep(60)
        return {"weights": self.weights.label, "pid": os.getpid()}

    def _maybe_crash(self, messages) -> None:
        mode = os.environ.get("CRASH_AT", "")
        if mode == "call" and any("CRASH" in m.content for m in messages):
            segfault()
        if mode.startswith("stop:"):
            marker = Path(mode.split(":", 1)[1])
            if not marker.exists():
                marker.write_text(str(os.getpid()))
                os.kill(os.getpid(), signal.SIGSTOP)
        if mode.startswith("once:"):
            marker = Path(mode.split(":", 1)[1])
            if not marker.exists():
                marker.write_text(str(os.getpid()))
                segfault()

    def _complete(self, messages, answer_schema: AnswerSchema | None) -> SimulatorResponse:
        if self.isolate:
            return super()._complete(messages, answer_schema)
        self._maybe_crash(messages)
        ids = answer_schema.sample_ids if answer_schema is not None else ()
        first = answer_schema.classes[0] if answer_schema is not None else "?"
        return SimulatorResponse("\n".join(f"Sample_{i}: {first}" for i in ids), model=self.name)

    def _class_probabilities(self, messages, schema: AnswerSchema) -> SimulatorResponse:
        if self.isolate:
            return super()._class_probabilities(messages, schema)
        self._maybe_crash(messages)
        k = len(schema.classes)
        probabilities = {
            i: tuple(0.7 if j == 0 else 0.3 / (k - 1) for j in range(k)) for i in schema.sample_ids
        }
        return probability_response(
            schema, probabilities, model=self.name, computed=1, conditioned=1, prefix_reuse=True
        )


def register() -> None:
    """Make the worker able to build :class:`CrashingLlama` (called in the parent process)."""
    TARGETS[TARGET] = "crashing_llama:CrashingLlama"


@pytest.fixture
def crashing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The crashing model registered for the worker, importable by the child, no weights policy in the
    environment; returns a model file for its ``model_path`` (never read)."""
    register()
    tests = Path(__file__).resolve().parent
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tests), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.delenv(PORTABLE_ENV, raising=False)
    model = tmp_path / "fake.gguf"
    model.write_bytes(b"GGUF")
    return model
