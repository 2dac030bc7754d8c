"""Per-class ConSim scores: which of f's classes the explanation helps the reader predict (issue #35).

The ConSim score (eq. 5) is one accuracy over the EP samples; it hides a reader that gets one class always right
and another never. Per class ``c`` **of f's predictions**, over the EP samples:

- ``n`` — samples f put in ``c``; ``hits`` — those the reader also put in ``c``; ``answered`` — samples the
  reader put in ``c`` (whatever f said);
- **recall** ``hits / n``: how often the reader predicts f when f says ``c`` (undefined, NaN, when ``n = 0``);
- **precision** ``hits / answered``: how often f agrees when the reader says ``c`` (NaN when ``answered = 0``).

A missing or invalid answer counts in ``n`` (a miss, as in eq. 5) but in no class's ``answered``. The counts,
not the ratios, are what the benchmark stores per row (a JSON object), so sums over settings and seeds are
exact; ratios are taken last. The recall weighted by ``n`` is the accuracy of eq. 5.
"""

from __future__ import annotations

import math

from xaimetrics._class_counts import read_class_counts

__all__ = ["per_class_scores"]


def per_class_scores(counts: object) -> dict[str, dict[str, float | int]]:
    """Per class of f's predictions: ``n``, ``recall`` (``hits / n``) and ``precision`` (``hits / answered``).

    Args:
        counts: ``{class: {"n", "hits", "answered"}}`` — a :attr:`ConSimResult.class_counts
            <xaimetrics.consim.ConSimResult.class_counts>`, their sum, or the JSON text a results store keeps.

    Returns:
        ``{class: {"n": int, "recall": float, "precision": float}}`` for the classes f predicted at least once
        (NaN precision where the reader never answered the class).

    Example:
        >>> from xaimetrics.consim import render_prompt, score_response
        >>> prompt = render_prompt("NE1", class_names=["sport", "tech", "arts"], ep_samples=list("abcde"),
        ...                        ep_predictions=[0, 0, 0, 1, 1])
        >>> result = score_response(prompt, "\\n".join(f"Sample_{i}: sport" for i in range(5)))
        >>> per_class_scores(result.class_counts)
        {'sport': {'n': 3, 'recall': 1.0, 'precision': 0.6}, 'tech': {'n': 2, 'recall': 0.0, 'precision': nan}}
    """
    table = read_class_counts(counts, "per_class_scores")
    return {
        name: {
            "n": values["n"],
            "recall": values["hits"] / values["n"],
            "precision": values["hits"] / values["answered"] if values["answered"] else math.nan,
        }
        for name, values in table.items()
        if values["n"] > 0
    }
