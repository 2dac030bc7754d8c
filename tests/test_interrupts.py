"""Real signals on a real ``xaimetrics`` process (issue #33): a second Ctrl-C never prints a traceback, in every
command. The command here waits for a call in a pool thread, as ``xaimetrics detection`` waits for its reader:
before, the first Ctrl-C printed "Interrupted." and the interpreter then waited for that thread at exit, where a
second Ctrl-C raised a ``KeyboardInterrupt`` with a traceback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

TESTS = Path(__file__).parent


def _start() -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS.parent / "src"), str(TESTS)])}
    return subprocess.Popen(
        [sys.executable, str(TESTS / "waiting_command.py")], env=env, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def _wait_for_call(child: subprocess.Popen[str]) -> None:
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "call started"


@pytest.mark.parametrize("second", [signal.SIGINT, signal.SIGTERM])
def test_a_second_signal_ends_at_once_without_a_traceback(second: signal.Signals) -> None:
    child = _start()
    _wait_for_call(child)
    child.send_signal(signal.SIGINT)
    time.sleep(1.0)  # "Interrupted." printed; the interpreter now waits for the call's thread at exit
    assert child.poll() is None
    started = time.monotonic()
    child.send_signal(second)
    _, stderr = child.communicate(timeout=30)
    assert time.monotonic() - started < 20  # not the 60 s the call still needs
    assert child.returncode == 130, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr
    assert stderr.splitlines() == ["Interrupted.", "Stopped at once."]


def test_sigterm_stops_like_a_first_ctrl_c() -> None:
    child = _start()
    _wait_for_call(child)
    child.send_signal(signal.SIGTERM)
    time.sleep(1.0)
    child.send_signal(signal.SIGINT)
    _, stderr = child.communicate(timeout=30)
    assert child.returncode == 130 and "Traceback" not in stderr
    assert stderr.splitlines() == ["Interrupted.", "Stopped at once."]
