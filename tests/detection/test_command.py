"""``xaimetrics detection`` in-process on the synthetic groups task: rows, report, resume, errors."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from synthetic_task import group_dataset, group_model

from xaimetrics.benchmark import Providers
from xaimetrics.cli import build_parser, main
from xaimetrics.detection._command import run
from xaimetrics.exceptions import StoreError


def _args(output: Path, *extra: str) -> object:
    return build_parser().parse_args([
        "detection", "--output", str(output), "--dataset", "groups", "--method", "NMF", "--n-concepts", "5",
        "--n-fit", "400", "--concepts", "5", "--readers", "lexical", "--n-top", "5", "--n-quantile", "5",
        "--n-random", "10", "--n-hard", "10", "--no-progress", "--no-cache", *extra,
    ])  # fmt: skip


def _providers() -> Providers:
    return Providers(datasets={"groups": group_dataset}, models={"minilm+": group_model})


def test_detection_command_writes_rows_and_report_and_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    assert run(_args(tmp_path, "--fuzzing"), _providers()) == 0
    frame = pd.read_csv(tmp_path / "rows.csv")
    detection = frame[frame.task == "detection"]
    assert set(detection.description) == {"own", "shuffled"} and set(detection.negatives) == {
        "random",
        "hard",
    }
    assert detection.concept.nunique() == 5 and (frame[frame.task == "fuzzing"].negatives == "fuzzed").all()
    # NMF on the group counts finds the groups: the word reader reads most concepts
    own = detection[(detection.description == "own") & (detection.negatives == "random")]
    assert own.value.median() >= 0.9
    out = capsys.readouterr().out
    assert "Which concepts are legible — detection, reader lexical" in out and "| concept | words |" in out
    assert (tmp_path / "detection.html").read_text().count("<table") >= 3
    assert (tmp_path / "answers.jsonl").read_text().count("\n") >= 5 * 2 * 30
    # a rerun scores nothing again: the rows are unchanged
    assert run(_args(tmp_path, "--fuzzing"), _providers()) == 0
    assert len(pd.read_csv(tmp_path / "rows.csv")) == len(frame)
    assert "to score" not in capsys.readouterr().err


def test_other_settings_in_the_same_folder_are_refused(tmp_path: Path) -> None:
    assert run(_args(tmp_path), _providers()) == 0
    with pytest.raises(StoreError, match=r"other settings \(prompt: .*use another --output"):
        run(_args(tmp_path, "--prompt", "topic"), _providers())


def test_bad_arguments_print_one_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["detection", "--output", str(tmp_path), "--prompt", "poem", "--no-progress"]) == 1
    assert capsys.readouterr().err.startswith("InvalidParameterError: The '--prompt' parameter")
