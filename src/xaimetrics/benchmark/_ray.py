"""The Ray backend of :func:`~xaimetrics.benchmark.run_grid` (optional extra ``ray``).

Each *group* of settings (dataset × model × method × k × seed × simulator) becomes one Ray task: the worker
builds the group's prompts from the same :class:`~xaimetrics.benchmark.Artefacts` (sharing the artefact folder
when the cluster shares a file system), asks the simulator and scores the answers with the functions of
``_group.py``, as the local runner does (this module imports them, never the runner); the driver writes every
returned row to the results store as tasks finish, so a crashed driver resumes exactly like the local backend.
Results are identical to the local run: the prompts, the selection and the fits depend only on the grid and
the seeds, never on where they run. Calls follow the runner's one concurrency model: threads, at most
``grid.concurrency`` calls in flight per task (several tasks run at once on a cluster).

Ray is started on the local machine if it is not running yet (``ray.init()``); connect to a cluster first
with ``ray.init(address=...)`` (and a ``runtime_env`` that can import your providers) to use one.

**Interrupts** (issue #33). A task returns its rows when it ends, so cancelling it would throw away the answers it
already received (paid for). At the first Ctrl-C the driver instead raises a stop flag (a small Ray actor) that
every task checks before each call and before building its prompts: no call starts after it, the calls in flight
finish, each task returns what it got, and the driver stores it before raising :class:`RayInterrupted`. A second
Ctrl-C cancels the tasks (force), shuts down a Ray runtime started here and raises at once. ``ray.init`` replaces
the process's SIGTERM handler with one that ends in a native crash dump at exit: a Python handler set before
(the command line's, which stops like Ctrl-C) is put back.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Protocol

from xaimetrics._optional import import_optional
from xaimetrics._threads import map_bounded
from xaimetrics.benchmark._artefacts import Artefacts, Providers
from xaimetrics.benchmark._grid import ArtefactConfig, Setting
from xaimetrics.benchmark._group import ask, group_prompts, register_prompts, setting_row
from xaimetrics.benchmark._row import ResultRow
from xaimetrics.benchmark._store import ResultsStore
from xaimetrics.consim import ConSimPrompt, ConSimResult
from xaimetrics.simulators import Simulator

__all__ = ["RayInterrupted", "run_groups_on_ray", "stop_ray"]

#: ``(name, config, providers, cache_path) -> simulator``: the runner's simulator factory, sent to the workers
SimulatorFactory = Callable[[str, ArtefactConfig, Providers, "Path | None"], Simulator]
#: what a task returns per setting: the setting, its result, whether it is stored, and the store row + payload
Outcome = tuple[Setting, ConSimResult, bool, "ResultRow | None", "Mapping[str, object] | None"]


class _Bar(Protocol):
    """The runner's progress bar and tally (``_Progress``; not imported: the runner imports this module)."""

    def done(self, result: ConSimResult, ok: bool, setting: Setting) -> None: ...

    def fit_failed(self, settings: list[Setting], message: str) -> None: ...


#: whether this process started the Ray runtime it uses (then it also stops it: no Ray process outlives it)
_STARTED_HERE = False
#: Ray processes seen below this one while its runtime ran: an agent re-parented to init before the stop (its
#: raylet ended first, e.g. under a second Ctrl-C) is no longer a descendant, but is still ours to kill
_SEEN_PIDS: set[int] = set()


def stop_ray() -> bool:
    """Shut down the Ray runtime :func:`run_groups_on_ray` started in this process (its raylet, GCS, agents and
    workers); whether there was one. A runtime the caller connected to is left alone.

    ``ray.shutdown()`` leaves Ray's dashboard and runtime-env agents running when the raylet ends abruptly (they
    ignore SIGTERM and are re-parented to init): the Ray processes descending from this one are noted first and
    any still alive 5 s after the shutdown are killed.

    Example:
        >>> stop_ray()
        False
    """
    global _STARTED_HERE
    if not _STARTED_HERE:
        return False
    _STARTED_HERE = False
    ray = import_optional("ray", extra="ray", caller="run_grid(backend='ray')")
    started = sorted(_SEEN_PIDS.union(_ray_descendants()))
    _SEEN_PIDS.clear()
    with contextlib.suppress(Exception):
        ray.shutdown()
    deadline = time.monotonic() + 5
    while (alive := [pid for pid in started if _alive(pid)]) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in alive:
        with contextlib.suppress(OSError):
            if b"ray" in Path(f"/proc/{pid}/cmdline").read_bytes().lower():  # still Ray: never a reused pid
                os.kill(pid, signal.SIGKILL)
    return True


def _ray_descendants() -> list[int]:
    """The processes below this one whose command line names Ray (Linux ``/proc``; elsewhere none)."""
    children: dict[int, list[int]] = {}
    commands: dict[int, bytes] = {}
    for entry in Path("/proc").glob("[0-9]*") if Path("/proc/self/stat").exists() else ():
        with contextlib.suppress(OSError, ValueError, IndexError):
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            children.setdefault(parent, []).append(int(entry.name))
            commands[int(entry.name)] = (entry / "cmdline").read_bytes()
    found, stack = [], list(children.get(os.getpid(), []))
    while stack:
        pid = stack.pop()
        stack.extend(children.get(pid, []))
        if b"ray" in commands.get(pid, b"").lower():
            found.append(pid)
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


class RayInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped :func:`run_groups_on_ray`: after the calls in flight (their rows stored), or at once
    (``immediate``: the tasks were cancelled and their answers not yet returned are lost)."""

    def __init__(self, immediate: bool) -> None:
        super().__init__("stopped at once" if immediate else "stopped after the calls in flight")
        self.immediate = immediate


class _StopFlag:
    """A Ray actor holding one flag: raised by the driver at the first Ctrl-C, read by the tasks."""

    def __init__(self) -> None:
        self.stopped = False

    def stop(self) -> bool:
        self.stopped = True
        return True

    def is_set(self) -> bool:
        return self.stopped


def _stopped(flag: object) -> bool:
    """Whether the driver asked the tasks to stop (a flag that cannot be read counts as raised)."""
    if flag is None:
        return False
    ray = import_optional("ray", extra="ray", caller="run_grid(backend='ray')")
    try:
        return bool(ray.get(flag.is_set.remote(), timeout=30))  # type: ignore[attr-defined]
    except Exception:
        return True


# Per worker process: artefacts and simulators survive between the tasks a worker runs.
_ARTEFACTS: dict[tuple[str, str], Artefacts] = {}
_SIMULATORS: dict[tuple[str, str, str], Simulator] = {}


def _run_group(
    config: ArtefactConfig,
    providers: Providers,
    directory: Path | None,
    group: list[Setting],
    cache: Path | None,
    make_simulator: SimulatorFactory,
    flag: object = None,
) -> tuple[list[Outcome], str | None]:
    """One Ray task: build the group's prompts, ask them with at most ``config.concurrency`` calls in flight
    (threads: :func:`~xaimetrics._threads.map_bounded`, as the local runner and ``generate_batch``),
    score them and return the rows, with ``None`` — or no row and the extractor's message when the group's
    concept fit failed. Once the driver's stop ``flag`` is raised (its first Ctrl-C), no call starts and the task
    returns the rows of the calls it made."""
    if _stopped(flag):
        return [], None
    state_key = (repr(config), str(directory))
    artefacts = _ARTEFACTS.get(state_key)
    if artefacts is None:
        artefacts = _ARTEFACTS[state_key] = Artefacts(config, providers, directory)
    simulators: dict[str, Simulator] = {}
    for name in sorted({s.simulator for s in group}):
        key = (*state_key, name)
        if key not in _SIMULATORS:
            _SIMULATORS[key] = make_simulator(name, config, providers, cache)
        simulators[name] = _SIMULATORS[key]
    prompts, failure = group_prompts(artefacts, group, simulators)
    if failure is not None:
        return [], failure
    register_prompts(simulators, prompts)

    def one(item: tuple[Setting, ConSimPrompt]) -> Outcome | None:
        setting, prompt = item
        if _stopped(flag):
            return None  # never asked: the next run asks it
        result, ok = ask(simulators[setting.simulator], setting, prompt)
        row, payload = setting_row(setting, result) if ok else (None, None)
        return setting, result, ok, row, payload

    return [outcome for outcome in map_bounded(one, prompts, config.concurrency) if outcome is not None], None


def run_groups_on_ray(
    groups: list[list[Setting]],
    artefacts: Artefacts,
    store: ResultsStore,
    cache: Path | None,
    bar: _Bar,
    make_simulator: SimulatorFactory,
) -> None:
    """Run the groups as Ray tasks and store each returned row as soon as its task finishes.

    ``make_simulator`` builds a simulator from its grid name in each worker (a module-level function, so that
    Ray sends it by reference).

    Raises:
        RayInterrupted: Ctrl-C; the rows returned before it (and, after a first Ctrl-C, those of the calls in
            flight) are stored.
    """
    global _STARTED_HERE
    ray = import_optional("ray", extra="ray", caller="run_grid(backend='ray')")
    if not ray.is_initialized():
        sigterm = signal.getsignal(signal.SIGTERM)
        ray.init(include_dashboard=False, log_to_driver=False, configure_logging=False)
        _STARTED_HERE = True
        _SEEN_PIDS.update(_ray_descendants())
        if callable(sigterm) and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, sigterm)  # the caller's handler, not Ray's (see the module's doc)
    flag = ray.remote(num_cpus=0)(_StopFlag).remote()
    task = ray.remote(_run_group)
    pending: list[object] = [  # Ray's object references
        task.remote(
            artefacts.config, artefacts.providers, artefacts.directory, group, cache, make_simulator, flag
        )
        for group in groups
    ]
    group_of = dict(zip(pending, groups, strict=True))  # a failed fit is reported for its group's settings

    def store_done(wait_s: float | None) -> None:
        nonlocal pending
        done, pending = ray.wait(pending, num_returns=1, timeout=wait_s)
        if _STARTED_HERE:  # agents start after ray.init returns: note them while they are still ours
            _SEEN_PIDS.update(_ray_descendants())
        for ref in done:
            outcomes: list[Outcome]
            outcomes, failure = ray.get(ref)
            if failure is not None:
                bar.fit_failed(group_of[ref], failure)
            for setting, result, ok, row, payload in outcomes:
                if ok and row is not None:
                    store.add(setting.key, row, payload)
                bar.done(result, ok, setting)

    try:
        while pending:
            store_done(None)
    except KeyboardInterrupt:
        try:
            with contextlib.suppress(Exception):
                ray.get(flag.stop.remote(), timeout=30)  # no call starts after this
            while pending:  # the calls in flight finish; their rows are stored
                store_done(1.0)
        except KeyboardInterrupt:  # Ctrl-C again: at once
            _cancel(ray, pending)
            stop_ray()
            raise RayInterrupted(immediate=True) from None
        raise RayInterrupted(immediate=False) from None
    except BaseException:  # a failed write: no group starts after it, the running ones are stopped
        _cancel(ray, pending)
        raise
    finally:
        with contextlib.suppress(Exception):
            ray.kill(flag)


def _cancel(ray: object, pending: list[object]) -> None:
    for ref in pending:
        with contextlib.suppress(Exception):  # a task that already ended cannot be cancelled
            ray.cancel(ref, force=True)  # type: ignore[attr-defined]
