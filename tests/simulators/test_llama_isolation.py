"""Issue #20: native crashes kept out of the caller's process (the weights policy: test_llama_weights.py).

The crashes here are real (a NULL read in the worker process, see ``tests/crashing_llama.py``): the tests
show that the caller survives them, gets a clear error or a fallback, and that a grid records the setting as
failed and resumes it.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import warnings
from pathlib import Path

import pytest

from crashing_llama import CrashingLlama, register
from xaimetrics.exceptions import InvalidParameterError, LocalModelCrashed, SimulatorError
from xaimetrics.simulators import AnswerSchema, ChatMessage
from xaimetrics.simulators._llama_weights import PORTABLE_ENV, WeightsPolicy
from xaimetrics.simulators._worker import ModelWorker, WorkerCrashed

TESTS = Path(__file__).resolve().parents[1]
MESSAGES = [ChatMessage("system", "Classes: a, b."), ChatMessage("user", "Sample_3: x\nSample_1: y")]
SCHEMA = AnswerSchema(("3", "1"), ("a", "b"))


# -- crashes in the worker ---------------------------------------------------------------------------------
def test_a_crash_at_the_first_decode_falls_back_to_the_portable_weights(
    crashing, monkeypatch, caplog
) -> None:
    monkeypatch.setenv("CRASH_AT", "first-decode")
    sim = CrashingLlama(crashing)
    sim.weights = WeightsPolicy(False, "auto: no AMX on this CPU", chosen=False)  # as on a CPU without AMX
    with pytest.warns(RuntimeWarning, match=r"crashed \(SIGSEGV\).*using the portable weights instead"):
        response = sim.generate(MESSAGES, answer_schema=SCHEMA)
    (record,) = [r for r in caplog.records if r.name == "xaimetrics.simulators"]
    assert (
        record.levelname == "WARNING"
        and "crashed (SIGSEGV) with the accelerated weights" in record.getMessage()
    )
    assert response.text == "Sample_3: a\nSample_1: a" and response.error is None
    assert sim.weights.portable and "SIGSEGV" in sim.weights.reason
    assert sim._worker is not None and sim._worker.info["weights"] == "portable"
    assert sim._worker.pid != os.getpid()
    sim.close()


def test_a_chosen_policy_that_crashes_is_a_clear_error(crashing, monkeypatch) -> None:
    monkeypatch.setenv("CRASH_AT", "first-decode")
    sim = CrashingLlama(crashing, portable=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no silent fallback: the user chose
        with pytest.raises(LocalModelCrashed) as raised:
            sim.generate(MESSAGES, answer_schema=SCHEMA)
    message = str(raised.value)
    assert "llama.cpp crashed (SIGSEGV) in the worker process" in message
    assert "while loading the model and decoding its first token" in message
    assert "accelerated weights (portable=False)" in message and "AVX2" in message and "AMX" in message
    assert f"portable=True), {PORTABLE_ENV}=1 or the --portable-llm flag" in message
    assert isinstance(raised.value, SimulatorError)


def test_portable_weights_that_crash_name_the_rebuild(crashing, monkeypatch) -> None:
    monkeypatch.setenv("CRASH_AT", "always-first-decode")
    with pytest.raises(LocalModelCrashed, match=r"portable weights crashed too.*GGML_NATIVE=OFF"):
        CrashingLlama(crashing, portable=True).load()


def test_a_crash_during_a_call_spares_the_caller_and_the_next_call_works(
    crashing, monkeypatch, caplog
) -> None:
    monkeypatch.setenv("CRASH_AT", "call")
    sim = CrashingLlama(crashing, portable=True)
    assert sim.generate(MESSAGES, answer_schema=SCHEMA).error is None
    first_worker = sim._worker.pid
    crash = [ChatMessage("system", "Classes: a, b."), ChatMessage("user", "Sample_3: CRASH")]
    with pytest.raises(LocalModelCrashed, match=r"SIGSEGV.*while running _complete.*next call starts a new"):
        sim.generate(crash, answer_schema=AnswerSchema(("3",), ("a", "b")))
    with caplog.at_level(logging.INFO, logger="xaimetrics"):
        assert sim.generate(MESSAGES, answer_schema=SCHEMA).text == "Sample_3: a\nSample_1: a"
    assert sim._worker.pid != first_worker  # a fresh worker
    assert "the llama.cpp worker process ended; starting a new one" in caplog.text
    probabilities = sim.generate(
        MESSAGES, answer_schema=AnswerSchema(("3", "1"), ("a", "b"), probabilities=True)
    )
    assert probabilities.probabilities == {"3": (0.7, 0.3), "1": (0.7, 0.3)}
    sim.close()
    assert sim._worker is None


def test_the_worker_reports_the_signal_and_its_log() -> None:
    register()
    worker = ModelWorker("crashing-test-model", {"model_path": "fake.gguf", "isolate": False})
    env = os.environ.get("PYTHONPATH", "")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(TESTS), env])
    os.environ["CRASH_AT"] = "always-first-decode"
    try:
        with pytest.raises(WorkerCrashed) as raised:
            worker.start()
    finally:
        os.environ["PYTHONPATH"] = env
        del os.environ["CRASH_AT"]
    assert raised.value.returncode == -signal.SIGSEGV and raised.value.cause == "SIGSEGV"
    assert not worker.alive


def test_ctrl_c_does_not_reach_the_worker(crashing) -> None:
    sim = CrashingLlama(crashing, portable=True)
    sim.load()
    os.kill(sim._worker.pid, signal.SIGINT)  # what a terminal's Ctrl-C sends to the whole process group
    assert sim.generate(MESSAGES, answer_schema=SCHEMA).error is None and sim._worker.alive
    sim.close()


def test_the_worker_imports_the_callers_xaimetrics(crashing) -> None:
    sim = CrashingLlama(crashing, portable=True)
    info = sim.load()
    assert info["weights"] == "portable" and info["pid"] != os.getpid()
    sim.close()
    assert sys.modules["xaimetrics"].__file__  # the parent is untouched


# -- the real offline model (slow): load + decode in subprocesses, never through the response cache ------------
def _offline_model() -> Path:
    pytest.importorskip("llama_cpp")
    from xaimetrics.simulators import load_default_gguf

    return load_default_gguf()


@pytest.mark.slow
def test_portable_weights_use_only_the_plain_cpu_buffer(tmp_path) -> None:
    import subprocess

    model = _offline_model()
    script = (
        "import llama_cpp\n"
        "from xaimetrics.simulators._llama_weights import llama_weights\n"
        "with llama_weights(llama_cpp, portable=True):\n"
        f"    llama = llama_cpp.Llama(model_path={str(model)!r}, n_ctx=256, n_threads=2, verbose=True)\n"
        "llama.eval(llama.tokenize(b'Hello there'))\n"
        "print('decoded', llama.n_tokens)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=False
    )
    log = done.stdout + done.stderr
    assert done.returncode == 0, log[-2000:]  # a crash fails this test, not the session
    assert "decoded 3" in done.stdout or "decoded 2" in done.stdout
    buffers = [line for line in log.splitlines() if "model buffer size" in line]
    assert buffers and all("CPU_Mapped" in line or " CPU " in line for line in buffers), buffers
    # no weights in the repacked or AMX buffers (the build's feature list may still say "REPACK = 1")
    assert not any("REPACK" in line or "AMX" in line for line in buffers) and "repack tensor" not in log


@pytest.mark.slow
@pytest.mark.parametrize("portable", [None, True])
def test_the_offline_model_decodes_in_its_worker(portable, monkeypatch) -> None:
    from xaimetrics.simulators import LlamaCppSimulator

    monkeypatch.delenv(PORTABLE_ENV, raising=False)
    sim = LlamaCppSimulator(_offline_model(), n_ctx=1024, n_threads=2, max_tokens=16, portable=portable)
    info = sim.load()
    assert info["pid"] != os.getpid() and info["weights"] == sim.weights.label
    text = sim.generate(MESSAGES, answer_schema=SCHEMA)  # no cache: a real decode
    assert text.error is None and text.completion_tokens > 0
    assert text.text.splitlines()[0].startswith("Sample_3: ") and text.text.splitlines()[0][-1] in "ab"
    probabilities = sim.generate(
        MESSAGES, answer_schema=AnswerSchema(("3", "1"), ("a", "b"), probabilities=True)
    )
    assert probabilities.error is None
    assert all(abs(sum(p) - 1) < 1e-9 for p in probabilities.probabilities.values())
    assert sim.prompt_tokens(MESSAGES)[:1] and len(sim.prompt_tokens(MESSAGES)) > 10
    sim.close()


# -- deadlines (issue #33): a stopped worker is killed, the call fails with the reason, the next one restarts ---
def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"  # ended, not yet reaped by its parent


def test_a_stopped_worker_is_killed_at_its_deadline_and_the_next_call_restarts(
    crashing, monkeypatch, tmp_path
) -> None:
    import time

    from xaimetrics.exceptions import LocalModelTimeout

    marker = tmp_path / "stopped"
    monkeypatch.setenv("CRASH_AT", f"stop:{marker}")
    sim = CrashingLlama(crashing, portable=True, max_tokens=4, call_timeout=1)
    sim.load()
    started = time.monotonic()
    with pytest.raises(
        LocalModelTimeout, match=r"no answer within 2 s .*killed.*call_timeout in a grid file"
    ):
        sim.generate(MESSAGES, answer_schema=SCHEMA)
    assert time.monotonic() - started < 10  # 1 s + 0.01 s × 43 characters + 0.25 s × 4 tokens, not forever
    stopped = int(marker.read_text())
    assert _gone(stopped)
    assert sim.generate(MESSAGES, answer_schema=SCHEMA).text == "Sample_3: a\nSample_1: a"
    assert sim._worker.pid != stopped
    sim.close()


def test_the_deadline_grows_with_the_prompt_and_is_configurable(monkeypatch) -> None:
    from xaimetrics._call_timeout import CALL_TIMEOUT_ENV, resolve_call_timeout
    from xaimetrics.simulators._llama import call_deadline

    assert call_deadline(10, 0, 0) == 10 and call_deadline(10, 1000, 8) == 10 + 10 + 2
    monkeypatch.setenv(CALL_TIMEOUT_ENV, "7.5")
    assert resolve_call_timeout("auto") == 7.5 and resolve_call_timeout(3) == 3.0  # the argument wins
    monkeypatch.setenv(CALL_TIMEOUT_ENV, "none")
    assert resolve_call_timeout("auto") is None
    monkeypatch.setenv(CALL_TIMEOUT_ENV, "soon")
    with pytest.raises(
        InvalidParameterError, match=f"'{CALL_TIMEOUT_ENV}' parameter of the environment.*soon"
    ):
        resolve_call_timeout("auto")
    monkeypatch.delenv(CALL_TIMEOUT_ENV)
    assert resolve_call_timeout("auto") == 120.0
    for bad in (0, -1, True, "fast", float("inf")):
        with pytest.raises(InvalidParameterError, match="'call_timeout' parameter of LlamaCppSimulator"):
            CrashingLlama("model.gguf", call_timeout=bad)


def test_an_outside_sigkill_while_loading_is_not_called_a_cpu_crash(crashing, monkeypatch, tmp_path) -> None:
    """An out-of-memory kill (SIGKILL from outside) while the model loads: said so, no CPU advice, no fallback."""
    import threading

    marker = tmp_path / "stopped"
    monkeypatch.setenv("CRASH_AT", f"stop-load:{marker}")
    sim = CrashingLlama(crashing, call_timeout=None)
    sim.weights = WeightsPolicy(False, "auto: no AMX on this CPU", chosen=False)  # a fallback would be tried

    def kill_when_loading() -> None:
        for _ in range(600):
            if marker.exists() and marker.read_text():
                os.kill(int(marker.read_text()), signal.SIGKILL)  # what the out-of-memory killer sends
                return
            threading.Event().wait(0.05)

    killer = threading.Thread(target=kill_when_loading)
    killer.start()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no fallback to the portable weights
        with pytest.raises(LocalModelCrashed) as raised:
            sim.load()
    killer.join()
    message = str(raised.value)
    assert "killed from outside (SIGKILL)" in message and "out-of-memory" in message
    assert "while loading the model" in message
    assert "CPU" not in message.replace("not a crash of its code or a CPU feature", "")
    assert "GGML_NATIVE" not in message and "portable" not in message
