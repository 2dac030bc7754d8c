"""``xaimetrics finetune``'s command line: its options and defaults, and the per-class table it prints (the
fine-tuning runs through the CLI are in test_finetune.py)."""

from __future__ import annotations

import pytest

from xaimetrics.cli import build_parser, main
from xaimetrics.models._command import per_class_table


def test_the_options_reach_the_parser_with_the_documented_defaults() -> None:
    args = build_parser().parse_args(["finetune"])
    assert (args.model, args.dataset, args.config, args.positive, args.n_train, args.epochs) == (
        "minilm", "rotten_tomatoes", None, False, 3000, 1,
    )  # fmt: skip
    args = build_parser().parse_args(["finetune", "--model", "dir", "--positive", "--n-train", "0", "--json"])
    assert args.model == "dir" and args.positive and args.n_train == 0 and args.json


def test_a_bad_recipe_is_one_error_line_before_any_work(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["finetune", "--epochs", "0", "--no-progress"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("InvalidParameterError: The 'epochs' parameter of finetune")


def test_the_per_class_table_aligns_long_names_and_rounds() -> None:
    table = per_class_table({
        "entertainment": {"precision": 0.12345, "recall": 1.0, "f1": 0.2198, "support": 12.0},
        "tech": {"precision": 1.0, "recall": 0.0, "f1": 0.0, "support": 3},
    })  # fmt: skip
    lines = table.splitlines()
    assert lines[0] == "class          precision  recall     F1  support"
    assert lines[1] == "entertainment      0.123   1.000  0.220       12"
    assert lines[2] == "tech               1.000   0.000  0.000        3"
