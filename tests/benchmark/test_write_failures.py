"""A write that fails (a full disk simulated by the file-size limit, a folder path through a file) stops the run
before another call, names the real cause, never advises deleting the healthy store, and the run resumes
exactly; reports and exports read a store without writing to it."""

from __future__ import annotations

import hashlib
import resource

import pytest
from cli_runs import cli, start_run, stored_keys, stored_rows, write_grid
from toy_grid import PROVIDER_KWARGS, toy_grid

from xaimetrics.benchmark import Providers, ResultsStore, run_grid
from xaimetrics.exceptions import StoreError

CONCURRENCY = 2
TOTAL = 24


def _file_size_limit(limit: int):
    def apply() -> None:  # in the child, before exec: every file it writes is capped (SIGXFSZ is ignored)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def _answer(messages):
    return "Sample_1: politics"


def test_a_full_disk_stops_the_run_before_another_call_and_the_resume_completes(tmp_path, fake_openai_server):
    server = fake_openai_server(_answer, latency_s=0.05)
    grid = write_grid(tmp_path, server.base_url, concurrency=CONCURRENCY)
    out = tmp_path / "out"
    # 160 KB: the store's write-ahead log reaches it after a few rows (each row carries its prompt)
    child = start_run(
        grid, out, "--no-cache", cache_dir=tmp_path / "cache", preexec_fn=_file_size_limit(160_000)
    )
    _, stderr = child.communicate(timeout=300)
    assert child.returncode == 1, stderr
    assert "Traceback" not in stderr
    assert "file-size limit" in stderr and "ulimit -f" in stderr
    for advice in ("corrupted", "backup", "move it away", "delete it"):
        assert advice not in stderr
    stored = stored_rows(out / "results.sqlite")
    assert 0 < stored < TOTAL
    calls = server.chat_request_count
    # the calls not stored are the failed write's and those already in flight, never a new one
    assert calls - stored <= CONCURRENCY

    resumed = start_run(grid, out, "--no-cache", cache_dir=tmp_path / "cache")
    _, stderr = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, stderr
    assert server.chat_request_count - calls == TOTAL - stored
    keys = stored_keys(out / "results.sqlite")
    assert len(keys) == len(set(keys)) == TOTAL


def _filled_folder(tmp_path):
    out = tmp_path / "out"
    grid = toy_grid(methods=("PCA", "NoExplanation"), prompt_types=("NE2", "E2"), seeds=(0, 1, 2))
    run_grid(grid, out / "results.sqlite", providers=Providers(**PROVIDER_KWARGS), progress=False)
    return out


def test_export_into_a_path_through_a_file_names_the_cause(tmp_path):
    out = _filled_folder(tmp_path)
    (tmp_path / "a-file").write_text("not a folder")
    result = cli("benchmark", "export", "--output", str(out), str(tmp_path / "a-file" / "rows.csv"),
                 cache_dir=tmp_path / "cache")  # fmt: skip
    assert result.returncode == 1
    assert result.stderr.startswith("StoreError: The export to") and "Traceback" not in result.stderr
    assert "a part of its folder path is a file" in result.stderr
    assert "PermissionError" not in result.stderr


@pytest.mark.slow  # two CLI processes
def test_report_and_export_do_not_write_to_the_store(tmp_path):
    out = _filled_folder(tmp_path)
    store = out / "results.sqlite"
    before = hashlib.sha256(store.read_bytes()).hexdigest()
    reports = tmp_path / "reports"
    result = cli(
        "benchmark", "report", "--output", str(out), "--report-dir", str(reports), cache_dir=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert (reports / "report.html").is_file() and not (out / "report.html").exists()
    assert (
        cli(
            "benchmark", "export", "--output", str(out), str(tmp_path / "rows.csv"), cache_dir=tmp_path
        ).returncode
        == 0
    )
    assert hashlib.sha256(store.read_bytes()).hexdigest() == before


def test_read_only_store_refuses_writes_and_reads_everything(tmp_path):
    out = _filled_folder(tmp_path)
    with ResultsStore(out / "results.sqlite", read_only=True) as store:
        assert len(store) == 6 and store.get_meta("grid")["seeds"] == [0, 1, 2]
        try:
            store.add("k9", {"method": "PCA"})
        except StoreError as error:
            assert "opened read-only" in str(error)
        else:  # pragma: no cover - the assertion below fails
            raise AssertionError("a read-only store accepted a row")


def test_a_store_under_a_file_names_the_cause_not_corruption(tmp_path):
    (tmp_path / "a-file").write_text("x")
    try:
        ResultsStore(tmp_path / "a-file" / "results.sqlite")
    except StoreError as error:
        message = str(error)
    else:  # pragma: no cover
        raise AssertionError("no error")
    assert "a part of its folder path is a file" in message and "corrupted" not in message
