"""Per-concept simulatability (``xaimetrics.detection``).

Add a metric as one more ``Entry`` below (see ``docs/metrics.md``).
"""

from __future__ import annotations

from xaimetrics._metric_registry import Entry, MetricInfo

__all__ = ["ENTRIES"]

ENTRIES: tuple[Entry, ...] = (
    Entry(
        "detection_auroc",
        MetricInfo(
            family="detection",
            direction="higher",
            range=(0, 1),
            data=("concepts", "text", "answers"),
            category="simulatability",
            reference="delphi",
            callables=(
                "xaimetrics.detection.auroc",
                "xaimetrics.detection.score",
                "xaimetrics.detection.Detection",
                "xaimetrics.detection.detect_concept",
            ),
        ),
        description="AUROC of a reader's P(Yes) separating a concept's activating texts from the others",
    ),
    Entry(
        "detection_balanced_accuracy",
        MetricInfo(
            family="detection",
            direction="higher",
            range=(0, 1),
            data=("concepts", "text", "answers"),
            category="simulatability",
            reference="delphi",
            callables=("xaimetrics.detection.balanced_accuracy",),
        ),
        description="balanced accuracy of a reader's Yes/No answers (text-only readers)",
    ),
    Entry(
        "fuzzing_score",
        MetricInfo(
            family="detection",
            direction="higher",
            range=(0, 1),
            data=("concepts", "text", "answers"),
            category="simulatability",
            reference="delphi",
            callables=("xaimetrics.detection.fuzz_concept",),
        ),
        description="detection score when the concept's words are marked in its activating texts",
    ),
    Entry(
        "intruder_accuracy",
        MetricInfo(
            family="detection",
            direction="higher",
            range=(0, 1),
            data=("concepts", "text", "answers"),
            category="simulatability",
            reference="delphi (Paulo & Belrose 2026)",
            callables=(
                "xaimetrics.detection.intruder_score",
                "xaimetrics.detection.Intruder",
                "xaimetrics.detection.intrude_concept",
            ),
        ),
        description="share of trials where the reader picks the non-activating text among a concept's activating ones",
    ),
    Entry(
        "example_embedding_auroc",
        MetricInfo(
            family="detection",
            direction="higher",
            range=(0, 1),
            data=("concepts", "text"),
            category="simulatability",
            reference="delphi (Paulo & Belrose 2026)",
            callables=(
                "xaimetrics.detection.example_similarity",
                "xaimetrics.detection.ExampleEmbedding",
                "xaimetrics.detection.embed_concept",
            ),
        ),
        description="AUROC of held-out texts' similarity to a concept's top examples under a sentence encoder",
    ),
)
