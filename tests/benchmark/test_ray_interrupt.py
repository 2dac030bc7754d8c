"""Ctrl-C and SIGTERM on a real ``xaimetrics benchmark run --backend ray`` process (issue #33), calls counted at
the fake OpenAI server, Ray's processes found by a marker in their environment.

Before: Ctrl-C printed "nothing new stored" while 22–24 rows were stored, 1–5 calls started after it and, without
the response cache, 13–14 paid answers were lost; a second Ctrl-C printed a raw ``KeyboardInterrupt`` traceback
and left 2 Ray processes alive; SIGTERM ended in a native crash dump from Ray's logger."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
from cli_runs import environment, stored_rows, write_grid

pytest.importorskip("ray")
pytestmark = pytest.mark.slow  # a local Ray instance starts in 20-60 s on a loaded 2-core machine


def _start(tmp_path: Path, base_url: str) -> tuple[subprocess.Popen[str], str]:
    grid = write_grid(tmp_path, base_url, n_seeds=12, concurrency=2)
    marker = uuid.uuid4().hex
    env = {**environment(tmp_path / "cache"), "XAIMETRICS_TEST_RAY_RUN": marker}
    command = [
        sys.executable, "-c", "import sys; from xaimetrics.cli import main; sys.exit(main())", "benchmark", "run",
        str(grid), "--output", str(tmp_path / "out"), "--providers", "toy_grid:PROVIDERS", "--no-progress",
        "--no-cache", "--backend", "ray",
    ]  # fmt: skip
    child = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return child, marker


def _processes_with(marker: str) -> list[str]:
    """The processes whose environment holds the run's marker (the run and every Ray process it started)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if f"XAIMETRICS_TEST_RAY_RUN={marker}".encode() in environ and state != "Z":
            found.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:120])
    return found


def _no_ray_left(marker: str, within_s: float = 30) -> list[str]:
    deadline = time.monotonic() + within_s
    while (left := _processes_with(marker)) and time.monotonic() < deadline:
        time.sleep(0.5)
    return left


def _signal_at(state: dict, at_request: int, signum: int, latency_s: float):
    lock = threading.Lock()

    def respond(messages):
        with lock:
            state["seen"] += 1
            number = state["seen"]
            if number == at_request:
                state["requests_at_signal"] = state["server"].chat_request_count
                os.kill(state["pid"], signum)
        time.sleep(latency_s)
        return "Sample_1: politics"

    return respond


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_first_signal_stores_every_answer_starts_no_call_and_leaves_no_ray(
    tmp_path, fake_openai_server, signum
):
    state: dict = {"seen": 0}
    server = fake_openai_server(_signal_at(state, 6, signum, latency_s=0.5))
    state["server"] = server
    child, marker = _start(tmp_path, server.base_url)
    state["pid"] = child.pid
    _, stderr = child.communicate(timeout=400)
    assert child.returncode == 130, stderr
    assert "Traceback" not in stderr and "nothing new stored" not in stderr
    assert "SIGSEGV" not in stderr and "Fatal Python error" not in stderr and "*** " not in stderr
    assert server.chat_request_count == state["requests_at_signal"]  # no call after the signal
    stored = stored_rows(tmp_path / "out" / "results.sqlite")
    assert stored == server.completion_count > 0  # every answer received is stored: none lost
    (line,) = [line for line in stderr.splitlines() if line.startswith("Interrupted")]
    assert "stopped after the calls in flight" in line and f"{stored} of 24 settings stored" in line
    assert _no_ray_left(marker) == []


def test_second_ctrl_c_stops_at_once_without_a_traceback_and_leaves_no_ray(tmp_path, fake_openai_server):
    state: dict = {"seen": 0}
    server = fake_openai_server(_signal_at(state, 10**9, signal.SIGINT, latency_s=60))  # calls never end
    state["server"] = server
    child, marker = _start(tmp_path, server.base_url)
    deadline = time.monotonic() + 300
    while server.chat_request_count < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert server.chat_request_count >= 2
    child.send_signal(signal.SIGINT)
    time.sleep(1.0)
    assert child.poll() is None  # the first Ctrl-C waits for the calls in flight
    child.send_signal(signal.SIGINT)
    _, stderr = child.communicate(timeout=60)  # far less than the 60 s the calls in flight still need
    assert child.returncode == 130, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr
    assert "stopped at once" in stderr
    # Under load Ray's dashboard agent can still be exiting on its own (it follows its raylet) well after the
    # CLI: seen at 30 s with the suite running beside it; it is gone within the minute.
    assert _no_ray_left(marker, within_s=90) == []
