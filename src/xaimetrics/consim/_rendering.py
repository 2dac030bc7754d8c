"""Render a ConSim prompt from explicit inputs (paper App. E), for any of the six prompt types.

The system message holds the initial and learning phases, the user message the evaluation phase:

- **task description**, adapted to the parts present, ending with the answer format ``Sample_{i}: {class}``;
- ``The classes are: [...]`` (``Class_0``, ``Class_1``… when anonymised);
- **global explanation** (E1, E2, E3, U1): one line per *shown* concept, ``concept_<id>: aligned: [...],
  opposed: [...]`` (or its label), then per class the important concepts with their sign bucket;
- **LP** (NE2, E2, E3, U1): the LP samples, their local contributions (E3, U1), then f's predictions on them;
- **EP** (user message): the EP samples, and for U1 only their local contributions.

Concepts keep their **real ids**. A concept is shown when its normalised global importance (eq. 9) exceeds
``importance_threshold`` in absolute value for at least one class; a class lists the shown concepts with
``|Φ̂| > threshold``, and a local explanation the shown concepts with ``|φ̂| > threshold`` (eq. 10). Signs follow
Tab. 4 (``--``, ``-``, ``+``, ``++``); with a threshold below 0.05, values between it and 0.05 show as ``+``/``-``.

**Layouts.** ``layout="paper"`` (the default) orders the parts as App. E does. ``layout="cache"`` keeps the same
parts and headers but orders them so that prompts sharing a seed share a long prefix, which a provider's prompt
cache (OpenAI, Anthropic, vLLM, llama.cpp) reads at a discount: a task text that does not depend on the prompt
type, the class list, the LP samples and f's predictions on them; then the sentence that announces the
explanation, the global explanation and the LP local explanations; the EP samples last (user message, unchanged).

Samples are numbered ``Sample_0 … Sample_{n_lp-1}`` in LP and ``Sample_{n_lp} …`` in EP, as in App. E, so an id
never names two samples. Sample texts are put on one line (runs of whitespace become one space).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence, Sized
from typing import Literal, TypeAlias, get_args

import numpy as np
from numpy.typing import ArrayLike

from xaimetrics._class_names import check_prompt_class_names
from xaimetrics._validation import check_in_range, check_texts, invalid
from xaimetrics.concepts import ConceptInterpretation, importance_bucket, normalize_importance
from xaimetrics.consim._prompt_types import PromptSetting, PromptType
from xaimetrics.consim._scoring import ConSimPrompt
from xaimetrics.simulators import ChatMessage

__all__ = ["PROMPT_LAYOUTS", "ConSimPrompt", "PromptLayout", "render_prompt"]

_OWNER = "render_prompt"

#: f's predicted class ids, shape ``(n_samples,)`` (a list, a NumPy array, a tensor)
Predictions: TypeAlias = ArrayLike
#: importances: an array ``(n_rows, n_concepts)``, Interpreto's ``{class name or id: {concept_id: value}}``, or
#: one ``{concept_id: value}`` per sample
Importances: TypeAlias = ArrayLike | Mapping[str | int, Mapping[int, float]] | Sequence[Mapping[int, float]]
#: how a concept is described: see :func:`render_prompt`'s ``interpretation``
Description: TypeAlias = ConceptInterpretation | str | Sequence[str] | Mapping[str, object] | None
_WHITESPACE = re.compile(r"\s+")
#: the order of a prompt's parts: App. E's (``"paper"``) or shared parts first (``"cache"``, module docstring)
PromptLayout: TypeAlias = Literal["paper", "cache"]
#: every :data:`PromptLayout`, the default first
PROMPT_LAYOUTS: tuple[str, ...] = get_args(PromptLayout)


def render_prompt(
    prompt_type: PromptSetting | PromptType | str,
    *,
    class_names: Sequence[str],
    ep_samples: Sequence[str],
    ep_predictions: Predictions,
    lp_samples: Sequence[str] = (),
    lp_predictions: Predictions = (),
    interpretation: Mapping[int, Description] | None = None,
    global_importances: Importances | None = None,
    lp_local_importances: Importances | None = None,
    ep_local_importances: Importances | None = None,
    concept_ids: Sequence[int] | None = None,
    anonymize_classes: bool | None = None,
    importance_threshold: float = 0.05,
    max_sample_chars: int | None = None,
    layout: PromptLayout = "paper",
) -> ConSimPrompt:
    """Render the ConSim prompt of ``prompt_type`` from explicit inputs (paper App. E).

    Inputs a prompt type does not use are ignored, so one set of inputs renders every type.

    Args:
        prompt_type: a :class:`PromptSetting`, a :class:`PromptType` or a label such as ``"E3"`` or ``"E3-a"``.
        class_names: class names, index = class id.
        ep_samples: evaluation-phase texts.
        ep_predictions: f's predicted class ids on them, shape ``(n_ep,)`` (the answer key).
        lp_samples: learning-phase texts (NE2, E2, E3, U1).
        lp_predictions: f's predicted class ids on them, shape ``(n_lp,)``.
        interpretation: ``{concept_id: description}``; a description is a
            :class:`~xaimetrics.concepts.ConceptInterpretation`, a list of aligned words, a label string,
            a mapping with ``aligned``/``opposed``/``label`` keys, or Interpreto's ``{word: activation}``.
        global_importances: ``Φ`` (raw or normalised), array of shape ``(n_classes, n_concepts)``, or
            Interpreto's ``{class name or id: {concept_id: value}}``.
        lp_local_importances: ``φ`` of the LP samples (E3, U1), shape ``(n_lp, n_concepts)``, or one
            ``{concept_id: value}`` per sample. They should explain the class f predicted (the one shown).
        ep_local_importances: ``φ`` of the EP samples (U1 only), shape ``(n_ep, n_concepts)``.
        concept_ids: the concept id of each array column (default ``0 … n_concepts-1``).
        anonymize_classes: show ``Class_0``… instead of the names (also selected by an ``-a`` suffix).
        importance_threshold: ``τ`` on normalised importances, in ``[0, 1)`` (paper: 0.05).
        max_sample_chars: cut longer sample texts to this many characters (adding ``"..."``).
        layout: ``"paper"`` (App. E's order) or ``"cache"`` (what a seed's prompts share first, the
            explanation after it; see the module docstring). Same parts, same headers, same answer key.

    Returns:
        A :class:`ConSimPrompt`.

    Raises:
        InvalidParameterError: an input the prompt type needs is missing or has the wrong shape.

    Example:
        >>> prompt = render_prompt(
        ...     "NE2", class_names=["negative", "positive"], lp_samples=["a dull plot"], lp_predictions=[0],
        ...     ep_samples=["a fine cast", "too long"], ep_predictions=[1, 0])
        >>> print(prompt.messages[1].content)
        Sample_1: a fine cast
        Sample_2: too long
        >>> prompt.sample_ids, prompt.references
        (('1', '2'), (1, 0))
        >>> cached = render_prompt(
        ...     "E2", class_names=["negative", "positive"], lp_samples=["a dull plot"], lp_predictions=[0],
        ...     ep_samples=["a fine cast"], ep_predictions=[1], interpretation={0: ["dull"]},
        ...     global_importances=[[1.0], [-1.0]], layout="cache")
        >>> print(cached.messages[0].content)  # doctest: +NORMALIZE_WHITESPACE
        You are a classifier. For each sample, you have to predict the class. You will have examples of samples
        and labels as references for the task. Each sample class prediction should be in the format:
        'Sample_{i}: {predicted_class}'. Answer with one such line for every sample to classify, and nothing else.
        <BLANKLINE>
        The classes are: [negative, positive]
        <BLANKLINE>
        Here are examples of samples:
        Sample_0: a dull plot
        <BLANKLINE>
        The classes predicted for these examples are:
        Sample_0: negative
        <BLANKLINE>
        To complete the task, you will be given the concepts and their importance for each class.
        <BLANKLINE>
        For each concept, the most aligned and opposed words are:
        concept_0: aligned: ['dull']
        <BLANKLINE>
        The most important concepts and their importance for each class are:
        negative: 'concept_0': '++'
        positive: 'concept_0': '--'
    """
    setting = PromptSetting.parse(prompt_type, anonymize_classes, owner=_OWNER)
    cache = check_layout(layout, _OWNER) == "cache"
    kind, anonymized = setting.kind, setting.anonymized
    content = kind.content
    names = check_prompt_class_names(class_names, _OWNER)
    shown = tuple(f"Class_{i}" for i in range(len(names))) if anonymized else names
    threshold = check_in_range(importance_threshold, "importance_threshold", _OWNER, 0.0, 1.0)
    if threshold >= 1.0:
        raise invalid("importance_threshold", _OWNER, "a number in [0, 1)", importance_threshold)
    if max_sample_chars is not None and (
        isinstance(max_sample_chars, bool) or not isinstance(max_sample_chars, int) or max_sample_chars < 4
    ):
        raise invalid("max_sample_chars", _OWNER, "None or an integer ≥ 4", max_sample_chars)

    ep_texts = _check_samples(ep_samples, "ep_samples", max_sample_chars)
    ep_refs = _check_predictions(ep_predictions, "ep_predictions", len(ep_texts), len(names))
    lp_texts: list[str] = []
    lp_refs: tuple[int, ...] = ()
    if content.lp_samples:
        lp_texts = _check_samples(lp_samples, "lp_samples", max_sample_chars)
        lp_refs = _check_predictions(lp_predictions, "lp_predictions", len(lp_texts), len(names))
    n_lp = len(lp_texts) if content.lp_samples else _length(lp_samples)
    lp_ids = tuple(str(i) for i in range(n_lp))
    ep_ids = tuple(str(n_lp + i) for i in range(len(ep_texts)))

    system: list[str] = [_task_description(kind, cache), "The classes are: [" + ", ".join(shown) + "]"]
    user: list[str] = [_sample_lines(ep_ids, ep_texts)]
    explanation: list[str] = []  # the concept parts (after the LP block in the cache layout)
    shown_concepts: tuple[int, ...] = ()
    if content.global_explanations:
        if interpretation is None or global_importances is None:
            raise invalid(
                "interpretation" if interpretation is None else "global_importances",
                _OWNER,
                f"given for the {kind.name} prompt type (it shows the global explanation)",
                None,
                "Pass the concept interpretation and the global importances, or use a baseline (NE1, NE2).",
            )
        phi_hat, ids = _as_matrix(global_importances, "global_importances", len(names), concept_ids, names)
        keep = np.abs(phi_hat) > threshold
        shown_mask = keep.any(axis=0)
        shown_concepts = tuple(int(ids[j]) for j in np.flatnonzero(shown_mask))
        explanation.append(_concept_block(interpretation, shown_concepts))
        explanation.append(_class_block(phi_hat, ids, keep, shown))
    shown_set = set(shown_concepts)

    def local_block(values: Importances | None, name: str, sample_ids: tuple[str, ...]) -> str:
        local, local_ids = _local(values, name, len(sample_ids), concept_ids, kind)
        return _local_block(local, local_ids, sample_ids, shown_set, threshold)

    lp_block: list[str] = []
    lp_local: list[str] = []
    if content.lp_samples:
        lp_block.append("Here are examples of samples:\n" + _sample_lines(lp_ids, lp_texts))
        if content.lp_local:
            lp_local.append(
                "The concepts contributions for each example are:\n"
                + local_block(lp_local_importances, "lp_local_importances", lp_ids)
            )
        if content.lp_predictions:
            predictions = "The classes predicted for these examples are:\n"
            lp_block.append(predictions + _sample_lines(lp_ids, [shown[c] for c in lp_refs]))
    shared_chars = 0
    if cache:  # shared by the seed's prompts first, then the method's explanation (E2's is a prefix of E3's)
        global_note, local_note, ep_note = _cache_layout_notes(kind)
        system += lp_block
        shared_chars = len("\n\n".join(system))  # a baseline's whole system message, the others' prefix
        system += [*global_note, *explanation, *local_note, *lp_local, *ep_note]
    else:  # App. E: the explanation, the LP samples, their local contributions, f's predictions
        system += [*explanation, *lp_block[:1], *lp_local, *lp_block[1:]]
    if content.ep_local:
        user.append(local_block(ep_local_importances, "ep_local_importances", ep_ids))
    messages = (ChatMessage("system", "\n\n".join(system)), ChatMessage("user", "\n\n".join(user)))
    shared_chars = min(shared_chars, len(messages[0].content))
    return ConSimPrompt(
        messages=messages,
        setting=setting,
        class_names=names,
        shown_classes=shown,
        lp_sample_ids=lp_ids,
        sample_ids=ep_ids,
        references=ep_refs,
        concept_ids=shown_concepts,
        shared_prefix_chars=shared_chars,
    )


def check_layout(layout: object, owner: str, argument: str = "layout") -> PromptLayout:
    """``layout`` if it is one of :data:`PROMPT_LAYOUTS`, else an :class:`InvalidParameterError` naming ``owner``."""
    if not isinstance(layout, str) or layout not in PROMPT_LAYOUTS:
        raise invalid(
            argument, owner, f"one of {', '.join(map(repr, PROMPT_LAYOUTS))}", layout,
            "Use 'paper' (App. E, the default) or 'cache' (shared parts first, for providers' prompt caches).",
        )  # fmt: skip
    return layout  # type: ignore[return-value]  # checked just above


def _sample_lines(sample_ids: Sequence[str], values: Sequence[str]) -> str:
    """One ``Sample_{id}: {value}`` line per sample."""
    return "\n".join(f"Sample_{i}: {value}" for i, value in zip(sample_ids, values, strict=True))


def _task_description(kind: PromptType, cache: bool = False) -> str:
    """The task text; in the cache layout it leaves the explanation to :func:`_cache_layout_notes`, so it is the
    same for every prompt type with (or without) a learning phase."""
    content = kind.content
    parts = ["You are a classifier. For each sample, you have to predict the class."]
    if content.global_explanations and not cache:
        parts.append(
            "To complete the task, you will be given the concepts and their importance for each class."
        )
    if content.lp_samples:  # say only what the learning phase shows (a registered kind may omit f's labels)
        items = ["samples", *(["labels"] if content.lp_predictions else [])]
        if content.lp_local and not cache:
            items.append("concepts' contributions" + (" to labels" if content.lp_predictions else ""))
        listed = " and ".join(items) if len(items) <= 2 else ", ".join(items[:-1]) + ", and " + items[-1]
        parts.append(f"You will have examples of {listed} as references for the task.")
    if content.ep_local and not cache:
        parts.append("The samples to classify also come with their concepts' contributions.")
    parts.append("Each sample class prediction should be in the format: 'Sample_{i}: {predicted_class}'.")
    parts.append("Answer with one such line for every sample to classify, and nothing else.")
    return " ".join(parts)


def _cache_layout_notes(kind: PromptType) -> tuple[list[str], list[str], list[str]]:
    """The cache layout's sentences on the explanation parts, each said where its part starts: before the global
    explanation, before the LP local contributions, and at the end (EP local contributions, U1)."""
    content = kind.content
    global_note = [
        "To complete the task, you will be given the concepts and their importance for each class."
    ]
    local_note = ["The examples also come with their concepts' contributions."]
    ep_note = ["The samples to classify also come with their concepts' contributions."]
    return (
        global_note if content.global_explanations else [],
        local_note if content.lp_local else [],
        ep_note if content.ep_local else [],
    )


def _clean(text: str, max_chars: int | None) -> str:
    text = _WHITESPACE.sub(" ", text).strip()
    if max_chars is not None and len(text) > max_chars:
        text = text[: max_chars - 3].rstrip() + "..."
    return text


def _length(values: object) -> int:
    return len(values) if isinstance(values, Sized) else 0


def _check_samples(samples: object, name: str, max_chars: int | None) -> list[str]:
    return [_clean(text, max_chars) for text in check_texts(samples, name, _OWNER)]


def _check_predictions(values: Predictions, name: str, length: int, n_classes: int) -> tuple[int, ...]:
    array = _numpy(values)
    if array.ndim != 1 or len(array) != length or (array.size and not np.issubdtype(array.dtype, np.integer)):
        raise invalid(
            name,
            _OWNER,
            f"{length} integer class ids (one per sample)",
            f"shape {array.shape}, dtype {array.dtype}",
        )
    if array.size and (array.min() < 0 or array.max() >= n_classes):
        raise invalid(name, _OWNER, f"class ids in [0, {n_classes})", array.tolist())
    return tuple(int(v) for v in array)


def _numpy(values: ArrayLike, dtype: type | None = None) -> np.ndarray:
    """``values`` as a NumPy array (a tensor is detached and moved to the CPU first)."""
    detach = getattr(values, "detach", None)
    return np.asarray(detach().cpu() if callable(detach) else values, dtype=dtype)


def _as_matrix(
    values: Importances,
    name: str,
    n_rows: int,
    concept_ids: Sequence[int] | None,
    row_names: Sequence[str] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Normalised matrix ``(n_rows, n_concepts)`` and the concept id of each column."""
    if isinstance(values, Mapping) or (
        isinstance(values, Sequence) and values and isinstance(values[0], Mapping)
    ):
        rows = _mapping_rows(values, name, n_rows, row_names)
        ids = np.array(sorted({int(i) for row in rows for i in row}), dtype=np.int64)
        position = {int(i): j for j, i in enumerate(ids)}
        matrix = np.zeros((n_rows, len(ids)), dtype=np.float64)
        for r, row in enumerate(rows):
            for i, value in row.items():
                matrix[r, position[int(i)]] = float(value)
    else:
        matrix = _numpy(values, np.float64)  # type: ignore[arg-type]  # the mappings were handled above
        if matrix.ndim != 2 or matrix.shape[0] != n_rows or matrix.shape[1] == 0:
            raise invalid(name, _OWNER, f"an array of shape ({n_rows}, n_concepts)", f"shape {matrix.shape}")
        if concept_ids is None:
            ids = np.arange(matrix.shape[1], dtype=np.int64)
        else:
            ids = np.asarray(list(concept_ids), dtype=np.int64)
            if ids.shape != (matrix.shape[1],) or len(set(ids.tolist())) != len(ids):
                raise invalid(
                    "concept_ids",
                    _OWNER,
                    f"{matrix.shape[1]} distinct ids, one per column of {name}",
                    list(concept_ids),
                )
    if not np.all(np.isfinite(matrix)):
        raise invalid(
            name, _OWNER, "finite numbers", "NaN or infinite values", "Check the importance computation."
        )
    return np.asarray(normalize_importance(matrix)), ids


def _mapping_rows(
    values: object, name: str, n_rows: int, row_names: Sequence[str] | None
) -> list[Mapping[int, float]]:
    rows: list[object]
    if isinstance(values, Mapping):  # {class name or id: {concept id: value}}
        rows = [{} for _ in range(n_rows)]
        lookup = {n.casefold(): i for i, n in enumerate(row_names or ())}
        for key, row in values.items():
            index = lookup.get(key.strip().casefold()) if isinstance(key, str) else key
            if not isinstance(index, int | np.integer) or not 0 <= int(index) < n_rows:
                raise invalid(name, _OWNER, "keys that are class names or class ids", key)
            rows[int(index)] = row
    else:
        rows = list(values) if isinstance(values, Iterable) else []
        if len(rows) != n_rows:
            raise invalid(name, _OWNER, f"{n_rows} mappings (one per sample)", f"{len(rows)} mappings")
    for row in rows:
        if not isinstance(row, Mapping) or not all(
            isinstance(i, int | np.integer) and not isinstance(i, bool) for i in row
        ):
            raise invalid(name, _OWNER, "mappings {concept_id (int): importance}", row)
    return rows  # type: ignore[return-value]  # checked just above: {int: number} mappings


def _local(
    values: Importances | None, name: str, n_rows: int, concept_ids: Sequence[int] | None, kind: PromptType
) -> tuple[np.ndarray, np.ndarray]:
    if values is None:
        raise invalid(
            name,
            _OWNER,
            f"given for the {kind.name} prompt type (it shows local explanations)",
            None,
            "Pass the local concept importances of these samples (see xaimetrics.concepts.local_importance).",
        )
    return _as_matrix(values, name, n_rows, concept_ids)


def _sign(value: float) -> str:
    return importance_bucket(value) or ("+" if value > 0 else "-")


def _words(values: object) -> tuple[str, ...]:
    return tuple(str(word) for word in values) if isinstance(values, Iterable) else ()


def _describe(entry: object) -> tuple[tuple[str, ...], tuple[str, ...], str | None]:
    """``(aligned, opposed, label)`` from any accepted interpretation entry."""
    if entry is None:
        return (), (), None
    if isinstance(entry, ConceptInterpretation):
        return tuple(entry.aligned), tuple(entry.opposed), entry.label
    if isinstance(entry, str):
        return (), (), entry
    if isinstance(entry, Mapping):
        if any(key in entry for key in ("aligned", "opposed", "label")):
            label = entry.get("label")
            return (
                _words(entry.get("aligned")),
                _words(entry.get("opposed")),
                None if label is None else str(label),
            )
        scored = [
            (str(word), float(value)) for word, value in entry.items()
        ]  # Interpreto's {word: activation}
        aligned = tuple(w for w, v in sorted(scored, key=lambda p: -p[1]) if v > 0)
        opposed = tuple(w for w, v in sorted(scored, key=lambda p: p[1]) if v < 0)
        return aligned, opposed, None
    if hasattr(entry, "aligned"):  # an interpretation object of another library
        label = getattr(entry, "label", None)
        return (
            _words(entry.aligned),
            _words(getattr(entry, "opposed", ())),
            None if label is None else str(label),
        )
    if isinstance(entry, Sequence):
        return tuple(str(word) for word in entry), (), None
    raise invalid(
        "interpretation",
        _OWNER,
        "ConceptInterpretation, word lists, labels or {word: score} values",
        type(entry).__name__,
    )


def _concept_block(interpretation: Mapping[int, Description], shown: tuple[int, ...]) -> str:
    if not isinstance(interpretation, Mapping):
        raise invalid(
            "interpretation", _OWNER, "a mapping {concept_id: description}", type(interpretation).__name__
        )
    keys = {int(k) for k in interpretation if isinstance(k, int | np.integer) and not isinstance(k, bool)}
    if shown and not keys & set(shown):
        raise invalid(
            "interpretation",
            _OWNER,
            f"keyed by the concept ids of the importances (shown: {list(shown)[:8]})",
            f"keys {sorted(interpretation, key=str)[:8]}",
            "Key the interpretation by concept id, not by position.",
        )
    described = [(cid, *_describe(interpretation.get(cid))) for cid in shown]
    labels_only = all(label and not aligned and not opposed for _, aligned, opposed, label in described)
    with_labels = any(label for *_, label in described)
    if not shown:
        header = "No concept passes the importance threshold, so no concept is described."
    elif labels_only:
        header = "For each concept, its label is:"
    elif with_labels:
        header = "For each concept, its label and the most aligned and opposed words are:"
    else:
        header = "For each concept, the most aligned and opposed words are:"
    lines = [header]
    for cid, aligned, opposed, label in described:
        parts = []
        if label:
            parts.append(
                repr(_clean(str(label), None)) if labels_only else "label: " + repr(_clean(str(label), None))
            )
        if aligned or not (label or opposed):
            parts.append("aligned: " + repr([_clean(str(w), None) for w in aligned]))
        if opposed:
            parts.append("opposed: " + repr([_clean(str(w), None) for w in opposed]))
        lines.append(f"concept_{cid}: " + ", ".join(parts))
    return "\n".join(lines)


def _class_block(phi_hat: np.ndarray, ids: np.ndarray, keep: np.ndarray, shown: Sequence[str]) -> str:
    lines = ["The most important concepts and their importance for each class are:"]
    for c, name in enumerate(shown):
        columns = [j for j in np.argsort(ids, kind="stable") if keep[c, j]]
        entries = ", ".join(f"'concept_{ids[j]}': '{_sign(phi_hat[c, j])}'" for j in columns)
        lines.append(f"{name}: {entries or 'none'}")
    return "\n".join(lines)


def _local_block(
    local: np.ndarray, ids: np.ndarray, sample_ids: Sequence[str], shown: set[int], threshold: float
) -> str:
    lines = []
    order = np.argsort(ids, kind="stable")
    for r, sample_id in enumerate(sample_ids):
        entries = ", ".join(
            f"'concept_{ids[j]}': '{_sign(local[r, j])}'"
            for j in order
            if int(ids[j]) in shown and abs(local[r, j]) > threshold
        )
        lines.append(f"Concepts contributions for Sample_{sample_id}: {entries or 'none'}")
    return "\n".join(lines)
