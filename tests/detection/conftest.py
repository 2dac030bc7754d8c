"""Fixtures of the detection tests: the synthetic groups task (``synthetic_task``), its folder on ``sys.path``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

if str(Path(__file__).parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).parent))

from synthetic_task import GROUPS, GroupExtractor, GroupModel, make_texts

from xaimetrics.concepts import TopWords


@pytest.fixture(scope="session")
def synthetic() -> dict[str, object]:
    """Texts, activations ``A``, true concepts ``U``, their TopWords interpretations and the groups."""
    texts = make_texts()
    model, extractor = GroupModel(), GroupExtractor()
    top = TopWords(model, extractor, n_words=5, min_frequency=2).fit(texts)
    A = model.activations(texts)
    scores = {j: dict(zip(top.vocabulary_, top.scores_[:, j], strict=True)) for j in range(len(GROUPS))}
    return {"texts": texts, "A": A, "U": extractor.encode(A), "interpretations": top.interpret(),
            "groups": GROUPS, "word_scores": scores}  # fmt: skip
