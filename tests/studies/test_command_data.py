"""``xaimetrics study create`` on a user's own file: the data options of every other command (issue 23)."""

from __future__ import annotations

import json
from pathlib import Path

from toy_grid import toy_dataset

from xaimetrics import cli
from xaimetrics.studies import load_study


def _jsonl(path: Path) -> Path:
    """The toy topic texts (350) as JSON Lines with the keys "Content" (text) and "Topic" (class name)."""
    lines = []
    for split in ("train", "test"):
        data = toy_dataset(split)
        lines += [
            json.dumps({"Content": text, "Topic": data.class_names[label]})
            for text, label in zip(data.texts, data.labels, strict=True)
        ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_study_create_reads_a_file_with_any_column_names(tmp_path: Path, capsys) -> None:
    data = _jsonl(tmp_path / "topics.jsonl")
    common = ["study", "create", "simulatability", "--dataset", str(data), "--model", "toy", "--methods",
              "NoExplanation", "--prompt-types", "NE2", "--seeds", "0", "--n-lp", "3", "--n-ep", "3",
              "--providers", "toy_grid:PROVIDERS", "--output", str(tmp_path / "study.json")]  # fmt: skip
    assert cli.main(common) == 1  # no usual column name: refused before any work, naming the file's columns
    assert "'text_column' parameter of load_dataset" in capsys.readouterr().err
    code = cli.main([*common, "--text-column", "Content", "--label-column", "Topic"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    study = load_study(tmp_path / "study.json")
    assert [arm.id for arm in study.arms] == ["NoExplanation/NE2/seed0"]
    texts = {line["Content"] for line in map(json.loads, data.read_text(encoding="utf-8").splitlines())}
    shown = [sample.text for group in study.samples for sample in (*group.lp, *group.ep)]
    assert shown and set(shown) <= texts  # the samples are the file's texts, read from its "Content" key
