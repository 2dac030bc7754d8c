"""Per-class scores through a grid run: a planted reader right on one class of f and wrong on the others."""

from __future__ import annotations

import json
import math

import pytest
from toy_grid import PROVIDER_KWARGS, TOPICS, MethodOracle, toy_grid

from xaimetrics.benchmark import Grid, Providers, ResultsStore, run_grid, write_report
from xaimetrics.benchmark._per_class import per_class_table
from xaimetrics.exceptions import InvalidParameterError

NAMES = list(TOPICS)  # the class names, class id order


class PlantedReader(MethodOracle):
    """With NMF's explanation: f's class on the samples f put in the first topic, a wrong class (never the first
    topic) on the others; without explanation: a wrong class everywhere."""

    name = "planted"

    def generate(self, messages, *, answer_schema=None):
        from xaimetrics.simulators import SimulatorResponse

        setting, prompt = self._plans["\n\n".join(m.content for m in messages)]
        k = len(prompt.shown_classes)
        lines = []
        for sample_id, reference in zip(prompt.sample_ids, prompt.references, strict=True):
            right = setting.method == "NMF" and reference == 0
            answer = reference if right else reference % (k - 1) + 1  # 0→1, 1→2, 2→1: never the first topic
            lines.append(f"Sample_{sample_id}: {prompt.shown_classes[answer]}")
        return SimulatorResponse("\n".join(lines), model="planted")


@pytest.fixture(scope="module")
def planted_results(tmp_path_factory):
    out = tmp_path_factory.mktemp("per_class")
    providers = Providers(**{**PROVIDER_KWARGS, "simulators": {"planted": PlantedReader}})
    options = toy_grid(
        methods=("NMF", "NoExplanation"), prompt_types=("NE2", "E2"), seeds=(0, 1, 2, 3)
    ).to_dict()
    grid = Grid(**{**options, "simulators": ("planted",)}, **providers.grid_extras())
    run_grid(grid, out / "results.sqlite", providers=providers, progress=False)
    with ResultsStore(out / "results.sqlite") as store:
        return store.to_frame(), out


def test_the_rows_store_exact_per_class_counts(planted_results) -> None:
    results, _ = planted_results
    nmf = results[results["method"] == "NMF"].iloc[0]
    counts = json.loads(nmf["class_counts"])
    first = counts[NAMES[0]]
    assert first["hits"] == first["n"] == first["answered"] > 0
    assert all(counts[t]["hits"] == 0 for t in NAMES[1:] if t in counts)
    assert sum(c["n"] for c in counts.values()) == nmf["n_samples"]


def test_the_table_shows_the_class_the_explanation_helps(planted_results) -> None:
    results, _ = planted_results
    table = per_class_table(results)
    first = NAMES[0]
    assert table.loc[("NMF", first), "recall"] == 1.0 and table.loc[("NMF", first), "precision"] == 1.0
    assert table.loc[("NMF", first), "gain"] == pytest.approx(1.0)  # NoExplanation: 0 on every seed
    others = table.loc["NMF"].drop(index=first)
    assert len(others) == 2 and (others["recall"] == 0.0).all()
    assert (others["gain"].dropna() == 0.0).all() and others["gain"].notna().any()
    assert (table["recall_low"].dropna() >= 0).all() and (table["recall_high"].dropna() <= 1).all()
    assert table.loc[("NoExplanation", first), "recall"] == 0.0
    assert math.isnan(table.loc[("NoExplanation", first), "gain"])
    assert (table["n_seeds"] == 4).all()
    few = table["n_samples"] < 10  # f predicts the toy topics unevenly
    assert few.any() and (table["note"] == few.map({True: "too few samples", False: ""})).all()
    assert table.loc[few, "gain"].isna().all() and table.loc[few, "recall_low"].isna().all()
    strict = per_class_table(results, min_samples=int(table["n_samples"].max()) + 1)
    assert (strict["note"] == "too few samples").all() and strict["gain"].isna().all()
    with pytest.raises(InvalidParameterError, match="'class_counts' column"):
        per_class_table(results.drop(columns="class_counts"))


def test_the_report_has_a_per_class_table_per_method(planted_results) -> None:
    results, out = planted_results
    paths = write_report(results, out / "report")
    text = paths["report_md"].read_text(encoding="utf-8")
    assert "## Per class: NMF" in text and "## Per class: NoExplanation" in text
    assert "Too few samples to say anything (under 10 over the seeds, or one seed): " in text
    assert "Per class: NMF" in paths["report_html"].read_text(encoding="utf-8")
