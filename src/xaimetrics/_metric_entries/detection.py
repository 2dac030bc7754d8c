"""Per-concept simulatability (``xaimetrics.detection``).

Add a metric as one more row below (see ``docs/metrics.md``).
"""

from __future__ import annotations

from xaimetrics._metric_registry import Entry, family_entries

__all__ = ["ENTRIES"]

# one metric a row: name, direction, range, data, category, reference, callables, description
# fmt: off
ENTRIES: tuple[Entry, ...] = family_entries("detection", [
    ("detection_auroc", "higher", (0, 1), ("concepts", "text", "answers"), "simulatability", "delphi",
     ("auroc", "score", "Detection", "detect_concept"),
     "AUROC of a reader's P(Yes) separating a concept's activating texts from the others"),
    ("detection_balanced_accuracy", "higher", (0, 1), ("concepts", "text", "answers"), "simulatability", "delphi",
     ("balanced_accuracy",),
     "balanced accuracy of a reader's Yes/No answers (text-only readers)"),
    ("fuzzing_score", "higher", (0, 1), ("concepts", "text", "answers"), "simulatability", "delphi",
     ("fuzz_concept",),
     "detection score when the concept's words are marked in its activating texts"),
    ("intruder_accuracy", "higher", (0, 1), ("concepts", "text", "answers"), "simulatability", "delphi (Paulo & Belrose 2026)",
     ("intruder_score", "Intruder", "intrude_concept"),
     "share of trials where the reader picks the non-activating text among a concept's activating ones"),
    ("example_embedding_auroc", "higher", (0, 1), ("concepts", "text"), "simulatability", "delphi (Paulo & Belrose 2026)",
     ("example_similarity", "ExampleEmbedding", "embed_concept"),
     "AUROC of held-out texts' similarity to a concept's top examples under a sentence encoder"),
])
# fmt: on
