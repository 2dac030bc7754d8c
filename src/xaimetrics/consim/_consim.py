"""The :class:`ConSim` façade, close to Interpreto's ``ConSim`` (``select_examples`` then ``evaluate``).

Differences from Interpreto 0.5, on purpose (DESIGN §4): the answer is scored against f's predictions on the
**EP** samples; selection is without replacement and fails loudly; concepts are filtered by id; the threshold
is a plain bound on normalised importances; local importances (E3, U1) come from
:func:`xaimetrics.concepts.local_importance` on the real model; answers are parsed by sample id.
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
from collections.abc import Sequence
from typing import Any

import numpy as np

from xaimetrics._deprecation import deprecated_attribute, warn_deprecated
from xaimetrics._validation import check_texts, invalid
from xaimetrics.consim._asking import evaluate_prompts
from xaimetrics.consim._explanation import (
    DEFAULT_BATCH_SIZE,
    Explanation,
    global_importances_of,
    local_importances_of,
)
from xaimetrics.consim._prompt_types import PromptSetting, PromptType
from xaimetrics.consim._rendering import render_prompt
from xaimetrics.consim._result import ConSimResult
from xaimetrics.consim._samples import ConSimSamples, as_class_ids
from xaimetrics.consim._scoring import ConSimPrompt, Scoring, check_scoring
from xaimetrics.consim._selection import Balance, select_examples

__all__ = ["DEFAULT_PROMPT_TYPES", "ConSim", "ConSimSamples"]

_OWNER = "ConSim"
#: the paper's five prompt types (U1, the upper bound, is asked for by name)
_PAPER_PROMPT_TYPES = ("NE1", "E1", "NE2", "E2", "E3")
#: the prompt types :meth:`ConSim.evaluate_many` runs by default: the paper's five, plain and anonymised
DEFAULT_PROMPT_TYPES = (*_PAPER_PROMPT_TYPES, *(f"{name}-a" for name in _PAPER_PROMPT_TYPES))
#: the per-call keywords of the old façade that now belong to the configuration (one release of grace)
_CALL_KEYWORDS = (*(f.name for f in dataclasses.fields(Explanation)), "importance_threshold")
_INIT_KEYWORDS = ("classes", "extractor", "interpretation", "activations")


def _explanation_alias(name: str) -> property:
    """A deprecated attribute of the previous façade that reads and writes ``ConSim.explanation.<name>``."""

    def read(self: ConSim) -> Any:
        warn_deprecated(f"attribute '{name}'", _OWNER, f"explanation.{name}")
        return getattr(self.explanation, name)

    def write(self: ConSim, value: Any) -> None:
        warn_deprecated(f"attribute '{name}'", _OWNER, f"ConSim(..., explanation=Explanation({name}=...))")
        self.explanation = dataclasses.replace(self.explanation, **{name: value})

    return property(read, write, doc=f"Deprecated: ``explanation.{name}``.")


class ConSim:
    """Concept-based simulatability (Poché et al. 2025): can a simulator predict f better with the explanation?

    Configuration once, data per call (like a scikit-learn estimator or a torchmetrics metric): the model,
    the simulator, the class names, **one** :class:`Explanation`, the importance threshold and the scoring
    are given here; the samples, the prompt types and the seed are given to each call.

    Step 1, :meth:`select_examples`: LP/EP samples (classes uniform, half predicted wrongly, seeded).
    Step 2, :meth:`evaluate` (one prompt type) or :meth:`evaluate_many` (several in one batched call):
    computes what the prompt type needs and the explanation does not give (global importances ``Φ`` on the
    concept-fit activations, local importances of the LP — and for U1 the EP — samples, for the class f
    predicted), renders the prompt, asks the simulator, parses by sample id and scores against f's EP
    predictions. Compare each score with its baseline (NE1 without LP, NE2 with LP) on the same samples, over
    several seeds (the paper uses 5). :meth:`build_prompts` renders without asking; :meth:`evaluate_prompts`
    asks about prompts rendered before.

    Args:
        model: the split classifier ``f = g∘h`` (``predict``, ``activations``, ``logits_from_activations``,
            ``class_names``). Optional when predictions and importances are all given.
        simulator: a :class:`~xaimetrics.simulators.Simulator` (``generate(messages, *, answer_schema)``).
            Without one, :meth:`evaluate` returns the prompt and the references (``score=None``).
        class_names: class names (default: ``model.class_names``).
        explanation: the method's :class:`Explanation` (extractor, interpretation, activations and any
            importances it gives); ``None`` for the no-explanation baselines only.
        importance_threshold: ``τ`` on normalised importances (paper: 0.05).
        max_sample_chars: cut sample texts longer than this in prompts (``None``: keep them whole).
        batch_size: batch size for the importance computations.
        scoring: ``"accuracy"`` (the paper's eq. 5 from the answer text) or ``"probability"``: also ask the
            simulator for its class probabilities per EP sample and fill
            :attr:`ConSimResult.expected_accuracy`, ``log_loss`` and ``brier`` (the simulator must support
            them, e.g. :class:`~xaimetrics.simulators.LlamaCppSimulator`).

    The keywords ``classes``, ``extractor``, ``interpretation`` and ``activations`` of the previous release
    still work (with a :class:`DeprecationWarning`); docs/consim.md has the migration table.

    Example:
        >>> from xaimetrics.simulators import ScriptedSimulator
        >>> consim = ConSim(None, ScriptedSimulator(lambda m: "Sample_2: positive\\nSample_3: negative"),
        ...                 class_names=["negative", "positive"])
        >>> result = consim.evaluate(["dull", "fun", "great", "meh"], [0, 1, 1, 1], prompt_type="NE2")
        >>> result.score, result.references, result.answers
        (0.5, {'2': 'positive', '3': 'positive'}, {'2': 'positive', '3': 'negative'})
    """

    prompt_types = PromptType

    def __init__(
        self,
        model: Any = None,
        simulator: Any = None,
        class_names: Sequence[str] | None = None,
        *,
        explanation: Explanation | None = None,
        importance_threshold: float = 0.05,
        max_sample_chars: int | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        scoring: Scoring = "accuracy",
        **deprecated: Any,
    ) -> None:
        _check_keywords(deprecated, _INIT_KEYWORDS, "ConSim()")
        if "classes" in deprecated:
            if class_names is not None:
                raise invalid("classes", _OWNER, "not given together with class_names", "both")
            warn_deprecated("'classes' parameter", _OWNER, "class_names=[...]")
            class_names = deprecated.pop("classes")
        if simulator is not None and not callable(getattr(simulator, "generate", None)):
            raise invalid(
                "simulator", _OWNER, "None or an object with generate(messages)", type(simulator).__name__
            )
        if explanation is not None and not isinstance(explanation, Explanation):
            raise invalid(
                "explanation", _OWNER, "an Explanation or None", type(explanation).__name__,
                "Pass explanation=Explanation(extractor=..., interpretation=..., activations=...).",
            )  # fmt: skip
        check_scoring(scoring, simulator, _OWNER)
        if model is not None and class_names is None and not hasattr(model, "class_names"):
            raise invalid("class_names", _OWNER, "given when the model has no class_names", None)
        self.model = model
        self.simulator = simulator
        self._class_names = None if class_names is None else list(class_names)
        self.explanation = _with_keywords(explanation or Explanation(), deprecated, _OWNER, stacklevel=3)
        self.importance_threshold = importance_threshold
        self.max_sample_chars = max_sample_chars
        self.batch_size = batch_size
        self.scoring = scoring
        self._global_cache: list[tuple[tuple[str, str, int], Any]] = []

    @property
    def class_names(self) -> list[str]:
        """The class names used in prompts (given, or the model's)."""
        if self._class_names is not None:
            return list(self._class_names)
        if self.model is not None and hasattr(self.model, "class_names"):
            return [str(name) for name in self.model.class_names]
        raise invalid(
            "class_names", _OWNER, "given (or a model with class_names)", None, "Pass class_names=[...]."
        )

    # -- step 1 ----------------------------------------------------------------------------------------------
    def select_examples(
        self,
        inputs: Sequence[str],
        labels: Any,
        predictions: Any = None,
        n_lp: int = 20,
        n_ep: int = 20,
        *,
        seed: int = 0,
        balance: Balance = "strict",
    ) -> ConSimSamples:
        """Select LP and EP samples (see :func:`select_examples`); f's predictions are computed if not given.

        A text is selected at most once: repeats of an earlier (normalised) text are left out, so no LP
        sample's prediction can be asked again in EP.

        Args:
            inputs: candidate texts (e.g. a test split).
            labels: their true classes, shape ``(n,)``.
            predictions: f's predictions on them (default: ``model.predict(inputs)``).
            n_lp, n_ep, seed, balance: as in :func:`select_examples`.
        """
        texts = check_texts(inputs, "inputs", "ConSim.select_examples")
        if predictions is None:
            predictions = self._require_model("predictions").predict(texts)
        selection = select_examples(
            labels, predictions, n_lp, n_ep, seed=seed, balance=balance, class_names=self.class_names,
            inputs=texts,
        )  # fmt: skip
        labels_ = as_class_ids(labels)
        predictions_ = as_class_ids(predictions)
        if len(labels_) != len(texts):
            raise invalid(
                "labels", "ConSim.select_examples", f"one label per input ({len(texts)})", len(labels_)
            )
        lp, ep = selection.lp_indices, selection.ep_indices
        return ConSimSamples(
            lp_texts=tuple(texts[i] for i in lp),
            ep_texts=tuple(texts[i] for i in ep),
            lp_labels=labels_[lp],
            ep_labels=labels_[ep],
            lp_predictions=predictions_[lp],
            ep_predictions=predictions_[ep],
            selection=selection,
            seed=int(seed),
        )

    # -- step 2 ----------------------------------------------------------------------------------------------
    def build_prompts(
        self,
        samples: ConSimSamples | Sequence[str],
        predictions: Any = None,
        *,
        prompt_types: Sequence[PromptType | str] | None = None,
        anonymize_classes: bool | None = None,
        n_lp: int | None = None,
        **deprecated: Any,
    ) -> list[ConSimPrompt]:
        """Render the prompts of several prompt types on the same samples (no simulator call).

        ``samples`` is a :class:`ConSimSamples`, or Interpreto-style LP-then-EP texts with ``predictions``
        (``n_lp`` defaults to half). Importances the explanation does not give are computed once and shared
        by all prompts. ``prompt_types`` takes names with the ``-a`` suffix for anonymised classes (default:
        NE1, E1, NE2, E2, E3, plain and anonymised); ``anonymize_classes=True`` anonymises every one of them
        (default then: the five, each once).

        Example:
            >>> consim = ConSim(class_names=["negative", "positive"])
            >>> prompts = consim.build_prompts(["dull", "fun", "great"], [0, 1, 1], prompt_types=["NE1", "NE2"],
            ...                                anonymize_classes=True, n_lp=1)
            >>> [p.label for p in prompts], prompts[1].reference_answer
            (['NE1-a', 'NE2-a'], 'Sample_1: Class_1\\nSample_2: Class_1')
        """
        explanation, threshold = self._call_configuration(deprecated, "ConSim.build_prompts")
        kinds = _prompt_types(prompt_types, anonymize_classes, "ConSim.build_prompts")
        return self._build(samples, predictions, kinds, n_lp, explanation, threshold)

    def build_prompt(
        self,
        samples: ConSimSamples | Sequence[str],
        predictions: Any = None,
        *,
        prompt_type: PromptType | str = PromptType.E3_global_and_local_concepts_with_lp,
        anonymize_classes: bool | None = None,
        n_lp: int | None = None,
        **deprecated: Any,
    ) -> ConSimPrompt:
        """Render the prompt of one prompt type (see :meth:`build_prompts`; no simulator call)."""
        explanation, threshold = self._call_configuration(deprecated, "ConSim.build_prompt")
        kinds = [PromptSetting.parse(prompt_type, anonymize_classes)]
        return self._build(samples, predictions, kinds, n_lp, explanation, threshold)[0]

    def evaluate(
        self,
        samples: ConSimSamples | Sequence[str],
        predictions: Any = None,
        *,
        seed: int | None = None,
        prompt_type: PromptType | str = PromptType.E3_global_and_local_concepts_with_lp,
        anonymize_classes: bool | None = None,
        n_lp: int | None = None,
        **deprecated: Any,
    ) -> ConSimResult:
        """Run one ConSim setting and return its :class:`ConSimResult` (``score`` is eq. 5).

        Arguments as in :meth:`build_prompt`; ``seed`` is recorded in the result (default: the selection's).
        Without a simulator the result holds the prompt and the references, with ``score=None``.
        """
        explanation, threshold = self._call_configuration(deprecated, "ConSim.evaluate")
        kinds = [PromptSetting.parse(prompt_type, anonymize_classes)]
        prompts = self._build(samples, predictions, kinds, n_lp, explanation, threshold)
        return self.evaluate_prompts(prompts, seed=_seed(samples, seed))[0]

    def evaluate_many(
        self,
        samples: ConSimSamples | Sequence[str],
        predictions: Any = None,
        *,
        seed: int | None = None,
        max_concurrency: int | None = None,
        prompt_types: Sequence[PromptType | str] | None = None,
        anonymize_classes: bool | None = None,
        n_lp: int | None = None,
        **deprecated: Any,
    ) -> list[ConSimResult]:
        """Run several prompt types on the same samples and explanation in **one** batched simulator call.

        Arguments as in :meth:`build_prompts`; ``seed`` as in :meth:`evaluate`; ``max_concurrency`` bounds the
        calls in flight (default: the simulator's).
        """
        explanation, threshold = self._call_configuration(deprecated, "ConSim.evaluate_many")
        kinds = _prompt_types(prompt_types, anonymize_classes, "ConSim.evaluate_many")
        prompts = self._build(samples, predictions, kinds, n_lp, explanation, threshold)
        return self.evaluate_prompts(prompts, seed=_seed(samples, seed), max_concurrency=max_concurrency)

    def evaluate_prompts(
        self, prompts: Sequence[ConSimPrompt], *, seed: int | None = None, max_concurrency: int | None = None
    ) -> list[ConSimResult]:
        """Ask the simulator about rendered prompts (batched when it can) and score them.

        Prompts of different methods or samples can be mixed; each answer is constrained by the prompt's
        :attr:`~ConSimPrompt.answer_schema` when the simulator supports it. The same path as the function
        :func:`~xaimetrics.consim.evaluate_prompts` (and the benchmark runner).
        """
        return evaluate_prompts(
            prompts, self.simulator, scoring=self.scoring, seed=seed, max_concurrency=max_concurrency
        )

    # -- deprecated spellings (one release) ------------------------------------------------------------------
    @property
    def classes(self) -> list[str] | None:
        """Deprecated: the given class names (use :attr:`class_names`)."""
        warn_deprecated("attribute 'classes'", _OWNER, "class_names")
        return None if self._class_names is None else list(self._class_names)

    @classes.setter
    def classes(self, value: Sequence[str] | None) -> None:
        warn_deprecated("attribute 'classes'", _OWNER, "ConSim(..., class_names=[...])")
        self._class_names = None if value is None else list(value)

    extractor = _explanation_alias("extractor")
    interpretation = _explanation_alias("interpretation")
    activations = _explanation_alias("activations")

    # -- internals -------------------------------------------------------------------------------------------
    def _call_configuration(self, keywords: dict[str, Any], owner: str) -> tuple[Explanation, float]:
        """The explanation and threshold of one call: the configured ones, or the deprecated per-call ones."""
        _check_keywords(keywords, _CALL_KEYWORDS, f"{owner}()")
        threshold = keywords.pop("importance_threshold", None)
        if threshold is not None:
            warn_deprecated(
                "'importance_threshold' parameter",
                owner,
                "ConSim(..., importance_threshold=...)",
                stacklevel=3,
            )
        explanation = _with_keywords(self.explanation, keywords, owner, stacklevel=4)
        return explanation, self.importance_threshold if threshold is None else threshold

    def _require_model(self, what: str) -> Any:
        if self.model is None:
            raise invalid(
                "model", _OWNER, f"given to compute the {what}", None, f"Pass the model or the {what}."
            )
        return self.model

    def _build(
        self,
        samples: Any,
        predictions: Any,
        kinds: list[PromptSetting],
        n_lp: int | None,
        explanation: Explanation,
        threshold: float,
    ) -> list[ConSimPrompt]:
        lp_texts, ep_texts, lp_pred, ep_pred = self._split(samples, predictions, n_lp)
        names = self.class_names
        needs = [setting.kind.content for setting in kinds]
        model, extractor = self.model, explanation.extractor
        interpretation = explanation.interpretation_mapping()
        computed: dict[str, Any] = {}
        if any(c.global_explanations for c in needs) and explanation.global_importances is None:
            computed["global_importances"] = self._global_importances(explanation, len(names))
        if any(c.lp_local for c in needs) and explanation.lp_local_importances is None:
            computed["lp_local_importances"] = local_importances_of(
                model, extractor, lp_texts, lp_pred, self.batch_size, "LP"
            )
        if any(c.ep_local for c in needs) and explanation.ep_local_importances is None:
            computed["ep_local_importances"] = local_importances_of(
                model, extractor, ep_texts, ep_pred, self.batch_size, "EP"
            )
        full = dataclasses.replace(explanation, **computed)  # the configured explanation is never changed
        return [
            render_prompt(
                setting,
                class_names=names,
                ep_samples=ep_texts,
                ep_predictions=ep_pred,
                lp_samples=lp_texts,
                lp_predictions=lp_pred,
                interpretation=interpretation,
                global_importances=full.global_importances,
                lp_local_importances=full.lp_local_importances,
                ep_local_importances=full.ep_local_importances,
                concept_ids=full.concept_ids,
                importance_threshold=threshold,
                max_sample_chars=self.max_sample_chars,
            )
            for setting in kinds
        ]

    def _split(
        self, samples: Any, predictions: Any, n_lp: int | None
    ) -> tuple[list[str], list[str], np.ndarray, np.ndarray]:
        if isinstance(samples, ConSimSamples):
            if predictions is not None or n_lp is not None:
                raise invalid(
                    "predictions",
                    _OWNER,
                    "None when samples is a ConSimSamples (it carries them)",
                    "a value",
                )
            return (
                list(samples.lp_texts),
                list(samples.ep_texts),
                samples.lp_predictions,
                samples.ep_predictions,
            )
        texts = check_texts(samples, "samples", "ConSim.evaluate")
        preds = (
            self._require_model("predictions").predict(texts)
            if predictions is None
            else as_class_ids(predictions)
        )
        if len(preds) != len(texts):
            raise invalid(
                "predictions", "ConSim.evaluate", f"one prediction per sample ({len(texts)})", len(preds)
            )
        cut = len(texts) // 2 if n_lp is None else n_lp
        if isinstance(cut, bool) or not isinstance(cut, int) or not 0 <= cut < len(texts):
            raise invalid("n_lp", "ConSim.evaluate", f"an integer in [0, {len(texts)})", n_lp)
        return texts[:cut], texts[cut:], preds[:cut], preds[cut:]

    def _global_importances(self, explanation: Explanation, n_classes: int) -> Any:
        """``Φ``, computed once per (extractor state, activations) *content* and kept for the next prompts.

        The key is a digest of the values, not the objects: refitting the same extractor object, or editing
        the activations in place, computes ``Φ`` again (an identity key returned stale importances). The
        model is taken as fixed for a ConSim object.
        """
        extractor, activations = explanation.extractor, explanation.activations
        key = (content_digest(extractor), content_digest(activations), n_classes)
        for cached_key, value in self._global_cache:
            if cached_key == key:
                return value
        value = global_importances_of(self.model, extractor, activations, n_classes, self.batch_size)
        self._global_cache = [*self._global_cache[-3:], (key, value)]
        return value


def _prompt_types(
    prompt_types: Sequence[PromptType | str] | None, anonymize_classes: bool | None, owner: str
) -> list[PromptSetting]:
    if prompt_types is None:
        prompt_types = DEFAULT_PROMPT_TYPES if anonymize_classes is None else _PAPER_PROMPT_TYPES
    if isinstance(prompt_types, str | PromptType) or not prompt_types:
        raise invalid("prompt_types", owner, "a non-empty list of prompt types", prompt_types)
    return [PromptSetting.parse(p, anonymize_classes) for p in prompt_types]


def _check_keywords(keywords: dict[str, Any], allowed: Sequence[str], owner: str) -> None:
    unknown = sorted(set(keywords) - set(allowed))
    if unknown:
        raise TypeError(f"{owner} got an unexpected keyword argument {unknown[0]!r}")


def _with_keywords(
    explanation: Explanation, keywords: dict[str, Any], owner: str, *, stacklevel: int
) -> Explanation:
    """``explanation`` with the fields given as deprecated keywords (``None`` keeps a field), with a warning."""
    given = {name: value for name, value in keywords.items() if value is not None}
    for name in given:
        warn_deprecated(
            f"'{name}' parameter",
            owner,
            f"ConSim(..., explanation=Explanation({name}=...))",
            stacklevel=stacklevel,
        )
    return dataclasses.replace(explanation, **given) if given else explanation


def _seed(samples: Any, seed: int | None) -> int | None:
    if seed is not None:
        return int(seed)
    return samples.seed if isinstance(samples, ConSimSamples) else None


def __getattr__(name: str) -> Any:
    return deprecated_attribute(
        __name__, name, {"DEFAULT_SETTINGS": ("DEFAULT_PROMPT_TYPES", DEFAULT_PROMPT_TYPES)}
    )


def content_digest(value: Any) -> str:
    """A SHA-256 digest of what ``value`` holds: array and tensor bytes (with dtype and shape), the learned
    state of an object (its attributes, torch modules by ``state_dict``), containers item by item.

    Two objects with equal content share a digest; refitting an extractor or editing an array in place
    changes it. An object's private attributes (``_cache``) and the functions stored on it (a patched method)
    are not part of its content.

    Example:
        >>> a = np.arange(6.0).reshape(2, 3)
        >>> before = content_digest(a)
        >>> before == content_digest(a.copy()), before == content_digest(a.T)
        (True, False)
        >>> a[0, 0] = 9.0
        >>> content_digest(a) == before
        False
    """
    digest = hashlib.sha256()
    _feed(digest, value, depth=0, seen=set())
    return digest.hexdigest()


def _feed(digest: Any, value: Any, *, depth: int, seen: set[int]) -> None:
    if hasattr(value, "detach") and hasattr(value, "cpu"):  # a torch tensor
        import torch

        tensor = value.detach().cpu().contiguous()
        digest.update(f"tensor{tuple(tensor.shape)}{tensor.dtype}".encode())
        digest.update(tensor.reshape(-1).view(torch.uint8).numpy().tobytes())
        return
    if isinstance(value, np.ndarray):
        array = np.ascontiguousarray(value)
        digest.update(f"array{array.shape}{array.dtype}".encode())
        digest.update(array.tobytes() if array.dtype != object else repr(array.tolist()).encode())
        return
    if value is None or isinstance(value, bool | int | float | complex | str | bytes | np.generic):
        digest.update(f"{type(value).__name__}:{value!r};".encode())
        return
    if id(value) in seen or depth > 6:
        digest.update(b"<...>")
        return
    seen = seen | {id(value)}
    if isinstance(value, dict):
        digest.update(b"dict{")
        for key in sorted(value, key=repr):
            digest.update(repr(key).encode())
            _feed(digest, value[key], depth=depth + 1, seen=seen)
        digest.update(b"}")
    elif isinstance(value, list | tuple | set | frozenset):
        items = sorted(value, key=repr) if isinstance(value, set | frozenset) else value
        digest.update(f"{type(value).__name__}[".encode())
        for item in items:
            _feed(digest, item, depth=depth + 1, seen=seen)
        digest.update(b"]")
    elif callable(getattr(value, "state_dict", None)) and callable(getattr(value, "parameters", None)):
        digest.update(
            f"module:{type(value).__qualname__}".encode()
        )  # a torch module: its weights and buffers
        _feed(digest, dict(value.state_dict()), depth=depth + 1, seen=seen)
    elif hasattr(value, "__dict__"):
        digest.update(f"object:{type(value).__module__}.{type(value).__qualname__}".encode())
        # public attributes only: learned state ends in "_" (components_, mean_...); private ones ("_torch_cache_")
        # are caches derived from it, and functions stored on the object (patched methods) are not state
        state = {k: v for k, v in vars(value).items() if not k.startswith("_") and not inspect.isroutine(v)}
        _feed(digest, state, depth=depth + 1, seen=seen)
    else:
        digest.update(f"{type(value).__qualname__}:{value!r}".encode())
