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
