"""``xaimetrics consim`` in-process: a tiny saved model, an offline dataset and the fake OpenAI server."""

from __future__ import annotations

import json
import re

import pytest

from xaimetrics import cli


@pytest.fixture
def consim_cli(monkeypatch, tmp_path):
    monkeypatch.setattr(cli, "COMMAND_MODULES", ("xaimetrics.consim._command",))
    monkeypatch.setenv("XAIMETRICS_CACHE_DIR", str(tmp_path / "cache"))

    def run(*args: str) -> int:
        return cli.main(["consim", *args])

    return run


def _common(model_dir) -> list[str]:
    return [
        "--model", str(model_dir), "--dataset", "rotten_tomatoes", "--device", "cpu", "--n-lp", "6", "--n-ep", "6",
        "--fit-samples", "150", "--pool-samples", "120", "--n-concepts", "3", "--min-frequency", "3",
        "--balance", "relaxed",
    ]  # fmt: skip


def test_dry_run_prints_the_prompt(consim_cli, tiny_model_dir, capsys) -> None:
    assert consim_cli(*_common(tiny_model_dir), "--prompt-type", "E3", "--dry-run") == 0
    out = capsys.readouterr().out
    assert "===== E3 =====" in out and "[system]" in out and "[user]" in out
    assert "Concepts contributions for Sample_0" in out
    expected = out.split("----- expected answer (the model's predictions) -----\n", 1)[1].strip().splitlines()
    assert [line.split(":")[0] for line in expected] == [f"Sample_{i}" for i in range(6, 12)]


def test_the_cache_layout_puts_the_learning_phase_before_the_explanation(consim_cli, tiny_model_dir, capsys):
    assert (
        consim_cli(*_common(tiny_model_dir), "--prompt-type", "E2", "--prompt-layout", "cache", "--dry-run")
        == 0
    )
    out = capsys.readouterr().out
    assert (
        out.index("The classes predicted for these examples")
        < out.index("For each concept")
        < out.index("[user]")
    )


def test_perfect_answers_over_http(
    consim_cli, tiny_model_dir, fake_openai_server, monkeypatch, capsys, tmp_path
) -> None:
    from xaimetrics.models import SplitClassifier

    model = SplitClassifier.from_pretrained(tiny_model_dir, device="cpu")

    def respond(messages):  # the true model's predictions on the EP texts of the user message
        lines = re.findall(r"^Sample_(\d+): (.*)$", messages[-1]["content"], flags=re.MULTILINE)
        predictions = model.predict([text for _, text in lines])
        return "\n".join(
            f"Sample_{i}: {model.class_names[p]}" for (i, _), p in zip(lines, predictions, strict=True)
        )

    server = fake_openai_server(respond)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key")
    code = consim_cli(
        *_common(tiny_model_dir), "--prompt-type", "E2", "--baseline", "--simulator", "openai:fake-model",
        "--base-url", server.base_url, "--json",
    )  # fmt: skip
    assert code == 0
    records = json.loads(capsys.readouterr().out)
    assert [r["label"] for r in records] == ["NE2", "E2"]
    assert all(r["score"] == 1.0 and r["n_parsed"] == 6 for r in records)
    assert server.chat_request_count == 2
    assert server.chat_requests[0].headers["authorization"] == "Bearer sk-test-key"
    # the response cache: a second run makes no request, and the key is not stored
    code = consim_cli(
        *_common(tiny_model_dir), "--prompt-type", "E2", "--baseline", "--simulator", "openai:fake-model",
        "--base-url", server.base_url,
    )  # fmt: skip
    table = capsys.readouterr().out
    assert code == 0 and server.chat_request_count == 2
    assert re.search(
        r"^E2\s+1\.000 \[0\.61, 1\.00\]\s+6/6\s+0\s+0\s+0\s+\d+\s+[\d.]+s\s+yes$", table, flags=re.MULTILINE
    ), table
    cache_files = list((tmp_path / "cache").rglob("*.sqlite*"))
    assert cache_files and not any(b"sk-test-key" in path.read_bytes() for path in cache_files)


def test_llm_labels_from_the_same_server(consim_cli, tiny_model_dir, fake_openai_server, capsys) -> None:
    labels = json.dumps(
        [{"label": "praise", "sentences": ["a great film"]}, {"label": "boredom", "sentences": ["dull"]}]
    )

    def respond(messages):
        if "Propose" in messages[0]["content"]:
            return labels
        ids = re.findall(r"^Sample_(\d+):", messages[-1]["content"], flags=re.MULTILINE)
        return "\n".join(f"Sample_{i}: positive" for i in ids)

    server = fake_openai_server(respond)
    args = [
        "--prompt-type",
        "E1",
        "--interpretation",
        "llm_labels",
        "--simulator",
        "openai:m",
        "--base-url",
        server.base_url,
    ]
    assert (
        consim_cli(*_common(tiny_model_dir), *args, "--no-cache", "--json", "--api-key-env", "NO_SUCH_KEY")
        == 0
    )
    record = json.loads(capsys.readouterr().out)[0]
    assert server.chat_request_count == 2 and record["n_parsed"] == 6
    assert "For each concept, its label is:" in record["messages"][0]["content"]
    assert "'praise'" in record["messages"][0]["content"] or "'boredom'" in record["messages"][0]["content"]


def test_perfect_simulator_and_table(consim_cli, tiny_model_dir, capsys) -> None:
    assert consim_cli(*_common(tiny_model_dir), "--prompt-type", "U1-a", "--simulator", "perfect") == 0
    out = capsys.readouterr().out
    header = out.splitlines()[0]
    for column in (
        "setting",
        "score [95% CI]",
        "parsed",
        "missing",
        "invalid",
        "conflict",
        "tokens",
        "cached",
    ):
        assert column in header
    assert "expected acc." not in header  # eq. 5 scoring: no probabilities asked
    # 6/6 right: the Wilson interval's lower end is far from 1 with six samples, and the table says so
    assert re.search(r"^U1-a\s+≤1\.000 \[0\.61, 1\.00\] \(bound\)\s+6/6", out, flags=re.MULTILINE), out
    assert "Intervals are over the 6 evaluation samples of this one selection" in out
    # per class of f's predictions: a perfect reader has every hit and precision 1
    line = next(x for x in out.splitlines() if x.startswith("  U1-a: "))
    cells = re.findall(r"(\w+): recall (\d+)/(\d+), precision ([\d.]+)", line)
    assert cells and all(h == n and p == "1.00" for _, h, n, p in cells), line
    assert sum(int(n) for _, _, n, _ in cells) == 6


def test_probability_scoring_from_the_command_line(consim_cli, tiny_model_dir, capsys) -> None:
    code = consim_cli(
        *_common(tiny_model_dir), "--prompt-type", "E2", "--baseline", "--simulator", "perfect",
        "--scoring", "probability", "--json",
    )  # fmt: skip
    assert code == 0
    records = json.loads(capsys.readouterr().out)
    assert [r["label"] for r in records] == ["NE2", "E2"]
    for record in records:  # the oracle gives f's class probability 1
        assert record["expected_accuracy"] == 1.0 and record["expected_accuracy_interval"] == [1.0, 1.0]
        assert set(record["reference_probabilities"]) == set(record["sample_ids"])
        low, high = record["score_interval"]
        assert 0.5 < low < 0.7 and high == 1.0
    assert consim_cli(*_common(tiny_model_dir), "--prompt-type", "E2", "--simulator", "perfect", "--scoring",
                      "probability") == 0  # fmt: skip
    header = capsys.readouterr().out.splitlines()[0]
    assert "expected acc. [95% CI]" in header


def test_user_errors_print_one_line(consim_cli, tiny_model_dir, capsys) -> None:
    assert consim_cli(*_common(tiny_model_dir), "--prompt-type", "E7", "--dry-run") == 1
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("InvalidParameterError: The 'prompt_type' parameter of ConSim must be one of NE1")
    assert consim_cli(*_common(tiny_model_dir)[:-2], "--prompt-type", "NE1", "--n-lp", "40", "--dry-run") == 1
    assert "balance='relaxed'" in capsys.readouterr().err
    assert consim_cli(*_common(tiny_model_dir), "--prompt-type", "NE1", "--simulator", "gpt-4") == 1
    assert "'--simulator' parameter of xaimetrics consim" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--n-concepts", "100000"],
            r"'--n-concepts' parameter of xaimetrics consim must be ≤ 2000 \(the --fit",
        ),
        (["--n-concepts", "0"], r"'--n-concepts' parameter .* must be an integer ≥ 1. Got 0"),
        (["--seed", "-1"], r"'--seed' parameter .* must be an integer ≥ 0. Got -1"),
        (["--n-lp", "0"], r"'--n-lp' parameter"),
        (["--fit-samples", "0"], r"'--fit-samples' parameter"),
        (["--pool-samples", "1"], r"'--pool-samples' parameter .* ≥ 2"),
        (["--max-sample-chars", "0"], r"'--max-sample-chars' parameter"),
        (["--min-frequency", "0"], r"'--min-frequency' parameter"),
        (["--simulator", "gpt-4"], r"'--simulator' parameter"),
        (
            ["--simulator", "openai:m", "--base-url", "127.0.0.1:8080/v1"],
            r"'--base-url' .* http:// or https://",
        ),
        (["--simulator", "openai:m", "--base-url", "ftp://u:SECRET-9@h/v1"], r"Got ftp://h/v1\."),
    ],
)
def test_arguments_are_checked_before_loading_anything(consim_cli, capsys, args, message) -> None:
    """Issue #11, classes 12 and 14: the model path does not exist, so only an early check can answer."""
    code = consim_cli("--model", "/no/such/model", "--dataset", "no_such_dataset", *args)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1, err
    assert re.search(message, err[0]), err[0]
    assert "SECRET" not in err[0]


def test_n_concepts_is_bounded_by_the_model_width_before_fitting(consim_cli, tiny_model_dir, capsys) -> None:
    assert consim_cli(*_common(tiny_model_dir), "--n-concepts", "17", "--method", "pca") == 1
    err = capsys.readouterr().err
    assert "'--n-concepts' parameter of xaimetrics consim must be ≤ 16 (the model's activation width)" in err


def test_a_failed_simulator_call_exits_with_1(consim_cli, tiny_model_dir, fake_openai_server, capsys) -> None:
    from fake_openai_server import Fault

    server = fake_openai_server(lambda messages: "Sample_6: positive", faults=[Fault.server_error(400)])
    args = ["--prompt-type", "E2", "--baseline", "--simulator", "openai:m", "--base-url", server.base_url]
    assert consim_cli(*_common(tiny_model_dir), *args, "--no-cache") == 1
    captured = capsys.readouterr()
    assert "the simulator failed" in captured.out and "no score" in captured.err
    server.inject(Fault.completion(None, finish_reason="content_filter"))
    assert consim_cli(*_common(tiny_model_dir), *args, "--no-cache", "--json") == 1
    records = json.loads(capsys.readouterr().out)
    # the two prompts (E2 and its NE2 baseline) go out together: the one fault hits either of them
    failed = [r for r in records if r["error"]]
    assert len(failed) == 1 and "content filter" in failed[0]["error"] and failed[0]["score"] is None
    assert consim_cli(*_common(tiny_model_dir), *args, "--no-cache") == 0  # no fault left: exit 0


def test_layer_reads_an_inner_layer_and_is_checked_against_the_model(
    consim_cli, tiny_model_dir, capsys
) -> None:
    args = [*_common(tiny_model_dir), "--prompt-type", "E2", "--baseline", "--simulator", "perfect"]
    assert consim_cli(*args, "--method", "pca", "--layer", "0") == 0
    captured = capsys.readouterr()
    assert "Activations at bert.encoder.layer.0 (layer 0, mean over tokens)." in captured.err
    # g re-runs the network on the texts: the perfect reader scores 1
    assert re.search(r"^E2\s+1\.000 ", captured.out, flags=re.MULTILINE), captured.out
    # the tiny model has one layer: refused from its config before anything loads
    assert consim_cli(*args, "--method", "pca", "--layer", "1") == 1
    err = capsys.readouterr().err
    assert (
        "'--layer' parameter of xaimetrics consim must be an integer from 0 to 0 (one of the model's 1 "
        in err
    )
    assert "Loading" not in err
    assert consim_cli(*args, "--method", "nmf", "--layer", "0") == 1
    assert (
        "needs non-negative activations, which only the head input of a '+' model has"
        in capsys.readouterr().err
    )
