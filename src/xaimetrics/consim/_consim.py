"""The :class:`ConSim` façade, close to Interpreto's ``ConSim`` (``select_examples`` then ``evaluate``).

Differences from Interpreto 0.5, on purpose (DESIGN §4): the answer is scored against f's predictions on the
**EP** samples; selection is without replacement and fails loudly; concepts are filtered by id; the threshold
is a plain bound on normalised importances; local importances (E3, U1) come from
:func:`xaimetrics.concepts.local_importance` on the real model; answers are parsed by sample id.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Sequence
from typing import Any

import numpy as np

from xaimetrics._validation import check_texts, invalid
from xaimetrics.consim._explanation import Explanation, global_importances_of, local_importances_of
from xaimetrics.consim._prompt_types import PromptType, resolve_prompt_type
from xaimetrics.consim._rendering import ConSimPrompt, render_prompt
from xaimetrics.consim._samples import ConSimSamples, as_class_ids
from xaimetrics.consim._scoring import ConSimResult, Scoring, answer_schema, check_scoring, score_response
from xaimetrics.consim._selection import Balance, select_examples

__all__ = ["ConSim", "ConSimSamples"]

_OWNER = "ConSim"
#: the prompt types :meth:`ConSim.evaluate_many` runs by default: the paper's five, plain and anonymised
DEFAULT_SETTINGS = ("NE1", "E1", "NE2", "E2", "E3", "NE1-a", "E1-a", "NE2-a", "E2-a", "E3-a")


class ConSim:
    """Concept-based simulatability (Poché et al. 2025): can a simulator predict f better with the explanation?

    Step 1, :meth:`select_examples`: LP/EP samples (classes uniform, half predicted wrongly, seeded).
    Step 2, :meth:`evaluate` (one prompt type) or :meth:`evaluate_many` (several in one batched call):
    computes what the prompt type needs (global importances ``Φ`` on the concept-fit activations, local
    importances of the LP — and for U1 the EP — samples, for the class f predicted), renders the prompt,
    asks the simulator, parses by sample id and scores against f's EP predictions. Compare each score with
    its baseline (NE1 without LP, NE2 with LP) on the same samples, over several seeds (the paper uses 5).

    Args:
        model: the split classifier ``f = g∘h`` (``predict``, ``activations``, ``logits_from_activations``,
            ``class_names``). Optional when predictions and importances are all passed explicitly.
        simulator: anything with ``generate(messages, *, answer_schema=None)`` (see
            :mod:`xaimetrics.simulators`). Without one, :meth:`evaluate` returns the prompt and the
            references (``score=None``).
        classes: class names (default: ``model.class_names``).
        extractor: default fitted concept extractor (``encode``/``decode``).
        interpretation: default ``{concept_id: description}`` or a fitted object with ``interpret()``
            (:class:`~xaimetrics.concepts.TopWords`, :class:`LLMLabels`).
        activations: default concept-fit activations ``A`` of shape ``(n, p)``, on which the global
            importances ``Φ`` (eq. 4) are computed.
        importance_threshold: ``τ`` on normalised importances (paper: 0.05).
        max_sample_chars: cut sample texts longer than this in prompts (``None``: keep them whole).
        batch_size: batch size for the importance computations.
        scoring: ``"accuracy"`` (the paper's eq. 5 from the answer text) or ``"probability"``: also ask the
            simulator for its class probabilities per EP sample and fill
            :attr:`ConSimResult.expected_accuracy`, ``log_loss`` and ``brier`` (the simulator must support
            them, e.g. :class:`~xaimetrics.simulators.LlamaCppSimulator`).

    Example:
        >>> from xaimetrics.simulators import ScriptedSimulator
        >>> consim = ConSim(None, ScriptedSimulator(lambda m: "Sample_2: positive\\nSample_3: negative"),
        ...                 classes=["negative", "positive"])
        >>> result = consim.evaluate(["dull", "fun", "great", "meh"], [0, 1, 1, 1], prompt_type="NE2")
        >>> result.score, result.references, result.answers
        (0.5, {'2': 'positive', '3': 'positive'}, {'2': 'positive', '3': 'negative'})
    """

    prompt_types = PromptType

    def __init__(
        self,
        model: Any = None,
        simulator: Any = None,
        classes: Sequence[str] | None = None,
        *,
        extractor: Any = None,
        interpretation: Any = None,
        activations: Any = None,
        importance_threshold: float = 0.05,
        max_sample_chars: int | None = None,
        batch_size: int = 256,
        scoring: Scoring = "accuracy",
    ) -> None:
        if simulator is not None and not callable(getattr(simulator, "generate", None)):
            raise invalid(
                "simulator", _OWNER, "None or an object with generate(messages)", type(simulator).__name__
            )
        check_scoring(scoring, simulator, _OWNER)
        if model is not None and classes is None and not hasattr(model, "class_names"):
            raise invalid("classes", _OWNER, "given when the model has no class_names", None)
        self.model = model
        self.simulator = simulator
        self.classes = list(classes) if classes is not None else None
        self.extractor = extractor
        self.interpretation = interpretation
        self.activations = activations
        self.importance_threshold = importance_threshold
        self.max_sample_chars = max_sample_chars
        self.batch_size = batch_size
        self.scoring = scoring
        self._global_cache: list[tuple[tuple[str, str, int], Any]] = []

    # -- step 1 ----------------------------------------------------------------------------------------------
    @property
    def class_names(self) -> list[str]:
        """The class names used in prompts."""
        if self.classes is not None:
            return list(self.classes)
        if self.model is not None and hasattr(self.model, "class_names"):
            return [str(name) for name in self.model.class_names]
        raise invalid("classes", _OWNER, "given (or a model with class_names)", None, "Pass classes=[...].")

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
    def build_prompt(
        self,
        samples: ConSimSamples | Sequence[str],
        predictions: Any = None,
        *,
        prompt_type: PromptType | str = PromptType.E3_global_and_local_concepts_with_lp,
        anonymize_classes: bool | None = None,
        n_lp: int | None = None,
        extractor: Any = None,
        interpretation: Any = None,
        activations: Any = None,
        global_importances: Any = None,
        lp_local_importances: Any = None,
        ep_local_importances: Any = None,
        concept_ids: Sequence[int] | None = None,
        importance_threshold: float | None = None,
    ) -> ConSimPrompt:
        """Compute what ``prompt_type`` needs and render its prompt (no simulator call).

        ``samples`` is a :class:`ConSimSamples`, or Interpreto-style LP-then-EP texts with ``predictions``
        (``n_lp`` defaults to half). Explicit ``global_importances`` / ``*_local_importances`` win over
        computing them; otherwise they come from ``extractor`` (and ``activations`` for ``Φ``).
        """
        prompts = self._build(
            samples,
            predictions,
            [resolve_prompt_type(prompt_type, anonymize_classes)],
            n_lp=n_lp,
            explanation=self._explanation(
                extractor,
                interpretation,
                activations,
                global_importances,
                lp_local_importances,
                ep_local_importances,
                concept_ids,
            ),
            importance_threshold=importance_threshold,
        )
        return prompts[0]

    def evaluate(
        self,
        samples: ConSimSamples | Sequence[str],
        predictions: Any = None,
        *,
        prompt_type: PromptType | str = PromptType.E3_global_and_local_concepts_with_lp,
        anonymize_classes: bool | None = None,
        n_lp: int | None = None,
        extractor: Any = None,
        interpretation: Any = None,
        activations: Any = None,
        global_importances: Any = None,
        lp_local_importances: Any = None,
        ep_local_importances: Any = None,
        concept_ids: Sequence[int] | None = None,
        importance_threshold: float | None = None,
        seed: int | None = None,
    ) -> ConSimResult:
        """Run one ConSim setting and return its :class:`ConSimResult` (``score`` is eq. 5).

        Arguments as in :meth:`build_prompt`; ``seed`` is recorded in the result (default: the selection's).
        Without a simulator the result holds the prompt and the references, with ``score=None``.
        """
        prompt = self.build_prompt(
            samples,
            predictions,
            prompt_type=prompt_type,
            anonymize_classes=anonymize_classes,
            n_lp=n_lp,
            extractor=extractor,
            interpretation=interpretation,
            activations=activations,
            global_importances=global_importances,
            lp_local_importances=lp_local_importances,
            ep_local_importances=ep_local_importances,
            concept_ids=concept_ids,
            importance_threshold=importance_threshold,
        )
        return self.evaluate_prompts([prompt], seed=_seed(samples, seed))[0]

    def evaluate_many(
        self,
        samples: ConSimSamples | Sequence[str],
        predictions: Any = None,
        *,
        prompt_types: Sequence[PromptType | str] = DEFAULT_SETTINGS,
        n_lp: int | None = None,
        extractor: Any = None,
        interpretation: Any = None,
        activations: Any = None,
        global_importances: Any = None,
        lp_local_importances: Any = None,
        ep_local_importances: Any = None,
        concept_ids: Sequence[int] | None = None,
        importance_threshold: float | None = None,
        seed: int | None = None,
        max_concurrency: int | None = None,
    ) -> list[ConSimResult]:
        """Run several prompt types on the same samples and explanation in **one** batched simulator call.

        ``prompt_types`` takes names with the ``-a`` suffix for anonymised classes (default: NE1, E1, NE2,
        E2, E3, plain and anonymised). Importances are computed once and shared by all prompts.
        """
        if isinstance(prompt_types, str | PromptType) or not prompt_types:
            raise invalid(
                "prompt_types", "ConSim.evaluate_many", "a non-empty list of prompt types", prompt_types
            )
        settings = [resolve_prompt_type(p) for p in prompt_types]
        prompts = self._build(
            samples,
            predictions,
            settings,
            n_lp=n_lp,
            explanation=self._explanation(
                extractor,
                interpretation,
                activations,
                global_importances,
                lp_local_importances,
                ep_local_importances,
                concept_ids,
            ),
            importance_threshold=importance_threshold,
        )
        return self.evaluate_prompts(prompts, seed=_seed(samples, seed), max_concurrency=max_concurrency)

    def evaluate_prompts(
        self, prompts: Sequence[ConSimPrompt], *, seed: int | None = None, max_concurrency: int | None = None
    ) -> list[ConSimResult]:
        """Ask the simulator about rendered prompts (batched when it has ``generate_batch``) and score them.

        Prompts of different methods or samples can be mixed; each answer is constrained by the prompt's
        :attr:`~ConSimPrompt.answer_schema` when the simulator supports it.
        """
        prompts = list(prompts)
        for prompt in prompts:
            if not isinstance(prompt, ConSimPrompt):
                raise invalid(
                    "prompts", "ConSim.evaluate_prompts", "ConSimPrompt objects", type(prompt).__name__
                )
        if self.simulator is None:
            return [score_response(prompt, None, seed=seed) for prompt in prompts]
        responses = self._ask(
            [list(p.messages) for p in prompts],
            [answer_schema(p, self.scoring) for p in prompts],
            max_concurrency,
        )
        return [score_response(p, r, seed=seed) for p, r in zip(prompts, responses, strict=True)]

    # -- internals -------------------------------------------------------------------------------------------
    def _ask(
        self, conversations: list[list[Any]], schemas: list[Any], max_concurrency: int | None
    ) -> list[Any]:
        simulator = self.simulator
        takes_schema = _accepts_keyword(simulator.generate, "answer_schema")
        batch = getattr(simulator, "generate_batch", None)
        if callable(batch) and len(conversations) > 1 and _accepts_keyword(batch, "answer_schemas"):
            return list(batch(conversations, answer_schemas=schemas, max_concurrency=max_concurrency))
        if takes_schema:
            return [
                simulator.generate(c, answer_schema=s) for c, s in zip(conversations, schemas, strict=True)
            ]
        return [simulator.generate(c) for c in conversations]

    def _require_model(self, what: str) -> Any:
        if self.model is None:
            raise invalid(
                "model", _OWNER, f"given to compute the {what}", None, f"Pass the model or the {what}."
            )
        return self.model

    def _explanation(
        self,
        extractor: Any,
        interpretation: Any,
        activations: Any,
        global_importances: Any,
        lp_local: Any,
        ep_local: Any,
        concept_ids: Sequence[int] | None,
    ) -> Explanation:
        return Explanation(
            extractor=extractor if extractor is not None else self.extractor,
            interpretation=interpretation if interpretation is not None else self.interpretation,
            activations=activations if activations is not None else self.activations,
            global_importances=global_importances,
            lp_local=lp_local,
            ep_local=ep_local,
            concept_ids=concept_ids,
        )

    def _build(
        self,
        samples: Any,
        predictions: Any,
        settings: list[tuple[PromptType, bool]],
        *,
        n_lp: int | None,
        explanation: Explanation,
        importance_threshold: float | None,
    ) -> list[ConSimPrompt]:
        lp_texts, ep_texts, lp_pred, ep_pred = self._split(samples, predictions, n_lp)
        names = self.class_names
        needs = [kind.content for kind, _ in settings]
        model, extractor = self.model, explanation.extractor
        if any(c.global_explanations for c in needs):
            explanation.interpretation_mapping()
            if explanation.global_importances is None:
                explanation.global_importances = self._global_importances(explanation, len(names))
        if any(c.lp_local for c in needs) and explanation.lp_local is None:
            explanation.lp_local = local_importances_of(
                model, extractor, lp_texts, lp_pred, self.batch_size, "LP"
            )
        if any(c.ep_local for c in needs) and explanation.ep_local is None:
            explanation.ep_local = local_importances_of(
                model, extractor, ep_texts, ep_pred, self.batch_size, "EP"
            )
        threshold = self.importance_threshold if importance_threshold is None else importance_threshold
        return [
            render_prompt(
                kind,
                class_names=names,
                ep_samples=ep_texts,
                ep_predictions=ep_pred,
                lp_samples=lp_texts,
                lp_predictions=lp_pred,
                interpretation=explanation.interpretation_mapping(),
                global_importances=explanation.global_importances,
                lp_local_importances=explanation.lp_local,
                ep_local_importances=explanation.ep_local,
                concept_ids=explanation.concept_ids,
                anonymize_classes=anonymized,
                importance_threshold=threshold,
                max_sample_chars=self.max_sample_chars,
            )
            for kind, anonymized in settings
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


def _seed(samples: Any, seed: int | None) -> int | None:
    if seed is not None:
        return int(seed)
    return samples.seed if isinstance(samples, ConSimSamples) else None


def _accepts_keyword(function: Any, name: str) -> bool:
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False
    return name in parameters or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())


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
