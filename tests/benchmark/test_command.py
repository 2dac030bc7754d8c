"""The ``benchmark`` and ``demo`` sub-commands, in process."""

from __future__ import annotations

import argparse
import re

import pytest
from browser import available, open_in_chromium

from xaimetrics import cli
from xaimetrics.benchmark import _command


def benchmark_main(argv):
    """``xaimetrics benchmark ...`` through cli.main when the lead has registered it, else its own parser."""
    if "xaimetrics.benchmark._command" in cli.COMMAND_MODULES:
        return cli.main(argv)
    parser = argparse.ArgumentParser(prog="xaimetrics")
    _command.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except Exception as error:  # mirror cli.main for user errors
        from xaimetrics.exceptions import XaimetricsError

        if isinstance(error, XaimetricsError):
            print(f"{type(error).__name__}: {error}")
            return 1
        raise


GRID = """
datasets = ["toy"]
models = ["toy"]
methods = ["NMF", "PCA", "NoExplanation"]
n_concepts = 3
prompt_types = ["NE2-a", "E2-a", "E3-a"]
seeds = [0, 1]
simulators = ["oracle"]
n_lp = 6
n_ep = 6
n_fit = 200
"""


def test_benchmark_run_report_export(tmp_path, capsys):
    (tmp_path / "grid.toml").write_text(GRID)
    out = tmp_path / "out"
    code = benchmark_main(["benchmark", "run", str(tmp_path / "grid.toml"), "--output", str(out),
                           "--providers", "toy_grid:PROVIDERS", "--no-cache", "--no-progress"])  # fmt: skip
    assert code == 0
    printed = capsys.readouterr().out
    assert "10 run, 0 already stored, 0 failed" in printed and "report.html" in printed
    assert "| NMF | 1 |" in (out / "report.md").read_text()
    # rerun: nothing left to do
    assert benchmark_main(["benchmark", "run", str(tmp_path / "grid.toml"), "--output", str(out),
                           "--providers", "toy_grid:PROVIDERS", "--no-cache", "--no-progress"]) == 0  # fmt: skip
    assert "0 run, 10 already stored" in capsys.readouterr().out
    (out / "report.md").unlink()
    assert benchmark_main(["benchmark", "report", "--output", str(out)]) == 0
    assert (out / "report.md").is_file()
    assert benchmark_main(["benchmark", "export", str(tmp_path / "rows.csv"), "--output", str(out)]) == 0
    assert len((tmp_path / "rows.csv").read_text().splitlines()) == 11


def test_benchmark_run_logs_the_grid_to_mlflow(tmp_path, capsys, monkeypatch):
    mlflow = pytest.importorskip("mlflow")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    uri = (tmp_path / "mlruns").as_uri()
    (tmp_path / "grid.toml").write_text(GRID)
    out = tmp_path / "out"
    code = benchmark_main(["benchmark", "run", str(tmp_path / "grid.toml"), "--output", str(out), "--providers",
                           "toy_grid:PROVIDERS", "--no-cache", "--no-progress", "--mlflow-uri", uri])  # fmt: skip
    assert code == 0
    run_id = re.search(r"Logged to MLflow run (\w+)", capsys.readouterr().out).group(1)
    run = mlflow.tracking.MlflowClient(tracking_uri=uri).get_run(run_id)
    assert run.data.params["grid.n_lp"] == "6" and run.data.tags["kind"] == "consim-grid"
    assert run.data.metrics  # the grid's scores, by method
    from xaimetrics.benchmark import ResultsStore

    with ResultsStore(out / "results.sqlite") as store:
        rows = store.to_frame()
    nmf = rows[rows["method"] == "NMF"]["score"].mean()
    assert any(abs(value - nmf) < 1e-9 for value in run.data.metrics.values()), run.data.metrics
    artifacts = {a.path for a in mlflow.tracking.MlflowClient(tracking_uri=uri).list_artifacts(run_id)}
    assert {"consim_results.csv", "report.html", "report.md"} <= artifacts


def test_benchmark_errors_are_one_line(tmp_path, capsys):
    (tmp_path / "grid.toml").write_text(GRID.replace('"PCA"', '"LDA"'))
    code = benchmark_main(["benchmark", "run", str(tmp_path / "grid.toml"), "--output", str(tmp_path),
                           "--providers", "toy_grid:PROVIDERS"])  # fmt: skip
    captured = capsys.readouterr()
    assert code == 1
    assert (
        "InvalidParameterError: The 'methods' parameter of Grid must be among" in captured.out + captured.err
    )
    assert benchmark_main(["benchmark", "report", "--output", str(tmp_path / "nothing")]) == 1
    assert benchmark_main(["benchmark", "run", str(tmp_path / "grid.toml"), "--providers", "nope:X"]) == 1


def test_demo_rejects_bad_options_in_process(capsys):
    assert cli.main(["demo", "--gate-seeds", "3", "--output", "/nonexistent/never-created"]) == 1
    assert "'--gate-seeds' parameter of xaimetrics demo must be at least 5" in capsys.readouterr().err
    assert cli.main(["demo", "--methods", "NMF,LDA", "--output", "/nonexistent/never-created"]) == 1
    assert "'methods' parameter of Grid must be among" in capsys.readouterr().err
    assert cli.main(["demo", "--method-seeds", "4", "--output", "/nonexistent/never-created"]) == 1
    assert "'--method-seeds' parameter of xaimetrics demo must be at least 8" in capsys.readouterr().err


@pytest.mark.slow  # fine-tunes the MiniLM classifier on first use (minutes), then runs the local LLM
def test_demo_quick_writes_a_report(tmp_path, capsys):
    out = tmp_path / "demo"
    # --no-cache: the local LLM really decodes (cached answers hid a crashing decode, issue #20)
    assert cli.main(["demo", "--quick", "--output", str(out), "--no-progress", "--no-cache"]) == 0
    printed = capsys.readouterr().out
    assert "test accuracy = 0." in printed and "Concept metrics" in printed
    assert (out / "report.html").is_file() and (out / "results.csv").is_file()
    # the answer comes last in the terminal and first in the report, one line per instrument at least
    answer = printed.split("\nThe answer\n", 1)[1].strip().splitlines()
    assert 2 <= len(answer) <= 5 and answer[0].startswith("- The local LLM (Qwen2.5-Coder-0.5B)")
    assert any(line.startswith("- The lexical reference reader") for line in answer)
    report = (out / "report.md").read_text()
    assert report.index("## The answer") < report.index("## Details: the fixed-sample analysis")
    assert (
        "## Gate: The local LLM (Qwen2.5-Coder-0.5B)" in report
        and "## Gate: The lexical reference reader" in report
    )
    assert (out / "reference" / "results.sqlite").is_file()
    if available():  # the demo report opens in headless Chromium without errors
        shot, dom, errors = open_in_chromium(out / "report.html", tmp_path)
        assert errors == [] and shot.stat().st_size > 10_000 and "<h1>xaimetrics demo" in dom


def test_rank_any_axis_from_the_cli_and_the_report(tmp_path, capsys):
    """Issue #11, class 7: CMAW vs o1CA (vs NoExplanation) without a manual pivot."""
    grid = GRID.replace('methods = ["NMF", "PCA", "NoExplanation"]', 'methods = ["NMF", "NoExplanation"]')
    (tmp_path / "grid.toml").write_text(grid + 'interpretations = ["top_words", "llm_labels"]\n')
    out = tmp_path / "out"
    code = benchmark_main(["benchmark", "run", str(tmp_path / "grid.toml"), "--output", str(out),
                           "--providers", "toy_grid:PROVIDERS", "--no-cache", "--no-progress"])  # fmt: skip
    assert code == 0
    capsys.readouterr()
    report = (out / "report.md").read_text()
    assert "## Ranking by interpretation" in report
    assert "top_words − llm_labels" in report or "llm_labels − top_words" in report
    assert benchmark_main(["benchmark", "rank", "--by", "interpretation", "--output", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("| interpretation | rank | win_share | mean_score | n_settings |")
    for name in ("top_words", "llm_labels", "NoExplanation"):
        assert f"| {name} |" in printed
    assert "| pair | mean_difference | p_value | p_adjusted | significant | n_units |" in printed
    assert benchmark_main(["benchmark", "rank", "--output", str(out)]) == 0  # the methods, by default
    assert "| method | rank |" in capsys.readouterr().out
    assert benchmark_main(["benchmark", "rank", "--by", "seed", "--output", str(out)]) == 1
    captured = capsys.readouterr()
    assert (
        "The '--by' option must be a grid axis among 'method', 'interpretation'"
        in captured.out + captured.err
    )


def test_damaged_or_empty_stores_are_one_line_errors_never_overwritten(tmp_path, capsys):
    """Issue #11, class 11: no raw sqlite3 traceback, no silent rerun, no empty export with exit 0."""
    from xaimetrics.benchmark import ResultsStore

    (tmp_path / "grid.toml").write_text(GRID)
    out = tmp_path / "out"
    out.mkdir()
    store = out / "results.sqlite"
    ResultsStore(store).close()  # a valid store with no results
    for action in (["export", str(tmp_path / "rows.csv")], ["report"], ["rank"]):
        assert benchmark_main(["benchmark", *action, "--output", str(out)]) == 1
        captured = capsys.readouterr()
        assert f"StoreError: The results store {store} holds no results" in captured.out + captured.err
    assert not (tmp_path / "rows.csv").exists()
    store.write_bytes(b"")  # emptied: a run must not silently start over
    run = ["benchmark", "run", str(tmp_path / "grid.toml"), "--output", str(out),
           "--providers", "toy_grid:PROVIDERS", "--no-cache", "--no-progress"]  # fmt: skip
    assert benchmark_main(run) == 1
    captured = capsys.readouterr()
    assert f"StoreError: The results store {store} is empty (0 bytes)" in captured.out + captured.err
    assert store.read_bytes() == b""
    store.write_bytes(b"SQLite format 3\x00" + bytes(200))  # a truncated header
    for command in (run, ["benchmark", "export", str(tmp_path / "rows.csv"), "--output", str(out)]):
        assert benchmark_main(command) == 1
        captured = capsys.readouterr()
        lines = (captured.out + captured.err).strip().splitlines()
        assert lines[-1].startswith(f"StoreError: The results store {store} cannot be read"), lines
        assert "Traceback" not in captured.out + captured.err
    assert store.read_bytes() == b"SQLite format 3\x00" + bytes(200)


def test_demo_grid_defaults_and_flags():
    from xaimetrics._demo import demo_grid

    parser = argparse.ArgumentParser()
    subparsers = parser.add_subparsers()
    from xaimetrics._demo import register

    register(subparsers)
    grid = demo_grid(parser.parse_args(["demo"]))
    assert grid.datasets == ("bbc_news",) and grid.balance == "relaxed" and grid.scoring == "probability"
    assert {s.method for s in grid.settings()} >= {"NoExplanation", "NMF"}  # the controls come with the gate
    rt = demo_grid(parser.parse_args(["demo", "--dataset", "rotten_tomatoes", "--scoring", "accuracy"]))
    assert rt.balance == "strict" and rt.scoring == "accuracy"
    quick = demo_grid(parser.parse_args(["demo", "--quick"]))
    assert quick.pool_size is None  # BBC's test split has 212 articles: the whole of it
    from xaimetrics._demo import demo_design

    design = demo_design(parser.parse_args(["demo"]))
    assert design.gate.looks() == [5, 6, 7, 8] and design.methods.looks()[0] == 8 and not design.force_methods
