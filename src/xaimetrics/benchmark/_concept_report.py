"""The report's per-concept section (``Grid.detection``): is each concept legible, beside ConSim's score of the
whole explanation (do the concepts help together?).

Per method × scorer × reader: the concepts scored per fit, the share judged legible (one-sided test against
chance, Holm over the concepts of each fit: :func:`~xaimetrics.detection.legibility_table`; the share is averaged
over seeds), the mean score with a t interval over seeds (concepts averaged within each seed first:
:func:`~xaimetrics.detection.summarise`), and, where the grid ran randomised twins, trained − random with its
interval and one-sided p over seeds (:func:`~xaimetrics.detection.random_baseline`). ConSim's column is the
method's mean score over its explanation settings (U1 excluded) and NoExplanation's beside it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from xaimetrics.benchmark._concept_row import ConceptRow, long_concept_rows
from xaimetrics.benchmark._twins import split_twin

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["concept_frame", "concept_sections", "legibility_summary"]


def concept_frame(path: str | Path) -> pd.DataFrame:
    """The per-concept rows of a store file (not the superseded ones; empty when the grid ran none)."""
    from xaimetrics.benchmark._store import ResultsStore

    with ResultsStore(path, read_only=True, row_type=ConceptRow) as store:
        return store.to_frame()


def legibility_summary(
    concepts: pd.DataFrame, results: pd.DataFrame | None = None, *, alpha: float = 0.05
) -> pd.DataFrame:
    """One line per method × scorer × reader (the trained methods; twins enter as ``over_random``).

    Columns: ``metric``, ``n_concepts`` (scored, mean per seed), ``legible`` (share, Holm over each fit's
    concepts), ``mean``/``low``/``high`` (t interval over seeds), ``n_seeds``; with twins ``twin``,
    ``over_random`` with ``over_random_low``/``high`` and ``p_random``; with ``results``, ``consim`` and
    ``consim_baseline``.

    Example:
        >>> import pandas as pd
        >>> from xaimetrics.benchmark._concept_row import ConceptSetting
        >>> def row(method, seed, concept, value, p):
        ...     s = ConceptSetting("d", "m", method, 2, "top_words", seed, "lexical", "intruder")
        ...     return ConceptRow.of(s, concept, [{"description": "own", "negatives": "random",
        ...                          "metric": "accuracy", "value": value, "p_value": p}], "w").as_dict()
        >>> rows = [row(m, s, c, v - (0.5 if "@" in m else 0), p if "@" not in m else 0.5)
        ...         for m in ("PCA", "PCA@random-all") for s, (v, p) in enumerate([(0.9, 0.001), (1.0, 0.0001)])
        ...         for c in (0, 1)]
        >>> line = legibility_summary(pd.DataFrame(rows)).iloc[0]
        >>> line["method"], float(line["legible"]), float(line["mean"]), round(float(line["over_random"]), 3)
        ('PCA', 1.0, 0.95, 0.5)
    """
    import pandas as pd

    from xaimetrics.detection._statistics import legibility_table, random_baseline, summarise

    if not len(concepts):
        return pd.DataFrame()
    long = long_concept_rows(concepts)
    long["base"] = [split_twin(m)[0] for m in long["method"]]
    long["twin"] = [split_twin(m)[1] or "" for m in long["method"]]
    lines = []
    for (base, scorer, reader), part in long.groupby(["base", "scorer", "reader"], sort=True):
        trained = part[part["twin"] == ""]
        if not len(trained):
            continue
        legible = legibility_table(trained, alpha=alpha, groups=["seed"])
        shares = legible.groupby("seed")["legible"].mean()
        counts = legible.groupby("seed")["concept"].nunique()
        main = trained[trained["negatives"] == "random"]
        summary = summarise(main, by=("description",)).iloc[0]
        line: dict[str, object] = {
            "method": base, "scorer": scorer, "reader": reader, "metric": str(trained["metric"].iloc[0]),
            "n_concepts": float(counts.mean()), "legible": float(shares.mean()), "mean": float(summary["mean"]),
            "low": float(summary["low"]), "high": float(summary["high"]), "n_seeds": int(trained["seed"].nunique()),
        }  # fmt: skip
        for twin, random in part[part["twin"] != ""].groupby("twin", sort=True):
            compared = random_baseline(main, random[random["negatives"] == "random"], by=())
            first = compared.iloc[0]
            lines.append({**line, "twin": twin, "over_random": float(first["difference"]),
                          "over_random_low": float(first["low"]), "over_random_high": float(first["high"]),
                          "p_random": float(first["p_value"])})  # fmt: skip
        if not (part["twin"] != "").any():
            lines.append(line)
    table = pd.DataFrame(lines)
    if results is not None and len(results) and len(table):
        rows = results[results["is_upper_bound"] == 0] if "is_upper_bound" in results else results
        means = rows.groupby("method")["score"].mean()
        table["consim"] = [float(means.get(m, np.nan)) for m in table["method"]]
        table["consim_baseline"] = float(means.get("NoExplanation", np.nan))
    return table


def concept_sections(
    concepts: pd.DataFrame, results: pd.DataFrame | None = None, *, alpha: float = 0.05
) -> list[dict[str, str]]:
    """The report's per-concept section (none when the grid scored no concept).

    Example:
        >>> import pandas as pd
        >>> concept_sections(pd.DataFrame())
        []
    """
    from xaimetrics.benchmark._report import report_section

    table = legibility_summary(concepts, results, alpha=alpha)
    if not len(table):
        return []
    text = (
        "Is each concept legible, and do the concepts help together? Each concept of each fit the explanations "
        "show, scored on its own (detection: AUROC of the reader's P(Yes) for texts where it is active against "
        "texts where it is not, chance 0.5; intruder: accuracy of picking the one non-activating text among 5, "
        "chance 0.2, the concept's words shown; embedding: AUROC of held-out texts' similarity to its top texts "
        "under MiniLM, no reader). legible: the share of concepts whose one-sided test against chance holds "
        f"at {alpha} after Holm over the concepts of their fit, averaged over seeds; mean: concepts averaged "
        "within each seed, t interval over seeds; over_random: trained − randomised twin (same pipeline on a "
        "re-initialised classifier), t interval and one-sided sign-flip p over seeds. consim: the method's mean "
        "ConSim score over its explanation settings, beside NoExplanation's (consim_baseline). Legible concepts "
        "need not help a reader predict the model together, and a concept can help without being legible alone."
    )
    return [report_section("Per-concept legibility", text, table.round(4))]
