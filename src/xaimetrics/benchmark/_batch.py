"""Run a grid's pending settings as OpenAI-compatible Batch API jobs (Files + Batches endpoints, 50 % cheaper).

The prompts go through the same pipeline as live calls, twice: once to *record* each request body the simulator
would send (a response-cache hit is answered there and stored like a live row), once, after the batch ended, to
*answer* each call from the batch's output line (:meth:`OpenAICompatibleSimulator.response_from_body`: the live
parser, scoring, response cache and row). The ``openai`` client speaks to the endpoints (its retries); this
module adds only the journal, which no client keeps.

**The journal** (store meta ``batch_jobs``, written in its own transaction before the next step): a job is
recorded with a fresh ``job`` id and its settings' keys *before* its file is uploaded; the batch is created with
``metadata={"xaimetrics_job": job}``; its id is recorded the moment it is returned. A process killed between the
creation and the record leaves a job without a batch id: the next run lists the provider's batches and adopts
the one carrying its job id, so a paid request is never sent twice. A job without a batch on the provider is
dropped (its upload cost nothing) and its settings are batched again.

**Outcomes.** Ctrl-C while waiting leaves the batch running (a rerun waits for it again, no new upload);
``calls="cancel"`` cancels the recorded batches, stores what they finished and asks nothing else. Requests that
failed or expired inside a batch (never billed) are asked live after it; so are all of a batch that failed
validation. Input files are split at the provider's limits (:data:`MAX_REQUESTS`, :data:`MAX_FILE_BYTES`).
"""

from __future__ import annotations

import io
import json
import logging
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol

from xaimetrics._validation import invalid
from xaimetrics.benchmark._grid import Setting
from xaimetrics.benchmark._group import (
    ask,
    build_group_prompts,
    group_settings,
    register_prompts,
    setting_row,
)
from xaimetrics.consim import ConSimPrompt, ConSimResult
from xaimetrics.exceptions import SimulatorError
from xaimetrics.simulators import (
    AnswerSchema,
    ChatMessage,
    OpenAICompatibleSimulator,
    Simulator,
    SimulatorResponse,
)

if TYPE_CHECKING:
    from xaimetrics.benchmark._artefacts import Artefacts
    from xaimetrics.benchmark._store import ResultsStore

__all__ = ["BATCH_PRICE_FACTOR", "MAX_FILE_BYTES", "MAX_REQUESTS", "split_requests"]

_LOG = logging.getLogger("xaimetrics.benchmark")
_OWNER = "run_grid"

#: what a batch request costs relative to a live one (OpenAI and Anthropic batches: 50 % off)
BATCH_PRICE_FACTOR = 0.5
#: the provider's limits on one input file (OpenAI: 50,000 requests, 200 MB)
MAX_REQUESTS = 50_000
MAX_FILE_BYTES = 200 * 1024 * 1024
#: the store meta entry holding the journal of batch jobs
JOBS_META = "batch_jobs"
#: batch states after which nothing more happens
_ENDED = ("completed", "failed", "expired", "cancelled")
_ENDPOINT: Final = "/v1/chat/completions"

Calls = Literal["live", "batch", "cancel"]


class _Progress(Protocol):
    """The runner's progress bar: told of each finished setting."""

    def done(self, result: ConSimResult, ok: bool, setting: Setting) -> None: ...


def split_requests(
    lines: Iterable[bytes], max_requests: int = MAX_REQUESTS, max_bytes: int = MAX_FILE_BYTES
) -> list[list[int]]:
    """Cut JSONL lines (each with its newline) into files within the provider's limits; the line indices of
    each file, in order.

    Example:
        >>> split_requests([b"a" * 40, b"b" * 40, b"c" * 40, b"d"], max_requests=3, max_bytes=100)
        [[0, 1], [2, 3]]
    """
    parts: list[list[int]] = []
    size = 0
    for index, line in enumerate(lines):
        if len(line) > max_bytes:
            raise invalid(
                "grid", _OWNER, f"batch requests of at most {max_bytes:,} bytes", f"one of {len(line):,} bytes",
                "Shorten the prompts (max_sample_chars) or run this grid live.",
            )  # fmt: skip
        if not parts or len(parts[-1]) >= max_requests or size + len(line) > max_bytes:
            parts.append([])
            size = 0
        parts[-1].append(index)
        size += len(line)
    return parts


@dataclass
class BatchTally:
    """What the batches of one run did: requests answered from a batch, asked live after a batch, and the
    dollars the batch discount saved."""

    answered: int = 0
    retried_live: int = 0
    saved_usd: float = 0.0
    batches: list[str] = field(default_factory=list)


class _Answers:
    """The hook an :class:`OpenAICompatibleSimulator` consults (its ``batch_answers``): records request bodies
    (``recording``), or answers from a batch's output lines, for the setting being asked (``key``)."""

    def __init__(self) -> None:
        self.recording = False
        self.key = ""
        self.bodies: dict[str, dict[str, Any]] = {}
        self.results: dict[str, tuple[str, object]] = {}  # key -> (batch id, completion body)
        self.tally = BatchTally()

    def answer(
        self,
        simulator: OpenAICompatibleSimulator,
        messages: tuple[ChatMessage, ...],
        answer_schema: AnswerSchema | None,
    ) -> SimulatorResponse | None:
        if self.recording:
            if self.key in self.bodies:
                raise invalid(
                    "calls", _OWNER, "one simulator call per setting", "a setting making several",
                    "Run this grid live.",
                )  # fmt: skip
            self.bodies[self.key] = simulator.request_body(messages, answer_schema)
            return SimulatorResponse("", model=simulator.model, error="recorded for a batch", attempts=0)
        found = self.results.pop(self.key, None)
        if found is None:
            return None
        batch_id, body = found
        response = simulator.response_from_body(
            body, answer_schema, price_factor=BATCH_PRICE_FACTOR, metadata={"batch_id": batch_id}
        )
        self.tally.answered += 1
        if BATCH_PRICE_FACTOR < 1:
            self.tally.saved_usd += response.cost_usd * (1 / BATCH_PRICE_FACTOR - 1)
        return response


def batch_simulator(simulator: Simulator, name: str) -> OpenAICompatibleSimulator:
    """The :class:`OpenAICompatibleSimulator` inside ``simulator`` (under a response cache), or an error."""
    inner: object = simulator
    while not isinstance(inner, OpenAICompatibleSimulator) and hasattr(inner, "inner"):
        inner = inner.inner
    if not isinstance(inner, OpenAICompatibleSimulator):
        raise invalid(
            "simulators", _OWNER, "OpenAI-compatible simulators for a batch run", f"{name!r}",
            "Batch jobs go to an OpenAI-compatible server's /v1/batches: run the other simulators live.",
        )  # fmt: skip
    return inner


def run_batches(
    pending: list[Setting],
    artefacts: Artefacts,
    store: ResultsStore,
    simulators: Mapping[str, Simulator],
    bar: _Progress,
    calls: Calls,
    poll_s: float,
) -> tuple[list[Setting], BatchTally]:
    """Answer ``pending`` from batch jobs (submitting the ones no job holds, unless ``calls="cancel"``); return
    the settings left for live calls (failed or expired inside a batch; none after a cancel) and the tally."""
    hooks = _Answers()
    sims = {name: batch_simulator(sim, name) for name, sim in simulators.items()}
    for sim in sims.values():
        sim.batch_answers = hooks
    try:
        return _run_batches(pending, artefacts, store, simulators, sims, bar, calls, poll_s, hooks)
    except Exception as error:
        first = next(iter(sims.values()), None)
        if first is None or not isinstance(error, first._openai.APIError):
            raise
        raise SimulatorError(
            f"The Batch API of {first.name} failed: {first._describe(error)}. The submitted batches are recorded in "
            "the store: the same command again resumes them (--cancel cancels them)."
        ) from None
    finally:
        for sim in sims.values():
            sim.batch_answers = None


def _run_batches(
    pending: list[Setting],
    artefacts: Artefacts,
    store: ResultsStore,
    simulators: Mapping[str, Simulator],
    sims: Mapping[str, OpenAICompatibleSimulator],
    bar: _Progress,
    calls: Calls,
    poll_s: float,
    hooks: _Answers,
) -> tuple[list[Setting], BatchTally]:
    """:func:`run_batches` without its error translation."""
    prompts = _record(pending, artefacts, store, simulators, bar, hooks)
    jobs = _Journal(store)
    _adopt_or_drop(jobs, sims)
    if calls == "batch":
        held = {key for job in jobs.active() for key in job["keys"]}
        fresh = [key for key in hooks.bodies if key not in held]
        _submit(jobs, fresh, hooks.bodies, prompts, sims)
    ended = _wait(jobs, sims, poll_s, cancel=calls == "cancel")
    for job in ended:
        for key, body in _results(job, sims[job["simulator"]]).items():
            hooks.results[key] = (str(job["batch_id"]), body)
    left: list[Setting] = []
    hooks.recording = False
    for key, (setting, prompt) in prompts.items():
        if key not in hooks.bodies:
            continue  # answered from the response cache while recording
        if key not in hooks.results:
            if any(key in job["keys"] for job in ended) and calls != "cancel":
                left.append(setting)  # failed or expired inside its batch: never billed, asked live
            continue
        hooks.key = key
        result, ok = ask(simulators[setting.simulator], setting, prompt)
        if ok:
            row, payload = setting_row(setting, result)
            store.add(setting.key, row, payload)
        bar.done(result, ok, setting)
    for job in ended:
        jobs.update(job["job"], state="cancelled" if job.get("status") == "cancelled" else "collected")
    hooks.tally.retried_live = len(left)
    hooks.tally.batches = [str(job["batch_id"]) for job in ended]
    return left, hooks.tally


def _record(
    pending: list[Setting],
    artefacts: Artefacts,
    store: ResultsStore,
    simulators: Mapping[str, Simulator],
    bar: _Progress,
    hooks: _Answers,
) -> dict[str, tuple[Setting, ConSimPrompt]]:
    """Every pending prompt through the live pipeline with the simulators recording instead of calling: a
    response-cache hit is stored as a row at once; the others leave their request body in ``hooks.bodies``."""
    prompts: dict[str, tuple[Setting, ConSimPrompt]] = {}
    hooks.recording = True
    for group in group_settings(pending):
        built = build_group_prompts(artefacts, group, simulators)
        register_prompts(simulators, built)
        for setting, prompt in built:
            prompts[setting.key] = (setting, prompt)
            hooks.key = setting.key
            result, ok = ask(simulators[setting.simulator], setting, prompt)
            if ok:  # a response-cache hit
                row, payload = setting_row(setting, result)
                store.add(setting.key, row, payload)
                bar.done(result, ok, setting)
    return prompts


class _Journal:
    """The batch jobs recorded in the store, each write its own committed transaction."""

    def __init__(self, store: ResultsStore) -> None:
        self.store = store

    def jobs(self) -> dict[str, dict[str, Any]]:
        found = self.store.get_meta(JOBS_META, {})
        return found if isinstance(found, dict) else {}

    def active(self) -> list[dict[str, Any]]:
        return [job for job in self.jobs().values() if job.get("state") in ("recorded", "submitted")]

    def add(self, job: dict[str, Any]) -> None:
        self.store.set_meta(JOBS_META, {**self.jobs(), job["job"]: job})

    def update(self, name: str, **changes: object) -> dict[str, Any]:
        jobs = self.jobs()
        jobs[name] = {**jobs[name], **changes}
        self.store.set_meta(JOBS_META, jobs)
        return jobs[name]

    def drop(self, name: str) -> None:
        jobs = self.jobs()
        jobs.pop(name, None)
        self.store.set_meta(JOBS_META, jobs)


def _adopt_or_drop(jobs: _Journal, sims: Mapping[str, OpenAICompatibleSimulator]) -> None:
    """A job recorded without a batch id (the process died around the creation): adopt the provider's batch that
    carries its job id, or drop the job (nothing was created, so nothing was paid)."""
    for job in jobs.active():
        if job.get("batch_id") or job["simulator"] not in sims:
            continue
        client = sims[job["simulator"]]._sync_client()
        found = next(
            (
                b
                for b in client.batches.list(limit=100)
                if (b.metadata or {}).get("xaimetrics_job") == job["job"]
            ),
            None,
        )
        if found is None:
            _LOG.info(
                "batch job %s was never created at the provider: its settings are batched again", job["job"]
            )
            jobs.drop(job["job"])
        else:
            _LOG.info("batch job %s: adopted the provider's batch %s", job["job"], found.id)
            jobs.update(job["job"], state="submitted", batch_id=found.id)


def _submit(
    jobs: _Journal,
    keys: list[str],
    bodies: Mapping[str, dict[str, Any]],
    prompts: Mapping[str, tuple[Setting, ConSimPrompt]],
    sims: Mapping[str, OpenAICompatibleSimulator],
) -> None:
    """Upload and create one batch per simulator and file part; each id recorded before the next step."""
    by_simulator: dict[str, list[str]] = {}
    for key in keys:
        by_simulator.setdefault(prompts[key][0].simulator, []).append(key)
    for name, of_simulator in by_simulator.items():
        lines = [
            (
                json.dumps({"custom_id": key, "method": "POST", "url": _ENDPOINT, "body": bodies[key]}) + "\n"
            ).encode()
            for key in of_simulator
        ]
        for part in split_requests(lines):
            job = uuid.uuid4().hex
            part_keys = [of_simulator[i] for i in part]
            jobs.add(
                {"job": job, "simulator": name, "keys": part_keys, "state": "recorded", "batch_id": None}
            )
            client = sims[name]._sync_client()
            upload = client.files.create(
                file=(f"xaimetrics-{job}.jsonl", io.BytesIO(b"".join(lines[i] for i in part))),
                purpose="batch",
            )
            jobs.update(job, file_id=upload.id)
            batch = client.batches.create(
                input_file_id=upload.id, endpoint=_ENDPOINT, completion_window="24h",
                metadata={"xaimetrics_job": job},
            )  # fmt: skip
            jobs.update(job, state="submitted", batch_id=batch.id)
            _LOG.info("batch %s submitted: %d requests to %s", batch.id, len(part_keys), name)


def _wait(
    jobs: _Journal, sims: Mapping[str, OpenAICompatibleSimulator], poll_s: float, *, cancel: bool
) -> list[dict[str, Any]]:
    """Poll the recorded batches until each has ended (after a cancel request when ``cancel``); the ended jobs
    with their final batch's output and error file ids. Ctrl-C leaves them running."""
    waiting = [job for job in jobs.active() if job.get("batch_id") and job["simulator"] in sims]
    if cancel:
        for job in waiting:
            client = sims[job["simulator"]]._sync_client()
            if (
                client.batches.retrieve(job["batch_id"]).status not in _ENDED
            ):  # an ended batch cannot be cancelled
                client.batches.cancel(job["batch_id"])
                _LOG.info("batch %s: cancel requested", job["batch_id"])
    ended: list[dict[str, Any]] = []
    while waiting:
        still: list[dict[str, Any]] = []
        for job in waiting:
            batch = sims[job["simulator"]]._sync_client().batches.retrieve(job["batch_id"])
            if batch.status in _ENDED:
                ended.append(
                    {**job, "status": batch.status, "output_file_id": batch.output_file_id,
                     "error_file_id": batch.error_file_id}
                )  # fmt: skip
            else:
                still.append(job)
        waiting = still
        if waiting:
            time.sleep(poll_s)
    return ended


def _results(job: Mapping[str, Any], sim: OpenAICompatibleSimulator) -> dict[str, object]:
    """The completion body of each request of ``job``'s batch that the server answered with HTTP 200."""
    found: dict[str, object] = {}
    if not job.get("output_file_id"):
        return found
    text = sim._sync_client().files.content(job["output_file_id"]).text
    keys = set(job["keys"])
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError:
            _LOG.warning("batch %s: an output line that is not JSON was skipped", job["batch_id"])
            continue
        response = item.get("response") if isinstance(item, dict) else None
        key = item.get("custom_id") if isinstance(item, dict) else None
        if key in keys and isinstance(response, dict) and response.get("status_code") == 200:
            found[str(key)] = response.get("body")
    return found
