"""The metric registry: every metric a family exports has an entry, the entries agree with the classes' own
``higher_is_better``, the docs table is the registry's, and the ``metrics`` command prints it."""

from __future__ import annotations

import importlib
import inspect
import json
import math
import re
from pathlib import Path

import pytest

import xaimetrics
from xaimetrics import METRICS, MetricInfo, metrics
from xaimetrics._metric_listing import metrics_table
from xaimetrics._metric_registry import FAMILIES
from xaimetrics.cli import main
from xaimetrics.exceptions import InvalidParameterError

DOCS = Path(__file__).resolve().parents[1] / "docs" / "metrics.md"
START, END = "<!-- metrics-table:start -->", "<!-- metrics-table:end -->"

#: public callables of each family that are not metrics (estimators, containers, results, helpers, reports).
#: A new public callable must be either here or in a registry entry: a metric that forgets its entry fails.
NOT_METRICS: dict[str, set[str]] = {
    "fidelity": {"attribute", "plot_curves"},
    "conceptmetrics": {"Annotations", "ConceptMetrics"},
    "concepts": {
        "ICA", "NMF", "PCA", "SAE", "SVD", "NoProjection", "ConceptExtractor", "ConceptInterpretation", "TopWords",
        "ExtractorKind", "WordTokenizer", "concept_metrics", "global_importance", "importance_bucket", "local_importance",
        "make_extractor", "normalize_importance",
    },
    "representation": {
        "AlphaResult", "InterpretabilityReport", "ReferenceCorpus", "analyze_ratings", "check_regression",
        "encode_words", "evaluate_interpretability",
    },
    "detection": {"WordOverlapReader", "legibility_table"},
    "consim": {
        "BalanceKind", "ConSimPrompt", "ConSimResult", "ConSimSamples", "Explanation", "InterpretationKind", "LLMLabels",
        "PromptContent", "PromptSetting", "PromptType", "ScoringKind",
        "RandomWords", "Scoring", "SurrogateWords", "build_prompts", "global_importances_of", "interpret_concepts",
        "make_control", "per_class_scores", "prompt_label", "render_prompt", "select_examples",
    },
}  # fmt: skip


def public_callables(family: str) -> set[str]:
    module = importlib.import_module(f"xaimetrics.{family}")
    return {
        name
        for name in module.__all__
        if inspect.isclass(getattr(module, name)) or inspect.isroutine(getattr(module, name))
    }


@pytest.mark.parametrize("family", FAMILIES)
def test_every_public_metric_of_a_family_has_an_entry(family: str) -> None:
    registered = {
        path.rpartition(".")[2]
        for info in METRICS.values()
        if info.family == family
        for path in info.callables
    }
    missing = public_callables(family) - registered - NOT_METRICS[family]
    assert not missing, f"add a block to xaimetrics/_metric_entries/{family}.txt for: {sorted(missing)}"
    assert not registered & NOT_METRICS[family]
    exported = set(importlib.import_module(f"xaimetrics.{family}").__all__)
    assert not NOT_METRICS[family] - exported, "a name listed as not a metric is no longer exported"


@pytest.mark.parametrize("name", METRICS.names())
def test_every_entry_resolves_and_agrees_with_the_class(name: str) -> None:
    info = METRICS.get(name)
    assert info.name == name
    for value in info.resolve():
        assert value.__name__ in importlib.import_module(f"xaimetrics.{info.family}").__all__
        declared = getattr(value, "higher_is_better", "absent") if inspect.isclass(value) else "absent"
        if declared != "absent":
            assert declared == info.higher_is_better, (name, value)
    low, high = info.range
    assert low <= high and info.data and info.category


def test_directions_users_get_wrong() -> None:
    assert METRICS.get("deletion").direction == "lower" and METRICS.get("insertion").direction == "higher"
    assert METRICS.get("aopc_sufficiency").higher_is_better is False
    assert METRICS.get("cace").higher_is_better is None
    assert METRICS.get("number_of_effective_concepts").direction_text == "lower is better"
    assert METRICS.get("residual_concept_causal_effect").range_text == "(-∞, ∞)"


def test_the_docs_table_is_the_registry() -> None:
    text = DOCS.read_text(encoding="utf-8")
    table = text.split(START, 1)[1].split(END, 1)[0].strip()
    assert table == metrics_table(), "regenerate it: xaimetrics metrics > table, paste between the markers"


def test_metrics_frame_and_family_filter() -> None:
    frame = metrics()
    assert list(frame.columns) == [
        "name", "family", "direction", "range", "data", "category", "reference", "callables", "description",
    ]  # fmt: skip
    assert len(frame) == len(METRICS) and set(frame["family"]) == set(FAMILIES)
    concepts = metrics("conceptmetrics").set_index("name")
    assert concepts.loc["tcav_score", "direction"] == "neither"
    assert concepts.loc["intervention_score", "callables"] == (
        "xaimetrics.conceptmetrics.intervention_score, xaimetrics.conceptmetrics.intervention_curve"
    )
    with pytest.raises(InvalidParameterError, match=r"'family' parameter of metrics must be one of fidelity"):
        metrics("fidelty")


def test_a_new_entry_reaches_the_listing_and_bad_entries_are_refused() -> None:
    info = MetricInfo(
        family="fidelity", direction="lower", range=(0, math.inf), data=("tensor",), category="robustness",
        callables=("xaimetrics.fidelity.Deletion",), reference="captum",
    )  # fmt: skip
    with METRICS.temporarily("made_up_metric", info, description="largest explanation change"):
        row = metrics("fidelity").set_index("name").loc["made_up_metric"]
        assert (row["direction"], row["range"], row["reference"]) == ("lower", "[0, ∞)", "captum")
    assert "made_up_metric" not in METRICS
    bad = {
        "direction": ("up", r"'direction' parameter of metric 'x' must be one of higher, lower, neither"),
        "category": ("speed", r"'category' parameter of metric 'x' must be one of faithfulness"),
        "data": (("audio",), r"'data' parameter of metric 'x' must be a non-empty tuple of text"),
        "range": ((1, 0), r"'range' parameter of metric 'x' must be \(low, high\) with low ≤ high"),
        "callables": (("numpy.mean",), r"'callables' parameter of metric 'x' must be public import paths"),
    }
    for field, (value, message) in bad.items():
        fields = {**info.__dict__, field: value}
        fields.pop("name")
        with pytest.raises(InvalidParameterError, match=message):
            METRICS.register("x", MetricInfo(**fields))
    assert "x" not in METRICS


def test_the_metrics_command(capsys) -> None:
    assert main(["metrics", "--family", "conceptmetrics"]) == 0
    out = capsys.readouterr().out
    assert out.strip() == metrics_table("conceptmetrics")
    assert re.search(r"^\| number_of_effective_concepts \| conceptmetrics \| lower \| \[0, ∞\) \|", out, re.M)
    assert main(["metrics", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in rows] == list(METRICS.names())
    deletion = next(r for r in rows if r["name"] == "deletion")
    assert deletion["direction"] == "lower" and deletion["range"] == [0, 1]
    assert next(r for r in rows if r["name"] == "logits_kl")["range"] == [0, None]  # ∞ is not JSON


def test_importing_the_registry_stays_cheap() -> None:
    import os
    import subprocess
    import sys

    code = "import sys, xaimetrics; print(len(xaimetrics.METRICS), 'torch' in sys.modules, 'pandas' in sys.modules)"
    env = {**os.environ, "PYTHONPATH": str(Path(xaimetrics.__file__).parents[1])}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    ).stdout.split()
    assert out == [str(len(METRICS)), "False", "False"]
    assert xaimetrics.__all__ == ["METRICS", "MetricInfo", "__version__", "metrics"]


def test_a_malformed_table_is_refused_with_its_line() -> None:
    from xaimetrics._metric_registry import read_entries

    good = "name: x\ndirection: lower\nrange: 0, 1\ndata: text\ncategory: faithfulness\ncallables: X\ndescription: d\n"
    (entry,) = read_entries("fidelity", "# a comment\n\n" + good)
    assert entry.info.reference == "" and entry.info.range == (0, 1)
    with pytest.raises(InvalidParameterError, match=r"line 2: 'direction lower'.*Write each field once"):
        read_entries("fidelity", good.replace("direction: lower", "direction lower"))
    with pytest.raises(InvalidParameterError, match=r"line 8: 'name: y'"):
        read_entries(
            "fidelity", good + "name: y\n"
        )  # a second name in the same block: a blank line is missing
    with pytest.raises(InvalidParameterError, match=r"metric 'x' of fidelity.*no category"):
        read_entries("fidelity", good.replace("category: faithfulness\n", ""))
