"""Trained − random for per-concept detection scores (issue #30, item 2): the same pipeline on a random model."""

from __future__ import annotations

import math

import numpy as np
import pytest
from synthetic_task import GROUPS, GroupExtractor, GroupModel, make_texts

from xaimetrics.concepts import TopWords
from xaimetrics.detection import Detection, WordOverlapReader, legibility_table
from xaimetrics.detection._statistics import random_baseline
from xaimetrics.exceptions import InvalidParameterError


class RandomGroupModel(GroupModel):
    """The synthetic model with its weights re-drawn: ``h`` mixes the group and filler features at random."""

    def __init__(self, seed: int) -> None:
        self.mixing = np.random.default_rng(seed).normal(size=(len(GROUPS) + 8, len(GROUPS) + 8))

    def activations(self, texts: list[str]) -> np.ndarray:
        return super().activations(texts) @ self.mixing


def _rows(model: GroupModel, texts: list[str], seed: int) -> tuple[list[dict], dict]:
    extractor = GroupExtractor()
    interpretations = TopWords(model, extractor, n_words=5, min_frequency=2).fit(texts).interpret()
    A = model.activations(texts)
    result = Detection(WordOverlapReader(), n_hard=0, seed=seed).evaluate(
        extractor.encode(A), texts, interpretations
    )
    return [{**row, "seed": seed} for row in result.rows], interpretations


@pytest.fixture(scope="module")
def fits() -> dict[str, list[dict]]:
    texts = make_texts()
    trained, random = [], []
    for seed in range(5):
        trained += _rows(GroupModel(), texts, seed)[0]
        random += _rows(RandomGroupModel(seed), texts, seed)[0]
    return {"trained": trained, "random": random}


def test_planted_concepts_are_legible_and_their_random_twins_are_not(fits: dict[str, list[dict]]) -> None:
    trained, random = fits["trained"], fits["random"]
    table = random_baseline(trained, random)
    row = table.iloc[0]
    assert (row["metric"], row["negatives"], row["units"], row["n_units"]) == ("auroc", "random", "seed", 5)
    assert row["difference"] > 0.2 and row["low"] > 0 and row["p_value"] == pytest.approx(1 / 32)
    seed0 = legibility_table([r for r in trained if r["seed"] == 0])
    random0 = legibility_table([r for r in random if r["seed"] == 0])
    assert seed0["legible"].all() and random0["legible"].mean() < seed0["legible"].mean()
    with_random = legibility_table(
        [r for r in trained if r["seed"] == 0], random_rows=[r for r in random if r["seed"] == 0]
    )
    assert (with_random["over_random_low"] > 0).all()
    mean = random0["auroc"].mean()
    assert with_random["over_random"].to_numpy() == pytest.approx(seed0["auroc"].to_numpy() - mean)


def _row(seed: int, concept: int, value: float, description: str = "own") -> dict:
    return {"concept": concept, "description": description, "negatives": "random", "value": value, "seed": seed,
            "metric": "auroc"}  # fmt: skip


def test_paired_over_seeds_matches_a_hand_computed_t_interval() -> None:
    from scipy import stats

    trained = [_row(s, c, v) for s, c, v in [(0, 0, .9), (0, 1, .7), (1, 0, .8), (1, 1, .85), (2, 0, .95), (2, 1, .6),
                                             (3, 0, .75), (3, 1, .8)]]  # fmt: skip
    random = [_row(s, c, v) for s, c, v in [(0, 0, .5), (0, 1, .6), (0, 2, .55), (1, 0, .7), (2, 0, .5), (2, 1, .65),
                                            (3, 0, .8), (3, 1, .85)]]  # fmt: skip
    trained.append(_row(0, 0, 0.1, "shuffled"))  # not the concept's own description: ignored
    d = np.array([0.8 - 0.55, 0.825 - 0.7, 0.775 - 0.575, 0.775 - 0.825])
    half = stats.t.ppf(0.975, 3) * d.std(ddof=1) / 2
    row = random_baseline(trained, random).iloc[0]
    assert row["difference"] == pytest.approx(d.mean()) and row["n_units"] == 4
    assert (row["low"], row["high"]) == pytest.approx((d.mean() - half, d.mean() + half))
    assert row["p_value"] == pytest.approx(2 / 16)  # 3 of 4 positive; the exact flips at least as large


def test_one_fit_compares_the_concepts_unpaired_with_welchs_interval() -> None:
    x, y = np.array([0.9, 0.8, 0.95, 0.7]), np.array([0.5, 0.65, 0.55])
    table = random_baseline(
        [_row(0, c, v) for c, v in enumerate(x)], [_row(0, c, v) for c, v in enumerate(y)]
    )
    row = table.iloc[0]
    vx, vy = x.var(ddof=1) / 4, y.var(ddof=1) / 3
    df = (vx + vy) ** 2 / (vx**2 / 3 + vy**2 / 2)
    from scipy import stats

    half = stats.t.ppf(0.975, df) * math.sqrt(vx + vy)
    diff = x.mean() - y.mean()
    assert row["units"] == "concept (one fit)" and row["n_units"] == 7
    assert (row["low"], row["high"]) == pytest.approx((diff - half, diff + half))
    assert row["p_value"] == pytest.approx(stats.t.sf(diff / math.sqrt(vx + vy), df))


def test_rows_without_a_shared_level_are_refused() -> None:
    other = [{**_row(0, 0, 0.5), "metric": "accuracy"}]
    with pytest.raises(
        InvalidParameterError, match="'random' parameter of random_baseline must be rows with a level"
    ):
        random_baseline([_row(0, 0, 0.9)], other)
    with pytest.raises(InvalidParameterError, match="detection rows with concept"):
        random_baseline([{"value": 1.0}], other)
