"""Concept records of a fitted explanation, against the extractor's own numbers; JSON and CSV files."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from xaimetrics.concepts import PCA
from xaimetrics.consim import Explanation
from xaimetrics.consim._export import concept_records, export_concepts
from xaimetrics.exceptions import InvalidParameterError

TEXTS = ["t0", "t1", "t2", "t3", "t4"]
A = np.array([[2.0, 0.1, 0.0], [0.0, 1.0, 0.3], [1.0, 0.1, 0.2], [0.1, 0.2, 2.0], [1.5, 1.5, 0.0]])
PHI = np.array([[0.2, -0.6], [0.8, 0.1]])


def _explanation() -> Explanation:
    extractor = PCA(n_concepts=2).fit(A)
    return Explanation(
        extractor=extractor,
        interpretation={0: ["big"], 1: ("odd", "even")},
        activations=A,
        global_importances=PHI,
    )


def test_records_hold_the_extractors_directions_top_texts_and_importances() -> None:
    explanation = _explanation()
    records = concept_records(explanation, TEXTS, ["neg", "pos"], n_texts=3)
    scores = np.asarray(explanation.extractor.encode(A))  # type: ignore[union-attr]
    for k, record in enumerate(records):
        assert record["concept"] == k
        order = np.argsort(-scores[:, k], kind="stable")[:3]
        assert [t["text"] for t in record["top_texts"]] == [TEXTS[i] for i in order]
        assert [t["activation"] for t in record["top_texts"]] == pytest.approx(scores[order, k].tolist())
        assert record["direction"] == pytest.approx(np.asarray(explanation.extractor.components_)[k].tolist())  # type: ignore[union-attr]
        assert record["importance"] == {"neg": PHI[0, k], "pos": PHI[1, k]}
    assert records[0]["description"] == ["big"] and records[1]["description"] == ["odd", "even"]


def test_json_and_csv_files_hold_the_same_records(tmp_path: Path) -> None:
    records = concept_records(_explanation(), TEXTS, ["neg", "pos"], n_texts=2)
    as_json = json.loads(export_concepts(records, tmp_path / "out" / "c.json").read_text(encoding="utf-8"))
    assert as_json == json.loads(json.dumps(records))
    with export_concepts(records, tmp_path / "c.CSV").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [int(r["concept"]) for r in rows] == [0, 1]
    assert json.loads(rows[1]["importance"]) == records[1]["importance"]
    assert json.loads(rows[0]["top_texts"]) == records[0]["top_texts"]


def test_bad_inputs_are_named(tmp_path: Path) -> None:
    with pytest.raises(
        InvalidParameterError, match="'path' parameter of export_concepts must be a file ending"
    ):
        export_concepts([], tmp_path / "c.txt")
    with pytest.raises(InvalidParameterError, match="'texts' parameter of export_concepts must be the 5"):
        concept_records(_explanation(), TEXTS[:4], ["neg", "pos"])
    with pytest.raises(InvalidParameterError, match="a fitted explanation"):
        concept_records(Explanation(), TEXTS, ["neg", "pos"])
