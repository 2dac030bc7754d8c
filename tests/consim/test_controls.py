"""The simulatability controls: a positive one that states f's rule, a negative one independent of f."""

from __future__ import annotations

import numpy as np
import pytest

from xaimetrics.consim import RandomWords, SurrogateWords, build_prompts, make_control, select_examples
from xaimetrics.exceptions import InvalidParameterError, NotFittedError

POSITIVE = ("superb", "moving", "delight", "brilliant")
NEGATIVE = ("tedious", "awful", "bland", "mess")
NEUTRAL = ("film", "plot", "actors", "scene", "story", "director")


def _texts(n: int, seed: int) -> tuple[list[str], np.ndarray]:
    """Texts whose 'model' prediction is the sign of (#positive − #negative) words, ties → 0."""
    rng = np.random.default_rng(seed)
    texts, predictions = [], []
    for _ in range(n):
        pos, neg = int(rng.integers(0, 3)), int(rng.integers(0, 3))
        words = [*rng.choice(POSITIVE, pos), *rng.choice(NEGATIVE, neg), *rng.choice(NEUTRAL, 3)]
        rng.shuffle(words)
        texts.append(" ".join(words))
        predictions.append(int(pos > neg))
    return texts, np.array(predictions, dtype=np.int64)


def test_surrogate_words_state_the_models_rule() -> None:
    texts, predictions = _texts(400, 0)
    control = SurrogateWords(n_words=4, min_frequency=5).fit(texts, predictions, n_classes=2)
    concept = control.interpretation_[0]
    assert set(concept.aligned) == set(POSITIVE) and set(concept.opposed) == set(NEGATIVE)
    assert control.fidelity_ > 0.9
    assert control.global_importances_.tolist() == [[-1.0], [1.0]]
    local = control.local_importances(["superb moving film", "awful bland plot"])
    assert local.shape == (2, 1) and local[0, 0] > 0 > local[1, 0]


def test_surrogate_multiclass_has_one_concept_per_class() -> None:
    rng = np.random.default_rng(1)
    topics = {
        0: ("goal", "match", "coach"),
        1: ("chip", "laptop", "server"),
        2: ("treaty", "minister", "embassy"),
    }
    texts, predictions = [], []
    for _ in range(300):
        c = int(rng.integers(3))
        texts.append(" ".join([*rng.choice(topics[c], 2), *rng.choice(NEUTRAL, 2)]))
        predictions.append(c)
    control = SurrogateWords(n_words=3, min_frequency=3).fit(texts, np.array(predictions), n_classes=3)
    assert np.array_equal(control.global_importances_, np.eye(3))
    for c, words in topics.items():
        assert set(control.interpretation_[c].aligned) == set(words)


def test_surrogate_changes_with_the_model_but_random_words_do_not() -> None:
    texts, predictions = _texts(300, 2)
    flipped = 1 - predictions
    a = SurrogateWords(min_frequency=5).fit(texts, predictions, n_classes=2).interpretation_[0]
    b = SurrogateWords(min_frequency=5).fit(texts, flipped, n_classes=2).interpretation_[0]
    assert set(a.aligned) == set(b.opposed)  # the surrogate follows f
    r1 = RandomWords(6, random_state=3).fit(texts, predictions, n_classes=2)
    r2 = RandomWords(6, random_state=3).fit(texts, flipped, n_classes=2)
    assert r1.interpretation_ == r2.interpretation_  # the negative control ignores f entirely
    assert np.array_equal(r1.global_importances_, r2.global_importances_)
    assert np.array_equal(r1.local_importances(texts[:5]), r2.local_importances(texts[:5]))
    # fixed per text (order does not matter), different across texts and seeds
    assert np.array_equal(r1.local_importances(texts[:2])[1], r1.local_importances(texts[1:2])[0])
    r3 = RandomWords(6, random_state=4).fit(texts, n_classes=2)
    assert r3.interpretation_ != r1.interpretation_


def test_controls_render_like_concept_explanations() -> None:
    texts, predictions = _texts(300, 4)
    class_names = ["negative", "positive"]
    samples = select_examples(
        texts, predictions, predictions ^ (np.arange(300) % 7 == 0), 4, 4, seed=0, class_names=class_names
    )
    for control in (SurrogateWords(min_frequency=5), RandomWords(8, min_frequency=5)):
        control.fit(texts, predictions, n_classes=2)
        explanation = control.explanation(samples.lp_texts, samples.ep_texts)
        (prompt,) = build_prompts(samples, explanation, ["E3-a"], class_names=class_names)
        system = prompt.messages[0].content
        assert (
            "concept_0: aligned: [" in system and "The concepts contributions for each example are:" in system
        )
        assert prompt.concept_ids  # the explanation is not empty


def test_errors_and_fitted_state() -> None:
    with pytest.raises(NotFittedError, match="SurrogateWords is not fitted"):
        SurrogateWords().local_importances(["a"])
    with pytest.raises(
        InvalidParameterError, match=r"'predictions' parameter of SurrogateWords\.fit must be at least two"
    ):
        SurrogateWords(min_frequency=1).fit(["a b", "b c"], np.array([1, 1]), n_classes=2)
    with pytest.raises(InvalidParameterError, match="'min_frequency' parameter of RandomWords"):
        RandomWords(3, min_frequency=50).fit(["a b", "b c"], n_classes=2)
    with pytest.raises(InvalidParameterError, match="'method' parameter of make_control"):
        make_control("Oracle", 3, 0)


def test_control_roles_are_read_live_from_the_registry() -> None:
    """A control registered after import has its role in CONTROL_ROLES and its column in the assessment's roles
    (nothing copies the list of controls at import)."""
    from xaimetrics.benchmark._assessment import _roles
    from xaimetrics.consim import CONTROL_ROLES, CONTROLS

    before = dict(CONTROL_ROLES)
    assert before == {"SurrogateWords": "positive", "RandomWords": "negative"}
    kind = CONTROLS.get("RandomWords")
    with CONTROLS.temporarily("ShuffledWords", kind):
        assert CONTROL_ROLES["ShuffledWords"] == "negative" and len(CONTROL_ROLES) == 3
        assert _roles() == {**before, "ShuffledWords": "negative"}
    assert dict(CONTROL_ROLES) == before and "ShuffledWords" not in CONTROL_ROLES
