"""The :class:`ConSim` façade, close to Interpreto's ``ConSim`` (``select_examples`` then ``evaluate``).

A thin convenience over the functional core (:mod:`xaimetrics.consim._pipeline`): it stores the configuration
(model, simulator, class names, one :class:`Explanation`, threshold, scoring) and calls
:func:`~xaimetrics.consim.select_examples`, :func:`~xaimetrics.consim.build_prompts` and
:func:`~xaimetrics.consim.evaluate_prompts` — the functions the benchmark and ``xaimetrics consim`` call. What it
adds: f's predictions from the model when they are not given, Interpreto-style samples (LP-then-EP texts with
predictions), and a cache of ``Φ`` per explanation content across calls.

Differences from Interpreto 0.5, on purpose (DESIGN §4): the answer is scored against f's predictions on the
**EP** samples; selection is without replacement and fails loudly; concepts are filtered by id; the threshold
is a plain bound on normalised importances; local importances (E3, U1) come from
:func:`xaimetrics.concepts.local_importance` on the real model; answers are parsed by sample id.
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np
from numpy.typing import ArrayLike

from xaimetrics._typing import Array
from xaimetrics._validation import check_texts, invalid
from xaimetrics.consim._asking import evaluate_prompts
from xaimetrics.consim._explanation import DEFAULT_BATCH_SIZE, Explanation, global_importances_of
from xaimetrics.consim._pipeline import (
    DEFAULT_IMPORTANCE_THRESHOLD,
    DEFAULT_PROMPT_TYPES,
    PromptTypeLike,
    build_prompts,
    prompt_settings,
)
from xaimetrics.consim._prompt_types import PromptSetting, PromptType
from xaimetrics.consim._rendering import PromptLayout, check_layout
from xaimetrics.consim._result import ConSimResult
from xaimetrics.consim._samples import (
    DEFAULT_N_EP,
    DEFAULT_N_LP,
    ConSimSamples,
    as_class_ids,
    select_examples,
)
from xaimetrics.consim._scoring import ConSimPrompt, Scoring, check_scoring
from xaimetrics.consim._selection import Balance

if TYPE_CHECKING:
    from xaimetrics._protocols import SplitModel
    from xaimetrics.simulators import Simulator

__all__ = ["DEFAULT_PROMPT_TYPES", "ConSim", "ConSimSamples", "content_digest"]

_OWNER = "ConSim"
_LOG = logging.getLogger("xaimetrics.consim")
_DEFAULT_PROMPT_TYPE = PromptType.E3_global_and_local_concepts_with_lp


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
    asks about prompts rendered before. Each step is a function of :mod:`xaimetrics.consim` too.

    Args:
        model: the split classifier ``f = g∘h`` (a :class:`~xaimetrics._protocols.SplitModel`:
            ``predict``, ``activations``, ``logits_from_activations``, ``class_names``). Optional when
            predictions and importances are all given.
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
        layout: the prompt layout, ``"paper"`` (App. E) or ``"cache"`` (a seed's shared parts first, so a
            provider's prompt cache reads them; see :func:`~xaimetrics.consim.render_prompt`).

    Example:
        >>> from xaimetrics.simulators import ScriptedSimulator
        >>> consim = ConSim(simulator=ScriptedSimulator(lambda m: "Sample_2: positive\\nSample_3: negative"),
        ...                 class_names=["negative", "positive"])
        >>> result = consim.evaluate(["dull", "fun", "great", "meh"], [0, 1, 1, 1], prompt_type="NE2")
        >>> result.score, result.references, result.answers
        (0.5, {'2': 'positive', '3': 'positive'}, {'2': 'positive', '3': 'negative'})
    """

    prompt_types = PromptType

    def __init__(
        self,
        model: SplitModel | None = None,
        simulator: Simulator | None = None,
        class_names: Sequence[str] | None = None,
        *,
        explanation: Explanation | None = None,
        importance_threshold: float = DEFAULT_IMPORTANCE_THRESHOLD,
        max_sample_chars: int | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        scoring: Scoring = "accuracy",
        layout: PromptLayout = "paper",
    ) -> None:
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
        self.explanation = explanation or Explanation()
        self.importance_threshold = importance_threshold
        self.max_sample_chars = max_sample_chars
        self.batch_size = batch_size
        self.scoring = scoring
        self.layout = check_layout(layout, _OWNER)
        self._global_cache: list[tuple[tuple[str, str, int], Array]] = []

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
        labels: ArrayLike,
        predictions: ArrayLike | None = None,
        n_lp: int = DEFAULT_N_LP,
        n_ep: int = DEFAULT_N_EP,
        *,
        seed: int = 0,
        balance: Balance = "strict",
    ) -> ConSimSamples:
        """Select LP and EP samples (:func:`~xaimetrics.consim.select_examples`); f's predictions are computed if
        not given.

        Args:
            inputs: candidate texts (e.g. a test split).
            labels: their true classes, shape ``(n,)``.
            predictions: f's predictions on them (default: ``model.predict(inputs)``).
            n_lp, n_ep, seed, balance: as in :func:`~xaimetrics.consim.select_examples`.
        """
        owner = "ConSim.select_examples"
        texts = check_texts(inputs, "inputs", owner)
        if predictions is None:
            predictions = self._require_model("predictions").predict(texts)
        return select_examples(
            texts, labels, predictions, n_lp, n_ep, seed=seed, balance=balance, class_names=self.class_names,
            owner=owner,
        )  # fmt: skip

    # -- step 2 ----------------------------------------------------------------------------------------------
    def build_prompts(
        self,
        samples: ConSimSamples | Sequence[str],
        predictions: ArrayLike | None = None,
        *,
        prompt_types: Sequence[PromptTypeLike] | None = None,
        anonymize_classes: bool | None = None,
        n_lp: int | None = None,
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
        settings = prompt_settings(prompt_types, anonymize_classes, "ConSim.build_prompts")
        return self._build(samples, predictions, settings, n_lp)

    def build_prompt(
        self,
        samples: ConSimSamples | Sequence[str],
        predictions: ArrayLike | None = None,
        *,
        prompt_type: PromptTypeLike = _DEFAULT_PROMPT_TYPE,
        anonymize_classes: bool | None = None,
        n_lp: int | None = None,
    ) -> ConSimPrompt:
        """Render the prompt of one prompt type (see :meth:`build_prompts`; no simulator call)."""
        settings = [PromptSetting.parse(prompt_type, anonymize_classes)]
        return self._build(samples, predictions, settings, n_lp)[0]

    def evaluate(
        self,
        samples: ConSimSamples | Sequence[str],
        predictions: ArrayLike | None = None,
        *,
        seed: int | None = None,
        prompt_type: PromptTypeLike = _DEFAULT_PROMPT_TYPE,
        anonymize_classes: bool | None = None,
        n_lp: int | None = None,
    ) -> ConSimResult:
        """Run one ConSim setting and return its :class:`ConSimResult` (``score`` is eq. 5).

        Arguments as in :meth:`build_prompt`; ``seed`` is recorded in the result (default: the selection's).
        Without a simulator the result holds the prompt and the references, with ``score=None``.
        """
        settings = [PromptSetting.parse(prompt_type, anonymize_classes)]
        prompts = self._build(samples, predictions, settings, n_lp)
        return self.evaluate_prompts(prompts, seed=_seed(samples, seed))[0]

    def evaluate_many(
        self,
        samples: ConSimSamples | Sequence[str],
        predictions: ArrayLike | None = None,
        *,
        seed: int | None = None,
        max_concurrency: int | None = None,
        prompt_types: Sequence[PromptTypeLike] | None = None,
        anonymize_classes: bool | None = None,
        n_lp: int | None = None,
    ) -> list[ConSimResult]:
        """Run several prompt types on the same samples and explanation in **one** batched simulator call.

        Arguments as in :meth:`build_prompts`; ``seed`` as in :meth:`evaluate`; ``max_concurrency`` bounds the
        calls in flight (default: the simulator's).
        """
        settings = prompt_settings(prompt_types, anonymize_classes, "ConSim.evaluate_many")
        prompts = self._build(samples, predictions, settings, n_lp)
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

    # -- internals -------------------------------------------------------------------------------------------
    def _require_model(self, what: str) -> SplitModel:
        if self.model is None:
            raise invalid(
                "model", _OWNER, f"given to compute the {what}", None, f"Pass the model or the {what}."
            )
        return self.model

    def _build(
        self,
        samples: ConSimSamples | Sequence[str],
        predictions: ArrayLike | None,
        settings: list[PromptSetting],
        n_lp: int | None,
    ) -> list[ConSimPrompt]:
        selected = self._samples(samples, predictions, n_lp)
        names = self.class_names
        explanation = self.explanation
        if (
            any(s.kind.content.global_explanations for s in settings)
            and explanation.global_importances is None
        ):
            explanation = dataclasses.replace(
                explanation, global_importances=self._global_importances(explanation, len(names))
            )  # the configured explanation is never changed
        return build_prompts(
            selected, explanation, settings, model=self.model, class_names=names,
            importance_threshold=self.importance_threshold, max_sample_chars=self.max_sample_chars,
            batch_size=self.batch_size, layout=self.layout,
        )  # fmt: skip

    def _samples(
        self, samples: ConSimSamples | Sequence[str], predictions: ArrayLike | None, n_lp: int | None
    ) -> ConSimSamples:
        """``samples`` as :class:`ConSimSamples` (Interpreto-style LP-then-EP texts are cut at ``n_lp``)."""
        if isinstance(samples, ConSimSamples):
            if predictions is not None or n_lp is not None:
                raise invalid(
                    "predictions",
                    _OWNER,
                    "None when samples is a ConSimSamples (it carries them)",
                    "a value",
                )
            return samples
        texts = check_texts(samples, "samples", "ConSim.evaluate")
        preds = (
            as_class_ids(self._require_model("predictions").predict(texts))
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
        return ConSimSamples(
            lp_texts=tuple(texts[:cut]), ep_texts=tuple(texts[cut:]), lp_predictions=preds[:cut],
            ep_predictions=preds[cut:],
        )  # fmt: skip

    def _global_importances(self, explanation: Explanation, n_classes: int) -> Array:
        """``Φ``, computed once per (extractor state, activations) *content* and kept for the next prompts.

        The key is a digest of the values, not the objects: refitting the same extractor object, or editing
        the activations in place, computes ``Φ`` again (an identity key returned stale importances). The
        model is taken as fixed for a ConSim object.
        """
        extractor, activations = explanation.extractor, explanation.activations
        key = (content_digest(extractor), content_digest(activations), n_classes)
        for cached_key, value in self._global_cache:
            if cached_key == key:
                _LOG.debug("Global importances reused (same extractor state and activations).")
                return value
        value = global_importances_of(self.model, extractor, activations, n_classes, self.batch_size)
        self._global_cache = [*self._global_cache[-3:], (key, value)]
        return value


def _seed(samples: ConSimSamples | Sequence[str], seed: int | None) -> int | None:
    if seed is not None:
        return int(seed)
    return samples.seed if isinstance(samples, ConSimSamples) else None


class _Digest(Protocol):
    def update(self, data: bytes, /) -> None: ...


def content_digest(value: object) -> str:
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


def _feed(digest: _Digest, value: object, *, depth: int, seen: set[int]) -> None:
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
    elif callable(state_dict := getattr(value, "state_dict", None)) and callable(
        getattr(value, "parameters", None)
    ):
        digest.update(
            f"module:{type(value).__qualname__}".encode()
        )  # a torch module: its weights and buffers
        _feed(digest, dict(state_dict()), depth=depth + 1, seen=seen)
    elif hasattr(value, "__dict__"):
        digest.update(f"object:{type(value).__module__}.{type(value).__qualname__}".encode())
        # public attributes only: learned state ends in "_" (components_, mean_...); private ones ("_torch_cache_")
        # are caches derived from it, and functions stored on the object (patched methods) are not state
        state = {k: v for k, v in vars(value).items() if not k.startswith("_") and not inspect.isroutine(v)}
        _feed(digest, state, depth=depth + 1, seen=seen)
    else:
        digest.update(f"{type(value).__qualname__}:{value!r}".encode())
