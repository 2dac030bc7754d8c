"""Fuzzing (Delphi): are the words where the concept is active the ones its description names?

For word-granularity concepts each word of a text has its own activation. An activating text is shown
twice: once with its ``n_marks`` most activating words marked ``<<like this>>`` (*correct*), once with the
same number of marks on other words drawn at random (*fuzzed*). The reader says whether the marks are right;
the score is the AUROC of ``P(Yes)`` for correct against fuzzed versions. Detection asks *whether* a text
activates the concept; fuzzing asks *where*, which a description of a topic cannot answer but a description
of words can.

**Word activations.** ``word_scores`` maps a word to the concept's activation for it. For the classifiers
here, whose split point gives one vector per text, the activation of a word is that of the word alone,
``f_ic(word)`` — the scores :class:`~xaimetrics.concepts.TopWords` already computes
(``dict(zip(top.vocabulary_, top.scores_[:, c]))``); a token-level split point would give in-context
activations instead, and any mapping (or callable) can be passed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from xaimetrics._validation import check_positive_int, invalid
from xaimetrics._words import WordTokenizer
from xaimetrics.detection._detection import ask
from xaimetrics.detection._prompts import _cut, build_fuzzing_prompts
from xaimetrics.detection._scoring import score
from xaimetrics.simulators import Simulator

if TYPE_CHECKING:
    from xaimetrics.detection._prompts import Interpretation

__all__ = ["fuzz_concept", "mark_words"]

_TOKENIZER = WordTokenizer()


def _spans(text: str) -> list[tuple[int, int, str]]:
    folded = text.lower()
    source = folded if len(folded) == len(text) else text
    return [(m.start(), m.end(), m.group(0).lower()) for m in _TOKENIZER.regex.finditer(source)
            if not m.group(0).isdigit()]  # fmt: skip


def mark_words(
    text: str,
    word_scores: Mapping[str, float] | Callable[[str], float],
    n_marks: int,
    *,
    correct: bool = True,
    rng: np.random.Generator | None = None,
) -> tuple[str, int]:
    """Mark ``<<word>>`` the text's ``n_marks`` most activating words (``correct``) or as many random others.

    Only words with a positive score can be correct marks; the fuzzed version marks the same number of
    words, drawn among the positions that are not correct marks. Returns ``(marked text, number of marks)``.

    Example:
        >>> mark_words("A late goal won the cup", {"goal": 2.0, "cup": 1.0, "late": 0.0}, 2)
        ('A late <<goal>> won the <<cup>>', 2)
        >>> mark_words("A late goal won the cup", {"goal": 2.0, "cup": 1.0}, 2, correct=False,
        ...            rng=np.random.default_rng(0))[1]
        2
    """
    lookup = word_scores if callable(word_scores) else (lambda w: float(word_scores.get(w, 0.0)))
    spans = _spans(text)
    values = np.array([lookup(word) for _, _, word in spans], dtype=np.float64)
    order = [i for i in np.argsort(-values, kind="stable") if values[i] > 0][:n_marks]
    chosen = set(int(i) for i in order)
    if not correct:
        others = [i for i in range(len(spans)) if i not in chosen]
        rng = rng or np.random.default_rng(0)
        chosen = set(int(i) for i in rng.choice(others, size=min(len(chosen), len(others)), replace=False))
    out, last = [], 0
    for i, (start, end, _) in enumerate(spans):
        if i in chosen:
            out += [text[last:start], "<<", text[start:end], ">>"]
            last = end
    out.append(text[last:])
    return "".join(out), len(chosen)


def fuzz_concept(
    simulator: Simulator,
    concept: int,
    interpretation: Interpretation,
    inputs: Sequence[str],
    word_scores: Mapping[str, float] | Callable[[str], float],
    *,
    n_marks: int = 3,
    max_chars: int = 300,
    seed: int = 0,
    confidence: float = 0.95,
    concurrency: int | None = None,
) -> tuple[dict[str, object] | None, list[dict[str, object]]]:
    """Fuzzing row and per-text answers of one concept over its activating texts ``inputs``.

    Each text is cut to ``max_chars`` first (so no mark is cut away), then shown correctly marked and
    fuzzed. Texts without a positively scored word are left out. Returns ``(None, [])`` when no text is left.

    Example:
        >>> from xaimetrics.detection import WordOverlapReader
        >>> row, _ = fuzz_concept(WordOverlapReader(), 0, ["goal", "cup"],
        ...                       ["a late goal won the cup", "the cup final"], {"goal": 2.0, "cup": 1.0})
        >>> row["metric"], row["auroc"], row["n_active"]
        ('auroc', 1.0, 2)
    """
    n_marks = check_positive_int(n_marks, "n_marks", "fuzz_concept")
    if isinstance(inputs, str) or not isinstance(inputs, Sequence):
        raise invalid("inputs", "fuzz_concept", "a list of activating texts", type(inputs).__name__)
    rng = np.random.default_rng([int(seed), int(concept), 1])
    marked, labels, sources = [], [], []
    for j, text in enumerate(inputs):
        short = _cut(text, max_chars)
        right, count = mark_words(short, word_scores, n_marks)
        if count == 0:
            continue
        wrong, _ = mark_words(short, word_scores, n_marks, correct=False, rng=rng)
        marked += [right, wrong]
        labels += [1, 0]
        sources += [j, j]
    if not marked:
        return None, []
    prompts = build_fuzzing_prompts(interpretation, marked, max_chars=max_chars + 8 * n_marks)
    answers = ask(simulator, prompts, concurrency=concurrency)
    result = score(np.array(labels), [a.p_yes for a in answers], [a.yes for a in answers],
                   confidence=confidence, seed=seed)  # fmt: skip
    row: dict[str, object] = {"concept": concept, "description": "own", "described_by": concept, "negatives": "fuzzed",
           **result.as_dict()}  # fmt: skip
    records: list[dict[str, object]] = [{"concept": concept, "text": sources[i], "correct": labels[i], "p_yes": a.p_yes, "yes": a.yes,
                "error": a.error} for i, a in enumerate(answers)]  # fmt: skip
    return row, records
