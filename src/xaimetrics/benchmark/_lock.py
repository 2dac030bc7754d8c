"""One run per results store: an exclusive ``fcntl.flock`` on a lock file beside it.

Two processes resuming one store would both ask every pending setting (each skips only what was stored when
it started): the data stays correct, but every call is paid twice. :func:`run_grid
<xaimetrics.benchmark.run_grid>` therefore holds ``<store>.lock`` for the whole run. The file records who holds
it (pid, host, start time, command line), so a second run says whom it waits for. The kernel drops the lock
when its process dies, even by ``kill -9``: a stale file never blocks. ``flock`` is per machine; on a network
file system shared by several hosts it may not exclude a run on another host. Without ``fcntl`` (Windows)
nothing is locked.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path
from typing import TextIO

from xaimetrics._writes import write_failure_cause
from xaimetrics.exceptions import StoreError

__all__ = ["StoreLock"]

#: seconds between two attempts while waiting for the holder to finish
_POLL_S = 0.25


class StoreLock:
    """An exclusive lock on the results store ``path`` (the file ``<path>.lock``), held until :meth:`release`.

    Args:
        path: the results store (the lock file is created beside it).
        wait: wait for the holder to finish instead of raising.

    Raises:
        StoreError: another process holds the lock (and ``wait`` is off); the message names it.

    Example:
        >>> import tempfile
        >>> store = Path(tempfile.mkdtemp()) / "results.sqlite"
        >>> with StoreLock(store):
        ...     StoreLock(store)
        Traceback (most recent call last):
        ...
        xaimetrics.exceptions.StoreError: The results store ... is in use by another run (pid ...
    """

    def __init__(self, path: str | os.PathLike[str], *, wait: bool = False) -> None:
        self.store = Path(path)
        self.path = self.store.with_name(self.store.name + ".lock")
        self._handle: TextIO | None = None
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows
            return
        try:
            self.store.parent.mkdir(parents=True, exist_ok=True)
            handle = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 - held until release()
        except OSError as error:
            raise StoreError(
                f"Cannot create the lock file {self.path} of the results store: "
                f"{write_failure_cause(self.path, error)}."
            ) from error
        told = False
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                holder = _holder(self.path)
                if not wait:
                    handle.close()
                    raise StoreError(
                        f"The results store {self.store} is in use by another run ({holder}). Nothing was "
                        "asked. Wait for that run to finish (or stop it), pass --wait to start when it ends, "
                        "or use another --output folder."
                    ) from None
                if not told:
                    print(
                        f"Waiting for the run holding {self.store} ({holder}) to finish...", file=sys.stderr
                    )
                    told = True
                time.sleep(_POLL_S)
        handle.seek(0)
        handle.truncate()
        record = {
            "pid": os.getpid(), "host": socket.gethostname(),
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "command": " ".join(sys.argv)[:300],
        }  # fmt: skip
        handle.write(json.dumps(record))
        handle.flush()
        self._handle = handle

    def release(self) -> None:
        """Let the next run in (the file stays, empty)."""
        if self._handle is None:
            return
        import fcntl

        try:
            self._handle.seek(0)
            self._handle.truncate()
        except OSError:  # a full disk must not keep the lock
            pass
        fcntl.flock(self._handle, fcntl.LOCK_UN)
        self._handle.close()
        self._handle = None

    def __enter__(self) -> StoreLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _holder(path: Path) -> str:
    """Who holds the lock, in words (what its file records)."""
    try:
        record = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        record = {}
    if not isinstance(record, dict) or "pid" not in record:
        return "a process that is starting"
    return (
        f"pid {record.get('pid')} on {record.get('host')}, started {record.get('started')}: "
        f"{record.get('command', '')!s}"
    )
