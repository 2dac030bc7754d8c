"""``run_grid(calls="batch")`` / ``xaimetrics benchmark run --batch`` against a real local fake of the Files and
Batches endpoints: rows identical to live calls, partial failures, expiry, cancellation, Ctrl-C and a SIGKILL
between the batch's creation and its stored id — and no paid request made twice."""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import sqlite3
import time
from pathlib import Path

import pytest
from cli_runs import cli, start_run, stored_rows, write_grid
from toy_grid import PROVIDER_KWARGS, TOPICS, toy_grid

from fake_batch_api import FakeBatchServer
from xaimetrics.benchmark import Grid, Providers, ResultsStore, run_grid
from xaimetrics.benchmark._batch import BATCH_PRICE_FACTOR, JOBS_META, split_requests
from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.simulators import AnswerSchema, ChatMessage, OpenAICompatibleSimulator


def ANSWERS(messages: list[dict[str, str]]) -> str:
    """Answers each sample id of the prompt with a topic drawn from a digest of the whole prompt and the id: the
    same request gets the same answer, and scores differ between settings."""
    prompt = "\n".join(m["content"] for m in messages)
    ids = dict.fromkeys(re.findall(r"Sample_(\d+)", messages[-1]["content"]))
    topics = list(TOPICS)
    pick = [int(hashlib.sha256(f"{prompt}|{i}".encode()).hexdigest(), 16) % len(topics) for i in ids]
    return "\n".join(f"Sample_{i}: {topics[p]}" for i, p in zip(ids, pick, strict=True))


#: columns that legitimately differ between a live and a batch answer of the same request
_TIMING = {"latency_s", "wall_time_s", "created_at", "cost_usd", "attempts"}


def _grid(base_url: str, **changes: object) -> Grid:
    options: dict[str, object] = {
        "simulators": ("openai:fake-model",), "base_url": base_url, "seeds": (0, 1),
        "methods": ("PCA", "NoExplanation"), "prompt_types": ("NE2", "E2"), "concurrency": 2,
    }  # fmt: skip
    options.update(changes)
    return toy_grid(**options)


def _run(grid: Grid, folder: Path, **options: object):
    return run_grid(
        grid, folder / "results.sqlite", providers=Providers(**PROVIDER_KWARGS), artefact_dir=folder / "a",
        progress=False, batch_poll_s=0.01, **options,
    )  # fmt: skip


def _frame(folder: Path):
    with ResultsStore(folder / "results.sqlite", read_only=True) as store:
        return store.to_frame().sort_values("key").reset_index(drop=True)


def test_split_requests_respects_both_limits() -> None:
    lines = [b"x" * n for n in (60, 30, 20, 90, 10, 10, 10)]
    assert split_requests(lines, max_requests=3, max_bytes=100) == [[0, 1], [2], [3, 4], [5, 6]]
    assert split_requests([], max_requests=3) == []
    with pytest.raises(InvalidParameterError, match="batch requests of at most 100 bytes"):
        split_requests([b"y" * 101], max_bytes=100)


def test_batch_rows_are_the_live_rows(tmp_path: Path) -> None:
    with FakeBatchServer(
        ANSWERS, cache_block=0, polls=3
    ) as server:  # one server: the rows' keys hold its URL
        live = _run(_grid(server.base_url), tmp_path / "live")
        assert server.chat_request_count == 4
        server.reset_records()
        batch = _run(_grid(server.base_url), tmp_path / "batch", calls="batch")
        assert server.chat_request_count == 0  # nothing live
        assert len(server.batches) == 1 and server.paid_lines == batch.completed == live.completed == 4
        server.reset_records()  # a rerun asks nothing: every row is stored
        summary = _run(_grid(server.base_url), tmp_path / "batch", calls="batch")
        assert summary.skipped == 4 and not server.requests
    assert batch.batch_answered == 4 and batch.batch_retried_live == 0 and batch.failed == 0
    a, b = _frame(tmp_path / "live"), _frame(tmp_path / "batch")
    columns = [c for c in a.columns if c not in _TIMING]
    assert a[columns].equals(b[columns])
    assert a["score"].nunique() > 1  # the comparison is not between constant rows
    with ResultsStore(tmp_path / "batch" / "results.sqlite", read_only=True) as store:
        (job,) = store.get_meta(JOBS_META).values()
        assert job["state"] == "collected" and job["batch_id"] == "batch_1"


def test_batch_answers_fill_the_response_cache(tmp_path: Path) -> None:
    cache = tmp_path / "responses.sqlite"
    with FakeBatchServer(ANSWERS) as server:
        _run(_grid(server.base_url), tmp_path / "one", calls="batch", response_cache=cache)
        # another folder, same prompts: answered from the response cache, nothing uploaded
        summary = _run(_grid(server.base_url), tmp_path / "two", calls="batch", response_cache=cache)
        assert summary.completed == 4 and summary.cached_calls == 4
        assert len(server.batches) == 1 and server.chat_request_count == 0


def test_failed_and_expired_requests_are_asked_live_once(tmp_path: Path) -> None:
    with FakeBatchServer(ANSWERS, failing_lines={1, 3}) as server:
        summary = _run(_grid(server.base_url), tmp_path / "failed", calls="batch")
        assert summary.completed == 4 and summary.batch_answered == 2 and summary.batch_retried_live == 2
        assert server.paid_lines == 2 and server.chat_request_count == 2 and len(server.batches) == 1
    with FakeBatchServer(ANSWERS, expire_after=2) as server:
        summary = _run(_grid(server.base_url), tmp_path / "expired", calls="batch")
        assert summary.completed == 4 and summary.batch_answered == 2 and summary.batch_retried_live == 2
        assert server.paid_lines == 2 and server.chat_request_count == 2
        assert server.batches["batch_1"]["status"] == "expired"


def test_batch_discount_in_the_cost(tmp_path: Path) -> None:
    def priced() -> OpenAICompatibleSimulator:
        return OpenAICompatibleSimulator(
            "fake-model", base_url=server.base_url, api_key="sk-x", price_per_1k_tokens=(1.0, 2.0)
        )

    providers = Providers(**{**PROVIDER_KWARGS, "simulators": {"priced": priced}})
    with FakeBatchServer(ANSWERS, cache_block=0) as server:
        grid = Grid(
            datasets=("toy",), models=("toy",), methods=("PCA", "NoExplanation"), n_concepts=3,
            default_n_concepts=3, prompt_types=("NE2", "E2"), seeds=(0,), simulators=("priced",), n_lp=9,
            n_ep=9, n_fit=200, **providers.grid_extras(),
        )  # fmt: skip
        summary = run_grid(
            grid, tmp_path / "r.sqlite", providers=providers, progress=False, calls="batch", batch_poll_s=0.01
        )
    full = (summary.prompt_tokens * 1.0 + summary.completion_tokens * 2.0) / 1000
    assert summary.cost_usd == pytest.approx(full * BATCH_PRICE_FACTOR)
    assert summary.batch_saved_usd == pytest.approx(full * (1 - BATCH_PRICE_FACTOR))


def test_response_from_body_is_read_as_a_live_answer() -> None:
    sim = OpenAICompatibleSimulator("m", base_url="http://127.0.0.1:1/v1", price_per_1k_tokens=(1.0, 3.0))
    body = {
        "id": "c", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Sample_2: a"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 400, "completion_tokens": 100, "total_tokens": 500},
    }  # fmt: skip
    schema = AnswerSchema(("2",), ("a", "b"))
    response = sim.response_from_body(body, schema, price_factor=0.5, metadata={"batch_id": "b1"})
    assert response.text == "Sample_2: a" and response.cost_usd == pytest.approx((0.4 + 0.3) * 0.5)
    assert response.metadata["batch_id"] == "b1" and response.error is None
    bad = sim.response_from_body({**body, "choices": []}, schema)
    assert bad.error is not None and "'choices' is empty" in bad.error
    assert sim.request_body((ChatMessage("user", "x"),), None)["messages"] == [
        {"role": "user", "content": "x"}
    ]


def test_batch_refuses_other_simulators_and_ray(tmp_path: Path) -> None:
    with pytest.raises(InvalidParameterError, match="OpenAI-compatible simulators for a batch run"):
        _run(toy_grid(seeds=(0,), prompt_types=("NE2",), methods=("NoExplanation",)), tmp_path, calls="batch")
    with pytest.raises(InvalidParameterError, match="'local' with batch calls"):
        _run(_grid("http://127.0.0.1:1/v1"), tmp_path, calls="batch", backend="ray")


# -- a real CLI process: Ctrl-C, --cancel, SIGKILL -------------------------------------------------------------
def _jobs(store: Path) -> dict[str, dict[str, object]]:
    try:
        with sqlite3.connect(store) as connection:
            found = connection.execute("SELECT value FROM meta WHERE name=?", (JOBS_META,)).fetchone()
    except sqlite3.OperationalError:  # the run has not created its tables yet
        return {}
    return {} if found is None else json.loads(found[0])


def _wait_for(condition, what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _uploads(server: FakeBatchServer) -> int:
    return sum(1 for name, _ in server.files.values() if name.startswith("xaimetrics-"))


@pytest.mark.timeout(600)
def test_ctrl_c_leaves_the_batch_running_then_a_rerun_collects_it_and_cancel_stops_it(tmp_path: Path) -> None:
    with FakeBatchServer(ANSWERS, polls=10**9, done_at_cancel=3) as server:
        grid = write_grid(tmp_path, server.base_url, n_seeds=2)
        out = tmp_path / "out"
        run = start_run(grid, out, "--batch", "--batch-poll-s", "0.05", cache_dir=tmp_path / "c")
        _wait_for(lambda: any(j.get("batch_id") for j in _jobs(out / "results.sqlite").values())
                  if (out / "results.sqlite").exists() else False, "the stored batch id")  # fmt: skip
        _wait_for(lambda: server._looks.get("batch_1", 0) >= 2, "the run polling its batch")
        run.send_signal(signal.SIGINT)
        _, err = run.communicate(timeout=120)
        assert run.returncode == 130, err
        assert (
            server.batches["batch_1"]["status"] == "in_progress" and stored_rows(out / "results.sqlite") == 0
        )
        # the same command again: waits for the same batch, no new upload; then Ctrl-C again and cancel it
        again = start_run(grid, out, "--batch", "--batch-poll-s", "0.05", cache_dir=tmp_path / "c")
        looks = server._looks["batch_1"]
        _wait_for(lambda: server._looks["batch_1"] > looks + 2, "the rerun polling the same batch")
        again.send_signal(signal.SIGINT)
        again.communicate(timeout=120)
        assert _uploads(server) == 1 and len(server.batches) == 1
        cancel = cli("benchmark", "run", str(grid), "--output", str(out), "--providers", "toy_grid:PROVIDERS",
                     "--no-progress", "--cancel", "--batch-poll-s", "0.05", cache_dir=tmp_path / "c")  # fmt: skip
        assert cancel.returncode == 0, cancel.stderr
        assert server.batches["batch_1"]["status"] == "cancelled"
        assert stored_rows(out / "results.sqlite") == server.paid_lines == 3  # what it finished, nothing else
        assert server.chat_request_count == 0 and len(server.batches) == 1
        assert "3 from batch jobs at 50% off" in cancel.stdout


@pytest.mark.timeout(600)
def test_sigkill_between_creation_and_stored_id_adopts_the_batch(tmp_path: Path) -> None:
    with FakeBatchServer(ANSWERS, create_delay_s=600) as server:
        grid = write_grid(tmp_path, server.base_url, n_seeds=2)
        out = tmp_path / "out"
        run = start_run(grid, out, "--batch", "--batch-poll-s", "0.05", cache_dir=tmp_path / "c")
        _wait_for(server.created.is_set, "the batch's creation")
        os.kill(run.pid, signal.SIGKILL)
        run.communicate(timeout=60)
        (job,) = _jobs(out / "results.sqlite").values()
        assert job["batch_id"] is None and job["file_id"]  # created at the provider, id never stored
        server.create_delay_s = 0
        rerun = cli("benchmark", "run", str(grid), "--output", str(out), "--providers", "toy_grid:PROVIDERS",
                    "--no-progress", "--batch", "--batch-poll-s", "0.05", cache_dir=tmp_path / "c")  # fmt: skip
        assert rerun.returncode == 0, rerun.stderr
        assert stored_rows(out / "results.sqlite") == server.paid_lines == len(job["keys"]) == 4
        assert len(server.batches) == 1 and _uploads(server) == 1 and server.chat_request_count == 0
        assert "from batch jobs at 50% off" in rerun.stdout


def test_a_server_without_the_batch_api_is_one_clear_error(tmp_path: Path) -> None:
    from fake_openai_server import FakeOpenAIServer
    from xaimetrics.exceptions import SimulatorError

    with FakeOpenAIServer(ANSWERS) as server:  # chat only: /v1/files is a 404
        with pytest.raises(SimulatorError, match=r"The Batch API of openai:fake-model failed: HTTP 404"):
            _run(_grid(server.base_url), tmp_path, calls="batch")
        assert server.chat_request_count == 0
    with ResultsStore(tmp_path / "results.sqlite", read_only=True) as store:
        (job,) = store.get_meta(JOBS_META).values()  # recorded before the upload; the next run drops it
        assert job["state"] == "recorded" and job["batch_id"] is None


def test_the_gate_runs_live_and_the_methods_in_a_batch(tmp_path: Path) -> None:
    from xaimetrics.benchmark._gated import GatedDesign, _Simulator

    with FakeBatchServer(ANSWERS) as server:
        grid = _grid(server.base_url, controls=False)
        options = {"providers": Providers(**PROVIDER_KWARGS), "progress": False, "batch_poll_s": 0.01}
        part = _Simulator(
            grid, tmp_path / "r.sqlite", GatedDesign.default(), lambda _: None, options, batch=True
        )
        part._run(("NoExplanation",), (0,))  # a gate look: live
        assert server.chat_request_count == 1 and not server.batches
        part._methods_look((5,), twins=False)  # the methods' look: one batch, nothing live
        assert server.chat_request_count == 1 and len(server.batches) == 1 and server.paid_lines == 2
