"""Every performance goal of xaimetrics: the id used in ``README.md`` and ``results.md``, the goal, the script.

A goal is never removed because it is missed: ``tests/test_benchmarks_readme.py`` checks that each one has a
row with a figure and a verdict in ``benchmarks/README.md`` and in the committed ``results.md``.
"""

from __future__ import annotations

GOALS: dict[str, tuple[str, str]] = {
    "pipeline-overhead": (
        "activations + concept encoding + importances / bare batched forward ≤ 1.10 (1,000 texts, MiniLM)",
        "bench_concept_pipeline.py",
    ),
    "grid-resumed": ("grid runner with prompts already built (resumed grid) ≤ 1.10× ideal", "bench_grid.py"),
    "grid-fresh": (
        "fresh grid (activations, fits, prompts with MiniLM, calls) ≤ 1.10× (artefacts built alone + ideal)",
        "bench_grid.py",
    ),
    "grid-cached": ("rerun answered from the response cache ≤ 2 s", "bench_grid.py"),
    "fidelity-text-deletion": (
        "text Deletion / its bare forward passes ≤ 1.20 (MiniLM)",
        "bench_fidelity.py",
    ),
    "fidelity-text-insertion": (
        "text Insertion / its bare forward passes ≤ 1.20 (MiniLM)",
        "bench_fidelity.py",
    ),
    "fidelity-image-deletion": ("image Deletion / its bare forward passes ≤ 1.20", "bench_fidelity.py"),
    "fidelity-mufidelity": ("image MuFidelity / its bare forward passes ≤ 1.20", "bench_fidelity.py"),
    "fidelity-vs-references": (
        "≥ 5× faster than Interpreto (text) and Quantus (images) on one call, same inputs",
        "bench_fidelity.py",
    ),
    "coherence-speed": (
        "NPMI coherence, index + coherence, ≥ 20× gensim c_npmi with equal values",
        "bench_coherence.py",
    ),
    "coherence-memory": (
        "peak memory of index + coherence ≤ gensim's at 20,000 IMDB documents",
        "bench_coherence.py",
    ),
}
