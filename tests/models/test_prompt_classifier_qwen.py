"""Slow: the offline Qwen2.5-Coder-0.5B-Instruct weights (the project's verified GGUF) as a classifier by prompting."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from xaimetrics.concepts import PCA, TopWords
from xaimetrics.consim import ConSim, Explanation
from xaimetrics.data import load_dataset
from xaimetrics.models import PromptClassifier

pytestmark = pytest.mark.slow
TEMPLATE = "Classify this BBC News article into one of these topics: {classes}.\n\nArticle: {text}\n\nAnswer with the topic only."
WORDS = ["Business", "Entertainment", "Politics", "Sports", "Tech"]


@pytest.fixture(scope="module")
def qwen() -> PromptClassifier:
    pytest.importorskip("gguf")
    from xaimetrics.simulators import load_default_gguf

    path = load_default_gguf()
    classes = load_dataset("bbc_news", "test").class_names
    return PromptClassifier.from_pretrained(
        path.parent, classes, gguf_file=path.name, class_words=WORDS, chat=True, template=TEMPLATE,
        device="cpu", max_length=160, batch_size=4, positive=False,
    )  # fmt: skip


def test_qwen_as_a_classifier_by_prompting_through_consim(qwen: PromptClassifier) -> None:
    from xaimetrics.simulators import default_simulator

    test = load_dataset("bbc_news", "test").sample(60, seed=0)
    activations, logits = qwen.activations_and_logits(test.texts)
    assert activations.shape == (60, 896)  # the final hidden state at the answer position
    torch.testing.assert_close(qwen.logits_from_activations(activations), logits, atol=1e-4, rtol=1e-5)
    predictions = logits.argmax(dim=1).numpy()
    accuracy = float(np.mean(predictions == test.labels))
    print(f"Qwen2.5-0.5B by prompting, BBC News (60 test texts): accuracy {accuracy:.2f}")
    assert accuracy > 0.4  # chance is 0.2
    extractor = PCA(n_concepts=10, random_state=0).fit(activations)
    words = TopWords(
        qwen, extractor, n_words=3, min_frequency=3, max_vocabulary=60, stop_words="english"
    ).fit(test.texts)
    explanation = Explanation(extractor=extractor, interpretation=words, activations=activations)
    consim = ConSim(qwen, default_simulator(), explanation=explanation, max_sample_chars=200)
    samples = consim.select_examples(
        test.texts, test.labels, predictions, n_lp=10, n_ep=10, balance="relaxed"
    )
    baseline, explained = consim.evaluate_many(samples, prompt_types=["NE2", "E3"])
    print(f"ConSim on Qwen2.5-0.5B: NE2 {baseline.score}, E3 {explained.score}")
    for result in (baseline, explained):
        assert result.score is not None and result.n_parsed >= 8
    assert "concept_0" in explained.messages[-1].content or "concept_0" in explained.messages[0].content
