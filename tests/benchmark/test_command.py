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
    assert (
        cli.main(["demo", "--detection", "intruder,fuzzing", "--output", "/nonexistent/never-created"]) == 1
    )
    assert "'--detection' parameter of xaimetrics demo must be comma-separated" in capsys.readouterr().err


@pytest.mark.slow  # fine-tunes the MiniLM classifier on first use (minutes), then runs the local LLM
def test_demo_quick_writes_a_report(tmp_path, capsys):
    out = tmp_path / "demo"
    # --no-cache: the local LLM really decodes (cached answers hid a crashing decode, issue #20)
    assert (
        cli.main(
            [
                "demo",
                "--quick",
                "--output",
                str(out),
                "--no-progress",
                "--no-cache",
                "--detection",
                "intruder",
            ]
        )
        == 0
    )
    captured = capsys.readouterr()
    printed = captured.out
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
    # per-concept scores of the measured methods, or a line saying no simulator measured them
    assert ("## Per-concept legibility" in report) != ("Per-concept scores skipped" in captured.err)
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
    assert printed.startswith("Ranked by score (eq. 5's accuracy")
    assert "| interpretation | rank | win_share | mean_score | n_settings |" in printed
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


def test_rank_prints_the_reports_ranking_without_the_controls(tmp_path, capsys):
    """Issue #35 item 4: `benchmark rank` ranked another score than the report and counted the controls."""
    grid = GRID.replace(
        'methods = ["NMF", "PCA", "NoExplanation"]',
        'methods = ["NMF", "PCA", "NoExplanation", "SurrogateWords", "RandomWords"]',
    )
    (tmp_path / "grid.toml").write_text(grid)
    out = tmp_path / "out"
    code = benchmark_main(["benchmark", "run", str(tmp_path / "grid.toml"), "--output", str(out),
                           "--providers", "toy_grid:PROVIDERS", "--no-cache", "--no-progress"])  # fmt: skip
    assert code == 0
    capsys.readouterr()
    assert benchmark_main(["benchmark", "rank", "--output", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "Controls are left out" in printed
    table = printed.split("\n\n")[1].strip()
    assert table.startswith("| method | rank |") and table in (out / "report.md").read_text()
    assert "SurrogateWords" not in table and "RandomWords" not in table
    assert benchmark_main(["benchmark", "rank", "--output", str(out), "--metric", "score"]) == 0
    assert capsys.readouterr().out.startswith("Ranked by score")


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


# ------------------------------------------------------------------ gate first, then measure (--sequential)

SEQUENTIAL_GRID = """
datasets = ["toy"]
models = ["toy"]
methods = ["NMF", "PCA", "NoExplanation"]
n_concepts = 3
prompt_types = ["NE2", "E2"]
seeds = [0, 1]
simulators = ["controlled_oracle", "blind"]
n_lp = 9
n_ep = 9
n_fit = 200

[sequential]
gate_seeds = 6
method_seeds = 9
"""
TOY = ["--providers", "toy_grid:PROVIDERS", "--no-cache", "--no-progress"]


def _answer(printed):
    return [line[2:] for line in printed.split("\nThe answer\n", 1)[1].strip().splitlines()]


def test_a_sequential_run_answers_first_as_run_gated_does_and_a_rerun_makes_no_call(tmp_path, capsys):
    from toy_grid import PROVIDERS

    from xaimetrics.benchmark import ResultsStore, headline, load_grid, run_gated
    from xaimetrics.benchmark._design_file import load_design

    path = tmp_path / "grid.toml"
    path.write_text(SEQUENTIAL_GRID)
    out = tmp_path / "out"
    assert benchmark_main(["benchmark", "run", str(path), "--output", str(out), *TOY]) == 0
    captured = capsys.readouterr()
    assert "the grid's seeds [0, 1] are ignored" in captured.err
    answer = _answer(captured.out)
    report = (out / "report.md").read_text()
    assert report.split("\n## ")[1].startswith("The answer")  # the first section
    assert all(line in report for line in answer)
    # the same grid and design through the API, into another store: the same verdicts and the same answer
    grid = load_grid(path, **PROVIDERS.grid_extras())
    design = load_design(path, n_methods=len(grid.concept_methods))
    expected = run_gated(grid, tmp_path / "api.sqlite", design, providers=PROVIDERS, progress=False)
    assert answer == headline(expected, margin=design.margin)
    valid, blind = expected
    assert valid.outcome == "valid" and blind.outcome == "invalid" and blind.methods is None
    assert valid.methods.verdicts["verdict"].to_dict() == {"NMF": "helps", "PCA": "no_help"}
    assert "Gate: blind" in report and "Concept methods: controlled_oracle" in report
    with ResultsStore(out / "results.sqlite") as store:
        rows = len(store)
        assert rows == len(ResultsStore(tmp_path / "api.sqlite").to_frame())
        assert set(store.to_frame().query("simulator == 'blind'")["method"]) == {
            "NoExplanation",
            "SurrogateWords",
        }
    # a rerun makes no call and says the same
    assert benchmark_main(["benchmark", "run", str(path), "--output", str(out), *TOY]) == 0
    printed = capsys.readouterr().out
    assert f"0 settings run ({rows} stored in all), 0 failed; 0 simulator calls" in printed
    assert _answer(printed) == answer
    # 'report' rebuilds the same answer from the stored rows
    (out / "report.md").unlink()
    assert benchmark_main(["benchmark", "report", "--output", str(out)]) == 0
    assert _answer(capsys.readouterr().out) == answer
    assert (out / "report.md").read_text().split("\n## ")[1].startswith("The answer")
    assert len(ResultsStore(out / "results.sqlite", read_only=True)) == rows


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("gate_seeds = 3", r"The 'sequential\.gate_seeds' parameter of load_grid must be ≥ 5 \(with fewer seeds"),
        ("method_seeds = 5", r"The 'sequential\.method_seeds' parameter of load_grid must be ≥ 6 .*2 concept"),
        ("gate_seeds = 6\ngate_start = 7", r"'sequential\.gate_start' parameter of load_grid must be at most sequential\.gate_seeds \(6\)\. Got 7"),
        ("alpha = 1.5", r"'sequential\.alpha' parameter of load_grid must be a number in \(0, 1\)\. Got 1\.5"),
        ("rho = 0", r"'sequential\.rho' parameter of load_grid must be a number > 0"),
        ("margin = -0.1", r"'sequential\.margin' parameter of load_grid must be a number in \(0, 1\)"),
        ("step = 1.5", r"'sequential\.step' parameter of load_grid must be an integer ≥ 1"),
        ('force_methods = "yes"', r"'sequential\.force_methods' parameter of load_grid must be true or false"),
        ("max_tokens = 0", r"'sequential\.max_tokens' parameter of load_grid must be an integer ≥ 1"),
        ("max_cost_usd = -1", r"'sequential\.max_cost_usd' parameter of load_grid must be a number of dollars"),
        ("gate_seed = 6", r"'sequential' parameter of load_grid must be keys among gate_seeds.*Did you mean 'gate_seeds'"),
    ],
)  # fmt: skip
def test_sequential_table_errors_name_the_key(tmp_path, capsys, table, message):
    path = tmp_path / "grid.toml"
    path.write_text(SEQUENTIAL_GRID.replace("gate_seeds = 6\nmethod_seeds = 9", table))
    out = tmp_path / "out"
    assert benchmark_main(["benchmark", "run", str(path), "--output", str(out), *TOY]) == 1
    captured = capsys.readouterr()
    lines = (captured.out + captured.err).strip().splitlines()
    assert lines[-1].startswith("InvalidParameterError: ") and re.search(message, lines[-1]), lines
    assert not out.exists()


def test_other_unknown_keys_are_still_refused_and_a_plain_grid_loads_with_its_table(tmp_path):
    from toy_grid import PROVIDERS

    from xaimetrics.benchmark import load_grid
    from xaimetrics.benchmark._design_file import load_design
    from xaimetrics.exceptions import InvalidParameterError

    path = tmp_path / "grid.toml"
    path.write_text(SEQUENTIAL_GRID.replace("[sequential]", "[sequentail]"))
    with pytest.raises(
        InvalidParameterError, match=r"'grid' parameter of load_grid must be keys among .*\['sequentail'\]"
    ):
        load_grid(path, **PROVIDERS.grid_extras())
    path.write_text(SEQUENTIAL_GRID)
    assert load_grid(path, **PROVIDERS.grid_extras()).seeds == (0, 1)
    assert load_design(path).gate.looks() == [5, 6]
    path.write_text(GRID)
    assert load_design(path) is None


def test_flags_override_the_table_and_name_themselves(tmp_path, capsys):
    path = tmp_path / "grid.toml"
    path.write_text(SEQUENTIAL_GRID)
    out = tmp_path / "out"
    dry = ["benchmark", "run", str(path), "--output", str(out), *TOY, "--dry-run"]
    assert benchmark_main([*dry, "--gate-seeds", "7", "--method-seeds", "10", "--force-methods"]) == 0
    printed = capsys.readouterr().out
    assert (
        "looks at [5, 6, 7] seeds (seeds 0–6)" in printed
        and "looks at [8, 9, 10] seeds (seeds 7–16)" in printed
    )
    assert "(or forced)" in printed
    assert benchmark_main([*dry, "--gate-seeds", "4"]) == 1
    captured = capsys.readouterr()
    assert (
        "The '--gate-seeds' parameter of xaimetrics benchmark run must be ≥ 5" in captured.out + captured.err
    )
    # a flag alone makes a plain grid sequential
    path.write_text(GRID)
    assert benchmark_main([*dry, "--method-seeds", "8"]) == 0
    assert "Dry run (gate first, then measure)" in capsys.readouterr().out
    assert benchmark_main([*dry]) == 0
    assert capsys.readouterr().out.startswith("Dry run: 10 settings on seeds [0, 1]")
    assert not out.exists()


FAKE_GRID = """
datasets = ["toy"]
models = ["toy"]
methods = ["PCA", "NoExplanation"]
n_concepts = 3
prompt_types = ["NE2-a", "E2-a"]
seeds = [0]
simulators = ["openai:fake-model"]
base_url = "{base_url}"
n_lp = 6
n_ep = 6
n_fit = 200
max_sample_chars = 20
"""


def test_dry_run_calls_nothing_writes_nothing_and_prints_the_worst_case(tmp_path, capsys, monkeypatch,
                                                                         fake_openai_server):  # fmt: skip
    from toy_grid import PROVIDERS

    from xaimetrics.benchmark import GatedDesign, load_grid, plan_gated

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server = fake_openai_server(lambda messages: "Sample_6: Class_0")
    path = tmp_path / "grid.toml"
    path.write_text(FAKE_GRID.format(base_url=server.base_url))
    out = tmp_path / "out"
    argv = ["benchmark", "run", str(path), "--output", str(out), *TOY, "--dry-run"]
    assert benchmark_main([*argv, "--sequential", "--price-per-1k-tokens", "0.5,2"]) == 0
    printed = capsys.readouterr().out
    assert server.chat_request_count == 0 and not out.exists()
    plan = plan_gated(load_grid(path, **PROVIDERS.grid_extras()), GatedDesign.default())
    header, _, *rows = [line for line in printed.splitlines() if line.startswith("|")]
    assert header == "| simulator | part | seeds | settings | prompt_tokens | completion_tokens | usd |"
    cells = [[cell.strip() for cell in row.strip("|").split("|")] for row in rows]
    assert [c[:4] for c in cells] == [
        ["openai:fake-model", "gate", "0–7", str(plan["settings"]["gate"])],
        ["openai:fake-model", "methods", "8–23", str(plan["settings"]["methods"])],
        ["total", "", "", str(plan["settings"]["total"])],
    ]
    prompt, completion, usd = (float(x) for x in cells[-1][4:])
    assert usd == pytest.approx((prompt * 0.5 + completion * 2) / 1000, abs=1e-3)
    assert "Tokens are an estimate" in printed and "max_sample_chars = 20" in printed
    # the estimate against the prompts a plain run really sends (every concept shown: an upper bound, near it)
    assert benchmark_main([*argv[:-1]]) == 0
    capsys.readouterr()
    sent = sum(len(m["content"]) for r in server.chat_requests for m in r.body["messages"]) / 4
    assert benchmark_main(argv) == 0
    plain = capsys.readouterr().out
    estimated = float(next(line for line in plain.splitlines() if line.startswith("| total")).split("|")[5])
    assert server.chat_request_count == 2 and 0.9 * sent <= estimated <= 1.5 * sent, (sent, estimated)
