"""Detection: per-concept simulatability — does a concept's interpretation predict where it is active?

The automated-interpretability protocol of OpenAI's neuron explainer, EleutherAI's Delphi and SAEBench,
for the concepts of a text classifier (``docs/detection.md``):

- :class:`Detection` and :func:`detect_concept` sample activating texts (top and stratified quantiles) and
  non-activating ones (random, and hard negatives: nearest neighbours in the classifier's activation space),
  seeded; ask one text per prompt (``Sample_0: Yes`` / ``No``), reading ``P(Yes)`` from the simulator's
  log-probabilities (local llama.cpp, OpenAI ``top_logprobs``); the fuzzing prompts mark words in the text;
- :func:`score` — AUROC with a BCa interval and a Mann–Whitney p-value, or balanced accuracy of text answers;
- :class:`Detection` and :func:`detect_concept` — all of it per concept, with a shuffled-description control;
  :func:`fuzz_concept` — the fuzzing scorer;
- :class:`Intruder` and :func:`intrude_concept` — intruder detection: pick the one non-activating text among
  activating ones (accuracy, no written explanation needed); :class:`ExampleEmbedding` and
  :func:`embed_concept` — example-embedding scoring: AUROC of held-out texts' similarity to the top texts
  under a sentence encoder (the offline MiniLM);
- :class:`WordOverlapReader` — the reference reader (word overlap, no LLM);
- :func:`legibility_table` — which concepts are legible (Holm over concepts).
"""

from xaimetrics.detection._detection import Detection, detect_concept
from xaimetrics.detection._embedding import ExampleEmbedding, embed_concept, example_similarity
from xaimetrics.detection._fuzzing import fuzz_concept
from xaimetrics.detection._intruder import Intruder, intrude_concept, intruder_score
from xaimetrics.detection._reader import WordOverlapReader
from xaimetrics.detection._scoring import auroc, balanced_accuracy, score
from xaimetrics.detection._statistics import legibility_table

__all__ = [
    "Detection",
    "ExampleEmbedding",
    "Intruder",
    "WordOverlapReader",
    "auroc",
    "balanced_accuracy",
    "detect_concept",
    "embed_concept",
    "example_similarity",
    "fuzz_concept",
    "intrude_concept",
    "intruder_score",
    "legibility_table",
    "score",
]
