"""Ctrl-C on a real ``xaimetrics benchmark run`` process (SIGINT through ``os.kill``), calls counted at the fake
OpenAI server: no call starts after the first interrupt, the calls in flight are stored, the run resumes
exactly; a second Ctrl-C stops at once; an interrupt during start-up prints one line, no traceback."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest
from cli_runs import start_run, stored_keys, stored_rows, write_grid

CONCURRENCY = 2


def _interrupting_responder(state: dict, at_request: int, settle_s: float = 0.3):
    """Answers ``Sample_1: politics``. Requests ``at_request`` and the next one are held until both have arrived
    — then every worker of the run is inside a call and none can start another — SIGINT is sent to the run, the
    requests seen so far are counted, and both are answered ``settle_s`` later, once the interrupt is handled."""
    lock = threading.Lock()
    both_in = threading.Barrier(CONCURRENCY)

    def respond(messages):
        with lock:
            state["seen"] += 1
            number = state["seen"]
        if at_request <= number < at_request + CONCURRENCY:
            both_in.wait(timeout=60)
            if number == at_request:
                os.kill(state["pid"], signal.SIGINT)
                state["requests_at_interrupt"] = state["server"].chat_request_count
            time.sleep(settle_s)
        return "Sample_1: politics"

    return respond


def test_first_ctrl_c_starts_no_new_call_stores_the_calls_in_flight_and_resumes(tmp_path, fake_openai_server):
    state: dict = {"seen": 0}
    server = fake_openai_server(_interrupting_responder(state, at_request=8), latency_s=0.05)
    state["server"] = server
    grid = write_grid(tmp_path, server.base_url, concurrency=CONCURRENCY)
    out = tmp_path / "out"
    child = start_run(grid, out, "--no-cache", cache_dir=tmp_path / "cache")
    state["pid"] = child.pid
    _, stderr = child.communicate(timeout=300)
    assert child.returncode == 130, stderr
    assert "Traceback" not in stderr
    after_interrupt = server.chat_request_count - state["requests_at_interrupt"]
    assert after_interrupt == 0  # no call started after Ctrl-C
    stored = stored_rows(out / "results.sqlite")
    # every call made (the ones in flight included) was stored
    assert stored == server.completion_count == server.chat_request_count
    lines = [line for line in stderr.splitlines() if line.startswith("Interrupted")]
    assert len(lines) == 1
    assert (
        f"{stored} of 24 settings stored" in lines[0] and "Resume with: xaimetrics benchmark run" in lines[0]
    )
    assert not (out / "report.html").exists()

    # the resume asks exactly the settings left, once each
    before = server.chat_request_count
    state["seen"] = -10_000  # no more interrupts
    resumed = start_run(grid, out, "--no-cache", cache_dir=tmp_path / "cache")
    _, stderr = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, stderr
    assert server.chat_request_count - before == 24 - stored
    keys = stored_keys(out / "results.sqlite")
    assert len(keys) == len(set(keys)) == 24


def test_second_ctrl_c_stops_at_once(tmp_path, fake_openai_server):
    state: dict = {"seen": 0}
    # every call takes 60 s: the first interrupt would wait for the calls in flight, the second must not
    server = fake_openai_server(_interrupting_responder(state, at_request=10**9), latency_s=60)
    grid = write_grid(tmp_path, server.base_url, concurrency=CONCURRENCY)
    out = tmp_path / "out"
    child = start_run(grid, out, "--no-cache", cache_dir=tmp_path / "cache")
    deadline = time.monotonic() + 120
    while server.chat_request_count < CONCURRENCY and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.chat_request_count == CONCURRENCY
    child.send_signal(signal.SIGINT)
    time.sleep(0.5)
    assert child.poll() is None  # the first interrupt waits for the two calls in flight
    child.send_signal(signal.SIGINT)
    _, stderr = child.communicate(timeout=20)  # far less than the 60 s the calls in flight still need
    assert child.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert "stopped at once" in stderr and "0 of 24 settings stored" in stderr
    assert server.chat_request_count == CONCURRENCY


def test_ctrl_c_during_start_up_prints_one_line_and_no_traceback(tmp_path, fake_openai_server):
    server = fake_openai_server(latency_s=0.0)
    grid = write_grid(tmp_path, server.base_url)
    child = start_run(grid, tmp_path / "out", "--no-cache", cache_dir=tmp_path / "cache")
    time.sleep(1.0)  # the interpreter is up, the imports and the grid's start-up are under way
    child.send_signal(signal.SIGINT)
    _, stderr = child.communicate(timeout=120)
    if server.chat_request_count:
        pytest.skip("the run reached its first call within 1 s: not a start-up interrupt")
    assert child.returncode == 130, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr
    assert stderr.strip().splitlines()[-1].startswith("Interrupted")
