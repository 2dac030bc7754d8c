"""Detection: per-concept simulatability — does a concept's interpretation predict where it is active?

The automated-interpretability protocol of OpenAI's neuron explainer, EleutherAI's Delphi and SAEBench,
for the concepts of a text classifier (``docs/detection.md``):

- :func:`sample_texts` — activating texts (top and stratified quantiles) and non-activating ones (random,
  and hard negatives: nearest neighbours in the classifier's activation space), seeded;
- :func:`build_detection_prompts` — one text per prompt, answered ``Sample_0: Yes`` / ``No``;
  :func:`build_fuzzing_prompts` — words marked in the text, right or at random;
- :func:`ask` — ``P(Yes)`` from the simulator's log-probabilities (local llama.cpp, OpenAI ``top_logprobs``);
- :func:`score` — AUROC with a BCa interval and a Mann–Whitney p-value, or balanced accuracy of text answers;
- :class:`Detection` and :func:`detect_concept` — all of it per concept, with a shuffled-description control;
  :func:`fuzz_concept` — the fuzzing scorer;
- :class:`Intruder` and :func:`intrude_concept` — intruder detection: pick the one non-activating text among
  activating ones (accuracy, no written explanation needed); :class:`ExampleEmbedding` and
  :func:`embed_concept` — example-embedding scoring: AUROC of held-out texts' similarity to the top texts
  under a sentence encoder (the offline MiniLM);
- :class:`WordOverlapReader` — the reference reader (word overlap, no LLM);
- :func:`legibility_table`, :func:`compare_groups` — statistics: which concepts are legible (Holm over
  concepts), method or reader comparisons on seeds (Holm over comparisons).
"""

from xaimetrics.detection._detection import (
    Answer,
    Detection,
    DetectionResult,
    ask,
    detect_concept,
    shuffled_concept,
)
from xaimetrics.detection._embedding import (
    ExampleEmbedding,
    embed_concept,
    example_similarity,
    sentence_encoder,
)
from xaimetrics.detection._fuzzing import fuzz_concept, mark_words
from xaimetrics.detection._intruder import (
    Intruder,
    IntruderScore,
    build_intruder_prompts,
    intrude_concept,
    intruder_score,
    intruder_trials,
)
from xaimetrics.detection._prompts import (
    ANSWERS,
    PROMPTS,
    DetectionPrompt,
    build_detection_prompts,
    build_fuzzing_prompts,
    describe,
)
from xaimetrics.detection._reader import WordOverlapReader
from xaimetrics.detection._sampling import DetectionSample, sample_texts
from xaimetrics.detection._scoring import DetectionScore, auroc, balanced_accuracy, score
from xaimetrics.detection._statistics import compare_groups, legibility_table, random_baseline, summarise

__all__ = [
    "ANSWERS",
    "PROMPTS",
    "Answer",
    "Detection",
    "DetectionPrompt",
    "DetectionResult",
    "DetectionSample",
    "DetectionScore",
    "ExampleEmbedding",
    "Intruder",
    "IntruderScore",
    "WordOverlapReader",
    "ask",
    "auroc",
    "balanced_accuracy",
    "build_detection_prompts",
    "build_fuzzing_prompts",
    "build_intruder_prompts",
    "compare_groups",
    "describe",
    "detect_concept",
    "embed_concept",
    "example_similarity",
    "fuzz_concept",
    "intrude_concept",
    "intruder_score",
    "intruder_trials",
    "legibility_table",
    "mark_words",
    "random_baseline",
    "sample_texts",
    "score",
    "sentence_encoder",
    "shuffled_concept",
    "summarise",
]
