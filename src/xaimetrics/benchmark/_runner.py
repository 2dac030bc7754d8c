"""Run a :class:`~xaimetrics.benchmark.Grid`: build every prompt once, ask the simulators concurrently, store
every finished setting durably, resume after a crash.

The work is cut into *groups* (dataset × model × method × k × seed × simulator): a group's prompts share one
concept fit, one interpretation and one LP/EP selection. The main thread builds the prompts group after
group (artefacts come from :class:`Artefacts`, computed once) and hands each prompt to a pool of
``grid.concurrency`` threads (the one concurrency model of simulator calls: the Ray backend's tasks and
``generate_batch`` use threads bounded the same way) that call the simulator, score the answer (eq. 5) and write
the row to the :class:`~xaimetrics.benchmark.ResultsStore` in its own transaction — so prompt building overlaps
the calls, and a ``kill -9`` loses at most the calls in flight. A simulator with a ``register(setting, prompt)`` method
is told each setting before its prompt is sent (oracles and replays use it). Settings whose key is already stored are skipped; a
group with nothing left to do costs nothing. A call that fails for good (after the simulator's retries) is
*not* stored: it is counted in :attr:`RunSummary.failed` and retried by the next run.

With candidate numbers of concepts, a validation phase runs first on ``grid.validation_seeds`` and the
number with the best mean score per dataset × model × method is kept (ties: the smallest), as in §5.1.
"""

from __future__ import annotations

import concurrent.futures
import logging
import queue
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from xaimetrics._class_names import check_class_names
from xaimetrics._usage import UsageView
from xaimetrics._validation import invalid
from xaimetrics.benchmark._artefacts import Artefacts, Providers
from xaimetrics.benchmark._concept_phase import ConceptCounts
from xaimetrics.benchmark._grid import ArtefactConfig, Grid, Setting
from xaimetrics.benchmark._group import (
    ask,
    build_group_prompts,
    group_prompts,
    group_settings,
    register_prompts,
    setting_row,
)
from xaimetrics.benchmark._lock import StoreLock
from xaimetrics.benchmark._store import ResultsStore
from xaimetrics.consim import ConSimPrompt, ConSimResult
from xaimetrics.exceptions import StoreError
from xaimetrics.simulators import Simulator, Usage, make_simulator

if TYPE_CHECKING:
    import pandas as pd

    from xaimetrics.benchmark._batch import Calls

__all__ = ["RunInterrupted", "RunSummary", "build_group_prompts", "run_grid", "setting_row"]

_LOG = logging.getLogger("xaimetrics.benchmark")


@dataclass
class RunSummary(UsageView):
    """What a run did: settings in the grid, already stored, run now, failed (``failed_fits`` of them because
    their concept extractor could not be fitted: no call was made; ``fit_errors`` has one message per failed
    fit); the simulators' :class:`Usage`
    (summed over the results, also read as ``calls``, ``cached_calls``, ``prompt_tokens``, ``completion_tokens``,
    ``total_tokens`` and ``cost_usd``); wall time; stored rows ``superseded`` by this run (computed from other
    inputs) and ``notes`` for the user (what changed, classes matched by name)."""

    total: int = 0
    skipped: int = 0
    completed: int = 0
    failed: int = 0
    failed_fits: int = 0
    fit_errors: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    wall_time_s: float = 0.0
    chosen_n_concepts: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    superseded: int = 0
    notes: list[str] = field(default_factory=list)
    concepts: ConceptCounts = field(default_factory=ConceptCounts)
    batch_answered: int = 0
    batch_retried_live: int = 0
    batch_saved_usd: float = 0.0

    def as_dict(self) -> dict[str, object]:
        return {
            "total": self.total, "skipped": self.skipped, "completed": self.completed, "failed": self.failed,
            "failed_fits": self.failed_fits, "fit_errors": list(self.fit_errors),
            "calls": self.calls, "cached_calls": self.cached_calls, "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens, "total_tokens": self.total_tokens,
            "cached_prompt_tokens": self.cached_prompt_tokens, "cost_usd": self.cost_usd, "wall_time_s": self.wall_time_s,
            "chosen_n_concepts": dict(self.chosen_n_concepts), "errors": list(self.errors[:20]),
            "superseded": self.superseded, "notes": list(self.notes), "concepts": self.concepts.as_dict(),
            "batch_answered": self.batch_answered, "batch_retried_live": self.batch_retried_live,
            "batch_saved_usd": self.batch_saved_usd,
        }  # fmt: skip


def grid_simulator(
    name: str, config: ArtefactConfig, providers: Providers, cache_path: Path | None
) -> Simulator:
    """The simulator a grid name stands for: :func:`~xaimetrics.simulators.make_simulator` with the grid's
    server, ``concurrency`` and the names ``providers`` add, checked against the grid's scoring (``config``:
    :meth:`Grid.artefact_config`; a module-level function, so that the Ray backend sends it to its workers by
    reference)."""
    from xaimetrics.consim._scoring import check_scoring

    simulator = make_simulator(
        name, base_url=config.base_url, concurrency=config.concurrency, call_timeout=config.call_timeout,
        cache=cache_path, provided=providers.simulators, owner="run_grid", argument="simulators",
    )  # fmt: skip
    check_scoring(config.scoring, simulator, "run_grid")
    return simulator


class _Progress:
    """A progress bar (tqdm on stderr) with ETA and running token / cost totals; silent when disabled."""

    def __init__(self, total: int, enabled: bool, summary: RunSummary) -> None:
        self.summary = summary
        self._lock = threading.Lock()
        self.bar = None
        if enabled and total:
            from tqdm.auto import tqdm

            self.bar = tqdm(
                total=total, unit="setting", desc="ConSim grid", file=sys.stderr, dynamic_ncols=True
            )

    def done(self, result: ConSimResult, ok: bool, setting: Setting) -> None:
        with self._lock:
            s = self.summary
            s.usage += result.usage
            if ok:
                s.completed += 1
            else:
                s.failed += 1
                s.errors.append(f"{setting.label} {setting.method} seed {setting.seed}: {result.error}")
                _LOG.info("setting failed, not stored (the next run asks it again): %s", s.errors[-1])
            if self.bar is not None:
                self.bar.set_postfix_str(
                    f"tokens={s.total_tokens:,} prompt-cached={s.cached_prompt_tokens:,} cost=${s.cost_usd:.4f} "
                    f"cached={s.cached_calls} failed={s.failed}",
                    refresh=False,
                )
                self.bar.update(1)

    def fit_failed(self, settings: list[Setting], message: str) -> None:
        """The settings of a group whose concept fit failed: failed, not stored, the extractor's message kept."""
        with self._lock:
            s = self.summary
            s.failed += len(settings)
            s.failed_fits += len(settings)
            s.fit_errors.append(message)
            s.errors.append(f"{len(settings)} settings not run: {message}")
            _LOG.warning("%s", s.errors[-1])
            if self.bar is not None:
                self.bar.update(len(settings))

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _groups(settings: list[Setting]) -> Iterator[list[Setting]]:
    yield from group_settings(settings)


def run_grid(
    grid: Grid,
    store: ResultsStore | str | Path,
    *,
    providers: Providers | None = None,
    artefact_dir: str | Path | None = None,
    response_cache: str | Path | None = None,
    backend: str = "local",
    progress: bool = True,
    on_result: Callable[[Setting, ConSimResult], None] | None = None,
    artefacts: Artefacts | None = None,
    wait: bool = False,
    calls: Calls = "live",
    batch_poll_s: float = 30.0,
) -> RunSummary:
    """Run every setting of ``grid`` not yet in ``store``; return what was done.

    Args:
        grid: the :class:`~xaimetrics.benchmark.Grid`.
        store: a :class:`~xaimetrics.benchmark.ResultsStore` or its SQLite path.
        providers: extra dataset / model / simulator names (:class:`Providers`).
        artefact_dir: where activations, fits and word activations are saved (``None``: memory only).
        response_cache: SQLite file of the simulators' response cache (``None``: no cache).
        backend: ``"local"`` (threads) or ``"ray"`` (the groups run as Ray tasks; needs the ``ray`` extra).
        progress: show a progress bar with ETA and running token / cost totals.
        on_result: called with each finished ``(setting, ConSimResult)`` (local backend).
        artefacts: an :class:`Artefacts` to share with the caller (default: a new one on ``artefact_dir``).
        wait: when another process runs on the same store, wait for it to finish instead of raising.
        calls: ``"live"`` (one request per setting), ``"batch"`` (the pending settings as Batch API jobs of
            their OpenAI-compatible servers, 50 % cheaper, results within 24 h; resumable, see
            :mod:`xaimetrics.benchmark._batch`), or ``"cancel"`` (cancel the batches a batch run left running,
            store what they finished, ask nothing else).
        batch_poll_s: seconds between two looks at a running batch.

    Returns:
        A :class:`RunSummary`.

    Raises:
        StoreError: another run holds the store (its lock file ``<store>.lock`` says which), the store cannot be
            used, or a row could not be written (the run stops before another call; the message names the cause).
        RunInterrupted: Ctrl-C (a :class:`KeyboardInterrupt`): no call started after it.
    """
    started = time.perf_counter()
    changed: list[str] = []
    providers = providers or Providers()
    if backend not in ("local", "ray"):
        raise invalid("backend", "run_grid", "'local' or 'ray'", backend)
    if calls not in ("live", "batch", "cancel"):
        raise invalid("calls", "run_grid", "'live', 'batch' or 'cancel'", calls)
    if calls != "live" and backend != "local":
        raise invalid("backend", "run_grid", "'local' with batch calls", backend, "Drop --backend ray.")
    if isinstance(batch_poll_s, bool) or not isinstance(batch_poll_s, int | float) or batch_poll_s <= 0:
        raise invalid("batch_poll_s", "run_grid", "a number of seconds > 0", batch_poll_s)
    owned = not isinstance(store, ResultsStore)
    lock = StoreLock(store.path if isinstance(store, ResultsStore) else Path(store), wait=wait)
    try:
        results = store if isinstance(store, ResultsStore) else ResultsStore(store)
    except BaseException:
        lock.release()
        raise
    summary = RunSummary()
    try:
        results.set_meta("grid", grid.to_dict())
        if artefacts is None:
            artefacts = Artefacts(grid.artefact_config(), providers, artefact_dir)
        _preflight(grid, artefacts)
        changed = _record_inputs(grid, artefacts, results)
        cache = None if response_cache is None else Path(response_cache)
        chosen: dict[tuple[str, str, str], int] = {}
        phases = ("validation", "evaluation") if grid.needs_validation else ("evaluation",)
        for phase in phases:
            settings = artefacts.fingerprinted(grid.settings(phase=phase, chosen=chosen))
            summary.superseded += _supersede(results, settings)
            _run_phase(
                settings,
                artefacts,
                results,
                cache,
                backend,
                progress,
                summary,
                on_result,
                (calls, batch_poll_s),
            )
            if phase == "validation":
                chosen = choose_n_concepts(results.to_frame(), grid)
                summary.chosen_n_concepts = {"/".join(k): v for k, v in chosen.items()}
                results.set_meta("chosen_n_concepts", summary.chosen_n_concepts)
        if grid.detection:
            summary.superseded += _run_concepts(grid, artefacts, results.path, cache, chosen, summary)
    finally:
        if artefacts is not None:
            summary.notes = _notes(artefacts, changed, summary.superseded)
        summary.wall_time_s = time.perf_counter() - started
        if owned:
            results.close()
        lock.release()
    return summary


def _run_concepts(
    grid: Grid,
    artefacts: Artefacts,
    path: Path,
    cache: Path | None,
    chosen: dict[tuple[str, str, str], int],
    summary: RunSummary,
) -> int:
    """The per-concept phase (``grid.detection``) into the same store file's ``concept_results`` table, under
    this run's lock; Ctrl-C stops it at once (:class:`RunInterrupted`): the concepts stored stay, the one in
    flight is asked again by the next run."""
    from xaimetrics.benchmark._concept_phase import fingerprint_concepts, run_concept_phase
    from xaimetrics.benchmark._concept_row import ConceptRow

    settings = fingerprint_concepts(artefacts, grid.concept_settings(chosen))
    with ResultsStore(path, row_type=ConceptRow) as concepts:
        try:
            return run_concept_phase(
                artefacts, concepts, settings, lambda name: grid_simulator(name, artefacts.config, artefacts.providers, cache),
                summary.concepts, summary.errors,
            )  # fmt: skip
        except KeyboardInterrupt:
            stop_local_workers()
            raise RunInterrupted(summary, summary.skipped + summary.completed, False) from None


def _preflight(grid: Grid, artefacts: Artefacts) -> None:
    """What can only be checked on loaded data, before the first call: every dataset loads, its class names
    survive the ``Sample_<id>: <class>`` answer format, and every model has the data's classes (matched by name:
    another order is mapped, another set refused)."""
    for dataset in grid.datasets:
        fit, pool = artefacts.data(dataset)
        for texts in (fit, pool):
            check_class_names(list(texts.class_names), f"{dataset}.class_names", "run_grid")
    for dataset in grid.datasets:
        for model in grid.models:
            artefacts.aligned_data(dataset, model)


#: the meta entry of the inputs recorded by the last run (:func:`_record_inputs`)
INPUTS_META = "inputs"
#: grid fields whose value is recorded to say what changed between two runs into one folder
_RECORDED_FIELDS = (
    "n_lp", "n_ep", "n_fit", "pool_size", "max_sample_chars", "prompt_layout", "balance", "base_url", "text_column", "label_column",
    "encoding", "drop_empty_rows",
)  # fmt: skip


def _record_inputs(grid: Grid, artefacts: Artefacts, store: ResultsStore) -> list[str]:
    """Record what this run's rows are computed from (digests and options, never credentials) and return the
    names of those that differ from the last run's record (for the message; the keys decide what is reused)."""
    from xaimetrics.benchmark._inputs import changed_inputs

    shown = grid.to_dict()  # base_url without credentials
    now: dict[str, object] = {name: shown.get(name) for name in _RECORDED_FIELDS}
    for method in (*grid.concept_methods, *grid.control_methods):
        now[f"extractor_options of {method}"] = grid.options(method)
        now[f"n_concepts of {method}"] = list(grid.candidates(method))
    for dataset in grid.datasets:
        now[f"the content of {dataset!r}"] = artefacts.data_digests(dataset)
        for model in grid.models:
            on = f" on {dataset!r}" if len(grid.datasets) > 1 else ""
            now[f"the model {model!r}{on} (weights, config or classes)"] = artefacts.model_id(dataset, model)
    for simulator in grid.simulators:
        now[f"the simulator {simulator!r} (server, model or sampling)"] = artefacts.simulator_identity(
            simulator
        )
    before = store.get_meta(INPUTS_META, {})
    before = before if isinstance(before, dict) else {}
    store.set_meta(INPUTS_META, {**before, **now})
    return changed_inputs(before, now)


def _supersede(store: ResultsStore, settings: list[Setting]) -> int:
    """Mark superseded the stored rows of ``settings`` computed from other inputs (same identity, other key),
    and no longer superseded those computed from exactly these; return how many were newly superseded."""
    from xaimetrics.benchmark._inputs import setting_identity

    current = {setting_identity(s.params()): s.key for s in settings}

    def expected_key(row: Mapping[str, object]) -> str | None:
        try:
            return current.get(setting_identity(row))
        except (KeyError, TypeError, ValueError):  # not a grid row (a study's rows may lack columns)
            return None

    return store.supersede(expected_key)


def _notes(artefacts: Artefacts, changed: list[str], superseded: int) -> list[str]:
    notes = list(artefacts.notes)
    if superseded:
        what = (
            ", ".join(changed)
            if changed
            else "a store written by an earlier version, which did not record them"
        )
        notes.append(
            f"{superseded} stored rows were computed from other inputs ({what}): their settings are computed "
            "again and the old rows are no longer reported (they stay in the store, and a run with the old inputs "
            "reuses them). Use a new --output folder to keep both runs apart."
        )
        _LOG.warning("%s", notes[-1])
    return notes


def _run_phase(
    settings: list[Setting],
    artefacts: Artefacts,
    store: ResultsStore,
    cache: Path | None,
    backend: str,
    progress: bool,
    summary: RunSummary,
    on_result: Callable[[Setting, ConSimResult], None] | None,
    batch: tuple[Calls, float] = ("live", 30.0),
) -> None:
    done = store.keys()
    pending = [s for s in settings if s.key not in done]
    summary.total += len(settings)
    summary.skipped += len(settings) - len(pending)
    if len(pending) < len(settings):
        _LOG.info(
            "%d of %d %s settings already stored: skipped", len(settings) - len(pending), len(settings),
            settings[0].phase,
        )  # fmt: skip
    if not pending:
        return
    bar = _Progress(len(pending), progress, summary)
    try:
        if backend == "ray":
            from xaimetrics.benchmark._ray import RayInterrupted, run_groups_on_ray

            try:
                run_groups_on_ray(list(_groups(pending)), artefacts, store, cache, bar, grid_simulator)
            except RayInterrupted as stopped:  # what was stored, as after a local run's Ctrl-C
                try:
                    stored = len(store)
                except StoreError:
                    stored = summary.skipped + summary.completed
                raise RunInterrupted(summary, stored, stopped.immediate) from None
        else:
            simulators = {
                name: grid_simulator(name, artefacts.config, artefacts.providers, cache)
                for name in sorted({s.simulator for s in pending})
            }
            if batch[0] != "live":
                pending = _run_batches(pending, artefacts, store, simulators, bar, batch)
            if pending:
                _run_local(pending, artefacts, store, simulators, bar, on_result)
    finally:
        bar.close()


def _run_batches(
    pending: list[Setting],
    artefacts: Artefacts,
    store: ResultsStore,
    simulators: dict[str, Simulator],
    bar: _Progress,
    batch: tuple[Calls, float],
) -> list[Setting]:
    """The batch part of a run (:func:`~xaimetrics.benchmark._batch.run_batches`); the settings left to ask
    live. Ctrl-C while a batch runs leaves it running at the provider: the next run waits for it again."""
    from xaimetrics.benchmark._batch import run_batches

    summary = bar.summary
    try:
        left, tally = run_batches(pending, artefacts, store, simulators, bar, batch[0], batch[1])
    except KeyboardInterrupt:
        _LOG.warning("Ctrl-C: the submitted batches keep running at the provider; a rerun collects them")
        try:
            stored = len(store)
        except StoreError:
            stored = summary.skipped + summary.completed
        raise RunInterrupted(summary, stored, False) from None
    summary.batch_answered += tally.answered
    summary.batch_retried_live += tally.retried_live
    summary.batch_saved_usd += tally.saved_usd
    return left


def stop_local_workers() -> int:
    """Kill the local models' worker processes of this process, if any were started (their calls fail, and
    are rerun by the next run); the number killed."""
    worker = sys.modules.get("xaimetrics.simulators._worker")  # never imported: no local model ran
    return 0 if worker is None else int(worker.stop_workers())


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped :func:`run_grid`: no call started after it; ``summary`` says what was stored.

    A :class:`KeyboardInterrupt`, so that code that does not know it stops as on any Ctrl-C. After the first
    interrupt the calls already in flight finish and are stored (``immediate`` is ``False``); a second one
    stops at once (``immediate``: the calls still in flight are abandoned, and rerun by the next run).
    """

    def __init__(self, summary: RunSummary, stored: int, immediate: bool) -> None:
        super().__init__(f"{stored} settings stored" + (" (stopped at once)" if immediate else ""))
        self.summary = summary
        self.stored = stored
        self.immediate = immediate


class _Stop:
    """Why a run stops before its end: Ctrl-C, or a failed write. Workers check it before each call."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.error: BaseException | None = None

    def set(self, error: BaseException | None = None) -> None:
        if error is not None and self.error is None:
            self.error = error
        self.event.set()

    def __bool__(self) -> bool:
        return self.event.is_set()


def _run_local(
    pending: list[Setting],
    artefacts: Artefacts,
    store: ResultsStore,
    simulators: dict[str, Simulator],
    bar: _Progress,
    on_result: Callable[[Setting, ConSimResult], None] | None,
) -> None:
    """Ask every pending setting; stop starting calls at the first Ctrl-C or failed write.

    On a ``KeyboardInterrupt`` in the main thread (prompt building or waiting), the queued calls are cancelled,
    local models' worker processes are killed (their answers cost nothing and are rerun; a hung worker would
    never finish), the other calls in flight finish and are stored, then :class:`RunInterrupted` is raised; a second one while
    waiting raises it at once. A write that fails stops the run the same way and is raised after the calls in
    flight (whose rows may be lost with it: they are rerun by the next run).
    """
    concurrency = artefacts.config.concurrency
    stop = _Stop()

    # One writer thread stores the rows in order of completion, so that a worker starts its next call while
    # the previous row is fsynced (synchronous=FULL): the calls never wait for the disk.
    # At most ``concurrency`` answers are unwritten at any time (in flight or waiting for the writer): a call
    # starts only when the writer has caught up, so a failed write can lose no more than that many answers.
    finished: queue.Queue[tuple[Setting, ConSimResult, bool] | None] = queue.Queue()
    unwritten = threading.BoundedSemaphore(concurrency)
    failures: list[BaseException] = []

    def write() -> None:
        while (item := finished.get()) is not None:
            setting, result, ok = item
            try:
                if ok:
                    row, payload = setting_row(setting, result)
                    store.add(setting.key, row, payload)
                bar.done(result, ok, setting)
                if on_result is not None:
                    on_result(setting, result)
            except BaseException as error:  # surfaced by the main thread; no call starts after it
                failures.append(error)
                stop.set(error)
            finally:
                unwritten.release()

    def work(setting: Setting, prompt: ConSimPrompt) -> None:
        while not unwritten.acquire(timeout=0.05):
            if stop:
                return
        if stop:  # queued before the stop: never started
            unwritten.release()
            return
        try:
            result, ok = ask(simulators[setting.simulator], setting, prompt)
        except BaseException:
            unwritten.release()
            raise
        finished.put((setting, result, ok))

    writer = threading.Thread(target=write, name="xaimetrics-results-writer", daemon=True)
    writer.start()
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=concurrency)
    futures: list[concurrent.futures.Future[None]] = []
    immediate = False
    try:
        try:
            for group in _groups(pending):
                if stop:
                    break
                prompts, failure = group_prompts(artefacts, group, simulators)
                if failure is not None:
                    bar.fit_failed(group, failure)
                    continue
                register_prompts(simulators, prompts)
                futures.extend(pool.submit(work, setting, prompt) for setting, prompt in prompts)
            _wait(futures, stop)
        except BaseException as error:  # Ctrl-C, or a failure while building prompts (e.g. a full disk)
            stop.set(None if isinstance(error, KeyboardInterrupt) else error)
            pool.shutdown(wait=False, cancel_futures=True)
            if isinstance(error, KeyboardInterrupt):
                # a local model's call in flight costs nothing to redo and may hang (a stopped worker): end it
                stop_local_workers()
            try:
                _wait(futures, None)  # the calls in flight finish and are stored
            except KeyboardInterrupt:  # Ctrl-C (again): stop at once
                immediate = True
                raise
            raise
    except KeyboardInterrupt:
        if not immediate:
            finished.put(None)
            writer.join()
        try:
            stored = len(store)
        except StoreError:
            stored = bar.summary.skipped + bar.summary.completed
        raise RunInterrupted(bar.summary, stored, immediate) from None
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
        if not immediate:
            finished.put(None)
            writer.join()
    if failures:
        raise failures[0]


def _wait(futures: list[concurrent.futures.Future[None]], stop: _Stop | None) -> None:
    """Wait for ``futures`` (in short slices, so that Ctrl-C is seen at once); when ``stop`` is set, cancel the
    ones not started and wait only for the calls in flight. A cancelled future counts as done (one cancelled by
    ``shutdown(cancel_futures=True)`` never reaches ``concurrent.futures.wait``'s notion of done)."""
    remaining = {future for future in futures if not future.cancelled()}
    while remaining:
        done, remaining = concurrent.futures.wait(remaining, timeout=0.1)
        for future in done:
            if not future.cancelled():
                future.result()
        if stop:
            for future in remaining:
                future.cancel()
            stop = None  # then wait for the ones already running
        remaining = {future for future in remaining if not future.cancelled()}


def choose_n_concepts(frame: pd.DataFrame, grid: Grid) -> dict[tuple[str, str, str], int]:
    """Per dataset × model × method with candidates: the number of concepts with the best mean validation
    score (over seeds, prompt types, interpretations and simulators); ties go to the smallest.

    Example:
        >>> import pandas as pd
        >>> g = Grid(methods=("PCA",), n_concepts={"PCA": [3, 5]}, prompt_types=("E2",), simulators=("perfect",))
        >>> rows = pd.DataFrame({"dataset": "rotten_tomatoes", "model": "minilm+", "method": "PCA",
        ...     "n_concepts": [3, 5, 3, 5], "score": [0.6, 0.7, 0.6, 0.9], "phase": "validation",
        ...     "is_upper_bound": 0})
        >>> choose_n_concepts(rows, g)
        {('rotten_tomatoes', 'minilm+', 'PCA'): 5}
    """
    chosen: dict[tuple[str, str, str], int] = {}
    if len(frame) == 0:
        return chosen
    rows = frame[(frame["phase"] == "validation") & (frame["is_upper_bound"] == 0)]
    for dataset in grid.datasets:
        for model in grid.models:
            for method in grid.concept_methods:
                candidates = grid.candidates(method)
                if len(candidates) < 2:
                    continue
                subset = rows[
                    (rows["dataset"] == dataset) & (rows["model"] == model) & (rows["method"] == method)
                ]
                means = subset.groupby("n_concepts")["score"].mean()
                scored = [(float(means.get(k, float("-inf"))), -k) for k in candidates]
                best = max(scored)
                chosen[(dataset, model, method)] = -best[1]
    return chosen
