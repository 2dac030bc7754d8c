"""ModelWorker: an object built in a child process, called over pipes; its errors, deadlines and death.

The child builds a standard-library object (``collections.Counter``), so these tests need no model: the
llama.cpp crashes themselves are in test_llama_isolation.py.
"""

from __future__ import annotations

import pytest

from xaimetrics.simulators._worker import (
    TARGETS,
    ModelWorker,
    WorkerCrashed,
    WorkerTimedOut,
    worker_supported,
)

pytestmark = pytest.mark.skipif(not worker_supported(), reason="no worker processes on this platform")


@pytest.fixture
def counter(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(TARGETS, "counter", "collections:Counter")
    worker = ModelWorker("counter", {"a": 3, "b": 1, "c": 2}, ready="most_common")
    yield worker
    worker.close()


def test_the_child_builds_the_object_runs_ready_and_answers_calls(counter: ModelWorker) -> None:
    assert not counter.alive
    assert counter.start(deadline=60) == [("a", 3), ("c", 2), ("b", 1)]  # ready's result
    assert counter.info == [("a", 3), ("c", 2), ("b", 1)] and counter.alive and counter.pid
    assert counter.call("total", deadline=30) == 6
    assert counter.call("most_common", 1) == [("a", 3)]


def test_an_exception_in_the_child_is_raised_here_and_the_child_lives_on(counter: ModelWorker) -> None:
    counter.start(deadline=60)
    with pytest.raises(AttributeError, match="no_such_method"):
        counter.call("no_such_method")
    assert counter.alive and counter.call("total") == 6


def test_a_killed_child_is_a_crash_for_the_next_call(counter: ModelWorker) -> None:
    counter.start(deadline=60)
    assert counter.kill()
    with pytest.raises(WorkerCrashed):
        counter.call("total")
    assert not counter.alive


def test_a_call_past_its_deadline_kills_the_child(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(TARGETS, "event", "threading:Event")
    worker = ModelWorker("event", {}, ready="is_set")
    try:
        assert worker.start(deadline=60) is False
        with pytest.raises(WorkerTimedOut):
            worker.call("wait", deadline=0.5)  # Event().wait() never returns
        assert not worker.alive
    finally:
        worker.close()


def test_an_unknown_target_is_refused() -> None:
    with pytest.raises(ValueError, match=r"unknown worker target 'nope'; known: \[.*'llama\.cpp'"):
        ModelWorker("nope", {})
