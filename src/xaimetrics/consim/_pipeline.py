"""The ConSim pipeline as functions: the one path that :class:`~xaimetrics.consim.ConSim`, the benchmark grid and
``xaimetrics consim`` all call, with the defaults defined here once.

1. :func:`~xaimetrics.consim.select_examples` — the LP/EP samples (paper App. B.1);
2. :func:`interpret_concepts` — a fitted extractor's concepts in words: top words (CMAW, eq. 1) or LLM labels
   (o1CA, eq. 2);
3. :func:`build_prompts` — computes what the prompt types need and the :class:`Explanation` does not give
   (global importances ``Φ``, local importances of the LP — and for U1 the EP — samples), once for all of
   them, and renders each prompt (paper App. E);
4. :func:`~xaimetrics.consim.evaluate_prompts` — asks the simulator and scores the answers (eq. 5).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from xaimetrics._validation import invalid
from xaimetrics.consim._explanation import (
    DEFAULT_BATCH_SIZE,
    Explanation,
    global_importances_of,
    local_importances_of,
)
from xaimetrics.consim._interpretations import (
    DEFAULT_MIN_FREQUENCY,
    DEFAULT_STOP_WORDS,
    INTERPRETATIONS,
    InterpretationInputs,
)
from xaimetrics.consim._prompt_types import PromptSetting, PromptType
from xaimetrics.consim._rendering import PromptLayout, render_prompt
from xaimetrics.consim._samples import ConSimSamples
from xaimetrics.consim._scoring import ConSimPrompt

if TYPE_CHECKING:
    from xaimetrics._protocols import ActivationModel, SplitModel
    from xaimetrics.concepts import ConceptExtractor, ConceptInterpretation
    from xaimetrics.simulators import Simulator

__all__ = [
    "DEFAULT_IMPORTANCE_THRESHOLD",
    "DEFAULT_MIN_FREQUENCY",
    "DEFAULT_PROMPT_TYPES",
    "DEFAULT_STOP_WORDS",
    "INTERPRETATIONS",
    "PAPER_PROMPT_TYPES",
    "build_prompts",
    "complete_explanation",
    "interpret_concepts",
    "prompt_settings",
]

_OWNER = "ConSim"
_LOG = logging.getLogger("xaimetrics.consim")
#: ``τ`` on normalised importances: a concept (or a local entry) is shown above it (paper: 0.05)
DEFAULT_IMPORTANCE_THRESHOLD = 0.05
#: the paper's five prompt types (U1, the upper bound, is asked for by name)
PAPER_PROMPT_TYPES = ("NE1", "E1", "NE2", "E2", "E3")
#: the prompt types run by default: the paper's five, plain and anonymised
DEFAULT_PROMPT_TYPES = (*PAPER_PROMPT_TYPES, *(f"{name}-a" for name in PAPER_PROMPT_TYPES))
#: any spelling :meth:`PromptSetting.parse` accepts
PromptTypeLike = PromptSetting | PromptType | str


def prompt_settings(
    prompt_types: Sequence[PromptTypeLike] | None = None,
    anonymize_classes: bool | None = None,
    owner: str = "build_prompts",
) -> list[PromptSetting]:
    """The :class:`PromptSetting` of each prompt type (default: :data:`DEFAULT_PROMPT_TYPES`, or the paper's five
    each once when ``anonymize_classes`` is given).

    Example:
        >>> [s.label for s in prompt_settings(["NE1", "E3-a"])], len(prompt_settings(anonymize_classes=True))
        (['NE1', 'E3-a'], 5)
    """
    if prompt_types is None:
        prompt_types = DEFAULT_PROMPT_TYPES if anonymize_classes is None else PAPER_PROMPT_TYPES
    if isinstance(prompt_types, str | PromptType | PromptSetting) or not prompt_types:
        raise invalid("prompt_types", owner, "a non-empty list of prompt types", prompt_types)
    return [PromptSetting.parse(p, anonymize_classes) for p in prompt_types]


def complete_explanation(
    explanation: Explanation,
    samples: ConSimSamples,
    settings: Sequence[PromptSetting],
    *,
    model: SplitModel | None,
    n_classes: int,
    batch_size: int = DEFAULT_BATCH_SIZE,
) -> Explanation:
    """``explanation`` with what the prompt ``settings`` show and it does not give, computed from the model:
    ``Φ`` on its activations (eq. 4), ``φ`` of the LP samples (E3, U1) and of the EP samples (U1), each for the
    class f predicted (eq. 3). A new :class:`Explanation`: the one given is never changed."""
    needs = [setting.kind.content for setting in settings]
    full = explanation
    _LOG.debug(
        "Completing an explanation for %s (global given: %s).",
        ", ".join(s.label for s in settings), explanation.global_importances is not None,
    )  # fmt: skip
    if any(c.global_explanations for c in needs) and full.global_importances is None:
        full = dataclasses.replace(
            full,
            global_importances=global_importances_of(
                model, full.extractor, full.activations, n_classes, batch_size
            ),
        )
    if any(c.lp_local for c in needs) and full.lp_local_importances is None:
        full = dataclasses.replace(
            full,
            lp_local_importances=local_importances_of(
                model, full.extractor, samples.lp_texts, samples.lp_predictions, batch_size, "LP"
            ),
        )
    if any(c.ep_local for c in needs) and full.ep_local_importances is None:
        full = dataclasses.replace(
            full,
            ep_local_importances=local_importances_of(
                model, full.extractor, samples.ep_texts, samples.ep_predictions, batch_size, "EP"
            ),
        )
    return full


def build_prompts(
    samples: ConSimSamples,
    explanation: Explanation | None = None,
    prompt_types: Sequence[PromptTypeLike] | None = None,
    *,
    model: SplitModel | None = None,
    class_names: Sequence[str] | None = None,
    anonymize_classes: bool | None = None,
    importance_threshold: float = DEFAULT_IMPORTANCE_THRESHOLD,
    max_sample_chars: int | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    layout: PromptLayout = "paper",
) -> list[ConSimPrompt]:
    """Render the prompts of several prompt types on the same samples and explanation (no simulator call).

    Importances the explanation does not give are computed once from ``model`` and shared by every prompt
    (:func:`complete_explanation`).

    Args:
        samples: the :class:`ConSimSamples` (from :func:`~xaimetrics.consim.select_examples`).
        explanation: the method's :class:`Explanation` (``None``: the no-explanation baselines only).
        prompt_types: names such as ``"E3"`` or ``"E3-a"`` (``-a``: anonymised classes) or
            :class:`PromptSetting` objects (default: :data:`DEFAULT_PROMPT_TYPES`).
        model: the split classifier, needed for the importances the explanation does not give.
        class_names: class names, index = class id (default: ``model.class_names``).
        anonymize_classes: ``True`` anonymises every prompt type.
        importance_threshold: ``τ`` on normalised importances (paper: 0.05).
        max_sample_chars: cut sample texts longer than this (``None``: keep them whole).
        batch_size: batch size of the importance computations.
        layout: ``"paper"`` (App. E) or ``"cache"`` (a seed's shared parts first, for providers' prompt
            caches; see :func:`~xaimetrics.consim.render_prompt`).

    Returns:
        One :class:`ConSimPrompt` per prompt type, in order.

    Example:
        >>> from xaimetrics.consim import select_examples
        >>> samples = select_examples(["dull", "fun", "great", "meh"], [0, 1, 1, 0], [0, 0, 1, 1], n_lp=2,
        ...                           n_ep=2, seed=1)
        >>> prompts = build_prompts(samples, prompt_types=["NE1", "NE2-a"], class_names=["negative", "positive"])
        >>> [p.label for p in prompts], prompts[1].reference_answer
        (['NE1', 'NE2-a'], 'Sample_2: Class_0\\nSample_3: Class_0')
    """
    if not isinstance(samples, ConSimSamples):
        raise invalid(
            "samples", "build_prompts", "a ConSimSamples (from select_examples)", type(samples).__name__
        )
    settings = prompt_settings(prompt_types, anonymize_classes)
    names = _class_names(class_names, model)
    full = complete_explanation(
        explanation or Explanation(),
        samples,
        settings,
        model=model,
        n_classes=len(names),
        batch_size=batch_size,
    )
    interpretation = full.interpretation_mapping()
    return [
        render_prompt(
            setting,
            class_names=names,
            ep_samples=samples.ep_texts,
            ep_predictions=samples.ep_predictions,
            lp_samples=samples.lp_texts,
            lp_predictions=samples.lp_predictions,
            interpretation=interpretation,
            global_importances=full.global_importances,
            lp_local_importances=full.lp_local_importances,
            ep_local_importances=full.ep_local_importances,
            concept_ids=full.concept_ids,
            importance_threshold=importance_threshold,
            max_sample_chars=max_sample_chars,
            layout=layout,
        )
        for setting in settings
    ]


def interpret_concepts(
    kind: str,
    texts: Sequence[str],
    *,
    model: ActivationModel,
    extractor: ConceptExtractor,
    simulator: Simulator | None = None,
    class_names: Sequence[str] | None = None,
    seed: int = 0,
    min_frequency: int = DEFAULT_MIN_FREQUENCY,
    variant: Literal["signed", "paper"] = "signed",
) -> dict[int, ConceptInterpretation]:
    """``{concept_id: interpretation}`` of a fitted extractor, fitted on the concept-fit ``texts``.

    The entry ``kind`` of :data:`INTERPRETATIONS` interprets: ``"top_words"``: :class:`~xaimetrics.concepts.TopWords`
    (CMAW, eq. 1) with ``min_frequency``, the :data:`DEFAULT_STOP_WORDS` and ``variant``; ``"llm_labels"``:
    :class:`~xaimetrics.consim.LLMLabels` (o1CA, eq. 2) proposed by ``simulator`` from examples drawn with ``seed``.

    Args:
        kind: a name of :data:`INTERPRETATIONS` (``"top_words"``, ``"llm_labels"``).
        texts: the concept-fit texts.
        model: ``h`` (``activations(texts)``); a memo of it works too.
        extractor: the fitted concept extractor.
        simulator: the LLM that proposes labels (``"llm_labels"`` only).
        class_names: the class names shown to the LLM (``"llm_labels"`` only).
        seed: the draw of the examples shown to the LLM (``"llm_labels"`` only).
        min_frequency, variant: top words only (see :class:`~xaimetrics.concepts.TopWords`).
    """
    interpretation = INTERPRETATIONS.get(kind, owner="interpret_concepts")
    return interpretation.interpret(
        InterpretationInputs(
            texts, model, extractor, simulator=simulator, class_names=class_names, seed=seed,
            min_frequency=min_frequency, variant=variant,
        )
    )  # fmt: skip


def _class_names(class_names: Sequence[str] | None, model: SplitModel | None) -> list[str]:
    if class_names is not None:
        return list(class_names)
    if model is not None and hasattr(model, "class_names"):
        return [str(name) for name in model.class_names]
    raise invalid(
        "class_names", _OWNER, "given (or a model with class_names)", None, "Pass class_names=[...]."
    )
