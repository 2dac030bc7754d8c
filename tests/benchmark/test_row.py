"""The result row: one type declares the store's columns, the CSV export, the study export and the report's table."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from xaimetrics.benchmark import ResultRow, ResultsStore
from xaimetrics.benchmark._grid import Setting
from xaimetrics.benchmark._group import setting_row
from xaimetrics.benchmark._row import summed
from xaimetrics.consim import PromptSetting, render_prompt, score_response
from xaimetrics.exceptions import InvalidParameterError, StoreError

#: the header of results.csv, pinned: reports, notebooks and the demo's check read these names in this order
RESULTS_CSV_HEADER = (
    "key,dataset,model,method,n_concepts,interpretation,prompt_type,anonymized,seed,simulator,phase,"
    "is_upper_bound,score,n_samples,n_parsed,n_missing,n_invalid,prompt_tokens,completion_tokens,cost_usd,"
    "latency_s,cached,error,expected_accuracy,log_loss,brier,majority_share,degenerate,n_concepts_shown,scoring,"
    "cached_prompt_tokens,class_counts,created_at"
)
SRC = Path(__file__).parents[2] / "src"


def _result(answer: str, kind: str = "E2"):
    prompt = render_prompt(
        kind, class_names=["no", "yes"], lp_samples=["x"], lp_predictions=[1], ep_samples=["a", "b", "c"],
        ep_predictions=[1, 0, 1], interpretation={3: ["good"]}, global_importances=[[0.0], [1.0]],
        concept_ids=[3], lp_local_importances=[[0.5]], ep_local_importances=[[0.5], [0.1], [0.2]],
    )  # fmt: skip
    return score_response(prompt, answer, seed=4)


SETTING = Setting("toy", "m", "NMF", 3, "top_words", PromptSetting.parse("E2-a"), 4, "lexical")


def test_the_columns_are_the_results_csv_header(tmp_path: Path) -> None:
    assert ",".join(("key", *ResultRow.columns(), "created_at")) == RESULTS_CSV_HEADER
    with ResultsStore(tmp_path / "r.sqlite") as store:
        row, payload = setting_row(SETTING, _result("Sample_1: yes\nSample_2: no\nSample_3: no"))
        assert store.add(SETTING.key, row, payload)
        store.export(tmp_path / "r.csv")
    with open(tmp_path / "r.csv", newline="") as handle:
        header, values = list(csv.reader(handle))
    assert ",".join(header) == RESULTS_CSV_HEADER
    stored = dict(zip(header, values, strict=True))
    assert (
        stored["prompt_type"] == "E2"
        and stored["anonymized"] == "1"
        and stored["score"] == "0.6666666666666666"
    )
    assert stored["n_concepts_shown"] == "1" and stored["scoring"] == "accuracy" and stored["error"] == ""


def test_a_row_of_one_result_is_the_setting_and_the_result() -> None:
    result = _result("Sample_1: yes\nSample_2: yes")
    row, payload = setting_row(SETTING, result)
    assert row.as_dict() == {
        **SETTING.params(), "is_upper_bound": False, "score": result.score, "n_samples": 3, "n_parsed": 2,
        "n_missing": 1, "n_invalid": 0, "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0.0,
        "latency_s": 0.0, "cached": False, "error": None, "expected_accuracy": None, "log_loss": None,
        "brier": None, "majority_share": result.majority_share, "degenerate": result.degenerate,
        "n_concepts_shown": 1, "scoring": "accuracy", "cached_prompt_tokens": 0,
        "class_counts": '{"no": {"answered": 0, "hits": 0, "n": 1}, "yes": {"answered": 2, "hits": 1, "n": 2}}',
    }  # fmt: skip
    assert payload == {"setting": SETTING.params(), "result": result.to_dict()}
    u1 = setting_row(SETTING, _result("Sample_1: yes\nSample_2: no\nSample_3: yes", "U1"))[0]
    assert u1.is_upper_bound and u1.score == 1.0  # the upper bound's accuracy, flagged


def test_a_row_of_several_results_averages_scores_and_sums_counts() -> None:
    """A human study arm: one result per participant, one row."""
    results = [_result("Sample_1: yes\nSample_2: no\nSample_3: yes"), _result("Sample_1: no")]
    row = ResultRow.of({**SETTING.params(), "simulator": "human", "study": "ignored"}, results)
    assert row.score == pytest.approx((1.0 + 0.0) / 2) and row.n_samples == 6 and row.n_missing == 2
    assert row.simulator == "human" and row.error is None and not row.cached
    assert json.loads(row.class_counts) == {  # summed exactly over the participants
        "no": {"n": 2, "hits": 1, "answered": 2}, "yes": {"n": 4, "hits": 2, "answered": 2},
    }  # fmt: skip
    with pytest.raises(InvalidParameterError, match="at least one ConSimResult"):
        ResultRow.of(SETTING.params(), [])
    with pytest.raises(InvalidParameterError, match="a value for the 'seed' column"):
        ResultRow.of({k: v for k, v in SETTING.params().items() if k != "seed"}, results)


@dataclass(frozen=True)
class _WithHedged(ResultRow):
    n_hedged: int = field(default=0, metadata=summed("n_hedged"))


def test_a_store_of_a_row_type_with_one_more_field(tmp_path: Path) -> None:
    result = _result("Sample_1: yes or no\nSample_2: no")
    row = _WithHedged.of(SETTING.params(), [result])
    assert row.n_hedged == 1 and _WithHedged.columns()[-1] == "n_hedged"
    with ResultsStore(tmp_path / "r.sqlite", row_type=_WithHedged) as store:
        store.add("k", row)
        assert store.to_frame()["n_hedged"].tolist() == [1]
        with pytest.raises(InvalidParameterError, match="a _WithHedged"):
            store.add("k2", setting_row(SETTING, result)[0])
    with pytest.raises(StoreError, match="missing: none; unknown: \\['n_hedged'\\]"):
        ResultsStore(tmp_path / "r.sqlite")  # the plain row type does not open it: no silent migration


@pytest.mark.slow
def test_adding_a_field_is_one_edit(tmp_path: Path) -> None:
    """One line added to ResultRow (in a copy of the package) reaches the store, results.csv and the report of a
    grid run, through the runner, the store's schema, the export and the report's table of settings."""
    copy = tmp_path / "src"
    shutil.copytree(SRC / "xaimetrics", copy / "xaimetrics", ignore=shutil.ignore_patterns("__pycache__"))
    row_module = copy / "xaimetrics" / "benchmark" / "_row.py"
    text = row_module.read_text(encoding="utf-8")
    anchor = '    class_counts: str = field(default="{}", metadata={_REDUCE: _class_counts})\n'  # the last
    assert text.count(anchor) == 1
    edit = '    n_hedged: int = field(default=0, metadata=summed("n_hedged"))\n'
    row_module.write_text(text.replace(anchor, anchor + edit), encoding="utf-8")
    script = """
import sys
from pathlib import Path
from toy_grid import PROVIDERS, toy_grid
from xaimetrics.benchmark import ResultsStore, run_grid, write_report
out = Path(sys.argv[1])
grid = toy_grid(methods=("NMF", "PCA", "NoExplanation"), prompt_types=("NE2", "E2"), simulators=("lexical",))
run_grid(grid, out / "results.sqlite", providers=PROVIDERS, progress=False)
with ResultsStore(out / "results.sqlite") as store:
    store.export(out / "results.csv")
    write_report(store.to_frame(), out / "report", grid=grid.to_dict())
"""
    tests = Path(__file__).parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(copy), str(tests), str(tests / "benchmark")])}
    env["XAIMETRICS_CACHE_DIR"] = str(tmp_path / "cache")
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)], env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    header = (tmp_path / "results.csv").read_text(encoding="utf-8").splitlines()[0]
    assert header == RESULTS_CSV_HEADER.replace(",created_at", ",n_hedged,created_at")
    md = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert "| class_counts | n_hedged |" in md
    assert "<th>n_hedged</th>" in (tmp_path / "report" / "report.html").read_text(encoding="utf-8")
