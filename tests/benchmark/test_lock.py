"""One run per results folder: a second run names the holder and exits without a call, or waits (--wait);
concurrent runs never pay a setting twice."""

from __future__ import annotations

import os
import time

import pytest
from cli_runs import start_run, stored_keys, write_grid

from xaimetrics.benchmark._lock import StoreLock


def _answer(messages):
    return "Sample_1: politics"


def test_a_second_run_names_the_holder_and_makes_no_call(tmp_path, fake_openai_server):
    server = fake_openai_server(_answer)
    grid = write_grid(tmp_path, server.base_url)
    out = tmp_path / "out"
    with StoreLock(out / "results.sqlite"):
        child = start_run(grid, out, "--no-cache", cache_dir=tmp_path / "cache")
        _, stderr = child.communicate(timeout=300)
    assert child.returncode == 1
    errors = [line for line in stderr.splitlines() if line.startswith("StoreError:")]
    assert len(errors) == 1 and "in use by another run" in errors[0] and "Traceback" not in stderr
    assert f"pid {os.getpid()}" in stderr and "--wait" in stderr
    assert server.chat_request_count == 0


@pytest.mark.slow  # a CLI process waiting on a lock
def test_wait_starts_when_the_holder_ends(tmp_path, fake_openai_server):
    server = fake_openai_server(_answer)
    grid = write_grid(tmp_path, server.base_url)
    out = tmp_path / "out"
    lock = StoreLock(out / "results.sqlite")
    child = start_run(grid, out, "--no-cache", "--wait", cache_dir=tmp_path / "cache")
    while "Waiting for the run holding" not in (line := child.stderr.readline()):
        assert line, "the run ended without waiting"
    time.sleep(0.5)
    assert server.chat_request_count == 0
    lock.release()
    _, stderr = child.communicate(timeout=300)
    assert child.returncode == 0, stderr
    assert server.chat_request_count == 24


@pytest.mark.slow  # three CLI processes
def test_three_concurrent_runs_pay_each_setting_once(tmp_path, fake_openai_server):
    server = fake_openai_server(_answer, latency_s=0.02)
    grid = write_grid(tmp_path, server.base_url)
    out = tmp_path / "out"
    children = [start_run(grid, out, "--no-cache", "--wait", cache_dir=tmp_path / "cache") for _ in range(3)]
    for child in children:
        _, stderr = child.communicate(timeout=300)
        assert child.returncode == 0, stderr
    assert server.chat_request_count == 24
    keys = stored_keys(out / "results.sqlite")
    assert len(keys) == len(set(keys)) == 24
