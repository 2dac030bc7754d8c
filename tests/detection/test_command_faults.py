"""``xaimetrics detection`` under faults (issue #33) and with the user's own data (issue #35), over real HTTP (the
fake OpenAI server) and, for Ctrl-C, in a real process: failed calls are never scores, a rerun retries them,
another server is refused, damaged result files give one clear error, answers are kept one by one."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from synthetic_task import GROUPS, group_dataset, group_model, make_texts

from fake_openai_server import FakeOpenAIServer, Fault, token_script
from xaimetrics.benchmark import Providers
from xaimetrics.cli import build_parser, main
from xaimetrics.detection._command import run
from xaimetrics.exceptions import InvalidParameterError, StoreError

HERE = Path(__file__).parent
SRC = HERE.parents[1] / "src"
#: every answer "Yes" with P(Yes) = 0.6 (a readable answer: scores 0.5, a valid score, never a failure)
RESPOND, LOGPROBS = token_script("Sample_0:", (" Yes", {" Yes": 0.6, " No": 0.4}))
SMALL = ("--n-top", "3", "--n-quantile", "3", "--n-random", "4", "--n-hard", "0", "--no-controls")


def _argv(output: Path, *extra: str, concepts: str = "2") -> list[str]:
    return [
        "detection", "--output", str(output), "--dataset", "groups", "--method", "NMF", "--n-concepts", "5",
        "--n-fit", "400", "--concepts", concepts, "--no-progress", "--no-cache", *extra,
    ]  # fmt: skip


def _args(output: Path, *extra: str, concepts: str = "2") -> object:
    return build_parser().parse_args(_argv(output, *extra, concepts=concepts))


def _providers() -> Providers:
    return Providers(datasets={"groups": group_dataset}, models={"minilm+": group_model})


def _reader(server: FakeOpenAIServer) -> tuple[str, ...]:
    return ("--readers", "openai:fake", "--base-url", server.base_url, *SMALL)


def _records(output: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (output / "rows.jsonl").read_text().splitlines()]


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")


def test_http_500_is_recorded_failed_never_a_score_and_a_rerun_asks_again(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    with FakeOpenAIServer(RESPOND, logprobs=LOGPROBS) as server:
        server.inject(*[Fault.server_error(500, retry_after=0.001)] * 10_000)
        assert run(_args(tmp_path, *_reader(server)), _providers()) == 1
        records = _records(tmp_path)
        assert {r["status"] for r in records} == {"failed"} and len(records) == 2
        assert all("reader calls failed" in str(r["reason"]) and "500" in str(r["reason"]) for r in records)
        assert not (tmp_path / "rows.csv").exists()  # no score at all, no 0.000
        captured = capsys.readouterr()
        assert "FAILED" in captured.out and "2 concept(s) FAILED" in captured.err
        # the server works again: the rerun asks the failed concepts again and scores them
        with server._lock:
            server._faults.clear()
        before = server.chat_request_count
        assert run(_args(tmp_path, *_reader(server)), _providers()) == 0
        assert server.chat_request_count - before == 2 * 10  # 2 concepts x 10 texts
    frame = pd.read_csv(tmp_path / "rows.csv")
    assert len(frame) == 2 and (frame.value == 0.5).all() and (frame.metric == "auroc").all()


def test_a_reader_without_log_probabilities_fails_with_the_reason(tmp_path: Path) -> None:
    with FakeOpenAIServer(RESPOND) as server:  # answers "Sample_0: Yes" without logprobs
        assert run(_args(tmp_path, *_reader(server), concepts="1"), _providers()) == 1
    (record,) = _records(tmp_path)
    assert record["status"] == "failed" and "log" in str(record["reason"]).lower()


def test_no_server_fails_with_the_reason(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    argv = ("--readers", "openai:fake", "--base-url", f"http://127.0.0.1:{port}/v1", *SMALL)
    assert run(_args(tmp_path, *argv, concepts="1"), _providers()) == 1
    (record,) = _records(tmp_path)
    assert record["status"] == "failed" and "10 of 10 reader calls failed" in str(record["reason"])


def test_another_server_is_refused_and_the_folder_records_the_reader(tmp_path: Path) -> None:
    with FakeOpenAIServer(RESPOND, logprobs=LOGPROBS) as first:
        assert run(_args(tmp_path, *_reader(first), concepts="1"), _providers()) == 0
        first_url = first.base_url
    settings = json.loads((tmp_path / "settings.json").read_text())
    assert settings["readers"]["openai:fake"]["base_url"] == first_url
    with FakeOpenAIServer(RESPOND, logprobs=LOGPROBS) as second:
        with pytest.raises(
            StoreError, match=r"holds rows of reader 'openai:fake' answered by .*another --output"
        ):
            run(_args(tmp_path, *_reader(second), concepts="1"), _providers())
        assert second.chat_request_count == 0


def test_the_answers_are_kept_so_a_rerun_after_a_lost_row_makes_no_call(tmp_path: Path) -> None:
    with FakeOpenAIServer(RESPOND, logprobs=LOGPROBS) as server:
        assert run(_args(tmp_path, *_reader(server)), _providers()) == 0
        assert server.chat_request_count == 20
        (tmp_path / "rows.jsonl").unlink()  # as if the run had stopped before any concept was complete
        assert run(_args(tmp_path, *_reader(server)), _providers()) == 0
        assert server.chat_request_count == 20  # every answer came from responses.sqlite
    with sqlite3.connect(tmp_path / "responses.sqlite") as db:
        assert db.execute("SELECT count(*) FROM responses").fetchone() == (20,)


@pytest.mark.parametrize(
    ("base_url", "readers", "match"),
    [
        ("ftp://files.example/v1", "openai:m", "'--base-url' parameter .* http:// or https://"),
        (None, "lexical,nonsense", "'--readers'"),
    ],
)
def test_bad_arguments_are_refused_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture, base_url: str | None, readers: str, match: str
) -> None:
    extra = ["--readers", readers] + ([] if base_url is None else ["--base-url", base_url])
    assert main(_argv(tmp_path / "out", *extra)) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert pytest.importorskip("re").search(match, err)
    assert not (tmp_path / "out" / "settings.json").exists()


def test_a_repeated_reader_is_scored_once(tmp_path: Path) -> None:
    assert run(_args(tmp_path, "--readers", "lexical,lexical", *SMALL), _providers()) == 0
    records = _records(tmp_path)
    assert len(records) == 2 and {r["reader"] for r in records} == {"lexical"}


def _good_run(folder: Path) -> list[str]:
    assert run(_args(folder, "--readers", "lexical", *SMALL, concepts="3"), _providers()) == 0
    return (folder / "rows.jsonl").read_text().splitlines()


def _damage(lines: list[str], case: str) -> bytes:
    first = json.loads(lines[0])
    rows = [dict(r) for r in first["rows"]]
    changes = {
        "bad JSON": "{not json",
        "a list": "[1, 2]",
        "concept not an integer": json.dumps({**first, "concept": "a"}),
        "no reader": json.dumps({k: v for k, v in first.items() if k != "reader"}),
        "value a string": json.dumps({**first, "rows": [{**rows[0], "value": "0.9"}]}),
        "value out of range": json.dumps({**first, "rows": [{**rows[0], "value": 7.5}]}),
        "unknown status": json.dumps({**first, "status": "done"}),
        "rows not a list": json.dumps({**first, "rows": {"value": 1}}),
        "binary": "\udcff\udcfe",
    }
    text = "\n".join([changes[case], *lines[1:]]) + "\n"
    return text.encode("utf-8", "surrogateescape")


@pytest.mark.parametrize(
    "case",
    ["bad JSON", "a list", "concept not an integer", "no reader", "value a string", "value out of range",
     "unknown status", "rows not a list", "binary"],
)  # fmt: skip
def test_a_damaged_row_gives_one_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture, case: str
) -> None:
    lines = _good_run(tmp_path)
    (tmp_path / "rows.jsonl").write_bytes(_damage(lines, case))
    capsys.readouterr()
    argv = [*_argv(tmp_path, "--readers", "lexical", *SMALL, concepts="3")]
    # in-process with the providers: through the CLI's error printing
    with pytest.raises(StoreError, match=r"rows\.jsonl, line 1, .*Restore the file, delete that line"):
        run(build_parser().parse_args(argv), _providers())


def test_a_row_cut_by_a_crash_is_scored_again_never_read_as_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    lines = _good_run(tmp_path)
    before = pd.read_csv(tmp_path / "rows.csv")
    cut = "\n".join(lines[:-1]) + "\n" + lines[-1][: len(lines[-1]) // 2]  # the last line half written
    (tmp_path / "rows.jsonl").write_text(cut)
    assert run(_args(tmp_path, "--readers", "lexical", *SMALL, concepts="3"), _providers()) == 0
    assert "cut by an interrupted write" in capsys.readouterr().err
    after = pd.read_csv(tmp_path / "rows.csv")
    pd.testing.assert_frame_equal(after.sort_values("concept").reset_index(drop=True),
                                  before.sort_values("concept").reset_index(drop=True))  # fmt: skip
    assert all(json.loads(line) for line in (tmp_path / "rows.jsonl").read_text().splitlines())


@pytest.mark.parametrize("content", ["{cut", "[1, 2]", ""])
def test_a_damaged_settings_file_gives_one_clear_error(tmp_path: Path, content: str) -> None:
    _good_run(tmp_path)
    (tmp_path / "settings.json").write_text(content)
    with pytest.raises(StoreError, match=r"settings\.json .*(cannot be read|is not a detection settings)"):
        run(_args(tmp_path, "--readers", "lexical", *SMALL, concepts="3"), _providers())


def _own_data(path: Path) -> Path:
    texts = make_texts(500, seed=3)
    topics = [next((g[0] for g in GROUPS if any(w in t.split() for w in g)), "none") for t in texts]
    pd.DataFrame({"body": texts, "category": topics}).to_csv(path, index=False)
    return path


def test_own_columns_and_a_refused_run_leaves_nothing_that_blocks_the_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    data = _own_data(tmp_path / "news.csv")
    out = tmp_path / "out"
    base = ["detection", "--output", str(out), "--dataset", str(data), "--method", "NMF", "--n-concepts", "5",
            "--n-fit", "300", "--concepts", "2", "--readers", "lexical", "--no-progress", "--no-cache", *SMALL]  # fmt: skip
    providers = Providers(models={"minilm+": group_model})
    with pytest.raises(InvalidParameterError, match="text"):  # no 'text' column: the error names the fix
        run(build_parser().parse_args(base), providers)
    assert not (out / "settings.json").exists()
    started = time.perf_counter()
    assert (
        run(
            build_parser().parse_args([*base, "--text-column", "body", "--label-column", "category"]),
            providers,
        )
        == 0
    )
    elapsed = time.perf_counter() - started
    frame = pd.read_csv(out / "rows.csv")
    assert len(frame) == 2 and frame.value.notna().all()
    settings = json.loads((out / "settings.json").read_text())
    assert settings["text_column"] == "body" and settings["label_column"] == "category"
    shown = float(capsys.readouterr().out.split("Wall time ")[1].split(" s")[0])
    assert (
        abs(shown - elapsed) <= 0.06 + 0.05 * elapsed
    )  # the whole run's wall time (one decimal), loading included


def test_a_model_that_is_not_a_directory_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(_argv(tmp_path / "out", "--model", str(tmp_path / "missing"))) == 1
    err = capsys.readouterr().err
    assert err.startswith("InvalidParameterError: The '--model' parameter") and "xaimetrics finetune" in err


def test_intruder_and_embedding_rows_in_the_same_results_and_tables(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    args = _args(tmp_path, "--readers", "lexical", "--intruder", "--embedding", "--n-top", "5", "--n-quantile",
                 "5", "--n-random", "6", "--n-hard", "0", "--no-controls", concepts="3")  # fmt: skip
    assert run(args, _providers()) == 0
    frame = pd.read_csv(tmp_path / "rows.csv")
    assert set(frame.task) == {"detection", "intruder", "embedding"}
    assert set(frame[frame.task == "embedding"].reader) == {"minilm"}
    intruder = frame[frame.task == "intruder"]
    assert len(intruder) == 3 and intruder.value.median() > 0.2  # above chance (1 / n_shown)
    out = capsys.readouterr().out
    assert "Which concepts are legible — intruder, reader lexical" in out
    assert "Which concepts are legible — embedding, reader minilm" in out
    # a rerun scores nothing again
    assert run(args, _providers()) == 0
    assert len(pd.read_csv(tmp_path / "rows.csv")) == len(frame)
    assert "concept(s)" not in capsys.readouterr().err


def _interrupt(tmp_path: Path, server: FakeOpenAIServer, signals: int) -> tuple[int, int, str]:
    """Start a real run, send ``signals`` SIGINTs once the second concept is under way; (asked, kept, stderr)."""
    command = [sys.executable, "-c", "import sys; from xaimetrics.cli import main; sys.exit(main())",
               *_argv(tmp_path, *_reader(server), "--providers", "synthetic_task:PROVIDERS", concepts="3")]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), str(HERE)]), "OPENAI_API_KEY": "sk-test"}
    child = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while server.chat_request_count < 12 and time.monotonic() < deadline and child.poll() is None:
        time.sleep(0.05)
    assert server.chat_request_count >= 12  # the first concept (10 calls) is done, the second under way
    for _ in range(signals):
        child.send_signal(signal.SIGINT)
        time.sleep(0.05)
    _, stderr = child.communicate(timeout=60)
    assert child.returncode == 130, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr
    with sqlite3.connect(tmp_path / "responses.sqlite") as db:
        kept = db.execute("SELECT count(*) FROM responses").fetchone()[0]
    return server.chat_request_count, kept, stderr


def test_ctrl_c_keeps_every_answer_received_and_the_resume_asks_only_the_rest(tmp_path: Path) -> None:
    with FakeOpenAIServer(RESPOND, logprobs=LOGPROBS, latency_s=0.3) as server:
        asked, kept, stderr = _interrupt(tmp_path, server, signals=1)
        assert "Interrupted: no call started after Ctrl-C" in stderr
        assert 12 <= kept == asked < 30  # the calls in flight finished and were kept; none started after
        assert run(_args(tmp_path, *_reader(server), concepts="3"), _providers()) == 0
        assert server.chat_request_count - asked == 30 - kept


def test_a_second_ctrl_c_stops_at_once_without_a_traceback(tmp_path: Path) -> None:
    with FakeOpenAIServer(RESPOND, logprobs=LOGPROBS, latency_s=2.0) as server:
        asked, kept, stderr = _interrupt(tmp_path, server, signals=2)
        assert "Interrupted again: stopped at once" in stderr
        assert kept >= asked - server.max_in_flight  # at most the calls in flight are lost


def test_an_unknown_method_is_refused_by_the_command_before_anything_is_written(tmp_path: Path) -> None:
    out = tmp_path / "out"
    argv = _argv(out, "--readers", "lexical", *SMALL)
    argv[argv.index("NMF")] = "NOPE"
    args = build_parser().parse_args(argv)
    with pytest.raises(InvalidParameterError, match=r"'--method' parameter of xaimetrics detection"):
        run(args, Providers(datasets={"groups": group_dataset}, models={"minilm+": group_model}))
    assert not out.exists()
