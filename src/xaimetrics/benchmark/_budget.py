"""What a grid will cost before any call (``xaimetrics benchmark run --dry-run``): settings, tokens, dollars.

The tokens are an **estimate**, made without loading a dataset, a model or a simulator. Each distinct prompt of
the grid (prompt type × method kind × number of concepts × interpretation) is rendered by the real renderer
(:func:`~xaimetrics.consim.render_prompt`) on stand-in inputs of the grid's sizes, and its characters are divided
by :data:`CHARS_PER_TOKEN` (4, the usual rate of English text under GPT-style tokenizers):

- ``n_lp`` and ``n_ep`` texts, each ``max_sample_chars`` long (:data:`DEFAULT_TEXT_CHARS` when the grid does not
  cut texts: long texts make the estimate low, short ones high);
- :data:`ASSUMED_CLASSES` classes (the data are not loaded);
- every concept shown: at most :data:`MAX_SHOWN_CONCEPTS` per class and per sample (a normalised importance above
  τ = 0.05 leaves room for no more), each described as its interpretation's stand-in
  (:attr:`~xaimetrics.consim.InterpretationKind.stand_in`: 5 aligned and 5 opposed words of 8 characters for
  ``top_words``, a label of 40 for ``llm_labels``): the worst case;
- the answer: one line ``Sample_<id>: <class>`` per EP sample (completion tokens);
- a scoring that needs class probabilities (``"probability"``): a local simulator also scores ``n_ep × classes`` answer lines as continuations of
  the prompt (its own compute, no request); a remote (``openai:``) one reads the log-probabilities of the same
  answer, so nothing is added. The concept-labelling requests of ``llm_labels`` are not counted.

Dollars: ``prompt tokens / 1000 × IN + completion tokens / 1000 × OUT`` for a price ``IN,OUT`` per 1,000 tokens.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from xaimetrics.benchmark._grid import BASELINE_METHOD, Grid, Setting
from xaimetrics.consim import SCORINGS

if TYPE_CHECKING:
    from xaimetrics.benchmark._gated import GatedDesign

__all__ = ["budget_table", "estimate_tokens"]

#: characters per token of English text (GPT-style BPE tokenizers)
CHARS_PER_TOKEN = 4
#: a sample's length when the grid does not cut texts (``max_sample_chars``)
DEFAULT_TEXT_CHARS = 600
#: classes assumed (the dataset is not loaded before a dry run)
ASSUMED_CLASSES = 4
#: normalised importances above τ = 0.05 leave room for at most 19 concepts in a row
MAX_SHOWN_CONCEPTS = 19
#: a word's length in the stand-in sample texts
WORD_CHARS = 8


@functools.lru_cache(maxsize=256)
def _prompt_chars(
    label: str, n_concepts: int, interpretation: str, n_lp: int, n_ep: int, text_chars: int
) -> tuple[int, int]:
    """``(prompt characters, answer characters)`` of one stand-in prompt."""
    from xaimetrics.consim import INTERPRETATIONS, render_prompt

    classes = [f"class{i}" for i in range(ASSUMED_CLASSES)]
    k = max(1, min(n_concepts or MAX_SHOWN_CONCEPTS, MAX_SHOWN_CONCEPTS))
    text = ("x" * (WORD_CHARS - 1) + " ") * (text_chars // WORD_CHARS + 1)
    kind = INTERPRETATIONS.find(interpretation)  # None: no concepts shown (NoExplanation)
    description: dict[int, object] = {} if kind is None else dict.fromkeys(range(k), kind.stand_in())
    prompt = render_prompt(
        label, class_names=classes, ep_samples=[text] * n_ep, ep_predictions=[0] * n_ep,
        lp_samples=[text] * n_lp, lp_predictions=[0] * n_lp, interpretation=description,  # type: ignore[arg-type]
        global_importances=np.ones((ASSUMED_CLASSES, k)), lp_local_importances=np.ones((n_lp, k)),
        ep_local_importances=np.ones((n_ep, k)), importance_threshold=0.0, max_sample_chars=text_chars,
    )  # fmt: skip
    answer = "\n".join(f"Sample_{i}: {prompt.shown_classes[-1]}" for i in prompt.sample_ids)
    return sum(len(m.content) for m in prompt.messages), len(answer)


def estimate_tokens(grid: Grid, settings: Sequence[Setting] | None = None) -> dict[str, int]:
    """Estimated ``prompt``, ``completion`` and locally ``scored`` tokens of ``settings`` (default: the grid's);
    see the module's docstring for the formula.

    Example:
        >>> g = Grid(methods=("PCA", "NoExplanation"), prompt_types=("NE2-a", "E2-a"), seeds=(0,),
        ...          simulators=("perfect",), n_lp=4, n_ep=4, n_concepts=3, max_sample_chars=100)
        >>> estimate_tokens(g)
        {'prompt': 930, 'completion': 34, 'scored': 0}
    """
    settings = grid.settings() if settings is None else settings
    text_chars = grid.max_sample_chars or DEFAULT_TEXT_CHARS
    totals = {"prompt": 0, "completion": 0, "scored": 0}
    probabilities = SCORINGS.get(grid.scoring).needs_probabilities
    for setting in settings:
        k = 0 if setting.method == BASELINE_METHOD else setting.n_concepts
        prompt, answer = _prompt_chars(
            setting.label, k, setting.interpretation, grid.n_lp, grid.n_ep, text_chars
        )
        totals["prompt"] += prompt // CHARS_PER_TOKEN
        totals["completion"] += answer // CHARS_PER_TOKEN
        kind = grid._simulator_kind(setting.simulator)
        if probabilities and not (kind is not None and kind.uses_base_url):
            per_line = answer // max(1, grid.n_ep) + 1
            totals["scored"] += grid.n_ep * ASSUMED_CLASSES * per_line // CHARS_PER_TOKEN
    return totals


def _row(
    grid: Grid, settings: Sequence[Setting], copies: int, price: tuple[float, float] | None
) -> dict[str, object]:
    tokens = estimate_tokens(grid, settings)
    row: dict[str, object] = {
        "settings": len(settings) * copies,
        "prompt_tokens": tokens["prompt"] * copies,
        "completion_tokens": tokens["completion"] * copies,
    }
    if SCORINGS.get(grid.scoring).needs_probabilities:
        row["scored_tokens"] = tokens["scored"] * copies
    if price is not None:
        row["usd"] = round((tokens["prompt"] * price[0] + tokens["completion"] * price[1]) * copies / 1000, 4)
    return row


def budget_table(
    grid: Grid, design: GatedDesign | None = None, *, price: tuple[float, float] | None = None
) -> pd.DataFrame:
    """The worst-case budget before any call: one row per simulator (and per part of a gated design, every look
    made), and a total: settings, estimated prompt and completion tokens, and dollars when a price is given.

    Example:
        >>> from xaimetrics.benchmark import GatedDesign
        >>> g = Grid(methods=("PCA", "NoExplanation"), prompt_types=("NE2-a", "E2-a"), seeds=(0,),
        ...          simulators=("perfect",), n_lp=4, n_ep=4, n_concepts=3, max_sample_chars=100)
        >>> budget_table(g, GatedDesign.default())["settings"].to_dict()
        {('perfect', 'gate', '0–7'): 24, ('perfect', 'methods', '8–23'): 32, ('total', '', ''): 56}
    """
    from xaimetrics.benchmark._gated import part_grids
    from xaimetrics.benchmark._gated_report import seed_span

    rows: dict[tuple[str, str, str], dict[str, object]] = {}
    for simulator in grid.simulators:
        one = grid.replace(simulators=(simulator,))
        if design is None:
            rows[(simulator, "grid", ", ".join(map(str, grid.seeds)))] = _row(one, one.settings(), 1, price)
            continue
        parts = part_grids(one)
        rows[(simulator, "gate", seed_span(design.gate_seeds()))] = _row(
            one, parts["gate"].settings(), design.gate.max_seeds, price
        )
        if one.concept_methods:
            rows[(simulator, "methods", seed_span(design.method_seeds()))] = _row(
                one, parts["methods"].settings(), design.methods.max_seeds, price
            )
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.loc[("total", "", "")] = table.sum(numeric_only=True)
    table.index = pd.MultiIndex.from_tuples(list(table.index), names=["simulator", "part", "seeds"])
    return table.astype({c: "int64" for c in table.columns if c != "usd"})
