"""The report follows the document's template, escapes text in HTML, and saves JSON a baseline can read."""

from __future__ import annotations

import json

import numpy as np
import pytest

from xaimetrics.representation import (
    InterpretabilityReport,
    ReferenceCorpus,
    analyze_ratings,
    clustering_stability,
    dictionary_stability,
    dim_coherence,
    dimension_purity,
    evaluate_interpretability,
)
from xaimetrics.representation._regression import check_regression, load_metrics


@pytest.fixture
def report() -> InterpretabilityReport:
    corpus = ReferenceCorpus.from_texts(
        ["good great fun", "good fun", "bad awful", "awful bad boring", "fun plot"]
    )
    words = ["good", "great", "fun", "bad", "awful", "boring", "plot"]
    vectors = np.array([[0.9, 0.0], [0.8, 0.1], [0.7, 0.0], [0.0, 0.9], [0.1, 0.8], [0.0, 0.7], [0.1, 0.1]])
    coherence = dim_coherence(
        vectors, words, corpus, k=3, window_size=3, dimension_names=["<b>tone</b>", "x|y"]
    )
    rng = np.random.default_rng(0)
    cube = rng.integers(2, 6, size=(10, 3, 2)).astype(float)
    return InterpretabilityReport(
        model="toy",
        version="0.2.0",
        dataset="toy corpus, 5 texts",
        date="2025-01-19",
        coherence=coherence,
        stability=clustering_stability([[0, 0, 1, 1, 2, 2], [0, 0, 1, 1, 2, 1]]),
        dictionary=dictionary_stability([np.eye(3), np.eye(3)[[1, 0, 2]]], n_baseline=2),
        purity=dimension_purity(rng.normal(size=(10, 2)), rng.integers(0, 2, size=10)),
        human=analyze_ratings(cube, dimension_names=["<b>tone</b>", "x|y"]),
    )


def test_markdown_follows_the_template(report):
    text = report.to_markdown()
    for heading in (
        "# Interpretability Report - toy 0.2.0",
        "Date: 2025-01-19",
        "Model Version: 0.2.0",
        "Evaluation Dataset: toy corpus, 5 texts",
        "## Automated Metrics",
        "### Dim-Coherence@3",
        "| Dimension | Score | Status |",
        "### Stability",
        "- ARI: ",
        "## Human Evaluation",
        "- Participants: 3 annotators",
        "- Examples: 10 texts",
        "| Dimension | Mean Rating | Agreement % |",
        "## Composite Score",
        "**Overall Interpretability: ",
        "## Recommendations",
    ):
        assert heading in text, heading
    c = report.coherence
    assert f"**Average: {c.mean:.2f}** (Target: > 0.40)" in text
    assert "| x\\|y |" in text  # a pipe in a name does not break the table
    assert f"Overall Interpretability: {report.composite.score:.2f}** ({report.composite.band})" in text


def test_html_escapes_names_and_is_standalone(report):
    page = report.to_html()
    assert page.startswith("<!DOCTYPE html>") and "</html>" in page
    assert "&lt;b&gt;tone&lt;/b&gt;" in page and "<b>tone</b>" not in page


def test_composite_uses_the_measured_parts(report):
    assert report.composite is not None
    assert set(report.composite.components) == {"coherence", "stability", "human"}
    assert report.composite.missing == ["consistency"]


def test_recommendations_name_weak_dimensions_and_readiness():
    corpus = ReferenceCorpus.from_texts(["a b", "c d", "a b", "c d"])
    coherence = dim_coherence(
        np.array([[1.0, 1.0], [0.9, 0.0], [0.0, 0.9], [0.1, 0.8]]),
        ["a", "b", "c", "d"],
        corpus,
        k=2,
        window_size=2,
    )
    # dimension 0's top words (a, b) always co-occur; dimension 1's (a, c) never do
    weak = InterpretabilityReport(coherence=coherence, target_version="v0.1").recommendations()
    assert weak[0]["title"].startswith("Dimension 1 shows weak coherence -1.00 (Poor)")
    assert "Inspect its top words (a, c)" in weak[0]["actions"][0]
    good = InterpretabilityReport(
        coherence=dim_coherence(
            np.array([[1.0], [0.9], [0.0], [0.1]]), ["a", "b", "c", "d"], corpus, k=2, window_size=2
        ),
        target_version="v0.3",
    ).recommendations()
    titles = [item["title"] for item in good]
    assert titles == ["All dimensions meet or exceed targets", "Model ready for the v0.3 release"]


def test_save_writes_three_files_and_the_json_is_a_baseline(report, tmp_path):
    paths = report.save(tmp_path / "out")
    assert sorted(p.name for p in paths.values()) == [
        "interpretability.html",
        "interpretability.json",
        "interpretability.md",
    ]
    data = json.loads(paths["json"].read_text())
    assert data["metrics"]["composite.score"] == pytest.approx(report.composite.score)
    assert data["results"]["human"]["alpha"]["level"] == "ordinal"
    assert load_metrics(paths["json"]).keys() == report.metrics().keys()
    assert not check_regression(report.metrics(), paths["json"]).detected
    report.regression = check_regression({**report.metrics(), "coherence.mean": -1.0}, paths["json"])
    assert "## Regression Check" in report.to_markdown() and "coherence.mean:" in report.to_markdown()


def test_evaluate_interpretability_runs_what_its_inputs_allow():
    corpus = ReferenceCorpus.from_texts(["good fun film", "good fun", "dull slow plot", "dull plot"])

    def encoder(texts):
        return [[sum(w in t for w in ("good", "fun")), sum(w in t for w in ("dull", "slow"))] for t in texts]

    texts = ["good fun", "dull plot", "fun", "so slow", "good", "dull"]
    report = evaluate_interpretability(
        encoder,
        texts,
        corpus,
        targets=[1, 0, 1, 0, 1, 0],
        vocabulary=corpus.frequent_words(min_count=1),
        k=2,
        window_size=3,
        other_runs=[np.array(encoder(texts)) * 2.0],
        n_clusters=2,
    )
    assert report.purity is None and "Purity was not measured" in report.notes[0]  # two classes: one factor
    assert report.stability.ari == 1.0  # the second run is a rescaled copy: the same clusters
    assert report.composite.missing == ["consistency", "human"]
    with_factors = evaluate_interpretability(
        encoder,
        texts,
        corpus,
        targets=np.array([[2, 0], [0, 1], [1, 0], [0, 1], [1, 0], [0, 1.0]]),
        vocabulary=corpus.frequent_words(min_count=1),
        k=2,
        window_size=3,
    )
    assert with_factors.purity.purity.shape == (2,)
