"""The Ray backend of :func:`~xaimetrics.benchmark.run_grid` (optional extra ``ray``).

Each *group* of settings (dataset × model × method × k × seed × simulator) becomes one Ray task: the worker
builds the group's prompts from the same :class:`~xaimetrics.benchmark.Artefacts` (sharing the artefact folder
when the cluster shares a file system), asks the simulator and scores the answers with the functions of
``_group.py``, as the local runner does (this module imports them, never the runner); the driver writes every
returned row to the results store as tasks finish, so a crashed driver resumes exactly like the local backend.
Results are identical to the local run: the prompts, the selection and the fits depend only on the grid and
the seeds, never on where they run.

Ray is started on the local machine if it is not running yet (``ray.init()``); connect to a cluster first
with ``ray.init(address=...)`` (and a ``runtime_env`` that can import your providers) to use one.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from xaimetrics._optional import import_optional
from xaimetrics.benchmark._artefacts import Artefacts
from xaimetrics.benchmark._group import ask, build_group_prompts, register_prompts, setting_row

__all__ = ["run_groups_on_ray"]

# Per worker process: artefacts and simulators survive between the tasks a worker runs.
_WORKER_STATE: dict[Any, Any] = {}

#: ``(name, grid, providers, cache_path) -> simulator``: the runner's simulator factory, sent to the workers
SimulatorFactory = Callable[[str, Any, Any, "Path | None"], Any]


def _run_group(
    grid: Any,
    providers: Any,
    directory: Any,
    group: list[Any],
    cache: Path | None,
    make_simulator: SimulatorFactory,
) -> list[Any]:
    import concurrent.futures

    state_key = (repr(grid), str(directory))
    artefacts = _WORKER_STATE.get(("artefacts", state_key))
    if artefacts is None:
        artefacts = _WORKER_STATE[("artefacts", state_key)] = Artefacts(grid, providers, directory)
    simulators: dict[str, Any] = {}
    for name in sorted({s.simulator for s in group}):
        key = ("simulator", state_key, name)
        if key not in _WORKER_STATE:
            _WORKER_STATE[key] = make_simulator(name, grid, providers, cache)
        simulators[name] = _WORKER_STATE[key]
    prompts = build_group_prompts(artefacts, group, simulators)
    register_prompts(simulators, prompts)

    def one(item: tuple[Any, Any]) -> Any:
        setting, prompt = item
        result, ok = ask(simulators[setting.simulator], setting, prompt)
        row, payload = setting_row(setting, result) if ok else (None, None)
        return setting, result, ok, row, payload

    with concurrent.futures.ThreadPoolExecutor(max_workers=grid.concurrency) as pool:
        return list(pool.map(one, prompts))


def run_groups_on_ray(
    groups: list[list[Any]],
    artefacts: Any,
    store: Any,
    cache: Path | None,
    bar: Any,
    make_simulator: SimulatorFactory,
) -> None:
    """Run the groups as Ray tasks and store each returned row as soon as its task finishes.

    ``make_simulator`` builds a simulator from its grid name in each worker (a module-level function, so that
    Ray sends it by reference).
    """
    ray = import_optional("ray", extra="ray", caller="run_grid(backend='ray')")
    if not ray.is_initialized():
        ray.init(include_dashboard=False, log_to_driver=False, configure_logging=False)
    task = ray.remote(_run_group)
    pending = [
        task.remote(artefacts.grid, artefacts.providers, artefacts.directory, group, cache, make_simulator)
        for group in groups
    ]
    try:
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for setting, result, ok, row, payload in ray.get(done[0]):
                if ok:
                    store.add(setting.key, row, payload)
                bar.done(result, ok, setting)
    except BaseException:  # Ctrl-C or a failed write: no group starts after it, the running ones are stopped
        for ref in pending:
            with contextlib.suppress(Exception):  # a task that already ended cannot be cancelled
                ray.cancel(ref)
        raise
