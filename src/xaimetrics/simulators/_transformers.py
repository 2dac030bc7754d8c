"""A local Hugging Face chat model as a simulator (greedy, with optional answer-format constraint)."""

from __future__ import annotations

import inspect
import os
from typing import TYPE_CHECKING, Any

import numpy as np

from xaimetrics._device import resolve_device
from xaimetrics._typing import DeviceLike
from xaimetrics._validation import check_positive_int, invalid
from xaimetrics.simulators._base import AnswerSchema, ChatMessage, SimulatorResponse
from xaimetrics.simulators._local import LocalModelSimulator
from xaimetrics.simulators._probabilities import class_continuations, log_softmax, probability_response

if TYPE_CHECKING:
    import torch
    from transformers import Cache, PreTrainedModel, PreTrainedTokenizerBase

__all__ = ["TransformersChatSimulator", "answer_continuations"]

_OWNER = "TransformersChatSimulator"


def answer_continuations(schema: AnswerSchema, text: str) -> list[str] | None:
    """The ways ``text`` (an answer being generated) can be completed to the end of its current line.

    Returns a list of non-empty continuations, plus ``""`` when ``text`` may stop here (the full answer is
    written); ``None`` when ``text`` already left the ``Sample_{id}: {class}`` format.

    Example:
        >>> schema = AnswerSchema(sample_ids=("3", "1"), classes=("yes", "no"))
        >>> answer_continuations(schema, "Sample_3: y")
        ['es\\n']
        >>> answer_continuations(schema, "Sample_3: yes\\nSample_1: ")
        ['yes', 'no']
        >>> answer_continuations(schema, "Sample_3: yes\\nSample_1: no")
        ['']
        >>> answer_continuations(AnswerSchema(("1",), ("prime", "prime time")), "Sample_1: prime")
        ['', ' time']
        >>> answer_continuations(schema, "Sure! Sample_3") is None
        True
    """
    position = 0
    last = len(schema.sample_ids) - 1
    for k, sample_id in enumerate(schema.sample_ids):
        ending = "" if k == last else "\n"
        lines = [schema.line(sample_id, label) + ending for label in schema.classes]
        remaining = text[position:]
        complete = [line for line in lines if remaining.startswith(line)]
        if k < last and complete:
            position += len(complete[0])  # unique: every line ends with a newline
            continue
        if k == last and remaining.endswith("\n") and remaining[:-1] in lines:
            return [""]  # the answer is complete, with a final newline
        options = [line[len(remaining) :] for line in lines if line.startswith(remaining)]
        return options or None
    return None  # unreachable: the last id always returns


class _AnswerConstraint:
    """``prefix_allowed_tokens_fn`` for ``generate``: keep the answer inside an :class:`AnswerSchema`."""

    def __init__(
        self, tokenizer: PreTrainedTokenizerBase, schema: AnswerSchema, prompt_length: int, eos_ids: list[int]
    ) -> None:
        self.tokenizer = tokenizer
        self.schema = schema
        self.prompt_length = prompt_length
        self.eos_ids = eos_ids
        self.vocabulary = list(range(len(tokenizer)))

    def __call__(self, batch_id: int, input_ids: torch.Tensor) -> list[int]:
        generated = input_ids[self.prompt_length :].tolist()
        text = self.tokenizer.decode(generated, skip_special_tokens=True)
        options = answer_continuations(self.schema, text) if isinstance(text, str) else None
        if options is None:
            return self.vocabulary  # the decode did not round-trip: leave the model free
        allowed: set[int] = set()
        for option in options:
            if option == "":
                allowed.update(self.eos_ids)
            else:
                ids = self.tokenizer.encode(option, add_special_tokens=False)
                if ids:
                    allowed.add(int(ids[0]))
        return sorted(allowed) or self.vocabulary


class TransformersChatSimulator(LocalModelSimulator):
    """A Hugging Face causal LM with a chat template, decoding greedily on a local device.

    The prompt is built with ``tokenizer.apply_chat_template``; with an :class:`AnswerSchema` each generated
    token is restricted to continue a valid ``Sample_{id}: {class}`` line (a prefix constraint, exact for
    byte-level BPE tokenizers; set ``constrain=False`` to let the model answer freely). Models are loaded
    lazily from local files only.

    Args:
        model_name_or_path: a local model directory or a hub id already in the local cache.
        model, tokenizer: already loaded objects (instead of ``model_name_or_path``).
        device: ``"auto"``, ``"cpu"``, ``"cuda"``, ...
        max_new_tokens: answer length cap.
        constrain: apply the answer schema when one is given.
        prefix_reuse: for class probabilities, read the prompt once and score every sample's continuation from
            its ``past_key_values`` (rewound with ``crop`` between samples, so no sample sees another's
            tokens), and keep them for the next prompt (a shared prefix is not read again). Off: every
            continuation is read from scratch (slower; for checks — the probabilities agree to float
            rounding, tested to 1e-4).

    With ``AnswerSchema(probabilities=True)`` nothing is generated: every sample ``i`` is scored as the
    continuation ``Sample_i: <class>`` right after the chat prompt (``add_generation_prompt=True``), as in
    :class:`~xaimetrics.simulators.LlamaCppSimulator`; the text holds the most probable class per sample.

    Example:
        >>> sim = TransformersChatSimulator("path/to/Qwen2.5-0.5B-Instruct", max_new_tokens=64)
        >>> sim.name, sim.max_concurrency
        ('transformers:Qwen2.5-0.5B-Instruct', 1)
    """

    def __init__(
        self,
        model_name_or_path: str | os.PathLike[str] | None = None,
        *,
        model: PreTrainedModel | None = None,
        tokenizer: PreTrainedTokenizerBase | None = None,
        device: DeviceLike = "auto",
        max_new_tokens: int = 256,
        constrain: bool = True,
        torch_dtype: torch.dtype | str | None = None,
        prefix_reuse: bool = True,
    ) -> None:
        if (model_name_or_path is None) == (model is None):
            raise invalid(
                "model_name_or_path",
                _OWNER,
                "given, or else 'model' and 'tokenizer' objects (exactly one of the two)",
                "both" if model is not None else "neither",
            )
        if model is not None and tokenizer is None:
            raise invalid("tokenizer", _OWNER, "given together with 'model'", None)
        self.model_name_or_path = None if model_name_or_path is None else str(model_name_or_path)
        self.max_new_tokens = check_positive_int(max_new_tokens, "max_new_tokens", _OWNER)
        self.constrain = bool(constrain)
        self.device = resolve_device(device, _OWNER)
        self.torch_dtype = torch_dtype
        self.prefix_reuse = bool(prefix_reuse)
        self._prefix_state: tuple[list[int], Cache] | None = None  # (tokens, their DynamicCache)
        self._model_obj = model
        self._tokenizer = tokenizer
        if self.model_name_or_path is not None:
            label = os.path.basename(self.model_name_or_path.rstrip("/\\")) or self.model_name_or_path
        else:
            label = str(getattr(getattr(model, "config", None), "_name_or_path", "") or type(model).__name__)
        self.name = f"transformers:{label}"

    def __repr__(self) -> str:
        return f"TransformersChatSimulator({self.name!r}, device={str(self.device)!r}, max_new_tokens={self.max_new_tokens})"

    def cache_identity(self) -> dict[str, object]:
        return {
            "simulator": "transformers",
            "model": self.model_name_or_path or self.name,
            "max_new_tokens": self.max_new_tokens,
            "decoding": "greedy",
            "constrain": self.constrain,
        }

    def _load(self) -> tuple[Any, Any]:  # transformers types its generate and chat-template returns loosely
        if self._model_obj is None:
            from transformers import AutoModelForCausalLM, AutoTokenizer

            path = self.model_name_or_path
            assert path is not None  # __init__ requires a path when no model object is given
            self._tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
            kwargs = {} if self.torch_dtype is None else {"dtype": self.torch_dtype}
            self._model_obj = AutoModelForCausalLM.from_pretrained(path, local_files_only=True, **kwargs)
        self._model_obj.to(self.device).eval()  # type: ignore[arg-type]  # transformers types its decorated to() unbound
        if getattr(self._tokenizer, "chat_template", None) is None:
            raise invalid(
                "tokenizer",
                _OWNER,
                "a tokenizer with a chat template",
                "a tokenizer without one",
                "Use an instruct model.",
            )
        return self._model_obj, self._tokenizer

    def _complete(
        self, messages: tuple[ChatMessage, ...], answer_schema: AnswerSchema | None
    ) -> SimulatorResponse:
        import torch

        model, tokenizer = self._load()
        encoded = tokenizer.apply_chat_template(
            [m.as_dict() for m in messages],
            add_generation_prompt=True,
            return_tensors="pt",
            return_dict=True,
        )
        encoded = {key: value.to(self.device) for key, value in encoded.items()}
        prompt_length = int(encoded["input_ids"].shape[1])
        eos = model.generation_config.eos_token_id
        if eos is None:
            eos = tokenizer.eos_token_id
        eos_ids = [int(e) for e in (eos if isinstance(eos, list | tuple) else [eos]) if e is not None]
        pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (eos_ids or [0])[0]
        kwargs: dict[str, _AnswerConstraint] = {}
        if answer_schema is not None and self.constrain:
            kwargs["prefix_allowed_tokens_fn"] = _AnswerConstraint(
                tokenizer, answer_schema, prompt_length, eos_ids
            )
        with torch.inference_mode():
            output = model.generate(
                **encoded,
                max_new_tokens=self.max_new_tokens,
                do_sample=False,
                pad_token_id=pad_id,
                eos_token_id=eos_ids or None,
                **kwargs,
            )
        new_tokens = output[0, prompt_length:]
        text = tokenizer.decode(new_tokens, skip_special_tokens=True)
        return SimulatorResponse(
            text=text.strip(),
            model=self.name,
            prompt_tokens=prompt_length,
            completion_tokens=int(new_tokens.shape[0]),
        )

    # -- class probabilities ---------------------------------------------------------------------------------
    def _next_log_probs(self, model: PreTrainedModel, tokens: list[int], cache: Cache | None) -> np.ndarray:
        """Log-distribution of the token after ``tokens`` (read on top of ``cache`` when given; it grows)."""
        import torch

        input_ids = torch.tensor([tokens], dtype=torch.long, device=self.device)
        output = model(input_ids=input_ids, use_cache=cache is not None, **{_cache_keyword(model): cache})
        return log_softmax(output.logits[0, -1].float().cpu().numpy())

    def _class_probabilities(
        self, messages: tuple[ChatMessage, ...], schema: AnswerSchema
    ) -> SimulatorResponse:
        import torch

        with torch.inference_mode():
            model, tokenizer = self._load()
            prompt = [
                int(t)
                for t in tokenizer.apply_chat_template(
                    [m.as_dict() for m in messages], add_generation_prompt=True, return_dict=True
                )["input_ids"]
            ]

            def tokenize(text: str) -> list[int]:
                return list(tokenizer.encode(text, add_special_tokens=False))

            computed = reused = 0
            cache: Cache | None = None
            if self.prefix_reuse:
                cached_tokens, cache = self._prefix_state or ([], _new_cache(model))
                self._prefix_state = None  # set again once the cache holds exactly the prompt
                keep = min(_common_prefix(cached_tokens, prompt), len(prompt) - 1)
                _rewind(cache, keep)
                prompt_log_probs = self._next_log_probs(model, prompt[keep:], cache)
                computed, reused = len(prompt) - keep, keep
            probabilities: dict[str, tuple[float, ...]] = {}
            for sample_id in schema.sample_ids:
                continuation = class_continuations(tokenize, sample_id, schema.classes)
                stem = list(continuation.stem)
                if cache is None:  # no reuse: every sequence from scratch
                    computed += len(prompt) + len(stem)
                    stem_log_probs = self._next_log_probs(model, prompt + stem, None)
                else:  # from the prompt's state: rewound first, so no sample sees another one's tokens
                    _rewind(cache, len(prompt))
                    stem_log_probs = self._next_log_probs(model, stem, cache) if stem else prompt_log_probs
                    computed, reused = computed + len(stem), reused + len(prompt)

                def after(
                    prefix: tuple[int, ...], stem: list[int] = stem, first: np.ndarray = stem_log_probs
                ) -> np.ndarray:
                    """Log-probs after prompt + stem + ``prefix`` (the stem's state reused when cached)."""
                    nonlocal computed
                    if not prefix:
                        return first
                    if cache is None:
                        computed += len(prompt) + len(stem) + len(prefix)
                        return self._next_log_probs(model, prompt + stem + list(prefix), None)
                    _rewind(cache, len(prompt) + len(stem))
                    computed += len(prefix)
                    return self._next_log_probs(model, list(prefix), cache)

                probabilities[sample_id] = continuation.probabilities(after)
            if cache is not None:
                _rewind(cache, len(prompt))
            self._prefix_state = (prompt, cache) if cache is not None else None
        return probability_response(
            schema, probabilities, model=self.name, computed=computed, conditioned=computed + reused,
            prefix_reuse=self.prefix_reuse,
        )  # fmt: skip


def _cache_keyword(model: PreTrainedModel) -> str:
    """The forward argument taking the :class:`~transformers.DynamicCache`: ``cache`` (transformers ≥ 5.2x;
    ``past_key_values`` is deprecated there and removed in 5.40), else ``past_key_values`` (transformers 4)."""
    try:
        parameters = inspect.signature(model.forward).parameters
    except (TypeError, ValueError):  # pragma: no cover - a forward without a signature
        return "past_key_values"
    return "cache" if "cache" in parameters else "past_key_values"


def _new_cache(model: PreTrainedModel) -> Cache:
    from transformers import DynamicCache

    try:
        return DynamicCache(config=model.config)
    except TypeError:  # transformers < 4.56 takes no config
        return DynamicCache()


def _rewind(cache: Cache, length: int) -> None:
    """Drop the cached positions after the first ``length`` (a negative ``crop`` works in transformers 4 and 5)."""
    extra = int(cache.get_seq_length()) - length
    if extra > 0:
        cache.crop(-extra)


def _common_prefix(a: list[int], b: list[int]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n
