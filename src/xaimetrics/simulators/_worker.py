"""A local model in a child process: a native crash (SIGSEGV, SIGILL, abort) ends the child, not the caller.

llama.cpp and torch run native kernels chosen for the CPU; on some machines they crash (issue #20: AMX weights
in a virtual machine). In-process, that ends the user's Python with a bare "Segmentation fault" and loses the
run. :class:`ModelWorker` starts ``python -m xaimetrics.simulators._worker`` with two pipes, builds the model
object there, and forwards method calls; when the child dies, the caller gets :class:`WorkerCrashed` (the signal,
what it was doing, the tail of its log) and can start a new one.

Hand-written rather than ``multiprocessing``: a ``spawn`` pool re-imports the caller's ``__main__`` (a user's
script without a main guard would start itself again), and ``fork`` copies a process that may hold torch's or
llama.cpp's threads. Messages are pickled over private pipes between this process and its own child: nothing
from disk or the network is unpickled. The child ignores SIGINT, so that a Ctrl-C is the caller's to handle; it
exits when its pipe closes.

**Deadlines and interrupts** (issue #33). A call waits for its answer at most ``deadline`` seconds: a child that
stops answering (stopped, swapping, spinning in a native loop) is killed and the caller gets
:class:`WorkerTimedOut`; the next call starts a new child. A Ctrl-C that reaches the thread waiting for the answer
kills the child (its state is unknown once a call is abandoned) before the ``KeyboardInterrupt`` goes on, and
:func:`stop_workers` kills every live child of this process at once (the grid's runner calls it on the first
Ctrl-C, the CLI before it exits): no child outlives the command, a stopped one included (SIGKILL reaches stopped
processes).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from multiprocessing.connection import Connection
from pathlib import Path
from typing import IO

__all__ = ["ModelWorker", "WorkerCrashed", "WorkerTimedOut", "stop_workers", "worker_supported"]

#: classes a worker may build, by name; the parent resolves the name and sends the path to its own child
TARGETS = {"llama.cpp": "xaimetrics.simulators._llama:LlamaCppSimulator"}
_LOG_TAIL = 1500
#: every started worker of this process, for :func:`stop_workers`
_LIVE: weakref.WeakSet[ModelWorker] = weakref.WeakSet()
_LIVE_LOCK = threading.Lock()


def worker_supported() -> bool:
    """Whether this platform can run a model in a worker (POSIX: inherited pipe descriptors).

    Example:
        >>> isinstance(worker_supported(), bool)
        True
    """
    return os.name == "posix"


class WorkerCrashed(Exception):
    """The worker process died: ``returncode`` (negative: the signal), what it was doing, its log's tail."""

    def __init__(
        self, returncode: int | None, phase: str, log_tail: str, *, stopped_here: bool = False
    ) -> None:
        self.returncode, self.phase, self.log_tail = returncode, phase, log_tail
        #: this process killed it (a Ctrl-C, :func:`stop_workers`): not a crash of the model
        self.stopped_here = stopped_here
        super().__init__(f"the worker process died ({self.cause}) while {phase}")

    @property
    def cause(self) -> str:
        """``"SIGSEGV"``, ``"SIGILL"``…, or ``"exit code N"``."""
        code = self.returncode
        if code is not None and code < 0:
            with contextlib.suppress(ValueError):
                return signal.Signals(-code).name
            return f"signal {-code}"
        return f"exit code {code}"

    @property
    def killed_from_outside(self) -> bool:
        """Whether a SIGKILL ended the child that this process did not send (the kernel's out-of-memory killer,
        a ``kill -9``): never a fault of the model's code."""
        return self.returncode == -signal.SIGKILL and not self.stopped_here


class WorkerTimedOut(WorkerCrashed):
    """The worker did not answer within its deadline and was killed (``deadline`` seconds)."""

    def __init__(self, deadline: float, phase: str, log_tail: str) -> None:
        self.deadline = deadline
        super().__init__(-signal.SIGKILL, phase, log_tail, stopped_here=True)
        self.args = (
            f"the worker process gave no answer within {deadline:.0f} s while {phase}; it was killed",
        )


def stop_workers() -> int:
    """Kill every live worker process of this process now (SIGKILL, no waiting for a call in flight); the
    number killed. Their callers get :class:`WorkerCrashed`; a later call starts a new worker.

    Example:
        >>> stop_workers() >= 0  # 0 in a fresh interpreter; in a longer one, the workers it still had
        True
    """
    with _LIVE_LOCK:
        workers = list(_LIVE)
    killed = 0
    for worker in workers:
        killed += worker.kill()
    return killed


def _reap(process: subprocess.Popen[bytes], *connections: Connection) -> None:
    for connection in connections:
        with contextlib.suppress(OSError):
            connection.close()
    if process.poll() is None:
        process.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=10)


class ModelWorker:
    """One child process holding one model object built from ``TARGETS[target](**kwargs)``.

    Args:
        target: a key of :data:`TARGETS`.
        kwargs: the constructor's keyword arguments (picklable).
        ready: the method called once in the child after construction (e.g. load + first decode); its return
            value is :attr:`info`.

    Raises:
        WorkerCrashed: from :meth:`start` or :meth:`call` when the child died; the worker is then closed.

    Example:
        >>> ModelWorker("llama.cpp", {"model_path": "absent.gguf"}).alive
        False
    """

    def __init__(self, target: str, kwargs: dict[str, object], *, ready: str = "load") -> None:
        if target not in TARGETS:
            raise ValueError(f"unknown worker target {target!r}; known: {sorted(TARGETS)}")
        self.target, self.kwargs, self.ready = target, dict(kwargs), ready
        self.info: object = None
        self._process: subprocess.Popen[bytes] | None = None
        self._inbox: Connection | None = None
        self._outbox: Connection | None = None
        self._log: IO[bytes] | None = None
        self._lock = threading.Lock()
        self._killed = False  # by this process (a deadline, a Ctrl-C, stop_workers): not a crash

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    def start(self, deadline: float | None = None) -> object:
        """Start the child, build the object, run ``ready`` (within ``deadline`` seconds, ``None``: no limit);
        return its result (also kept in :attr:`info`)."""
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 (kept open for the worker's lifetime)
        package_root = str(Path(__file__).resolve().parents[2])  # the same xaimetrics as this process
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH", "")) if p)
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "xaimetrics.simulators._worker", str(to_child_r), str(from_child_w)],
                pass_fds=(to_child_r, from_child_w), stdin=subprocess.DEVNULL, stdout=self._log,
                stderr=self._log, env=env, close_fds=True,
            )  # fmt: skip
        finally:
            os.close(to_child_r)
            os.close(from_child_w)
        self._outbox = Connection(to_child_w, readable=False)
        self._inbox = Connection(from_child_r, writable=False)
        weakref.finalize(self, _reap, self._process, self._outbox, self._inbox)
        self._killed = False
        with _LIVE_LOCK:
            _LIVE.add(self)
        init = ("init", TARGETS[self.target], self.kwargs, self.ready)
        self.info = self._exchange(init, "loading the model and decoding its first token", deadline)
        return self.info

    def call(self, method: str, *args: object, deadline: float | None = None) -> object:
        """Call ``method(*args)`` on the child's object and return its result (its exception is re-raised).

        Raises:
            WorkerTimedOut: no answer within ``deadline`` seconds (``None``: no limit); the child was killed.
            WorkerCrashed: the child died.
        """
        if not self.alive:
            raise WorkerCrashed(
                None if self._process is None else self._process.returncode, f"calling {method}", ""
            )
        return self._exchange(("call", method, args), f"running {method}", deadline)

    def kill(self) -> bool:
        """Kill the child now (SIGKILL: also a stopped one); whether it was alive. A call waiting for it gets
        :class:`WorkerCrashed` and the worker is closed."""
        process = self._process
        if process is None or process.poll() is not None:
            return False
        self._killed = True
        with contextlib.suppress(OSError):
            process.kill()
        return True

    def _exchange(self, message: tuple[object, ...], phase: str, deadline: float | None = None) -> object:
        assert self._outbox is not None and self._inbox is not None  # started
        with self._lock:
            started = time.monotonic()
            answered = False
            try:
                self._outbox.send(message)
                # poll in slices: a Ctrl-C in this thread, or a kill by stop_workers, is seen within one
                while not (answered := self._inbox.poll(0.25)):
                    if deadline is not None and time.monotonic() - started > deadline:
                        break
                    if self._process is not None and self._process.poll() is not None:
                        raise EOFError  # died without closing its pipe (a grandchild may hold it)
                if answered:
                    status, value = self._inbox.recv()
            except (EOFError, OSError) as error:
                code, killed = self._wait(), self._killed
                crash = WorkerCrashed(code, phase, self._log_tail(), stopped_here=killed)
                self.close()
                raise crash from error
            except BaseException:  # Ctrl-C while waiting: the answer would arrive out of turn; end the child
                self.kill()
                self.close()
                raise
            if not answered:  # past the deadline: kill the child (a stopped one too), then say so
                self.kill()
                self._wait()
                timed_out = WorkerTimedOut(float(deadline or 0), phase, self._log_tail())
                self.close()
                raise timed_out
        if status == "error":
            raise value
        return value

    def _wait(self) -> int | None:
        assert self._process is not None
        try:
            return self._process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            return None

    def _log_tail(self) -> str:
        if self._log is None:
            return ""
        with contextlib.suppress(OSError, ValueError):
            self._log.seek(0, os.SEEK_END)
            size = self._log.tell()
            self._log.seek(max(0, size - _LOG_TAIL))
            return self._log.read().decode("utf-8", "replace").strip()
        return ""

    def close(self) -> None:
        """Stop the child (it exits when its pipe closes; killed if it does not within 10 s)."""
        with _LIVE_LOCK:
            _LIVE.discard(self)
        if self._process is not None:
            if self._outbox is not None:
                with contextlib.suppress(OSError, ValueError):
                    self._outbox.send(("close",))
            for connection in (self._outbox, self._inbox):
                if connection is not None:
                    with contextlib.suppress(OSError):
                        connection.close()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(timeout=10)
        if self._log is not None:
            with contextlib.suppress(OSError):
                self._log.close()
        self._process = self._inbox = self._outbox = self._log = None


def _build(path: str, kwargs: dict[str, object]) -> object:
    module_name, _, class_name = path.partition(":")
    return getattr(importlib.import_module(module_name), class_name)(**kwargs)


def _reply(outbox: Connection, status: str, value: object) -> None:
    try:
        outbox.send((status, value))
    except Exception as error:  # an unpicklable exception or value: send its text
        outbox.send(("error", RuntimeError(f"{type(value).__name__}: {value} ({error})")))


def _serve(inbox: Connection, outbox: Connection) -> None:
    obj: object = None
    while True:
        try:
            message = inbox.recv()
        except (EOFError, OSError):
            return
        kind = message[0]
        if kind == "close":
            return
        try:
            if kind == "init":
                _, path, kwargs, ready = message
                obj = _build(path, kwargs)
                result = getattr(obj, ready)()
            else:
                _, method, args = message
                result = getattr(obj, method)(*args)
        except Exception as error:
            _reply(outbox, "error", error)
        else:
            _reply(outbox, "ok", result)


def main(argv: list[str]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the caller decides what a Ctrl-C stops
    inbox = Connection(int(argv[0]), writable=False)
    outbox = Connection(int(argv[1]), readable=False)
    _serve(inbox, outbox)


if __name__ == "__main__":
    main(sys.argv[1:])
