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
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Protocol

from xaimetrics._optional import import_optional
from xaimetrics.benchmark._artefacts import Artefacts, Providers
from xaimetrics.benchmark._grid import Grid, Setting
from xaimetrics.benchmark._group import ask, build_group_prompts, register_prompts, setting_row
from xaimetrics.benchmark._row import ResultRow
from xaimetrics.benchmark._store import ResultsStore
from xaimetrics.consim import ConSimPrompt, ConSimResult
from xaimetrics.simulators import Simulator
from xaimetrics.simulators._threads import map_bounded

__all__ = ["run_groups_on_ray", "stop_ray"]

#: ``(name, grid, providers, cache_path) -> simulator``: the runner's simulator factory, sent to the workers
SimulatorFactory = Callable[[str, Grid, Providers, "Path | None"], Simulator]
#: what a task returns per setting: the setting, its result, whether it is stored, and the store row + payload
Outcome = tuple[Setting, ConSimResult, bool, "ResultRow | None", "Mapping[str, object] | None"]


class _Bar(Protocol):
    """The runner's progress bar and tally (``_Progress``; not imported: the runner imports this module)."""

    def done(self, result: ConSimResult, ok: bool, setting: Setting) -> None: ...


#: whether this process started the Ray runtime it uses (then it also stops it: no Ray process outlives it)
_STARTED_HERE = False


def stop_ray() -> bool:
    """Shut down the Ray runtime :func:`run_groups_on_ray` started in this process (its raylet, GCS and
    workers); whether there was one. A runtime the caller connected to is left alone.

    Example:
        >>> stop_ray()
        False
    """
    global _STARTED_HERE
    if not _STARTED_HERE:
        return False
    _STARTED_HERE = False
    ray = import_optional("ray", extra="ray", caller="run_grid(backend='ray')")
    with contextlib.suppress(Exception):
        ray.shutdown()
    return True


# Per worker process: artefacts and simulators survive between the tasks a worker runs.
_ARTEFACTS: dict[tuple[str, str], Artefacts] = {}
_SIMULATORS: dict[tuple[str, str, str], Simulator] = {}


def _run_group(
    grid: Grid,
    providers: Providers,
    directory: Path | None,
    group: list[Setting],
    cache: Path | None,
    make_simulator: SimulatorFactory,
) -> list[Outcome]:
    """One Ray task: build the group's prompts, ask them with at most ``grid.concurrency`` calls in flight
    (threads: :func:`~xaimetrics.simulators._threads.map_bounded`, as the local runner and ``generate_batch``),
    score them and return the rows. A cancelled task (Ctrl-C on the driver) starts no further call."""
    state_key = (repr(grid), str(directory))
    artefacts = _ARTEFACTS.get(state_key)
    if artefacts is None:
        artefacts = _ARTEFACTS[state_key] = Artefacts(grid, providers, directory)
    simulators: dict[str, Simulator] = {}
    for name in sorted({s.simulator for s in group}):
        key = (*state_key, name)
        if key not in _SIMULATORS:
            _SIMULATORS[key] = make_simulator(name, grid, providers, cache)
        simulators[name] = _SIMULATORS[key]
    prompts = build_group_prompts(artefacts, group, simulators)
    register_prompts(simulators, prompts)

    def one(item: tuple[Setting, ConSimPrompt]) -> Outcome:
        setting, prompt = item
        result, ok = ask(simulators[setting.simulator], setting, prompt)
        row, payload = setting_row(setting, result) if ok else (None, None)
        return setting, result, ok, row, payload

    return map_bounded(one, prompts, grid.concurrency)


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
    """
    ray = import_optional("ray", extra="ray", caller="run_grid(backend='ray')")
    if not ray.is_initialized():
        global _STARTED_HERE
        ray.init(include_dashboard=False, log_to_driver=False, configure_logging=False)
        _STARTED_HERE = True
    task = ray.remote(_run_group)
    pending: list[object] = [  # Ray's object references
        task.remote(artefacts.grid, artefacts.providers, artefacts.directory, group, cache, make_simulator)
        for group in groups
    ]
    try:
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            outcomes: list[Outcome] = ray.get(done[0])
            for setting, result, ok, row, payload in outcomes:
                if ok and row is not None:
                    store.add(setting.key, row, payload)
                bar.done(result, ok, setting)
    except BaseException:  # Ctrl-C or a failed write: no group starts after it, the running ones are stopped
        for ref in pending:
            with contextlib.suppress(Exception):  # a task that already ended cannot be cancelled
                ray.cancel(ref)
        raise
