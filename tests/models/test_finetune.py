"""finetune / xaimetrics finetune: any architecture, "+" variant, cache, resume after a crash, the CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
import torch

from xaimetrics.cli import main
from xaimetrics.exceptions import InvalidParameterError
from xaimetrics.models import SplitClassifier, finetune
from xaimetrics.models._training import CHECKPOINT_FILE

PROBES = ["a good day", "a bad day", "good good", "bad"]


@pytest.fixture(scope="module")
def data_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    words = ["good", "fine", "great", "bad", "awful", "poor"]
    rows = [
        {"review": f"{w} {topic} number {i}", "stars": "positive" if j < 3 else "negative"}
        for i in range(12) for j, w in enumerate(words) for topic in ("film", "meal")
    ]  # fmt: skip
    path = tmp_path_factory.mktemp("data") / "reviews.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def _save_base(architecture: str, folder: Path, tokenizer) -> Path:
    """A tiny random base model saved like a hub checkpoint (a model without a classification head)."""
    import transformers

    with torch.random.fork_rng():
        torch.manual_seed(1)
        if architecture == "bert":
            config = transformers.BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=1,
                                             num_attention_heads=2, intermediate_size=48)  # fmt: skip
            model = transformers.BertModel(config)
        elif architecture == "llama":
            config = transformers.LlamaConfig(vocab_size=30522, hidden_size=32, intermediate_size=48,
                                              num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1)  # fmt: skip
            model = transformers.LlamaModel(config)
        else:
            config = transformers.T5Config(vocab_size=30522, d_model=32, d_kv=8, d_ff=48, num_layers=1, num_heads=2,
                                           pad_token_id=0, eos_token_id=102, decoder_start_token_id=0)  # fmt: skip
            model = transformers.T5Model(config)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


RECIPE = {
    "dataset_options": {"text_column": "review", "label_column": "stars"}, "n_train": 96, "batch_size": 8,
    "max_length": 16, "learning_rate": 3e-3, "n_eval": None, "device": "cpu", "progress": False,
}  # fmt: skip


def test_finetune_caches_and_records_the_test_accuracy(data_file, tokenizer, tmp_path: Path) -> None:
    base = _save_base("bert", tmp_path / "base", tokenizer)
    first = finetune(base, data_file, positive=True, epochs=4, cache_dir=tmp_path / "cache", **RECIPE)
    meta = first.metadata
    assert meta["test_accuracy"] > 0.8 and meta["n_test"] == 14 and meta["steps"] == 48
    assert first.positive and (first.activations(PROBES) >= 0).all()
    assert first.predict(["good film number 99", "awful meal number 99"]).tolist() == [1, 0]  # negative = 0
    target = Path(meta["path"])
    assert target.parent == tmp_path / "cache" / "models" and target.name.startswith(
        "finetuned-base-reviews-positive-"
    )
    assert not list(target.parent.glob(".partial-*"))  # checkpoints are removed once the model is saved
    stamp = (target / "model.safetensors").stat().st_mtime_ns
    again = finetune(base, data_file, positive=True, epochs=4, cache_dir=tmp_path / "cache", **RECIPE)
    assert (target / "model.safetensors").stat().st_mtime_ns == stamp
    torch.testing.assert_close(again.logits(PROBES), first.logits(PROBES))
    other = finetune(base, data_file, positive=True, epochs=1, cache_dir=tmp_path / "cache", **RECIPE)
    assert Path(other.metadata["path"]) != target  # another recipe, another model


class _Crash(RuntimeError):
    pass


def test_a_killed_run_resumes_from_its_checkpoint(data_file, tokenizer, tmp_path: Path) -> None:
    base = _save_base("bert", tmp_path / "base", tokenizer)
    recipe = {**RECIPE, "epochs": 2, "checkpoint_steps": 5}
    reference = finetune(base, data_file, cache_dir=tmp_path / "uninterrupted", **recipe)

    def crash_at_step_17(step: int, loss: float) -> None:
        if step == 17:
            raise _Crash

    with pytest.raises(_Crash):
        finetune(base, data_file, cache_dir=tmp_path / "crashed", callback=crash_at_step_17, **recipe)
    (partial,) = (tmp_path / "crashed" / "models").glob(".partial-*")
    assert torch.load(partial / CHECKPOINT_FILE, weights_only=False)["step"] == 15
    resumed = finetune(base, data_file, cache_dir=tmp_path / "crashed", **recipe)
    assert resumed.metadata["resumed_from_step"] == 15 and resumed.metadata["steps"] == 24
    torch.testing.assert_close(resumed.logits(PROBES), reference.logits(PROBES), atol=1e-6, rtol=0)
    assert resumed.metadata["final_loss"] == pytest.approx(reference.metadata["final_loss"], abs=1e-7)


@pytest.mark.parametrize("architecture", ["llama", "t5"])
def test_other_architectures_fine_tune_too(architecture, data_file, tokenizer, tmp_path: Path) -> None:
    base = _save_base(architecture, tmp_path / "base", tokenizer)
    clf = finetune(base, data_file, epochs=1, output_dir=tmp_path / "out", **RECIPE)
    assert isinstance(clf, SplitClassifier) and clf.metadata["steps"] == 12
    activations, logits = clf.activations_and_logits(PROBES)
    torch.testing.assert_close(clf.logits_from_activations(activations), logits, atol=1e-5, rtol=1e-5)
    assert json.loads((tmp_path / "out" / "metadata.json").read_text())["params"]["base_model"].startswith(
        "local:"
    )


def test_cli_finetune(data_file, tokenizer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = _save_base("bert", tmp_path / "base", tokenizer)
    common = ["finetune", "--model", str(base), "--dataset", str(data_file), "--text-column", "review",
              "--label-column", "stars", "--n-train", "48", "--batch-size", "8", "--max-length", "16",
              "--device", "cpu", "--cache-dir", str(tmp_path / "cache"), "--quiet"]  # fmt: skip
    assert main([*common, "--positive"]) == 0
    out = capsys.readouterr().out
    assert "test accuracy" in out and "6 steps" in out and "finetuned-base-reviews-positive-" in out
    assert "macro-F1" in out and re.search(r"class +precision  recall     F1  support", out)
    assert "negative" in out and "positive" in out  # one line per class
    assert main([*common, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["params"]["positive"] is False
    assert main([*common, "--epochs", "0"]) == 1
    assert "InvalidParameterError: The 'epochs' parameter of finetune" in capsys.readouterr().err


def test_metadata_holds_macro_f1_and_per_class_scores(data_file, tokenizer, tmp_path: Path) -> None:
    base = _save_base("bert", tmp_path / "base", tokenizer)
    meta = finetune(base, data_file, epochs=1, output_dir=tmp_path / "out", **RECIPE).metadata
    per_class = meta["test_per_class"]
    assert set(per_class) == {"negative", "positive"}
    assert sum(row["support"] for row in per_class.values()) == meta["n_test"]
    f1 = [row["f1"] for row in per_class.values()]
    assert meta["test_macro_f1"] == pytest.approx(sum(f1) / 2)
    recall = [per_class[name]["recall"] * per_class[name]["support"] for name in per_class]
    assert sum(recall) / meta["n_test"] == pytest.approx(meta["test_accuracy"])  # recall·support sums to hits


def test_minilm_defaults_are_the_grids_minilm_recipe() -> None:
    import inspect

    from xaimetrics.models._demo import load_demo_classifier
    from xaimetrics.models._finetune import recipe_defaults

    defaults = inspect.signature(load_demo_classifier).parameters
    assert recipe_defaults("minilm") == (defaults["max_length"].default, defaults["learning_rate"].default)
    assert recipe_defaults("MiniLM") == recipe_defaults("minilm") != recipe_defaults("bert-base-uncased")


def test_data_too_small_for_a_test_split_is_refused_before_training(
    tokenizer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    two = tmp_path / "two.csv"
    pd.DataFrame({"body": ["hello world", "bye world"], "category": ["a", "b"]}).to_csv(two, index=False)
    args = ["finetune", "--model", str(tmp_path / "nowhere"), "--dataset", str(two), "--text-column", "body",
            "--label-column", "category", "--cache-dir", str(tmp_path), "--quiet"]  # fmt: skip
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "an empty validation split of" in err and "pass a larger file, or a mapping" in err, err
    assert not (tmp_path / "models").exists()


def test_bad_arguments_fail_before_any_work(tmp_path: Path) -> None:
    with pytest.raises(InvalidParameterError, match=r"'learning_rate' parameter of finetune"):
        finetune("minilm", "bbc_news", learning_rate=5.0, cache_dir=tmp_path)
    with pytest.raises(InvalidParameterError, match=r"'model' parameter of finetune"):
        finetune(3, "bbc_news", cache_dir=tmp_path)  # type: ignore[arg-type]
    assert not (tmp_path / "models").exists()
    (tmp_path / "empty").mkdir()
    with pytest.raises(
        InvalidParameterError, match=r"'model' parameter of finetune.*Loading its tokenizer failed"
    ):
        finetune(tmp_path / "empty", "bbc_news", cache_dir=tmp_path, n_eval=2, progress=False)


def test_a_one_class_label_column_is_refused_before_training(
    tokenizer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one = tmp_path / "one.csv"
    pd.DataFrame({"Content": [f"tweet {i}" for i in range(30)], "Author": ["trump"] * 30}).to_csv(
        one, index=False
    )
    options = {"text_column": "Content", "label_column": "Author"}
    with pytest.raises(
        InvalidParameterError, match=r"label column 'Author' of .*one\.csv holds one class \('trump'\)"
    ):
        finetune(tmp_path / "nowhere", one, dataset_options=options, cache_dir=tmp_path, progress=False)
    assert not (tmp_path / "models").exists()  # refused before any model is loaded or written
    args = ["finetune", "--model", str(tmp_path / "nowhere"), "--dataset", str(one), "--text-column", "Content",
            "--label-column", "Author", "--cache-dir", str(tmp_path), "--quiet"]  # fmt: skip
    assert main(args) == 1
    captured = capsys.readouterr()
    assert "holds one class ('trump') in 30 rows: a classifier needs at least two" in captured.err
    assert "test accuracy" not in captured.out


def test_quiet_flags_and_tqdm_disable_silence_every_bar(data_file, tokenizer, tmp_path: Path) -> None:
    """A real ``xaimetrics finetune`` process: its stderr holds bars without the flags, none with them."""
    import os
    import subprocess
    import sys

    base = _save_base("bert", tmp_path / "base", tokenizer)
    src = Path(__file__).resolve().parents[2] / "src"
    env = {**os.environ, "PYTHONPATH": str(src), "XAIMETRICS_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("TQDM_DISABLE", None)
    common = [sys.executable, "-m", "xaimetrics.cli", "finetune", "--model", str(base), "--dataset", str(data_file),
              "--text-column", "review", "--label-column", "stars", "--n-train", "48", "--batch-size", "8",
              "--max-length", "16", "--n-eval", "0", "--device", "cpu"]  # fmt: skip

    def stderr(name: str, *extra: str, **variables: str) -> str:
        command = [*common, "--output", str(tmp_path / name), *extra]
        result = subprocess.run(
            command, capture_output=True, text=True, env={**env, **variables}, timeout=300
        )
        assert result.returncode == 0, result.stderr
        assert "test accuracy" in result.stdout
        return result.stderr

    loud = stderr("loud")
    assert "fine-tuning" in loud and "%|" in loud  # the bar the flags must silence
    for name, extra, variables in (
        ("quiet", ("--quiet",), {}), ("no-progress", ("--no-progress",), {}), ("env", (), {"TQDM_DISABLE": "1"}),
    ):  # fmt: skip
        silent = stderr(name, *extra, **variables)
        for bar in ("%|", "it/s", "fine-tuning", "Loading weights", "Writing model shards", "batch/s"):
            assert bar not in silent, f"{name}: {bar!r} in {silent!r}"


@pytest.mark.parametrize(
    ("labels", "why"),
    [
        (["sports, world", "tech"], "commas"),  # benchmark run's check
        (["Sci/Tech", "sci-tech"], "names that differ in their letters or digits"),  # ConSim prompts' check
    ],
)
def test_class_names_that_consim_refuses_are_refused_before_training(
    tokenizer, tmp_path: Path, capsys: pytest.CaptureFixture[str], labels: list[str], why: str
) -> None:
    """Before: finetune trained (about a minute) on class names that consim and benchmark run then refused."""
    data = tmp_path / "classes.csv"
    pd.DataFrame(
        {"text": [f"text number {i}" for i in range(60)], "label": [labels[i % 2] for i in range(60)]}
    ).to_csv(data, index=False)
    with pytest.raises(
        InvalidParameterError, match=rf"'class names of .*classes\.csv' parameter of finetune.*{why}"
    ):
        finetune(tmp_path / "nowhere", data, cache_dir=tmp_path, progress=False)
    assert not (tmp_path / "models").exists()  # refused before any model is loaded or written
    args = ["finetune", "--model", str(tmp_path / "nowhere"), "--dataset", str(data), "--cache-dir", str(tmp_path),
            "--quiet"]  # fmt: skip
    assert main(args) == 1
    assert "parameter of finetune" in capsys.readouterr().err
